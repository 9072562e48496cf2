// The f64 policy of the code generator (see f64_support.h): an allow-list of IR ops whose
// kernels are generic over the element type, and the refusal of 32-bit targets.
#include "f64_support.h"

#include "codegen_error.h"
#include "kiln/ir/constant_data.h"
#include "kiln/support/diagnostics.h"

namespace kiln::codegen::detail {
namespace {

using ir::OpKind;

bool touchesF64(const ir::Op& op) {
  for (size_t i = 0; i < op.numOperands(); ++i) {
    const ir::Value* v = op.optionalOperand(i);
    if (v && v->dtype() == ir::DType::F64) return true;
  }
  for (size_t i = 0; i < op.numResults(); ++i) {
    if (op.result(i)->dtype() == ir::DType::F64) return true;
  }
  return false;
}

// Pow lowers to multiplications, a division or a square root for these constant exponents,
// else to exp/log.
bool isArithmeticPow(const ir::Op& op) {
  const ir::Value* exponent = op.operand(1);
  if (!exponent->isConstant() || !ir::isSplatConstant(exponent)) return false;
  double p = ir::constantDoubles(exponent).at(0);
  return p == 1 || p == 2 || p == 3 || p == -1 || p == 0.5;
}

// Ops whose kernels use only +, -, *, /, comparisons, selects, casts, loads and stores, which
// LLVM lowers for doubles as for floats, plus sqrt/floor/ceil (expr_eval.cpp's f64 forms).
// The transcendental ones (Exp, Sigmoid, Erf ...) use kiln's f32 approximations, and
// Conv/MatMul/pooling/normalisation have f32 kernels only.
bool hasF64Kernel(const ir::Op& op) {
  switch (op.kind()) {
    // elementwise arithmetic, comparisons and logic
    case OpKind::Abs:
    case OpKind::Neg:
    case OpKind::Relu:
    case OpKind::Reciprocal:
    case OpKind::Sqrt:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Sign:
    case OpKind::LeakyRelu:
    case OpKind::HardSigmoid:
    case OpKind::HardSwish:
    case OpKind::ThresholdedRelu:
    case OpKind::Shrink:
    case OpKind::Softsign:
    case OpKind::Clip:
    case OpKind::Cast:
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Sum:
    case OpKind::Mean:
    case OpKind::PRelu:
    case OpKind::Equal:
    case OpKind::Less:
    case OpKind::Greater:
    case OpKind::LessOrEqual:
    case OpKind::GreaterOrEqual:
    case OpKind::Where:
    case OpKind::Expand:
    // data movement (bytes, whatever the element type)
    case OpKind::Transpose:
    case OpKind::Concat:
    case OpKind::Slice:
    case OpKind::Gather:
    case OpKind::GatherElements:
    case OpKind::Pad:
    case OpKind::Split:
    case OpKind::Tile:
    case OpKind::Reshape:
    case OpKind::Flatten:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze:
    case OpKind::Identity:
    case OpKind::Dropout:
    // reductions by addition, multiplication and comparison
    case OpKind::ReduceSum:
    case OpKind::ReduceMean:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
    case OpKind::ReduceProd:
    case OpKind::ReduceL1:
    case OpKind::ReduceSumSquare:
    case OpKind::GlobalAveragePool:
    case OpKind::GlobalMaxPool:
    case OpKind::CumSum:
    case OpKind::ArgMax:
    case OpKind::ArgMin:
      return true;
    case OpKind::Pow:
      return isArithmeticPow(op);
    default:
      return false;
  }
}

void checkOp(const ir::Op& op) {
  if (!touchesF64(op) || hasF64Kernel(op)) return;
  std::string name(op.info().name);
  throw CompileError(op.describe() + ": f64 is not supported for op " + name +
                     " (kiln has no double-precision kernel for it); export the model in float32");
}

}  // namespace

void checkF64Ops(const ir::Dispatch& dispatch) {
  checkOp(*dispatch.root);
  const bool elementwiseRoot =
      dispatch.root->info().hasTrait(ir::kElementwise) || dispatch.root->kind() == OpKind::Expand;
  for (const ir::Op* op : dispatch.fused) {
    checkOp(*op);
    // Epilogues of Conv/MatMul/pool kernels compute in f32. (fuseElementwise fuses all-f32
    // ops only; this guards the code generator should that change.)
    if (!elementwiseRoot && touchesF64(*op)) {
      throw CompileError(op->describe() + ": f64 is not supported in an epilogue fused into " +
                         dispatch.root->describe() + "; compile with --fusion=none");
    }
  }
}

bool usesF64(const KernelDesc& desc) {
  if (desc.output.type == ElemType::F64) return true;
  for (const BufferDesc& b : desc.inputs)
    if (b.type == ElemType::F64) return true;
  for (const BufferDesc& b : desc.extraOutputs)
    if (b.type == ElemType::F64) return true;
  for (const ExprNode& n : desc.expr.nodes)
    if (n.type == ElemType::F64) return true;
  return false;
}

void checkF64Target(const std::vector<KernelDesc>& kernels, const TargetConfig& target) {
  if (target.pointerBits != 32) return;
  for (const KernelDesc& desc : kernels) {
    if (!usesF64(desc)) continue;
    throw CompileError("kernel '" + desc.name + "' computes in f64, which kiln does not support " +
                       "on target '" + target.name +
                       "' (no double-precision arithmetic on microcontrollers); export the model "
                       "in float32");
  }
}

}  // namespace kiln::codegen::detail
