// Internal: loads an ONNX model and prepares it for translation to the IR.
// Steps, in order: parse the protobuf, check the opset range, inline external data (with
// the path check), refuse non-tensor inputs/outputs and unsupported operators, turn --fix-input
// inputs into initializers, apply --input-shape overrides and require static inputs, ONNX's checker, ONNX shape inference
// with data propagation, legacy fix-ups and version conversion to kOnnxTargetOpset (then
// shape inference again).
// Every failure is a kiln::CompileError that names the model file.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <string_view>

#include "kiln/import/onnx/onnx_import.h"
#include "onnx_source.h"

namespace kiln::import::detail {

struct PreparedOnnxModel {
  onnx::ModelProto model;  // at kTargetOpset, shapes inferred, external data inlined
  int64_t sourceOpset = 0; // the model's ai.onnx opset before conversion
};

// Runs every step listed at the top of this file.
PreparedOnnxModel prepareOnnxModel(const OnnxSource& source, const OnnxImportOptions& options);

// "ai.onnx" for the default domain "", the domain itself otherwise.
std::string displayDomain(std::string_view domain);

// Inlines every tensor stored in external data files (initializers and tensor attributes,
// subgraphs included). Locations must be relative, without '..', inside `dir`.
void inlineExternalData(onnx::ModelProto& model, const OnnxSource& source);

// Turns the --fix-input graph inputs into initializers with the given contents (checked against
// the inputs' declared types) and, for IR version >= 4, removes them from the graph inputs.
void applyFixedInputs(onnx::GraphProto& graph, const std::vector<FixedInput>& fixedInputs,
                      const std::string& displayName, int64_t irVersion);

// Applies the --input-shape overrides to the graph inputs, then requires every graph input
// to have a static shape. Initializers listed as inputs are constants, not inputs.
void applyInputShapes(onnx::GraphProto& graph, const std::vector<InputShape>& overrides,
                      const std::string& displayName);

// Opsets <= 6 only: rewrites `broadcast = 1, axis = k` operands into numpy-style broadcasts
// (an Unsqueeze adding trailing 1s) that the version converter handles. Needs shapes
// inferred; returns true if it inserted Unsqueezes (run shape inference again).
bool fixLegacyBroadcast(onnx::ModelProto& model, int64_t sourceOpset);

}  // namespace kiln::import::detail
