// Compile-time helpers of the quantized ops: TFLite's QuantizeMultiplier and activation
// ranges, plus scalar C++ versions of the fixed-point primitives (TFLite common.h /
// gemmlowp) with exactly the integer semantics the generated kernels implement. Codegen uses
// them to derive multipliers and to build lookup tables; the importer for fused activations.
// docs/quantization.md states every formula.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/ir/dtype.h"
#include "kiln/ir/type.h"

namespace kiln::ir {

// A real multiplier as a Q0.31 significand and a power-of-two exponent:
// real ~= multiplier * 2^(shift - 31).
struct QuantizedMultiplier {
  int32_t multiplier = 0;
  int32_t shift = 0;
};

// TFLite's QuantizeMultiplier (frexp, round half away from zero, 2^31 -> 2^30 with shift+1,
// shift < -31 flushes to zero).
QuantizedMultiplier quantizeMultiplier(double real);
// TFLite's QuantizeMultiplierGreaterThanOne (asserts shift >= 0).
QuantizedMultiplier quantizeMultiplierGreaterThanOne(double real);

// TFLite fused activations.
enum class FusedActivation { None, Relu, ReluN1To1, Relu6 };

// TFLite's CalculateActivationRangeQuantized for an i8 or i16 result with scale/zero point.
struct ActivationRange {
  int32_t min = 0, max = 0;
};
ActivationRange activationRange(FusedActivation act, DType dtype, float scale, int32_t zeroPoint);

// The dtype's value range (i8, i16, i32).
ActivationRange dtypeRange(DType dtype);

// ---- scalar fixed-point primitives (reference semantics) ----
int32_t saturatingRoundingDoublingHighMul(int32_t a, int32_t b);
int32_t roundingDivideByPOT(int32_t x, int exponent);
int32_t multiplyByQuantizedMultiplier(int32_t x, int32_t multiplier, int shift);
int32_t multiplyByQuantizedMultiplier64(int64_t x, int32_t multiplier, int shift);
// gemmlowp's exp_on_negative_values for a Q(integerBits).(31-integerBits) input <= 0,
// result Q0.31; the Q5.26 case is the int8 softmax's.
int32_t expOnNegativeValues(int32_t a, int integerBits);
int32_t expOnNegativeValuesQ5(int32_t a);
// gemmlowp's one_over_one_plus_x_for_x_in_0_1 (Q0.31 in and out).
int32_t oneOverOnePlusXForXIn01(int32_t a);
// gemmlowp's logistic and tanh of a Q(integerBits) value, result Q0.31.
int32_t logisticFixedPoint(int32_t a, int integerBits);
int32_t tanhFixedPoint(int32_t a, int integerBits);

// TFLM's int8 LOGISTIC (result scale 1/256, zero point -128) and TANH (1/128, 0) as tables of
// the 256 results, indexed by x + 128.
std::vector<int32_t> int8LogisticTable(float inputScale, int32_t inputZeroPoint);
std::vector<int32_t> int8TanhTable(float inputScale, int32_t inputZeroPoint);
// TFLM's int8 HARD_SWISH (16-bit fixed-point reference kernel) as the same kind of table.
std::vector<int32_t> int8HardSwishTable(float inputScale, int32_t inputZeroPoint, float outputScale,
                                        int32_t outputZeroPoint);

}  // namespace kiln::ir
