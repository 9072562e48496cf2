// Creating the LLVM TargetMachine for a resolved TargetConfig (LLVM side of the target layer).
#pragma once

#include <llvm/Target/TargetMachine.h>

#include <memory>

#include "kiln/codegen/target_config.h"

namespace kiln::codegen::detail {

// Registers LLVM's targets once per process.
void initializeLlvmTargets();

// PIC for the embedded ELF, static for microcontroller objects; float ABI and RISC-V ABI name
// from the config; stack sizes recorded in a .stack_sizes section.
std::unique_ptr<llvm::TargetMachine> createTargetMachine(const TargetConfig& config);

// Whether the target's CPU and features enable LLVM feature `llvmName` (e.g. "avx512vnni").
bool targetHasFeature(const TargetConfig& config, const char* llvmName);

}  // namespace kiln::codegen::detail
