// Lowering of a dispatch's fused elementwise chain (ir::Dispatch::fused). Each fused op is
// lowered on its own by lowerElementwise and its expression is spliced after what precedes
// it: the operand that is the chain value becomes the previous result, every other operand
// an Input node over the dispatch's extra bindings (appended to the kernel's inputs, in
// binding order). Over an elementwise root the chain extends the root's expression (one loop
// kernel); over any other root it becomes the epilogue chain, whose Result node is the root's
// value. A fused Gemm/MatMul (fuseGemmChains, always last) ends the chain and becomes the
// kernel's second product (KernelDesc::tailB); a fused MaxPool (fuseConvPools, last too)
// pools the convolution's result after the chain (KernelDesc::convOutput). LLVM-free.
#include "lowering.h"

namespace kiln::codegen::detail {

int32_t splice(ElementwiseExpr& e, const ElementwiseExpr& part,
               const std::vector<int32_t>& operandNodes) {
  std::vector<int32_t> map(part.nodes.size(), -1);
  auto remap = [&](int32_t k) { return k < 0 ? k : map[size_t(k)]; };
  for (size_t n = 0; n < part.nodes.size(); ++n) {
    const ExprNode& node = part.nodes[n];
    if (node.op == ExprOp::Input) {
      map[n] = operandNodes.at(size_t(node.input));
      continue;
    }
    ExprNode copy = node;
    copy.a = remap(node.a);
    copy.b = remap(node.b);
    copy.c = remap(node.c);
    e.nodes.push_back(copy);
    map[n] = int32_t(e.nodes.size() - 1);
  }
  return map.back();
}

void lowerFusedChain(const ir::Dispatch& dispatch, KernelDesc& d) {
  if (dispatch.fused.empty()) return;
  const bool elementwise = d.kind == KernelKind::Elementwise;
  // Extra inputs: the fused ops' operand bindings, in binding order, after the root's.
  const size_t first = d.inputs.size();
  std::vector<const ir::Binding*> extras;
  for (const ir::Binding& b : dispatch.bindings) {
    if (b.fusedOp < 0) continue;
    extras.push_back(&b);
    d.inputs.push_back(toBuffer(*dispatch.fused[size_t(b.fusedOp)], *b.value));
  }

  ElementwiseExpr& e = elementwise ? d.expr : d.epilogue.chain;
  int32_t chainNode;
  if (elementwise) {
    chainNode = int32_t(e.nodes.size() - 1);
  } else {
    ExprNode result;
    result.op = ExprOp::Result;
    result.type = d.output.type;
    e.nodes.push_back(result);
    chainNode = 0;
    d.epilogue.inputCount = uint32_t(extras.size());
    d.epilogue.shape = dispatch.root->result()->shape();
  }
  auto bindingOf = [&](size_t k, const ir::Value* v) {
    size_t j = 0;
    while (j < extras.size() && !(extras[j]->fusedOp == int(k) && extras[j]->value == v)) ++j;
    if (j == extras.size()) unsupported(*dispatch.fused[k], "fused operand without a binding");
    return int32_t(first + j);
  };

  const ir::Value* chainValue = dispatch.root->result();
  for (size_t k = 0; k < dispatch.fused.size(); ++k) {
    const ir::Op& op = *dispatch.fused[k];
    if (op.kind() == ir::OpKind::Gemm || op.kind() == ir::OpKind::MatMul) {
      // The second product: B and the bias are bindings, the output is its result.
      if (d.kind != KernelKind::MatMul || k + 1 != dispatch.fused.size())
        unsupported(op, "a fused product must end the chain of a matrix product");
      d.tailB = bindingOf(k, op.operand(1));
      if (op.optionalOperand(2)) d.tailBias = bindingOf(k, op.operand(2));
      bool gemm = op.kind() == ir::OpKind::Gemm;
      d.tailTransB = gemm && op.attrs().getInt("transB", 0) != 0;
      d.tailAlpha = gemm ? op.attrs().getFloat("alpha", 1.0f) : 1.0f;
      d.tailBeta = gemm ? op.attrs().getFloat("beta", 1.0f) : 1.0f;
      d.output = toBuffer(op, *op.result());
      if (e.nodes.size() == 1) e.nodes.clear();  // no elementwise ops before it
      return;
    }
    if (op.kind() == ir::OpKind::Conv) {
      // A depthwise convolution after a 1x1 one (fuseExpandDepthwise): it and the ops after
      // it are the kernel's tail (KernelDesc::tailB, tailChain); the chain so far applies
      // first.
      lowerFusedDepthwise(dispatch, k, d);
      if (e.nodes.size() > 1) break;
      e.nodes.clear();  // no elementwise ops before it
      return;
    }
    if (op.kind() == ir::OpKind::MaxPool) {
      // A pool after a convolution (fuseConvPools): it ends the chain, which applies first.
      if (k + 1 != dispatch.fused.size()) unsupported(op, "a fused pool must end the chain");
      lowerFusedPool(op, d);
      if (e.nodes.size() > 1) break;
      e.nodes.clear();  // no elementwise ops before it
      return;
    }
    d.epilogue.shape = op.result()->shape();
    // The op alone: its runtime operands as inputs 0..n-1 (as if it were a root).
    KernelDesc alone;
    alone.name = d.name;
    std::vector<int32_t> operandNodes;
    for (size_t i = 0; i < op.numOperands(); ++i) {
      const ir::Value* v = op.operand(i);
      if (!v || op.info().isStaticOperand(i)) continue;
      alone.inputs.push_back(toBuffer(op, *v));
      if (v == chainValue) {
        operandNodes.push_back(chainNode);
        continue;
      }
      operandNodes.push_back(e.addInput(bindingOf(k, v), toElemType(op, v->dtype())));
    }
    alone.output = toBuffer(op, *op.result());
    if (!lowerElementwise(op, alone)) unsupported(op, "cannot be fused: not elementwise");
    chainNode = splice(e, alone.expr, operandNodes);
    chainValue = op.result();
  }
  // The result must be the last node (a chain ending in a pass-through such as Pow(x, 1)).
  if (chainNode != int32_t(e.nodes.size() - 1))
    e.addBinary(ExprOp::Mul, chainNode, e.addConstant(1.0, e.nodes[size_t(chainNode)].type));
}

}  // namespace kiln::codegen::detail
