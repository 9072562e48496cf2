// The independent dispatches of one stage run concurrently on the thread pool, and a barrier
// holds back what depends on them. An artifact with two "branch" dispatches in stage 0 and a
// "join" in stage 1 runs on a 2-thread pool with kernels that meet at a rendezvous: each
// branch announces itself and waits for the other. Run one after another, the first branch
// would wait in vain; the test checks that both met, on two different threads, and that the
// join started only after both had finished. (The wait gives up after 10 s so that a broken
// executor fails the test instead of hanging it: no timing is asserted.) Label `concurrency`:
// it also runs under ThreadSanitizer.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "runtime_fixture.h"

namespace kiln::testing {
namespace {

constexpr uint32_t kFloats = 16;

std::atomic<int> gArrived{0};   // branches that have started
std::atomic<int> gMet{0};       // branches that saw the other one running
std::atomic<int> gFinished{0};  // branches that have finished
std::atomic<int> gJoinSawBoth{0};
std::thread::id gBranchThread[2];

// bindings: x (read), out (write): out = x + (1 for the first branch to start, 2 for the other).
void branchKernel(void* const* bindings, uint32_t, uint32_t) {
  const float* x = static_cast<const float*>(bindings[0]);
  float* out = static_cast<float*>(bindings[1]);
  int me = gArrived.fetch_add(1);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (gArrived.load() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  if (gArrived.load() >= 2) gMet.fetch_add(1);
  gBranchThread[me & 1] = std::this_thread::get_id();
  for (uint32_t i = 0; i < kFloats; ++i) out[i] = x[i] + float(me + 1);
  gFinished.fetch_add(1);
}

// bindings: a (read), b (read), out (write): out = a + b.
void joinKernel(void* const* bindings, uint32_t, uint32_t) {
  if (gFinished.load() == 2) gJoinSawBoth.fetch_add(1);
  const float* a = static_cast<const float*>(bindings[0]);
  const float* b = static_cast<const float*>(bindings[1]);
  float* out = static_cast<float*>(bindings[2]);
  for (uint32_t i = 0; i < kFloats; ++i) out[i] = a[i] + b[i];
}

const kiln_kernel_fn kKernels[] = {branchKernel, joinKernel};
const kiln_kernel_library kLibrary = {KILN_KERNEL_ABI_VERSION, 2, kKernels, "kiln_stage_test"};

std::vector<uint8_t> twoBranchArtifact() {
  ArtifactSpec spec;
  spec.arenaSize = 128;
  spec.stackBound = 256;
  spec.staticLibrary = "kiln_stage_test";
  spec.kernels = {{{64, KILN_ACCESS_READ}, {64, KILN_ACCESS_WRITE}},
                  {{64, KILN_ACCESS_READ}, {64, KILN_ACCESS_READ}, {64, KILN_ACCESS_WRITE}}};
  FunctionSpec main;
  main.name = "main";
  main.inputs = {{"x", KILN_DTYPE_F32, {kFloats}}};
  main.outputs = {{"y", KILN_DTYPE_F32, {kFloats}}};
  main.commands.dispatch(0, 1, {{KILN_SPACE_INPUT(0), 0}, {KILN_SPACE_ARENA, 0}})
      .dispatch(0, 1, {{KILN_SPACE_INPUT(0), 0}, {KILN_SPACE_ARENA, 64}})
      .barrier()
      .dispatch(1, 1, {{KILN_SPACE_ARENA, 0}, {KILN_SPACE_ARENA, 64}, {KILN_SPACE_OUTPUT(0), 0}})
      .ret();
  spec.functions.push_back(main);
  return writeArtifact(spec);
}

TEST(StageConcurrency, IndependentDispatchesOfAStageRunAtOnceOnThePool) {
  Loaded::Options options;
  options.elfLoader = false;
  options.libraries = {&kLibrary};
  Loaded loaded(twoBranchArtifact(), options);
  ASSERT_EQ(loaded.status(), KILN_OK) << loaded.error();
  kiln_thread_pool* pool = nullptr;
  ASSERT_EQ(kiln_thread_pool_create(2, &pool), KILN_OK);
  Context context(loaded.module(), kiln_thread_pool_executor(pool));
  ASSERT_EQ(context.status(), KILN_OK);
  for (int round = 0; round < 5; ++round) {
    gArrived = 0, gMet = 0, gFinished = 0, gJoinSawBoth = 0;
    alignas(64) float x[kFloats], y[kFloats] = {};
    for (uint32_t i = 0; i < kFloats; ++i) x[i] = float(i);
    kiln_input in = {x, sizeof x};
    kiln_output out = {y, sizeof y};
    ASSERT_EQ(kiln_context_call(context.get(), 0, &in, 1, &out, 1), KILN_OK);
    EXPECT_EQ(gMet.load(), 2) << "round " << round << ": the two branches did not overlap";
    EXPECT_NE(gBranchThread[0], gBranchThread[1]) << "round " << round;
    EXPECT_EQ(gJoinSawBoth.load(), 1) << "round " << round << ": the join ran before a branch";
    for (uint32_t i = 0; i < kFloats; ++i) EXPECT_EQ(y[i], 2 * float(i) + 3) << i;  // +1, +2
  }
  kiln_thread_pool_destroy(pool);
}

}  // namespace
}  // namespace kiln::testing
