// Translators from ONNX nodes (opset 17, already resolved to IR values) to IR ops; see
// onnx_translators.h. Every mismatch between a node and what kiln supports is a
// CompileError naming the node, never a silent skip.
#include <cstring>

#include "kiln/ir/constant_data.h"
#include "kiln/ir/op_rules.h"
#include "kiln/support/diagnostics.h"
#include "onnx_translators.h"

namespace kiln::import::detail {

namespace {

using ir::DType;
using ir::TensorType;

// The name of output 0 (every node has one).
const std::string& outputName(const OnnxNode& node) { return node.outputNames.at(0); }

void rejectUnconvertedAttributes(OnnxTranslation& t, const OnnxNode& node) {
  for (const auto& [name, type] : node.otherAttrs) {
    t.fail(node, "attribute '" + name + "' of type " + type + " is not supported");
  }
  for (const auto& [name, tensor] : node.tensorAttrs) {
    t.fail(node, "tensor attribute '" + name + "' is not supported");
  }
}

ir::Value* scalarConstant(OnnxTranslation& t, const std::string& hint, DType dtype, double value) {
  TensorType type(dtype, {});
  double values[] = {value};
  return t.graph.addConstant(t.graph.uniqueName(hint), type, ir::makeConstantBytes(type, values));
}

// How many results the IR op gets: the node's outputs up to the last present one, checked
// against the op's fixed result count (extra outputs such as MaxPool's Indices are refused).
size_t resultCount(OnnxTranslation& t, const OnnxNode& node, const ir::OpInfo& info) {
  size_t count = 0;
  for (size_t i = 0; i < node.outputNames.size(); ++i) {
    if (!node.outputNames[i].empty()) count = i + 1;
  }
  if (info.numResults >= 0 && count > static_cast<size_t>(info.numResults)) {
    t.fail(node, "output " + std::to_string(info.numResults) + " ('" +
                     node.outputNames[info.numResults] + "') is not supported");
  }
  if (info.numResults >= 0) count = static_cast<size_t>(info.numResults);
  for (size_t i = 0; i < count; ++i) {
    if (i >= node.outputNames.size() || node.outputNames[i].empty()) {
      t.fail(node, "output " + std::to_string(i) + " is absent; kiln needs it");
    }
  }
  return count;
}

// ONNX left a dim unknown: the op's static operands (shape, axes...) whose contents the
// importer tracked become constants, so that the IR rule can compute the type.
void substituteTrackedOperands(OnnxTranslation& t, const ir::OpInfo& info,
                               std::vector<ir::Value*>& operands) {
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!info.isStaticOperand(i) || !operands[i] || operands[i]->isConstant()) continue;
    if (auto contents = t.shapeValues.get(operands[i])) {
      const TensorType& type = operands[i]->type();
      operands[i] = t.graph.addConstant(t.graph.uniqueName(operands[i]->name() + ".value"), type,
                                        ir::makeConstantBytesInt(type, *contents));
    }
  }
}

}  // namespace

std::vector<ir::Value*> emitOp(OnnxTranslation& t, const OnnxNode& node, ir::OpKind kind,
                               std::vector<ir::Value*> operands, ir::AttributeMap attrs) {
  const ir::OpInfo& info = ir::opInfo(kind);
  while (!operands.empty() && operands.back() == nullptr) operands.pop_back();
  int count = static_cast<int>(operands.size());
  if (count < info.minOperands || (info.maxOperands >= 0 && count > info.maxOperands)) {
    t.fail(node, "has " + std::to_string(count) + " inputs; kiln's " + std::string(info.name) +
                     " takes " + std::to_string(info.minOperands) + " to " +
                     (info.maxOperands < 0 ? std::string("any number")
                                           : std::to_string(info.maxOperands)));
  }
  // A shape, axes or pads operand fed straight from a graph input is known only at run time:
  // an error when ONNX could not infer the result's shape without it. (Clip's bounds and
  // Dropout's ratio are values, refused later only if kiln needs them.)
  bool unknownResult = false;
  for (const std::optional<TensorType>& type : node.outputTypes) unknownResult |= !type;
  bool shapeOperands = kind != ir::OpKind::Clip && kind != ir::OpKind::Dropout && unknownResult;
  for (size_t i = 0; shapeOperands && i < operands.size(); ++i) {
    if (info.isStaticOperand(i) && operands[i] && operands[i]->isInput()) {
      t.fail(node, "input " + std::to_string(i) + " is the graph input '" +
                       operands[i]->name() +
                       "', known only at run time, but kiln needs static shapes: make it a "
                       "constant (an initializer) in the model, export the model with fixed "
                       "shapes, or give its values when compiling: --fix-input=" +
                       operands[i]->name() + "=@VALUES.npy");
    }
  }
  const size_t numResults = resultCount(t, node, info);
  std::vector<std::string> names(node.outputNames.begin(), node.outputNames.begin() + numResults);
  for (size_t i = 0; i < numResults; ++i) {
    if (!node.outputTypes[i]) {
      substituteTrackedOperands(t, info, operands);
      break;
    }
  }
  // The IR's own rule must accept the node and agree with ONNX's shape inference; where ONNX
  // left a dim unknown, the rule's type is used.
  ir::RuleResult inferred;
  try {
    inferred = ir::inferResultTypes(ir::RuleInput{kind, operands, attrs, numResults});
  } catch (const CompileError& error) {
    t.fail(node, error.what());
  }
  std::vector<TensorType> types;
  for (size_t i = 0; i < numResults; ++i) {
    const std::optional<TensorType>& rule =
        i < inferred.types.size() ? inferred.types[i] : std::nullopt;
    const std::optional<TensorType>& onnx = node.outputTypes[i];
    if (onnx && rule && !rule->sameShapeAndDType(*onnx)) {
      t.fail(node, "kiln computes " + rule->toString() + " for output '" + names[i] +
                       "' but ONNX shape inference gives " + onnx->toString());
    }
    if (!onnx && !rule) {
      t.fail(node, "output '" + names[i] + "' has shape " + node.outputShapes[i] +
                       " after shape inference; kiln needs every dim known (a data-dependent "
                       "shape?)");
    }
    types.push_back(onnx ? *onnx : *rule);
  }
  ir::Op* op = t.graph.createOp(kind, std::move(operands), std::move(types), std::move(attrs),
                                ir::SourceInfo{node.name, node.opType}, nullptr, names);
  std::vector<ir::Value*> results(node.outputNames.size(), nullptr);
  for (size_t i = 0; i < numResults; ++i) results[i] = op->result(i);
  return results;
}

