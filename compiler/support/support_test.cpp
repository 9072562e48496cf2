// Tests for kiln_support: CompileError, f16 conversion, float formatting, hashing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "kiln/support/diagnostics.h"
#include "kiln/support/half.h"
#include "kiln/support/strings.h"

namespace kiln {
namespace {

TEST(Diagnostics, CompileErrorIsRuntimeErrorWithMessage) {
  try {
    throw CompileError("model.onnx: node 'conv1' (Conv): bad pads");
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "model.onnx: node 'conv1' (Conv): bad pads");
  }
}

TEST(Diagnostics, AssertAbortsWithMessage) {
  EXPECT_DEATH(KILN_ASSERT(1 + 1 == 3, "arithmetic"),
               "assertion `1 \\+ 1 == 3` failed: arithmetic");
}

TEST(Half, KnownValues) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(1e6f), 0x7c00);                    // overflow -> inf
  EXPECT_EQ(floatToHalf(5.960464477539063e-08f), 0x0001);  // smallest subnormal
  EXPECT_EQ(floatToHalf(1.0009765625f), 0x3c01);           // 1 + 2^-10
  EXPECT_EQ(floatToHalf(1.00048828125f), 0x3c00);          // halfway, ties to even (down)
  EXPECT_EQ(floatToHalf(1.00146484375f), 0x3c02);          // halfway, ties to even (up)
  EXPECT_FLOAT_EQ(halfToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(halfToFloat(0x0001), 5.960464477539063e-08f);
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
}

TEST(Half, AllHalvesRoundTrip) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = halfToFloat(uint16_t(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(floatToHalf(f), h) << h;
  }
}

TEST(Strings, FormatFloatRoundTripsAndLooksLikeAFloat) {
  EXPECT_EQ(formatFloat(1.0f), "1.0");
  EXPECT_EQ(formatFloat(0.1f), "0.1");
  EXPECT_EQ(formatFloat(-2.5f), "-2.5");
  EXPECT_EQ(formatFloat(1e-7f), "1e-07");
  EXPECT_EQ(formatFloat(INFINITY), "inf");
  float tricky = 0.33333334f;
  EXPECT_EQ(std::stof(formatFloat(tricky)), tricky);
}

TEST(Strings, JoinAndAlign) {
  std::vector<int64_t> dims = {1, 3, 224, 224};
  EXPECT_EQ(joinInts(dims, "x"), "1x3x224x224");
  EXPECT_EQ(alignUp(65, 64), 128u);
  EXPECT_EQ(alignUp(64, 64), 64u);
  EXPECT_EQ(alignUp(0, 64), 0u);
}

TEST(Strings, Fnv1aKnownVector) {
  EXPECT_EQ(fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("", 0), 0xcbf29ce484222325ull);
}

}  // namespace
}  // namespace kiln
