// Where f64 (double) tensors may appear in generated code: the ops whose kernels are written
// for any element type (arithmetic, comparisons, casts, data movement, simple reductions) on
// 64-bit targets. Everything else is refused with a message naming the node or the target.
#pragma once

#include <vector>

#include "kiln/codegen/kernel_desc.h"
#include "kiln/codegen/target_config.h"
#include "kiln/ir/dispatch_graph.h"

namespace kiln::codegen::detail {

// Throws CompileError "node 'n' (Exp): f64 is not supported for op Exp; ..." when an op of
// the dispatch (root or fused) reads or writes f64 and kiln has no f64 kernel for it.
void checkF64Ops(const ir::Dispatch& dispatch);

// True if any binding of the kernel is f64.
bool usesF64(const KernelDesc& desc);

// Throws CompileError when a kernel uses f64 on a 32-bit (microcontroller) target: none of
// them has double-precision hardware kiln uses, and kiln links no double soft-float routines.
void checkF64Target(const std::vector<KernelDesc>& kernels, const TargetConfig& target);

}  // namespace kiln::codegen::detail
