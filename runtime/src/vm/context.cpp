// Context creation in caller memory, its size (which includes the arena), the trace hook, and
// the inline executor.
#include "vm/context.h"

#include "base/diag.h"
#include "loader/module.h"

namespace {

constexpr size_t alignUp(size_t x, size_t a) { return (x + a - 1) / a * a; }

size_t stageBytes(const kiln_module* m) {
  return m->maxStageDispatches * sizeof(kiln_dispatch) + m->maxStageBindings * sizeof(void*);
}

}  // namespace

namespace kiln {

void runStageInline(const kiln_dispatch* dispatches, uint32_t count) {
  for (uint32_t d = 0; d < count; ++d) {
    const kiln_dispatch& dispatch = dispatches[d];
    for (uint32_t wg = 0; wg < dispatch.workgroup_count; ++wg) {
      dispatch.kernel(dispatch.bindings, wg, dispatch.workgroup_count);
    }
  }
}

}  // namespace kiln

extern "C" size_t kiln_context_memory_size(const kiln_module* m) {
  if (!m) return 0;
  size_t head = alignUp(sizeof(kiln_context) + stageBytes(m), KILN_ALIGNMENT);
  return head + static_cast<size_t>(m->meta->arena_size);
}

extern "C" kiln_status_t kiln_context_init(const kiln_module* m, const kiln_executor* executor,
                                           void* memory, size_t memory_size,
                                           kiln_context** out_context) {
  if (out_context) *out_context = nullptr;
  if (!m || !memory || !out_context || !m->library) return KILN_ERROR_INVALID_ARGUMENT;
  if (reinterpret_cast<uintptr_t>(memory) % KILN_ALIGNMENT != 0 ||
      memory_size < kiln_context_memory_size(m)) {
    return KILN_ERROR_INVALID_ARGUMENT;
  }
  uint8_t* bytes = static_cast<uint8_t*>(memory);
  kiln_context* c = reinterpret_cast<kiln_context*>(bytes);
  *c = kiln_context{};
  c->module = m;
  if (executor) c->executor = *executor;
  c->stage = reinterpret_cast<kiln_dispatch*>(bytes + sizeof(kiln_context));
  c->stageBindings = reinterpret_cast<void**>(c->stage + m->maxStageDispatches);
  c->arena = bytes + alignUp(sizeof(kiln_context) + stageBytes(m), KILN_ALIGNMENT);
  *out_context = c;
  return KILN_OK;
}

extern "C" void kiln_context_set_trace(kiln_context* c, kiln_trace_fn trace, kiln_clock_fn clock,
                                       void* user) {
  if (!c) return;
  c->trace = clock ? trace : nullptr;
  c->clock = clock;
  c->traceUser = user;
}

extern "C" const char* kiln_context_error(const kiln_context* c) { return c ? c->error : ""; }
