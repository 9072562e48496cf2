// Compile-time packing of convolution weights into the order of the kernel that reads them
// (f32: the GEMM kernels' panels, conv_gemm_plan.h; int8: output-channel blocks,
// quantized_conv_plan.h): a codegen-side step on the dispatch graph, run by the driver between
// lowering and kernel generation. A constant is repacked only when the one dispatch reading
// it takes such a kernel; its size does not change (except for Winograd's transformed
// weights, after which the constants are laid out again), so every BufferRef stays valid.
// No LLVM headers.
#include <cstring>
#include <map>

#include "constant_reads.h"
#include "kiln/codegen/conv_gemm_plan.h"
#include "kiln/codegen/quantized_conv_plan.h"
#include "kiln/codegen/winograd_plan.h"
#include "kiln/ir/dispatch_graph.h"

namespace kiln::codegen {

int packConvWeights(ir::DispatchGraph& graph, std::vector<KernelDesc>& kernels,
                    const TargetConfig& target, bool mayGrowConstants) {
  VectorUnit unit = vectorUnitOf(target);
  if (unit.lanes == 0 || kernels.size() != graph.dispatches.size()) return 0;
  std::map<uint32_t, int> reads = detail::constantReads(graph);

  const int64_t int8Lanes = int8OcTargetLanes(target);

  int packed = 0;
  bool grown = false;  // a constant changed size
  for (size_t i = 0; i < kernels.size(); ++i) {
    KernelDesc& desc = kernels[i];
    if (desc.weightLayout != ConvWeights::Oihw) continue;
    const int64_t int8OcBlock = int8OcLanes(desc, int8Lanes, mayGrowConstants);
    if (desc.kind != KernelKind::Conv && int8OcBlock == 0) continue;
    const int64_t int8RowBytes = int8OcBlock > 0 ? int8OcRowBytes(desc) : 0;
    ConvWeights layout = int8OcBlock == 0 ? chooseConvWeights(desc, unit, mayGrowConstants)
                         : int8RowBytes > 0 ? ConvWeights::Int8OcRowBlocks
                                            : ConvWeights::Int8OcBlocks;
    if (layout == ConvWeights::Oihw) continue;
    // The weights: the dispatch's second operand, a constant only this dispatch reads.
    ir::Binding* weights = detail::soleConstantOperand(graph, i, 1, reads);
    if (!weights) continue;
    ir::ConstantEntry& constant = graph.constants[weights->ref.index];
    if (int8OcBlock > 0) {
      const std::vector<int64_t>& ws = desc.inputs[1].shape;  // [OC, KH, KW, C]
      const uint64_t bytes = uint64_t(ws[0] * ws[1] * ws[2] * ws[3]);
      if (weights->ref.offset != 0 || weights->ref.length != bytes || constant.bytes.size() != bytes)
        continue;
      std::vector<int8_t> values(constant.bytes.begin(), constant.bytes.end());
      std::vector<int8_t> blocks =
          int8RowBytes > 0
              ? packInt8OcRowWeights(values, ws[0], ws[1], ws[2] * ws[3], int8RowBytes, int8OcBlock)
              : packInt8OcWeights(values, ws[0], ws[1] * ws[2], ws[3], int8OcBlock);
      // Row spans are larger: the constants are laid out again below.
      constant.bytes.assign(reinterpret_cast<const uint8_t*>(blocks.data()),
                            reinterpret_cast<const uint8_t*>(blocks.data()) + blocks.size());
      weights->ref.length = constant.bytes.size();
      grown = grown || constant.bytes.size() != bytes;
      desc.weightLayout = layout;
      desc.weightPanel = int8OcBlock;
      ++packed;
      continue;
    }
    const std::vector<int64_t>& ws = desc.inputs[1].shape;
    int64_t oc = ws[0], k = ws[1] * ws[2] * ws[3];
    uint64_t bytes = uint64_t(oc * k) * sizeof(float);
    if (weights->ref.offset != 0 || weights->ref.length != bytes || constant.bytes.size() != bytes)
      continue;
    std::vector<float> values(size_t(oc * k));
    std::memcpy(values.data(), constant.bytes.data(), bytes);
    // A grouped convolution's kernels see groups 1 (groupedView) and its panels per group.
    const KernelDesc view = groupedView(desc);
    auto packPanels = [&](int64_t panelRows) {
      std::vector<float> panels = packConvWeightPanels(values, oc, k, panelRows, desc.groups);
      std::memcpy(constant.bytes.data(), panels.data(), bytes);
    };
    switch (layout) {
      case ConvWeights::GemmPanels: {
        ConvGemmTile tile = convGemmTile(view, unit);
        packPanels(tile.mr);
        desc.weightPanel = tile.mr;
        break;
      }
      case ConvWeights::OcVectorPanels: {
        // Panels of NR output channels: the same order as GemmPanels with NR rows.
        OcVectorTile tile = ocVectorTile(view, unit);
        packPanels(tile.oc());
        desc.weightPanel = tile.oc();
        break;
      }
      case ConvWeights::Winograd: {
        // Transformed weights are larger (positions x OC x C): the constant grows, and the
        // constants are laid out again below.
        WinogradPlan plan = winogradPlan(desc, unit);
        std::vector<float> u = winogradTransformWeights(values, oc, ws[1], plan.m, plan.tile.mr);
        constant.bytes.resize(u.size() * sizeof(float));
        std::memcpy(constant.bytes.data(), u.data(), constant.bytes.size());
        weights->ref.length = constant.bytes.size();
        desc.weightPanel = plan.tile.mr;
        desc.winogradTile = plan.m;
        desc.workQueues = winogradSharedTasks(desc, unit);
        grown = true;
        break;
      }
      case ConvWeights::WinogradPanels: {
        // The 3x3 taps in the panels the kernel transforms (same size).
        WinogradPlan plan = winogradPlan(desc, unit);
        const int64_t blockC = winogradBlocks(desc, plan.tile, plan.m).blockC;
        std::vector<float> panels =
            winogradPackTaps(values, oc, ws[1], plan.tile.mr, blockC,
                             winogradTransformChannels(plan.m, plan.tile.mr, blockC));
        std::memcpy(constant.bytes.data(), panels.data(), bytes);
        desc.weightPanel = plan.tile.mr;
        desc.winogradTile = plan.m;
        desc.workQueues = winogradSharedTasks(desc, unit);
        break;
      }
      case ConvWeights::Oihw:
      case ConvWeights::Int8OcBlocks:  // packed above
      case ConvWeights::Int8OcRowBlocks:
        continue;
    }
    desc.weightLayout = layout;
    ++packed;
  }
  if (grown) ir::layoutConstants(graph);
  return packed;
}

}  // namespace kiln::codegen
