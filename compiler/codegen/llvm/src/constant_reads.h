// How often each constant of a dispatch graph is read, for the compile-time passes that
// rewrite constants (pack_weights.cpp, pack_matmul_weights.cpp, fold_corrections.cpp): a
// constant may be rewritten for a kernel only when the one dispatch reading it is that
// kernel. LLVM-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace kiln::ir {
struct DispatchGraph;
struct Binding;
}  // namespace kiln::ir

namespace kiln::codegen::detail {

// Constant index -> reads by any dispatch binding or copy step.
std::map<uint32_t, int> constantReads(const ir::DispatchGraph& graph);

// The binding of dispatch `dispatch`'s root operand `operand` (1: weights, 2: bias) where it
// is a constant that no other binding or copy reads (`reads` from constantReads), whose
// bytes a packer may therefore rewrite; else null.
ir::Binding* soleConstantOperand(ir::DispatchGraph& graph, size_t dispatch, int operand,
                                 std::map<uint32_t, int>& reads);

}  // namespace kiln::codegen::detail
