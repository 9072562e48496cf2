// In-process linking of a kernel object into the embedded ELF shared object with liblld.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::codegen::detail {

// Links `object` (an ELF relocatable object) into a position-independent shared object that
// exports only `exportedSymbol`: no undefined symbols, unused sections dropped, identical code
// folded, stripped, RELATIVE relocations only. Throws kiln::CompileError with lld's messages.
std::vector<uint8_t> linkSharedElf(const std::vector<uint8_t>& object,
                                   const std::string& exportedSymbol);

}  // namespace kiln::codegen::detail
