// Concurrency: the thread pool runs every workgroup of every dispatch of a stage exactly once,
// over thousands of back-to-back stages (the spinning handoff), with one-item stages between
// them, and with items that outlast the spin budget (the sleeping handoff); what one stage
// writes is visible to the next stage's threads; an idle pool's workers go to sleep and wake
// for the next stage; the threads share a stage's last dispatch first, a claim a share of it
// (a few heavy items beside many light ones do not all go to one thread); a pool is destroyed
// while idle, asleep or never used. 4 threads each with their own context of one module, and two modules at once, give
// results identical to the hand-computed reference. Runs under ThreadSanitizer (label `concurrency`), which checks the
// handoff's memory ordering. No timing is asserted: waits give up after 10 s so that a broken
// pool fails instead of hanging.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "exec/thread_pool_internal.h"
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

// Counts each (stage slot, workgroup) run; bindings[0] holds the slot.
std::atomic<int> gRuns[4][16];

void slotKernel(void* const* bindings, uint32_t wg, uint32_t) {
  gRuns[reinterpret_cast<uintptr_t>(bindings[0])][wg].fetch_add(1, std::memory_order_relaxed);
}

void resetRuns() {
  for (auto& slot : gRuns)
    for (auto& counter : slot) counter.store(0);
}

TEST(ThreadPool, ManyStagesInARowEachItemOnce) {
  resetRuns();
  kiln_thread_pool* pool = nullptr;
  ASSERT_EQ(kiln_thread_pool_create(2, &pool), KILN_OK);
  const kiln_executor* executor = kiln_thread_pool_executor(pool);
  void* b[4][1] = {{reinterpret_cast<void*>(0)},
                   {reinterpret_cast<void*>(1)},
                   {reinterpret_cast<void*>(2)},
                   {reinterpret_cast<void*>(3)}};
  // Alternates a 3-dispatch stage (2 + 5 + 1 items), a one-item stage (runs on the caller),
  // and a one-dispatch stage of 16 items.
  kiln_dispatch wide[] = {
      {slotKernel, b[0], 2, 0, 0}, {slotKernel, b[1], 5, 0, 1}, {slotKernel, b[2], 1, 0, 2}};
  kiln_dispatch single[] = {{slotKernel, b[3], 1, 0, 3}};
  kiln_dispatch split[] = {{slotKernel, b[3], 16, 0, 4}};
  constexpr int kRounds = 3000;
  for (int round = 0; round < kRounds; ++round) {
    executor->run_stage(executor->self, wide, 3);
    executor->run_stage(executor->self, single, 1);
    executor->run_stage(executor->self, split, 1);
  }
  for (int slot = 0; slot < 3; ++slot) {
    for (uint32_t wg = 0; wg < wide[slot].workgroup_count; ++wg)
      EXPECT_EQ(gRuns[slot][wg].load(), kRounds) << "dispatch " << slot << " workgroup " << wg;
  }
  EXPECT_EQ(gRuns[3][0].load(), 2 * kRounds);  // the single item and workgroup 0 of `split`
  for (uint32_t wg = 1; wg < 16; ++wg) EXPECT_EQ(gRuns[3][wg].load(), kRounds) << wg;
  kiln_thread_pool_destroy(pool);
}

// Which thread ran each workgroup of the last stage (true: the calling thread).
std::thread::id gCaller;
bool gRanOnCaller[64];

void whoKernel(void* const*, uint32_t wg, uint32_t) {
  gRanOnCaller[wg] = std::this_thread::get_id() == gCaller;
}

TEST(ThreadPool, WorkersTakeTheLowItemsAndTheCallerTheHighOnes) {
  // The workers claim from the bottom and the caller from the top, so each thread gets the
  // same end of the items stage after stage (the same part of the tensors stays in its core's
  // caches): whatever the timing, every item a worker ran is below every item the caller ran.
  gCaller = std::this_thread::get_id();
  kiln_thread_pool* pool = nullptr;
  ASSERT_EQ(kiln_thread_pool_create(3, &pool), KILN_OK);
  const kiln_executor* executor = kiln_thread_pool_executor(pool);
  void* none[] = {nullptr};
  kiln_dispatch stage[] = {{whoKernel, none, 40, 0, 0}};
  for (int round = 0; round < 200; ++round) {
    executor->run_stage(executor->self, stage, 1);
    int firstOnCaller = 40;
    while (firstOnCaller > 0 && gRanOnCaller[firstOnCaller - 1]) --firstOnCaller;
    for (int wg = 0; wg < 40; ++wg)
      ASSERT_EQ(gRanOnCaller[wg], wg >= firstOnCaller) << "round " << round << " item " << wg;
  }
  kiln_thread_pool_destroy(pool);
}

