// Test helper implementation (see onnx_test_models.h): the only test file that includes
// ONNX headers.
#include "onnx_test_models.h"

#include <onnx/defs/parser.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "kiln/ir/type.h"

namespace kiln::ir {
void PrintTo(const TensorType& type, std::ostream* out) { *out << type.toString(); }
}  // namespace kiln::ir

namespace kiln::import::testing {

namespace {

onnx::ModelProto parse(std::string_view text) {
  onnx::ModelProto model;
  std::string owned(text);
  onnx::Common::Status status = onnx::OnnxParser::Parse(model, owned.c_str());
  if (!status.IsOK()) {
    std::fprintf(stderr, "test model does not parse: %s\n%s\n", status.ErrorMessage().c_str(),
                 owned.c_str());
    std::abort();
  }
  return model;
}

// Moves the typed fields of a tensor into raw_data (little-endian host assumed).
void toRawData(onnx::TensorProto& tensor) {
  std::string raw;
  auto append = [&raw](const void* data, size_t size) {
    raw.append(static_cast<const char*>(data), size);
  };
  switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
      for (float v : tensor.float_data()) append(&v, sizeof v);
      tensor.clear_float_data();
      break;
    case onnx::TensorProto::DOUBLE:
      for (double v : tensor.double_data()) append(&v, sizeof v);
      tensor.clear_double_data();
      break;
    case onnx::TensorProto::INT64:
      for (int64_t v : tensor.int64_data()) append(&v, sizeof v);
      tensor.clear_int64_data();
      break;
    case onnx::TensorProto::INT32:
      for (int32_t v : tensor.int32_data()) append(&v, sizeof v);
      tensor.clear_int32_data();
      break;
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      for (int32_t v : tensor.int32_data()) raw.push_back(static_cast<char>(v));
      tensor.clear_int32_data();
      break;
    default:
      std::fprintf(stderr, "toRawData: unhandled type %d\n", tensor.data_type());
      std::abort();
  }
  tensor.set_raw_data(raw);
}

std::string serialize(const onnx::ModelProto& model) {
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

}  // namespace

std::string modelFromText(std::string_view text) { return serialize(parse(text)); }

std::string modelFromTextNamed(std::string_view text, const std::vector<std::string>& nodeNames) {
  onnx::ModelProto model = parse(text);
  for (size_t i = 0; i < nodeNames.size() && i < size_t(model.graph().node_size()); ++i) {
    model.mutable_graph()->mutable_node(static_cast<int>(i))->set_name(nodeNames[i]);
  }
  return serialize(model);
}

std::string modelFromTextRetyped(std::string_view text, const std::string& tensor,
                                 int32_t onnxType) {
  onnx::ModelProto model = parse(text);
  for (auto& initializer : *model.mutable_graph()->mutable_initializer()) {
    if (initializer.name() == tensor) initializer.set_data_type(onnxType);
  }
  return serialize(model);
}

std::string modelFromTextSequenceOutput(std::string_view text, const std::string& output) {
  onnx::ModelProto model = parse(text);
  for (auto& info : *model.mutable_graph()->mutable_output()) {
    if (info.name() != output) continue;
    onnx::TypeProto element = info.type();
    *info.mutable_type()->mutable_sequence_type()->mutable_elem_type() = element;
  }
  return serialize(model);
}

std::string modelFromTextRawDataDims(std::string_view text, const std::string& tensor,
                                     const std::vector<int64_t>& dims) {
  onnx::ModelProto model = parse(text);
  for (auto& initializer : *model.mutable_graph()->mutable_initializer()) {
    if (initializer.name() != tensor) continue;
    toRawData(initializer);
    initializer.clear_dims();
    for (int64_t dim : dims) initializer.add_dims(dim);
  }
  return serialize(model);
}

std::string modelFromTextRawData(std::string_view text) {
  onnx::ModelProto model = parse(text);
  for (auto& tensor : *model.mutable_graph()->mutable_initializer()) toRawData(tensor);
  return serialize(model);
}

std::string modelFromTextExternal(std::string_view text, const std::string& tensor,
                                  const std::string& location, int64_t offset,
                                  std::string* bytesOut) {
  onnx::ModelProto model = parse(text);
  for (auto& initializer : *model.mutable_graph()->mutable_initializer()) {
    if (initializer.name() != tensor) continue;
    toRawData(initializer);
    *bytesOut = initializer.raw_data();
    initializer.clear_raw_data();
    initializer.set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&initializer](const std::string& key, const std::string& value) {
      auto* entry = initializer.add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    };
    add("location", location);
    add("offset", std::to_string(offset));
    add("length", std::to_string(bytesOut->size()));
  }
  return serialize(model);
}

std::string modelFromTextExternalEntries(
    std::string_view text, const std::string& tensor,
    const std::vector<std::pair<std::string, std::string>>& entries) {
  onnx::ModelProto model = parse(text);
  for (auto& initializer : *model.mutable_graph()->mutable_initializer()) {
    if (initializer.name() != tensor) continue;
    initializer.clear_float_data();
    initializer.set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto& [key, value] : entries) {
      auto* entry = initializer.add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    }
  }
  return serialize(model);
}

TensorFileInfo readTensorFileInfo(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  onnx::TensorProto tensor;
  TensorFileInfo info;
  if (!tensor.ParseFromString(bytes.str())) return info;
  info.onnxType = tensor.data_type();
  info.dims.assign(tensor.dims().begin(), tensor.dims().end());
  return info;
}

void writeFile(const std::filesystem::path& path, std::string_view bytes) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace kiln::import::testing
