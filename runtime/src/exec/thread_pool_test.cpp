// Concurrency: the thread pool runs every workgroup of every dispatch of a stage exactly once;
// 4 threads each with their own context of one module, and two modules at once, give results
// identical to the hand-computed reference. Runs under ThreadSanitizer (label `concurrency`).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "runtime_fixture.h"

namespace kiln::testing {
namespace {

constexpr int kIterations = 50;

bool sameResult(const MainResult& a, const MainResult& b) {
  return a.out == b.out && a.total == b.total && a.twice == b.twice;
}

std::atomic<int> gCalls[3][64];

void countingKernel(void* const* bindings, uint32_t wg, uint32_t count) {
  int d = static_cast<int>(reinterpret_cast<uintptr_t>(bindings[0]));
  gCalls[d][wg].fetch_add(1);
  EXPECT_EQ(count, d == 0 ? 64u : d == 1 ? 1u : 17u);
}

TEST(ThreadPool, EveryWorkgroupOfAStageRunsOnce) {
  for (auto& dispatch : gCalls)
    for (auto& counter : dispatch) counter.store(0);
  kiln_thread_pool* pool = nullptr;
  ASSERT_EQ(kiln_thread_pool_create(4, &pool), KILN_OK);
  const kiln_executor* executor = kiln_thread_pool_executor(pool);
  void* b0[] = {reinterpret_cast<void*>(0)};
  void* b1[] = {reinterpret_cast<void*>(1)};
  void* b2[] = {reinterpret_cast<void*>(2)};
  kiln_dispatch stage[] = {{countingKernel, b0, 64, 0, 0},
                           {countingKernel, b1, 1, 0, 1},
                           {countingKernel, b2, 17, 0, 2}};
  for (int round = 1; round <= 20; ++round) {
    executor->run_stage(executor->self, stage, 3);
    for (int d = 0; d < 3; ++d) {
      for (uint32_t wg = 0; wg < stage[d].workgroup_count; ++wg) {
        ASSERT_EQ(gCalls[d][wg].load(), round) << "dispatch " << d << " workgroup " << wg;
      }
    }
  }
  kiln_thread_pool_destroy(pool);
}

TEST(ThreadPool, RunsTheStandardArtifact) {
  kiln_thread_pool* pool = nullptr;
  ASSERT_EQ(kiln_thread_pool_create(3, &pool), KILN_OK);
  Loaded loaded(writeArtifact(standardSpec(Kernels::kStatic)));
  ASSERT_EQ(loaded.status(), KILN_OK);
  Context context(loaded.module(), kiln_thread_pool_executor(pool));
  MainResult want = referenceMain(sampleX(), sampleY());
  for (int i = 0; i < kIterations; ++i) {
    MainResult got;
    ASSERT_EQ(runMain(context.get(), sampleX(), sampleY(), &got), KILN_OK);
    ASSERT_TRUE(sameResult(got, want)) << "iteration " << i;
  }
  kiln_thread_pool_destroy(pool);
}

TEST(Concurrency, FourThreadsOwnContextsOfOneModule) {
  Loaded loaded(writeArtifact(standardSpec(Kernels::kElf)));
  ASSERT_EQ(loaded.status(), KILN_OK) << loaded.error();
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Context context(loaded.module());
      Vec16 x = sampleX(), y = sampleY();
      x[0] += static_cast<float>(t);  // each thread its own inputs
      MainResult want = referenceMain(x, y);
      for (int i = 0; i < kIterations; ++i) {
        MainResult got;
        if (runMain(context.get(), x, y, &got) != KILN_OK || !sameResult(got, want)) ++mismatches;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(Concurrency, TwoModulesAtOnceSharingAThreadPool) {
  Loaded elf(writeArtifact(standardSpec(Kernels::kElf)));
  Loaded stat(writeArtifact(standardSpec(Kernels::kStatic)));
  ASSERT_EQ(elf.status(), KILN_OK) << elf.error();
  ASSERT_EQ(stat.status(), KILN_OK) << stat.error();
  kiln_thread_pool* pool = nullptr;
  ASSERT_EQ(kiln_thread_pool_create(2, &pool), KILN_OK);
  std::atomic<int> mismatches{0};
  MainResult want = referenceMain(sampleX(), sampleY());
  auto worker = [&](const kiln_module* module, const kiln_executor* executor) {
    Context context(module, executor);
    for (int i = 0; i < kIterations; ++i) {
      MainResult got;
      if (runMain(context.get(), sampleX(), sampleY(), &got) != KILN_OK || !sameResult(got, want))
        ++mismatches;
    }
  };
  std::vector<std::thread> threads;
  threads.emplace_back(worker, elf.module(), kiln_thread_pool_executor(pool));
  threads.emplace_back(worker, stat.module(), kiln_thread_pool_executor(pool));
  threads.emplace_back(worker, elf.module(), nullptr);
  threads.emplace_back(worker, stat.module(), nullptr);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
  kiln_thread_pool_destroy(pool);
}

}  // namespace
}  // namespace kiln::testing