// A stage of many light items then a few heavy ones (SqueezeNet's expand1x1 beside its
// Winograd expand3x3). The threads take the last dispatch first, each a share of it: a heavy
// item waits until a heavy item has started on the other thread, and a light item until every
// heavy item has started. Shares of the whole stage (7 of 28 items took the four heavy ones
// into the caller's first claim) or a worker starting on the light dispatch time out.
std::atomic<int> gHeavyOnCaller{0}, gHeavyOnWorker{0}, gHeavyAlone{0};

// Waits for `ready` (or 10 s, then counts a failure and stops every further wait).
template <typename Ready>
void waitFor(Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!ready() && gHeavyAlone.load() == 0) {
    if (std::chrono::steady_clock::now() >= deadline) gHeavyAlone.fetch_add(1);
    std::this_thread::yield();
  }
}

void lightKernel(void* const*, uint32_t, uint32_t) {
  waitFor([] { return gHeavyOnCaller.load() + gHeavyOnWorker.load() == 4; });
}

void heavyKernel(void* const*, uint32_t, uint32_t) {
  const bool onCaller = std::this_thread::get_id() == gCaller;
  (onCaller ? gHeavyOnCaller : gHeavyOnWorker).fetch_add(1);
  std::atomic<int>& other = onCaller ? gHeavyOnWorker : gHeavyOnCaller;
  waitFor([&] { return other.load() > 0; });
}

TEST(ThreadPool, TheLastDispatchFirstEachThreadAShare) {
  gCaller = std::this_thread::get_id();
  gHeavyAlone.store(0);
  kiln_thread_pool* pool = nullptr;
  ASSERT_EQ(kiln_thread_pool_create(2, &pool), KILN_OK);
  const kiln_executor* executor = kiln_thread_pool_executor(pool);
  void* none[] = {nullptr};
  kiln_dispatch stage[] = {{lightKernel, none, 24, 0, 0}, {heavyKernel, none, 4, 1, 1}};
  for (int round = 0; round < 20; ++round) {
    gHeavyOnCaller.store(0);
    gHeavyOnWorker.store(0);
    executor->run_stage(executor->self, stage, 2);
    ASSERT_EQ(gHeavyOnCaller.load() + gHeavyOnWorker.load(), 4) << "round " << round;
    ASSERT_EQ(gHeavyAlone.load(), 0) << "round " << round;
  }
  kiln_thread_pool_destroy(pool);
}

// Stage A's workgroups write plain (non-atomic) values that stage B's workgroups read: the
// pool's handoff must order them (ThreadSanitizer reports a race otherwise).
struct Handoff {
  int values[8];
  int sums[8];
};

void writeValues(void* const* bindings, uint32_t wg, uint32_t) {
  Handoff& h = *static_cast<Handoff*>(bindings[0]);
  h.values[wg] = h.sums[wg] + int(wg) + 1;
}

void sumValues(void* const* bindings, uint32_t wg, uint32_t) {
  Handoff& h = *static_cast<Handoff*>(bindings[0]);
  int sum = 0;
  for (int v : h.values) sum += v;
  h.sums[wg] = sum;
}

TEST(ThreadPool, WritesOfOneStageAreVisibleToTheNext) {
  kiln_thread_pool* pool = nullptr;
  ASSERT_EQ(kiln_thread_pool_create(2, &pool), KILN_OK);
  const kiln_executor* executor = kiln_thread_pool_executor(pool);
  Handoff h = {};
  void* bindings[] = {&h};
  kiln_dispatch write[] = {{writeValues, bindings, 8, 0, 0}};
  kiln_dispatch sum[] = {{sumValues, bindings, 8, 1, 1}};
  int want = 0;
  for (int round = 0; round < 500; ++round) {
    executor->run_stage(executor->self, write, 1);
    executor->run_stage(executor->self, sum, 1);
    want = 8 * want + 36;  // every sum equals the previous round's sum: sum(want + wg + 1)
    want &= 0xffff;
    for (int& s : h.sums) s &= 0xffff;
    for (int wg = 0; wg < 8; ++wg) ASSERT_EQ(h.sums[wg], want) << "round " << round;
  }
  kiln_thread_pool_destroy(pool);
}

