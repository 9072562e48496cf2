// The execution context: the only mutable state of a run. It lives in caller memory laid out as
//   [kiln_context][stage dispatch records][stage binding pointers][pad to 64][arena]
// so a context never allocates. One context runs one call at a time.
#ifndef KILN_RUNTIME_VM_CONTEXT_H_
#define KILN_RUNTIME_VM_CONTEXT_H_

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

#ifdef KILN_NO_STATUS_MESSAGES
#define KILN_CONTEXT_ERROR_CAPACITY 1
#else
#define KILN_CONTEXT_ERROR_CAPACITY 192
#endif

struct kiln_context {
  const kiln_module* module;
  kiln_executor executor;  // run_stage NULL = inline
  kiln_trace_fn trace;
  kiln_clock_fn clock;
  void* traceUser;
  kiln_dispatch* stage;  // maxStageDispatches records
  void** stageBindings;  // maxStageBindings pointers
  uint8_t* arena;        // 64-byte aligned, arena_size bytes
  char error[KILN_CONTEXT_ERROR_CAPACITY];
};

namespace kiln {

// Runs the dispatches of one stage on the calling thread.
void runStageInline(const kiln_dispatch* dispatches, uint32_t count);

}  // namespace kiln

#endif  // KILN_RUNTIME_VM_CONTEXT_H_
