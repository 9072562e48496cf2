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

ir::Binding* soleConstantOperand(ir::DispatchGraph& graph, size_t dispatch, int operand,
                                 std::map<uint32_t, int>& reads) {
  ir::Binding* found = nullptr;
  for (ir::Binding& binding : graph.dispatches[dispatch].bindings)
    if (binding.operandIndex == operand && binding.fusedOp < 0 && binding.resultIndex < 0)
      found = &binding;
  if (!found || found->ref.space != ir::Space::Constants) return nullptr;
  if (reads[found->ref.index] != 1 || found->ref.index >= graph.constants.size()) return nullptr;
  return found;
}

}  // namespace kiln::codegen::detail
