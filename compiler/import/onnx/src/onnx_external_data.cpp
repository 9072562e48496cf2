// Inlines ONNX external data: tensors whose bytes live in a side file next to the model
// (`location`, `offset`, `length` entries). libonnx 1.12 has no C++ helper for this, and its
// checker accepts locations such as "../../etc/passwd"; here a location must be a relative
// path without '..' that resolves inside the model's folder.
#include <algorithm>
#include <fstream>
#include <system_error>

#include "kiln/support/diagnostics.h"
#include "onnx_model_loader.h"

namespace kiln::import::detail {

namespace {

namespace fs = std::filesystem;

struct ExternalRef {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;  // -1: to the end of the file
};

[[noreturn]] void fail(const OnnxSource& source, const onnx::TensorProto& tensor,
                       const std::string& why) {
  throw CompileError(source.displayName + ": external data of tensor '" + tensor.name() +
                     "': " + why);
}

int64_t parseCount(const OnnxSource& source, const onnx::TensorProto& tensor,
                   const std::string& key, const std::string& value) {
  size_t used = 0;
  int64_t number = -1;
  try {
    number = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || number < 0) {
    fail(source, tensor, "'" + key + "' is not a non-negative integer: '" + value + "'");
  }
  return number;
}

ExternalRef readRef(const OnnxSource& source, const onnx::TensorProto& tensor) {
  ExternalRef ref;
  for (const auto& entry : tensor.external_data()) {
    if (entry.key() == "location") {
      ref.location = entry.value();
    } else if (entry.key() == "offset") {
      ref.offset = parseCount(source, tensor, "offset", entry.value());
    } else if (entry.key() == "length") {
      ref.length = parseCount(source, tensor, "length", entry.value());
    }
  }
  if (ref.location.empty()) fail(source, tensor, "no 'location' given");
  return ref;
}

// The path check libonnx 1.12 lacks: relative, no '..', and (after resolving symlinks) still
// inside the model's folder.
fs::path resolveLocation(const OnnxSource& source, const onnx::TensorProto& tensor,
                         const std::string& location) {
  if (source.externalDataDir.empty()) {
    fail(source, tensor, "a model given as bytes cannot reference external file '" +
                             location + "'");
  }
  fs::path relative(location);
  if (relative.is_absolute() || relative.has_root_name() || relative.has_root_directory()) {
    fail(source, tensor, "location '" + location +
                             "' is an absolute path; it must be relative to the model's folder");
  }
  for (const auto& part : relative) {
    if (part == "..") {
      fail(source, tensor, "location '" + location +
                               "' contains '..'; it must stay inside the model's folder");
    }
  }
  fs::path full = source.externalDataDir / relative;
  std::error_code error;
  if (!fs::is_regular_file(full, error)) {
    fail(source, tensor, "file '" + full.string() + "' does not exist or is not a file");
  }
  fs::path realDir = fs::weakly_canonical(source.externalDataDir, error);
  fs::path realFile = fs::weakly_canonical(full, error);
  auto mismatch = std::mismatch(realDir.begin(), realDir.end(), realFile.begin(), realFile.end());
  if (error || mismatch.first != realDir.end()) {
    fail(source, tensor, "location '" + location + "' resolves outside the model's folder");
  }
  return full;
}

void inlineTensor(onnx::TensorProto& tensor, const OnnxSource& source) {
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return;
  ExternalRef ref = readRef(source, tensor);
  fs::path path = resolveLocation(source, tensor, ref.location);
  std::error_code error;
  auto fileSize = static_cast<int64_t>(fs::file_size(path, error));
  if (error) fail(source, tensor, "cannot read '" + path.string() + "': " + error.message());
  int64_t length = ref.length < 0 ? fileSize - ref.offset : ref.length;
  if (ref.offset > fileSize || length < 0 || length > fileSize - ref.offset) {
    fail(source, tensor, "offset " + std::to_string(ref.offset) + " + length " +
                             std::to_string(length) + " exceeds the " +
                             std::to_string(fileSize) + " bytes of '" + path.string() + "'");
  }
  std::string bytes(static_cast<size_t>(length), '\0');
  std::ifstream file(path, std::ios::binary);
  file.seekg(ref.offset);
  file.read(bytes.data(), length);
  if (!file) fail(source, tensor, "cannot read '" + path.string() + "'");
  tensor.set_raw_data(std::move(bytes));
  tensor.clear_external_data();
  tensor.set_data_location(onnx::TensorProto::DEFAULT);
}

void inlineGraph(onnx::GraphProto& graph, const OnnxSource& source);

void inlineAttribute(onnx::AttributeProto& attribute, const OnnxSource& source) {
  if (attribute.has_t()) inlineTensor(*attribute.mutable_t(), source);
  for (auto& tensor : *attribute.mutable_tensors()) inlineTensor(tensor, source);
  if (attribute.has_g()) inlineGraph(*attribute.mutable_g(), source);
  for (auto& graph : *attribute.mutable_graphs()) inlineGraph(graph, source);
}

void inlineGraph(onnx::GraphProto& graph, const OnnxSource& source) {
  for (auto& tensor : *graph.mutable_initializer()) inlineTensor(tensor, source);
  for (auto& node : *graph.mutable_node()) {
    for (auto& attribute : *node.mutable_attribute()) inlineAttribute(attribute, source);
  }
}

}  // namespace

void inlineExternalData(onnx::ModelProto& model, const OnnxSource& source) {
  inlineGraph(*model.mutable_graph(), source);
}

}  // namespace kiln::import::detail
