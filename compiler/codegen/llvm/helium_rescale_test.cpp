// The identity the Helium rescale (qMultiplyLanesHelium in emit_quantized_fixedpoint.cpp)
// rests on, checked against TFLite's MultiplyByQuantizedMultiplier written out independently
// (quantized_reference.h): VQRDMULH, then VQADD of (h & -r) >> 31 (h - 1 for negative h when
// r > 0), then VRSHL.S32 by -r. The instructions are modelled from their Armv8.1-M
// definitions (saturating doubling high multiply with rounding; rounding shift right computed
// without overflow); the kernels themselves run byte-exact on QEMU's Cortex-M55
// (`ctest -L mcu -R m55`).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "quantized_reference.h"

namespace kiln::codegen::testing {
namespace {

int32_t saturate(int64_t v) {
  return int32_t(std::min<int64_t>(std::max<int64_t>(v, INT32_MIN), INT32_MAX));
}
// VQRDMULH.S32: SignedSat((2 a b + 2^31) >> 32).
int32_t vqrdmulh(int32_t a, int32_t b) {
  __int128 v = (__int128(2) * a * b + (__int128(1) << 31)) >> 32;
  return v > INT32_MAX ? INT32_MAX : int32_t(v);
}
// VRSHL.S32 by a negative amount -r: (x + 2^(r-1)) >> r, exact; by 0 it is x.
int32_t vrshlRight(int32_t x, int r) {
  if (r == 0) return x;
  return int32_t((int64_t(x) + (int64_t(1) << (r - 1))) >> r);
}
int32_t heliumRescale(int32_t x, int32_t m, int shift) {
  int32_t a = shift > 0 ? int32_t(uint32_t(x) << shift) : x;
  int32_t negRight = shift > 0 ? 0 : shift;
  int32_t h = vqrdmulh(a, m);
  int32_t minusOne = (h & negRight) >> 31;
  return vrshlRight(saturate(int64_t(h) + minusOne), -negRight);
}

TEST(HeliumRescale, MatchesTfliteOnEdgesAndTies) {
  std::vector<int32_t> xs = {INT32_MIN, INT32_MIN + 1, -65536,        -3,       -2, -1, 0, 1, 2,
                             3,         65535,         INT32_MAX - 1, INT32_MAX};
  const std::vector<int32_t> ms = {INT32_MIN,         INT32_MIN + 1, 1 << 30,
                                   (1 << 30) + 12345, INT32_MAX,     1518500250};
  for (int shift = -31; shift <= 4; ++shift) {
    for (int32_t m : ms) {
      for (int32_t x : xs) {
        ASSERT_EQ(heliumRescale(x, m, shift), refMbqm(x, m, shift))
            << "x " << x << " m " << m << " shift " << shift;
      }
      // Ties of the final rounding: srdhm values of (2k + 1) 2^(r - 1), both signs, with
      // m = INT32_MAX (srdhm(x, INT32_MAX) = x for |x| < 2^30).
      if (shift < 0 && m == INT32_MAX) {
        const int r = -shift;
        for (int64_t k = -4; k <= 4; ++k) {
          int64_t tie = (2 * k + 1) * (int64_t(1) << (r - 1));
          if (tie < -(int64_t(1) << 30) || tie >= (int64_t(1) << 30)) continue;
          ASSERT_EQ(heliumRescale(int32_t(tie), m, shift), refMbqm(int32_t(tie), m, shift))
              << "tie " << tie << " shift " << shift;
        }
      }
    }
  }
}

TEST(HeliumRescale, MatchesTfliteOnRandomValues) {
  std::mt19937_64 rng(20261206);
  std::uniform_int_distribution<int32_t> any(INT32_MIN, INT32_MAX);
  std::uniform_int_distribution<int32_t> small(-(1 << 20), 1 << 20);
  std::uniform_int_distribution<int32_t> multiplier(1 << 30, INT32_MAX);
  std::uniform_int_distribution<int> shifts(-31, 2);
  for (int i = 0; i < 200000; ++i) {
    int32_t x = i % 2 ? any(rng) : small(rng);
    int32_t m = multiplier(rng);
    int shift = shifts(rng);
    ASSERT_EQ(heliumRescale(x, m, shift), refMbqm(x, m, shift))
        << "x " << x << " m " << m << " shift " << shift;
  }
}

}  // namespace
}  // namespace kiln::codegen::testing
