// Depthwise convolution (groups == C, one input channel per group, any channel multiplier)
// over NCHW on targets with vector registers: width stride 1 or 2, dilation 1, any kernel
// size and padding. A work item is a group of output rows of one output channel
// (window_tiles.h): the channel's KH x KW weights are broadcast into vector registers once per
// item, each input vector load feeds the multiply-adds of every output row of the group that
// uses it, edges use constant lane masks and a zero row instead of bounds tests. Bias is the
// accumulators' start; a fused epilogue chain that evaluates on vectors is applied to the
// accumulators before their only store, any other one over each finished row.
#include "emitters.h"
#include "kernel_builder.h"
#include "window_tiles.h"

namespace kiln::codegen::detail {

bool emitConvDepthwise(KernelBuilder& kb, uint32_t& workgroups) {
  const KernelDesc& d = kb.desc();
  const unsigned lanes = kb.target().vectorLanes;
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  const std::vector<int64_t>& ws = d.inputs[1].shape;
  if (!windowRowsApply(d, lanes) || ws.size() != 4) return false;
  const int64_t N = xs[0], C = xs[1], OC = ws[0];
  if (C < 2 || d.groups != C || ws[1] != 1 || OC % C != 0) return false;
  if (d.inputs[0].type != ElemType::F32 || d.inputs[1].type != ElemType::F32 ||
      d.output.type != ElemType::F32)
    return false;

  llvm::IRBuilder<>& b = kb.b();
  const WindowGeometry g = windowGeometry(d, ws[2], ws[3]);
  const int64_t multiplier = OC / C;
  const int64_t taps = g.KH * g.KW;
  const bool hasBias = d.inputs.size() - d.epilogue.inputCount > 2;
  const std::vector<ColumnTile> tiles = planColumnTiles(g, lanes);
  if (!windowTilesFit(g, tiles)) return false;
  const unsigned tileLanes = tiles.front().lanes;
  WindowOutput output(kb);
  llvm::Value* padRow = windowNeedsPadRow(g) ? makePadRow(kb, g, 0.0f) : nullptr;

  // Per work item: the channel's weights and bias as vectors.
  std::vector<llvm::Value*> weight(static_cast<size_t>(taps), nullptr);
  llvm::Value* bias = nullptr;

  WindowOps ops;
  ops.padValue = 0.0f;
  ops.init = [&](unsigned) { return bias; };
  ops.combine = [&](llvm::Value* acc, llvm::Value* x, int64_t kh, int64_t kw) {
    return b.CreateFAdd(acc, b.CreateFMul(x, weight[size_t(kh * g.KW + kw)]));
  };
  ops.finish = [&](int64_t r, const ColumnTile&, llvm::Value* column, llvm::Value* acc,
                   llvm::Constant* storeMask) { output.store(r, column, acc, storeMask); };

  forEachWindowGroup(kb, g, N * OC, [&](llvm::Value* plane, llvm::Value* oh0, int64_t rows) {
    llvm::Value* n = b.CreateUDiv(plane, kb.index(OC));
    llvm::Value* oc = b.CreateURem(plane, kb.index(OC));
    llvm::Value* channel =
        b.CreateAdd(b.CreateMul(n, kb.index(C)), b.CreateUDiv(oc, kb.index(multiplier)));
    llvm::Value* inPlane = b.CreateMul(channel, kb.index(g.H * g.W));
    llvm::Value* filter = b.CreateMul(oc, kb.index(taps));
    for (int64_t k = 0; k < taps; ++k) {
      llvm::Value* w = kb.load(1, ElemType::F32, b.CreateAdd(filter, kb.index(k)));
      weight[size_t(k)] = b.CreateVectorSplat(tileLanes, w);
    }
    bias = b.CreateVectorSplat(tileLanes, hasBias ? kb.load(2, ElemType::F32, oc) : kb.f32(0.0f));
    output.startGroup(g, plane, oh0, rows);
    emitWindowRows(kb, g, tiles, inPlane, oh0, rows, padRow, ops);
    output.finishGroup(g, rows);
  });
  workgroups = workgroupsFor(windowGroupCount(g, N * OC, kb.target().vectorRegisters),
                            windowGroupRows(g, kb.target().vectorRegisters) * g.OW * taps);
  return true;
}

}  // namespace kiln::codegen::detail
