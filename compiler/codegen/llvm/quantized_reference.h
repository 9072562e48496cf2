// TFLite's fixed-point rescale written out independently for the quantized kernel tests
// (quantized_*_test.cpp): SaturatingRoundingDoublingHighMul in 128-bit arithmetic,
// RoundingDivideByPOT as rounding of magnitudes, MultiplyByQuantizedMultiplier (32- and
// 64-bit accumulators) and the activation clamp.
#pragma once

#include <algorithm>
#include <cstdint>

namespace kiln::codegen::testing {

// SaturatingRoundingDoublingHighMul = round-half-up of a*b / 2^31, saturated.
inline int32_t refSrdhm(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  __int128 p = __int128(a) * b;
  __int128 num = 2 * p + (__int128(1) << 31);  // floor((2ab + 2^31) / 2^32)
  __int128 q = num >= 0 ? num >> 32 : -((-num + ((__int128(1) << 32) - 1)) >> 32);
  return int32_t(q);
}
// RoundingDivideByPOT = x / 2^e rounded to nearest, ties away from zero.
inline int32_t refRdivpot(int32_t x, int e) {
  int64_t ax = x < 0 ? -int64_t(x) : x;
  int64_t r = (ax + (e > 0 ? (int64_t(1) << (e - 1)) : 0)) >> e;
  return int32_t(x < 0 ? -r : r);
}
inline int32_t refMbqm(int32_t x, int32_t m, int shift) {
  int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  return refRdivpot(refSrdhm(int32_t(uint32_t(x) << left), m), right);
}
inline int32_t refMbqm64(int64_t x, int32_t m, int shift) {
  int32_t reduced = m < 0x7FFF0000 ? (m + (1 << 15)) >> 16 : 0x7FFF;
  int total = 15 - shift;
  __int128 v = __int128(x) * reduced + (__int128(1) << (total - 1));
  return int32_t(int64_t(v >> total));
}
inline int32_t clampTo(int32_t v, int32_t lo, int32_t hi) { return std::min(std::max(v, lo), hi); }

}  // namespace kiln::codegen::testing
