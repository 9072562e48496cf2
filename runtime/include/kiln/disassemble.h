// Host-side disassembler of kiln command streams (library kiln_format_text), generated from
// commands.def: one line per command. `kiln dump` prints a module's schedule with it.
#ifndef KILN_DISASSEMBLE_H_
#define KILN_DISASSEMBLE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "kiln/kiln.h"

namespace kiln {

// Returns the binding count of a kernel, or UINT32_MAX if there is no such kernel.
using BindingCountFn = std::function<uint32_t(uint64_t kernel)>;

// One line per command, e.g.
//   "  0012  dispatch kernel=1 workgroups=4 bindings=[arena+0 const+64 in0+0 out0+0]"
// `offset` is added to the printed byte offsets. A command that does not decode ends the
// listing with an "error: ..." line.
std::string disassemble(const uint8_t* stream, size_t size, const BindingCountFn& bindingCount,
                        size_t offset = 0);

// The schedule of every entry function of a loaded module, with a header line per function.
std::string disassembleModule(const kiln_module* module);

// Short name of a memory space: "arena", "const", "in<i>", "out<i>".
std::string spaceName(uint64_t space);

}  // namespace kiln

#endif  // KILN_DISASSEMBLE_H_
