// TFLite's compile-time quantization arithmetic (QuantizeMultiplier, activation ranges) and
// scalar versions of the fixed-point primitives (TFLite common.h, gemmlowp fixedpoint.h),
// written from their documented formulas (docs/quantization.md).
#include "kiln/ir/quant_math.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/support/diagnostics.h"

namespace kiln::ir {

QuantizedMultiplier quantizeMultiplier(double real) {
  QuantizedMultiplier r;
  if (real == 0.0) return r;
  int shift = 0;
  const double q = std::frexp(real, &shift);
  auto fixed = static_cast<int64_t>(std::round(q * double(int64_t{1} << 31)));
  KILN_ASSERT(fixed <= (int64_t{1} << 31), "QuantizeMultiplier significand overflow");
  if (fixed == (int64_t{1} << 31)) {
    fixed /= 2;
    ++shift;
  }
  KILN_ASSERT(fixed <= std::numeric_limits<int32_t>::max(), "QuantizeMultiplier significand overflow");
  if (shift < -31) {
    shift = 0;
    fixed = 0;
  }
  r.multiplier = static_cast<int32_t>(fixed);
  r.shift = shift;
  return r;
}

QuantizedMultiplier quantizeMultiplierGreaterThanOne(double real) {
  QuantizedMultiplier r = quantizeMultiplier(real);
  KILN_ASSERT(r.shift >= 0, "multiplier below one where TFLite expects one above");
  return r;
}

ActivationRange dtypeRange(DType dtype) {
  switch (dtype) {
    case DType::I8:
      return {-128, 127};
    case DType::U8:
      return {0, 255};
    case DType::I16:
      return {-32768, 32767};
    default:
      return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
  }
}

ActivationRange activationRange(FusedActivation act, DType dtype, float scale, int32_t zeroPoint) {
  ActivationRange r = dtypeRange(dtype);
  auto quantize = [&](float f) {
    const float t = std::round(f / scale);
    return zeroPoint + static_cast<int32_t>(t);
  };
  switch (act) {
    case FusedActivation::None:
      break;
    case FusedActivation::Relu:
      r.min = std::max(r.min, quantize(0.0f));
      break;
    case FusedActivation::Relu6:
      r.min = std::max(r.min, quantize(0.0f));
      r.max = std::min(r.max, quantize(6.0f));
      break;
    case FusedActivation::ReluN1To1:
      r.min = std::max(r.min, quantize(-1.0f));
      r.max = std::min(r.max, quantize(1.0f));
      break;
  }
  return r;
}

int32_t saturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
  const bool overflow = a == b && a == std::numeric_limits<int32_t>::min();
  const int64_t ab = int64_t{a} * int64_t{b};
  const int32_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
  const int32_t high = static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));
  return overflow ? std::numeric_limits<int32_t>::max() : high;
}