std::vector<ir::Value*> translateDirect(OnnxTranslation& t, const OnnxNode& node,
                                        std::optional<ir::OpKind> kind) {
  KILN_ASSERT(kind, "translateDirect needs an IR op");
  rejectUnconvertedAttributes(t, node);
  return emitOp(t, node, *kind, node.inputs, node.attrs);
}

// Constant: the node's value (tensor, float(s) or int(s) attribute) becomes an IR constant.
std::vector<ir::Value*> translateConstant(OnnxTranslation& t, const OnnxNode& node,
                                          std::optional<ir::OpKind>) {
  for (const auto& [name, type] : node.otherAttrs) {
    t.fail(node, "a Constant with attribute '" + name + "' (" + type + ") is not supported");
  }
  ConstantTensor value;
  const ir::AttributeMap& attrs = node.attrs;
  if (auto found = node.tensorAttrs.find("value"); found != node.tensorAttrs.end()) {
    value = found->second;
  } else if (attrs.has("value_float") || attrs.has("value_floats")) {
    std::vector<float> floats = attrs.has("value_float")
                                    ? std::vector<float>{attrs.getFloat("value_float")}
                                    : attrs.getFloats("value_floats");
    value.type = TensorType(DType::F32, attrs.has("value_float")
                                            ? ir::Shape{}
                                            : ir::Shape{static_cast<int64_t>(floats.size())});
    value.bytes.resize(floats.size() * sizeof(float));
    if (!floats.empty()) std::memcpy(value.bytes.data(), floats.data(), value.bytes.size());
  } else if (attrs.has("value_int") || attrs.has("value_ints")) {
    std::vector<int64_t> ints = attrs.has("value_int")
                                    ? std::vector<int64_t>{attrs.getInt("value_int")}
                                    : attrs.getInts("value_ints");
    value.type = TensorType(DType::I64, attrs.has("value_int")
                                            ? ir::Shape{}
                                            : ir::Shape{static_cast<int64_t>(ints.size())});
    value.bytes = ir::makeConstantBytesInt(value.type, ints);
  } else {
    t.fail(node, "has no value attribute kiln supports (value, value_float(s), value_int(s))");
  }
  const std::optional<TensorType>& inferred = node.outputTypes.at(0);
  if (inferred && !value.type.sameShapeAndDType(*inferred)) {
    t.fail(node, "value " + value.type.toString() + " differs from the inferred type " +
                     inferred->toString());
  }
  return {t.graph.addConstant(outputName(node), value.type, std::move(value.bytes))};
}

// Cast: ONNX's `to` is a TensorProto.DataType; the IR's is a kiln DType number.
std::vector<ir::Value*> translateCast(OnnxTranslation& t, const OnnxNode& node,
                                      std::optional<ir::OpKind> kind) {
  rejectUnconvertedAttributes(t, node);
  ir::AttributeMap attrs = node.attrs;
  int64_t to = attrs.getInt("to", 0);
  std::optional<DType> dtype = dtypeFromOnnx(static_cast<int32_t>(to));
  if (!dtype) t.fail(node, "casts to " + onnxTypeName(static_cast<int32_t>(to)) +
                               ", which kiln does not support");
  attrs.set("to", static_cast<int64_t>(*dtype));
  return emitOp(t, node, *kind, node.inputs, std::move(attrs));
}

