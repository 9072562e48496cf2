// pairedRatios / blockMedian (paired_blocks.h) against ratios counted by hand.
#include "paired_blocks.h"

#include <gtest/gtest.h>

namespace kiln::cli {
namespace {

TEST(PairedBlocks, BlockMedianIsTheNearestRankMiddle) {
  EXPECT_EQ(blockMedian({5, 1, 3}), 3);
  EXPECT_EQ(blockMedian({4, 1, 3, 2}), 2);  // rank ceil(0.5 * 4) = 2
  EXPECT_EQ(blockMedian({7}), 7);
}

TEST(PairedBlocks, RatiosOfNeighbouringBlocks) {
  // A slows down by 2x in the last two pairs (a slow phase of the machine); B is 10 % faster
  // than A in every pair. Separate medians would mix the phases; the ratios do not.
  std::vector<double> a = {100, 100, 100, 200, 200};
  std::vector<double> b = {90, 90, 90, 180, 180};
  PairedRatios r = pairedRatios(a, b);
  EXPECT_EQ(r.pairs, 5u);
  EXPECT_DOUBLE_EQ(r.p50, 0.9);
  EXPECT_DOUBLE_EQ(r.p25, 0.9);
  EXPECT_DOUBLE_EQ(r.p75, 0.9);
  // Ratios 0.5, 1, 1.5, 2: p25 = 0.5 (rank 1), p50 = 1 (rank 2), p75 = 1.5 (rank 3).
  r = pairedRatios({2, 2, 2, 2}, {3, 1, 4, 2});
  EXPECT_DOUBLE_EQ(r.p25, 0.5);
  EXPECT_DOUBLE_EQ(r.p50, 1.0);
  EXPECT_DOUBLE_EQ(r.p75, 1.5);
}

TEST(PairedBlocks, NoPairsGiveZeros) {
  PairedRatios r = pairedRatios({}, {});
  EXPECT_EQ(r.pairs, 0u);
  EXPECT_EQ(r.p50, 0);
}

TEST(PairedBlocks, EachArtifactGoesFirstInTurn) {
  EXPECT_TRUE(aFirst(0));
  EXPECT_FALSE(aFirst(1));
  EXPECT_TRUE(aFirst(2));
}

}  // namespace
}  // namespace kiln::cli
