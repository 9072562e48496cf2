// Validates every entry function's command stream once, at load: each command decodes, each
// memory range (binding, fill, copy) lies inside its space with the alignment and access its
// kernel signature states, no written range overlaps another range of the same command (except
// a dispatch's result written in place over an input) or of another command of the same stage
// (between barriers), and the stream ends with RETURN. It
// also counts the dispatches and the largest stage, which size a context. After this the
// interpreter trusts the stream.
#include "kiln/format/commands.h"
#include "loader/module.h"

namespace kiln {
namespace {

// Largest workgroup count of one dispatch (bounds the executor's work per command).
constexpr uint64_t kMaxWorkgroups = KILN_MAX_WORKGROUPS;

// Every message starts with the function and the command's byte offset in its stream.
#define KILN_AT "function '{}', command at byte {}: "

struct Range {
  uint64_t space;
  uint64_t offset;
  uint64_t length;
  uint32_t alignment;
  bool write;
};

// The memory ranges a decoded command touches, one at a time.
class RangeReader {
 public:
  RangeReader(const kiln_module& m, const kiln_command& cmd) : m_(m), cmd_(cmd), p_(cmd.bindings) {}

  bool next(Range* r) {
    uint32_t i = index_++;
    const uint64_t* op = cmd_.operands;
    switch (cmd_.opcode) {
      case KILN_OP_DISPATCH: {
        if (i >= cmd_.binding_count) return false;
        const kiln_kernel_signature& sig = m_.signatures[op[KILN_DISPATCH_KERNEL]];
        const kiln_binding_signature& bs = m_.bindingSigs[sig.first_binding + i];
        const uint8_t* end = m_.commands + m_.commandsSize;
        uint64_t space = 0, offset = 0;
        readBinding(&p_, end, &space, &offset);
        *r = Range{space, offset, bs.length, bs.alignment, (bs.access & KILN_ACCESS_WRITE) != 0};
        return true;
      }
      case KILN_OP_FILL:
        *r = Range{op[KILN_FILL_SPACE], op[KILN_FILL_OFFSET], op[KILN_FILL_LENGTH], 1, true};
        return i == 0;
      case KILN_OP_COPY:
        if (i == 0) {
          *r = Range{op[KILN_COPY_SRC_SPACE], op[KILN_COPY_SRC_OFFSET], op[KILN_COPY_LENGTH], 1,
                     false};
        } else {
          *r = Range{op[KILN_COPY_DST_SPACE], op[KILN_COPY_DST_OFFSET], op[KILN_COPY_LENGTH], 1,
                     true};
        }
        return i < 2;
      default:
        return false;
    }
  }

 private:
  const kiln_module& m_;
  const kiln_command& cmd_;
  const uint8_t* p_;
  uint32_t index_ = 0;
};

bool conflict(const Range& a, const Range& b) {
  return (a.write || b.write) && a.space == b.space && a.length != 0 && b.length != 0 &&
         a.offset < b.offset + b.length && b.offset < a.offset + a.length;
}

// An elementwise kernel may write its result in place over one of its inputs: within one
// DISPATCH, a written binding may coincide with a read binding that starts at the same byte
// (each element is read before it is written). Shifted overlaps stay refused.
bool inPlace(const kiln_command& cmd, const Range& a, const Range& b) {
  return cmd.opcode == KILN_OP_DISPATCH && a.space == b.space && a.offset == b.offset &&
         !(a.write && b.write);
}

// True if some range of `a` conflicts with some range of `b`; with `same`, only distinct
// ranges of one command are compared (and in-place bindings are allowed). *space receives the
// space of the conflict.
bool commandsConflict(const kiln_module& m, const kiln_command& a, const kiln_command& b, bool same,
                      uint64_t* space) {
  RangeReader ra(m, a);
  Range x, y;
  for (uint32_t i = 0; ra.next(&x); ++i) {
    RangeReader rb(m, b);
    for (uint32_t j = 0; rb.next(&y); ++j) {
      if ((!same || (j > i && !inPlace(a, x, y))) && conflict(x, y)) {
        *space = x.space;
        return true;
      }
    }
  }
  return false;
}

class FunctionChecker {
 public:
  FunctionChecker(kiln_module& m, uint32_t index, Diag& diag)
      : m_(m), fn_(m.functions[index]), diag_(diag), name_(stringAt(m.strings, fn_.name)) {}

