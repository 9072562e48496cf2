// Element access for constant tensors of every dtype.
#include "kiln/ir/constant_data.h"

#include <cmath>
#include <cstring>

#include "kiln/ir/value.h"
#include "kiln/support/diagnostics.h"
#include "kiln/support/half.h"

namespace kiln::ir {
namespace {

template <typename T>
T load(const uint8_t* data, int64_t index) {
  T v;
  std::memcpy(&v, data + index * int64_t(sizeof(T)), sizeof(T));
  return v;
}

template <typename T>
void store(uint8_t* data, int64_t index, T v) {
  std::memcpy(data + index * int64_t(sizeof(T)), &v, sizeof(T));
}

// C-style conversion of a double to an integer type without undefined behaviour.
int64_t truncateToInt(double value) {
  if (std::isnan(value)) return 0;
  if (value >= 9.2233720368547758e18) return INT64_MAX;
  if (value <= -9.2233720368547758e18) return INT64_MIN;
  return int64_t(value);
}

}  // namespace

double readElementDouble(DType dtype, const uint8_t* data, int64_t index) {
  switch (dtype) {
    case DType::F32:
      return load<float>(data, index);
    case DType::F16:
      return halfToFloat(load<uint16_t>(data, index));
    case DType::I8:
      return load<int8_t>(data, index);
    case DType::U8:
      return load<uint8_t>(data, index);
    case DType::I16:
      return load<int16_t>(data, index);
    case DType::I32:
      return load<int32_t>(data, index);
    case DType::I64:
      return double(load<int64_t>(data, index));
    case DType::Bool:
      return load<uint8_t>(data, index) != 0 ? 1.0 : 0.0;
    case DType::F64:
      return load<double>(data, index);
  }
  KILN_UNREACHABLE("bad dtype");
}

int64_t readElementInt(DType dtype, const uint8_t* data, int64_t index) {
  switch (dtype) {
    case DType::F32:
    case DType::F16:
    case DType::F64:
      return truncateToInt(readElementDouble(dtype, data, index));
    case DType::I8:
      return load<int8_t>(data, index);
    case DType::U8:
      return load<uint8_t>(data, index);
    case DType::I16:
      return load<int16_t>(data, index);
    case DType::I32:
      return load<int32_t>(data, index);
    case DType::I64:
      return load<int64_t>(data, index);
    case DType::Bool:
      return load<uint8_t>(data, index) != 0 ? 1 : 0;
  }
  KILN_UNREACHABLE("bad dtype");
}

void writeElementDouble(DType dtype, uint8_t* data, int64_t index, double value) {
  switch (dtype) {
    case DType::F32:
      return store<float>(data, index, float(value));
    case DType::F16:
      return store<uint16_t>(data, index, floatToHalf(float(value)));
    case DType::Bool:
      return store<uint8_t>(data, index, value != 0 ? 1 : 0);
    case DType::F64:
      return store<double>(data, index, value);
    default:
      return writeElementInt(dtype, data, index, truncateToInt(value));
  }
}

void writeElementInt(DType dtype, uint8_t* data, int64_t index, int64_t value) {
  switch (dtype) {
    case DType::F32:
      return store<float>(data, index, float(value));
    case DType::F16:
      return store<uint16_t>(data, index, floatToHalf(float(value)));
    case DType::I8:
      return store<int8_t>(data, index, int8_t(value));
    case DType::U8:
      return store<uint8_t>(data, index, uint8_t(value));
    case DType::I16:
      return store<int16_t>(data, index, int16_t(value));
    case DType::I32:
      return store<int32_t>(data, index, int32_t(value));
    case DType::I64:
      return store<int64_t>(data, index, value);
    case DType::Bool:
      return store<uint8_t>(data, index, value != 0 ? 1 : 0);
    case DType::F64:
      return store<double>(data, index, double(value));
  }
}

bool isConstantValue(const Value* value) { return value && value->isConstant(); }

std::vector<int64_t> constantInts(const Value* value) {
  KILN_ASSERT(isConstantValue(value), "constantInts of a non-constant");
  const auto& bytes = value->constantBytes();
  int64_t n = value->type().numElements();
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[size_t(i)] = readElementInt(value->dtype(), bytes.data(), i);
  return out;
}

std::vector<double> constantDoubles(const Value* value) {
  KILN_ASSERT(isConstantValue(value), "constantDoubles of a non-constant");
  const auto& bytes = value->constantBytes();
  int64_t n = value->type().numElements();
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    out[size_t(i)] = readElementDouble(value->dtype(), bytes.data(), i);
  return out;
}

std::vector<uint8_t> makeConstantBytes(const TensorType& type, std::span<const double> values) {
  int64_t n = type.numElements();
  KILN_ASSERT(int64_t(values.size()) == n || values.size() == 1, "makeConstantBytes: count");
  std::vector<uint8_t> bytes(type.byteSize());
  for (int64_t i = 0; i < n; ++i)
    writeElementDouble(type.dtype, bytes.data(), i, values[values.size() == 1 ? 0 : size_t(i)]);
  return bytes;
}

std::vector<uint8_t> makeConstantBytesInt(const TensorType& type, std::span<const int64_t> values) {
  int64_t n = type.numElements();
  KILN_ASSERT(int64_t(values.size()) == n || values.size() == 1, "makeConstantBytesInt: count");
  std::vector<uint8_t> bytes(type.byteSize());
  for (int64_t i = 0; i < n; ++i)
    writeElementInt(type.dtype, bytes.data(), i, values[values.size() == 1 ? 0 : size_t(i)]);
  return bytes;
}

bool isSplatConstant(const Value* value) {
  KILN_ASSERT(isConstantValue(value), "isSplatConstant of a non-constant");
  const auto& bytes = value->constantBytes();
  size_t elem = dtypeSize(value->dtype());
  for (size_t i = elem; i < bytes.size(); i += elem)
    if (std::memcmp(bytes.data(), bytes.data() + i, elem) != 0) return false;
  return true;
}

}  // namespace kiln::ir
