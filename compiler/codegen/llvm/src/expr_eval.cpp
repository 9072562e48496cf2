// Evaluation of elementwise expressions (kernel_desc.h's ExprNode lists) as LLVM IR for one
// element: used by elementwise kernels and by the fused epilogues of the other kernels.
#include "expr_eval.h"

#include "kernel_builder.h"
#include "math_approx.h"

namespace kiln::codegen::detail {
namespace {

bool isUnsigned(ElemType type) { return type == ElemType::U8 || type == ElemType::Bool; }

llvm::Value* castValue(KernelBuilder& kb, llvm::Value* v, ElemType from, ElemType to) {
  llvm::IRBuilder<>& b = kb.b();
  llvm::Type* target = kb.elemType(to);
  if (from == to) return v;
  if (to == ElemType::Bool) {
    return isFloat(from) ? b.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0))
                         : b.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  if (isFloat(from) && isFloat(to)) return b.CreateFPCast(v, target);  // f32 <-> f64
  if (isFloat(from)) {
    return isUnsigned(to) ? b.CreateFPToUI(v, target) : b.CreateFPToSI(v, target);
  }
  if (isFloat(to)) return isUnsigned(from) ? b.CreateUIToFP(v, target) : b.CreateSIToFP(v, target);
  return isUnsigned(from) ? b.CreateZExtOrTrunc(v, target) : b.CreateSExtOrTrunc(v, target);
}

llvm::Value* evalBinary(KernelBuilder& kb, ExprOp op, ElemType type, llvm::Value* x,
                        llvm::Value* y) {
  llvm::IRBuilder<>& b = kb.b();
  bool fp = isFloat(type);
  bool uns = isUnsigned(type);
  switch (op) {
    case ExprOp::Add:
      return fp ? b.CreateFAdd(x, y) : b.CreateAdd(x, y);
    case ExprOp::Sub:
      return fp ? b.CreateFSub(x, y) : b.CreateSub(x, y);
    case ExprOp::Mul:
      return fp ? b.CreateFMul(x, y) : b.CreateMul(x, y);
    case ExprOp::Div: {
      if (fp) return b.CreateFDiv(x, y);
      // Integer division by zero is undefined in LLVM: divide by 1 instead (result unspecified).
      llvm::Value* zero = llvm::ConstantInt::get(y->getType(), 0);
      llvm::Value* one = llvm::ConstantInt::get(y->getType(), 1);
      llvm::Value* safe = b.CreateSelect(b.CreateICmpEQ(y, zero), one, y);
      return uns ? b.CreateUDiv(x, safe) : b.CreateSDiv(x, safe);
    }
    case ExprOp::Max:
      if (uns) return b.CreateSelect(b.CreateICmpUGT(x, y), x, y);
      return kb.maxValue(x, y);
    case ExprOp::Min:
      if (uns) return b.CreateSelect(b.CreateICmpULT(x, y), x, y);
      return kb.minValue(x, y);
    case ExprOp::And:
      return b.CreateAnd(x, y);
    case ExprOp::Or:
      return b.CreateOr(x, y);
    case ExprOp::Xor:
      return b.CreateXor(x, y);
    case ExprOp::Equal:
      return fp ? b.CreateFCmpOEQ(x, y) : b.CreateICmpEQ(x, y);
    case ExprOp::Less:
      return fp ? b.CreateFCmpOLT(x, y) : uns ? b.CreateICmpULT(x, y) : b.CreateICmpSLT(x, y);
    case ExprOp::Greater:
      return fp ? b.CreateFCmpOGT(x, y) : uns ? b.CreateICmpUGT(x, y) : b.CreateICmpSGT(x, y);
    default:
      break;
  }
  return nullptr;
}

// floor of an f64 scalar without a library call: below 2^52 through a truncating i64
// conversion (one less where that rounded up), from 2^52 on (and NaN, inf) the value itself;
// the sign of x kept (floor(-0.0) = -0.0).
llvm::Value* floorF64(KernelBuilder& kb, llvm::Value* x) {
  llvm::IRBuilder<>& b = kb.b();
  llvm::Type* type = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(type, v); };
  llvm::Value* ax = b.CreateSelect(b.CreateFCmpOLT(x, c(0.0)), b.CreateFNeg(x), x);
  llvm::Value* small = b.CreateFCmpOLT(ax, c(4503599627370496.0));
  llvm::Value* safe = b.CreateSelect(small, x, c(0.0));
  llvm::Value* truncated = b.CreateSIToFP(b.CreateFPToSI(safe, b.getInt64Ty()), type);
  llvm::Value* floored =
      b.CreateSelect(b.CreateFCmpOGT(truncated, safe), b.CreateFSub(truncated, c(1.0)), truncated);
  floored = b.CreateIntrinsic(llvm::Intrinsic::copysign, {type}, {floored, safe});
  return b.CreateSelect(small, floored, x);
}

