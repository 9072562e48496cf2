// Small string and arithmetic helpers used across the compiler.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

// "1x3x224x224" style join of dims, or any integers with a separator: joinInts({1,2}, ", ").
std::string joinInts(std::span<const int64_t> values, std::string_view separator);

// Joins strings with a separator.
std::string joinStrings(std::span<const std::string> values, std::string_view separator);

// Shortest decimal text that parses back to exactly `value` ("1.5", "1e-07", "inf", "nan").
// Always contains '.', 'e', "inf" or "nan" so that it reads as a float, never as an integer.
std::string formatFloat(float value);

// FNV-1a 64-bit hash of a byte range (used to name elided constants).
uint64_t fnv1a64(const void* data, size_t size);

// Rounds `value` up to a multiple of `alignment` (a power of two).
constexpr uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

}  // namespace kiln
