// Measured figures of the runtime core on each microcontroller target: the code a firmware
// links and the stack the runtime itself uses. The footprint and stack bound of a static
// library are this plus what the compiler knows about the model.
#pragma once

#include <cstdint>

#include "kiln/codegen/target_config.h"

namespace kiln::driver {

struct RuntimeFigures {
  uint32_t codeBytes = 0;        // runtime core .text linked into a firmware (--gc-sections)
  uint32_t callStackBytes = 0;   // stack below the caller's frame at a kernel's entry during
                                 // kiln_context_call (probe kernels, painted)
  uint32_t loadStackBytes = 0;   // deepest use of kiln_module_load and kiln_context_init
  uint32_t moduleBytes = 0;      // sizeof(kiln_module)
  uint32_t contextBytes = 0;     // sizeof(kiln_context)
  uint32_t dispatchBytes = 0;    // sizeof(kiln_dispatch): one per dispatch of the largest stage
  uint32_t bindingBytes = 0;     // one pointer per binding of the largest stage
  bool measured = false;         // false: a 32-bit estimate for a custom target
};

// Figures for a target by CPU and float ABI (Cortex-M33, Cortex-M7, Cortex-M4 with and without
// FPU, RV32 with and without F); other targets (custom triples on other CPUs) get the largest
// measured figures, flagged as unmeasured.
RuntimeFigures runtimeFigures(const codegen::TargetConfig& target);

}  // namespace kiln::driver
