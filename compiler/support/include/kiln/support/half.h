// IEEE 754 binary16 (f16) <-> binary32 conversion, bit exact, round-to-nearest-even.
// Used for f16 constants (printing, parsing, constant folding).
#pragma once

#include <cstdint>

namespace kiln {

float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);

}  // namespace kiln
