// Element types of IR tensors. The numeric values equal the artifact format's kiln_dtype
// (format/include/kiln/format/artifact.h): f32, f16, i8, u8, i16, i32, i64, bool, f64.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::ir {

enum class DType : uint8_t {
  F32 = 0,
  F16 = 1,
  I8 = 2,
  U8 = 3,
  I16 = 4,
  I32 = 5,
  I64 = 6,
  Bool = 7,
  F64 = 8
};

inline constexpr int kDTypeCount = 9;

// Bytes per element (bool is one byte).
uint32_t dtypeSize(DType dtype);
// Text name: "f32", "f16", "i8", "u8", "i16", "i32", "i64", "bool", "f64".
std::string_view dtypeName(DType dtype);
// Inverse of dtypeName; nullopt for an unknown name.
std::optional<DType> parseDType(std::string_view name);

inline bool isFloat(DType d) { return d == DType::F32 || d == DType::F16 || d == DType::F64; }
inline bool isInteger(DType d) { return !isFloat(d) && d != DType::Bool; }
inline bool isSigned(DType d) { return d != DType::U8 && d != DType::Bool; }

}  // namespace kiln::ir
