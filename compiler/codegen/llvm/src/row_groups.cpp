// Row groups (kiln/codegen/row_groups.h): the element index of the layout, and the choice of
// the tensors that take it. LLVM-free.
#include "kiln/codegen/row_groups.h"

#include <cassert>
#include <map>
#include <set>

#include "kiln/codegen/conv_pool_plan.h"
#include "kiln/codegen/winograd_plan.h"

namespace kiln::codegen {

int64_t rowGroupsIndex(const BufferDesc& buffer, int64_t n, int64_t c, int64_t h, int64_t w) {
  const std::vector<int64_t>& s = buffer.shape;
  assert(s.size() == 4);
  const int64_t C = s[1], H = s[2], W = s[3];
  const int64_t image = n * C * H * W;
  if (buffer.rowGroups.empty()) return image + (c * H + h) * W + w;
  size_t g = 0;
  while (buffer.rowGroups[g + 1] <= h) ++g;
  const int64_t start = buffer.rowGroups[g], rows = buffer.rowGroups[g + 1] - start;
  return image + C * W * start + (c * rows + h - start) * W + w;
}

std::vector<int64_t> haloRowGroups(const std::vector<int64_t>& blocks) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const bool interior = i > 0 && i + 1 < blocks.size();
    if (interior && blocks[i] - 1 > out.back()) out.push_back(blocks[i] - 1);
    if (out.empty() || blocks[i] > out.back()) out.push_back(blocks[i]);
    if (interior && blocks[i] + 1 < blocks[i + 1]) out.push_back(blocks[i] + 1);
  }
  return out;
}

namespace {

// Where a dispatch binds a value: kernel input `slot` (lowerDispatch's order: the root's
// operands, then the fused ops' operands, each in binding order), or the output (-1).
struct Access {
  size_t dispatch = 0;
  int slot = -1;
};

bool isWinograd(const KernelDesc& d) {
  return d.kind == KernelKind::Conv && !d.pooled() &&
         (d.weightLayout == ConvWeights::Winograd ||
          d.weightLayout == ConvWeights::WinogradPanels);
}

// Whether the fused convolution + pool kernel (or its unpooled stem form) runs `d` with no
// chain input: it stores whole output rows wherever rowAddress puts them.
bool isConvPoolWriter(const KernelDesc& d, VectorUnit unit) {
  const bool stem = convStemDirect(d, unit) && d.weightLayout != ConvWeights::OcVectorPanels;
  return d.kind == KernelKind::Conv && d.tailB < 0 && (d.pooled() || stem) &&
         d.epilogue.inputCount == 0;
}

// Whether kernel input `slot` is a fused chain input of the output's shape (read at each
// output element's coordinates: FusedEpilogue::Position).
bool isOutputShapedChainInput(const KernelDesc& d, int slot) {
  const size_t firstChain = d.inputs.size() - d.epilogue.inputCount;
  return slot >= 0 && size_t(slot) >= firstChain && d.inputs[size_t(slot)].shape == d.output.shape;
}

// The output rows where the threads' shares of a Winograd convolution begin, and its height:
// every block of tile rows, or with a thread split (KernelDesc::threadSplit) every run of
// blocks.
std::vector<int64_t> shareBoundaries(const KernelDesc& d, VectorUnit unit) {
  const std::vector<int64_t> blocks = winogradRowBoundaries(d, unit);
  if (d.threadSplit == 0) return blocks;
  const int64_t B = int64_t(blocks.size()) - 1, T = d.threadSplit;
  std::vector<int64_t> runs;
  for (int64_t t = 0; t <= T; ++t) runs.push_back(blocks[size_t(t * B / T)]);
  return runs;
}

// Whether `threads` runs of consecutive blocks (output rows `bounds`, blocks of whole tiles of
// `m` rows but the last, which ends at the output's height) hold as many tile rows each.
bool runsOfEqualTileRows(const std::vector<int64_t>& bounds, int64_t m, int64_t threads) {
  const int64_t blocks = int64_t(bounds.size()) - 1;
  int64_t first = -1;
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t begin = bounds[size_t(t * blocks / threads)];
    const int64_t end = bounds[size_t((t + 1) * blocks / threads)];
    const int64_t tileRows = (end + m - 1) / m - begin / m;
    if (first < 0) first = tileRows;
    if (tileRows != first) return false;
  }
  return true;
}

}  // namespace