// Each item sleeps longer than the pool's spin budget, so the caller (and the idle worker)
// fall back to sleeping on their condition variables between and within stages.
void slowKernel(void* const* bindings, uint32_t wg, uint32_t) {
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  slotKernel(bindings, wg, 0);
}

TEST(ThreadPool, ItemsLongerThanTheSpinBudget) {
  resetRuns();
  kiln_thread_pool* pool = nullptr;
  ASSERT_EQ(kiln_thread_pool_create(2, &pool), KILN_OK);
  const kiln_executor* executor = kiln_thread_pool_executor(pool);
  void* b0[] = {reinterpret_cast<void*>(0)};
  kiln_dispatch stage[] = {{slowKernel, b0, 3, 0, 0}};
  for (int round = 1; round <= 20; ++round) {
    executor->run_stage(executor->self, stage, 1);
    for (uint32_t wg = 0; wg < 3; ++wg) ASSERT_EQ(gRuns[0][wg].load(), round) << wg;
  }
  kiln_thread_pool_destroy(pool);
}

// Polls `condition` for up to 10 s (a broken pool fails rather than hangs; no timing asserted).
template <typename Condition>
bool eventually(Condition condition) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(ThreadPool, IdleWorkersGoToSleepAndWakeForTheNextStage) {
  resetRuns();
  kiln_thread_pool* pool = nullptr;
  ASSERT_EQ(kiln_thread_pool_create(3, &pool), KILN_OK);
  const kiln_executor* executor = kiln_thread_pool_executor(pool);
  // A new pool's workers have no stage yet: they spin for a moment, then sleep.
  ASSERT_TRUE(eventually([&] { return kiln::threadPoolSleepingWorkers(pool) == 2; }))
      << kiln::threadPoolSleepingWorkers(pool) << " of 2 workers asleep";
  void* b0[] = {reinterpret_cast<void*>(0)};
  kiln_dispatch stage[] = {{slotKernel, b0, 16, 0, 0}};
  for (int round = 1; round <= 3; ++round) {
    uint64_t sleepsBefore = kiln::threadPoolSleeps(pool);
    executor->run_stage(executor->self, stage, 1);  // wakes the sleepers
    for (uint32_t wg = 0; wg < 16; ++wg) ASSERT_EQ(gRuns[0][wg].load(), round) << wg;
    // Both sleepers were woken (the epoch changed); with no further stage, both go back to
    // sleep: an idle pool burns no core.
    ASSERT_TRUE(eventually([&] {
      return kiln::threadPoolSleeps(pool) >= sleepsBefore + 2 &&
             kiln::threadPoolSleepingWorkers(pool) == 2;
    })) << "round "
        << round << ": " << kiln::threadPoolSleeps(pool) - sleepsBefore << " sleeps, "
        << kiln::threadPoolSleepingWorkers(pool) << " asleep";
  }
  EXPECT_GE(kiln::threadPoolSleeps(pool), 2u);
  kiln_thread_pool_destroy(pool);
}

TEST(ThreadPool, DestroyedWhileIdle) {
  void* b0[] = {reinterpret_cast<void*>(0)};
  kiln_dispatch stage[] = {{slotKernel, b0, 4, 0, 0}};
  for (int round = 0; round < 20; ++round) {
    kiln_thread_pool* pool = nullptr;
    ASSERT_EQ(kiln_thread_pool_create(4, &pool), KILN_OK);
    if (round % 2) {
      const kiln_executor* executor = kiln_thread_pool_executor(pool);
      executor->run_stage(executor->self, stage, 1);
    }
    kiln_thread_pool_destroy(pool);  // workers still spinning (or not yet started)
  }
  kiln_thread_pool* pool = nullptr;
  ASSERT_EQ(kiln_thread_pool_create(2, &pool), KILN_OK);
  const kiln_executor* executor = kiln_thread_pool_executor(pool);
  executor->run_stage(executor->self, stage, 1);
  ASSERT_TRUE(eventually([&] { return kiln::threadPoolSleepingWorkers(pool) == 1; }));
  kiln_thread_pool_destroy(pool);  // the worker asleep
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
