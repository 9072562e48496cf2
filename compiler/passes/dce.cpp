// Dead-code elimination: erases every op none of whose results is used by another op or is
// a graph output, walking backwards so that whole dead chains go in one sweep, then erases
// unused constants. Graph inputs are the model's interface and always stay.
#include "kiln/passes/passes.h"

namespace kiln::passes {

bool eliminateDeadCode(ir::Graph& graph) {
  bool changed = false;
  std::vector<ir::Op*> ops = graph.opList();
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    ir::Op* op = *it;
    bool live = false;
    for (size_t i = 0; i < op->numResults() && !live; ++i)
      live = op->result(i)->hasUsers() || graph.isOutput(op->result(i));
    if (live) continue;
    graph.eraseOp(op);
    changed = true;
  }
  return graph.eraseUnusedConstants() > 0 || changed;
}

}  // namespace kiln::passes