void splitForThreads(std::vector<KernelDesc>& kernels, const TargetConfig& target,
                     int64_t threads) {
  const VectorUnit unit = vectorUnitOf(target);
  if (unit.lanes == 0 || threads < 2) return;
  for (KernelDesc& d : kernels) {
    // A fused expand + depthwise convolution: at most one run of steps of rows per thread
    // (each workgroup recomputes its first step's window overlap).
    if (d.kind == KernelKind::Conv && d.tailB >= 0) d.threadSplit = threads;
    // Winograd convolutions of one image whose blocks of tile rows divide among the threads
    // in runs of as many tile rows each: one workgroup per thread, a run of blocks each (no
    // work queues), so that a thread writes and reads the same rows in every convolution of
    // the chain and in every call. Where the runs would differ (ResNet-18's layer2 on
    // AVX-512: 7 tile rows in 2 blocks, 4 + 3), the threads share the blocks' output-channel
    // panels at run time instead: the fixed runs were 335 + 265 us against 280 + 245 us of
    // shared blocks, 0.96-0.98 in `kiln compare` at 2 threads.
    if (!isWinograd(d) || d.inputs[0].shape[0] != 1) continue;
    const std::vector<int64_t> bounds = winogradRowBoundaries(d, unit);
    const int64_t blocks = int64_t(bounds.size()) - 1;
    if (blocks < threads || blocks % threads != 0) continue;
    assert(d.winogradTile > 0);
    if (!runsOfEqualTileRows(bounds, d.winogradTile, threads)) continue;
    d.threadSplit = threads;
    d.workQueues = 0;
  }
}

std::map<const ir::Value*, std::vector<int64_t>> placeRowGroups(
    const ir::DispatchGraph& graph, std::vector<KernelDesc>& kernels, const TargetConfig& target,
    int64_t threads) {
  assert(kernels.size() == graph.dispatches.size() && "one kernel description per dispatch");
  const VectorUnit unit = vectorUnitOf(target);
  if (unit.lanes == 0 || threads < 2) return {};

  // Every binding of every tensor value.
  std::map<const ir::Value*, std::vector<Access>> accesses;
  for (size_t i = 0; i < graph.dispatches.size(); ++i) {
    const ir::Dispatch& dispatch = graph.dispatches[i];
    int operand = 0, fused = 0;
    size_t roots = 0;
    for (const ir::Binding& b : dispatch.bindings)
      if (b.value && b.resultIndex < 0 && b.fusedOp < 0) ++roots;
    for (const ir::Binding& b : dispatch.bindings) {
      if (!b.value) continue;  // work queues
      Access a{i, -1};
      if (b.resultIndex >= 0) {
        if (b.resultIndex > 0) a.slot = -2;  // an extra output: never grouped
      } else if (b.fusedOp < 0) {
        a.slot = operand++;
      } else {
        a.slot = int(roots) + fused++;
      }
      accesses[b.value].push_back(a);
    }
  }
  // Values whose bytes something else also names: views and their storage, in-place pairs,
  // COPY sources and destinations.
  std::set<const ir::Value*> shared;
  for (const auto& [view, root] : graph.viewRoot) shared.insert(view), shared.insert(root);
  for (const ir::Dispatch& dispatch : graph.dispatches) {
    for (const auto& [read, write] : dispatch.aliases) {
      shared.insert(dispatch.bindings[read].value);
      shared.insert(dispatch.bindings[write].value);
    }
  }
  std::vector<ir::BufferRef> copied;
  for (const ir::Step& step : graph.steps) {
    if (step.kind != ir::StepKind::Copy) continue;
    if (step.srcValue) shared.insert(step.srcValue);
    copied.push_back(step.dst);
  }

  // Candidates: f32 arena tensors written by one Winograd or convolution + pool kernel and
  // read only by Winograd convolutions (input or output-shaped chain input). The boundaries:
  // where the threads' shares of the Winograd writer begin (shareBoundaries), else those of
  // the first reader that keeps the height; then the halo rows apart.
  std::map<const ir::Value*, std::vector<int64_t>> groups;
  for (const auto& [value, list] : accesses) {
    if (shared.count(value) || value->dtype() != ir::DType::F32 || value->shape().size() != 4)
      continue;
    const auto placed = graph.placement.find(value);
    if (placed == graph.placement.end() || placed->second.space != ir::Space::Arena) continue;
    const ir::BufferRef& ref = placed->second;
    bool overlapsCopy = false;
    for (const ir::BufferRef& dst : copied)
      overlapsCopy |= dst.space == ir::Space::Arena && dst.offset < ref.offset + ref.length &&
                      ref.offset < dst.offset + dst.length;
    if (overlapsCopy) continue;
    const KernelDesc* writer = nullptr;
    const KernelDesc* blocks = nullptr;  // whose blocks of rows the groups follow
    bool ok = true;
    for (const Access& a : list) {
      const KernelDesc& d = kernels[a.dispatch];
      if (a.slot == -1) {
        ok &= writer == nullptr && (isWinograd(d) || isConvPoolWriter(d, unit));
        writer = &d;
        if (isWinograd(d)) blocks = &d;
      } else {
        ok &= isWinograd(d) && (a.slot == 0 || isOutputShapedChainInput(d, a.slot));
        if (ok && a.slot == 0 && !blocks && d.output.shape[2] == value->shape()[2]) blocks = &d;
      }
    }
    if (!ok || !writer || !blocks) continue;
    std::vector<int64_t> bounds = haloRowGroups(shareBoundaries(*blocks, unit));
    if (bounds.size() > 2) groups[value] = std::move(bounds);
  }

  for (const auto& [value, bounds] : groups) {
    for (const Access& a : accesses[value]) {
      KernelDesc& d = kernels[a.dispatch];
      (a.slot == -1 ? d.output : d.inputs[size_t(a.slot)]).rowGroups = bounds;
    }
  }
  return groups;
}

}  // namespace kiln::codegen
