// Rewrites old-opset constructs that libonnx 1.12's version converter gets wrong, before it
// runs. Opsets <= 6 broadcast the second operand of Add/Sub/Mul/Div/Pow and the comparison and
// logic ops at an explicit `axis` (`broadcast = 1, axis = 1` adds a (C) bias to N x C x H x W).
// The converter's 6 -> 7 adapter unsqueezes the wrong dims for such an axis and then refuses
// the model; here the operand gets an Unsqueeze to (dims..., 1, ..., 1) and the axis goes, which
// is the same broadcast in today's numpy form.
#include <unordered_map>

#include "onnx_model_loader.h"

namespace kiln::import::detail {

namespace {

bool broadcastsAtAxis(const std::string& opType) {
  static const char* const kOps[] = {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor",
                                     "Equal", "Greater", "Less"};
  for (const char* op : kOps) {
    if (opType == op) return true;
  }
  return false;
}

const onnx::AttributeProto* findAttribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

// Static dims of every value whose shape inference knows them.
std::unordered_map<std::string, std::vector<int64_t>> staticShapes(const onnx::GraphProto& graph) {
  std::unordered_map<std::string, std::vector<int64_t>> shapes;
  auto add = [&shapes](const onnx::ValueInfoProto& info) {
    if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) return;
    std::vector<int64_t> dims;
    for (const auto& dim : info.type().tensor_type().shape().dim()) {
      if (!dim.has_dim_value()) return;
      dims.push_back(dim.dim_value());
    }
    shapes[info.name()] = dims;
  };
  for (const auto& info : graph.input()) add(info);
  for (const auto& info : graph.value_info()) add(info);
  for (const auto& info : graph.output()) add(info);
  for (const auto& tensor : graph.initializer()) {
    shapes[tensor.name()] = std::vector<int64_t>(tensor.dims().begin(), tensor.dims().end());
  }
  return shapes;
}

}  // namespace

bool fixLegacyBroadcast(onnx::ModelProto& model, int64_t sourceOpset) {
  if (sourceOpset >= 7) return false;
  onnx::GraphProto& graph = *model.mutable_graph();
  auto shapes = staticShapes(graph);
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  int counter = 0;
  bool changed = false;
  for (auto& node : *graph.mutable_node()) {
    const onnx::AttributeProto* broadcast = findAttribute(node, "broadcast");
    const onnx::AttributeProto* axis = findAttribute(node, "axis");
    bool isDefault = node.domain().empty() || node.domain() == "ai.onnx";
    if (isDefault && broadcastsAtAxis(node.op_type()) && broadcast && broadcast->i() == 1 &&
        axis && node.input_size() == 2) {
      auto a = shapes.find(node.input(0));
      auto b = shapes.find(node.input(1));
      if (a != shapes.end() && b != shapes.end()) {
        auto rankA = static_cast<int64_t>(a->second.size());
        auto rankB = static_cast<int64_t>(b->second.size());
        int64_t start = axis->i() < 0 ? axis->i() + rankA : axis->i();
        if (start >= 0 && start + rankB < rankA) {
          // B aligned at `start`: trailing 1s make numpy broadcasting align it the same way.
          // Unsqueeze-1 takes its axes as an attribute, so no constant is needed.
          std::string base = node.input(1) + ".kiln_axis" + std::to_string(counter++);
          onnx::NodeProto* unsqueeze = nodes.Add();
          unsqueeze->set_op_type("Unsqueeze");
          unsqueeze->add_input(node.input(1));
          unsqueeze->add_output(base);
          onnx::AttributeProto* axes = unsqueeze->add_attribute();
          axes->set_name("axes");
          axes->set_type(onnx::AttributeProto::INTS);
          for (int64_t dim = rankB; dim < rankA - start; ++dim) axes->add_ints(dim);
          node.set_input(1, base);
          changed = true;
        }
      }
      // Without the axis, opset-6 broadcasting aligns trailing dims: numpy's rule.
      for (int i = 0; i < node.attribute_size(); ++i) {
        if (node.attribute(i).name() == "axis") {
          node.mutable_attribute()->DeleteSubrange(i, 1);
          break;
        }
      }
    }
    *nodes.Add() = std::move(node);
  }
  graph.mutable_node()->Swap(&nodes);
  return changed;
}

}  // namespace kiln::import::detail
