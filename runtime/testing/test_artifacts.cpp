// The standard test artifacts and their hand-computed reference results.
#include "test_artifacts.h"

#include <cstring>

#include "test_kernels.h"

namespace kiln::testing {

namespace {

constexpr uint64_t kArena = KILN_SPACE_ARENA;
constexpr uint64_t kConst = KILN_SPACE_CONSTANTS;

float weight(int i) { return 0.5f * static_cast<float>(i % 4) - 0.5f; }  // -0.5, 0, 0.5, 1
constexpr float kBias = 0.25f;

}  // namespace

std::vector<uint8_t> standardConstants() {
  std::vector<uint8_t> c(128, 0);
  for (int i = 0; i < 16; ++i) {
    float w = weight(i);
    std::memcpy(c.data() + 4 * i, &w, 4);
  }
  std::memcpy(c.data() + 64, &kBias, 4);
  return c;
}

ArtifactSpec standardSpec(Kernels kernels, Constants constants, bool debug) {
  ArtifactSpec spec;
  spec.arenaSize = 192;
  spec.stackBound = 256;
  spec.kernels = testKernelSignatures();
  spec.constants = standardConstants();
  spec.externalConstants = constants == Constants::kExternal;
  spec.debug = debug;
  if (kernels == Kernels::kStatic) {
    spec.staticLibrary = "kiln_test_kernels";
  } else {
    spec.elf = readFile(testKernelElfPath(kHostArchName));
  }

  FunctionSpec main;
  main.name = "main";
  main.inputs = {{"x", KILN_DTYPE_F32, {1, 16}}, {"y", KILN_DTYPE_F32, {1, 16}}};
  main.outputs = {{"out", KILN_DTYPE_F32, {1, 16}},
                  {"total", KILN_DTYPE_F32, {1}},
                  {"twice", KILN_DTYPE_F32, {16}}};
  main.commands.dispatch(kAdd, 4, {{KILN_SPACE_INPUT(0), 0}, {KILN_SPACE_INPUT(1), 0}, {kArena, 0}})
      .dispatch(kAdd, 4, {{KILN_SPACE_INPUT(0), 0}, {KILN_SPACE_INPUT(0), 0}, {kArena, 128}})
      .barrier()
      .dispatch(kScaleBias, 2, {{kArena, 0}, {kConst, 0}, {kConst, 64}, {kArena, 64}})
      .barrier()
      .dispatch(kRelu, 3, {{kArena, 64}})
      .barrier()
      .copy(kArena, 64, KILN_SPACE_OUTPUT(0), 0, 64)
      .dispatch(kSum, 1, {{kArena, 64}, {KILN_SPACE_OUTPUT(1), 0}})
      .copy(kArena, 128, KILN_SPACE_OUTPUT(2), 0, 64)
      .ret();
  spec.functions.push_back(main);

  FunctionSpec relu;
  relu.name = "relu";
  relu.inputs = {{"x", KILN_DTYPE_F32, {16}}};
  relu.outputs = {{"y", KILN_DTYPE_F32, {16}}};
  relu.commands.copy(KILN_SPACE_INPUT(0), 0, KILN_SPACE_OUTPUT(0), 0, 64)
      .barrier()
      .dispatch(kRelu, 1, {{KILN_SPACE_OUTPUT(0), 0}})
      .ret();
  spec.functions.push_back(relu);
  return spec;
}

MainResult referenceMain(const Vec16& x, const Vec16& y) {
  MainResult r{};
  r.total = 0.0f;
  for (int i = 0; i < 16; ++i) {
    float v = (x[i] + y[i]) * weight(i) + kBias;
    r.out[i] = v > 0.0f ? v : 0.0f;
    r.total += r.out[i];
    r.twice[i] = x[i] + x[i];
  }
  return r;
}

Vec16 sampleX() {
  Vec16 v;
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i) - 6.0f;
  return v;
}

Vec16 sampleY() {
  Vec16 v;
  for (int i = 0; i < 16; ++i) v[i] = 0.25f * static_cast<float>(i % 5);
  return v;
}

}  // namespace kiln::testing
