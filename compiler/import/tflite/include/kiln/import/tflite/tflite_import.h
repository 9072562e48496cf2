// TFLite import: reads a .tflite flatbuffer (verified before anything is read) and translates
// its main subgraph to kiln's graph IR. TFLite tensors are NHWC; float convolutions and pools
// become the IR's NCHW ops with the layout tracked per tensor, quantized ones the IR's NHWC
// integer ops (docs/tflite-import.md). This header includes no flatbuffers header.
//
// Every user error (unreadable, corrupt or truncated file, unsupported operator or tensor
// type) is a kiln::CompileError whose one-line message names the file and the operator index,
// operator name or tensor at fault.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::import {

struct TfliteImportOptions {
  // Debugging: every tensor an operator produces also becomes a graph output, named after
  // the TFLite tensor (in NHWC, as TFLite holds it), after the model's own outputs.
  bool debugOutputs = false;
};

// Imports the model file at `path`. The result has passed the IR verifier.
std::unique_ptr<ir::Graph> importTfliteFile(const std::filesystem::path& path,
                                            const TfliteImportOptions& options = {});

// Imports a .tflite model held in memory; `displayName` names it in diagnostics.
std::unique_ptr<ir::Graph> importTfliteBytes(std::string_view bytes,
                                             const TfliteImportOptions& options = {},
                                             const std::string& displayName = "<memory>");

// The TFLite builtin operators kiln imports (names as in TFLite's schema).
std::vector<std::string> supportedTfliteOperators();

// TFLite's name of a builtin operator code ("CONV_2D"), or "" for an unknown code.
std::string tfliteBuiltinName(int32_t code);

}  // namespace kiln::import
