// kiln_context_call: checks the caller's buffers against the function's inputs and outputs,
// then walks the function's (already validated) command stream. Dispatches are collected into
// the context's stage buffer and handed to the executor at each BARRIER/RETURN; FILL and COPY
// run at once (the stage rule makes every command of a stage independent of the others). The
// switch over opcodes is generated from commands.def.
#include "base/diag.h"
#include "kiln/format/commands.h"
#include "loader/module.h"
#include "vm/context.h"

namespace kiln {
namespace {

bool overlaps(const void* a, size_t an, const void* b, size_t bn) {
  uintptr_t x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return an != 0 && bn != 0 && x < y + bn && y < x + an;
}

class Interpreter {
 public:
  Interpreter(kiln_context& c, const kiln_function& fn, const kiln_input* inputs,
              const kiln_output* outputs)
      : c_(c), m_(*c.module), fn_(fn), inputs_(inputs), outputs_(outputs) {}

  void run() {
    const uint8_t* p = m_.commands + fn_.commands_offset;
    const uint8_t* end = p + fn_.commands_size;
    dispatchIndex_ = fn_.first_dispatch;
    while (!done_) {
      kiln_command cmd;
      decodeCommand(m_, &p, end, &cmd);
      switch (cmd.opcode) {
#define KILN_COMMAND_BEGIN(NAME, name, opcode, mnemonic) \
  case KILN_OP_##NAME:                                   \
    op_##name(cmd);                                      \
    break;
#include "kiln/format/commands.def"
        default:
          return;  // unreachable: validation decoded every command
      }
    }
  }

 private:
  uint8_t* space(uint64_t s) const {
    if (s == KILN_SPACE_ARENA) return c_.arena;
    if (s == KILN_SPACE_CONSTANTS) return const_cast<uint8_t*>(m_.constants);
    uint64_t i = (s - 2) / 2;
    return s % 2 ? static_cast<uint8_t*>(outputs_[i].data)
                 : static_cast<uint8_t*>(const_cast<void*>(inputs_[i].data));
  }

  void op_dispatch(const kiln_command& cmd) {
    uint32_t kernel = static_cast<uint32_t>(cmd.operands[KILN_DISPATCH_KERNEL]);
    kiln_dispatch& d = c_.stage[stageCount_++];
    void** bindings = c_.stageBindings + bindingsUsed_;
    bindingsUsed_ += cmd.binding_count;
    const uint8_t* p = cmd.bindings;
    const uint8_t* end = m_.commands + m_.commandsSize;
    for (uint32_t b = 0; b < cmd.binding_count; ++b) {
      uint64_t s = 0, offset = 0;
      readBinding(&p, end, &s, &offset);
      bindings[b] = space(s) + offset;
    }
    d.kernel = m_.library->kernels[kernel];
    d.bindings = bindings;
    d.workgroup_count = static_cast<uint32_t>(cmd.operands[KILN_DISPATCH_WORKGROUPS]);
    d.kernel_index = kernel;
    d.dispatch_index = dispatchIndex_++;
    if (c_.trace) flushStage();  // traced: one dispatch per stage, timed
  }

  void op_fill(const kiln_command& cmd) {
    __builtin_memset(space(cmd.operands[KILN_FILL_SPACE]) + cmd.operands[KILN_FILL_OFFSET],
                     static_cast<int>(cmd.operands[KILN_FILL_VALUE]),
                     static_cast<size_t>(cmd.operands[KILN_FILL_LENGTH]));
  }

  void op_copy(const kiln_command& cmd) {
    __builtin_memcpy(space(cmd.operands[KILN_COPY_DST_SPACE]) + cmd.operands[KILN_COPY_DST_OFFSET],
                     space(cmd.operands[KILN_COPY_SRC_SPACE]) + cmd.operands[KILN_COPY_SRC_OFFSET],
                     static_cast<size_t>(cmd.operands[KILN_COPY_LENGTH]));
  }

  void op_barrier(const kiln_command&) { flushStage(); }

  void op_return(const kiln_command&) {
    flushStage();
    done_ = true;
  }

  void flushStage() {
    if (stageCount_ == 0) return;
    uint64_t start = c_.trace ? c_.clock(c_.traceUser) : 0;
    if (c_.executor.run_stage) {
      c_.executor.run_stage(c_.executor.self, c_.stage, stageCount_);
    } else {
      runStageInline(c_.stage, stageCount_);
    }
    if (c_.trace) {
      uint64_t end = c_.clock(c_.traceUser);
      c_.trace(c_.traceUser, c_.stage[0].dispatch_index, c_.stage[0].kernel_index, start, end);
    }
    stageCount_ = 0;
    bindingsUsed_ = 0;
  }

