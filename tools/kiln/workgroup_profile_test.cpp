// Tests for `kiln bench --per-workgroup`: the thread pool's schedule simulated on
// hand-scheduled stages, and the timing executor on fake kernels (which workgroups it runs,
// the stages it records, the calls it refuses). Times from the clock are only checked to
// exist, never compared.
#include "workgroup_profile.h"

#include <gtest/gtest.h>

#include <cstring>

namespace kiln::cli {
namespace {

TEST(SimulatePoolStage, OneThreadIsTheSum) {
  EXPECT_DOUBLE_EQ(simulatePoolStage({{3, 1, 2}, {4}}, 1), 10.0);
  EXPECT_DOUBLE_EQ(simulatePoolStage({}, 2), 0.0);
}

// One dispatch, workgroups [4, 1, 1, 1, 1] on 2 threads (claims of 1/4 of what is left, at
// least one): the caller takes workgroup 4 (t 0-1), the worker workgroup 0 (t 0-4); the caller
// then takes 3 (1-2), 2 (2-3) and 1 (3-4). Both end at 4.
TEST(SimulatePoolStage, CallerFromTheTopWorkerFromTheBottom) {
  EXPECT_DOUBLE_EQ(simulatePoolStage({{4, 1, 1, 1, 1}}, 2), 4.0);
}

// Two dispatches [2, 2] and [3]: the last dispatch first. The caller takes [3] (t 0-3), which
// moves the pool to the first dispatch; the worker runs its two workgroups (0-2, 2-4).
TEST(SimulatePoolStage, DispatchesLastToFirst) {
  EXPECT_DOUBLE_EQ(simulatePoolStage({{2, 2}, {3}}, 2), 4.0);
  // Taken first to last instead, the caller would run 2 + 2 and the worker 3: the same 4;
  // this one tells the orders apart: [5] then [1, 1, 1, 1, 1, 1]. Last first: the caller runs
  // 1s from the top while the worker runs 1s from the bottom (3 each, t 0-3), then the caller
  // takes [5] (3-8).
  EXPECT_DOUBLE_EQ(simulatePoolStage({{5}, {1, 1, 1, 1, 1, 1}}, 2), 8.0);
}

// Guided claims: 16 workgroups of 1 on 2 threads. Caller: 16/4 = 4 (0-4); worker: 12/4 = 3
// (0-3); worker at 3: 9/4 = 2 (3-5); caller at 4: 7/4 = 1 (4-5); worker at 5 (the caller
// on ties first): caller 6/4 = 1 (5-6), worker 5/4 = 1 (5-6), ... ending at 8.
TEST(SimulatePoolStage, GuidedClaimsBalance) {
  EXPECT_DOUBLE_EQ(simulatePoolStage({std::vector<double>(16, 1.0)}, 2), 8.0);
  // Four threads, four equal workgroups: one each.
  EXPECT_DOUBLE_EQ(simulatePoolStage({{2, 2, 2, 2}}, 4), 2.0);
}

// One thread slower than the other. Four workgroups of 1, the worker 1.5x slower: the caller
// takes 3 (t 0-1), the worker 0 (0-1.5); the caller at 1 takes 2 (1-2); the worker, free at
// 1.5 before the caller, takes 1 (1.5-3). The pool claims greedily, as drain() does: 3, not
// the 2.5 of the caller taking three workgroups.
TEST(SimulatePoolStage, SlowerThreadClaimsGreedily) {
  EXPECT_DOUBLE_EQ(simulatePoolStage({{1, 1, 1, 1}}, 2, {1.0, 1.5}), 3.0);
  // The caller slower instead: the worker runs 0 and 1 (0-2), then 2 (2-3); the caller 3
  // (0-1.5).
  EXPECT_DOUBLE_EQ(simulatePoolStage({{1, 1, 1, 1}}, 2, {1.5, 1.0}), 3.0);
  // No factors: both at full speed.
  EXPECT_DOUBLE_EQ(simulatePoolStage({{1, 1, 1, 1}}, 2, {}), 2.0);
}

// Fake kernels that count the workgroups they run.
uint32_t gRuns[3][8];
template <int D>
void countingKernel(void* const*, uint32_t workgroup, uint32_t) {
  ++gRuns[D][workgroup];
}

kiln_dispatch fakeDispatch(kiln_kernel_fn kernel, uint32_t workgroups, uint32_t index) {
  kiln_dispatch d{};
  d.kernel = kernel;
  d.bindings = nullptr;
  d.workgroup_count = workgroups;
  d.kernel_index = index + 10;
  d.dispatch_index = index;
  return d;
}

// A dispatch of 2 tasks shared through work queues, 4 workgroups each, run one at a time: each
// task's first workgroup did all of it (10 and 6), the others returned at once (0.1). Replayed
// as kSharedUnits equal units per task, every workgroup's time counted in its task.
TEST(ReplayTimes, SharedTasksBecomeEqualUnits) {
  const std::vector<double> times = {10, 0.1, 0.1, 0.1, 6, 0.1, 0.1, 0.1};
  std::vector<double> units = replayTimes(times, 2);
  ASSERT_EQ(units.size(), 2 * size_t{kSharedUnits});
  EXPECT_DOUBLE_EQ(units.front(), 10.3 / kSharedUnits);
  EXPECT_DOUBLE_EQ(units.back(), 6.3 / kSharedUnits);
  // On two threads the units, claimed one at a time, split evenly (16.6 in all), where the
  // workgroups as measured would leave one thread with the 10 alone.
  EXPECT_NEAR(simulatePoolStage({units}, 2, {}, {true}), 16.6 / 2, 10.3 / kSharedUnits);
  EXPECT_DOUBLE_EQ(simulatePoolStage({times}, 2), 10.0);
  // Fixed shares, or a count that does not fit the workgroups: the times as they are.
  EXPECT_EQ(replayTimes(times, 0), times);
  EXPECT_EQ(replayTimes(times, 3), times);
}

TEST(WorkgroupProfile, RunsEveryWorkgroupAndRecordsTheStages) {
  std::memset(gRuns, 0, sizeof gRuns);
  WorkgroupProfile p;
  p.track(5, 3);  // dispatches 5, 6, 7
  const kiln_executor* e = p.executor();
  kiln_dispatch stage1[] = {fakeDispatch(countingKernel<0>, 4, 5)};
  kiln_dispatch stage2[] = {fakeDispatch(countingKernel<1>, 2, 6),
                            fakeDispatch(countingKernel<2>, 3, 7)};
  for (int call = 0; call < 3; ++call) {
    e->run_stage(e->self, stage1, 1);
    e->run_stage(e->self, stage2, 2);
    EXPECT_TRUE(p.endCall());
  }
  for (uint32_t wg = 0; wg < 4; ++wg) EXPECT_EQ(gRuns[0][wg], 3u);
  EXPECT_EQ(gRuns[1][1], 3u);
  EXPECT_EQ(gRuns[2][2], 3u);
  EXPECT_EQ(p.calls(), 3u);
  ASSERT_EQ(p.stages().size(), 2u);
  EXPECT_EQ(p.stages()[0], std::vector<uint32_t>({5}));
  EXPECT_EQ(p.stages()[1], std::vector<uint32_t>({6, 7}));
  EXPECT_EQ(p.kernel(2), 17u);
  EXPECT_EQ(p.minimumsUs(0).size(), 4u);
  EXPECT_EQ(p.minimumsUs(2).size(), 3u);

  std::vector<DispatchInfo> infos(3);
  infos[1].name = "Conv+Relu";
  WorkgroupReport report = buildWorkgroupReport(p, infos);
  ASSERT_EQ(report.rows.size(), 3u);
  EXPECT_EQ(report.rows[1].index, 6u);
  EXPECT_EQ(report.rows[1].info.name, "Conv+Relu");
  ASSERT_EQ(report.stages.size(), 2u);
  ASSERT_EQ(report.simulated.size(), 2u);
  EXPECT_EQ(report.simulated[0].threads, 2u);
  double sum = 0;
  for (const WorkgroupRow& row : report.rows) sum += row.sumUs;
  EXPECT_DOUBLE_EQ(report.oneThreadUs, sum);
  // No schedule beats an even split or loses to one thread.
  EXPECT_GE(report.simulated[0].us, report.oneThreadUs / 2 - 1e-9);
  EXPECT_LE(report.simulated[0].us, report.oneThreadUs + 1e-9);
  // A slower thread never makes the schedule shorter.
  EXPECT_GE(report.unevenTwoThreadsUs, report.simulated[0].us - 1e-9);
  std::string text = workgroupText(report);
  EXPECT_NE(text.find("2 threads, one 10 % slower"), std::string::npos);
  EXPECT_NE(text.find("2 threads (the pool's schedule of those times)"), std::string::npos);
  EXPECT_NE(text.find("Conv+Relu"), std::string::npos);
}

TEST(WorkgroupProfile, RefusesCallsThatDifferFromTheFirst) {
  WorkgroupProfile p;
  p.track(0, 2);
  const kiln_executor* e = p.executor();
  kiln_dispatch both[] = {fakeDispatch(countingKernel<0>, 1, 0),
                          fakeDispatch(countingKernel<1>, 1, 1)};
  e->run_stage(e->self, both, 2);
  EXPECT_TRUE(p.endCall());
  // The same dispatches in two stages: not the first call's stages.
  e->run_stage(e->self, both, 1);
  e->run_stage(e->self, both + 1, 1);
  EXPECT_FALSE(p.endCall());
  // A dispatch left out, and one run twice.
  e->run_stage(e->self, both, 1);
  EXPECT_FALSE(p.endCall());
  e->run_stage(e->self, both, 2);
  e->run_stage(e->self, both, 1);
  EXPECT_FALSE(p.endCall());
  EXPECT_EQ(p.calls(), 1u);
  // Another function's dispatches run, untimed and unrecorded.
  kiln_dispatch other[] = {fakeDispatch(countingKernel<2>, 2, 9)};
  e->run_stage(e->self, both, 2);
  e->run_stage(e->self, other, 1);
  EXPECT_TRUE(p.endCall());
}

}  // namespace
}  // namespace kiln::cli
