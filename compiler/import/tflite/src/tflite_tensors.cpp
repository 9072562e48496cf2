// TFLite tensors as IR types and constants: dtype, static NHWC shape, quantization
// parameters (per tensor or per channel), constant buffers with their sizes checked.
#include <string>

#include "kiln/ir/constant_data.h"
#include "kiln/support/diagnostics.h"
#include "tflite_translation.h"

namespace kiln::import::tflite {
namespace {

std::optional<ir::DType> toDType(fb::TensorType type) {
  switch (type) {
    case fb::TensorType::FLOAT32:
      return ir::DType::F32;
    case fb::TensorType::FLOAT16:
      return ir::DType::F16;
    case fb::TensorType::INT8:
      return ir::DType::I8;
    case fb::TensorType::UINT8:
      return ir::DType::U8;
    case fb::TensorType::INT16:
      return ir::DType::I16;
    case fb::TensorType::INT32:
      return ir::DType::I32;
    case fb::TensorType::INT64:
      return ir::DType::I64;
    case fb::TensorType::BOOL:
      return ir::DType::Bool;
    default:
      return std::nullopt;
  }
}

}  // namespace

const fb::Tensor& Translation::tensor(int32_t index) const {
  const auto* tensors = subgraph_.tensors();
  if (index < 0 || !tensors || uint32_t(index) >= tensors->size())
    throw CompileError(file_.displayName() + ": " +
                       (current_ ? "operator #" + std::to_string(current_->index) + " (" +
                                       current_->name + ") refers to"
                                 : std::string("the subgraph refers to")) +
                       " tensor #" + std::to_string(index) + ", which does not exist");
  return *tensors->Get(uint32_t(index));
}

std::string Translation::tensorName(int32_t index) const {
  const fb::Tensor& t = tensor(index);
  if (t.name() && t.name()->size() != 0) return t.name()->str();
  return "tensor" + std::to_string(index);
}

ir::TensorType Translation::tensorType(int32_t index) const {
  const fb::Tensor& t = tensor(index);
  std::string what = "tensor '" + tensorName(index) + "' (#" + std::to_string(index) + ")";
  auto error = [&](const std::string& message) -> CompileError {
    return CompileError(file_.displayName() + ": " + what + " " + message);
  };
  std::optional<ir::DType> dtype = toDType(t.type());
  if (!dtype)
    throw error(std::string("has type ") + fb::EnumNameTensorType(t.type()) +
                ", which kiln does not support");
  if (t.sparsity()) throw error("is sparse; kiln does not support sparse tensors");
  ir::Shape shape;
  if (t.shape()) {
    for (int32_t dim : *t.shape()) {
      if (dim < 0) throw error("has a dynamic shape; kiln needs every dim known");
      shape.push_back(dim);
    }
  }
  // Sizes are checked before anything multiplies them (a corrupt file can hold any dims).
  constexpr int64_t kMaxElements = int64_t(1) << 40;
  int64_t elements = 1;
  for (int64_t dim : shape) {
    if (dim != 0 && elements > kMaxElements / dim)
      throw error("has shape " + ir::shapeToString(shape) +
                  ", more than 2^40 elements; kiln does not support tensors that large");
    elements *= dim;
  }
  ir::TensorType type(*dtype, shape);
  const fb::QuantizationParameters* q = t.quantization();
  if (q && q->details()) throw error("uses custom quantization, which kiln does not support");
  if (q && q->scale() && q->scale()->size() != 0) {
    ir::QuantParams params;
    size_t n = q->scale()->size();
    for (float s : *q->scale()) params.scales.push_back(s);
    size_t zeros = q->zero_point() ? q->zero_point()->size() : 0;
    for (size_t i = 0; i < n; ++i)
      params.zeroPoints.push_back(zeros == 0 ? 0 : q->zero_point()->Get(zeros == n ? i : 0));
    if (zeros != 0 && zeros != 1 && zeros != n)
      throw error("has " + std::to_string(n) + " scales but " + std::to_string(zeros) +
                  " zero points");
    if (n > 1) {
      int64_t axis = q->quantized_dimension();
      if (axis < 0 || axis >= int64_t(shape.size()) || shape[size_t(axis)] != int64_t(n))
        throw error("has " + std::to_string(n) + " per-channel scales along dim " +
                    std::to_string(axis) + " of shape " + ir::shapeToString(shape));
      params.axis = axis;
    }
    type.quant = std::move(params);
  }
  return type;
}

bool Translation::isConstant(int32_t index) const {
  const fb::Tensor& t = tensor(index);
  if (t.buffer() == 0) return false;
  const auto* buffers = file_.model().buffers();
  if (t.buffer() >= buffers->size())
    throw CompileError(file_.displayName() + ": tensor '" + tensorName(index) +
                       "' refers to buffer " + std::to_string(t.buffer()) + " of " +
                       std::to_string(buffers->size()));
  const fb::Buffer* buffer = buffers->Get(t.buffer());
  if (buffer->offset() > 1)
    throw CompileError(file_.displayName() + ": tensor '" + tensorName(index) +
                       "' keeps its data outside the flatbuffer (a model over 2 GB); "
                       "kiln does not support that");
  return buffer->data() && buffer->data()->size() != 0;
}

std::span<const uint8_t> Translation::constantBytes(int32_t index) const {
  KILN_ASSERT(isConstant(index), "constantBytes of a non-constant tensor");
  const fb::Buffer* buffer = file_.model().buffers()->Get(tensor(index).buffer());
  ir::TensorType type = tensorType(index);
  if (buffer->data()->size() != type.byteSize())
    throw CompileError(file_.displayName() + ": tensor '" + tensorName(index) + "' (#" +
                       std::to_string(index) + ") has " + std::to_string(buffer->data()->size()) +
                       " bytes of data; its type " + type.toString() + " needs " +
                       std::to_string(type.byteSize()));
  return {buffer->data()->data(), buffer->data()->size()};
}

std::vector<int64_t> Translation::constantInts(int32_t index, const std::string& what) const {
  if (index < 0) fail("the " + what + " input is missing");
  if (!isConstant(index))
    fail("the " + what + " ('" + tensorName(index) + "') must be a constant tensor");
  ir::TensorType type = tensorType(index);
  if (type.dtype != ir::DType::I32 && type.dtype != ir::DType::I64)
    fail("the " + what + " ('" + tensorName(index) + "') must be int32 or int64, not " +
         std::string(ir::dtypeName(type.dtype)));
  std::span<const uint8_t> bytes = constantBytes(index);
  std::vector<int64_t> values;
  for (int64_t i = 0; i < type.numElements(); ++i)
    values.push_back(ir::readElementInt(type.dtype, bytes.data(), i));
  return values;
}

}  // namespace kiln::import::tflite