  kiln_status_t run() {
    const uint8_t* p = m_.commands + fn_.commands_offset;
    const uint8_t* end = p + fn_.commands_size;
    begin_ = p;
    const uint8_t* stageBegin = p;
    bool returned = false;
    while (p < end) {
      at_ = static_cast<uint64_t>(p - begin_);
      if (returned) return error(KILN_AT "command after RETURN");
      const uint8_t* start = p;
      kiln_command cmd;
      kiln_decode_result r = decodeCommand(m_, &p, end, &cmd);
      if (r != KILN_DECODE_OK) return decodeError(r, cmd);
      if (kiln_status_t st = checkCommand(cmd)) return st;
      if (cmd.opcode == KILN_OP_BARRIER || cmd.opcode == KILN_OP_RETURN) {
        if (kiln_status_t st = checkStage(stageBegin, start)) return st;
        stageBegin = p;
        returned = cmd.opcode == KILN_OP_RETURN;
      }
    }
    at_ = fn_.commands_size;
    if (!returned) return error(KILN_AT "stream does not end with RETURN");
    if (fn_.first_dispatch != m_.dispatchCount || fn_.dispatch_count != dispatches_) {
      return error(KILN_AT "META gives the function dispatches {}+{}, the streams have {}+{}",
                   fn_.first_dispatch, fn_.dispatch_count, m_.dispatchCount, dispatches_);
    }
    m_.dispatchCount += dispatches_;
    return KILN_OK;
  }

 private:
  template <class... Args>
  kiln_status_t error(const char* format, Args... args) {
    return diag_.fail(KILN_ERROR_MALFORMED, format, name_, at_, args...);
  }

  kiln_status_t decodeError(kiln_decode_result r, const kiln_command& cmd) {
    switch (r) {
      case KILN_DECODE_TRUNCATED:
        return error(KILN_AT "truncated");
      case KILN_DECODE_BAD_OPCODE:
        return error(KILN_AT "unknown opcode {}", cmd.opcode);
      case KILN_DECODE_BAD_VARINT:
        return error(KILN_AT "malformed varint operand");
      default:
        return error(KILN_AT "kernel {} does not exist ({} kernels)", cmd.operands[0],
                     m_.meta->kernel_count);
    }
  }

  // Size and base alignment of `space`; false if the function has no such space.
  bool spaceInfo(uint64_t space, uint64_t* size, uint32_t* alignment, bool* writable) const {
    if (space == KILN_SPACE_ARENA) {
      *size = m_.meta->arena_size, *alignment = KILN_ALIGNMENT, *writable = true;
      return true;
    }
    if (space == KILN_SPACE_CONSTANTS) {
      *size = m_.constantsSize, *alignment = KILN_ALIGNMENT, *writable = false;
      return true;
    }
    uint64_t index = (space - 2) / 2;
    bool output = (space % 2) == 1;
    if (index >= (output ? fn_.output_count : fn_.input_count)) return false;
    const kiln_tensor& t = m_.tensors[fn_.first_tensor + (output ? fn_.input_count : 0) + index];
    *size = t.byte_size, *alignment = t.alignment, *writable = output;
    return true;
  }

  kiln_status_t checkRange(const Range& r) {
    uint64_t size;
    uint32_t baseAlignment;
    bool writable;
    if (!spaceInfo(r.space, &size, &baseAlignment, &writable)) {
      return error(KILN_AT "memory space {} does not exist in this function", r.space);
    }
    if (r.write && !writable) return error(KILN_AT "writes to read-only memory space {}", r.space);
    // Alignments are powers of two (checked in META), so a mask replaces a 64-bit division.
    if ((r.offset & (r.alignment - 1)) != 0 || baseAlignment < r.alignment) {
      return error(KILN_AT "offset {} in space {} is not {}-byte aligned", r.offset, r.space,
                   r.alignment);
    }
    if (!inBounds(r.offset, r.length, size)) {
      return error(KILN_AT "range {}+{} exceeds space {} ({} bytes)", r.offset, r.length, r.space,
                   size);
    }
    return KILN_OK;
  }

