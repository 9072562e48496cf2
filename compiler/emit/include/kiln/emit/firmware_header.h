// The C header of the static-library output (`kiln compile --output-format=static-lib`): it
// declares the object's symbols (kernel library, artifact bytes, external weights) and records
// what a firmware needs to size its memory before flashing: arena, runtime state, stack bound,
// flash and RAM totals, and the entry function's input/output sizes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::emit {

// Flash and RAM a model needs on its target, bytes.
struct Footprint {
  // Flash (code and read-only data, executed/read in place).
  uint64_t runtimeCode = 0;   // the runtime core's code linked into a firmware (measured)
  uint64_t kernelCode = 0;    // kernels' machine code
  uint64_t kernelTables = 0;  // kernel table, library struct, kernels' constant pools
  uint64_t constants = 0;     // weights (in the artifact or in their own object)
  uint64_t commands = 0;      // the artifact without its constants: command stream, metadata
  // RAM.
  uint64_t arena = 0;         // intermediate tensors
  uint64_t moduleState = 0;   // kiln_module_memory_size()
  uint64_t contextState = 0;  // kiln_context_memory_size() minus the arena
  uint64_t kernelStack = 0;   // deepest kernel call chain (LLVM's .stack_sizes)
  uint64_t runtimeStack = 0;  // the runtime's stack at a kernel's entry during a call (measured)
  uint64_t loadStack = 0;     // the runtime's deepest use in module load / context init (measured)
  // False when the runtime figures were not measured on this target (custom triples on other
  // CPUs): the largest measured figures stand in.
  bool runtimeMeasured = true;

  uint64_t flashTotal() const { return runtimeCode + kernelCode + kernelTables + constants + commands; }
  uint64_t stackBound() const {
    return kernelStack + runtimeStack > loadStack ? kernelStack + runtimeStack : loadStack;
  }
  uint64_t ramOverhead() const { return moduleState + contextState; }
  uint64_t ramTotal() const { return arena + ramOverhead() + stackBound(); }
};

struct IoSize {
  std::string name;
  uint64_t bytes = 0;
};

struct FirmwareHeaderInfo {
  std::string prefix;        // C identifier that starts every symbol and macro
  std::string modelFile;     // for the comment at the top
  std::string targetName;    // e.g. "cortex-m33"
  std::string triple;
  uint64_t artifactBytes = 0;
  uint64_t constantsBytes = 0;
  bool constantsExternal = false;  // the artifact expects the constants from the application
  bool constantsSymbol = false;    // ... and the weights object defines PREFIX_constants
  std::vector<IoSize> inputs, outputs;
  Footprint footprint;
};

// The header's text. Macros are PREFIX in upper case + _NAME; symbols are prefix + _name.
std::string firmwareHeader(const FirmwareHeaderInfo& info);

// The footprint as kiln compile prints it (two lines, "flash ..." and "RAM ...").
std::string footprintSummary(const Footprint& footprint);

}  // namespace kiln::emit
