// The command-stream disassembler: mnemonics and operand names come from commands.def through
// commands.h, so a new command prints without changes here.
#include "kiln/disassemble.h"

#include <cstdio>

#include "kiln/format/commands.h"
#include "loader/module.h"

namespace kiln {

std::string spaceName(uint64_t space) {
  if (space == KILN_SPACE_ARENA) return "arena";
  if (space == KILN_SPACE_CONSTANTS) return "const";
  return (space % 2 ? "out" : "in") + std::to_string((space - 2) / 2);
}

namespace {

uint32_t callBindingCount(const void* user, uint64_t kernel) {
  return (*static_cast<const BindingCountFn*>(user))(kernel);
}

const char* decodeError(kiln_decode_result r) {
  switch (r) {
    case KILN_DECODE_TRUNCATED:
      return "truncated command";
    case KILN_DECODE_BAD_OPCODE:
      return "unknown opcode";
    case KILN_DECODE_BAD_VARINT:
      return "malformed varint";
    case KILN_DECODE_BAD_KERNEL:
      return "no such kernel";
    default:
      return "ok";
  }
}

}  // namespace

std::string disassemble(const uint8_t* stream, size_t size, const BindingCountFn& bindingCount,
                        size_t offset) {
  std::string out;
  const uint8_t* p = stream;
  const uint8_t* end = stream + size;
  while (p < end) {
    char at[32];
    std::snprintf(at, sizeof at, "  %04zu  ", offset + static_cast<size_t>(p - stream));
    out += at;
    kiln_command cmd;
    kiln_decode_result r = kiln_command_decode(&p, end, &cmd, callBindingCount, &bindingCount);
    if (r != KILN_DECODE_OK) {
      out += std::string("error: ") + decodeError(r) + "\n";
      break;
    }
    out += kiln_command_mnemonic(cmd.opcode);
    const uint8_t* kinds = kiln_command_operand_kinds(cmd.opcode);
    for (uint32_t i = 0; kinds[i] != KILN_OPERAND_END; ++i) {
      const char* name = kiln_command_operand_name(cmd.opcode, i);
      out += std::string(" ") + name + "=";
      if (kinds[i] != KILN_OPERAND_BINDINGS) {
        std::string text = std::to_string(cmd.operands[i]);
        // Space operands read better by name.
        std::string n(name);
        if (n == "space" || n == "src_space" || n == "dst_space") text = spaceName(cmd.operands[i]);
        out += text;
        continue;
      }
      out += "[";
      const uint8_t* b = cmd.bindings;
      for (uint32_t k = 0; k < cmd.binding_count; ++k) {
        uint64_t space = 0, off = 0;
        kiln_varint_read(&b, end, &space);
        kiln_varint_read(&b, end, &off);
        out += (k ? " " : "") + spaceName(space) + "+" + std::to_string(off);
      }
      out += "]";
    }
    out += "\n";
  }
  return out;
}

std::string disassembleModule(const kiln_module* m) {
  std::string out;
  BindingCountFn count = [m](uint64_t kernel) -> uint32_t {
    return kernel < m->meta->kernel_count ? m->signatures[kernel].binding_count : UINT32_MAX;
  };
  for (uint32_t f = 0; f < m->meta->function_count; ++f) {
    const kiln_function& fn = m->functions[f];
    out += "function " + std::string(stringAt(m->strings, fn.name)) + " (" +
           std::to_string(fn.input_count) + " inputs, " + std::to_string(fn.output_count) +
           " outputs, " + std::to_string(fn.dispatch_count) + " dispatches, " +
           std::to_string(fn.commands_size) + " bytes)\n";
    out += disassemble(m->commands + fn.commands_offset, fn.commands_size, count);
  }
  return out;
}

}  // namespace kiln
