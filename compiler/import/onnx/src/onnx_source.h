// Internal, ONNX-free: where a model's bytes come from, and the importer's two halves as seen
// by the public entry points (onnx_import.cpp), which thus include no ONNX header.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "kiln/import/onnx/onnx_import.h"

namespace kiln::import::detail {

// Where the model's bytes come from and how to name it in diagnostics.
struct OnnxSource {
  std::string bytes;
  std::string displayName;                // the file path, or "<memory>"
  std::filesystem::path externalDataDir;  // external data is resolved here; empty: not allowed
};

// Reads a model file (missing or unreadable file: CompileError naming it).
// Defined in onnx_model_loader.cpp.
OnnxSource readOnnxFile(const std::filesystem::path& path);

// prepareOnnxModel (onnx_model_loader.h) followed by translateOnnxModel (onnx_proto.h).
// Defined in onnx_translate.cpp.
std::unique_ptr<ir::Graph> prepareAndTranslate(const OnnxSource& source,
                                               const OnnxImportOptions& options);

}  // namespace kiln::import::detail
