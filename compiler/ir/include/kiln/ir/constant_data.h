// Reading and writing constant tensor elements of any dtype, for passes (constant folding,
// BatchNorm folding) and for codegen reading static operands (shapes, axes, pads).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kiln/ir/dtype.h"
#include "kiln/ir/type.h"

namespace kiln::ir {

class Value;

// Element `index` of a buffer of `dtype`, converted to double / int64 (floats truncate
// toward zero when read as int; bool reads 0/1).
double readElementDouble(DType dtype, const uint8_t* data, int64_t index);
int64_t readElementInt(DType dtype, const uint8_t* data, int64_t index);
// Stores `value` converted to `dtype` (float->int truncates toward zero and wraps like a C
// cast of the truncated value; to bool: value != 0; to f16: round to nearest even).
void writeElementDouble(DType dtype, uint8_t* data, int64_t index, double value);
void writeElementInt(DType dtype, uint8_t* data, int64_t index, int64_t value);

// All elements of a constant value (asserts value->isConstant()).
std::vector<int64_t> constantInts(const Value* value);
std::vector<double> constantDoubles(const Value* value);
// True if `value` is a constant (an absent operand, nullptr, is not).
bool isConstantValue(const Value* value);

// Bytes of a tensor of `type` holding `values` (numElements() entries, or one entry = splat).
std::vector<uint8_t> makeConstantBytes(const TensorType& type, std::span<const double> values);
std::vector<uint8_t> makeConstantBytesInt(const TensorType& type, std::span<const int64_t> values);

// True if every element of the constant equals the first (a splat).
bool isSplatConstant(const Value* value);

}  // namespace kiln::ir
