// Tests for the per-dispatch profile of `kiln bench --per-dispatch` on synthetic trace
// records (no clock involved) and for the cost text it prints.
#include "dispatch_profile.h"

#include <gtest/gtest.h>

#include "cost_text.h"

namespace kiln::cli {
namespace {

TEST(CostText, UnitsAndPrefixes) {
  EXPECT_EQ(costText(KILN_COST_FLOPS, 9216), "9.22 kFLOP");
  EXPECT_EQ(costText(KILN_COST_FLOPS, 147456), "147 kFLOP");
  EXPECT_EQ(costText(KILN_COST_FLOPS, 231211008), "231 MFLOP");
  EXPECT_EQ(costText(KILN_COST_INT_OPS, 12), "12 op");
  EXPECT_EQ(costText(KILN_COST_INT_OPS, 4500000000ull), "4.50 Gop");
  EXPECT_EQ(costText(KILN_COST_ELEMENTS, 1024), "1.02 k elements");
  EXPECT_EQ(costText(KILN_COST_NONE, 0), "-");
  EXPECT_STREQ(costKindName(KILN_COST_INT_OPS), "int_ops");
  EXPECT_STREQ(throughputUnit(KILN_COST_FLOPS), "GFLOP/s");
}

// Dispatches 3..5 of a function, three calls with fixed times.
DispatchProfile threeCalls() {
  DispatchProfile p(3, 3);
  const uint64_t ns[3][3] = {{1000, 4000, 500}, {3000, 2000, 500}, {2000, 6000, 500}};
  for (const auto& call : ns) {
    for (uint32_t i = 0; i < 3; ++i) p.record(3 + i, 10 + i, call[i]);
    EXPECT_TRUE(p.endCall());
  }
  return p;
}

TEST(DispatchProfile, MediansSharesAndThroughput) {
  DispatchProfile p = threeCalls();
  EXPECT_EQ(p.calls(), 3u);
  std::vector<DispatchInfo> infos = {{"Conv+Relu", "c1 (Conv)", KILN_COST_FLOPS, 4000000, 8},
                                     {"MaxPool", "p (MaxPool)", KILN_COST_ELEMENTS, 8000},
                                     {"Transpose", "t (Transpose)", KILN_COST_NONE, 0}};
  ProfileReport r = buildProfileReport(p, infos, true, 100.0);
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.rows[0].index, 3u);
  EXPECT_EQ(r.rows[2].kernel, 12u);
  EXPECT_DOUBLE_EQ(r.rows[0].medianUs, 2.0);
  EXPECT_DOUBLE_EQ(r.rows[0].minUs, 1.0);
  EXPECT_DOUBLE_EQ(r.rows[1].medianUs, 4.0);
  EXPECT_DOUBLE_EQ(r.sumMedianUs, 6.5);
  EXPECT_DOUBLE_EQ(r.rows[1].share, 4.0 / 6.5);
  // 4 MFLOP in 2 us = 2000 GFLOP/s = 2000 % of a 100 GFLOP/s peak.
  EXPECT_DOUBLE_EQ(r.rows[0].throughput, 2000.0);
  ASSERT_TRUE(r.rows[0].percentPeak.has_value());
  EXPECT_DOUBLE_EQ(*r.rows[0].percentPeak, 2000.0);
  EXPECT_FALSE(r.rows[1].percentPeak.has_value());  // elements: no FLOP peak
  EXPECT_DOUBLE_EQ(r.rows[1].throughput, 2.0);      // 8000 elements in 4 us
  EXPECT_EQ(r.totalFlops, 4000000u);
  EXPECT_EQ(r.top, (std::vector<size_t>{1, 0, 2}));

  std::string text = profileText(r);
  EXPECT_NE(text.find("4.00 MFLOP"), std::string::npos) << text;
  EXPECT_NE(text.find("      3     10    8       2.00       1.00  30.8%"), std::string::npos)
      << text;
  EXPECT_NE(text.find("2000.00 GFLOP/s"), std::string::npos) << text;
  EXPECT_NE(text.find("Conv+Relu  <- c1 (Conv)"), std::string::npos) << text;
  EXPECT_NE(text.find("top 3 by time:\n    1. #4 "), std::string::npos) << text;

  JsonWriter j;
  j.beginObject();
  writeProfileJson(j, r);
  j.endObject();
  EXPECT_NE(j.text().find("\"top\":[4,3,5]"), std::string::npos) << j.text();
  EXPECT_NE(j.text().find("{\"index\":3,\"kernel\":10,\"workgroups\":8,\"name\":"),
            std::string::npos) << j.text();
  EXPECT_NE(j.text().find("\"cost_kind\":\"flops\",\"cost\":4000000,"), std::string::npos)
      << j.text();
}

TEST(DispatchProfile, IncompleteCallIsDropped) {
  DispatchProfile p(0, 2);
  p.record(0, 0, 100);
  EXPECT_FALSE(p.endCall());
  EXPECT_EQ(p.calls(), 0u);
  p.record(7, 0, 100);  // not this function's dispatch: ignored
  p.record(0, 0, 100);
  p.record(1, 1, 200);
  EXPECT_TRUE(p.endCall());
  EXPECT_EQ(p.calls(), 1u);
}

TEST(DispatchProfile, StrippedArtifactHasTimesOnly) {
  ProfileReport r = buildProfileReport(threeCalls(), {}, false, std::nullopt);
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_TRUE(r.rows[0].info.name.empty());
  EXPECT_EQ(r.totalFlops, 0u);
  JsonWriter j;
  j.beginObject();
  writeProfileJson(j, r);
  j.endObject();
  EXPECT_EQ(j.text().find("cost_kind"), std::string::npos) << j.text();
  EXPECT_NE(j.text().find("\"costs_available\":false"), std::string::npos) << j.text();
}

}  // namespace
}  // namespace kiln::cli
