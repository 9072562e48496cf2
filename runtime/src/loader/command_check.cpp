// Validates every entry function's command stream once, at load: each command decodes, each
// memory range (binding, fill, copy) lies inside its space with the alignment and access its
// kernel signature states, no two commands of one stage (between barriers) touch the same
// bytes when one of them writes, the stream ends with RETURN. It also counts the dispatches
// and the largest stage, which size a context. After this the interpreter trusts the stream.
#include "loader/module.h"

#include "kiln/format/commands.h"

namespace kiln {
namespace {

// Largest workgroup count of one dispatch (bounds the executor's work per command).
constexpr uint64_t kMaxWorkgroups = 1u << 16;

struct Range {
  uint64_t space;
  uint64_t offset;
  uint64_t length;
  bool write;
};

uint32_t bindingCount(const void* user, uint64_t kernel) {
  const kiln_module& m = *static_cast<const kiln_module*>(user);
  return kernel < m.meta->kernel_count ? m.signatures[kernel].binding_count : UINT32_MAX;
}

// Calls f(range, alignment) for each memory range `cmd` touches; stops at the first nonzero
// status f returns. The command has been decoded, so its varints are well formed.
template <class F>
kiln_status_t forEachRange(const kiln_module& m, const kiln_command& cmd, F&& f) {
  switch (cmd.opcode) {
    case KILN_OP_DISPATCH: {
      const kiln_kernel_signature& sig = m.signatures[cmd.operands[KILN_DISPATCH_KERNEL]];
      const uint8_t* p = cmd.bindings;
      const uint8_t* end = m.commands + m.commandsSize;
      for (uint32_t b = 0; b < cmd.binding_count; ++b) {
        const kiln_binding_signature& bs = m.bindingSigs[sig.first_binding + b];
        Range r{};
        kiln_varint_read(&p, end, &r.space);
        kiln_varint_read(&p, end, &r.offset);
        r.length = bs.length;
        r.write = (bs.access & KILN_ACCESS_WRITE) != 0;
        if (kiln_status_t st = f(r, bs.alignment)) return st;
      }
      return KILN_OK;
    }
    case KILN_OP_FILL:
      return f(Range{cmd.operands[KILN_FILL_SPACE], cmd.operands[KILN_FILL_OFFSET],
                     cmd.operands[KILN_FILL_LENGTH], true},
               1u);
    case KILN_OP_COPY:
      if (kiln_status_t st = f(Range{cmd.operands[KILN_COPY_SRC_SPACE],
                                     cmd.operands[KILN_COPY_SRC_OFFSET],
                                     cmd.operands[KILN_COPY_LENGTH], false},
                               1u)) {
        return st;
      }
      return f(Range{cmd.operands[KILN_COPY_DST_SPACE], cmd.operands[KILN_COPY_DST_OFFSET],
                     cmd.operands[KILN_COPY_LENGTH], true},
               1u);
    default: return KILN_OK;
  }
}

bool conflict(const Range& a, const Range& b) {
  return (a.write || b.write) && a.space == b.space && a.length != 0 && b.length != 0 &&
         a.offset < b.offset + b.length && b.offset < a.offset + a.length;
}

class FunctionChecker {
 public:
  FunctionChecker(kiln_module& m, uint32_t index, Diag& diag)
      : m_(m), fn_(m.functions[index]), diag_(diag) {
    name_ = stringAt(m.strings, fn_.name);
  }

  kiln_status_t run() {
    const uint8_t* p = m_.commands + fn_.commands_offset;
    const uint8_t* end = p + fn_.commands_size;
    begin_ = p;
    const uint8_t* stageBegin = p;
    bool returned = false;
    while (p < end) {
      at_ = static_cast<uint64_t>(p - begin_);
      if (returned) return error().s("command after RETURN");
      const uint8_t* start = p;
      kiln_command cmd;
      kiln_decode_result r = kiln_command_decode(&p, end, &cmd, bindingCount, &m_);
      if (r != KILN_DECODE_OK) return decodeError(r, cmd);
      if (kiln_status_t st = checkCommand(cmd)) return st;
      if (cmd.opcode == KILN_OP_BARRIER || cmd.opcode == KILN_OP_RETURN) {
        if (kiln_status_t st = checkStage(stageBegin, start)) return st;
        stageBegin = p;
        returned = cmd.opcode == KILN_OP_RETURN;
      }
    }
    at_ = fn_.commands_size;
    if (!returned) return error().s("stream does not end with RETURN");
    if (fn_.first_dispatch != m_.dispatchCount || fn_.dispatch_count != dispatches_) {
      return error().s("META says the function has dispatches ").u(fn_.first_dispatch).s("+").u(fn_.dispatch_count).s(", the stream has ").u(m_.dispatchCount).s("+").u(dispatches_);
    }
    m_.dispatchCount += dispatches_;
    return KILN_OK;
  }

