// The ONNX importer's entry points (onnx_import.h): prepare the model with libonnx, translate
// it, verify the resulting IR.
#include "kiln/import/onnx/onnx_import.h"

#include "kiln/ir/verifier.h"
#include "kiln/support/diagnostics.h"
#include "onnx_source.h"
#include "onnx_translation.h"

namespace kiln::import {

namespace {

std::unique_ptr<ir::Graph> importSource(const detail::OnnxSource& source,
                                        const OnnxImportOptions& options) {
  std::unique_ptr<ir::Graph> graph = detail::prepareAndTranslate(source, options);
  try {
    ir::verifyGraph(*graph);
  } catch (const CompileError& error) {
    throw CompileError(source.displayName + ": imported graph is invalid: " + error.what());
  }
  return graph;
}

}  // namespace

std::unique_ptr<ir::Graph> importOnnxFile(const std::filesystem::path& path,
                                          const OnnxImportOptions& options) {
  return importSource(detail::readOnnxFile(path), options);
}

std::unique_ptr<ir::Graph> importOnnxBytes(std::string_view bytes,
                                           const OnnxImportOptions& options,
                                           const std::string& displayName,
                                           const std::filesystem::path& externalDataDir) {
  detail::OnnxSource source{std::string(bytes), displayName, externalDataDir};
  return importSource(source, options);
}

std::vector<std::string> supportedOnnxOperators() {
  std::vector<std::string> names;
  for (std::string_view name : detail::supportedOnnxOps()) names.emplace_back(name);
  return names;
}

}  // namespace kiln::import
