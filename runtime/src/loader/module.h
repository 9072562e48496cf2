// The module: pointers into the validated artifact plus what validation computed. Immutable
// after kiln_module_load, so any number of contexts may read it from any thread.
#ifndef KILN_RUNTIME_LOADER_MODULE_H_
#define KILN_RUNTIME_LOADER_MODULE_H_

#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "kiln/format/artifact.h"
#include "kiln/format/commands.h"
#include "kiln/kiln.h"

struct kiln_module {
  const uint8_t* base;
  uint64_t size;
  const kiln_header* header;

  // META and its tables.
  const kiln_meta* meta;
  uint64_t metaSize;
  const kiln_function* functions;
  const kiln_tensor* tensors;
  const kiln_kernel_signature* signatures;
  const kiln_binding_signature* bindingSigs;
  const char* strings;
  uint32_t stringsSize;

  // COMMANDS.
  const uint8_t* commands;
  uint64_t commandsSize;

  // CONSTANTS (embedded or external).
  const uint8_t* constants;
  uint64_t constantsSize;
  bool constantsExternal;

  // KERNELS.
  const uint8_t* kernelSection;
  uint64_t kernelSectionSize;
  bool kernelsStatic;
  const kiln_kernel_library* library;
  const kiln_elf_loader* elfLoader;
  void* elfMapping;
  size_t elfMappingSize;

  // DEBUG (optional; debugSection NULL if absent).
  const uint8_t* debugSection;
  uint64_t debugSectionSize;
  const kiln_debug_entry* debugEntries;
  uint32_t debugEntryCount;
  const char* debugStrings;
  uint32_t debugStringsSize;

  // Computed by command validation.
  uint32_t dispatchCount;
  uint32_t maxStageDispatches;
  uint32_t maxStageBindings;
};

namespace kiln {

// Validation steps, in the order kiln_module_load runs them. Each fills its part of `m` and
// returns KILN_OK or writes a message to `diag`.
kiln_status_t checkHeaderAndSections(kiln_module& m, Diag& diag);
kiln_status_t checkTarget(const kiln_module& m, const kiln_load_options& options, Diag& diag);
kiln_status_t checkMeta(kiln_module& m, Diag& diag);
kiln_status_t checkCommands(kiln_module& m, Diag& diag);
kiln_status_t checkDebug(kiln_module& m, Diag& diag);
kiln_status_t bindConstants(kiln_module& m, const kiln_load_options& options, Diag& diag);
kiln_status_t bindKernels(kiln_module& m, const kiln_load_options& options, Diag& diag);

// Decodes the command at *pos with the module's kernel signatures (the one copy of the
// decoder in the core, shared by validation and the interpreter).
kiln_decode_result decodeCommand(const kiln_module& m, const uint8_t** pos, const uint8_t* end,
                                 kiln_command* cmd);

// Reads one (space, offset) pair of a decoded DISPATCH's bindings and advances *pos.
void readBinding(const uint8_t** pos, const uint8_t* end, uint64_t* space, uint64_t* offset);

// True if [offset, offset + length) lies inside [0, total), without overflow.
inline bool inBounds(uint64_t offset, uint64_t length, uint64_t total) {
  return offset <= total && length <= total - offset;
}

inline bool isPowerOfTwo(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

// A NUL-terminated string of `table` (whose last byte validation checked is NUL).
inline const char* stringAt(const char* table, uint32_t offset) { return table + offset; }

// The same comparison as strcmp() == 0, without the C library.
inline bool sameString(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

}  // namespace kiln

#endif  // KILN_RUNTIME_LOADER_MODULE_H_
