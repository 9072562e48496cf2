// Tensor layouts (NHWC as TFLite holds them, or channels first for the IR's NCHW float ops),
// the conversions between them, and constants permuted at import time.
#include <algorithm>

#include "kiln/ir/constant_data.h"
#include "kiln/support/diagnostics.h"
#include "tflite_translation.h"

namespace kiln::import::tflite {
namespace {

const std::vector<int64_t> kToNchw = {0, 3, 1, 2};
const std::vector<int64_t> kToNhwc = {0, 2, 3, 1};

ir::Shape permuteShape(const ir::Shape& shape, const std::vector<int64_t>& perm) {
  ir::Shape out;
  for (int64_t p : perm) out.push_back(shape[size_t(p)]);
  return out;
}

// True if permuting by `perm` keeps the order of the dims larger than 1: the bytes do not
// move, a Reshape does the job.
bool onlyUnitDimsMove(const ir::Shape& shape, const std::vector<int64_t>& perm) {
  int64_t last = -1;
  for (int64_t p : perm) {
    if (shape[size_t(p)] == 1) continue;
    if (p < last) return false;
    last = p;
  }
  return true;
}

std::optional<ir::QuantParams> permuteQuant(const std::optional<ir::QuantParams>& quant,
                                            const std::vector<int64_t>& perm) {
  if (!quant || !quant->perChannel()) return quant;
  ir::QuantParams out = *quant;
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] == quant->axis) out.axis = int64_t(i);
  return out;
}

}  // namespace

Translation::Slot& Translation::slot(int32_t index) {
  tensor(index);  // range check with a message
  return slots_[size_t(index)];
}

bool Translation::channelsFirst(int32_t index) const {
  return index >= 0 && size_t(index) < slots_.size() && slots_[size_t(index)].channelsFirst;
}

ir::Value* Translation::reshape(ir::Value* value, const ir::Shape& shape,
                                const std::string& resultName) {
  if (value->shape() == shape) return value;
  ir::TensorType type = value->type();
  type.shape = shape;
  if (type.quant && type.quant->perChannel()) type.quant.reset();  // not for per-channel data
  return emit(ir::OpKind::Reshape, {value, constantI64(value->name() + "/shape", shape)}, {}, type,
              resultName);
}

ir::Value* Translation::transpose(ir::Value* value, const std::vector<int64_t>& perm,
                                  const std::string& resultName) {
  ir::TensorType type = value->type();
  type.shape = permuteShape(value->shape(), perm);
  type.quant = permuteQuant(type.quant, perm);
  if (onlyUnitDimsMove(value->shape(), perm) && !(type.quant && type.quant->perChannel()))
    return reshape(value, type.shape, resultName);
  ir::AttributeMap attrs;
  attrs.set("perm", perm);
  return emit(ir::OpKind::Transpose, {value}, attrs, type, resultName);
}

ir::Value* Translation::nhwc(int32_t index) {
  Slot& s = slot(index);
  if (!s.value) {
    if (!isConstant(index))
      fail("input tensor '" + tensorName(index) + "' (#" + std::to_string(index) +
           ") is used before any operator produces it");
    std::span<const uint8_t> bytes = constantBytes(index);
    s.value = graph_->addConstant(tensorName(index), tensorType(index),
                                  std::vector<uint8_t>(bytes.begin(), bytes.end()));
  }
  if (!s.channelsFirst) return s.value;
  if (!s.converted) s.converted = transpose(s.value, kToNhwc, s.value->name() + "/nhwc");
  return s.converted;
}

ir::Value* Translation::nchw(int32_t index) {
  if (slot(index).value && slot(index).channelsFirst) return slot(index).value;
  ir::Value* value = nhwc(index);
  Slot& s = slot(index);
  if (value->type().rank() != 4)
    fail("tensor '" + tensorName(index) + "' has shape " + ir::shapeToString(value->shape()) +
         "; the operator needs a rank-4 NHWC tensor");
  if (isConstant(index)) return permutedConstant(index, kToNchw);
  if (!s.converted) s.converted = transpose(value, kToNchw, value->name() + "/nchw");
  return s.converted;
}

void Translation::define(int32_t index, ir::Value* value, bool isChannelsFirst) {
  Slot& s = slot(index);
  if (s.value)
    fail("output tensor '" + tensorName(index) + "' (#" + std::to_string(index) +
         ") is already produced by an earlier operator or is a graph input or constant");
  ir::TensorType expected = tensorType(index);
  ir::Shape shape = isChannelsFirst ? permuteShape(value->shape(), kToNhwc) : value->shape();
  if (value->dtype() != expected.dtype || shape != expected.shape) {
    ir::TensorType got = value->type();
    got.shape = shape;
    got.quant.reset();
    expected.quant.reset();
    fail("output tensor '" + tensorName(index) + "' is declared " + expected.toString() +
         " but the operator computes " + got.toString());
  }
  s.value = value;
  s.channelsFirst = isChannelsFirst;
}

ir::Value* Translation::permutedConstant(int32_t index, const std::vector<int64_t>& perm) {
  ir::TensorType type = tensorType(index);
  std::span<const uint8_t> bytes = constantBytes(index);
  const ir::Shape& in = type.shape;
  KILN_ASSERT(perm.size() == in.size(), "permutation rank");
  ir::Shape out = permuteShape(in, perm);
  size_t elem = ir::dtypeSize(type.dtype);
  // Strides of the source in elements, then walk the destination in row-major order.
  std::vector<int64_t> srcStride(in.size(), 1);
  for (size_t i = in.size(); i-- > 1;) srcStride[i - 1] = srcStride[i] * in[i];
  std::vector<uint8_t> result(bytes.size());
  std::vector<int64_t> idx(out.size(), 0);
  int64_t count = type.numElements();
  for (int64_t n = 0; n < count; ++n) {
    int64_t src = 0;
    for (size_t d = 0; d < out.size(); ++d) src += idx[d] * srcStride[size_t(perm[d])];
    std::copy_n(bytes.data() + size_t(src) * elem, elem, result.data() + size_t(n) * elem);
    for (size_t d = out.size(); d-- > 0;) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
  ir::TensorType resultType(type.dtype, out);
  resultType.quant = permuteQuant(type.quant, perm);
  return constant(tensorName(index), resultType, std::move(result));
}

}  // namespace kiln::import::tflite
