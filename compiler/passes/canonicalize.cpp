// Canonicalization: removes ops that do nothing at inference time and normalises attributes
// so that later passes and codegen see one form.
//  - Identity; Dropout (inference: data passes through; a used mask becomes an all-true
//    constant).
//  - No-op data movement: Reshape/Flatten/Squeeze/Unsqueeze/Expand/Tile/Slice/Pad whose
//    result type equals the input's, Transpose by the identity permutation, Cast to the
//    same dtype, Concat of one operand.
//  - Conv/MaxPool/AveragePool auto_pad (SAME_UPPER, SAME_LOWER, VALID) into explicit pads.
// Assumes a verified graph. Removing an op forwards its input to its users and outputs.
#include <numeric>

#include "kiln/ir/constant_data.h"
#include "kiln/ir/window_geometry.h"
#include "kiln/passes/passes.h"

namespace kiln::passes {
namespace {

using ir::OpKind;

// True if `op` returns its operand 0 unchanged (same type, same contents).
bool isNoOp(const ir::Op& op) {
  const ir::Value* in = op.operand(0);
  const ir::Value* out = op.result(0);
  bool sameType = in->type().sameShapeAndDType(out->type());
  switch (op.kind()) {
    case OpKind::Identity:
      return true;
    case OpKind::Reshape:
    case OpKind::Flatten:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze:
    case OpKind::Expand:
    case OpKind::Tile:
    case OpKind::Cast:
      return sameType;
    case OpKind::Concat:
      return op.numOperands() == 1;
    case OpKind::Slice: {
      // Same shape with positive steps means every start is 0: the whole tensor.
      if (!sameType) return false;
      if (op.numOperands() < 5 || !op.operand(4)) return true;
      if (!ir::isConstantValue(op.operand(4))) return false;
      for (int64_t s : ir::constantInts(op.operand(4)))
        if (s < 0) return false;
      return true;
    }
    case OpKind::Pad: {
      if (!sameType || !ir::isConstantValue(op.operand(1))) return false;
      for (int64_t p : ir::constantInts(op.operand(1)))
        if (p != 0) return false;
      return true;
    }
    case OpKind::Transpose: {
      std::vector<int64_t> perm = op.attrs().getInts("perm", {});
      if (perm.empty()) return in->type().rank() <= 1;
      for (size_t i = 0; i < perm.size(); ++i)
        if (perm[i] != int64_t(i)) return false;
      return true;
    }
    default:
      return false;
  }
}

bool removeDropout(ir::Graph& graph, ir::Op* op) {
  graph.replaceAllUsesWith(op->result(0), op->operand(0));
  if (op->numResults() == 2 && (op->result(1)->hasUsers() || graph.isOutput(op->result(1)))) {
    ir::TensorType maskType = op->result(1)->type();
    std::vector<int64_t> ones = {1};
    ir::Value* mask = graph.addConstant(op->result(1)->name() + ".mask", maskType,
                                        ir::makeConstantBytesInt(maskType, ones));
    graph.replaceAllUsesWith(op->result(1), mask);
  }
  graph.eraseOp(op);
  return true;
}

bool makePadsExplicit(ir::Op* op) {
  std::string autoPad = op->attrs().getString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    if (!op->attrs().has("auto_pad")) return false;
    op->attrs().erase("auto_pad");
    return true;
  }
  const ir::Shape& x = op->operand(0)->shape();
  ir::Shape spatial(x.begin() + 2, x.end());
  std::vector<int64_t> kernel;
  if (op->kind() == OpKind::Conv) {
    const ir::Shape& w = op->operand(1)->shape();
    kernel.assign(w.begin() + 2, w.end());
  } else {
    kernel = op->attrs().getInts("kernel_shape");
  }
  ir::WindowGeometry g =
      ir::computeWindowGeometry(spatial, kernel, op->attrs(), op->kind() != OpKind::Conv);
  op->attrs().erase("auto_pad");
  op->attrs().set("pads", g.pads);
  return true;
}

}  // namespace

bool canonicalize(ir::Graph& graph) {
  bool changed = false;
  for (ir::Op* op : graph.opList()) {
    if (op->kind() == OpKind::Dropout) {
      changed |= removeDropout(graph, op);
      continue;
    }
    if (op->kind() == OpKind::Conv || op->kind() == OpKind::MaxPool ||
        op->kind() == OpKind::AveragePool) {
      changed |= makePadsExplicit(op);
      continue;
    }
    if (op->numResults() == 1 && op->numOperands() >= 1 && op->operand(0) && isNoOp(*op)) {
      graph.replaceAllUsesWith(op->result(0), op->operand(0));
      graph.eraseOp(op);
      changed = true;
    }
  }
  if (changed) graph.eraseUnusedConstants();
  return changed;
}

}  // namespace kiln::passes