// ConstantOfShape: ONNX gives the fill value as a one-element tensor attribute; the IR takes
// `dtype` (kiln DType number) and `value` (int or float).
std::vector<ir::Value*> translateConstantOfShape(OnnxTranslation& t, const OnnxNode& node,
                                                 std::optional<ir::OpKind> kind) {
  ir::AttributeMap attrs;
  DType dtype = DType::F32;
  double fill = 0.0;
  if (auto found = node.tensorAttrs.find("value"); found != node.tensorAttrs.end()) {
    const ConstantTensor& value = found->second;
    if (value.type.numElements() != 1) {
      t.fail(node, "attribute 'value' must hold one element, it has " +
                       std::to_string(value.type.numElements()));
    }
    dtype = value.type.dtype;
    fill = ir::readElementDouble(dtype, value.bytes.data(), 0);
    // The IR carries the fill value as a float attribute.
    if (dtype == DType::F64 && double(float(fill)) != fill && fill == fill)
      t.fail(node, "an f64 fill value that float32 cannot hold exactly is not supported");
  }
  attrs.set("dtype", static_cast<int64_t>(dtype));
  if (ir::isFloat(dtype)) {
    attrs.set("value", static_cast<float>(fill));
  } else {
    attrs.set("value", static_cast<int64_t>(fill));
  }
  return emitOp(t, node, *kind, node.inputs, std::move(attrs));
}

// Clip: opset 17 takes min/max as inputs; a node still carrying the old min/max attributes
// (opsets 1-10) gets them as scalar constants.
std::vector<ir::Value*> translateClip(OnnxTranslation& t, const OnnxNode& node,
                                      std::optional<ir::OpKind> kind) {
  rejectUnconvertedAttributes(t, node);
  std::vector<ir::Value*> operands = node.inputs;
  ir::AttributeMap attrs = node.attrs;
  if (attrs.has("min") || attrs.has("max")) {
    DType dtype = operands.at(0)->dtype();
    operands.resize(3, nullptr);
    if (attrs.has("min")) operands[1] = scalarConstant(t, outputName(node) + ".min", dtype, attrs.getFloat("min"));
    if (attrs.has("max")) operands[2] = scalarConstant(t, outputName(node) + ".max", dtype, attrs.getFloat("max"));
    attrs.erase("min");
    attrs.erase("max");
  }
  return emitOp(t, node, *kind, std::move(operands), std::move(attrs));
}

// BatchNormalization: inference form only (one output, training_mode = 0).
std::vector<ir::Value*> translateBatchNorm(OnnxTranslation& t, const OnnxNode& node,
                                           std::optional<ir::OpKind> kind) {
  rejectUnconvertedAttributes(t, node);
  ir::AttributeMap attrs = node.attrs;
  if (attrs.getInt("training_mode", 0) != 0) {
    t.fail(node, "training mode (training_mode = 1) is not supported");
  }
  attrs.erase("training_mode");
  attrs.erase("momentum");  // only used in training
  return emitOp(t, node, *kind, node.inputs, std::move(attrs));
}

// PRelu: before opset 7 a slope of shape (C) applied per channel (dim 1); the version
// converter keeps that shape, which under today's broadcasting would apply along the last
// dim instead. Such constant slopes are reshaped to (C, 1, ..., 1).
std::vector<ir::Value*> translatePRelu(OnnxTranslation& t, const OnnxNode& node,
                                       std::optional<ir::OpKind> kind) {
  rejectUnconvertedAttributes(t, node);
  std::vector<ir::Value*> operands = node.inputs;
  if (operands.size() == 2 && operands[0] && operands[1] && t.sourceOpset < 7) {
    ir::Value* x = operands[0];
    ir::Value* slope = operands[1];
    if (x->type().rank() > 2 && slope->type().rank() == 1 && slope->shape()[0] > 1 &&
        slope->shape()[0] == x->shape()[1]) {
      if (!slope->isConstant()) {
        t.fail(node, "an opset-" + std::to_string(t.sourceOpset) +
                         " per-channel slope must be a constant");
      }
      ir::Shape shape(static_cast<size_t>(x->type().rank() - 1), 1);
      shape[0] = slope->shape()[0];
      operands[1] = t.graph.addConstant(t.graph.uniqueName(slope->name() + ".per_channel"),
                                        TensorType(slope->dtype(), shape), slope->constantBytes());
    }
  }
  return emitOp(t, node, *kind, std::move(operands), node.attrs);
}

}  // namespace kiln::import::detail
