// --fix-input: graph inputs whose values the user gives at compile time become initializers
// before the checker and shape inference, so that shapes computed from them (an Expand or
// Reshape target fed by a graph input) are known and fold like any constant.
#include <set>
#include <string>

#include "kiln/support/diagnostics.h"
#include "onnx_model_loader.h"
#include "onnx_translation.h"

namespace kiln::import::detail {
namespace {

// The ONNX element type of an IR dtype (the inverse of dtypeFromOnnx).
int32_t onnxElementType(ir::DType dtype) {
  for (int32_t t = 1; t <= onnx::TensorProto::DataType_MAX; ++t) {
    if (onnx::TensorProto::DataType_IsValid(t) && dtypeFromOnnx(t) == dtype) return t;
  }
  KILN_UNREACHABLE("every IR dtype has an ONNX element type");
}

std::string dimsText(const ir::Shape& shape) {
  if (shape.empty()) return "scalar";
  std::string text;
  for (int64_t d : shape) text += (text.empty() ? "" : "x") + std::to_string(d);
  return text;
}

// The values must fit the input as the model declares it: same element type and rank, the
// same size along every dim the model fixes.
void checkAgainstInput(const onnx::ValueInfoProto& input, const FixedInput& fixed,
                       const std::string& displayName) {
  auto fail = [&](const std::string& why) {
    throw CompileError(fixed.flag + ": input '" + fixed.name + "' of " + displayName + " " + why);
  };
  const auto& tensorType = input.type().tensor_type();
  std::optional<ir::DType> modelType = dtypeFromOnnx(tensorType.elem_type());
  if (modelType != fixed.type.dtype) {
    fail("has element type " + onnxTypeName(tensorType.elem_type()) + ", but the values are " +
         std::string(ir::dtypeName(fixed.type.dtype)) + "; save them with that element type");
  }
  if (!tensorType.has_shape()) return;  // rank unknown: the values decide
  const auto& dims = tensorType.shape().dim();
  std::string modelDims;
  bool match = dims.size() == static_cast<int>(fixed.type.shape.size());
  for (int i = 0; i < dims.size(); ++i) {
    bool known = dims[i].has_dim_value();
    modelDims += std::string(i ? "x" : "") +
                 (known ? std::to_string(dims[i].dim_value())
                        : (dims[i].dim_param().empty() ? "?" : dims[i].dim_param()));
    if (match && known && dims[i].dim_value() != fixed.type.shape[size_t(i)]) match = false;
  }
  if (!match) {
    fail("has shape " + (modelDims.empty() ? std::string("scalar") : modelDims) +
         ", but the values have shape " + dimsText(fixed.type.shape));
  }
}

}  // namespace

void applyFixedInputs(onnx::GraphProto& graph, const std::vector<FixedInput>& fixedInputs,
                      const std::string& displayName, int64_t irVersion) {
  if (fixedInputs.empty()) return;
  std::set<std::string> initializers;
  for (const auto& tensor : graph.initializer()) initializers.insert(tensor.name());
  std::string inputList;
  for (const auto& input : graph.input()) {
    if (!initializers.count(input.name()))
      inputList += (inputList.empty() ? "'" : ", '") + input.name() + "'";
  }
  std::set<std::string> seen;
  for (const FixedInput& fixed : fixedInputs) {
    KILN_ASSERT(fixed.bytes.size() == fixed.type.byteSize(), "--fix-input bytes vs type");
    if (!seen.insert(fixed.name).second)
      throw CompileError(fixed.flag + ": input '" + fixed.name + "' is fixed more than once");
    int index = -1;
    for (int i = 0; i < graph.input_size(); ++i) {
      if (graph.input(i).name() == fixed.name && !initializers.count(fixed.name)) index = i;
    }
    if (index < 0) {
      throw CompileError(fixed.flag + ": " + displayName + " has no input named '" + fixed.name +
                         "' (its inputs: " + (inputList.empty() ? std::string("none") : inputList) +
                         ")");
    }
    checkAgainstInput(graph.input(index), fixed, displayName);

    onnx::TensorProto* tensor = graph.add_initializer();
    tensor->set_name(fixed.name);
    tensor->set_data_type(onnxElementType(fixed.type.dtype));
    for (int64_t d : fixed.type.shape) tensor->add_dims(d);
    tensor->set_raw_data(std::string(fixed.bytes.begin(), fixed.bytes.end()));
    initializers.insert(fixed.name);
    // IR version 4 and later list only real inputs; older models list every initializer as
    // an input too (the checker insists), which the importer treats as a constant.
    if (irVersion >= 4) graph.mutable_input()->DeleteSubrange(index, 1);
  }
}

}  // namespace kiln::import::detail
