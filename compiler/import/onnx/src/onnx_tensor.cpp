// Converts ONNX TensorProto contents into IR constant bytes, and maps ONNX element types to
// IR dtypes. Supports raw_data and the typed fields (float_data, int32_data for the narrow
// integer, bool and float16 types, int64_data, double_data). Doubles are f64.
#include <cmath>
#include <cstring>

#include "kiln/support/diagnostics.h"
#include "onnx_proto.h"

namespace kiln::import::detail {

namespace {

using onnx::TensorProto;

template <typename Narrow, typename Wide>
void storeAll(std::vector<uint8_t>& bytes, const google::protobuf::RepeatedField<Wide>& values) {
  for (int i = 0; i < values.size(); ++i) {
    auto narrow = static_cast<Narrow>(values[i]);
    std::memcpy(bytes.data() + i * sizeof(Narrow), &narrow, sizeof(Narrow));
  }
}

// Elements in the typed field that holds this tensor's element type.
int64_t typedValueCount(const TensorProto& tensor) {
  switch (tensor.data_type()) {
    case TensorProto::FLOAT: return tensor.float_data_size();
    case TensorProto::INT64: return tensor.int64_data_size();
    case TensorProto::DOUBLE: return tensor.double_data_size();
    default: return tensor.int32_data_size();  // int32 and narrower, bool, float16 bits
  }
}

// Constants beyond 2^40 elements are corrupt dims, not weights.
constexpr int64_t kMaxElements = int64_t(1) << 40;

}  // namespace

std::optional<ir::DType> dtypeFromOnnx(int32_t onnxType) {
  switch (onnxType) {
    case TensorProto::FLOAT: return ir::DType::F32;
    case TensorProto::FLOAT16: return ir::DType::F16;
    case TensorProto::INT8: return ir::DType::I8;
    case TensorProto::UINT8: return ir::DType::U8;
    case TensorProto::INT16: return ir::DType::I16;
    case TensorProto::INT32: return ir::DType::I32;
    case TensorProto::INT64: return ir::DType::I64;
    case TensorProto::BOOL: return ir::DType::Bool;
    case TensorProto::DOUBLE: return ir::DType::F64;
    default: return std::nullopt;
  }
}

std::string onnxTypeName(int32_t onnxType) {
  if (!TensorProto::DataType_IsValid(onnxType)) return "type " + std::to_string(onnxType);
  std::string name = TensorProto::DataType_Name(static_cast<TensorProto::DataType>(onnxType));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

ConstantTensor convertTensor(const onnx::TensorProto& tensor, const std::string& displayName,
                             const std::string& label) {
  auto fail = [&](const std::string& why) -> void {
    throw CompileError(displayName + ": " + label + " " + why);
  };
  KILN_ASSERT(tensor.data_location() != TensorProto::EXTERNAL, "external data not inlined");
  std::optional<ir::DType> dtype = dtypeFromOnnx(tensor.data_type());
  if (!dtype) {
    fail("has element type " + onnxTypeName(tensor.data_type()) +
         ", which kiln does not support");
  }
  ConstantTensor result;
  result.type.dtype = *dtype;
  int64_t count = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0) fail("has a negative dim");
    if (dim > 0 && count > kMaxElements / dim) fail("is too large");
    count *= dim;
    result.type.shape.push_back(dim);
  }
  const size_t byteSize = result.type.byteSize();
  // Sizes are checked before anything is allocated: the dims may be corrupt.
  if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != byteSize) {
      fail("has " + std::to_string(tensor.raw_data().size()) + " bytes of raw data; its type " +
           result.type.toString() + " needs " + std::to_string(byteSize));
    }
    result.bytes.assign(tensor.raw_data().begin(), tensor.raw_data().end());
    return result;
  }
  if (typedValueCount(tensor) != count) {
    fail("holds " + std::to_string(typedValueCount(tensor)) + " values; its type " +
         result.type.toString() + " needs " + std::to_string(count));
  }
  result.bytes.assign(byteSize, 0);
  switch (tensor.data_type()) {
    case TensorProto::FLOAT:
      storeAll<float>(result.bytes, tensor.float_data());
      break;
    case TensorProto::INT64:
      storeAll<int64_t>(result.bytes, tensor.int64_data());
      break;
    case TensorProto::DOUBLE:
      storeAll<double>(result.bytes, tensor.double_data());
      break;
    case TensorProto::INT32:
      storeAll<int32_t>(result.bytes, tensor.int32_data());
      break;
    case TensorProto::INT16:
      storeAll<int16_t>(result.bytes, tensor.int32_data());
      break;
    case TensorProto::FLOAT16:  // the bits of each half, one per int32
      storeAll<uint16_t>(result.bytes, tensor.int32_data());
      break;
    case TensorProto::INT8:
      storeAll<int8_t>(result.bytes, tensor.int32_data());
      break;
    case TensorProto::UINT8:
      storeAll<uint8_t>(result.bytes, tensor.int32_data());
      break;
    case TensorProto::BOOL:
      for (int i = 0; i < tensor.int32_data_size(); ++i) {
        result.bytes[i] = tensor.int32_data(i) != 0 ? 1 : 0;
      }
      break;
    default:
      KILN_UNREACHABLE("dtypeFromOnnx accepted an element type convertTensor lacks");
  }
  return result;
}

}  // namespace kiln::import::detail
