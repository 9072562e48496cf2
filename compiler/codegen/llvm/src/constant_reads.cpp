// Counts the reads of each constant of a dispatch graph (see constant_reads.h). LLVM-free.
#include "constant_reads.h"

#include "kiln/ir/dispatch_graph.h"

namespace kiln::codegen::detail {

std::map<uint32_t, int> constantReads(const ir::DispatchGraph& graph) {
  std::map<uint32_t, int> reads;
  for (const ir::Dispatch& dispatch : graph.dispatches)
    for (const ir::Binding& binding : dispatch.bindings)
      if (binding.ref.space == ir::Space::Constants) ++reads[binding.ref.index];
  for (const ir::Step& step : graph.steps)
    if (step.kind == ir::StepKind::Copy && step.src.space == ir::Space::Constants)
      ++reads[step.src.index];
  return reads;
}

}  // namespace kiln::codegen::detail
