// Facts read back from the emitted relocatable object: the stack frames LLVM recorded in
// .stack_sizes and the symbols the object leaves undefined.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::codegen::detail {

struct ObjectFacts {
  uint32_t largestFrame = 0;              // largest .stack_sizes entry, bytes
  std::vector<std::string> undefinedSymbols;
};

ObjectFacts inspectObject(const std::vector<uint8_t>& object);

}  // namespace kiln::codegen::detail
