/* Example firmware: one model compiled by `kiln compile --output-format=static-lib`, run
 * bare-metal by the runtime core. The model's header is included through KILN_MODEL_HEADER
 * and its symbol prefix is KILN_MODEL / KILN_MODEL_UPPER (set by run_firmware.py).
 *
 * 1. Memory comes from the header's sizes, and the runtime must agree with them exactly.
 * 2. Stack: the runtime's own use is measured by painting the stack around load, context init
 *    and a call whose kernels are all replaced by a probe; the real call is painted too. Each
 *    must stay within the header's bounds: load and init within LOAD_STACK_BYTES, the call
 *    with probes within RUNTIME_STACK_BYTES, everything with real kernels within STACK_BYTES.
 * 3. The output must match the expected output (float: |d| <= 1e-4 * max(1, |expected|);
 *    with KILN_COMPARE_EXACT, byte for byte).
 * 4. Instructions per inference from the board's counter, calibrated with a known loop.
 * Results are printed through semihosting; main's return value is QEMU's exit status. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "board.h"
#include "kiln/kiln.h"
#include KILN_MODEL_HEADER

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define SYM(name) CAT(KILN_MODEL, name)
#define DEF(name) CAT(KILN_MODEL_UPPER, name)

#if DEF(_INPUT_COUNT) != 1 || DEF(_OUTPUT_COUNT) != 1
#error "the example firmware runs models with one input and one output"
#endif

#define PAINT_BYTES 8192u /* below the caller's frame; the linker scripts reserve more */
#define PAINT_WORD 0xC5C5C5C5u
#define MAX_KERNELS 256u

extern const uint8_t test_input[], test_input_end[], test_expected[], test_expected_end[];

static uint8_t module_memory[DEF(_MODULE_BYTES)] __attribute__((aligned(64)));
static uint8_t context_memory[DEF(_CONTEXT_BYTES)] __attribute__((aligned(64)));
static uint8_t output[DEF(_OUTPUT0_BYTES)] __attribute__((aligned(64)));

static kiln_module* module;
static kiln_context* context;
static kiln_load_options options;
static const kiln_kernel_library* libraries[1];

/* --- stack painting ------------------------------------------------------------------------ */

static uintptr_t probe_lowest_sp;

/* Stands in for every kernel while the runtime's own stack use is measured. */
static void probe_kernel(void* const* bindings, uint32_t id, uint32_t count) {
  (void)bindings, (void)id, (void)count;
  uintptr_t sp = board_stack_pointer();
  if (sp < probe_lowest_sp) probe_lowest_sp = sp;
}

/* Paints PAINT_BYTES below this frame, runs `step`, and returns how many bytes below the
 * caller's stack pointer were written. No interrupt may run meanwhile. */
static __attribute__((noinline)) uint32_t stack_use(int (*step)(void), int* status) {
  uintptr_t top = board_stack_pointer() & ~(uintptr_t)3;
  volatile uint32_t* low = (volatile uint32_t*)(top - PAINT_BYTES);
  for (volatile uint32_t* p = low; p < (volatile uint32_t*)top; ++p) *p = PAINT_WORD;
  *status = step();
  volatile uint32_t* p = low;
  while (p < (volatile uint32_t*)top && *p == PAINT_WORD) ++p;
  return (uint32_t)(top - (uintptr_t)p);
}

static kiln_input input_of(void) {
  kiln_input in = {test_input, (size_t)(test_input_end - test_input)};
  return in;
}

static int step_load(void) {
  return kiln_module_load(SYM(_artifact), DEF(_ARTIFACT_BYTES), &options, module_memory,
                          sizeof module_memory, &module) == KILN_OK ? 0 : 1;
}
static int step_init(void) {
  return kiln_context_init(module, NULL, context_memory, sizeof context_memory, &context) ==
                 KILN_OK ? 0 : 1;
}
static int step_call(void) {
  kiln_input in = input_of();
  kiln_output out = {output, sizeof output};
  return kiln_context_call(context, 0, &in, 1, &out, 1) == KILN_OK ? 0 : 1;
}

/* --- comparison ---------------------------------------------------------------------------- */

/* Largest |actual - expected| / max(1, |expected|), in units of 1e-9. */
static uint32_t float_error_e9(const float* actual, const float* expected, size_t n) {
  float worst = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    float d = actual[i] - expected[i];
    if (d < 0) d = -d;
    float scale = expected[i] < 0 ? -expected[i] : expected[i];
    if (scale < 1.0f) scale = 1.0f;
    if (!(d / scale <= worst)) worst = d / scale; /* NaN makes it huge below */
  }
  if (!(worst < 4.0f)) return 0xFFFFFFFFu;
  return (uint32_t)(worst * 1e9f);
}

