// Builds the tests' tiny .tflite models (see tflite_test_models.h).
#include "tflite_test_models.h"

#include <cstring>
#include <map>

namespace kiln::import::tflite::testing {

std::string buildTflite(const TestModel& model) {
  flatbuffers::FlatBufferBuilder b;
  // Buffer 0 is TFLite's empty sentinel; each constant tensor gets its own buffer.
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers = {fb::CreateBuffer(b)};
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  for (const TestTensor& t : model.tensors) {
    uint32_t buffer = 0;
    if (!t.data.empty()) {
      b.ForceVectorAlignment(t.data.size(), 1, 16);
      auto data = b.CreateVector(t.data);
      buffer = uint32_t(buffers.size());
      buffers.push_back(fb::CreateBuffer(b, data));
    }
    flatbuffers::Offset<fb::QuantizationParameters> quant = 0;
    if (!t.scales.empty())
      quant = fb::CreateQuantizationParameters(b, 0, 0, b.CreateVector(t.scales),
                                               b.CreateVector(t.zeroPoints),
                                               fb::QuantizationDetails::NONE, 0, t.quantAxis);
    tensors.push_back(fb::CreateTensor(b, b.CreateVector(t.shape), t.type, buffer,
                                       b.CreateString(t.name), quant));
  }
  std::vector<flatbuffers::Offset<fb::OperatorCode>> codes;
  std::map<std::pair<int32_t, std::string>, uint32_t> codeIndex;
  std::vector<flatbuffers::Offset<fb::Operator>> operators;
  for (const TestOperator& op : model.operators) {
    auto key = std::make_pair(op.code, op.customCode);
    if (!codeIndex.count(key)) {
      codeIndex[key] = uint32_t(codes.size());
      codes.push_back(fb::CreateOperatorCode(
          b, int8_t(op.code < 127 ? op.code : 127),
          op.customCode.empty() ? 0 : b.CreateString(op.customCode), 1, op.code));
    }
    flatbuffers::Offset<void> options = op.options ? op.options(b) : 0;
    operators.push_back(fb::CreateOperator(b, codeIndex[key], b.CreateVector(op.inputs),
                                           b.CreateVector(op.outputs), op.optionsType, options));
  }
  auto subgraph = fb::CreateSubGraph(b, b.CreateVector(tensors), b.CreateVector(model.inputs),
                                     b.CreateVector(model.outputs), b.CreateVector(operators),
                                     b.CreateString("main"));
  std::vector<flatbuffers::Offset<fb::SubGraph>> subgraphs = {subgraph};
  auto root = fb::CreateModel(b, model.version, b.CreateVector(codes), b.CreateVector(subgraphs),
                              b.CreateString("test"), b.CreateVector(buffers));
  fb::FinishModelBuffer(b, root);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

template <typename T>
static std::vector<uint8_t> toBytes(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::vector<uint8_t> floatBytes(const std::vector<float>& values) { return toBytes(values); }
std::vector<uint8_t> int32Bytes(const std::vector<int32_t>& values) { return toBytes(values); }
std::vector<uint8_t> int8Bytes(const std::vector<int8_t>& values) { return toBytes(values); }

}  // namespace kiln::import::tflite::testing
