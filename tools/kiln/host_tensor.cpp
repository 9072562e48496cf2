// Element types and the HostTensor helpers of the CLI.
#include "host_tensor.h"

#include <cassert>
#include <cstring>

#include "half.h"

namespace kiln::cli {

size_t elementSize(ElementType type) {
  switch (type) {
    case ElementType::F32: return 4;
    case ElementType::F16: return 2;
    case ElementType::I8: return 1;
    case ElementType::U8: return 1;
    case ElementType::I16: return 2;
    case ElementType::I32: return 4;
    case ElementType::I64: return 8;
    case ElementType::Bool: return 1;
    case ElementType::F64: return 8;
  }
  assert(false && "unknown element type");
  return 0;
}

std::string_view elementTypeName(ElementType type) {
  switch (type) {
    case ElementType::F32: return "f32";
    case ElementType::F16: return "f16";
    case ElementType::I8: return "i8";
    case ElementType::U8: return "u8";
    case ElementType::I16: return "i16";
    case ElementType::I32: return "i32";
    case ElementType::I64: return "i64";
    case ElementType::Bool: return "i1";
    case ElementType::F64: return "f64";
  }
  assert(false && "unknown element type");
  return "?";
}

std::optional<ElementType> parseElementType(std::string_view name) {
  if (name == "f32") return ElementType::F32;
  if (name == "f16") return ElementType::F16;
  if (name == "f64") return ElementType::F64;
  if (name == "i8" || name == "si8") return ElementType::I8;
  if (name == "u8" || name == "ui8") return ElementType::U8;
  if (name == "i16" || name == "si16") return ElementType::I16;
  if (name == "i32" || name == "si32") return ElementType::I32;
  if (name == "i64" || name == "si64") return ElementType::I64;
  if (name == "i1" || name == "bool") return ElementType::Bool;
  return std::nullopt;
}

bool isFloatingPoint(ElementType type) {
  return type == ElementType::F32 || type == ElementType::F16 || type == ElementType::F64;
}

size_t HostTensor::elementCount() const {
  size_t count = 1;
  for (int64_t d : shape) count *= static_cast<size_t>(d);
  return count;
}

template <typename T>
static T load(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

double HostTensor::elementAsDouble(size_t i) const {
  const uint8_t* p = data.data() + i * elementSize(type);
  switch (type) {
    case ElementType::F32: return load<float>(p);
    case ElementType::F16: return halfToFloat(load<uint16_t>(p));
    case ElementType::I8: return load<int8_t>(p);
    case ElementType::U8: return load<uint8_t>(p);
    case ElementType::I16: return load<int16_t>(p);
    case ElementType::I32: return load<int32_t>(p);
    case ElementType::I64: return static_cast<double>(load<int64_t>(p));
    case ElementType::Bool: return load<uint8_t>(p) != 0 ? 1.0 : 0.0;
    case ElementType::F64: return load<double>(p);
  }
  return 0;
}

std::string describeTensorType(ElementType type, const std::vector<int64_t>& shape) {
  std::string text;
  for (int64_t d : shape) text += std::to_string(d) + "x";
  text += elementTypeName(type);
  return text;
}

}  // namespace kiln::cli
