// Paired block ratios for `kiln compare` (see paired_blocks.h).
#include "paired_blocks.h"

#include <algorithm>
#include <cassert>

#include "latency_stats.h"

namespace kiln::cli {

double blockMedian(std::vector<double> latencies) {
  std::sort(latencies.begin(), latencies.end());
  return percentile(latencies, 50);
}

PairedRatios pairedRatios(const std::vector<double>& a, const std::vector<double>& b) {
  assert(a.size() == b.size());
  PairedRatios r;
  std::vector<double> ratios;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (a[i] > 0) ratios.push_back(b[i] / a[i]);
  if (ratios.empty()) return r;
  std::sort(ratios.begin(), ratios.end());
  r.pairs = ratios.size();
  r.p25 = percentile(ratios, 25);
  r.p50 = percentile(ratios, 50);
  r.p75 = percentile(ratios, 75);
  return r;
}

}  // namespace kiln::cli
