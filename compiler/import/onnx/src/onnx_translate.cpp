// Walks a prepared ONNX model (opset 17, shapes inferred, external data inlined) and builds
// the IR graph: initializers become constants, graph inputs become inputs, each node is
// converted into an OnnxNode and handed to its translator from the op table.
#include <unordered_map>

#include "kiln/support/diagnostics.h"
#include "onnx_proto.h"

namespace kiln::import::detail {

namespace {

constexpr int64_t kMaxElements = int64_t(1) << 40;  // larger tensors are corrupt dims

class ModelWalker {
 public:
  ModelWalker(const PreparedOnnxModel& prepared, const std::string& displayName)
      : model_(prepared.model),
        displayName_(displayName),
        graph_(std::make_unique<ir::Graph>(model_.graph().name().empty() ? "main"
                                                                         : model_.graph().name())),
        translation_{*graph_, displayName, prepared.sourceOpset, {}} {}

  std::unique_ptr<ir::Graph> run() {
    const onnx::GraphProto& graph = model_.graph();
    for (const auto& info : graph.input()) types_[info.name()] = &info.type();
    for (const auto& info : graph.value_info()) types_[info.name()] = &info.type();
    for (const auto& info : graph.output()) types_[info.name()] = &info.type();
    for (const auto& tensor : graph.initializer()) {
      ConstantTensor constant =
          convertTensor(tensor, displayName_, "tensor '" + tensor.name() + "'");
      values_[tensor.name()] =
          graph_->addConstant(tensor.name(), constant.type, std::move(constant.bytes));
    }
    for (const auto& input : graph.input()) {
      if (values_.count(input.name())) continue;  // an initializer listed as input
      values_[input.name()] = graph_->addInput(input.name(), inputType(input.name()));
    }
    for (int i = 0; i < graph.node_size(); ++i) translateNode(graph.node(i), i);
    for (const auto& output : graph.output()) {
      auto found = values_.find(output.name());
      KILN_ASSERT(found != values_.end() && found->second,
                  "graph output '" + output.name() + "' not produced (the checker allowed it)");
      graph_->addOutput(output.name(), found->second);
    }
    return std::move(graph_);
  }

 private:
  // The IR type ONNX's shape inference gave a value: nullopt (and the shape as text in
  // `shapeText`) when a dim is unknown. A missing or non-tensor type, or an element type kiln
  // lacks, is a CompileError.
  // `what` names the value in messages: "input 'x'", "node #2 (Cast): output 'y'".
  std::optional<ir::TensorType> inferredType(const std::string& name, const std::string& what,
                                             std::string* shapeText) {
    auto fail = [&](const std::string& why) -> void {
      throw CompileError(displayName_ + ": " + what + " " + why);
    };
    auto found = types_.find(name);
    if (found == types_.end() || !found->second->has_tensor_type()) {
      fail("has no tensor type after shape inference; kiln needs static shapes");
    }
    const auto& tensorType = found->second->tensor_type();
    std::optional<ir::DType> dtype = dtypeFromOnnx(tensorType.elem_type());
    if (!dtype) {
      fail("has element type " + onnxTypeName(tensorType.elem_type()) +
           ", which kiln does not support");
    }
    if (!tensorType.has_shape()) {
      *shapeText = "of unknown rank";
      return std::nullopt;
    }
    ir::TensorType type;
    type.dtype = *dtype;
    bool unknown = false;
    shapeText->clear();
    for (const auto& dim : tensorType.shape().dim()) {
      if (!shapeText->empty()) *shapeText += 'x';
      if (dim.has_dim_value() && dim.dim_value() >= 0) {
        type.shape.push_back(dim.dim_value());
        *shapeText += std::to_string(dim.dim_value());
      } else {
        unknown = true;
        *shapeText += dim.dim_param().empty() ? "?" : dim.dim_param();
      }
    }
    if (shapeText->empty()) *shapeText = "scalar";
    if (unknown) return std::nullopt;
    int64_t elements = 1;
    for (int64_t dim : type.shape) {
      elements = dim > 0 && elements > kMaxElements / dim ? kMaxElements + 1 : elements * dim;
    }
    if (elements > kMaxElements) fail("has shape " + *shapeText + ": over 2^40 elements");
    return type;
  }

