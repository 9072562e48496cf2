// Where the parts of a Concat, Split or Slice lie in the bigger tensor, when each part is
// one contiguous byte range of it (then dispatch formation makes the part a view with an
// offset instead of a copying dispatch). Internal to kiln_passes.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kiln/ir/op.h"

namespace kiln::passes {

// Concat: the byte offset of each operand inside the result, if every operand is one
// contiguous range of it (every result dim before the axis is 1) and none is empty.
std::optional<std::vector<uint64_t>> concatOperandOffsets(const ir::Op& concat);

// Split: the byte offset of each result inside the operand, under the same condition.
std::optional<std::vector<uint64_t>> splitResultOffsets(const ir::Op& split);

// Slice with constant starts/ends/axes/steps: the byte offset of the result inside the
// operand if the result is one contiguous range of it (leading result dims 1, then at most
// one partial dim, then full dims; step 1 wherever the result has more than one element).
std::optional<uint64_t> sliceResultOffset(const ir::Op& slice);

}  // namespace kiln::passes
