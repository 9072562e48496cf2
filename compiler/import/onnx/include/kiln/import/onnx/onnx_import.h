// ONNX import: reads an ONNX model (through Debian's libonnx) and translates it to kiln's
// graph IR with static shapes. This header includes no ONNX header.
//
// Pipeline: parse -> inline external data -> --fix-input constants -> --input-shape overrides
// -> ONNX checker -> shape inference (data propagation on) -> version conversion to opset 17
// -> translation.
// Every user error (bad file, unsupported operator, unknown dims, bad flag) is thrown as a
// kiln::CompileError whose one-line message names the file and the node or input at fault.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/import/onnx/input_shape.h"
#include "kiln/ir/graph.h"

namespace kiln::import {

// The one ai.onnx opset the translation is written against; older models are converted.
inline constexpr int64_t kOnnxTargetOpset = 17;

// A graph input fixed at compile time (--fix-input=NAME=@FILE.npy): before shape inference it
// becomes a constant with these contents (so shapes computed from it are known) and is no
// longer an input of the model. Its type must match the input's (dims the model leaves
// symbolic take the values' dims).
struct FixedInput {
  std::string name;
  ir::TensorType type;
  std::vector<uint8_t> bytes;  // type.byteSize() bytes, C order
  std::string flag;            // the flag as the user wrote it, for messages
};

struct OnnxImportOptions {
  std::vector<InputShape> inputShapes;  // from --input-shape, applied before shape inference
  std::vector<FixedInput> fixedInputs;  // from --fix-input, applied before --input-shape
};

// Imports the model file at `path`. External data files are resolved relative to the
// model's folder. The result has passed the IR verifier.
std::unique_ptr<ir::Graph> importOnnxFile(const std::filesystem::path& path,
                                          const OnnxImportOptions& options = {});

// Imports a serialized ModelProto held in memory. `displayName` names it in diagnostics;
// external data is resolved in `externalDataDir` (empty: external data is an error).
std::unique_ptr<ir::Graph> importOnnxBytes(std::string_view bytes,
                                           const OnnxImportOptions& options = {},
                                           const std::string& displayName = "<memory>",
                                           const std::filesystem::path& externalDataDir = {});

// The ai.onnx op types kiln imports (for documentation, `kiln --help` and tests).
std::vector<std::string> supportedOnnxOperators();

}  // namespace kiln::import
