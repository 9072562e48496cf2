// A tensor held in host memory by the CLI: element type, shape (C order) and raw bytes.
// It is what `--input=` parses into, what .npy files load into, and what outputs print from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::cli {

enum class ElementType { F32, F16, I8, U8, I16, I32, I64, Bool, F64 };

// Bytes per element.
size_t elementSize(ElementType type);
// IREE-style short name: f32, f16, i8, u8 (spelled "ui8" by IREE, accepted too), i16, i32,
// i64, i1 (bool), f64.
std::string_view elementTypeName(ElementType type);
std::optional<ElementType> parseElementType(std::string_view name);
bool isFloatingPoint(ElementType type);

struct HostTensor {
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // elementCount() * elementSize(type) bytes, C order

  size_t elementCount() const;
  // Element `i` widened to double (f16 and bool included).
  double elementAsDouble(size_t i) const;
};

// "1x3x224x224xf32" (a scalar: "f32").
std::string describeTensorType(ElementType type, const std::vector<int64_t>& shape);

}  // namespace kiln::cli
