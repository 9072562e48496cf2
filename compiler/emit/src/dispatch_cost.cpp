// The DEBUG cost table's entry of a dispatch: ir::dispatchCost in the format's cost kinds.
#include "kiln/emit/dispatch_cost.h"

#include "kiln/ir/dispatch_cost.h"

namespace kiln::emit {

DispatchCost dispatchCost(const ir::Dispatch& dispatch) {
  const ir::DispatchCost cost = ir::dispatchCost(dispatch);
  switch (cost.kind) {
    case ir::CostKind::Flops: return {KILN_COST_FLOPS, cost.count};
    case ir::CostKind::IntOps: return {KILN_COST_INT_OPS, cost.count};
    case ir::CostKind::Elements: return {KILN_COST_ELEMENTS, cost.count};
    case ir::CostKind::None: break;
  }
  return {};
}

}  // namespace kiln::emit
