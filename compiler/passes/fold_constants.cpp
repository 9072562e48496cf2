// Constant folding: every op whose present operands are all constants (and every Shape and
// Size: static shapes make them constant) is evaluated at
// compile time (constant_eval.cpp) and its results become constants with the same names.
// One forward sweep folds whole chains, e.g. torch's shape sub-graphs
// Shape -> Gather -> Unsqueeze -> Concat -> Reshape, ConstantOfShape and Range, and
// Transpose/Cast of weights. Ops the evaluator does not implement stay as they are; results
// larger than kMaxFoldBytes stay too (no artifact bloat from, say, a huge Expand).
#include "constant_eval.h"
#include "kiln/passes/passes.h"

namespace kiln::passes {
namespace {

constexpr uint64_t kMaxFoldBytes = 64ull << 20;

// Shape and Size depend only on the operand's static type, not on its contents.
bool foldable(const ir::Op& op) {
  if (op.kind() == ir::OpKind::Shape || op.kind() == ir::OpKind::Size) return true;
  for (const ir::Value* v : op.operands())
    if (v && !v->isConstant()) return false;
  return true;
}

}  // namespace

bool foldConstants(ir::Graph& graph) {
  bool changed = false;
  for (ir::Op* op : graph.opList()) {
    if (!foldable(*op)) continue;
    uint64_t bytes = 0;
    for (size_t i = 0; i < op->numResults(); ++i) bytes += op->result(i)->type().byteSize();
    if (bytes > kMaxFoldBytes) continue;
    auto contents = evaluateOp(*op);
    if (!contents) continue;
    std::vector<std::pair<ir::Value*, std::string>> renames;
    for (size_t i = 0; i < op->numResults(); ++i) {
      ir::Value* result = op->result(i);
      ir::TensorType type = result->type();
      ir::Value* constant = graph.addConstant("", type, std::move((*contents)[i]));
      graph.replaceAllUsesWith(result, constant);
      renames.emplace_back(constant, result->name());
    }
    graph.eraseOp(op);
    for (auto& [constant, name] : renames) graph.renameValue(constant, name);
    changed = true;
  }
  if (changed) graph.eraseUnusedConstants();
  return changed;
}

}  // namespace kiln::passes
