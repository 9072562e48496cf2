// DType sizes and names.
#include "kiln/ir/dtype.h"

#include "kiln/format/artifact.h"
#include "kiln/support/diagnostics.h"

namespace kiln::ir {

// The IR's dtype numbering is the artifact's: emit writes DType values as they are.
static_assert(int(DType::F32) == KILN_DTYPE_F32 && int(DType::F16) == KILN_DTYPE_F16 &&
                  int(DType::I8) == KILN_DTYPE_I8 && int(DType::U8) == KILN_DTYPE_U8 &&
                  int(DType::I16) == KILN_DTYPE_I16 && int(DType::I32) == KILN_DTYPE_I32 &&
                  int(DType::I64) == KILN_DTYPE_I64 && int(DType::Bool) == KILN_DTYPE_BOOL &&
                  int(DType::F64) == KILN_DTYPE_F64 &&
                  kDTypeCount == KILN_DTYPE_COUNT,
              "DType must match kiln_dtype");

namespace {
constexpr uint32_t kSizes[kDTypeCount] = {4, 2, 1, 1, 2, 4, 8, 1, 8};
constexpr std::string_view kNames[kDTypeCount] = {"f32", "f16", "i8",  "u8",
                                                  "i16", "i32", "i64", "bool", "f64"};
}  // namespace

uint32_t dtypeSize(DType dtype) {
  auto i = size_t(dtype);
  KILN_ASSERT(i < size_t(kDTypeCount), "bad dtype");
  return kSizes[i];
}

std::string_view dtypeName(DType dtype) {
  auto i = size_t(dtype);
  KILN_ASSERT(i < size_t(kDTypeCount), "bad dtype");
  return kNames[i];
}

std::optional<DType> parseDType(std::string_view name) {
  for (int i = 0; i < kDTypeCount; ++i)
    if (kNames[i] == name) return DType(i);
  return std::nullopt;
}

}  // namespace kiln::ir
