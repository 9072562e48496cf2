// Lowering of a depthwise convolution fused after a 1x1 convolution (fuseExpandDepthwise):
// the depthwise weights and bias (extra bindings of the dispatch) become KernelDesc::tailB and
// tailBias, its resolved strides and pads tailStrides and tailPads, its result the kernel's
// output, and the elementwise ops after it (Clip, Relu: nothing but the chain value as
// operand) the expression tailChain, whose Result node is the depthwise value. LLVM-free.
#include "kiln/ir/window_geometry.h"
#include "lowering.h"

namespace kiln::codegen::detail {

void lowerFusedDepthwise(const ir::Dispatch& dispatch, size_t index, KernelDesc& d) {
  const ir::Op& op = *dispatch.fused[index];
  const std::vector<int64_t>& xs = op.operand(0)->shape();
  const std::vector<int64_t>& ws = op.operand(1)->shape();
  if (d.kind != KernelKind::Conv || d.tailB >= 0 || xs.size() != 4 || ws.size() != 4)
    unsupported(op, "a fused depthwise convolution must follow a 2-D convolution");
  // The fused ops' bindings are the kernel's last inputs, in binding order.
  std::vector<const ir::Binding*> extras;
  for (const ir::Binding& b : dispatch.bindings)
    if (b.fusedOp >= 0) extras.push_back(&b);
  const size_t first = d.inputs.size() - extras.size();
  auto bindingOf = [&](const ir::Value* v) {
    for (size_t j = 0; j < extras.size(); ++j)
      if (extras[j]->fusedOp == int(index) && extras[j]->value == v) return int32_t(first + j);
    unsupported(op, "fused operand without a binding");
  };
  ir::WindowGeometry g =
      ir::computeWindowGeometry(ir::Shape(xs.begin() + 2, xs.end()),
                                std::vector<int64_t>(ws.begin() + 2, ws.end()), op.attrs(), false);
  d.tailB = bindingOf(op.operand(1));
  if (op.optionalOperand(2)) d.tailBias = bindingOf(op.operand(2));
  d.tailStrides = {g.strides[0], g.strides[1]};
  d.tailPads = {g.pads[0], g.pads[1], g.pads[2], g.pads[3]};
  d.output = toBuffer(op, *op.result());

  // The ops after it, spliced one by one over the depthwise value.
  ElementwiseExpr& e = d.tailChain;
  ExprNode result;
  result.op = ExprOp::Result;
  result.type = d.output.type;
  e.nodes.push_back(result);
  const ir::Value* chainValue = op.result();
  int32_t chainNode = 0;
  for (size_t k = index + 1; k < dispatch.fused.size(); ++k) {
    const ir::Op& next = *dispatch.fused[k];
    KernelDesc alone;
    alone.name = d.name;
    for (size_t i = 0; i < next.numOperands(); ++i) {
      const ir::Value* v = next.operand(i);
      if (!v || next.info().isStaticOperand(i)) continue;
      if (v != chainValue) unsupported(next, "cannot follow a fused depthwise convolution");
      alone.inputs.push_back(toBuffer(next, *v));
    }
    alone.output = toBuffer(next, *next.result());
    if (!lowerElementwise(next, alone) || alone.inputs.size() != 1)
      unsupported(next, "cannot follow a fused depthwise convolution");
    // The op's own expression with its one input replaced by the chain so far.
    chainNode = splice(e, alone.expr, {chainNode});
    chainValue = next.result();
  }
  // The result must be the last node (a chain ending in a pass-through).
  if (chainNode != int32_t(e.nodes.size() - 1))
    e.addBinary(ExprOp::Mul, chainNode, e.addConstant(1.0, e.nodes[size_t(chainNode)].type));
  if (e.nodes.size() == 1) e.nodes.clear();
}

}  // namespace kiln::codegen::detail
