// Applies `--input-shape` overrides to an ONNX graph's inputs and then requires every input
// to be a tensor with a fully static shape. Runs before shape inference, so the fixed dims
// propagate through the whole graph.
#include <map>
#include <set>

#include "kiln/support/diagnostics.h"
#include "onnx_model_loader.h"

namespace kiln::import::detail {

namespace {

std::string flagText(const InputShape& shape) {
  return "--input-shape=" + shape.name + ":" + formatDims(shape.dims);
}

// Shape text with symbolic dims by name and unknown ones as '?', e.g. "batchx3x?x224".
std::string shapeText(const onnx::TensorShapeProto& shape) {
  if (shape.dim_size() == 0) return "scalar";
  std::string text;
  for (int i = 0; i < shape.dim_size(); ++i) {
    if (i > 0) text += 'x';
    const auto& dim = shape.dim(i);
    if (dim.has_dim_value()) {
      text += std::to_string(dim.dim_value());
    } else if (dim.has_dim_param() && !dim.dim_param().empty()) {
      text += dim.dim_param();
    } else {
      text += '?';
    }
  }
  return text;
}

bool isStatic(const onnx::TensorShapeProto::Dimension& dim) {
  return dim.has_dim_value() && dim.dim_value() >= 0;
}

void applyOverride(onnx::ValueInfoProto& input, const InputShape& flag) {
  auto* tensorType = input.mutable_type()->mutable_tensor_type();
  if (tensorType->has_shape()) {
    const auto& shape = tensorType->shape();
    if (shape.dim_size() != static_cast<int>(flag.dims.size())) {
      throw CompileError(flagText(flag) + ": input '" + flag.name + "' has rank " +
                         std::to_string(shape.dim_size()) + " (shape " + shapeText(shape) +
                         "), the flag gives " + std::to_string(flag.dims.size()) + " dims");
    }
    for (int i = 0; i < shape.dim_size(); ++i) {
      if (isStatic(shape.dim(i)) && shape.dim(i).dim_value() != flag.dims[i]) {
        throw CompileError(flagText(flag) + ": dim " + std::to_string(i) + " of input '" +
                           flag.name + "' is " + std::to_string(shape.dim(i).dim_value()) +
                           " in the model, the flag gives " + std::to_string(flag.dims[i]));
      }
    }
  }
  auto* shape = tensorType->mutable_shape();
  shape->clear_dim();
  for (int64_t dim : flag.dims) shape->add_dim()->set_dim_value(dim);
}

void requireStaticInput(const onnx::ValueInfoProto& input, const std::string& displayName) {
  const auto& tensorType = input.type().tensor_type();
  std::string example = "--input-shape=" + input.name() + ":";
  if (!tensorType.has_shape()) {
    throw CompileError(displayName + ": input '" + input.name() +
                       "' has an unknown rank; give its shape with " + example + "DIMS, e.g. " +
                       example + "1x3x224x224");
  }
  const auto& shape = tensorType.shape();
  std::string unknown;
  std::vector<int64_t> exampleDims;
  for (int i = 0; i < shape.dim_size(); ++i) {
    const auto& dim = shape.dim(i);
    exampleDims.push_back(isStatic(dim) ? dim.dim_value() : 1);
    if (isStatic(dim)) continue;
    if (!unknown.empty()) unknown += ", ";
    unknown += "dim " + std::to_string(i) + " '" +
               (dim.dim_param().empty() ? std::string("?") : dim.dim_param()) + "'";
  }
  if (unknown.empty()) return;
  throw CompileError(displayName + ": input '" + input.name() + "' has unknown dims (" + unknown +
                     " in shape " + shapeText(shape) + "); fix them with " + example +
                     "DIMS, for example " + example + formatDims(exampleDims));
}

}  // namespace

void applyInputShapes(onnx::GraphProto& graph, const std::vector<InputShape>& overrides,
                      const std::string& displayName) {
  std::set<std::string> initializers;
  for (const auto& tensor : graph.initializer()) initializers.insert(tensor.name());
  std::map<std::string, onnx::ValueInfoProto*> inputs;
  std::vector<onnx::ValueInfoProto*> inputsInOrder;
  std::string inputList;
  for (auto& input : *graph.mutable_input()) {
    if (initializers.count(input.name())) continue;
    inputs[input.name()] = &input;
    inputsInOrder.push_back(&input);
    inputList += (inputList.empty() ? "'" : ", '") + input.name() + "'";
  }
  std::set<std::string> seen;
  for (const auto& flag : overrides) {
    auto found = inputs.find(flag.name);
    if (found == inputs.end()) {
      throw CompileError(flagText(flag) + ": " + displayName + " has no input named '" +
                         flag.name + "' (its inputs: " +
                         (inputList.empty() ? std::string("none") : inputList) + ")");
    }
    if (!seen.insert(flag.name).second) {
      throw CompileError(flagText(flag) + ": input '" + flag.name + "' is given more than once");
    }
    KILN_ASSERT(found->second->type().has_tensor_type(), "checkValueTypes runs first");
    applyOverride(*found->second, flag);
  }
  for (const onnx::ValueInfoProto* input : inputsInOrder) {
    if (input->type().value_case() == onnx::TypeProto::kTensorType) {
      requireStaticInput(*input, displayName);
    }
  }
}

}  // namespace kiln::import::detail
