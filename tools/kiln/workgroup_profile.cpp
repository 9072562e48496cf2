// `kiln bench --per-workgroup`: the timing executor, the thread pool's schedule simulated
// from the workgroups' minimum times, and the report (see workgroup_profile.h).
#include "workgroup_profile.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <limits>

namespace kiln::cli {
namespace {

uint64_t threadCpuNs() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return uint64_t(t.tv_sec) * 1000000000u + uint64_t(t.tv_nsec);
}

constexpr uint64_t kNoTime = std::numeric_limits<uint64_t>::max();

}  // namespace

WorkgroupProfile::WorkgroupProfile() : executor_{runStage, this} {}

void WorkgroupProfile::track(uint32_t firstDispatch, uint32_t count) {
  first_ = firstDispatch;
  minimumNs_.assign(count, {});
  kernels_.assign(count, 0);
  runs_.assign(count, 0);
  stages_.clear();
  callStages_.clear();
  calls_ = 0;
  stagesKnown_ = false;
}

void WorkgroupProfile::runStage(void* self, const kiln_dispatch* dispatches, uint32_t count) {
  WorkgroupProfile& p = *static_cast<WorkgroupProfile*>(self);
  std::vector<uint32_t> stage;
  for (uint32_t d = 0; d < count; ++d) {
    const kiln_dispatch& dispatch = dispatches[d];
    uint32_t slot = dispatch.dispatch_index - p.first_;
    bool ours = slot < p.minimumNs_.size();
    if (ours) {
      std::vector<uint64_t>& minimum = p.minimumNs_[slot];
      if (minimum.size() != dispatch.workgroup_count)
        minimum.assign(dispatch.workgroup_count, kNoTime);
      p.kernels_[slot] = dispatch.kernel_index;
      ++p.runs_[slot];
      stage.push_back(dispatch.dispatch_index);
    }
    for (uint32_t wg = 0; wg < dispatch.workgroup_count; ++wg) {
      uint64_t start = threadCpuNs();
      dispatch.kernel(dispatch.bindings, wg, dispatch.workgroup_count);
      uint64_t ns = threadCpuNs() - start;
      if (ours) p.minimumNs_[slot][wg] = std::min(p.minimumNs_[slot][wg], ns);
    }
  }
  if (!stage.empty()) p.callStages_.push_back(std::move(stage));
}

bool WorkgroupProfile::endCall() {
  bool ok = std::all_of(runs_.begin(), runs_.end(), [](uint32_t n) { return n == 1; });
  std::fill(runs_.begin(), runs_.end(), 0);
  if (ok && !stagesKnown_) {
    stages_ = callStages_;
    stagesKnown_ = true;
  } else if (ok) {
    ok = callStages_ == stages_;
  }
  callStages_.clear();
  if (ok) ++calls_;
  return ok;
}

void WorkgroupProfile::clearSamples() {
  for (std::vector<uint64_t>& minimum : minimumNs_)
    std::fill(minimum.begin(), minimum.end(), kNoTime);
  calls_ = 0;
}

std::vector<double> WorkgroupProfile::minimumsUs(uint32_t slot) const {
  std::vector<double> us;
  for (uint64_t ns : minimumNs_[slot]) us.push_back(ns == kNoTime ? 0.0 : double(ns) / 1e3);
  return us;
}

double simulatePoolStage(const std::vector<std::vector<double>>& workgroupTimes,
                         uint32_t threads, const std::vector<double>& slowdown,
                         const std::vector<bool>& oneAtATime) {
  if (threads == 0) threads = 1;
  // lo/hi: the unclaimed workgroups of each dispatch; the pool works on the last dispatch
  // with any left.
  std::vector<size_t> lo(workgroupTimes.size(), 0), hi(workgroupTimes.size());
  for (size_t d = 0; d < workgroupTimes.size(); ++d) hi[d] = workgroupTimes[d].size();
  std::vector<double> freeAt(threads, 0.0);  // thread 0 is the caller
  double end = 0;
  const size_t shares = 2 * size_t{threads};
  for (;;) {
    size_t d = workgroupTimes.size();
    while (d > 0 && lo[d - 1] >= hi[d - 1]) --d;
    if (d == 0) break;
    --d;
    size_t t = size_t(std::min_element(freeAt.begin(), freeAt.end()) - freeAt.begin());
    const bool single = d < oneAtATime.size() && oneAtATime[d];
    size_t claim = single ? 1 : std::max<size_t>(1, (hi[d] - lo[d]) / shares);
    double time = freeAt[t];
    const double factor = t < slowdown.size() ? slowdown[t] : 1.0;
    for (size_t i = 0; i < claim; ++i) {
      if (t == 0) time += factor * workgroupTimes[d][--hi[d]];
      else time += factor * workgroupTimes[d][lo[d]++];
    }
    freeAt[t] = time;
    end = std::max(end, time);
  }
  return end;
}