 private:
  Diag& error() {
    return diag_.fail(KILN_ERROR_MALFORMED).s("function '").s(name_).s("', command at byte ").u(at_).s(": ");
  }

  kiln_status_t decodeError(kiln_decode_result r, const kiln_command& cmd) {
    switch (r) {
      case KILN_DECODE_TRUNCATED: return error().s("truncated");
      case KILN_DECODE_BAD_OPCODE: return error().s("unknown opcode ").u(cmd.opcode);
      case KILN_DECODE_BAD_VARINT: return error().s("malformed varint operand");
      default:
        return error().s("kernel ").u(cmd.operands[0]).s(" does not exist (").u(m_.meta->kernel_count).s(" kernels)");
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
    const kiln_tensor& t =
        m_.tensors[fn_.first_tensor + (output ? fn_.input_count : 0) + index];
    *size = t.byte_size, *alignment = t.alignment, *writable = output;
    return true;
  }

  kiln_status_t checkRange(const Range& r, uint32_t alignment) {
    uint64_t size;
    uint32_t baseAlignment;
    bool writable;
    if (!spaceInfo(r.space, &size, &baseAlignment, &writable)) {
      return error().s("memory space ").u(r.space).s(" does not exist in this function");
    }
    if (r.write && !writable) {
      return error().s("writes to read-only memory space ").u(r.space);
    }
    if (r.offset % alignment != 0 || baseAlignment < alignment) {
      return error().s("offset ").u(r.offset).s(" in space ").u(r.space).s(" is not ").u(alignment).s("-byte aligned");
    }
    if (!inBounds(r.offset, r.length, size)) {
      return error().s("range ").u(r.offset).s("+").u(r.length).s(" exceeds space ").u(r.space).s(" (").u(size).s(" bytes)");
    }
    return KILN_OK;
  }

  kiln_status_t checkCommand(const kiln_command& cmd) {
    if (cmd.opcode == KILN_OP_DISPATCH) {
      uint64_t workgroups = cmd.operands[KILN_DISPATCH_WORKGROUPS];
      if (workgroups == 0 || workgroups > kMaxWorkgroups) {
        return error().s("workgroup count ").u(workgroups).s(" is outside 1..").u(kMaxWorkgroups);
      }
      ++dispatches_;
      ++stageDispatches_;
      stageBindings_ += cmd.binding_count;
      if (m_.dispatchCount + uint64_t{dispatches_} >= UINT32_MAX) return error().s("too many dispatches");
    }
    kiln_status_t st =
        forEachRange(m_, cmd, [this](const Range& r, uint32_t a) { return checkRange(r, a); });
    if (st != KILN_OK) return st;
    // Within one command: a written range may not overlap another range of the command
    // (kernels assume their bindings do not alias).
    uint32_t ia = 0;
    return forEachRange(m_, cmd, [&](const Range& a, uint32_t) {
      uint32_t ib = 0;
      kiln_status_t s = forEachRange(m_, cmd, [&](const Range& b, uint32_t) -> kiln_status_t {
        if (ib++ > ia && conflict(a, b)) {
          return error().s("two of its ranges overlap in space ").u(a.space).s(" and one is written");
        }
        return KILN_OK;
      });
      ++ia;
      return s;
    });
  }

  // The commands in [begin, end) form one stage: no two may conflict.
  kiln_status_t checkStage(const uint8_t* begin, const uint8_t* end) {
    if (stageDispatches_ > m_.maxStageDispatches) m_.maxStageDispatches = stageDispatches_;
    if (stageBindings_ > m_.maxStageBindings) m_.maxStageBindings = stageBindings_;
    stageDispatches_ = stageBindings_ = 0;
    for (const uint8_t* p = begin; p < end;) {
      uint64_t atA = static_cast<uint64_t>(p - begin_);
      kiln_command a;
      kiln_command_decode(&p, end, &a, bindingCount, &m_);
      for (const uint8_t* q = p; q < end;) {
        uint64_t atB = static_cast<uint64_t>(q - begin_);
        kiln_command b;
        kiln_command_decode(&q, end, &b, bindingCount, &m_);
        kiln_status_t st = forEachRange(m_, a, [&](const Range& ra, uint32_t) {
          return forEachRange(m_, b, [&](const Range& rb, uint32_t) -> kiln_status_t {
            if (!conflict(ra, rb)) return KILN_OK;
            at_ = atB;
            return error().s("conflicts with the command at byte ").u(atA).s(" in the same stage (both touch space ").u(ra.space).s(", one writes)");
          });
        });
        if (st != KILN_OK) return st;
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

}  // namespace

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
