// Bit-exact f16 <-> f32 conversion (handles subnormals, infinities and NaN payloads).
#include "kiln/support/half.h"

#include <cstring>

namespace kiln {

float halfToFloat(uint16_t h) {
  uint32_t sign = (uint32_t(h) & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {  // inf or NaN
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {  // normal
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {  // zero
    bits = sign;
  } else {  // subnormal: normalise
    int shift = 0;
    while ((mantissa & 0x400) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    mantissa &= 0x3ff;
    bits = sign | (uint32_t(113 - shift) << 23) | (mantissa << 13);
  }
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

uint16_t floatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  uint32_t exponent = (bits >> 23) & 0xff;
  uint32_t mantissa = bits & 0x7fffff;
  if (exponent == 0xff) {  // inf or NaN (keep a quiet NaN bit)
    return uint16_t(sign | 0x7c00u | (mantissa ? (0x200u | (mantissa >> 13)) : 0u));
  }
  int32_t e = int32_t(exponent) - 127 + 15;
  if (e >= 0x1f) return uint16_t(sign | 0x7c00u);  // overflow -> inf
  if (e <= 0) {                                    // subnormal or zero in f16
    if (e < -10) return sign;
    mantissa |= 0x800000u;
    uint32_t shift = uint32_t(14 - e);
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = (uint32_t(e) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;  // may carry into inf: correct
  return uint16_t(sign | half);
}

}  // namespace kiln
