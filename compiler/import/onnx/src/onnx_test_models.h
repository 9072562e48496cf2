// Test helper: builds small ONNX models from ONNX's text syntax (libonnx's OnnxParser) and
// reads TensorProto files, so that the importer's tests need no ONNX header themselves.
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::ir {
struct TensorType;
// Readable TensorType in GoogleTest failure messages ("f32[1,4]").
void PrintTo(const TensorType& type, std::ostream* out);
}  // namespace kiln::ir

namespace kiln::import::testing {

// Serialized ModelProto for `text`, e.g.
//   <ir_version: 8, opset_import: ["" : 17]> g (float[1,4] x) => (float[1,4] y) { y = Relu(x) }
// Initializers keep the parser's typed fields (float_data, int64_data...). Aborts the test
// program on a syntax error (a bug in the test).
std::string modelFromText(std::string_view text);

// Same, with the nodes named `nodeNames` in order (the text syntax cannot name nodes).
std::string modelFromTextNamed(std::string_view text, const std::vector<std::string>& nodeNames);

// Same, with initializer `tensor` relabelled as ONNX DataType `onnxType` (its typed field
// kept): writes float16 initializers, which the text syntax lacks, as int32 bit patterns.
std::string modelFromTextRetyped(std::string_view text, const std::string& tensor,
                                 int32_t onnxType);

// Same, with graph output `output` declared as a sequence of its tensor type (the 1.12 text
// syntax has no sequence types).
std::string modelFromTextSequenceOutput(std::string_view text, const std::string& output);

// Same, with initializer `tensor` in raw_data and its dims replaced by `dims` (corrupt
// tensors: the contents no longer match the dims).
std::string modelFromTextRawDataDims(std::string_view text, const std::string& tensor,
                                     const std::vector<int64_t>& dims);

// Same, with every initializer's contents moved to raw_data.
std::string modelFromTextRawData(std::string_view text);

// Same, with initializer `tensor` stored as external data: its raw bytes are returned in
// `bytesOut` and the tensor refers to `location` at `offset` (length = its byte size).
std::string modelFromTextExternal(std::string_view text, const std::string& tensor,
                                  const std::string& location, int64_t offset,
                                  std::string* bytesOut);

// Same, with initializer `tensor` marked external with exactly these (key, value) entries
// (for malformed external-data references).
std::string modelFromTextExternalEntries(
    std::string_view text, const std::string& tensor,
    const std::vector<std::pair<std::string, std::string>>& entries);

// Element type (ONNX DataType number) and dims of a serialized TensorProto file.
struct TensorFileInfo {
  int32_t onnxType = 0;
  std::vector<int64_t> dims;
};
TensorFileInfo readTensorFileInfo(const std::filesystem::path& path);

// Writes bytes to a file (creating parent folders).
void writeFile(const std::filesystem::path& path, std::string_view bytes);

}  // namespace kiln::import::testing
