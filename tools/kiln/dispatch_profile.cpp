// Per-dispatch timing report (see dispatch_profile.h).
#include "dispatch_profile.h"

#include <algorithm>
#include <cstdio>

#include "cost_text.h"
#include "latency_stats.h"

namespace kiln::cli {

DispatchProfile::DispatchProfile(uint32_t firstDispatch, uint32_t count)
    : first_(firstDispatch), current_(count, 0), kernels_(count, 0), samples_(count) {}

bool DispatchProfile::endCall() {
  bool complete = recorded_ == current_.size();
  if (complete)
    for (size_t i = 0; i < current_.size(); ++i)
      samples_[i].push_back(double(current_[i]) / 1000.0);
  recorded_ = 0;
  return complete;
}

ProfileReport buildProfileReport(const DispatchProfile& profile,
                                 const std::vector<DispatchInfo>& infos, bool hasCosts,
                                 std::optional<double> peakGflops) {
  ProfileReport report;
  report.hasCosts = hasCosts;
  report.peakGflops = peakGflops;
  for (uint32_t slot = 0; slot < profile.count(); ++slot) {
    DispatchRow row;
    row.index = profile.firstDispatch() + slot;
    row.kernel = profile.kernel(slot);
    if (slot < infos.size()) row.info = infos[slot];
    std::vector<double> sorted = profile.samplesUs(slot);
    std::sort(sorted.begin(), sorted.end());
    row.medianUs = percentile(sorted, 50);
    row.minUs = sorted.empty() ? 0 : sorted.front();
    if (row.info.costKind != KILN_COST_NONE && row.medianUs > 0)
      row.throughput = double(row.info.cost) / (row.medianUs * 1e3);  // per ns = G per s
    if (row.info.costKind == KILN_COST_FLOPS) {
      report.totalFlops += row.info.cost;
      if (peakGflops) row.percentPeak = 100.0 * row.throughput / *peakGflops;
    }
    report.sumMedianUs += row.medianUs;
    report.rows.push_back(std::move(row));
  }
  for (DispatchRow& row : report.rows)
    row.share = report.sumMedianUs > 0 ? row.medianUs / report.sumMedianUs : 0;
  std::vector<size_t> order(report.rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {  // slowest first, then index
    if (report.rows[a].medianUs != report.rows[b].medianUs)
      return report.rows[a].medianUs > report.rows[b].medianUs;
    return a < b;
  });
  order.resize(std::min<size_t>(order.size(), 5));
  report.top = order;
  return report;
}

namespace {

std::string throughputText(const DispatchRow& row) {
  if (row.info.costKind == KILN_COST_NONE) return "-";
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.2f %s", row.throughput,
                throughputUnit(row.info.costKind));
  return buffer;
}

std::string peakText(const DispatchRow& row) {
  if (!row.percentPeak) return "-";
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", *row.percentPeak);
  return buffer;
}

std::string label(const DispatchRow& row) {
  if (row.info.name.empty()) return "";
  return row.info.name + (row.info.node.empty() ? "" : "  <- " + row.info.node);
}

}  // namespace

std::string profileText(const ProfileReport& report) {
  std::string out;
  char buffer[2048];  // a row ends with the dispatch's source nodes: can be long
  std::snprintf(buffer, sizeof buffer, "  %5s %6s %4s %10s %10s %6s %16s %16s %6s  %s\n", "#",
                "kernel", "wg", "median us", "min us", "share", "cost", "throughput", "%peak",
                "name");
  out += buffer;
  for (const DispatchRow& row : report.rows) {
    std::snprintf(buffer, sizeof buffer,
                  "  %5u %6u %4u %10.2f %10.2f %5.1f%% %16s %16s %6s  %s\n", row.index,
                  row.kernel, row.info.workgroups, row.medianUs, row.minUs, 100.0 * row.share,
                  costText(row.info.costKind, row.info.cost).c_str(), throughputText(row).c_str(),
                  peakText(row).c_str(), label(row).c_str());
    out += buffer;
  }
  std::snprintf(buffer, sizeof buffer, "  sum of dispatch medians: %.2f us", report.sumMedianUs);
  out += buffer;
  if (report.totalFlops > 0 && report.sumMedianUs > 0) {
    std::snprintf(buffer, sizeof buffer, ", %s in conv/matmul dispatches (%.2f GFLOP/s overall)",
                  costText(KILN_COST_FLOPS, report.totalFlops).c_str(),
                  double(report.totalFlops) / (report.sumMedianUs * 1e3));
    out += buffer;
  }
  out += "\n  top " + std::to_string(report.top.size()) + " by time:\n";
  for (size_t rank = 0; rank < report.top.size(); ++rank) {
    const DispatchRow& row = report.rows[report.top[rank]];
    std::snprintf(buffer, sizeof buffer, "    %zu. #%-4u %10.2f us %5.1f%%  %s  %s%s%s\n",
                  rank + 1, row.index, row.medianUs, 100.0 * row.share,
                  throughputText(row).c_str(), row.percentPeak ? peakText(row).c_str() : "",
                  row.percentPeak ? " of peak  " : "", row.info.name.c_str());
    out += buffer;
  }
  return out;
}

void writeProfileJson(JsonWriter& j, const ProfileReport& report) {
  j.field("dispatch_sum_us", report.sumMedianUs);
  j.field("costs_available", report.hasCosts);
  if (report.peakGflops) j.field("peak_gflops", *report.peakGflops);
  j.field("total_flops", report.totalFlops);
  j.key("dispatches");
  j.beginArray();
  for (const DispatchRow& row : report.rows) {
    j.beginObject();
    j.field("index", row.index);
    j.field("kernel", row.kernel);
    if (row.info.workgroups) j.field("workgroups", row.info.workgroups);
    if (!row.info.name.empty()) {
      j.field("name", row.info.name);
      j.field("node", row.info.node);
    }
    j.field("median_us", row.medianUs);
    j.field("min_us", row.minUs);
    j.field("share", row.share);
    if (report.hasCosts) {
      j.field("cost_kind", costKindName(row.info.costKind));
      j.field("cost", row.info.cost);
      if (row.info.costKind != KILN_COST_NONE) {
        j.field("throughput_g_per_s", row.throughput);
        if (row.info.costKind == KILN_COST_FLOPS) j.field("gflops", row.throughput);
      }
      if (row.percentPeak) j.field("percent_of_peak", *row.percentPeak);
    }
    j.endObject();
  }
  j.endArray();
  j.key("top");
  j.beginArray();
  for (size_t i : report.top) j.value(report.rows[i].index);
  j.endArray();
}

}  // namespace kiln::cli
