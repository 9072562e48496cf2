// The convolution GEMM kernel's policy: which convolutions it takes, the register tile per
// vector unit, and the weights' panel order (see conv_gemm_plan.h). LLVM-free.
#include "kiln/codegen/conv_gemm_plan.h"
#include "kiln/codegen/conv_pool_plan.h"
#include "kiln/codegen/winograd_plan.h"

#include <algorithm>
#include <cassert>

namespace kiln::codegen {
namespace {

bool hasFeature(const TargetConfig& target, const char* feature) {
  return std::find(target.requiredFeatures.begin(), target.requiredFeatures.end(), feature) !=
         target.requiredFeatures.end();
}

// Element strides of `shape` broadcast to `out` (numpy rules; broadcast axes get 0).
std::vector<int64_t> stridesIn(const std::vector<int64_t>& shape, const std::vector<int64_t>& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t step = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    size_t axis = out.size() - shape.size() + i;
    strides[axis] = shape[i] == 1 ? 0 : step;
    step *= shape[i];
  }
  return strides;
}

// The kernel applies the epilogue to vectors of consecutive pixels of one output channel,
// which may span output rows: every chain input must be read by the flat pixel index, i.e.
// contiguous (or broadcast) over H and W together.
bool epilogueFitsTiles(const KernelDesc& d) {
  const Epilogue& e = d.epilogue;
  std::vector<int64_t> shape = e.shape.empty() ? d.output.shape : e.shape;
  if (shape.size() != 3 && shape.size() != 4) return e.chain.nodes.empty();
  if (!evaluatesOnVectors(e.chain.nodes)) return false;
  for (const ExprNode& node : e.chain.nodes) {
    if (node.op != ExprOp::Input) continue;
    std::vector<int64_t> s = stridesIn(d.inputs[size_t(node.input)].shape, shape);
    if (shape.size() == 4 && s[2] != s[3] * shape[3]) return false;
  }
  return true;
}

}  // namespace

VectorUnit vectorUnitOf(const TargetConfig& target) {
  if (target.microcontroller) return {};
  switch (target.arch) {
    case TargetArch::X86_64:
      if (hasFeature(target, "avx512f")) return {16, 32};
      return {hasFeature(target, "avx") ? 8u : 4u, 16};
    case TargetArch::AArch64:
      return {4, 32};
    default:
      return {};
  }
}

ConvGemmTile convGemmTile(const KernelDesc& d, VectorUnit unit) {
  if (d.kind != KernelKind::Conv || unit.lanes < 4 || d.groups != 1) return {};
  if (d.inputs.size() < 2 || d.inputs[0].shape.size() != 4 || d.inputs[1].shape.size() != 4)
    return {};
  if (d.output.type != ElemType::F32) return {};
  // Partial sums go through the output between K blocks: an operand sharing its bytes (a
  // residual written in place) would be overwritten before the epilogue reads it.
  if (d.bindingsMayAlias) return {};
  for (const BufferDesc& in : d.inputs)
    if (in.type != ElemType::F32) return {};
  if (!epilogueFitsTiles(d)) return {};
  ConvGemmTile tile;
  tile.lanes = unit.lanes;
  // 16 (AVX2, SSE) or 32 pixels (AVX-512) per tile; NEON's 4-lane registers take 4 vectors.
  tile.nrVectors = unit.lanes == 4 && unit.registers >= 32 ? 4 : 2;
  // Accumulators get every register but the B vectors and one broadcast.
  int64_t budget = int64_t(unit.registers) - tile.nrVectors - 1;
  tile.mr = std::clamp<int64_t>(budget / tile.nrVectors, 1, 12);
  // A pointwise convolution read in place (1x1, stride 1, no padding, at most 128 channels:
  // emit_conv_gemm's kMaxDirectK) into 8 or 16 channels leaves AVX2's 6-row panels a 2- or
  // 4-row last one; 4 rows x 3 vectors (24 pixels) keeps 12 accumulators, in full panels
  // (MobileNetV2's features.1 32 -> 16 at 112x112: 208-218 -> 189-192 us by min, 1 thread).
  const std::vector<int64_t>& ws = d.inputs[1].shape;
  const bool pointwiseInPlace = ws[2] == 1 && ws[3] == 1 && ws[1] <= 128 &&
                                d.strides == std::array<int64_t, 2>{1, 1} &&
                                d.pads == std::array<int64_t, 4>{0, 0, 0, 0};
  if (unit.lanes == 8 && unit.registers == 16 && pointwiseInPlace && (ws[0] == 8 || ws[0] == 16) &&
      !d.pooled() && d.tailB < 0) {
    tile.mr = 4;
    tile.nrVectors = 3;
  }
  return tile;
}

