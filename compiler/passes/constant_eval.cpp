// Reference evaluator used by constant folding: dispatches on the op kind; data movement
// (Reshape, Concat, Gather, Slice, Transpose, Expand, Tile, Split) works on bytes so that
// integer shape values stay exact; elementwise math and reductions are in
// constant_eval_math.cpp.
#include "constant_eval.h"

#include <algorithm>
#include <cstring>

#include "kiln/ir/constant_data.h"
#include "kiln/ir/op_rules.h"
#include "kiln/support/diagnostics.h"

namespace kiln::passes {
namespace eval {

using ir::Shape;

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

}  // namespace eval

namespace {

using eval::broadcastIndices;
using eval::Bytes;
using eval::evalElementwise;
using eval::evalReduce;
using eval::gatherBytes;
using eval::stridesOf;
using ir::DType;
using ir::OpKind;
using ir::Shape;

Bytes evalCast(const ir::Op& op) {
  const ir::Value* in = op.operand(0);
  const ir::TensorType& outType = op.result()->type();
  Bytes out(outType.byteSize());
  const uint8_t* src = in->constantBytes().data();
  for (int64_t e = 0; e < outType.numElements(); ++e) {
    if (ir::isFloat(in->dtype()) || ir::isFloat(outType.dtype))
      ir::writeElementDouble(outType.dtype, out.data(), e,
                             ir::readElementDouble(in->dtype(), src, e));
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
    for (size_t d = 0; d < in.size(); ++d)
      src += (g.starts[d] + coord[d] * g.steps[d]) * inStrides[d];
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

// The quantized integer ops (TFLite semantics) are never folded: their activations are not
// constants in real models, and evaluating them here would duplicate the integer kernels.
bool isQuantizedOp(OpKind kind) {
  switch (kind) {
    case OpKind::QConv2D:
    case OpKind::QDepthwiseConv2D:
    case OpKind::QTransposeConv2D:
    case OpKind::QFullyConnected:
    case OpKind::QAdd:
    case OpKind::QSub:
    case OpKind::QMul:
    case OpKind::QAveragePool2D:
    case OpKind::QMaxPool2D:
    case OpKind::QSoftmax:
    case OpKind::QLeakyRelu:
    case OpKind::QLogistic:
    case OpKind::QTanh:
    case OpKind::QHardSwish:
    case OpKind::QMean:
    case OpKind::Quantize:
    case OpKind::Dequantize:
    case OpKind::Requantize:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::optional<std::vector<Bytes>> evaluateOp(const ir::Op& op) {
  if (isQuantizedOp(op.kind())) return std::nullopt;
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
      if (op.attrs().has("value") &&
          std::holds_alternative<int64_t>(op.attrs().entries().at("value"))) {
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
    case OpKind::Cast:
      return one(evalCast(op));
    case OpKind::Transpose:
      return one(evalTranspose(op));
    case OpKind::Concat:
      return one(evalConcat(op));
    case OpKind::Split:
      return evalSplit(op);
    case OpKind::Gather:
      return one(evalGather(op));
    case OpKind::Slice:
      return one(evalSlice(op));
    case OpKind::Tile:
      return one(evalTile(op));
    case OpKind::Expand:
      return one(gatherBytes(op.operand(0)->constantBytes(),
                             broadcastIndices(op.operand(0)->shape(), out.shape),
                             ir::dtypeSize(out.dtype)));
    case OpKind::ReduceSum:
    case OpKind::ReduceMean:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
    case OpKind::ReduceProd:
    case OpKind::ReduceL2:
      return one(evalReduce(op));
    default:
      break;
  }
  if (op.info().hasTrait(ir::kElementwise)) return one(evalElementwise(op));
  return std::nullopt;
}

}  // namespace kiln::passes