int32_t roundingDivideByPOT(int32_t x, int exponent) {
  const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

int32_t multiplyByQuantizedMultiplier(int32_t x, int32_t multiplier, int shift) {
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  const int32_t shifted = static_cast<int32_t>(static_cast<uint32_t>(x) << left);
  return roundingDivideByPOT(saturatingRoundingDoublingHighMul(shifted, multiplier), right);
}

int32_t multiplyByQuantizedMultiplier64(int64_t x, int32_t multiplier, int shift) {
  const int32_t reduced = multiplier < 0x7FFF0000 ? (multiplier + (1 << 15)) >> 16 : 0x7FFF;
  const int totalShift = 15 - shift;
  const int64_t sum = x * int64_t{reduced} + (int64_t{1} << (totalShift - 1));
  return static_cast<int32_t>(sum >> totalShift);
}

namespace {

// gemmlowp's SaturatingRoundingMultiplyByPOT for 32-bit raw values.
int32_t saturatingRoundingMultiplyByPOT(int32_t x, int exponent) {
  if (exponent == 0) return x;
  if (exponent < 0) return roundingDivideByPOT(x, -exponent);
  const int32_t threshold = (1 << (31 - exponent)) - 1;
  if (x > threshold) return std::numeric_limits<int32_t>::max();
  if (x < -threshold) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(static_cast<uint32_t>(x) << exponent);
}

int32_t mul(int32_t a, int32_t b) { return saturatingRoundingDoublingHighMul(a, b); }
int32_t add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
int32_t sub(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}

// exp(x) for x in [-1/4, 0), Q0.31 in and out.
int32_t expOnQuarterInterval(int32_t a) {
  const int32_t constantTerm = 1895147668;  // exp(-1/8)
  const int32_t oneThird = 715827883;
  const int32_t x = add(a, 1 << 28);  // a + 1/8
  const int32_t x2 = mul(x, x);
  const int32_t x3 = mul(x2, x);
  const int32_t x4 = mul(x2, x2);
  const int32_t x4Over4 = saturatingRoundingMultiplyByPOT(x4, -2);
  const int32_t poly = saturatingRoundingMultiplyByPOT(add(mul(add(x4Over4, x3), oneThird), x2), -1);
  return add(constantTerm, mul(constantTerm, add(x, poly)));
}

}  // namespace

int32_t expOnNegativeValues(int32_t a, int integerBits) {
  const int fractionalBits = 31 - integerBits;
  const int32_t oneQuarter = 1 << (fractionalBits - 2);
  const int32_t mask = oneQuarter - 1;
  const int32_t aModQuarterMinusQuarter = sub(a & mask, oneQuarter);
  int32_t result =
      expOnQuarterInterval(saturatingRoundingMultiplyByPOT(aModQuarterMinusQuarter, integerBits));
  const int32_t remainder = sub(aModQuarterMinusQuarter, a);
  struct Step {
    int exponent;
    int32_t multiplier;
  };
  constexpr Step kSteps[] = {{-2, 1672461947}, {-1, 1302514674}, {0, 790015084}, {1, 290630308},
                             {2, 39332535},    {3, 720401},      {4, 242}};
  for (const Step& s : kSteps) {
    if (integerBits > s.exponent) {
      const int shiftAmount = fractionalBits + s.exponent;
      if (remainder & (1 << shiftAmount)) result = mul(result, s.multiplier);
    }
  }
  if (integerBits > 5) {
    const int32_t clamp = -(1 << (36 - integerBits));  // -32 in Q(integerBits)
    if (a < clamp) result = 0;
  }
  if (a == 0) result = std::numeric_limits<int32_t>::max();
  return result;
}

int32_t expOnNegativeValuesQ5(int32_t a) { return expOnNegativeValues(a, 5); }

namespace {

// The Newton-Raphson iterate of 1 / (1 + a) shared by gemmlowp's reciprocal and tanh (Q2.29).
int32_t newtonReciprocalQ2(int32_t a) {
  // half_denominator = RoundingHalfSum(a, One) with One = INT32_MAX in Q0.31.
  const int64_t sum = int64_t{a} + int64_t{std::numeric_limits<int32_t>::max()};
  const int64_t sign = sum >= 0 ? 1 : -1;
  const int32_t halfDenominator = static_cast<int32_t>((sum + sign) / 2);
  const int32_t c48Over17 = 1515870810;      // Q2.29
  const int32_t cNeg32Over17 = -1010580540;  // Q2.29
  const int32_t oneQ2 = 1 << 29;
  int32_t x = add(c48Over17, mul(halfDenominator, cNeg32Over17));
  for (int i = 0; i < 3; ++i) {
    const int32_t halfDenominatorTimesX = mul(halfDenominator, x);
    const int32_t oneMinus = sub(oneQ2, halfDenominatorTimesX);
    x = add(x, saturatingRoundingMultiplyByPOT(mul(x, oneMinus), 2));
  }
  return x;
}

}  // namespace

int32_t oneOverOnePlusXForXIn01(int32_t a) {
  // ExactMulByPot<-1> keeps the raw value (Q1.30); Rescale<0> multiplies by 2^1.
  return saturatingRoundingMultiplyByPOT(newtonReciprocalQ2(a), 1);
}

int32_t logisticFixedPoint(int32_t a, int integerBits) {
  if (a == 0) return 1 << 30;
  const bool positive = a > 0;
  const int32_t absInput = positive ? a : sub(0, a);
  const int32_t ifPositive = oneOverOnePlusXForXIn01(expOnNegativeValues(sub(0, absInput), integerBits));
  return positive ? ifPositive : sub(std::numeric_limits<int32_t>::max(), ifPositive);
}

int32_t tanhFixedPoint(int32_t a, int integerBits) {
  if (a == 0) return 0;
  const bool negative = a < 0;
  const int32_t n = negative ? a : sub(0, a);
  // ExactMulByPot<1>: the same raw value read with one more integer bit, i.e. 2n.
  const int32_t e = expOnNegativeValues(n, integerBits + 1);
  // one_minus_x_over_one_plus_x_for_x_in_0_1: Rescale<0>(x - One) from Q2.29.
  const int32_t t = saturatingRoundingMultiplyByPOT(sub(newtonReciprocalQ2(e), 1 << 29), 2);
  return negative ? sub(0, t) : t;
}

namespace {

// TFLM's int8 LOGISTIC/TANH input rescale: frexp of scale * 2^27 (no 2^31 fix-up) and the
// input radius beyond which the result saturates.
struct Int8ActivationParams {
  int32_t multiplier = 0;
  int leftShift = 0;
  int32_t radius = 0;
};

Int8ActivationParams int8ActivationParams(float inputScale) {
  constexpr int kInputIntegerBits = 4;
  Int8ActivationParams p;
  const double real = double(inputScale) * double(1 << (31 - kInputIntegerBits));
  const double q = std::frexp(real, &p.leftShift);
  p.multiplier = static_cast<int32_t>(static_cast<int64_t>(std::round(q * double(int64_t{1} << 31))));
  const double maxInputRescaled = 1.0 * double((1 << kInputIntegerBits) - 1) *
                                  double(int64_t{1} << (31 - kInputIntegerBits)) /
                                  double(int64_t{1} << p.leftShift);
  p.radius = static_cast<int32_t>(std::floor(maxInputRescaled));
  return p;
}

}  // namespace

std::vector<int32_t> int8LogisticTable(float inputScale, int32_t inputZeroPoint) {
  const Int8ActivationParams p = int8ActivationParams(inputScale);
  std::vector<int32_t> table;
  for (int32_t x = -128; x <= 127; ++x) {
    const int32_t input = x - inputZeroPoint;
    int32_t y;
    if (input <= -p.radius) {
      y = -128;
    } else if (input >= p.radius) {
      y = 127;
    } else {
      const int32_t inQ4 = multiplyByQuantizedMultiplier(input, p.multiplier, p.leftShift);
      const int32_t outQ0 = logisticFixedPoint(inQ4, 4);
      y = std::clamp(roundingDivideByPOT(outQ0, 31 - 8) - 128, -128, 127);
    }
    table.push_back(y);
  }
  return table;
}

std::vector<int32_t> int8TanhTable(float inputScale, int32_t inputZeroPoint) {
  const Int8ActivationParams p = int8ActivationParams(inputScale);
  std::vector<int32_t> table;
  for (int32_t x = -128; x <= 127; ++x) {
    const int32_t input = x - inputZeroPoint;
    int32_t y;
    if (input <= -p.radius) {
      y = -128;
    } else if (input >= p.radius) {
      y = 127;
    } else {
      const int32_t inQ4 = multiplyByQuantizedMultiplier(input, p.multiplier, p.leftShift);
      const int32_t outQ0 = tanhFixedPoint(inQ4, 4);
      y = std::clamp(roundingDivideByPOT(outQ0, 31 - 7), -128, 127);
    }
    table.push_back(y);
  }
  return table;
}

namespace {

// gemmlowp's 16-bit SaturatingRoundingDoublingHighMul and RoundingDivideByPOT.
int16_t srdhm16(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min()) return std::numeric_limits<int16_t>::max();
  const int32_t ab = int32_t{a} * int32_t{b};
  const int16_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return static_cast<int16_t>((ab + nudge) / (1 << 15));
}

int16_t roundingDivideByPOT16(int16_t x, int exponent) {
  const int16_t mask = static_cast<int16_t>((int64_t{1} << exponent) - 1);
  const int16_t remainder = static_cast<int16_t>(x & mask);
  const int16_t threshold = static_cast<int16_t>((mask >> 1) + (x < 0 ? 1 : 0));
  return static_cast<int16_t>((x >> exponent) + (remainder > threshold ? 1 : 0));
}

// TFLite's SaturatingDoublingHighMul (16-bit, rounding toward zero) and SaturatingLeftShift.
int16_t sdhm16(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min()) return std::numeric_limits<int16_t>::max();
  return static_cast<int16_t>((int32_t{a} * int32_t{b}) / (1 << 15));
}