KernelDesc groupedView(const KernelDesc& d) {
  if (d.kind != KernelKind::Conv || d.groups <= 1 || d.pooled() || d.tailB >= 0) return d;
  if (d.inputs.size() < 2 || d.inputs[0].shape.size() != 4 || d.inputs[1].shape.size() != 4)
    return d;
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  const std::vector<int64_t>& ws = d.inputs[1].shape;
  const std::vector<int64_t>& ys = d.output.shape;
  const int64_t G = d.groups;
  if (ws[1] < 2 || xs[1] != G * ws[1] || ws[0] % G != 0) return d;
  KernelDesc v = d;
  v.groups = 1;
  v.inputs[0].shape = {xs[0] * G, ws[1], xs[2], xs[3]};
  v.inputs[1].shape = {ws[0] / G, ws[1], ws[2], ws[3]};
  v.output.shape = {ys[0] * G, ys[1] / G, ys[2], ys[3]};
  const bool hasBias = d.inputs.size() - d.epilogue.inputCount > 2;
  if (hasBias) v.inputs[2].shape = {ws[0] / G};
  if (v.epilogue.shape.empty()) v.epilogue.shape = ys;
  return v;
}

ConvWeights chooseConvWeights(const KernelDesc& desc, VectorUnit unit, bool mayGrowConstants) {
  if (desc.kind == KernelKind::Conv && desc.groups > 1) {
    const KernelDesc view = groupedView(desc);
    if (view.groups != 1) return ConvWeights::Oihw;
    if (ocVectorWins(view, unit)) return ConvWeights::OcVectorPanels;
    return convGemmTile(view, unit).applies() ? ConvWeights::GemmPanels : ConvWeights::Oihw;
  }
  // A pooled convolution has one kernel (emit_conv_pool.cpp): GEMM panels if it vectorises;
  // so have the few-channel stems that kernel takes unpooled (convStemDirect).
  if (desc.pooled())
    return convPoolVectorised(desc, unit) ? ConvWeights::GemmPanels : ConvWeights::Oihw;
  if (convStemDirect(desc, unit)) return ConvWeights::GemmPanels;
  // A 1x1 convolution with a fused depthwise one has one kernel (emit_conv_expand_dw.cpp).
  if (desc.tailB >= 0)
    return convGemmTile(desc, unit).applies() ? ConvWeights::GemmPanels : ConvWeights::Oihw;
  // The most specialised kernel that takes the convolution and measurably wins, first.
  // Winograd: transformed by the kernel or at compile time, as winogradPlan decides;
  // --optimize=size: always by the kernel, whose packed taps keep the weights' size
  // (SqueezeNet's expand3x3 330-406 us by min against 566-688 on the GEMM kernel, 1 thread).
  if (const WinogradPlan plan = winogradPlan(desc, unit); plan.applies()) {
    if (plan.transformInKernel || !mayGrowConstants) return ConvWeights::WinogradPanels;
    return ConvWeights::Winograd;
  }
  if (ocVectorWins(desc, unit)) return ConvWeights::OcVectorPanels;
  if (convGemmTile(desc, unit).applies()) return ConvWeights::GemmPanels;
  return ConvWeights::Oihw;
}

std::vector<float> packConvWeightPanels(const std::vector<float>& weights, int64_t oc, int64_t k,
                                        int64_t mr, int64_t groups) {
  assert(int64_t(weights.size()) == oc * k && mr > 0 && groups > 0 && oc % groups == 0);
  std::vector<float> packed(weights.size());
  const int64_t groupRows = oc / groups;
  for (int64_t g = 0; g < groups; ++g) {
    const float* from = weights.data() + g * groupRows * k;
    float* to = packed.data() + g * groupRows * k;
    for (int64_t first = 0; first < groupRows; first += mr) {
      int64_t rows = std::min(mr, groupRows - first);
      float* panel = to + first * k;
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t m = 0; m < rows; ++m) panel[kk * rows + m] = from[(first + m) * k + kk];
    }
  }
  return packed;
}

}  // namespace kiln::codegen
