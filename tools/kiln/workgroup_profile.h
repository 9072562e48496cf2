// Per-workgroup timing for `kiln bench --per-workgroup`: an executor that runs each stage's
// workgroups one at a time on the calling thread, times each by that thread's CPU time and
// keeps every workgroup's minimum over the calls; then, from those minimums, the schedule the
// runtime's thread pool would make of each stage on N threads (simulatePoolStage). On a shared
// or virtual machine, where two busy threads' wall-clock times move by 10-30 % between
// minutes, this separates how evenly kiln's work splits (a property of the artifact) from how
// the machine treats two busy CPUs (a property of the machine).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dispatch_profile.h"
#include "json_writer.h"
#include "kiln/kiln.h"

namespace kiln::cli {

class WorkgroupProfile {
 public:
  WorkgroupProfile();
  WorkgroupProfile(const WorkgroupProfile&) = delete;
  WorkgroupProfile& operator=(const WorkgroupProfile&) = delete;

  // The executor to create the context with: it runs every workgroup on the calling thread.
  const kiln_executor* executor() const { return &executor_; }
  // Profiles dispatches [firstDispatch, firstDispatch + count) (one function's), before the
  // first call; the others run untimed.
  void track(uint32_t firstDispatch, uint32_t count);

  // After each call of the function. The first call records the stages (which dispatches
  // run together); returns false if a call did not run every dispatch exactly once, or ran
  // them in other stages than the first call did.
  bool endCall();
  // Forgets the minimums so far (the warm-up's), keeping the stages.
  void clearSamples();

  uint32_t firstDispatch() const { return first_; }
  uint32_t count() const { return uint32_t(minimumNs_.size()); }
  uint64_t calls() const { return calls_; }
  uint32_t kernel(uint32_t slot) const { return kernels_[slot]; }
  // Each stage's dispatches (global indices), in the order the runtime passed them.
  const std::vector<std::vector<uint32_t>>& stages() const { return stages_; }
  // Minimum thread-CPU time of each workgroup of a dispatch, in microseconds.
  std::vector<double> minimumsUs(uint32_t slot) const;

 private:
  static void runStage(void* self, const kiln_dispatch* dispatches, uint32_t count);

  kiln_executor executor_;
  uint32_t first_ = 0;
  std::vector<std::vector<uint64_t>> minimumNs_;  // per dispatch, per workgroup
  std::vector<uint32_t> kernels_;
  std::vector<uint32_t> runs_;  // how often each dispatch ran in the call in progress
  std::vector<std::vector<uint32_t>> stages_;
  std::vector<std::vector<uint32_t>> callStages_;  // the call in progress
  uint64_t calls_ = 0;
  bool stagesKnown_ = false;
};

// How long the thread pool (runtime/src/exec/thread_pool.cpp, drain()) takes for one stage on
// `threads` threads, given each workgroup's time, per dispatch in stage order. It follows the
// pool's claim order: the stage's dispatches last to first, every thread on the same one, the
// calling thread claiming from its top and the workers from its bottom, each claim a
// 1 / (2 x threads) share of what is left of the dispatch (at least one workgroup); the thread
// that is free first claims next (the caller on ties). No claim or wake-up costs. Keep it in
// step with drain() when the pool's order changes. `slowdown`, if given, has one factor per
// thread (thread 0 the caller) by which that thread's workgroups take longer: a CPU that runs
// slower than the other (a busy sibling hardware thread, a host that shares the core).
// `oneAtATime`, if given, marks the dispatches whose items are claimed one by one (the units
// of shared tasks, replayTimes) rather than in guided shares.
double simulatePoolStage(const std::vector<std::vector<double>>& workgroupTimes, uint32_t threads,
                         const std::vector<double>& slowdown = {},
                         const std::vector<bool>& oneAtATime = {});

// The factor by which one of two threads runs slower in the report's uneven case: the two
// vCPUs of a shared VM often differ by about 10 % (docs/benchmarks.md, "What two threads
// lose").
inline constexpr double kUnevenSlowdown = 1.1;

// The times the replay gives a dispatch's workgroups. A dispatch whose workgroups share tasks
// through work queues (DispatchInfo::workQueues, codegen/work_queue.h) ran, one workgroup at a
// time, with each task's first workgroup doing the whole task and the others finding nothing
// left: each task's time is replayed as kSharedUnits equal units instead, which the threads
// claim as they come (the input transform that each extra thread on a task adds is not in
// them, so the replay is a little optimistic there), claimed one at a time like the panels of
// a Winograd convolution. Other dispatches: their workgroups' times.
inline constexpr uint32_t kSharedUnits = 32;
std::vector<double> replayTimes(const std::vector<double>& workgroupsUs, uint32_t workQueues);

struct WorkgroupRow {
  uint32_t index = 0;  // global dispatch index
  uint32_t kernel = 0;
  DispatchInfo info;
  std::vector<double> workgroupsUs;  // minimum per workgroup
  double sumUs = 0, largestUs = 0;
};

struct StageRow {
  std::vector<uint32_t> dispatches;  // global indices
  double oneThreadUs = 0;            // sum of its workgroups' minimums
  double twoThreadsUs = 0;           // simulated
};

struct WorkgroupReport {
  uint64_t calls = 0;
  std::vector<WorkgroupRow> rows;  // by dispatch index
  std::vector<StageRow> stages;
  double oneThreadUs = 0;
  struct Simulated {
    uint32_t threads;
    double us;
  };
  std::vector<Simulated> simulated;  // 2 and 4 threads
  // 2 threads, one kUnevenSlowdown times slower: the worse of the caller or the worker slow.
  double unevenTwoThreadsUs = 0;
  // Indices into stages of those that lose the most time to imbalance at 2 threads
  // (simulated minus half of one thread), worst first, at most 3 with a loss.
  std::vector<size_t> worstStages;
};

// `infos`: one per dispatch of the profile, or empty (stripped artifact).
WorkgroupReport buildWorkgroupReport(const WorkgroupProfile& profile,
                                     const std::vector<DispatchInfo>& infos);

// The per-dispatch table, the simulated totals and the worst stages, as text lines.
std::string workgroupText(const WorkgroupReport& report);

// "per_workgroup": {...} as a field of the current JSON object.
void writeWorkgroupJson(JsonWriter& j, const WorkgroupReport& report);

}  // namespace kiln::cli