  // Graph inputs are static: the loader required it (applyInputShapes).
  ir::TensorType inputType(const std::string& name) {
    std::string text;
    std::optional<ir::TensorType> type = inferredType(name, "input '" + name + "'", &text);
    KILN_ASSERT(type, "input '" + name + "' is not static after applyInputShapes");
    return *type;
  }

  void convertAttribute(const onnx::AttributeProto& attribute, OnnxNode& node) {
    using onnx::AttributeProto;
    const std::string& name = attribute.name();
    switch (attribute.type()) {
      case AttributeProto::INT: node.attrs.set(name, attribute.i()); break;
      case AttributeProto::FLOAT: node.attrs.set(name, attribute.f()); break;
      case AttributeProto::STRING: node.attrs.set(name, attribute.s()); break;
      case AttributeProto::INTS:
        node.attrs.set(name, std::vector<int64_t>(attribute.ints().begin(), attribute.ints().end()));
        break;
      case AttributeProto::FLOATS:
        node.attrs.set(name, std::vector<float>(attribute.floats().begin(), attribute.floats().end()));
        break;
      case AttributeProto::TENSOR:
        node.tensorAttrs[name] = convertTensor(
            attribute.t(), displayName_,
            "attribute '" + name + "' of " + OnnxTranslation::describe(node));
        break;
      default: {
        std::string type = AttributeProto::AttributeType_Name(attribute.type());
        node.otherAttrs[name] = type.empty() ? "UNDEFINED" : type;
        break;
      }
    }
  }

  void translateNode(const onnx::NodeProto& proto, int index) {
    OnnxNode node;
    node.name = proto.name();
    node.opType = proto.op_type();
    node.domain = proto.domain();
    node.index = index;
    const OnnxOpEntry* entry = findOnnxOp(node.domain, node.opType);
    if (!entry) {
      // An op the version converter introduced (the loader checked the original ones).
      throw CompileError(displayName_ + ": unsupported operator '" + node.opType + "' (domain '" +
                         displayDomain(node.domain) + "', opset " +
                         std::to_string(kOnnxTargetOpset) + ") at node " +
                         onnxNodeRef(node.name, index) +
                         unsupportedOpAdvice(node.domain, node.opType));
    }
    for (const std::string& input : proto.input()) {
      if (input.empty()) {
        node.inputs.push_back(nullptr);
        continue;
      }
      auto found = values_.find(input);
      KILN_ASSERT(found != values_.end(), "input '" + input + "' undefined (the checker allowed it)");
      node.inputs.push_back(found->second);
    }
    for (const auto& attribute : proto.attribute()) convertAttribute(attribute, node);
    for (const std::string& output : proto.output()) {
      std::string text;
      node.outputNames.push_back(output);
      node.outputTypes.push_back(output.empty() ? std::nullopt
                                                : inferredType(output,
                                                               OnnxTranslation::describe(node) +
                                                                   ": output '" + output + "'",
                                                               &text));
      node.outputShapes.push_back(text);
    }
    std::vector<ir::Value*> results = entry->translate(translation_, node, entry->kind);
    KILN_ASSERT(results.size() == node.outputNames.size(), "translator result count");
    translation_.shapeValues.track(node, results);
    for (size_t i = 0; i < results.size(); ++i) {
      if (!node.outputNames[i].empty() && results[i]) values_[node.outputNames[i]] = results[i];
    }
  }

  const onnx::ModelProto& model_;
  std::string displayName_;
  std::unique_ptr<ir::Graph> graph_;
  OnnxTranslation translation_;
  std::unordered_map<std::string, const onnx::TypeProto*> types_;
  std::unordered_map<std::string, ir::Value*> values_;
};

}  // namespace

std::unique_ptr<ir::Graph> translateOnnxModel(const PreparedOnnxModel& prepared,
                                              const std::string& displayName) {
  return ModelWalker(prepared, displayName).run();
}

std::unique_ptr<ir::Graph> prepareAndTranslate(const OnnxSource& source,
                                               const OnnxImportOptions& options) {
  return translateOnnxModel(prepareOnnxModel(source, options), source.displayName);
}

}  // namespace kiln::import::detail
