// Tests for the benchmark statistics, checked by hand.
#include "latency_stats.h"

#include <gtest/gtest.h>

namespace kiln::cli {
namespace {

TEST(LatencyStats, NearestRankPercentiles) {
  std::vector<double> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(i);  // 1..100, unsorted
  LatencyStats s = summarize(samples);
  EXPECT_EQ(s.count, 100u);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.p50, 50);
  EXPECT_EQ(s.p90, 90);
  EXPECT_EQ(s.p99, 99);
  EXPECT_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  EXPECT_DOUBLE_EQ(s.jitter(), 99.0 / 50.0);
}

TEST(LatencyStats, FewSamples) {
  LatencyStats s = summarize({3, 1, 2});
  EXPECT_EQ(s.p50, 2);  // rank ceil(1.5) = 2
  EXPECT_EQ(s.p90, 3);
  EXPECT_EQ(s.p99, 3);
  EXPECT_EQ(summarize({}).count, 0u);
  EXPECT_EQ(summarize({7}).p50, 7);
}

}  // namespace
}  // namespace kiln::cli
