// Summary statistics of benchmark samples for `kiln bench`: min, p50, p90, p99, max, mean
// and jitter (p99 / p50). Percentiles use the nearest-rank method on the sorted samples.
#pragma once

#include <cstddef>
#include <vector>

namespace kiln::cli {

struct LatencyStats {
  size_t count = 0;
  double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
  double jitter() const { return p50 > 0 ? p99 / p50 : 0; }
};

// Smallest sample s such that at least `percent`% of the samples are <= s.
double percentile(const std::vector<double>& sorted, double percent);

LatencyStats summarize(std::vector<double> samples);

}  // namespace kiln::cli
