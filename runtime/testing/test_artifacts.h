// The standard test artifacts, built with the test writer and the test kernels, and the
// reference (hand-computed) results they must produce. Shared by the unit tests, the build-time
// artifact generator (fuzzer seeds) and the fuzzer.
#ifndef KILN_RUNTIME_TESTING_TEST_ARTIFACTS_H_
#define KILN_RUNTIME_TESTING_TEST_ARTIFACTS_H_

#include <array>
#include <vector>

#include "artifact_writer.h"

namespace kiln::testing {

enum class Kernels { kStatic, kElf };
enum class Constants { kEmbedded, kExternal };

// Two entry functions:
//   "main"(x[16], y[16]) -> (out[16], total[1], twice[16])
//       stage 1: a0 = x + y; a128 = x + x           (two dispatches, 4 workgroups each)
//       stage 2: a64 = a0 * w + bias                (w, bias: constants)
//       stage 3: a64 = relu(a64)
//       stage 4: out = a64 (COPY); total = sum(a64); twice = a128 (COPY)
//   "relu"(x[16]) -> (y[16]):  y = x (COPY); barrier; y = relu(y)
ArtifactSpec standardSpec(Kernels kernels, Constants constants = Constants::kEmbedded,
                          bool debug = true);

// The constants of the standard artifact: w[16] then bias at byte 64 (128 bytes).
std::vector<uint8_t> standardConstants();

using Vec16 = std::array<float, 16>;

struct MainResult {
  Vec16 out;
  float total;
  Vec16 twice;
};

// Hand-computed reference of "main".
MainResult referenceMain(const Vec16& x, const Vec16& y);

// Deterministic inputs.
Vec16 sampleX();
Vec16 sampleY();

}  // namespace kiln::testing

#endif  // KILN_RUNTIME_TESTING_TEST_ARTIFACTS_H_
