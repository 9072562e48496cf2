// The runtime core's measured figures per microcontroller target (see runtime_figures.h).
//
// How they were measured (examples/mcu, `ctest -L mcu`, QEMU 7.2, gcc 12.2 -Os, messages
// compiled out, the digits and mnist_cnn models; run_firmware.py prints each figure):
// - codeBytes: the runtime core's functions linked into the example firmware (--gc-sections:
//   load, context init, call by index), summed from `nm -S` of firmware.elf. A firmware that
//   also calls the by-name or introspection entry points links a little more.
// - callStackBytes: the firmware replaces every kernel of the library by a probe that records
//   the stack pointer and paints the stack around kiln_context_call; the deeper of the painted
//   use and the probe's stack pointer below the caller, rounded up to 8, plus 32 bytes margin.
//   Measured: 304 (cortex-m33, cortex-m7, cortex-m4f, cortex-m55), 296 (cortex-m4 soft), 316
//   (rv32).
// - loadStackBytes: the painted use of kiln_module_load and kiln_context_init (load is the
//   deeper: validation), rounded up to 8, plus 32 bytes margin. Measured: 620 (cortex-m33,
//   cortex-m7, cortex-m4f), 616 (cortex-m55), 612 (cortex-m4 soft), 604 (rv32).
// - module/context/dispatch/binding: sizeof of the runtime's structs on ILP32 EABI/RISC-V;
//   the firmware checks the header's totals against kiln_module_memory_size() and
//   kiln_context_memory_size() exactly.
// The firmware test fails when a measurement exceeds a figure, so a runtime change that grows
// the stack shows up there first.
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
    {"cortex-m33", codegen::FloatAbi::Hard, "m33", {4952, 336, 656, 168, 40, 20, 4, true}},
    {"cortex-m7", codegen::FloatAbi::Hard, "m7", {4952, 336, 656, 168, 40, 20, 4, true}},
    {"cortex-m55", codegen::FloatAbi::Hard, "m55", {4960, 336, 648, 168, 40, 20, 4, true}},
    {"cortex-m4", codegen::FloatAbi::Hard, "m4f", {4962, 336, 656, 168, 40, 20, 4, true}},
    {"cortex-m4", codegen::FloatAbi::Soft, "m4", {4930, 328, 648, 168, 40, 20, 4, true}},
    {"generic-rv32", codegen::FloatAbi::Soft, "rv32imac", {5654, 352, 640, 168, 40, 20, 4, true}},
    {"generic-rv32", codegen::FloatAbi::Hard, "rv32imafc", {5654, 352, 640, 168, 40, 20, 4, true}},
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