std::vector<double> replayTimes(const std::vector<double>& workgroupsUs, uint32_t workQueues) {
  if (workQueues == 0 || workgroupsUs.size() % workQueues != 0) return workgroupsUs;
  // Workgroup w works on task w / (workgroups per task) (the kernels' order).
  const size_t perTask = workgroupsUs.size() / workQueues;
  std::vector<double> units;
  for (size_t task = 0; task < workQueues; ++task) {
    double us = 0;
    for (size_t w = task * perTask; w < (task + 1) * perTask; ++w) us += workgroupsUs[w];
    units.insert(units.end(), kSharedUnits, us / kSharedUnits);
  }
  return units;
}

WorkgroupReport buildWorkgroupReport(const WorkgroupProfile& profile,
                                     const std::vector<DispatchInfo>& infos) {
  WorkgroupReport report;
  report.calls = profile.calls();
  for (uint32_t slot = 0; slot < profile.count(); ++slot) {
    WorkgroupRow row;
    row.index = profile.firstDispatch() + slot;
    row.kernel = profile.kernel(slot);
    if (slot < infos.size()) row.info = infos[slot];
    row.workgroupsUs = profile.minimumsUs(slot);
    for (double us : row.workgroupsUs) {
      row.sumUs += us;
      row.largestUs = std::max(row.largestUs, us);
    }
    report.rows.push_back(std::move(row));
  }
  const uint32_t simulatedThreads[] = {2, 4};
  for (uint32_t threads : simulatedThreads) report.simulated.push_back({threads, 0.0});
  double callerSlow = 0, workerSlow = 0;  // 2 threads, one of them kUnevenSlowdown slower
  for (const std::vector<uint32_t>& dispatches : profile.stages()) {
    StageRow stage;
    stage.dispatches = dispatches;
    std::vector<std::vector<double>> times;
    std::vector<bool> units;  // shared tasks' units, claimed one at a time
    for (uint32_t index : dispatches) {
      const WorkgroupRow& row = report.rows[index - profile.firstDispatch()];
      times.push_back(replayTimes(row.workgroupsUs, row.info.workQueues));
      units.push_back(row.info.workQueues > 0 &&
                      row.workgroupsUs.size() % row.info.workQueues == 0);
      stage.oneThreadUs += row.sumUs;
    }
    for (WorkgroupReport::Simulated& s : report.simulated) {
      double us = simulatePoolStage(times, s.threads, {}, units);
      s.us += us;
      if (s.threads == 2) stage.twoThreadsUs = us;
    }
    callerSlow += simulatePoolStage(times, 2, {kUnevenSlowdown, 1.0}, units);
    workerSlow += simulatePoolStage(times, 2, {1.0, kUnevenSlowdown}, units);
    report.oneThreadUs += stage.oneThreadUs;
    report.stages.push_back(std::move(stage));
  }
  report.unevenTwoThreadsUs = std::max(callerSlow, workerSlow);
  std::vector<size_t> order;
  for (size_t i = 0; i < report.stages.size(); ++i) order.push_back(i);
  auto loss = [&](size_t i) {
    return report.stages[i].twoThreadsUs - report.stages[i].oneThreadUs / 2;
  };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return loss(a) != loss(b) ? loss(a) > loss(b) : a < b;
  });
  for (size_t i : order) {
    if (report.worstStages.size() == 3 || loss(i) <= 0.005) break;
    report.worstStages.push_back(i);
  }
  return report;
}

