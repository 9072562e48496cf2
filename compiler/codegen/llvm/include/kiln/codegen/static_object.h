// Relocatable objects for firmware (`kiln compile --output-format=static-lib`): read-only data
// objects built for the kernels' target, merging objects into one, and section sizes read back
// from an object. LLVM-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/codegen/target_config.h"

namespace kiln::codegen {

// One global, read-only byte array: `name` (external linkage), placed in `section`, aligned.
struct DataSymbol {
  std::string name;
  std::string section;
  uint32_t alignment = 64;
  std::vector<uint8_t> bytes;
};

// A relocatable object for `target` (the same ELF class, machine, flags and attributes as its
// kernel object) that defines every symbol of `symbols` as constant data.
std::vector<uint8_t> emitDataObject(const TargetConfig& target,
                                    const std::vector<DataSymbol>& symbols);

// Merges relocatable objects into one (lld -r): every section and symbol is kept.
std::vector<uint8_t> mergeObjects(const std::vector<std::vector<uint8_t>>& objects);

// Allocated bytes of a relocatable object by kind: code (executable), read-only data,
// writable data, zero-initialised. Non-allocated sections (.stack_sizes, symbols) count nowhere.
struct ObjectSizes {
  uint64_t code = 0;
  uint64_t readOnly = 0;
  uint64_t data = 0;
  uint64_t zero = 0;
};
ObjectSizes measureObject(const std::vector<uint8_t>& object);

}  // namespace kiln::codegen
