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

}  // namespace kiln::codegen::detail
