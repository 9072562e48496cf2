// Internal bridge between the LLVM-free target table and the LLVM-side checks: host CPU
// detection and validation of triple, CPU and features against LLVM's target registry.
#pragma once

#include "kiln/codegen/target_config.h"

namespace kiln::codegen::detail {

// Triple, CPU and feature string of the machine running the compiler.
TargetConfig detectHostTarget();

// Checks triple, CPU and features with LLVM; fills `requiredFeatures` from what the CPU and
// feature string enable. Throws kiln::CompileError naming the flag at fault.
void validateWithLlvm(TargetConfig& config);

}  // namespace kiln::codegen::detail
