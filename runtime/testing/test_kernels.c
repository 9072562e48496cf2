/* Test kernels written by hand against the kernel ABI (kernel_abi.h). The test build compiles
 * this file twice: into a position-independent ELF shared object (-nostdlib, lld, only the
 * query symbol exported) that artifacts embed, and into the test programs as the static kernel
 * library "kiln_test_kernels". All tensors are 16 float32 values (64 bytes).
 *   0 add        out = a + b                 bindings: a R, b R, out W
 *   1 scale_bias y = x * w + bias[0]         bindings: x R, w R, bias R (4 B), y W
 *   2 relu       x = max(x, 0) in place      bindings: x RW
 *   3 sum        out[0] = sum(x) (workgroup 0 only)  bindings: x R, out W (4 B) */
#include "kiln/format/kernel_abi.h"

#define N 16u

static void range(uint32_t wg, uint32_t count, uint32_t* begin, uint32_t* end) {
  uint32_t chunk = (N + count - 1) / count;
  *begin = wg * chunk < N ? wg * chunk : N;
  *end = *begin + chunk < N ? *begin + chunk : N;
}

static void add(void* const* b, uint32_t wg, uint32_t count) {
  const float* x = (const float*)b[0];
  const float* y = (const float*)b[1];
  float* out = (float*)b[2];
  uint32_t i, e;
  for (range(wg, count, &i, &e); i < e; ++i) out[i] = x[i] + y[i];
}

static void scale_bias(void* const* b, uint32_t wg, uint32_t count) {
  const float* x = (const float*)b[0];
  const float* w = (const float*)b[1];
  float bias = *(const float*)b[2];
  float* y = (float*)b[3];
  uint32_t i, e;
  for (range(wg, count, &i, &e); i < e; ++i) y[i] = x[i] * w[i] + bias;
}

static void relu(void* const* b, uint32_t wg, uint32_t count) {
  float* x = (float*)b[0];
  uint32_t i, e;
  for (range(wg, count, &i, &e); i < e; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

static void sum(void* const* b, uint32_t wg, uint32_t count) {
  (void)count;
  if (wg != 0) return;
  const float* x = (const float*)b[0];
  float s = 0.0f;
  for (uint32_t i = 0; i < N; ++i) s += x[i];
  *(float*)b[1] = s;
}

static const kiln_kernel_fn kKernels[] = {add, scale_bias, relu, sum};

/* A build with another ABI version tests the loader's refusal. */
#ifdef KILN_KERNEL_ABI_VERSION_OVERRIDE
#define KILN_TEST_ABI KILN_KERNEL_ABI_VERSION_OVERRIDE
#else
#define KILN_TEST_ABI KILN_KERNEL_ABI_VERSION
#endif

static const kiln_kernel_library kLibrary = {KILN_TEST_ABI, 4, kKernels, "kiln_test_kernels"};

#ifdef KILN_TEST_KERNELS_STATIC
/* Linked into the test programs: the application hands this struct to the runtime. */
const kiln_kernel_library* kiln_test_kernels_static(void) { return &kLibrary; }
#else
/* Exported from the shared object: the only symbol the loader looks up. */
const kiln_kernel_library* kiln_kernel_library_query(void) { return &kLibrary; }
#endif
