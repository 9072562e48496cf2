// The arithmetic of `kiln compare`: two artifacts timed in alternating blocks of calls
// (A B B A A B ...), so that both see the machine in the same state a block apart. Each pair
// of neighbouring blocks gives one ratio of block medians, B / A; the median of those ratios
// says how much faster or slower B is, and stays put when the machine's speed moves between
// phases that a separate run of each would land in differently.
#pragma once

#include <cstddef>
#include <vector>

namespace kiln::cli {

struct PairedRatios {
  size_t pairs = 0;
  double p25 = 0, p50 = 0, p75 = 0;  // of B's block median / A's, over the pairs
};

// Median of one block's call latencies (the nearest-rank 50th percentile).
double blockMedian(std::vector<double> latencies);

// `a[i]` and `b[i]`: block medians of pair i (the same count; zero pairs give zeros).
PairedRatios pairedRatios(const std::vector<double>& a, const std::vector<double>& b);

// Whether pair `pair` times A first: A B, B A, A B, ... (each artifact goes first half the
// time, so a drift within a pair weighs on both alike).
inline bool aFirst(size_t pair) { return pair % 2 == 0; }

}  // namespace kiln::cli
