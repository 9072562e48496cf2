// Arithmetic cost of a dispatch from its root op, its fused ops and their static shapes (see
// kiln/ir/dispatch_cost.h). Multiply-accumulate counts per op:
//   Conv          W [OC, C/group, k...]:        result elements x C/group x prod(k)
//   ConvTranspose W [C, OC/group, k...]:        input elements  x OC/group x prod(k)
//   MatMul, Gemm  A [.., M, K] (Gemm transA: [K, M]): result elements x K
//   QConv2D       w [OC, KH, KW, C/group]:      result elements x KH x KW x C/group
//   QDepthwiseConv2D w [1, KH, KW, C*M]:        result elements x KH x KW
//   QTransposeConv2D x [N, H, W, IC], w [OC, KH, KW, IC]: input elements x OC x KH x KW
//   QFullyConnected  w [N, K]:                  result elements x K
#include "kiln/ir/dispatch_cost.h"

#include <algorithm>
#include <cassert>

#include "kiln/ir/op.h"

namespace kiln::ir {
namespace {

const Shape& shapeOf(const Value* value) { return value->type().shape; }

uint64_t elements(const Value* value) { return uint64_t(value->type().numElements()); }

// Product of dims [from, rank).
uint64_t tailProduct(const Shape& shape, size_t from) {
  uint64_t product = 1;
  for (size_t i = from; i < shape.size(); ++i) product *= uint64_t(shape[i]);
  return product;
}

// Multiply-accumulates of a float matrix product (MatMul or Gemm).
uint64_t matrixProductMacs(const Op& op) {
  const Shape& a = shapeOf(op.operand(0));
  uint64_t k = 1;
  if (op.kind() == OpKind::Gemm) {
    assert(a.size() == 2 && "Gemm's A is a matrix");
    k = uint64_t(op.attrs().getInt("transA", 0) ? a[0] : a[1]);
  } else {
    assert(!a.empty() && "MatMul's A has rank >= 1");
    k = uint64_t(a.back());
  }
  return elements(op.result()) * k;
}

bool isMatrixProduct(OpKind kind) { return kind == OpKind::Gemm || kind == OpKind::MatMul; }

// Ops that only move or reinterpret bytes.
bool isDataMovement(OpKind kind) {
  switch (kind) {
    case OpKind::Identity:
    case OpKind::Reshape:
    case OpKind::Flatten:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze:
    case OpKind::Transpose:
    case OpKind::Concat:
    case OpKind::Split:
    case OpKind::Slice:
    case OpKind::Gather:
    case OpKind::GatherElements:
    case OpKind::ScatterND:
    case OpKind::Pad:
    case OpKind::Expand:
    case OpKind::Tile:
    case OpKind::Shape:
    case OpKind::Size:
    case OpKind::ConstantOfShape:
    case OpKind::Range: return true;
    default: return false;
  }
}

}  // namespace

DispatchCost dispatchCost(const Dispatch& dispatch) {
  const Op& root = *dispatch.root;
  uint64_t macs = 0;
  CostKind kind = CostKind::Flops;
  switch (root.kind()) {
    case OpKind::Conv:
      macs = elements(root.result()) * tailProduct(shapeOf(root.operand(1)), 1);
      break;
    case OpKind::ConvTranspose:
      macs = elements(root.operand(0)) * tailProduct(shapeOf(root.operand(1)), 1);
      break;
    case OpKind::MatMul:
    case OpKind::Gemm: macs = matrixProductMacs(root); break;
    case OpKind::QConv2D:
      kind = CostKind::IntOps;
      macs = elements(root.result()) * tailProduct(shapeOf(root.operand(1)), 1);
      break;
    case OpKind::QDepthwiseConv2D: {
      kind = CostKind::IntOps;
      const Shape& w = shapeOf(root.operand(1));
      assert(w.size() == 4 && "depthwise weights are [1, KH, KW, C*M]");
      macs = elements(root.result()) * uint64_t(w[1] * w[2]);
      break;
    }
    case OpKind::QTransposeConv2D: {
      kind = CostKind::IntOps;
      const Shape& w = shapeOf(root.operand(1));
      assert(w.size() == 4 && "transpose-conv weights are [OC, KH, KW, IC]");
      macs = elements(root.operand(0)) * uint64_t(w[0] * w[1] * w[2]);
      break;
    }
    case OpKind::QFullyConnected:
      kind = CostKind::IntOps;
      macs = elements(root.result()) * uint64_t(shapeOf(root.operand(1)).back());
      break;
    default: {
      if (isDataMovement(root.kind())) return {};
      // Elementwise, pooling, reduction, normalization, softmax...: the elements it reads or
      // writes, whichever is more (a pool or a reduction reads more than it writes).
      uint64_t count = elements(root.result());
      if (root.numOperands() > 0 && root.operand(0))
        count = std::max(count, elements(root.operand(0)));
      return {CostKind::Elements, count};
    }
  }
  // A second matrix product fused behind a Gemm/MatMul (fuseGemmChains), a depthwise
  // convolution fused behind a 1x1 convolution (fuseExpandDepthwise).
  for (const Op* op : dispatch.fused) {
    if (isMatrixProduct(op->kind())) macs += matrixProductMacs(*op);
    if (op->kind() == OpKind::Conv)
      macs += elements(op->result()) * tailProduct(shapeOf(op->operand(1)), 1);
  }
  return {kind, 2 * macs};
}

}  // namespace kiln::ir
