// Compile-time packing of matrix products' constant B operands into the broadcast tiles'
// column panels, and the policy choosing the tile (see matmul_pack.h): a codegen-side step on
// the dispatch graph, run by the driver between lowering and kernel generation. A constant is
// repacked only when the one dispatch reading it is a product the panels apply to; its size
// does not change, so the constants layout and every BufferRef stay valid. LLVM-free.
#include <algorithm>
#include <cassert>
#include <cstring>
#include <map>

#include "constant_reads.h"
#include "kiln/codegen/matmul_pack.h"
#include "kiln/ir/dispatch_graph.h"

namespace kiln::codegen {

MatMulPanelTile matMulPanelTile(const KernelDesc& d, VectorUnit unit) {
  if (d.kind != KernelKind::MatMul || unit.lanes < 4 || d.inputs.size() < 2) return {};
  if (d.output.type != ElemType::F32 || d.inputs[0].type != ElemType::F32 ||
      d.inputs[1].type != ElemType::F32)
    return {};
  const std::vector<int64_t>& as = d.inputs[0].shape;
  const std::vector<int64_t>& bs = d.inputs[1].shape;
  if (as.size() < 2 || bs.size() < 2 || d.output.shape.size() < 2) return {};
  // B shared by every batch (no batch axes of its own): one set of panels.
  for (size_t i = 0; i + 2 < bs.size(); ++i)
    if (bs[i] != 1) return {};
  const int64_t n = d.transB ? bs[bs.size() - 2] : bs.back();
  if (n < int64_t(unit.lanes)) return {};  // a column or a few: the dot tiles
  // The rows one pass over B serves: a fused MLP head's block of rows (emit_matmul_chain.cpp),
  // else every row of every batch.
  int64_t rows = 0;
  if (d.tailB >= 0) {
    const int64_t m = d.transA ? as[as.size() - 1] : as[as.size() - 2];
    rows = std::max<int64_t>(1, std::min<int64_t>(m, kMlpHiddenBlockFloats / n));
  } else {
    rows = d.output.elementCount() / d.output.shape.back();
  }
  if (rows < 1) return {};
  // A batch-1 torch Linear (weights [N][K]) keeps the dot tiles on the model's layout: they
  // stream 8 weight rows at once, which DRAM serves faster than one panel's single stream
  // (MobileNetV2's 1280 -> 1000 classifier: 229-236 vs 304-317 us by min), and in cache they
  // are as fast.
  if (rows == 1 && d.transB) return {};
  // Batch-1 and two-row products: 4 vectors of columns (a long contiguous stream per k step);
  // taller ones 2 vectors and as many rows as the registers hold beside them and a broadcast
  // (AVX2: 6 x 16, 12 accumulators).
  const int64_t vectors = rows <= 2 ? 4 : 2;
  const int64_t budget = (int64_t(unit.registers) - vectors - 1) / vectors;
  MatMulPanelTile tile;
  tile.nr = vectors * int64_t(unit.lanes);
  tile.mr = std::clamp<int64_t>(std::min<int64_t>(rows, budget), 1, 6);
  return tile;
}

std::vector<float> packMatMulPanels(const std::vector<float>& b, int64_t k, int64_t n,
                                    bool transB, int64_t nr) {
  assert(int64_t(b.size()) == k * n && nr > 0);
  std::vector<float> packed(b.size());
  for (int64_t first = 0; first < n; first += nr) {
    const int64_t width = std::min(nr, n - first);
    float* panel = packed.data() + first * k;
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < width; ++j)
        panel[kk * width + j] = transB ? b[size_t((first + j) * k + kk)]
                                       : b[size_t(kk * n + first + j)];
  }
  return packed;
}

int packMatMulWeights(ir::DispatchGraph& graph, std::vector<KernelDesc>& kernels,
                      const TargetConfig& target) {
  VectorUnit unit = vectorUnitOf(target);
  if (unit.lanes == 0 || kernels.size() != graph.dispatches.size()) return 0;
  std::map<uint32_t, int> reads = detail::constantReads(graph);
  int packed = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    KernelDesc& desc = kernels[i];
    if (desc.kind != KernelKind::MatMul || desc.bPanel != 0) continue;
    MatMulPanelTile tile = matMulPanelTile(desc, unit);
    if (!tile.applies()) continue;
    const ir::Binding* weights = detail::soleConstantOperand(graph, i, 1, reads);
    if (!weights) continue;
    ir::ConstantEntry& constant = graph.constants[weights->ref.index];
    const std::vector<int64_t>& bs = desc.inputs[1].shape;
    const int64_t n = desc.transB ? bs[bs.size() - 2] : bs.back();
    const int64_t k = desc.transB ? bs.back() : bs[bs.size() - 2];
    const uint64_t bytes = uint64_t(k * n) * sizeof(float);
    if (weights->ref.offset != 0 || weights->ref.length != bytes || constant.bytes.size() != bytes)
      continue;
    std::vector<float> values(size_t(k * n));
    std::memcpy(values.data(), constant.bytes.data(), bytes);
    std::vector<float> panels = packMatMulPanels(values, k, n, desc.transB, tile.nr);
    std::memcpy(constant.bytes.data(), panels.data(), bytes);
    desc.bPanel = tile.nr;
    ++packed;
  }
  return packed;
}

}  // namespace kiln::codegen