int16_t saturatingLeftShift16(int16_t value, int amount) {
  const int64_t result = int64_t{value} * (int64_t{1} << amount);
  return static_cast<int16_t>(std::clamp<int64_t>(result, INT16_MIN, INT16_MAX));
}

int16_t downScaleToInt16(int32_t multiplier) {
  constexpr int32_t kRoundingOffset = 1 << 15;
  if (multiplier >= std::numeric_limits<int32_t>::max() - kRoundingOffset) return INT16_MAX;
  return static_cast<int16_t>((multiplier + kRoundingOffset) >> 16);
}

}  // namespace

std::vector<int32_t> int8HardSwishTable(float inputScale, int32_t inputZeroPoint, float outputScale,
                                        int32_t outputZeroPoint) {
  const float hiresInputScale = (1.0f / 128.0f) * inputScale;
  const float reluishScale = 3.0f / 32768.0f;
  const QuantizedMultiplier out = quantizeMultiplier(double(hiresInputScale / outputScale));
  const QuantizedMultiplier reluish = quantizeMultiplier(double(hiresInputScale / reluishScale));
  const int16_t outM = downScaleToInt16(out.multiplier);
  const int16_t reluishM = downScaleToInt16(reluish.multiplier);
  std::vector<int32_t> table;
  for (int32_t x = -128; x <= 127; ++x) {
    const int16_t inputValue = static_cast<int16_t>(x - inputZeroPoint);
    const int16_t hires = static_cast<int16_t>(inputValue * (1 << 7));
    const int16_t preshiftOutput = srdhm16(hires, outM);
    int16_t reluishValue = hires;
    if (reluish.shift > 0) reluishValue = saturatingLeftShift16(reluishValue, reluish.shift - 1);
    reluishValue = srdhm16(reluishValue, reluishM);
    if (reluish.shift > 0) reluishValue = saturatingLeftShift16(reluishValue, 1);
    if (reluish.shift < 0) reluishValue = roundingDivideByPOT16(reluishValue, -reluish.shift);
    reluishValue = static_cast<int16_t>((reluishValue + (1 << 15)) >> 1);
    const int16_t preshift = sdhm16(reluishValue, preshiftOutput);
    int16_t y = roundingDivideByPOT16(preshift, -out.shift);
    y = static_cast<int16_t>(y + outputZeroPoint);
    table.push_back(std::clamp<int32_t>(y, -128, 127));
  }
  return table;
}

}  // namespace kiln::ir
