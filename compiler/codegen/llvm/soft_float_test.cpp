// The soft-float routines (runtime/soft_float.c) against the host's IEEE-754 hardware:
// random bit patterns of every magnitude (denormals, infinities, NaNs included) and edge cases.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

namespace kiln_soft_float {
#include "runtime/soft_float.c"
}  // namespace kiln_soft_float

namespace {

using namespace kiln_soft_float;

float asFloat(u32 bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
u32 asBits(float f) {
  u32 bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

void expectSame(u32 got, float want, u32 a, u32 b, const char* op) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(asFloat(got))) << op << " " << std::hex << a << " " << b;
  } else {
    EXPECT_EQ(got, asBits(want)) << op << " " << std::hex << a << " " << b << " -> " << got
                                 << " want " << asBits(want);
  }
}

std::vector<u32> samples() {
  std::vector<u32> values = {0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000,
                             0x7fc00000, 0x00000001, 0x807fffff, 0x00800000, 0x7f7fffff, 0xff7fffff,
                             0x4b800000, 0x4f000000, 0xcf000000, 0x33800000, 0x3f7fffff};
  std::mt19937 rng(42);
  for (int i = 0; i < 3000; ++i) values.push_back(rng());
  // Nearby magnitudes exercise cancellation and rounding.
  for (int i = 0; i < 1000; ++i) {
    u32 base = rng() & 0x7fffffffu;
    values.push_back(base);
    values.push_back((base + (rng() & 0xff)) | (rng() & 0x80000000u));
  }
  return values;
}

TEST(SoftFloat, ArithmeticMatchesHardware) {
  std::vector<u32> v = samples();
  std::mt19937 rng(7);
  for (int i = 0; i < 40000; ++i) {
    u32 a = v[rng() % v.size()], b = v[rng() % v.size()];
    float fa = asFloat(a), fb = asFloat(b);
    expectSame(__addsf3(a, b), fa + fb, a, b, "add");
    expectSame(__subsf3(a, b), fa - fb, a, b, "sub");
    expectSame(__mulsf3(a, b), fa * fb, a, b, "mul");
    expectSame(__divsf3(a, b), fa / fb, a, b, "div");
    EXPECT_EQ(__aeabi_fcmplt(a, b), fa < fb ? 1 : 0);
    EXPECT_EQ(__aeabi_fcmpeq(a, b), fa == fb ? 1 : 0);
    EXPECT_EQ(__aeabi_fcmpge(a, b), fa >= fb ? 1 : 0);
    EXPECT_EQ(__aeabi_fcmpun(a, b), (std::isnan(fa) || std::isnan(fb)) ? 1 : 0);
    EXPECT_EQ(__ltsf2(a, b) < 0, fa < fb);
    EXPECT_EQ(__lesf2(a, b) <= 0, fa <= fb);
    EXPECT_EQ(__gtsf2(a, b) > 0, fa > fb);
    EXPECT_EQ(__gesf2(a, b) >= 0, fa >= fb);
    EXPECT_EQ(__eqsf2(a, b) == 0, fa == fb);
    EXPECT_EQ(__nesf2(a, b) != 0, fa != fb);
    if (HasFailure()) return;
  }
}

TEST(SoftFloat, ConversionsMatchHardware) {
  std::mt19937 rng(9);
  for (int i = 0; i < 20000; ++i) {
    i32 x = static_cast<i32>(rng()) >> (rng() % 32);
    expectSame(__floatsisf(x), static_cast<float>(x), static_cast<u32>(x), 0, "i2f");
    u32 ux = rng() >> (rng() % 32);
    expectSame(__floatunsisf(ux), static_cast<float>(ux), ux, 0, "u2f");
    float f = asFloat(rng());
    if (std::isfinite(f) && std::fabs(f) < 2.0e9f) {
      EXPECT_EQ(__fixsfsi(asBits(f)), static_cast<i32>(f)) << f;
    }
    if (std::isfinite(f) && f >= 0 && f < 4.0e9f) {
      EXPECT_EQ(__fixunssfsi(asBits(f)), static_cast<u32>(f)) << f;
    }
    if (HasFailure()) return;
  }
  EXPECT_EQ(__fixsfsi(asBits(3e10f)), 0x7fffffff);
  EXPECT_EQ(__fixsfsi(asBits(-3e10f)), static_cast<i32>(0x80000000u));
  EXPECT_EQ(__fixsfsi(0x7fc00000u), 0);
}

}  // namespace
