// The arithmetic cost of a dispatch, as the artifact's DEBUG cost table records it (see
// kiln_debug_cost in kiln/format/artifact.h): kiln/ir/dispatch_cost.h's count in the format's
// kinds (FLOPS, INT_OPS, ELEMENTS, NONE for pure data movement).
#pragma once

#include <cstdint>

#include "kiln/format/artifact.h"
#include "kiln/ir/dispatch_graph.h"

namespace kiln::emit {

struct DispatchCost {
  kiln_cost_kind kind = KILN_COST_NONE;
  uint64_t count = 0;
};

DispatchCost dispatchCost(const ir::Dispatch& dispatch);

}  // namespace kiln::emit
