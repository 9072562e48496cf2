// BatchNorm folding. Inference BatchNormalization computes y = x * s + t per channel, with
// s = scale / sqrt(var + epsilon) and t = bias - mean * s (computed here in double).
//  - After a Conv with a constant weight (and constant or absent bias) whose result has no
//    other use and is not a graph output: W'[oc] = W[oc] * s[oc], B' = B * s + t.
//  - After a Gemm with constant B (and constant or absent C), same conditions, channels
//    along N: B' = op(B) columns scaled by s, C' = beta * C * s + t, beta = 1.
//  - Otherwise: Mul by s and Add t, as constants of shape [C, 1, ...] broadcasting over
//    N x C x spatial.
// BatchNorms whose parameters are not all constants are left alone (codegen rejects them).
#include <cmath>

#include "kiln/ir/constant_data.h"
#include "kiln/ir/op_rules.h"
#include "kiln/passes/passes.h"

namespace kiln::passes {
namespace {

using ir::OpKind;

struct ScaleShift {
  std::vector<double> scale;
  std::vector<double> shift;
};

ScaleShift computeScaleShift(const ir::Op& bn) {
  std::vector<double> gamma = ir::constantDoubles(bn.operand(1));
  std::vector<double> beta = ir::constantDoubles(bn.operand(2));
  std::vector<double> mean = ir::constantDoubles(bn.operand(3));
  std::vector<double> var = ir::constantDoubles(bn.operand(4));
  double epsilon = bn.attrs().getFloat("epsilon", 1e-5f);
  ScaleShift ss;
  for (size_t c = 0; c < gamma.size(); ++c) {
    double s = gamma[c] / std::sqrt(var[c] + epsilon);
    ss.scale.push_back(s);
    ss.shift.push_back(beta[c] - mean[c] * s);
  }
  return ss;
}

// The op producing `value` if it can absorb the BatchNorm: only use is the BatchNorm.
ir::Op* absorbingProducer(const ir::Graph& graph, const ir::Value* value) {
  ir::Op* producer = value->definingOp();
  if (!producer || value->users().size() != 1 || graph.isOutput(value)) return nullptr;
  if (producer->kind() != OpKind::Conv && producer->kind() != OpKind::Gemm) return nullptr;
  if (!ir::isConstantValue(producer->operand(1))) return nullptr;
  ir::Value* bias = producer->optionalOperand(2);
  if (bias && !bias->isConstant()) return nullptr;
  return producer;
}

void foldIntoConv(ir::Graph& graph, ir::Op* conv, const ScaleShift& ss) {
  const ir::Value* weight = conv->operand(1);
  std::vector<double> w = ir::constantDoubles(weight);
  int64_t outChannels = weight->shape()[0];
  int64_t perChannel = weight->type().numElements() / outChannels;
  for (int64_t oc = 0; oc < outChannels; ++oc)
    for (int64_t i = 0; i < perChannel; ++i) w[size_t(oc * perChannel + i)] *= ss.scale[size_t(oc)];
  std::vector<double> b(size_t(outChannels), 0.0);
  if (conv->optionalOperand(2)) b = ir::constantDoubles(conv->operand(2));
  for (int64_t oc = 0; oc < outChannels; ++oc)
    b[size_t(oc)] = b[size_t(oc)] * ss.scale[size_t(oc)] + ss.shift[size_t(oc)];
  ir::TensorType biasType(weight->dtype(), {outChannels});
  ir::Value* newWeight = graph.addConstant(weight->name() + ".bn", weight->type(),
                                           ir::makeConstantBytes(weight->type(), w));
  ir::Value* newBias = graph.addConstant(conv->result()->name() + ".bias", biasType,
                                         ir::makeConstantBytes(biasType, b));
  conv->setOperand(1, newWeight);
  if (conv->numOperands() == 3)
    conv->setOperand(2, newBias);
  else {
    // Re-create the op with a bias operand (operand lists are fixed at creation).
    ir::Op* replacement =
        graph.createOp(OpKind::Conv, {conv->operand(0), newWeight, newBias},
                       {conv->result()->type()}, conv->attrs(), conv->source(), conv);
    graph.replaceOpWith(conv, replacement->result());
  }
}

void foldIntoGemm(ir::Graph& graph, ir::Op* gemm, const ScaleShift& ss) {
  const ir::Value* bValue = gemm->operand(1);
  bool transB = gemm->attrs().getInt("transB", 0) != 0;
  std::vector<double> b = ir::constantDoubles(bValue);
  int64_t rows = bValue->shape()[0], cols = bValue->shape()[1];
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) b[size_t(r * cols + c)] *= ss.scale[size_t(transB ? r : c)];
  int64_t n = int64_t(ss.scale.size());
  float beta = gemm->attrs().getFloat("beta", 1.0f);
  const ir::Value* cValue = gemm->optionalOperand(2);
  ir::Shape cShape = cValue ? ir::broadcastShapes(cValue->shape(), {n}) : ir::Shape{n};
  ir::TensorType cType(bValue->dtype(), cShape);
  std::vector<double> cOld = cValue ? ir::constantDoubles(cValue) : std::vector<double>{0.0};
  ir::Shape cOldShape = cValue ? cValue->shape() : ir::Shape{};
  // Broadcast the old C into cShape, then scale and shift per column.
  int64_t total = ir::numElements(cShape);
  std::vector<double> c(static_cast<size_t>(total));
  for (int64_t e = 0; e < total; ++e) {
    int64_t col = e % n, row = e / n;
    int64_t oldRows = cOldShape.size() == 2 ? cOldShape[0] : 1;
    int64_t oldCols = cOldShape.empty() ? 1 : cOldShape.back();
    double old = cOld[size_t((oldRows == 1 ? 0 : row) * oldCols + (oldCols == 1 ? 0 : col))];
    c[size_t(e)] = beta * old * ss.scale[size_t(col)] + ss.shift[size_t(col)];
  }
  ir::Value* newB = graph.addConstant(bValue->name() + ".bn", bValue->type(),
                                      ir::makeConstantBytes(bValue->type(), b));
  ir::Value* newC =
      graph.addConstant(gemm->result()->name() + ".bias", cType, ir::makeConstantBytes(cType, c));
  ir::AttributeMap attrs = gemm->attrs();
  attrs.set("beta", 1.0f);
  ir::Op* replacement = graph.createOp(OpKind::Gemm, {gemm->operand(0), newB, newC},
                                       {gemm->result()->type()}, attrs, gemm->source(), gemm);
  graph.replaceOpWith(gemm, replacement->result());
}

// Returns the Add whose result replaces the BatchNorm's (the caller renames it).
ir::Op* rewriteAsScaleShift(ir::Graph& graph, ir::Op* bn, const ScaleShift& ss) {
  ir::Value* x = bn->operand(0);
  ir::Shape channelShape(size_t(x->type().rank() - 1), 1);
  channelShape[0] = int64_t(ss.scale.size());
  ir::TensorType type(x->dtype(), channelShape);
  std::string base = bn->result()->name();
  ir::Value* scale =
      graph.addConstant(base + ".scale", type, ir::makeConstantBytes(type, ss.scale));
  ir::Value* shift =
      graph.addConstant(base + ".shift", type, ir::makeConstantBytes(type, ss.shift));
  ir::Op* mul = graph.createOp(OpKind::Mul, {x, scale}, {x->type()}, {}, bn->source(), bn,
                               {base + ".scaled"});
  ir::Op* add = graph.createOp(OpKind::Add, {mul->result(), shift}, {bn->result()->type()}, {},
                               bn->source(), bn);
  graph.replaceAllUsesWith(bn->result(), add->result());
  return add;
}

}  // namespace

bool foldBatchNorm(ir::Graph& graph) {
  bool changed = false;
  for (ir::Op* bn : graph.opList()) {
    if (bn->kind() != OpKind::BatchNormalization) continue;
    bool constantParams = true;
    for (size_t i = 1; i < 5; ++i) constantParams &= ir::isConstantValue(bn->operand(i));
    if (!constantParams) continue;
    ScaleShift ss = computeScaleShift(*bn);
    ir::Value* x = bn->operand(0);
    std::string name = bn->result()->name();
    if (ir::Op* producer = absorbingProducer(graph, x)) {
      graph.replaceAllUsesWith(bn->result(), x);
      graph.eraseOp(bn);
      if (producer->kind() == OpKind::Conv)
        foldIntoConv(graph, producer, ss);
      else
        foldIntoGemm(graph, producer, ss);
    } else {
      ir::Op* add = rewriteAsScaleShift(graph, bn, ss);
      graph.eraseOp(bn);
      graph.renameValue(add->result(), name);
    }
    changed = true;
  }
  if (changed) graph.eraseUnusedConstants();
  return changed;
}

}  // namespace kiln::passes
