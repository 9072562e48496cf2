// DType sizes and names.
#include "kiln/ir/dtype.h"

#include "kiln/support/diagnostics.h"

namespace kiln::ir {
namespace {
constexpr uint32_t kSizes[kDTypeCount] = {4, 2, 1, 1, 2, 4, 8, 1};
constexpr std::string_view kNames[kDTypeCount] = {"f32", "f16", "i8",  "u8",
                                                  "i16", "i32", "i64", "bool"};
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