  kiln_context& c_;
  const kiln_module& m_;
  const kiln_function& fn_;
  const kiln_input* inputs_;
  const kiln_output* outputs_;
  uint32_t stageCount_ = 0;
  uint32_t bindingsUsed_ = 0;
  uint32_t dispatchIndex_ = 0;
  bool done_ = false;
};

kiln_status_t checkBuffer(const kiln_tensor& t, const char* tensorName, const void* data,
                          size_t size, const char* what, uint32_t index, Diag& diag) {
  if ((!data && t.byte_size != 0) || size < t.byte_size) {
    return diag.fail(KILN_ERROR_INVALID_ARGUMENT, "{} {} '{}' needs a buffer of {} bytes, got {}",
                     what, index, tensorName, t.byte_size, data ? size : size_t{0});
  }
  if ((reinterpret_cast<uintptr_t>(data) & (t.alignment - 1u)) != 0) {  // a power of two
    return diag.fail(KILN_ERROR_INVALID_ARGUMENT, "{} {} '{}' buffer must be {}-byte aligned", what,
                     index, tensorName, t.alignment);
  }
  return KILN_OK;
}

kiln_status_t checkBuffers(const kiln_module& m, const kiln_function& fn, const kiln_input* inputs,
                           uint32_t inputCount, const kiln_output* outputs, uint32_t outputCount,
                           Diag& diag) {
  const char* fnName = stringAt(m.strings, fn.name);
  if (inputCount != fn.input_count || outputCount != fn.output_count || (inputCount && !inputs) ||
      (outputCount && !outputs)) {
    return diag.fail(KILN_ERROR_INVALID_ARGUMENT,
                     "function '{}' takes {} inputs and {} outputs, the call passed {} and {}",
                     fnName, fn.input_count, fn.output_count, inputCount, outputCount);
  }
  const kiln_tensor* t = m.tensors + fn.first_tensor;
  for (uint32_t i = 0; i < inputCount; ++i) {
    if (kiln_status_t st = checkBuffer(t[i], stringAt(m.strings, t[i].name), inputs[i].data,
                                       inputs[i].size, "input", i, diag)) {
      return st;
    }
  }
  for (uint32_t o = 0; o < outputCount; ++o) {
    const kiln_tensor& ot = t[inputCount + o];
    if (kiln_status_t st = checkBuffer(ot, stringAt(m.strings, ot.name), outputs[o].data,
                                       outputs[o].size, "output", o, diag)) {
      return st;
    }
    for (uint32_t i = 0; i < inputCount; ++i) {
      if (overlaps(outputs[o].data, ot.byte_size, inputs[i].data, t[i].byte_size)) {
        return diag.fail(KILN_ERROR_INVALID_ARGUMENT, "output {} buffer overlaps input {}", o, i);
      }
    }
    for (uint32_t p = 0; p < o; ++p) {
      if (overlaps(outputs[o].data, ot.byte_size, outputs[p].data, t[inputCount + p].byte_size)) {
        return diag.fail(KILN_ERROR_INVALID_ARGUMENT, "output {} buffer overlaps output {}", o, p);
      }
    }
  }
  return KILN_OK;
}

}  // namespace
}  // namespace kiln

extern "C" kiln_status_t kiln_context_call(kiln_context* c, uint32_t function,
                                           const kiln_input* inputs, uint32_t input_count,
                                           const kiln_output* outputs, uint32_t output_count) {
  if (!c) return KILN_ERROR_INVALID_ARGUMENT;
  kiln::Diag diag(c->error, sizeof c->error);
  const kiln_module& m = *c->module;
  if (function >= m.meta->function_count) {
    return diag.fail(KILN_ERROR_NOT_FOUND, "function index {} out of range ({} functions)",
                     function, m.meta->function_count);
  }
  const kiln_function& fn = m.functions[function];
  if (kiln_status_t st =
          kiln::checkBuffers(m, fn, inputs, input_count, outputs, output_count, diag)) {
    return st;
  }
  kiln::Interpreter(*c, fn, inputs, outputs).run();
  return KILN_OK;
}

extern "C" kiln_status_t kiln_context_call_named(kiln_context* c, const char* function,
                                                 const kiln_input* inputs, uint32_t input_count,
                                                 const kiln_output* outputs,
                                                 uint32_t output_count) {
  if (!c || !function) return KILN_ERROR_INVALID_ARGUMENT;
  uint32_t index = 0;
  if (kiln_module_find_function(c->module, function, &index) != KILN_OK) {
    kiln::Diag diag(c->error, sizeof c->error);
    return diag.fail(KILN_ERROR_NOT_FOUND, "the module has no function '{}'", function);
  }
  return kiln_context_call(c, index, inputs, input_count, outputs, output_count);
}
