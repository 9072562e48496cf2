// Lowering of elementwise IR ops to expressions over broadcast inputs (an expression that is
// just an input node is a copy, broadcasting included): the arithmetic,
// comparison and logic ops, the activations (composed from primitive expression nodes, e.g.
// HardSwish = x * clip(x / 6 + 0.5, 0, 1)), Clip with constant bounds, Cast and Where.
#include <cmath>
#include <limits>

#include "kiln/ir/constant_data.h"
#include "lowering.h"

namespace kiln::codegen::detail {
namespace {

using ir::OpKind;

// Expression builder over the op's runtime operands (input i = binding i).
struct Builder {
  ElementwiseExpr& e;
  ElemType type;  // the op's compute type (first operand's)

  int in(int i, ElemType t) { return e.addInput(i, t); }
  int c(double v) { return e.addConstant(v, type); }
  int un(ExprOp op, int a, double alpha = 0, double beta = 0) {
    return e.addUnary(op, a, alpha, beta);
  }
  int bin(ExprOp op, int a, int b) { return e.addBinary(op, a, b); }
  int where(int cond, int a, int b) { return e.addWhere(cond, a, b); }
};

// Value of an optional scalar constant operand, or `fallback` if absent.
double scalarOperand(const ir::Op& op, size_t index, double fallback) {
  const ir::Value* v = op.optionalOperand(index);
  if (!v) return fallback;
  if (!v->isConstant()) unsupported(op, "operand " + std::to_string(index) + " must be a constant");
  return ir::constantDoubles(v).at(0);
}

}  // namespace

bool lowerElementwise(const ir::Op& op, KernelDesc& desc) {
  if (!op.info().hasTrait(ir::kElementwise) && op.kind() != OpKind::Expand) return false;
  desc.kind = KernelKind::Elementwise;
  if (desc.inputs.empty()) unsupported(op, "elementwise op without runtime operands");
  const ElemType t = desc.inputs[0].type;
  Builder b{desc.expr, t};
  const bool fp = isFloat(t);
  auto floatOnly = [&] {
    if (!fp) unsupported(op, std::string("dtype ") + elemTypeName(t) + " is not supported");
  };
  const ir::AttributeMap& attrs = op.attrs();
  int x = b.in(0, t);
  switch (op.kind()) {
    case OpKind::Abs:
      b.un(ExprOp::Abs, x);
      break;
    case OpKind::Neg:
      b.un(ExprOp::Neg, x);
      break;
    case OpKind::Relu:
      b.un(ExprOp::Relu, x);
      break;
    case OpKind::Exp:
      floatOnly();
      b.un(ExprOp::Exp, x);
      break;
    case OpKind::Log:
      floatOnly();
      b.un(ExprOp::Log, x);
      break;
    case OpKind::Sqrt:
      floatOnly();
      b.un(ExprOp::Sqrt, x);
      break;
    case OpKind::Reciprocal:
      floatOnly();
      b.bin(ExprOp::Div, b.c(1), x);
      break;
    case OpKind::Sigmoid:
      floatOnly();
      b.un(ExprOp::Sigmoid, x);
      break;
    case OpKind::Tanh:
      floatOnly();
      b.un(ExprOp::Tanh, x);
      break;
    case OpKind::Erf:
      floatOnly();
      b.un(ExprOp::Erf, x);
      break;
    case OpKind::Floor:
      floatOnly();
      b.un(ExprOp::Floor, x);
      break;
    case OpKind::Ceil:
      floatOnly();
      b.un(ExprOp::Ceil, x);
      break;
    case OpKind::Not:
      b.un(ExprOp::Not, x);
      break;
    case OpKind::Sign:
      b.where(b.bin(ExprOp::Greater, x, b.c(0)), b.c(1),
              b.where(b.bin(ExprOp::Less, x, b.c(0)), b.c(-1), b.c(0)));
      break;
    case OpKind::LeakyRelu:
      floatOnly();
      b.un(ExprOp::LeakyRelu, x, attrs.getFloat("alpha", 0.01f));
      break;
    case OpKind::Elu: {
      floatOnly();
      double alpha = attrs.getFloat("alpha", 1.0f);
      int neg = b.bin(ExprOp::Mul, b.c(alpha), b.bin(ExprOp::Sub, b.un(ExprOp::Exp, x), b.c(1)));
      b.where(b.bin(ExprOp::Less, x, b.c(0)), neg, x);
      break;
    }
    case OpKind::Selu: {
      floatOnly();
      double alpha = attrs.getFloat("alpha", 1.67326319217681884765625f);
      double gamma = attrs.getFloat("gamma", 1.05070102214813232421875f);
      int neg = b.bin(ExprOp::Mul, b.c(alpha), b.bin(ExprOp::Sub, b.un(ExprOp::Exp, x), b.c(1)));
      b.bin(ExprOp::Mul, b.c(gamma), b.where(b.bin(ExprOp::Greater, x, b.c(0)), x, neg));
      break;
    }
    case OpKind::HardSigmoid: {
      floatOnly();
      int lin = b.bin(ExprOp::Add, b.bin(ExprOp::Mul, x, b.c(attrs.getFloat("alpha", 0.2f))),
                      b.c(attrs.getFloat("beta", 0.5f)));
      b.un(ExprOp::Clip, lin, 0.0, 1.0);
      break;
    }
    case OpKind::HardSwish: {
      floatOnly();
      int gate = b.bin(ExprOp::Add, b.bin(ExprOp::Mul, x, b.c(1.0 / 6.0)), b.c(0.5));
      b.bin(ExprOp::Mul, x, b.un(ExprOp::Clip, gate, 0.0, 1.0));
      break;
    }
    case OpKind::Softplus: {
      floatOnly();
      int soft = b.un(ExprOp::Log, b.bin(ExprOp::Add, b.c(1), b.un(ExprOp::Exp, x)));
      b.where(b.bin(ExprOp::Greater, x, b.c(20)), x, soft);
      break;
    }
    case OpKind::Celu: {
      // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
      floatOnly();
      double alpha = attrs.getFloat("alpha", 1.0f);
      int e = b.un(ExprOp::Exp, b.bin(ExprOp::Mul, x, b.c(1.0 / alpha)));
      int scaled = b.bin(ExprOp::Mul, b.c(alpha), b.bin(ExprOp::Sub, e, b.c(1)));
      int neg = b.bin(ExprOp::Min, b.c(0), scaled);
      b.bin(ExprOp::Add, b.un(ExprOp::Relu, x), neg);
      break;
    }
    case OpKind::ThresholdedRelu:
      floatOnly();
      b.where(b.bin(ExprOp::Greater, x, b.c(attrs.getFloat("alpha", 1.0f))), x, b.c(0));
      break;
    case OpKind::Shrink: {
      // x < -lambd: x + bias; x > lambd: x - bias; else 0.
      double lambd = attrs.getFloat("lambd", 0.5f), bias = attrs.getFloat("bias", 0.0f);
      int below = b.bin(ExprOp::Less, x, b.c(-lambd));
      int above = b.bin(ExprOp::Greater, x, b.c(lambd));
      int upper = b.where(above, b.bin(ExprOp::Sub, x, b.c(bias)), b.c(0));
      b.where(below, b.bin(ExprOp::Add, x, b.c(bias)), upper);
      break;
    }
    case OpKind::Softsign:
      floatOnly();
      b.bin(ExprOp::Div, x, b.bin(ExprOp::Add, b.c(1), b.un(ExprOp::Abs, x)));
      break;
    case OpKind::Gelu: {
      floatOnly();
      int inner;
      if (attrs.getString("approximate", "none") == "tanh") {
        int cube = b.bin(ExprOp::Mul, b.bin(ExprOp::Mul, x, x), x);
        int arg = b.bin(ExprOp::Mul, b.c(0.7978845608028654),
                        b.bin(ExprOp::Add, x, b.bin(ExprOp::Mul, b.c(0.044715), cube)));
        inner = b.un(ExprOp::Tanh, arg);
      } else {
        inner = b.un(ExprOp::Erf, b.bin(ExprOp::Mul, x, b.c(0.7071067811865476)));
      }
      b.bin(ExprOp::Mul, b.bin(ExprOp::Mul, b.c(0.5), x), b.bin(ExprOp::Add, b.c(1), inner));
      break;
    }
    case OpKind::Clip: {
      double lowest = fp ? -std::numeric_limits<double>::infinity() : -9.2233720368547758e18;
      double highest = fp ? std::numeric_limits<double>::infinity() : 9.2233720368547758e18;
      double lo = scalarOperand(op, 1, lowest), hi = scalarOperand(op, 2, highest);
      if (fp) {
        b.un(ExprOp::Clip, x, lo, hi);
      } else {
        int v = x;  // no bound at all: the expression is the input itself (a copy)
        if (op.optionalOperand(1)) v = b.bin(ExprOp::Max, v, b.c(lo));
        if (op.optionalOperand(2)) b.bin(ExprOp::Min, v, b.c(hi));
      }
      break;
    }
    case OpKind::Cast:
      desc.expr.addCast(x, desc.output.type);
      break;
    case OpKind::Expand:
      break;  // the input alone: a broadcast copy
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::And:
    case OpKind::Or:
    case OpKind::Xor: {
      int y = b.in(1, desc.inputs[1].type);
      ExprOp e = op.kind() == OpKind::Add   ? ExprOp::Add
                 : op.kind() == OpKind::Sub ? ExprOp::Sub
                 : op.kind() == OpKind::Mul ? ExprOp::Mul
                 : op.kind() == OpKind::Div ? ExprOp::Div
                 : op.kind() == OpKind::And ? ExprOp::And
                 : op.kind() == OpKind::Or  ? ExprOp::Or
                                            : ExprOp::Xor;
      b.bin(e, x, y);
      break;
    }
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Sum:
    case OpKind::Mean: {
      ExprOp e = op.kind() == OpKind::Max   ? ExprOp::Max
                 : op.kind() == OpKind::Min ? ExprOp::Min
                                            : ExprOp::Add;
      int acc = x;
      for (size_t i = 1; i < desc.inputs.size(); ++i) acc = b.bin(e, acc, b.in(int(i), t));
      if (op.kind() == OpKind::Mean) {
        floatOnly();
        acc = b.bin(ExprOp::Mul, acc, b.c(1.0 / double(desc.inputs.size())));
      }
      break;
    }
    case OpKind::PRelu: {
      int slope = b.in(1, desc.inputs[1].type);
      b.where(b.bin(ExprOp::Less, x, b.c(0)), b.bin(ExprOp::Mul, x, slope), x);
      break;
    }
    case OpKind::Pow: {
      floatOnly();
      const ir::Value* exponent = op.operand(1);
      if (exponent->isConstant() && ir::isSplatConstant(exponent)) {
        // A constant exponent stays a runtime binding (input 1) but is not read.
        double p = ir::constantDoubles(exponent).at(0);
        if (p == 1) break;  // the input itself
        if (p == 2) {
          b.bin(ExprOp::Mul, x, x);
          break;
        }
        if (p == 3) {
          b.bin(ExprOp::Mul, b.bin(ExprOp::Mul, x, x), x);
          break;
        }
        if (p == 0.5) {
          b.un(ExprOp::Sqrt, x);
          break;
        }
        if (p == -1) {
          b.bin(ExprOp::Div, b.c(1), x);
          break;
        }
      }
      int y = b.in(1, desc.inputs[1].type);
      if (desc.inputs[1].type != t) y = desc.expr.addCast(y, t);
      // |x|^y = exp(y log|x|); a negative base needs an integer exponent (an odd one flips
      // the sign), else NaN; x^0 = 1.
      int magnitude =
          b.un(ExprOp::Exp, b.bin(ExprOp::Mul, y, b.un(ExprOp::Log, b.un(ExprOp::Abs, x))));
      int integral = b.bin(ExprOp::Equal, b.un(ExprOp::Floor, y), y);
      int half = b.bin(ExprOp::Mul, y, b.c(0.5));
      int odd = b.un(ExprOp::Not, b.bin(ExprOp::Equal, b.un(ExprOp::Floor, half), half));
      int negative = b.where(integral, b.where(odd, b.un(ExprOp::Neg, magnitude), magnitude),
                             b.c(std::numeric_limits<double>::quiet_NaN()));
      int result = b.where(b.bin(ExprOp::Less, x, b.c(0)), negative, magnitude);
      b.where(b.bin(ExprOp::Equal, y, b.c(0)), b.c(1), result);
      break;
    }
    case OpKind::Equal:
      b.bin(ExprOp::Equal, x, b.in(1, desc.inputs[1].type));
      break;
    case OpKind::Less:
      b.bin(ExprOp::Less, x, b.in(1, desc.inputs[1].type));
      break;
    case OpKind::Greater:
      b.bin(ExprOp::Greater, x, b.in(1, desc.inputs[1].type));
      break;
    case OpKind::LessOrEqual:
      b.un(ExprOp::Not, b.bin(ExprOp::Greater, x, b.in(1, desc.inputs[1].type)));
      break;
    case OpKind::GreaterOrEqual:
      b.un(ExprOp::Not, b.bin(ExprOp::Less, x, b.in(1, desc.inputs[1].type)));
      break;
    case OpKind::Where: {
      // x is the condition here.
      int a = b.in(1, desc.inputs[1].type), c = b.in(2, desc.inputs[2].type);
      b.where(x, a, c);
      break;
    }
    default:
      unsupported(op, "not supported by the code generator yet");
  }
  return true;
}

}  // namespace kiln::codegen::detail
