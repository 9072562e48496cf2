// Reference evaluation of one op on constant operands, for constant folding. Private to
// kiln_passes.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kiln/ir/op.h"

namespace kiln::passes {

// The contents of each result of `op`, whose present operands must all be constants, or
// nullopt if the evaluator does not implement the op kind (the op then stays). Throws
// CompileError for a value error the rules cannot see (e.g. a Gather index out of range).
std::optional<std::vector<std::vector<uint8_t>>> evaluateOp(const ir::Op& op);

namespace eval {

using Bytes = std::vector<uint8_t>;

// Row-major strides (in elements) of `shape`.
std::vector<int64_t> stridesOf(const ir::Shape& shape);
// For every element of `out`, the linear index of the element of `in` that numpy
// broadcasting of `in` to `out` reads.
std::vector<int64_t> broadcastIndices(const ir::Shape& in, const ir::Shape& out);
// out[i] = in[map[i]] for elements of `elem` bytes.
Bytes gatherBytes(const Bytes& in, const std::vector<int64_t>& map, size_t elem);

// Elementwise ops (unary, binary/variadic with broadcasting, Clip, Where); nullopt if the
// op/dtype combination is not implemented.
std::optional<Bytes> evalElementwise(const ir::Op& op);
// ReduceSum/Mean/Max/Min/Prod/L2.
std::optional<Bytes> evalReduce(const ir::Op& op);

}  // namespace eval
}  // namespace kiln::passes