// f64 unary ops that need more than arithmetic (kiln's approximations are f32): sqrt (a
// hardware instruction on every 64-bit target), floor and ceil. nullptr for the others.
llvm::Value* evalUnaryF64(KernelBuilder& kb, ExprOp op, llvm::Value* x) {
  llvm::IRBuilder<>& b = kb.b();
  switch (op) {
    case ExprOp::Sqrt:
      return b.CreateIntrinsic(llvm::Intrinsic::sqrt, {x->getType()}, {x});
    case ExprOp::Floor:
      return floorF64(kb, x);
    case ExprOp::Ceil:
      return b.CreateFNeg(floorF64(kb, b.CreateFNeg(x)));
    default:
      return nullptr;
  }
}

llvm::Value* evalUnary(KernelBuilder& kb, const ExprNode& node, llvm::Value* x) {
  llvm::IRBuilder<>& b = kb.b();
  if (node.type == ElemType::F64) {
    if (llvm::Value* v = evalUnaryF64(kb, node.op, x)) return v;
  }
  bool fp = isFloat(node.type);
  // Constants of x's type: scalars, or splats when x is a vector (fused epilogues on
  // register tiles).
  auto like = [&](double v) -> llvm::Value* {
    if (fp) return llvm::ConstantFP::get(x->getType(), v);
    return llvm::ConstantInt::get(x->getType(), uint64_t(int64_t(v)), true);
  };
  llvm::Value* zero = like(0);
  switch (node.op) {
    case ExprOp::Neg:
      return fp ? b.CreateFNeg(x) : b.CreateNeg(x);
    case ExprOp::Abs:
      if (fp) return b.CreateSelect(b.CreateFCmpOLT(x, zero), b.CreateFNeg(x), x);
      return b.CreateSelect(b.CreateICmpSLT(x, zero), b.CreateNeg(x), x);
    case ExprOp::Relu:
      return kb.maxValue(x, zero);
    case ExprOp::Not:
      return b.CreateNot(x);
    case ExprOp::LeakyRelu:
      return b.CreateSelect(b.CreateFCmpOLT(x, zero), b.CreateFMul(x, like(node.alpha)), x);
    case ExprOp::Clip: {
      llvm::Value* lo = fp ? like(node.alpha) : kb.constant(node.type, node.alpha);
      llvm::Value* hi = fp ? like(node.beta) : kb.constant(node.type, node.beta);
      return kb.minValue(kb.maxValue(x, lo), hi);
    }
    case ExprOp::Sigmoid:
      return emitSigmoid(kb, x);
    case ExprOp::Tanh:
      return emitTanh(kb, x);
    case ExprOp::Exp:
      return emitExp(kb, x);
    case ExprOp::Log:
      return emitLog(kb, x);
    case ExprOp::Floor:
      return emitFloor(kb, x);
    case ExprOp::Ceil:
      return b.CreateFNeg(emitFloor(kb, b.CreateFNeg(x)));
    case ExprOp::Erf:
      return emitErf(kb, x);
    case ExprOp::Sqrt:
      return emitSqrt(kb, x);
    default:
      break;
  }
  return nullptr;
}

}  // namespace

llvm::Value* evalExpr(KernelBuilder& kb, const std::vector<ExprNode>& nodes,
                      const std::function<llvm::Value*(const ExprNode&)>& inputValue,
                      llvm::Value* result, unsigned lanes) {
  llvm::IRBuilder<>& b = kb.b();
  std::vector<llvm::Value*> values(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    const ExprNode& node = nodes[n];
    llvm::Value* a = node.a >= 0 ? values[node.a] : nullptr;
    llvm::Value* c = node.b >= 0 ? values[node.b] : nullptr;
    switch (node.op) {
      case ExprOp::Input:
        values[n] = inputValue(node);
        break;
      case ExprOp::Result:
        values[n] = result;
        break;
      case ExprOp::Constant:
        values[n] = kb.constant(node.type, node.alpha);
        if (lanes > 0) values[n] = b.CreateVectorSplat(lanes, values[n]);
        break;
      case ExprOp::Cast:
        values[n] = castValue(kb, a, nodes[node.a].type, node.type);
        break;
      case ExprOp::Where:
        values[n] = b.CreateSelect(a, c, values[node.c]);
        break;
      case ExprOp::Add:
      case ExprOp::Sub:
      case ExprOp::Mul:
      case ExprOp::Div:
      case ExprOp::Max:
      case ExprOp::Min:
      case ExprOp::Equal:
      case ExprOp::Less:
      case ExprOp::Greater:
      case ExprOp::And:
      case ExprOp::Or:
      case ExprOp::Xor:
        values[n] = evalBinary(kb, node.op, nodes[node.a].type, a, c);
        break;
      default:
        values[n] = evalUnary(kb, node, a);
        break;
    }
  }
  return values.back();
}

}  // namespace kiln::codegen::detail
