// Facts read back from the emitted relocatable object: the stack frames LLVM recorded in
// .stack_sizes and the symbols the object leaves undefined.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::codegen::detail {

struct ObjectFacts {
  // Stack frame of each function, bytes (.stack_sizes), by function name.
  std::map<std::string, uint32_t> frames;
  std::vector<std::string> undefinedSymbols;
};

ObjectFacts inspectObject(const std::vector<uint8_t>& object);

}  // namespace kiln::codegen::detail
