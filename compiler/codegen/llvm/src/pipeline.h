// The LLVM optimisation pipeline and object emission for a finished kernel module.
#pragma once

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <cstdint>
#include <vector>

namespace kiln::codegen::detail {

// New pass manager, O2 (Os when `optimizeForSize`), loop and SLP vectorization on, every
// library function unknown to the optimiser so that it never introduces a libc call.
void optimizeModule(llvm::Module& module, llvm::TargetMachine& machine, bool optimizeForSize);

// Machine code as an ELF relocatable object (legacy pass manager, addPassesToEmitFile).
std::vector<uint8_t> emitObject(llvm::Module& module, llvm::TargetMachine& machine);

}  // namespace kiln::codegen::detail
