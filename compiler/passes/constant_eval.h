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

}  // namespace kiln::passes
