/* The runtime core on a Cortex-M33 (QEMU mps2-an505): loads the standard test artifact
 * straight from read-only memory with the test kernels linked in as a static library (no
 * ELF, no allocation, no message strings), runs "main" and compares the outputs with the
 * host's hand-computed reference; also checks that a corrupt copy is refused. The exit status
 * says what failed (0 = all good). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kiln/format/artifact.h"
#include "kiln/kiln.h"

extern const uint8_t kiln_artifact[], kiln_artifact_end[];
extern const float kiln_expected[33]; /* out[16], total, twice[16] */
const kiln_kernel_library* kiln_test_kernels_static(void);

static uint8_t module_memory[256] __attribute__((aligned(64)));
static uint8_t context_memory[2048] __attribute__((aligned(64)));
static uint8_t corrupt[8192] __attribute__((aligned(64)));

int main(void) {
  size_t size = (size_t)(kiln_artifact_end - kiln_artifact);
  const kiln_kernel_library* libraries[1] = {kiln_test_kernels_static()};
  kiln_load_options options;
  kiln_load_options_init(&options);
  options.kernel_libraries = libraries;
  options.kernel_library_count = 1;

  if (kiln_module_memory_size() > sizeof module_memory) return 10;
  kiln_module* module = NULL;
  if (kiln_module_load(kiln_artifact, size, &options, module_memory, sizeof module_memory,
                       &module) != KILN_OK) {
    return 11;
  }
  size_t context_size = kiln_context_memory_size(module);
  if (context_size > sizeof context_memory) return 12;
  kiln_context* context = NULL;
  if (kiln_context_init(module, NULL, context_memory, context_size, &context) != KILN_OK) return 13;

  static float x[16] __attribute__((aligned(16))), y[16] __attribute__((aligned(16)));
  static float out[16] __attribute__((aligned(16))), twice[16] __attribute__((aligned(16)));
  static float total __attribute__((aligned(16)));
  for (int i = 0; i < 16; ++i) {
    x[i] = (float)i - 6.0f;         /* sampleX() */
    y[i] = 0.25f * (float)(i % 5);  /* sampleY() */
  }
  kiln_input inputs[2] = {{x, sizeof x}, {y, sizeof y}};
  kiln_output outputs[3] = {{out, sizeof out}, {&total, sizeof total}, {twice, sizeof twice}};
  for (int run = 0; run < 3; ++run) {
    if (kiln_context_call_named(context, "main", inputs, 2, outputs, 3) != KILN_OK) return 20;
    for (int i = 0; i < 16; ++i) {
      if (out[i] != kiln_expected[i]) return 21;
      if (twice[i] != kiln_expected[17 + i]) return 22;
    }
    if (total != kiln_expected[16]) return 23;
  }

  /* A newer minor version is refused (the message is compiled out, the status is not). */
  if (size > sizeof corrupt) return 30;
  memcpy(corrupt, kiln_artifact, size);
  corrupt[6] = (uint8_t)(KILN_FORMAT_MINOR + 1u); /* format_minor, little-endian u16 */
  corrupt[7] = 0;
  kiln_module* bad = NULL;
  if (kiln_module_load(corrupt, size, &options, module_memory, sizeof module_memory, &bad) !=
      KILN_ERROR_VERSION) {
    return 31;
  }
  return 0;
}
