// Constant evaluation of elementwise math and reductions: floats computed in double, integers
// and bool in int64 (exact for shape arithmetic), numpy broadcasting.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "constant_eval.h"
#include "kiln/ir/constant_data.h"
#include "kiln/ir/op_rules.h"
#include "kiln/support/diagnostics.h"

namespace kiln::passes::eval {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Shape;

double applyFloatUnary(const ir::Op& op, double x) {
  const auto& a = op.attrs();
  switch (op.kind()) {
    case OpKind::Abs:
      return std::fabs(x);
    case OpKind::Neg:
      return -x;
    case OpKind::Exp:
      return std::exp(x);
    case OpKind::Log:
      return std::log(x);
    case OpKind::Sqrt:
      return std::sqrt(x);
    case OpKind::Reciprocal:
      return 1.0 / x;
    case OpKind::Relu:
      return x > 0 ? x : 0.0;
    case OpKind::Sigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case OpKind::Tanh:
      return std::tanh(x);
    case OpKind::Erf:
      return std::erf(x);
    case OpKind::Floor:
      return std::floor(x);
    case OpKind::Ceil:
      return std::ceil(x);
    case OpKind::Round:
      return std::nearbyint(x);
    case OpKind::Sign:
      return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
    case OpKind::Sin:
      return std::sin(x);
    case OpKind::Cos:
      return std::cos(x);
    case OpKind::LeakyRelu:
      return x >= 0 ? x : x * a.getFloat("alpha", 0.01f);
    case OpKind::Elu:
      return x >= 0 ? x : a.getFloat("alpha", 1.0f) * (std::exp(x) - 1.0);
    case OpKind::HardSigmoid:
      return std::clamp(a.getFloat("alpha", 0.2f) * x + a.getFloat("beta", 0.5f), 0.0, 1.0);
    case OpKind::HardSwish:
      return x * std::clamp(x / 6.0 + 0.5, 0.0, 1.0);
    case OpKind::Softplus:
      return std::log1p(std::exp(x));
    case OpKind::Softsign:
      return x / (1.0 + std::fabs(x));
    default:
      return NAN;
  }
}

bool isFloatUnary(OpKind k) {
  switch (k) {
    case OpKind::Abs:
    case OpKind::Neg:
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Sqrt:
    case OpKind::Reciprocal:
    case OpKind::Relu:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::Erf:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round:
    case OpKind::Sign:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::LeakyRelu:
    case OpKind::Elu:
    case OpKind::HardSigmoid:
    case OpKind::HardSwish:
    case OpKind::Softplus:
    case OpKind::Softsign:
      return true;
    default:
      return false;
  }
}

std::optional<int64_t> applyIntUnary(OpKind k, int64_t x) {
  switch (k) {
    case OpKind::Abs:
      return x < 0 ? -x : x;
    case OpKind::Neg:
      return -x;
    case OpKind::Relu:
      return x > 0 ? x : 0;
    case OpKind::Sign:
      return x > 0 ? 1 : x < 0 ? -1 : 0;
    case OpKind::Not:
      return x ? 0 : 1;
    default:
      return std::nullopt;
  }
}

// Binary ops: result as double (floats) or int64 (integers, bool, comparisons on ints).
double applyFloatBinary(OpKind k, double x, double y) {
  switch (k) {
    case OpKind::Add:
    case OpKind::Sum:
    case OpKind::Mean:
      return x + y;
    case OpKind::Sub:
      return x - y;
    case OpKind::Mul:
      return x * y;
    case OpKind::Div:
      return x / y;
    case OpKind::Pow:
      return std::pow(x, y);
    case OpKind::Mod:
      return std::fmod(x, y);
    case OpKind::Max:
      return std::max(x, y);
    case OpKind::Min:
      return std::min(x, y);
    case OpKind::PRelu:
      return x >= 0 ? x : x * y;
    case OpKind::Equal:
      return x == y;
    case OpKind::Less:
      return x < y;
    case OpKind::LessOrEqual:
      return x <= y;
    case OpKind::Greater:
      return x > y;
    case OpKind::GreaterOrEqual:
      return x >= y;
    default:
      return NAN;
  }
}

std::optional<int64_t> applyIntBinary(const ir::Op& op, int64_t x, int64_t y) {
  switch (op.kind()) {
    case OpKind::Add:
    case OpKind::Sum:
      return int64_t(uint64_t(x) + uint64_t(y));
    case OpKind::Sub:
      return int64_t(uint64_t(x) - uint64_t(y));
    case OpKind::Mul:
      return int64_t(uint64_t(x) * uint64_t(y));
    case OpKind::Div:
      if (y == 0) throw CompileError("integer division by zero in " + op.describe());
      return x / y;
    case OpKind::Mod: {
      if (y == 0) throw CompileError("integer modulo by zero in " + op.describe());
      int64_t r = x % y;
      if (op.attrs().getInt("fmod", 0) == 0 && r != 0 && ((r < 0) != (y < 0))) r += y;
      return r;
    }
    case OpKind::Pow:
      return int64_t(std::pow(double(x), double(y)));
    case OpKind::Max:
      return std::max(x, y);
    case OpKind::Min:
      return std::min(x, y);
    case OpKind::PRelu:
      return x >= 0 ? x : x * y;
    case OpKind::And:
      return (x && y) ? 1 : 0;
    case OpKind::Or:
      return (x || y) ? 1 : 0;
    case OpKind::Xor:
      return (!x != !y) ? 1 : 0;
    case OpKind::Equal:
      return x == y;
    case OpKind::Less:
      return x < y;
    case OpKind::LessOrEqual:
      return x <= y;
    case OpKind::Greater:
      return x > y;
    case OpKind::GreaterOrEqual:
      return x >= y;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<Bytes> evalElementwise(const ir::Op& op) {
  const ir::TensorType& outType = op.result()->type();
  int64_t n = outType.numElements();
  DType inType = op.operand(op.kind() == OpKind::Where ? 1 : 0)->dtype();
  Bytes out(outType.byteSize());
  // Operand maps for broadcasting.
  std::vector<std::vector<int64_t>> maps;
  for (size_t i = 0; i < op.numOperands(); ++i)
    maps.push_back(op.operand(i) ? broadcastIndices(op.operand(i)->shape(), outType.shape)
                                 : std::vector<int64_t>());
  auto data = [&](size_t i) { return op.operand(i)->constantBytes().data(); };
  auto dt = [&](size_t i) { return op.operand(i)->dtype(); };
  bool floatMath = ir::isFloat(inType);

  if (op.kind() == OpKind::Where) {
    size_t elem = ir::dtypeSize(outType.dtype);
    for (int64_t e = 0; e < n; ++e) {
      bool c = ir::readElementInt(DType::Bool, data(0), maps[0][size_t(e)]) != 0;
      size_t src = c ? 1 : 2;
      std::memcpy(out.data() + size_t(e) * elem, data(src) + size_t(maps[src][size_t(e)]) * elem,
                  elem);
    }
    return out;
  }
  if (op.kind() == OpKind::Clip) {
    for (int64_t e = 0; e < n; ++e) {
      double x = ir::readElementDouble(dt(0), data(0), maps[0][size_t(e)]);
      if (op.optionalOperand(1)) x = std::max(x, ir::readElementDouble(dt(1), data(1), 0));
      if (op.optionalOperand(2)) x = std::min(x, ir::readElementDouble(dt(2), data(2), 0));
      ir::writeElementDouble(outType.dtype, out.data(), e, x);
    }
    return out;
  }
  if (op.numOperands() == 1 && op.kind() != OpKind::Max && op.kind() != OpKind::Min &&
      op.kind() != OpKind::Sum && op.kind() != OpKind::Mean) {
    for (int64_t e = 0; e < n; ++e) {
      if (floatMath) {
        if (!isFloatUnary(op.kind())) return std::nullopt;
        double x = ir::readElementDouble(dt(0), data(0), e);
        ir::writeElementDouble(outType.dtype, out.data(), e, applyFloatUnary(op, x));
      } else {
        auto r = applyIntUnary(op.kind(), ir::readElementInt(dt(0), data(0), e));
        if (!r) return std::nullopt;
        ir::writeElementInt(outType.dtype, out.data(), e, *r);
      }
    }
    return out;
  }
  // Binary or variadic: fold left to right.
  for (int64_t e = 0; e < n; ++e) {
    if (floatMath) {
      double acc = ir::readElementDouble(dt(0), data(0), maps[0][size_t(e)]);
      for (size_t i = 1; i < op.numOperands(); ++i) {
        double y = ir::readElementDouble(dt(i), data(i), maps[i][size_t(e)]);
        if (op.kind() == OpKind::And || op.kind() == OpKind::Or || op.kind() == OpKind::Xor)
          return std::nullopt;
        acc = applyFloatBinary(op.kind(), acc, y);
      }
      if (op.kind() == OpKind::Mean) acc /= double(op.numOperands());
      ir::writeElementDouble(outType.dtype, out.data(), e, acc);
    } else {
      int64_t acc = ir::readElementInt(dt(0), data(0), maps[0][size_t(e)]);
      for (size_t i = 1; i < op.numOperands(); ++i) {
        auto r = applyIntBinary(op, acc, ir::readElementInt(dt(i), data(i), maps[i][size_t(e)]));
        if (!r) return std::nullopt;
        acc = *r;
      }
      if (op.kind() == OpKind::Mean) acc /= int64_t(op.numOperands());
      ir::writeElementInt(outType.dtype, out.data(), e, acc);
    }
  }
  return out;
}

std::optional<Bytes> evalReduce(const ir::Op& op) {
  const ir::Value* in = op.operand(0);
  const Shape& s = in->shape();
  std::vector<int64_t> axes =
      op.optionalOperand(1) ? ir::constantInts(op.operand(1)) : op.attrs().getInts("axes", {});
  if (axes.empty()) {
    if (op.attrs().getInt("noop_with_empty_axes", 0) != 0) return in->constantBytes();
    for (size_t d = 0; d < s.size(); ++d) axes.push_back(int64_t(d));
  }
  std::set<int64_t> reduced;
  for (int64_t a : axes) reduced.insert(ir::normalizeAxis(a, int64_t(s.size())));
  // Output index of each input element: drop the reduced coordinates.
  Shape kept;
  for (size_t d = 0; d < s.size(); ++d) kept.push_back(reduced.count(int64_t(d)) ? 1 : s[d]);
  std::vector<int64_t> keptStrides = stridesOf(kept);
  int64_t outCount = ir::numElements(kept);
  OpKind k = op.kind();
  double init = k == OpKind::ReduceProd  ? 1.0
                : k == OpKind::ReduceMax ? -INFINITY
                : k == OpKind::ReduceMin ? INFINITY
                                         : 0.0;
  std::vector<double> acc(size_t(outCount), init);
  std::vector<int64_t> coord(s.size(), 0);
  for (int64_t e = 0; e < in->type().numElements(); ++e) {
    int64_t o = 0;
    for (size_t d = 0; d < s.size(); ++d)
      if (!reduced.count(int64_t(d))) o += coord[d] * keptStrides[d];
    double x = ir::readElementDouble(in->dtype(), in->constantBytes().data(), e);
    double& a = acc[size_t(o)];
    switch (k) {
      case OpKind::ReduceSum:
      case OpKind::ReduceMean:
        a += x;
        break;
      case OpKind::ReduceProd:
        a *= x;
        break;
      case OpKind::ReduceMax:
        a = std::max(a, x);
        break;
      case OpKind::ReduceMin:
        a = std::min(a, x);
        break;
      case OpKind::ReduceL2:
        a += x * x;
        break;
      default:
        return std::nullopt;
    }
    for (size_t d = s.size(); d-- > 0;) {
      if (++coord[d] < s[d]) break;
      coord[d] = 0;
    }
  }
  int64_t count = ir::numElements(s) / std::max<int64_t>(outCount, 1);
  for (double& a : acc) {
    if (k == OpKind::ReduceMean) a /= double(count);
    if (k == OpKind::ReduceL2) a = std::sqrt(a);
  }
  return ir::makeConstantBytes(op.result()->type(), acc);
}

}  // namespace kiln::passes::eval
