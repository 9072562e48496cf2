// The workgroup policy: tiny dispatches stay one workgroup, few large items get a workgroup
// each, other large dispatches fill the threads with counts that divide evenly over 2, 4 and 8
// threads, bounded by the extent and the maximum.
#include "workgroup_policy.h"

#include <gtest/gtest.h>

namespace kiln::codegen::detail {
namespace {

TEST(WorkgroupPolicy, TinyDispatchesAreNotSplit) {
  // The first conv of a ~60 K-MAC digit model: 4 output channels x 26 rows of 26 x 9 MACs.
  EXPECT_EQ(workgroupsFor(4 * 26, 26 * 9), 1u);
  // Its whole MAC count in one dispatch is still below the serial threshold.
  EXPECT_EQ(workgroupsFor(60, 1000), 1u);
  // The digits example's second conv, 74 K MACs (8 x 9216): faster whole than over 2 threads.
  EXPECT_EQ(workgroupsFor(8, 9216), 1u);
  EXPECT_GT(workgroupsFor(8, 2 * 9216), 1u);  // twice the work is split
  // An elementwise op over 4 K elements in chunks of 1 K.
  EXPECT_EQ(workgroupsFor(4, 1024), 1u);
  // Degenerate extents.
  EXPECT_EQ(workgroupsFor(0, 1 << 20), 1u);
  EXPECT_EQ(workgroupsFor(1, 1 << 30), 1u);
  EXPECT_EQ(workgroupsFor(1 << 20, 0), 32u);  // zero work per item counts as one
}

TEST(WorkgroupPolicy, LargeDispatchesFillTheThreads) {
  // A ResNet-18 3x3 conv, 64 channels at 56x56: 64 x 56 rows of 56 x 64 x 9 MACs.
  EXPECT_EQ(workgroupsFor(64 * 56, 56 * 64 * 9), kMaxWorkgroups);
  // 200 K of work over 100 rows: 6 x 32 K -> rounded down to 4.
  EXPECT_EQ(workgroupsFor(100, 2000), 4u);
  // 1 M of work over 1 K rows: 32 x 32 K.
  EXPECT_EQ(workgroupsFor(1024, 1024), 32u);
}

TEST(WorkgroupPolicy, FewLargeItemsGetAWorkgroupEach) {
  EXPECT_EQ(workgroupsFor(3, 1 << 20), 3u);
  EXPECT_EQ(workgroupsFor(5, 1 << 20), 5u);
  // ResNet-18 layer2.0 conv1 (3x3 stride 2, 64 -> 128 at 28x28): 14 pairs of output rows of
  // 128 x 56 x 576 MACs; grouped in 8 workgroups (2, 2, 2, 2, 2, 2, 1, 1) two threads ran 8
  // and 6 items.
  EXPECT_EQ(workgroupsFor(14, 128 * 56 * 576), 14u);
  EXPECT_EQ(workgroupsFor(64, 1 << 20), 64u);
}

TEST(WorkgroupPolicy, TheExtentAndTheMaximumBoundTheCount) {
  EXPECT_EQ(workgroupsFor(65, 1 << 20), kMaxWorkgroups);
  // 12 items, but work for only 6 workgroups of 32 K: grouped, 4 workgroups.
  EXPECT_EQ(workgroupsFor(12, 16384), 4u);
  EXPECT_EQ(workgroupsFor(63, 1 << 15), 63u);        // 32 K each: one per item
  EXPECT_EQ(workgroupsFor(63, (1 << 15) - 1), 56u);  // work for 62: grouped
}

TEST(WorkgroupPolicy, CountsDivideEvenlyOverTwoFourAndEightThreads) {
  for (int64_t extent : {2, 3, 7, 8, 9, 15, 16, 17, 100, 1000, 100000})
    for (int64_t work : {1, 100, 4096, 65536, 1 << 20}) {
      uint32_t n = workgroupsFor(extent, work);
      SCOPED_TRACE(std::to_string(extent) + " x " + std::to_string(work) + " -> " +
                   std::to_string(n));
      EXPECT_GE(n, 1u);
      EXPECT_LE(n, kMaxWorkgroups);
      EXPECT_LE(int64_t(n), extent);
      if (int64_t(n) != extent) {  // (a workgroup per item is as even as it can be)
        if (n >= 8) EXPECT_EQ(n % 8, 0u);
        else EXPECT_TRUE(n == 1 || n == 2 || n == 4);
      }
      if (n > 1) EXPECT_GE(extent * work / n, kWorkPerWorkgroup);
      // Monotonic in the work: more work never means fewer workgroups.
      EXPECT_LE(n, workgroupsFor(extent, work * 2));
    }
}

}  // namespace
}  // namespace kiln::codegen::detail
