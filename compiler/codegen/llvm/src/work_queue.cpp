// placeWorkQueues: the work queues' arena region, bindings and FILL (see work_queue.h).
// LLVM-free.
#include "kiln/codegen/work_queue.h"

#include <cassert>

namespace kiln::codegen {

uint64_t placeWorkQueues(ir::DispatchGraph& graph, const std::vector<KernelDesc>& kernels) {
  assert(kernels.size() == graph.dispatches.size() && "one kernel description per dispatch");
  const uint64_t base = (graph.arenaSize + kWorkQueueBytes - 1) / kWorkQueueBytes * kWorkQueueBytes;
  uint64_t offset = base;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (kernels[i].workQueues <= 0) continue;
    ir::Binding queues;
    queues.value = nullptr;
    queues.access = ir::kRead | ir::kWrite;
    queues.ref = {ir::Space::Arena, 0, offset, uint64_t(kernels[i].workQueues * kWorkQueueBytes)};
    graph.dispatches[i].bindings.push_back(queues);
    offset += queues.ref.length;
  }
  if (offset == base) return 0;
  graph.arenaSize = offset;
  graph.memory.arenaBytes = offset;
  // The FILL runs in a stage of its own, ahead of every dispatch: the command stream's stages
  // never share bytes between a write and any other access.
  for (ir::Step& step : graph.steps) ++step.stage;
  ir::Step fill;
  fill.kind = ir::StepKind::Fill;
  fill.stage = 0;
  fill.dst = {ir::Space::Arena, 0, base, offset - base};
  fill.fillByte = 0;
  graph.steps.insert(graph.steps.begin(), fill);
  ++graph.numStages;
  return offset - base;
}

}  // namespace kiln::codegen
