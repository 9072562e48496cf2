// From the dispatch graph (compiler/ir) to the code generator: each dispatch's root op, its
// attributes and static operands, and its bindings' dtypes/shapes become one KernelDesc.
// LLVM-free.
#pragma once

#include <vector>

#include "kiln/codegen/codegen.h"
#include "kiln/codegen/kernel_desc.h"
#include "kiln/ir/dispatch_graph.h"

namespace kiln::codegen {

// One KernelDesc per dispatch, in dispatch order. Throws kiln::CompileError naming the model
// node and op type for ops or dtypes the code generator does not handle.
std::vector<KernelDesc> lowerDispatches(const ir::DispatchGraph& graph);

// lowerDispatches + generateKernels: CodegenResult::kernelIndex[d] is dispatch d's kernel.
CodegenResult generateKernels(const ir::DispatchGraph& graph, const TargetConfig& target,
                              const CodegenOptions& options = {});

}  // namespace kiln::codegen