int main(void) {
  int status = 0;
  printf("kiln-mcu model=%s\n", KILN_MODEL_NAME);
  libraries[0] = &SYM(_kernels);
  kiln_load_options_init(&options);
  options.kernel_libraries = libraries;
  options.kernel_library_count = 1;
#if DEF(_CONSTANTS_EXTERNAL)
  options.external_constants = SYM(_constants);
  options.external_constants_size = DEF(_CONSTANTS_BYTES);
#endif
  if ((size_t)(test_input_end - test_input) != DEF(_INPUT0_BYTES)) return 2;
  if ((size_t)(test_expected_end - test_expected) != DEF(_OUTPUT0_BYTES)) return 3;

  /* 1. The header's sizes are the runtime's. */
  if (kiln_module_memory_size() != DEF(_MODULE_BYTES)) {
    printf("module bytes: runtime %u, header %u\n", (unsigned)kiln_module_memory_size(),
           (unsigned)DEF(_MODULE_BYTES));
    return 10;
  }

  /* 2. The runtime's own stack: kernels replaced by the probe. */
  static kiln_kernel_fn probes[MAX_KERNELS];
  static kiln_kernel_library probe_library;
  probe_library = SYM(_kernels);
  if (probe_library.kernel_count > MAX_KERNELS) return 11;
  for (uint32_t k = 0; k < probe_library.kernel_count; ++k) probes[k] = probe_kernel;
  probe_library.kernels = probes;
  libraries[0] = &probe_library;
  uint32_t load_use = stack_use(step_load, &status);
  if (status) return 12;
  if (kiln_context_memory_size(module) != DEF(_CONTEXT_BYTES)) {
    printf("context bytes: runtime %u, header %u\n", (unsigned)kiln_context_memory_size(module),
           (unsigned)DEF(_CONTEXT_BYTES));
    return 13;
  }
  uint32_t init_use = stack_use(step_init, &status);
  if (status) return 14;
  uintptr_t call_top = board_stack_pointer();
  probe_lowest_sp = call_top;
  uint32_t call_use = stack_use(step_call, &status);
  if (status) return 15;
  uint32_t probe_depth = (uint32_t)(call_top - probe_lowest_sp);
  if (probe_depth > call_use) call_use = probe_depth;
  uint32_t setup_use = load_use > init_use ? load_use : init_use;
  printf("runtime stack: load %u, init %u (bound %u); call to kernel entry %u (probe "
         "sp %u below; bound %u)\n",
         (unsigned)load_use, (unsigned)init_use, (unsigned)DEF(_LOAD_STACK_BYTES),
         (unsigned)call_use, (unsigned)probe_depth,
         (unsigned)DEF(_RUNTIME_STACK_BYTES));

  /* The real kernels: load, init, call; painted the same way. */
  libraries[0] = &SYM(_kernels);
  uint32_t real_load = stack_use(step_load, &status);
  if (status) return 16;
  uint32_t real_init = stack_use(step_init, &status);
  if (status) return 17;
  uint32_t real_call = stack_use(step_call, &status);
  if (status) return 18;
  uint32_t real_use = real_load > real_init ? real_load : real_init;
  if (real_call > real_use) real_use = real_call;
  printf("stack: %u used (call %u), bound %u = max(load %u, kernels %u + runtime %u)\n",
         (unsigned)real_use, (unsigned)real_call, (unsigned)DEF(_STACK_BYTES),
         (unsigned)DEF(_LOAD_STACK_BYTES), (unsigned)DEF(_KERNEL_STACK_BYTES),
         (unsigned)DEF(_RUNTIME_STACK_BYTES));
  printf("ram overhead: module %u + context %u bytes beyond the arena (%u)\n",
         (unsigned)DEF(_MODULE_BYTES), (unsigned)(DEF(_CONTEXT_BYTES) - DEF(_ARENA_BYTES)),
         (unsigned)DEF(_ARENA_BYTES));

  /* 3. Output. */
#if defined(KILN_COMPARE_EXACT)
  int mismatch = memcmp(output, test_expected, sizeof output) != 0;
  printf("output: %s (exact)\n", mismatch ? "MISMATCH" : "match");
#else
  uint32_t error_e9 = float_error_e9((const float*)output, (const float*)test_expected,
                                     sizeof output / sizeof(float));
  int mismatch = error_e9 > 100000u; /* 1e-4 */
  printf("output: max relative-or-absolute error %u e-9 (limit 100000)\n", (unsigned)error_e9);
#endif

  /* 4. Instructions per inference: calibrate the counter, then two timed calls. */
  board_counter_start();
  const uint32_t spins = 1000000u;
  uint64_t c0 = board_counter_read();
  board_spin(spins);
  uint64_t c1 = board_counter_read();
  uint64_t empty0 = board_counter_read();
  uint64_t empty1 = board_counter_read();
  uint64_t spin_units = (c1 - c0) - (empty1 - empty0);
  /* instructions per 1000 counter units */
  uint64_t per_k_units = (2ull * spins * 1000ull + spin_units / 2) / spin_units;
  uint64_t counts[2];
  for (int run = 0; run < 2; ++run) {
    uint64_t t0 = board_counter_read();
    if (step_call() != 0) return 19;
    uint64_t t1 = board_counter_read();
    counts[run] = ((t1 - t0) - (empty1 - empty0)) * per_k_units / 1000ull;
  }
  printf("instructions per inference: %lu (second run %lu; %lu per 1000 counter units)\n",
         (unsigned long)counts[0], (unsigned long)counts[1], (unsigned long)per_k_units);

  if (mismatch) return 20;
  if (setup_use > DEF(_LOAD_STACK_BYTES) || call_use > DEF(_RUNTIME_STACK_BYTES)) return 21;
  if (real_use > DEF(_STACK_BYTES)) return 22;
  if (DEF(_MODULE_BYTES) + DEF(_CONTEXT_BYTES) - DEF(_ARENA_BYTES) > 512u) return 23;
  printf("result: ok\n");
  return 0;
}
