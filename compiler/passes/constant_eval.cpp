// Reference evaluator used by constant folding: elementwise math (in double for floats, in
// int64 for integers and bool), broadcasting, and byte-level data movement (Reshape, Concat,
// Gather, Slice, Transpose, Expand, Tile, Split) so that integer shape values stay exact.
#include "constant_eval.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>

#include "kiln/ir/constant_data.h"
#include "kiln/ir/op_rules.h"
#include "kiln/support/diagnostics.h"

namespace kiln::passes {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Shape;
using Bytes = std::vector<uint8_t>;

std::vector<int64_t> stridesOf(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

// For every output element, the linear index of the element of `in` it reads under numpy
// broadcasting of `in` to `out`.
std::vector<int64_t> broadcastIndices(const Shape& in, const Shape& out) {
  std::vector<int64_t> inStrides = stridesOf(in);
  size_t offset = out.size() - in.size();
  std::vector<int64_t> map(size_t(ir::numElements(out)));
  std::vector<int64_t> coord(out.size(), 0);
  for (size_t linear = 0; linear < map.size(); ++linear) {
    int64_t src = 0;
    for (size_t d = 0; d < in.size(); ++d)
      if (in[d] != 1) src += coord[d + offset] * inStrides[d];
    map[linear] = src;
    for (size_t d = out.size(); d-- > 0;) {
      if (++coord[d] < out[d]) break;
      coord[d] = 0;
    }
  }
  return map;
}

// Copies elements: out[i] = in[map[i]] for byte tensors with element size `elem`.
Bytes gatherBytes(const Bytes& in, const std::vector<int64_t>& map, size_t elem) {
  Bytes out(map.size() * elem);
  for (size_t i = 0; i < map.size(); ++i)
    std::memcpy(out.data() + i * elem, in.data() + size_t(map[i]) * elem, elem);
  return out;
}

double applyFloatUnary(const ir::Op& op, double x) {
  const auto& a = op.attrs();
  switch (op.kind()) {
    case OpKind::Abs: return std::fabs(x);
    case OpKind::Neg: return -x;
    case OpKind::Exp: return std::exp(x);
    case OpKind::Log: return std::log(x);
    case OpKind::Sqrt: return std::sqrt(x);
    case OpKind::Reciprocal: return 1.0 / x;
    case OpKind::Relu: return x > 0 ? x : 0.0;
    case OpKind::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case OpKind::Tanh: return std::tanh(x);
    case OpKind::Erf: return std::erf(x);
    case OpKind::Floor: return std::floor(x);
    case OpKind::Ceil: return std::ceil(x);
    case OpKind::Round: return std::nearbyint(x);
    case OpKind::Sign: return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
    case OpKind::Sin: return std::sin(x);
    case OpKind::Cos: return std::cos(x);
    case OpKind::LeakyRelu: return x >= 0 ? x : x * a.getFloat("alpha", 0.01f);
    case OpKind::Elu: return x >= 0 ? x : a.getFloat("alpha", 1.0f) * (std::exp(x) - 1.0);
    case OpKind::HardSigmoid:
      return std::clamp(a.getFloat("alpha", 0.2f) * x + a.getFloat("beta", 0.5f), 0.0, 1.0);
    case OpKind::HardSwish: return x * std::clamp(x / 6.0 + 0.5, 0.0, 1.0);
    case OpKind::Softplus: return std::log1p(std::exp(x));
    case OpKind::Softsign: return x / (1.0 + std::fabs(x));
    default: return NAN;
  }
}

bool isFloatUnary(OpKind k) {
  switch (k) {
    case OpKind::Abs: case OpKind::Neg: case OpKind::Exp: case OpKind::Log: case OpKind::Sqrt:
    case OpKind::Reciprocal: case OpKind::Relu: case OpKind::Sigmoid: case OpKind::Tanh:
    case OpKind::Erf: case OpKind::Floor: case OpKind::Ceil: case OpKind::Round:
    case OpKind::Sign: case OpKind::Sin: case OpKind::Cos: case OpKind::LeakyRelu:
    case OpKind::Elu: case OpKind::HardSigmoid: case OpKind::HardSwish: case OpKind::Softplus:
    case OpKind::Softsign:
      return true;
    default:
      return false;
  }
}

std::optional<int64_t> applyIntUnary(OpKind k, int64_t x) {
  switch (k) {
    case OpKind::Abs: return x < 0 ? -x : x;
    case OpKind::Neg: return -x;
    case OpKind::Relu: return x > 0 ? x : 0;
    case OpKind::Sign: return x > 0 ? 1 : x < 0 ? -1 : 0;
    case OpKind::Not: return x ? 0 : 1;
    default: return std::nullopt;
  }
}

// Binary ops: result as double (floats) or int64 (integers, bool, comparisons on ints).
double applyFloatBinary(OpKind k, double x, double y) {
  switch (k) {
    case OpKind::Add: case OpKind::Sum: case OpKind::Mean: return x + y;
    case OpKind::Sub: return x - y;
    case OpKind::Mul: return x * y;
    case OpKind::Div: return x / y;
    case OpKind::Pow: return std::pow(x, y);
    case OpKind::Mod: return std::fmod(x, y);
    case OpKind::Max: return std::max(x, y);
    case OpKind::Min: return std::min(x, y);
    case OpKind::PRelu: return x >= 0 ? x : x * y;
    case OpKind::Equal: return x == y;
    case OpKind::Less: return x < y;
    case OpKind::LessOrEqual: return x <= y;
    case OpKind::Greater: return x > y;
    case OpKind::GreaterOrEqual: return x >= y;
    default: return NAN;
  }
}

std::optional<int64_t> applyIntBinary(const ir::Op& op, int64_t x, int64_t y) {
  switch (op.kind()) {
    case OpKind::Add: case OpKind::Sum: return int64_t(uint64_t(x) + uint64_t(y));
    case OpKind::Sub: return int64_t(uint64_t(x) - uint64_t(y));
    case OpKind::Mul: return int64_t(uint64_t(x) * uint64_t(y));
    case OpKind::Div:
      if (y == 0) throw CompileError("integer division by zero in " + op.describe());
      return x / y;
    case OpKind::Mod: {
      if (y == 0) throw CompileError("integer modulo by zero in " + op.describe());
      int64_t r = x % y;
      if (op.attrs().getInt("fmod", 0) == 0 && r != 0 && ((r < 0) != (y < 0))) r += y;
      return r;
    }
    case OpKind::Pow: return int64_t(std::pow(double(x), double(y)));
    case OpKind::Max: return std::max(x, y);
    case OpKind::Min: return std::min(x, y);
    case OpKind::PRelu: return x >= 0 ? x : x * y;
    case OpKind::And: return (x && y) ? 1 : 0;
    case OpKind::Or: return (x || y) ? 1 : 0;
    case OpKind::Xor: return (!x != !y) ? 1 : 0;
    case OpKind::Equal: return x == y;
    case OpKind::Less: return x < y;
    case OpKind::LessOrEqual: return x <= y;
    case OpKind::Greater: return x > y;
    case OpKind::GreaterOrEqual: return x >= y;
    default: return std::nullopt;
  }
}

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
      std::memcpy(out.data() + size_t(e) * elem, data(src) + size_t(maps[src][size_t(e)]) * elem, elem);
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

Bytes evalCast(const ir::Op& op) {
  const ir::Value* in = op.operand(0);
  const ir::TensorType& outType = op.result()->type();
  Bytes out(outType.byteSize());
  const uint8_t* src = in->constantBytes().data();
  for (int64_t e = 0; e < outType.numElements(); ++e) {
    if (ir::isFloat(in->dtype()) || ir::isFloat(outType.dtype))
      ir::writeElementDouble(outType.dtype, out.data(), e, ir::readElementDouble(in->dtype(), src, e));
    else
      ir::writeElementInt(outType.dtype, out.data(), e, ir::readElementInt(in->dtype(), src, e));
  }
  return out;
}

Bytes evalTranspose(const ir::Op& op) {
  const Shape& in = op.operand(0)->shape();
  std::vector<int64_t> perm;
  for (int64_t i = int64_t(in.size()) - 1; i >= 0; --i) perm.push_back(i);
  perm = op.attrs().getInts("perm", perm);
  const Shape& out = op.result()->shape();
  std::vector<int64_t> inStrides = stridesOf(in);
  std::vector<int64_t> map(size_t(ir::numElements(out)));
  std::vector<int64_t> coord(out.size(), 0);
  for (size_t linear = 0; linear < map.size(); ++linear) {
    int64_t src = 0;
    for (size_t d = 0; d < out.size(); ++d) src += coord[d] * inStrides[size_t(perm[d])];
    map[linear] = src;
    for (size_t d = out.size(); d-- > 0;) {
      if (++coord[d] < out[d]) break;
      coord[d] = 0;
    }
  }
  return gatherBytes(op.operand(0)->constantBytes(), map, ir::dtypeSize(op.result()->dtype()));
}

// Concat and Split: copy contiguous blocks along `axis`.
Bytes evalConcat(const ir::Op& op) {
  const Shape& out = op.result()->shape();
  int64_t axis = ir::normalizeAxis(op.attrs().getInt("axis"), int64_t(out.size()));
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out[size_t(d)];
  size_t elem = ir::dtypeSize(op.result()->dtype());
  Bytes result;
  result.reserve(op.result()->type().byteSize());
  for (int64_t o = 0; o < outer; ++o) {
    for (const ir::Value* v : op.operands()) {
      size_t block = size_t(v->type().numElements() / std::max<int64_t>(outer, 1)) * elem;
      const uint8_t* src = v->constantBytes().data() + size_t(o) * block;
      result.insert(result.end(), src, src + block);
    }
  }
  return result;
}

std::vector<Bytes> evalSplit(const ir::Op& op) {
  const ir::Value* in = op.operand(0);
  int64_t axis = ir::normalizeAxis(op.attrs().getInt("axis", 0), in->type().rank());
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= in->shape()[size_t(d)];
  size_t elem = ir::dtypeSize(in->dtype());
  size_t inBlock = size_t(in->type().numElements() / std::max<int64_t>(outer, 1)) * elem;
  std::vector<Bytes> results(op.numResults());
  size_t offset = 0;
  for (size_t r = 0; r < op.numResults(); ++r) {
    size_t block = size_t(op.result(r)->type().numElements() / std::max<int64_t>(outer, 1)) * elem;
    for (int64_t o = 0; o < outer; ++o) {
      const uint8_t* src = in->constantBytes().data() + size_t(o) * inBlock + offset;
      results[r].insert(results[r].end(), src, src + block);
    }
    offset += block;
  }
  return results;
}

Bytes evalGather(const ir::Op& op) {
  const ir::Value* data = op.operand(0);
  int64_t axis = ir::normalizeAxis(op.attrs().getInt("axis", 0), data->type().rank());
  std::vector<int64_t> indices = ir::constantInts(op.operand(1));
  const Shape& s = data->shape();
  int64_t outer = 1, inner = 1, dim = s[size_t(axis)];
  for (int64_t d = 0; d < axis; ++d) outer *= s[size_t(d)];
  for (size_t d = size_t(axis) + 1; d < s.size(); ++d) inner *= s[d];
  std::vector<int64_t> map;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t index : indices) {
      int64_t i = index < 0 ? index + dim : index;
      if (i < 0 || i >= dim)
        throw CompileError(op.describe() + ": Gather index " + std::to_string(index) +
                           " is out of range for axis size " + std::to_string(dim));
      for (int64_t k = 0; k < inner; ++k) map.push_back((o * dim + i) * inner + k);
    }
  return gatherBytes(data->constantBytes(), map, ir::dtypeSize(data->dtype()));
}

Bytes evalSlice(const ir::Op& op) {
  auto ints = [&](size_t i) {
    return op.optionalOperand(i) ? ir::constantInts(op.operand(i)) : std::vector<int64_t>();
  };
  const Shape& in = op.operand(0)->shape();
  ir::SliceGeometry g = ir::resolveSlice(in, ints(1), ints(2), ints(3), ints(4));
  std::vector<int64_t> inStrides = stridesOf(in);
  std::vector<int64_t> map(size_t(ir::numElements(g.output)));
  std::vector<int64_t> coord(g.output.size(), 0);
  for (size_t linear = 0; linear < map.size(); ++linear) {
    int64_t src = 0;
    for (size_t d = 0; d < in.size(); ++d) src += (g.starts[d] + coord[d] * g.steps[d]) * inStrides[d];
    map[linear] = src;
    for (size_t d = coord.size(); d-- > 0;) {
      if (++coord[d] < g.output[d]) break;
      coord[d] = 0;
    }
  }
  return gatherBytes(op.operand(0)->constantBytes(), map, ir::dtypeSize(op.result()->dtype()));
}

Bytes evalTile(const ir::Op& op) {
  const Shape& in = op.operand(0)->shape();
  const Shape& out = op.result()->shape();
  std::vector<int64_t> inStrides = stridesOf(in);
  std::vector<int64_t> map(size_t(ir::numElements(out)));
  std::vector<int64_t> coord(out.size(), 0);
  for (size_t linear = 0; linear < map.size(); ++linear) {
    int64_t src = 0;
    for (size_t d = 0; d < in.size(); ++d) src += (coord[d] % in[d]) * inStrides[d];
    map[linear] = src;
    for (size_t d = out.size(); d-- > 0;) {
      if (++coord[d] < out[d]) break;
      coord[d] = 0;
    }
  }
  return gatherBytes(op.operand(0)->constantBytes(), map, ir::dtypeSize(op.result()->dtype()));
}

std::optional<Bytes> evalReduce(const ir::Op& op) {
  const ir::Value* in = op.operand(0);
  const Shape& s = in->shape();
  std::vector<int64_t> axes = op.optionalOperand(1) ? ir::constantInts(op.operand(1))
                                                    : op.attrs().getInts("axes", {});
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
  double init = k == OpKind::ReduceProd ? 1.0 : k == OpKind::ReduceMax ? -INFINITY
              : k == OpKind::ReduceMin ? INFINITY : 0.0;
  std::vector<double> acc(size_t(outCount), init);
  std::vector<int64_t> coord(s.size(), 0);
  for (int64_t e = 0; e < in->type().numElements(); ++e) {
    int64_t o = 0;
    for (size_t d = 0; d < s.size(); ++d)
      if (!reduced.count(int64_t(d))) o += coord[d] * keptStrides[d];
    double x = ir::readElementDouble(in->dtype(), in->constantBytes().data(), e);
    double& a = acc[size_t(o)];
    switch (k) {
      case OpKind::ReduceSum: case OpKind::ReduceMean: a += x; break;
      case OpKind::ReduceProd: a *= x; break;
      case OpKind::ReduceMax: a = std::max(a, x); break;
      case OpKind::ReduceMin: a = std::min(a, x); break;
      case OpKind::ReduceL2: a += x * x; break;
      default: return std::nullopt;
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

}  // namespace

std::optional<std::vector<Bytes>> evaluateOp(const ir::Op& op) {
  const ir::TensorType& out = op.result()->type();
  auto one = [](std::optional<Bytes> b) -> std::optional<std::vector<Bytes>> {
    if (!b) return std::nullopt;
    return std::vector<Bytes>{std::move(*b)};
  };
  switch (op.kind()) {
    case OpKind::Identity:
    case OpKind::Reshape:
    case OpKind::Flatten:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze:
      return one(op.operand(0)->constantBytes());
    case OpKind::Shape: {
      const Shape& s = op.operand(0)->shape();
      int64_t rank = int64_t(s.size());
      int64_t start = op.attrs().getInt("start", 0);
      if (start < 0) start += rank;
      start = std::clamp<int64_t>(start, 0, rank);
      std::vector<int64_t> dims(s.begin() + start, s.begin() + start + out.numElements());
      return one(ir::makeConstantBytesInt(out, dims));
    }
    case OpKind::Size: {
      std::vector<int64_t> n = {op.operand(0)->type().numElements()};
      return one(ir::makeConstantBytesInt(out, n));
    }
    case OpKind::ConstantOfShape: {
      ir::TensorType scalar(out.dtype, {});
      Bytes value;
      if (op.attrs().has("value") && std::holds_alternative<int64_t>(op.attrs().entries().at("value"))) {
        std::vector<int64_t> v = {op.attrs().getInt("value")};
        value = ir::makeConstantBytesInt(scalar, v);
      } else {
        std::vector<double> v = {op.attrs().getFloat("value", 0.0f)};
        value = ir::makeConstantBytes(scalar, v);
      }
      Bytes bytes(out.byteSize());
      for (size_t i = 0; i < bytes.size(); i += value.size())
        std::memcpy(bytes.data() + i, value.data(), value.size());
      return one(std::move(bytes));
    }
    case OpKind::Range: {
      std::vector<double> values;
      double start = ir::constantDoubles(op.operand(0))[0];
      double delta = ir::constantDoubles(op.operand(2))[0];
      if (ir::isFloat(out.dtype)) {
        for (int64_t i = 0; i < out.numElements(); ++i) values.push_back(start + double(i) * delta);
        return one(ir::makeConstantBytes(out, values));
      }
      int64_t s = ir::constantInts(op.operand(0))[0], d = ir::constantInts(op.operand(2))[0];
      std::vector<int64_t> ints;
      for (int64_t i = 0; i < out.numElements(); ++i) ints.push_back(s + i * d);
      return one(ir::makeConstantBytesInt(out, ints));
    }
    case OpKind::Cast: return one(evalCast(op));
    case OpKind::Transpose: return one(evalTranspose(op));
    case OpKind::Concat: return one(evalConcat(op));
    case OpKind::Split: return evalSplit(op);
    case OpKind::Gather: return one(evalGather(op));
    case OpKind::Slice: return one(evalSlice(op));
    case OpKind::Tile: return one(evalTile(op));
    case OpKind::Expand:
      return one(gatherBytes(op.operand(0)->constantBytes(),
                             broadcastIndices(op.operand(0)->shape(), out.shape),
                             ir::dtypeSize(out.dtype)));
    case OpKind::ReduceSum: case OpKind::ReduceMean: case OpKind::ReduceMax:
    case OpKind::ReduceMin: case OpKind::ReduceProd: case OpKind::ReduceL2:
      return one(evalReduce(op));
    default:
      break;
  }
  if (op.info().hasTrait(ir::kElementwise)) return one(evalElementwise(op));
  return std::nullopt;
}

}  // namespace kiln::passes