std::string workgroupText(const WorkgroupReport& report) {
  std::string out;
  char buffer[512];
  out += "      # kernel    wg     sum us  largest us  workgroups (us; listed up to 16)  name\n";
  for (const WorkgroupRow& row : report.rows) {
    std::string list;
    if (row.workgroupsUs.size() <= 16) {
      for (double us : row.workgroupsUs) {
        std::snprintf(buffer, sizeof buffer, us < 10 ? "%s%.1f" : "%s%.0f", list.empty() ? "" : " ",
                      us);
        list += buffer;
      }
    }
    std::snprintf(buffer, sizeof buffer, "  %5u %6u %5zu %10.2f %11.2f  %-32s  %s", row.index,
                  row.kernel, row.workgroupsUs.size(), row.sumUs, row.largestUs, list.c_str(),
                  row.info.name.c_str());
    out += buffer;
    if (row.info.workQueues > 0) {
      std::snprintf(buffer, sizeof buffer, " (%u shared task%s: replayed in %u units each)",
                    row.info.workQueues, row.info.workQueues == 1 ? "" : "s", kSharedUnits);
      out += buffer;
    }
    out += "\n";
  }
  std::snprintf(buffer, sizeof buffer,
                "  one thread: %.2f us (sum of the workgroups' minimums, %zu stages)\n",
                report.oneThreadUs, report.stages.size());
  out += buffer;
  for (const WorkgroupReport::Simulated& s : report.simulated) {
    std::snprintf(buffer, sizeof buffer,
                  "  %u threads (the pool's schedule of those times): %.2f us, x%.2f\n",
                  s.threads, s.us, s.us > 0 ? report.oneThreadUs / s.us : 0.0);
    out += buffer;
  }
  if (report.unevenTwoThreadsUs > 0) {
    // The best any split could do on the uneven pair: each thread busy until the same moment,
    // the faster one doing 1 unit of work per unit of time and the slower 1 / kUnevenSlowdown.
    const double ideal = report.oneThreadUs / (1.0 + 1.0 / kUnevenSlowdown);
    std::snprintf(buffer, sizeof buffer,
                  "  2 threads, one %.0f %% slower (the worse of the caller or the worker): "
                  "%.2f us, x%.2f (a perfect split: %.2f us)\n",
                  (kUnevenSlowdown - 1) * 100, report.unevenTwoThreadsUs,
                  report.oneThreadUs / report.unevenTwoThreadsUs, ideal);
    out += buffer;
  }
  if (!report.worstStages.empty()) {
    out += "  stages that lose the most to imbalance at 2 threads:\n";
    for (size_t i : report.worstStages) {
      const StageRow& stage = report.stages[i];
      std::string dispatches;
      for (uint32_t d : stage.dispatches)
        dispatches += (dispatches.empty() ? "#" : ", #") + std::to_string(d);
      std::snprintf(buffer, sizeof buffer,
                    "    stage %zu (%s): 1 thread %.2f us, 2 threads %.2f us (%.2f us over half)\n",
                    i, dispatches.c_str(), stage.oneThreadUs, stage.twoThreadsUs,
                    stage.twoThreadsUs - stage.oneThreadUs / 2);
      out += buffer;
    }
  }
  return out;
}

void writeWorkgroupJson(JsonWriter& j, const WorkgroupReport& report) {
  j.key("per_workgroup");
  j.beginObject();
  j.field("calls", report.calls);
  j.field("one_thread_us", report.oneThreadUs);
  j.key("simulated");
  j.beginArray();
  for (const WorkgroupReport::Simulated& s : report.simulated) {
    j.beginObject();
    j.field("threads", s.threads);
    j.field("us", s.us);
    j.field("speedup", s.us > 0 ? report.oneThreadUs / s.us : 0.0);
    j.endObject();
  }
  j.endArray();
  j.key("uneven");
  j.beginObject();
  j.field("threads", 2u);
  j.field("slowdown", kUnevenSlowdown);
  j.field("us", report.unevenTwoThreadsUs);
  j.field("speedup",
          report.unevenTwoThreadsUs > 0 ? report.oneThreadUs / report.unevenTwoThreadsUs : 0.0);
  j.endObject();
  j.key("dispatches");
  j.beginArray();
  for (const WorkgroupRow& row : report.rows) {
    j.beginObject();
    j.field("index", row.index);
    j.field("kernel", row.kernel);
    if (!row.info.name.empty()) j.field("name", row.info.name);
    j.field("sum_us", row.sumUs);
    if (row.info.workQueues > 0) j.field("work_queues", row.info.workQueues);
    j.key("workgroups_us");
    j.beginArray();
    for (double us : row.workgroupsUs) j.value(us);
    j.endArray();
    j.endObject();
  }
  j.endArray();
  j.key("stages");
  j.beginArray();
  for (const StageRow& stage : report.stages) {
    j.beginObject();
    j.key("dispatches");
    j.beginArray();
    for (uint32_t d : stage.dispatches) j.value(d);
    j.endArray();
    j.field("one_thread_us", stage.oneThreadUs);
    j.field("two_threads_us", stage.twoThreadsUs);
    j.endObject();
  }
  j.endArray();
  j.endObject();
}

}  // namespace kiln::cli
