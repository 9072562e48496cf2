// Soft-float support routines linked into kernel modules for targets without a hardware FPU.
#pragma once

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "kiln/codegen/target_config.h"

namespace kiln::codegen::detail {

// Links the soft-float routines (runtime/soft_float.c, compiled to IR at build time) into
// `module` as internal functions named as `target`'s back end calls them (__aeabi_* on ARM,
// libgcc names elsewhere, as `machine`'s back end reports them), kept alive until code
// generation creates the calls.
void linkSoftFloatRoutines(llvm::Module& module, llvm::TargetMachine& machine,
                           const TargetConfig& target);

}  // namespace kiln::codegen::detail
