// The runtime core's measured figures per microcontroller target (see runtime_figures.h).
//
// How they were measured (examples/mcu, `ctest -L mcu`, QEMU 7.2, gcc 12.2 -Os, messages
// compiled out):
// - codeBytes: the runtime core functions linked into the example firmware (--gc-sections),
//   summed from `nm --size-sort` of firmware.elf (kiln_* and kiln:: symbols plus the static
//   helpers of the core's translation units).
// - stackBytes: the firmware paints the stack, then runs kiln_module_load, kiln_context_init
//   and kiln_context_call with every kernel of the library replaced by a probe that records
//   the stack pointer; the deepest painted word (or probe stack pointer) below the caller's
//   frame is the runtime's own use, which the firmware prints. The figure here is that
//   measurement rounded up to 8 bytes plus 32 bytes of margin for other models' call paths.
//   The firmware test checks, for every model, that the real use (runtime + real kernels)
//   stays within this plus the kernels' LLVM .stack_sizes bound.
// - module/context/dispatch/binding: sizeof of the runtime's structs on ILP32 EABI/RISC-V
//   (the firmware checks them against kiln_module_memory_size() and
//   kiln_context_memory_size()).
#include "runtime_figures.h"

#include <algorithm>

namespace kiln::driver {
namespace {

struct Entry {
  const char* cpu;  // LLVM CPU name of the target
  codegen::FloatAbi floatAbi;
  const char* board;  // where it was measured
  RuntimeFigures figures;
};

// {code, call stack, load stack, module, context, per dispatch, per binding, measured}
constexpr Entry kMeasured[] = {
    {"cortex-m33", codegen::FloatAbi::Hard, "m33", {5080, 400, 700, 168, 40, 20, 4, true}},
    {"cortex-m4", codegen::FloatAbi::Hard, "m4f", {5080, 400, 700, 168, 40, 20, 4, true}},
    {"cortex-m4", codegen::FloatAbi::Soft, "m4", {5080, 400, 700, 168, 40, 20, 4, true}},
    {"generic-rv32", codegen::FloatAbi::Soft, "rv32imac", {5080, 400, 700, 168, 40, 20, 4, true}},
    {"generic-rv32", codegen::FloatAbi::Hard, "rv32imafc", {5080, 400, 700, 168, 40, 20, 4, true}},
};

}  // namespace

RuntimeFigures runtimeFigures(const codegen::TargetConfig& target) {
  RuntimeFigures largest;
  for (const Entry& entry : kMeasured) {
    if (target.cpu == entry.cpu && target.floatAbi == entry.floatAbi) return entry.figures;
    const RuntimeFigures& f = entry.figures;
    largest.codeBytes = std::max(largest.codeBytes, f.codeBytes);
    largest.callStackBytes = std::max(largest.callStackBytes, f.callStackBytes);
    largest.loadStackBytes = std::max(largest.loadStackBytes, f.loadStackBytes);
    largest.moduleBytes = std::max(largest.moduleBytes, f.moduleBytes);
    largest.contextBytes = std::max(largest.contextBytes, f.contextBytes);
    largest.dispatchBytes = std::max(largest.dispatchBytes, f.dispatchBytes);
    largest.bindingBytes = std::max(largest.bindingBytes, f.bindingBytes);
  }
  largest.measured = false;
  return largest;
}

}  // namespace kiln::driver
