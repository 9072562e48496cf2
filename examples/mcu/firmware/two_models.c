/* Two models in one firmware: the same model compiled twice under the prefixes KILN_MODEL_A
 * and KILN_MODEL_B (two objects, two headers). Both kernel libraries go to one
 * kiln_load_options, the runtime picks each artifact's library by name, and each module runs
 * in its own context; both outputs must match the expected output (|d| <= 1e-4 * max(1, |e|)).
 * B's artifact offered only A's library must be refused (the name decides, not the order).
 * Exit status 0 = all of that held. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kiln/kiln.h"
#include KILN_MODEL_A_HEADER
#include KILN_MODEL_B_HEADER

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define A(name) CAT(KILN_MODEL_A, name)
#define B(name) CAT(KILN_MODEL_B, name)
#define A_DEF(name) CAT(KILN_MODEL_A_UPPER, name)
#define B_DEF(name) CAT(KILN_MODEL_B_UPPER, name)

extern const uint8_t test_input[], test_input_end[], test_expected[], test_expected_end[];

static uint8_t module_a[A_DEF(_MODULE_BYTES)] __attribute__((aligned(64)));
static uint8_t module_b[B_DEF(_MODULE_BYTES)] __attribute__((aligned(64)));
static uint8_t context_a[A_DEF(_CONTEXT_BYTES)] __attribute__((aligned(64)));
static uint8_t context_b[B_DEF(_CONTEXT_BYTES)] __attribute__((aligned(64)));
static float output_a[A_DEF(_OUTPUT0_BYTES) / 4] __attribute__((aligned(64)));
static float output_b[B_DEF(_OUTPUT0_BYTES) / 4] __attribute__((aligned(64)));

static int matches(const float* actual, size_t n) {
  const float* expected = (const float*)test_expected;
  for (size_t i = 0; i < n; ++i) {
    float d = actual[i] - expected[i], scale = expected[i] < 0 ? -expected[i] : expected[i];
    if (d < 0) d = -d;
    if (scale < 1.0f) scale = 1.0f;
    if (!(d <= 1e-4f * scale)) return 0;
  }
  return 1;
}

static int run(const void* artifact, size_t size, const kiln_load_options* options,
               uint8_t* module_memory, size_t module_size, uint8_t* context_memory,
               size_t context_size, float* output, size_t output_size) {
  kiln_module* module = NULL;
  kiln_context* context = NULL;
  if (kiln_module_load(artifact, size, options, module_memory, module_size, &module) != KILN_OK)
    return 1;
  if (kiln_context_init(module, NULL, context_memory, context_size, &context) != KILN_OK) return 2;
  kiln_input in = {test_input, (size_t)(test_input_end - test_input)};
  kiln_output out = {output, output_size};
  if (kiln_context_call(context, 0, &in, 1, &out, 1) != KILN_OK) return 3;
  return matches(output, output_size / sizeof(float)) ? 0 : 4;
}

int main(void) {
  const kiln_kernel_library* libraries[2] = {&A(_kernels), &B(_kernels)};
  kiln_load_options options;
  kiln_load_options_init(&options);
  options.kernel_libraries = libraries;
  options.kernel_library_count = 2;
  int a = run(A(_artifact), A_DEF(_ARTIFACT_BYTES), &options, module_a, sizeof module_a,
              context_a, sizeof context_a, output_a, sizeof output_a);
  int b = run(B(_artifact), B_DEF(_ARTIFACT_BYTES), &options, module_b, sizeof module_b,
              context_b, sizeof context_b, output_b, sizeof output_b);
  printf("two models: %s %d, %s %d (0 = ran and matched)\n", KILN_MODEL_A_NAME, a,
         KILN_MODEL_B_NAME, b);
  if (a || b) return 10 + a * 4 + b;
  options.kernel_library_count = 1; /* only A's library */
  kiln_module* wrong = NULL;
  if (kiln_module_load(B(_artifact), B_DEF(_ARTIFACT_BYTES), &options, module_b, sizeof module_b,
                       &wrong) == KILN_OK) {
    printf("%s loaded with %s's kernel library\n", KILN_MODEL_B_NAME, KILN_MODEL_A_NAME);
    return 30;
  }
  printf("result: ok\n");
  return 0;
}
