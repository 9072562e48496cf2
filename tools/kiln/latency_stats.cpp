// Latency statistics (see latency_stats.h).
#include "latency_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kiln::cli {

double percentile(const std::vector<double>& sorted, double percent) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(percent / 100.0 * double(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

LatencyStats summarize(std::vector<double> samples) {
  LatencyStats stats;
  if (samples.empty()) return stats;
  std::sort(samples.begin(), samples.end());
  stats.count = samples.size();
  stats.min = samples.front();
  stats.max = samples.back();
  stats.p50 = percentile(samples, 50);
  stats.p90 = percentile(samples, 90);
  stats.p99 = percentile(samples, 99);
  stats.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / double(samples.size());
  return stats;
}

}  // namespace kiln::cli
