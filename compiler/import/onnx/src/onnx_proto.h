// Internal: reading libonnx's protobuf messages into IR terms — tensor contents (typed
// fields or raw_data) and the walk over a prepared model that builds the IR graph.
#pragma once

#include <onnx/onnx_pb.h>

#include <memory>
#include <string>

#include "kiln/ir/graph.h"
#include "onnx_model_loader.h"
#include "onnx_translation.h"

namespace kiln::import::detail {

// An initializer's or a TENSOR attribute's contents as an IR tensor. External data must
// already be inlined. Throws CompileError "<displayName>: <label> <why>" for element types
// kiln lacks and for data that does not match the tensor's shape; `label` names the tensor
// ("tensor 'w'", "attribute 'value' of node 'c1' (Constant)").
ConstantTensor convertTensor(const onnx::TensorProto& tensor, const std::string& displayName,
                             const std::string& label);

// Builds the IR graph of a prepared model (onnx_model_loader.h): initializers become
// constants, graph inputs become inputs, every node goes through the op table.
std::unique_ptr<ir::Graph> translateOnnxModel(const PreparedOnnxModel& prepared,
                                              const std::string& displayName);

}  // namespace kiln::import::detail
