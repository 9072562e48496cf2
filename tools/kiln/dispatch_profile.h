// Per-dispatch timing for `kiln bench --per-dispatch`: collects each dispatch's time over many
// calls through the runtime's trace hook, then reports per dispatch the median and minimum
// time, its share of the sum of medians, the compiler's cost (DEBUG's cost table) and the
// achieved throughput (GFLOP/s, and % of a given peak), plus the top dispatches by time.
//
// kiln_context_set_trace's contract: the hook runs on the calling thread (the interpreter
// calls it after each stage returns, even with a thread pool, and a traced stage holds one
// dispatch), exactly once per dispatch and call. So each dispatch owns one slot and nothing
// needs a lock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "json_writer.h"
#include "kiln/format/artifact.h"

namespace kiln::cli {

// What the artifact says about one dispatch (names and cost are empty / none when stripped).
struct DispatchInfo {
  std::string name;  // "Conv+Relu"
  std::string node;  // "/conv1/Conv (Conv), /relu/Relu (Relu)"
  kiln_cost_kind costKind = KILN_COST_NONE;
  uint64_t cost = 0;
  uint32_t workgroups = 0;  // from COMMANDS (0: unknown)
  uint32_t workQueues = 0;  // tasks its workgroups share at run time (DEBUG; 0: fixed shares)
};

class DispatchProfile {
 public:
  // Dispatches [firstDispatch, firstDispatch + count) of one function.
  DispatchProfile(uint32_t firstDispatch, uint32_t count);

  // The trace hook's body: one call per dispatch per call of the function.
  void record(uint32_t dispatch, uint32_t kernel, uint64_t ns) {
    uint32_t slot = dispatch - first_;
    if (slot >= current_.size()) return;  // another function's dispatch: not ours
    current_[slot] = ns;
    kernels_[slot] = kernel;
    ++recorded_;
  }
  // After each call of the function: the call's times become one sample per dispatch.
  // Returns false (and drops them) if not every dispatch was traced exactly once.
  bool endCall();
  // Forgets the samples so far (the warm-up's).
  void clearSamples() {
    for (std::vector<double>& s : samples_) s.clear();
  }
  // Room for `calls` samples per dispatch, so that no call is followed by a reallocation.
  void reserveCalls(size_t calls) {
    for (std::vector<double>& s : samples_) s.reserve(calls);
  }

  uint32_t firstDispatch() const { return first_; }
  uint32_t count() const { return uint32_t(current_.size()); }
  uint32_t kernel(uint32_t slot) const { return kernels_[slot]; }
  size_t calls() const { return samples_.empty() ? 0 : samples_[0].size(); }
  const std::vector<double>& samplesUs(uint32_t slot) const { return samples_[slot]; }

 private:
  uint32_t first_;
  std::vector<uint64_t> current_;  // ns of the call in progress, per dispatch
  std::vector<uint32_t> kernels_;
  std::vector<std::vector<double>> samples_;  // us, per dispatch
  uint64_t recorded_ = 0;
};

struct DispatchRow {
  uint32_t index = 0;  // global dispatch index
  uint32_t kernel = 0;
  DispatchInfo info;
  double medianUs = 0, minUs = 0;
  double share = 0;                  // medianUs / sum of medians
  double throughput = 0;             // cost / median, in G per second (0: no cost)
  std::optional<double> percentPeak; // FLOP dispatches, when a peak is known
};

struct ProfileReport {
  std::vector<DispatchRow> rows;  // by dispatch index
  double sumMedianUs = 0;
  uint64_t totalFlops = 0;
  bool hasCosts = false;
  std::optional<double> peakGflops;
  // Indices into rows of the slowest dispatches, slowest first (at most 5).
  std::vector<size_t> top;
};

// `infos`: one per dispatch of the profile, or empty (stripped artifact).
ProfileReport buildProfileReport(const DispatchProfile& profile,
                                 const std::vector<DispatchInfo>& infos, bool hasCosts,
                                 std::optional<double> peakGflops);

// The table and the top-5 summary as text lines (each ends with '\n').
std::string profileText(const ProfileReport& report);

// "dispatches": [...], "top": [...] and the totals, as fields of the current JSON object.
void writeProfileJson(JsonWriter& j, const ProfileReport& report);

}  // namespace kiln::cli