  kiln_status_t checkCommand(const kiln_command& cmd) {
    if (cmd.opcode == KILN_OP_DISPATCH) {
      uint64_t workgroups = cmd.operands[KILN_DISPATCH_WORKGROUPS];
      if (workgroups == 0 || workgroups > kMaxWorkgroups) {
        return error(KILN_AT "workgroup count {} is outside 1..{}", workgroups, kMaxWorkgroups);
      }
      if (m_.dispatchCount + uint64_t{dispatches_} >= UINT32_MAX)
        return error(KILN_AT "too many dispatches");
      ++dispatches_;
      ++stageDispatches_;
      stageBindings_ += cmd.binding_count;
    }
    RangeReader reader(m_, cmd);
    Range r;
    while (reader.next(&r)) {
      if (kiln_status_t st = checkRange(r)) return st;
    }
    // A kernel's bindings may not overlap (except in place, see inPlace); a copy's ranges must
    // not overlap.
    uint64_t space;
    if (commandsConflict(m_, cmd, cmd, true, &space)) {
      return error(KILN_AT "two of its ranges overlap in space {} and one is written", space);
    }
    return KILN_OK;
  }

  // The commands in [begin, end) form one stage: no two may conflict.
  kiln_status_t checkStage(const uint8_t* begin, const uint8_t* end) {
    if (stageDispatches_ > m_.maxStageDispatches) m_.maxStageDispatches = stageDispatches_;
    if (stageBindings_ > m_.maxStageBindings) m_.maxStageBindings = stageBindings_;
    stageDispatches_ = stageBindings_ = 0;
    for (const uint8_t* p = begin; p < end;) {
      uint64_t atA = static_cast<uint64_t>(p - begin_);
      kiln_command a;
      decodeCommand(m_, &p, end, &a);
      for (const uint8_t* q = p; q < end;) {
        at_ = static_cast<uint64_t>(q - begin_);
        kiln_command b;
        decodeCommand(m_, &q, end, &b);
        uint64_t space;
        if (commandsConflict(m_, a, b, false, &space)) {
          return error(KILN_AT
                       "conflicts with the command at byte {} in the same stage (both "
                       "touch space {}, one writes)",
                       atA, space);
        }
      }
    }
    return KILN_OK;
  }

  kiln_module& m_;
  const kiln_function& fn_;
  Diag& diag_;
  const char* name_;
  const uint8_t* begin_ = nullptr;  // first byte of the function's stream
  uint64_t at_ = 0;                 // offset of the current command in the stream
  uint32_t dispatches_ = 0;
  uint32_t stageDispatches_ = 0;
  uint32_t stageBindings_ = 0;
};

uint32_t bindingCount(const void* user, uint64_t kernel) {
  const kiln_module& m = *static_cast<const kiln_module*>(user);
  return kernel < m.meta->kernel_count ? m.signatures[kernel].binding_count : UINT32_MAX;
}

}  // namespace

void readBinding(const uint8_t** pos, const uint8_t* end, uint64_t* space, uint64_t* offset) {
  kiln_varint_read(pos, end, space);  // the decoder has checked both varints
  kiln_varint_read(pos, end, offset);
}

kiln_decode_result decodeCommand(const kiln_module& m, const uint8_t** pos, const uint8_t* end,
                                 kiln_command* cmd) {
  return kiln_command_decode(pos, end, cmd, bindingCount, &m);
}

kiln_status_t checkCommands(kiln_module& m, Diag& diag) {
  m.dispatchCount = 0;
  m.maxStageDispatches = 0;
  m.maxStageBindings = 0;
  for (uint32_t f = 0; f < m.meta->function_count; ++f) {
    FunctionChecker checker(m, f, diag);
    if (kiln_status_t st = checker.run()) return st;
  }
  return KILN_OK;
}

}  // namespace kiln
