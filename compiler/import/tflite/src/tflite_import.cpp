// TFLite import entry points and the translation driver: graph inputs, operators in order
// through the op table, graph outputs (NHWC, with the model's names), IR verification.
#include "kiln/import/tflite/tflite_import.h"

#include <algorithm>

#include "kiln/ir/constant_data.h"
#include "kiln/ir/op_rules.h"
#include "kiln/ir/verifier.h"
#include "kiln/support/diagnostics.h"
#include "tflite_translation.h"

namespace kiln::import {
namespace tflite {

Translation::Translation(const ModelFile& file, const TfliteImportOptions& options)
    : file_(file), options_(options), subgraph_(file.mainGraph()) {
  std::string name =
      subgraph_.name() && subgraph_.name()->size() ? subgraph_.name()->str() : std::string("main");
  graph_ = std::make_unique<ir::Graph>(name);
  slots_.resize(subgraph_.tensors() ? subgraph_.tensors()->size() : 0);
}

void Translation::fail(const std::string& message) const {
  std::string where =
      current_ ? "operator #" + std::to_string(current_->index) + " (" + current_->name + "): "
               : std::string();
  throw CompileError(file_.displayName() + ": " + where + message);
}

std::unique_ptr<ir::Graph> Translation::run() {
  createInputs();
  translateOperators();
  createOutputs();
  ir::verifyGraph(*graph_);
  return std::move(graph_);
}

void Translation::createInputs() {
  if (!subgraph_.inputs() || subgraph_.inputs()->size() == 0)
    throw CompileError(file_.displayName() + ": the TFLite model has no inputs");
  for (int32_t index : *subgraph_.inputs()) {
    Slot& s = slot(index);
    if (s.value) continue;            // listed twice
    if (isConstant(index)) continue;  // a constant listed as an input: keep it constant
    s.value = graph_->addInput(tensorName(index), tensorType(index));
  }
}

void Translation::translateOperators() {
  const auto* operators = subgraph_.operators();
  const auto* codes = file_.model().operator_codes();
  size_t count = operators ? operators->size() : 0;
  for (size_t i = 0; i < count; ++i) {
    const fb::Operator* op = operators->Get(uint32_t(i));
    OpView view;
    view.op = op;
    view.index = i;
    current_ = &view;
    if (!codes || op->opcode_index() >= codes->size())
      fail("operator code index " + std::to_string(op->opcode_index()) + " is out of range");
    const fb::OperatorCode* code = codes->Get(op->opcode_index());
    view.code = builtinCode(*code);
    view.name = tfliteBuiltinName(view.code);
    if (view.name.empty()) view.name = "builtin " + std::to_string(view.code);
    if (view.code == 32) {  // CUSTOM
      std::string custom = code->custom_code() ? code->custom_code()->str() : "";
      throw CompileError(file_.displayName() + ": unsupported TFLite custom operator '" + custom +
                         "' at operator #" + std::to_string(i));
    }
    TranslateFn translate = findTranslator(view.code);
    if (!translate)
      throw CompileError(file_.displayName() + ": unsupported TFLite operator '" +
                         tfliteBuiltinName(view.code) + "' (builtin code " +
                         std::to_string(view.code) + ") at operator #" + std::to_string(i));
    if (op->inputs())
      for (int32_t t : *op->inputs()) view.inputs.push_back(t);
    if (op->outputs())
      for (int32_t t : *op->outputs()) view.outputs.push_back(t);
    if (view.outputs.empty()) fail("the operator has no outputs");
    for (int32_t t : view.inputs)
      if (t != -1) tensor(t);
    for (int32_t t : view.outputs) tensor(t);
    translate(*this, view);
    for (int32_t t : view.outputs)
      if (!slots_[size_t(t)].value) fail("output tensor '" + tensorName(t) + "' was not produced");
  }
  current_ = nullptr;
}

void Translation::createOutputs() {
  if (!subgraph_.outputs() || subgraph_.outputs()->size() == 0)
    throw CompileError(file_.displayName() + ": the TFLite model has no outputs");
  auto addOutput = [&](int32_t index) {
    if (!slot(index).value && !isConstant(index))
      throw CompileError(file_.displayName() + ": output tensor '" + tensorName(index) +
                         "' is not produced by any operator");
    graph_->addOutput(tensorName(index), nhwc(index));
  };
  std::vector<int32_t> outputs(subgraph_.outputs()->begin(), subgraph_.outputs()->end());
  for (int32_t index : outputs) addOutput(index);
  if (!options_.debugOutputs) return;
  const auto* operators = subgraph_.operators();
  for (size_t i = 0; operators && i < operators->size(); ++i) {
    const fb::Operator* op = operators->Get(uint32_t(i));
    if (!op->outputs()) continue;
    for (int32_t index : *op->outputs())
      if (std::find(outputs.begin(), outputs.end(), index) == outputs.end()) {
        outputs.push_back(index);
        addOutput(index);
      }
  }
}

ir::Value* Translation::constant(const std::string& hint, ir::TensorType type,
                                 std::vector<uint8_t> bytes) {
  return graph_->addConstant(graph_->uniqueName(hint), std::move(type), std::move(bytes));
}

ir::Value* Translation::constantI64(const std::string& hint, const std::vector<int64_t>& values) {
  ir::TensorType type(ir::DType::I64, {int64_t(values.size())});
  return constant(hint, type, ir::makeConstantBytesInt(type, values));
}

ir::Value* Translation::scalarF32(const std::string& hint, float value) {
  ir::TensorType type(ir::DType::F32, {});
  double v = value;
  return constant(hint, type, ir::makeConstantBytes(type, std::span<const double>(&v, 1)));
}

ir::Value* Translation::emit(ir::OpKind kind, std::vector<ir::Value*> operands,
                             ir::AttributeMap attrs, ir::TensorType resultType,
                             const std::string& resultName) {
  ir::SourceInfo source;
  if (current_) {
    source.opType = current_->name;
    source.nodeName = "operator #" + std::to_string(current_->index);
  }
  std::string name = resultName.empty() ? "" : graph_->uniqueName(resultName);
  ir::Op* op = graph_->createOp(kind, std::move(operands), {std::move(resultType)},
                                std::move(attrs), std::move(source), nullptr, {name});
  return op->result();
}

ir::Value* Translation::emitInferred(ir::OpKind kind, std::vector<ir::Value*> operands,
                                     ir::AttributeMap attrs, const std::string& resultName) {
  ir::RuleResult inferred;
  try {
    inferred = ir::inferResultTypes(ir::RuleInput{kind, operands, attrs, 1});
  } catch (const CompileError& e) {
    fail(std::string(ir::opName(kind)) + ": " + e.what());
  }
  KILN_ASSERT(inferred.types.size() == 1 && inferred.types[0], "importer: uninferred type");
  return emit(kind, std::move(operands), std::move(attrs), *inferred.types[0], resultName);
}

}  // namespace tflite

std::unique_ptr<ir::Graph> importTfliteBytes(std::string_view bytes,
                                             const TfliteImportOptions& options,
                                             const std::string& displayName) {
  tflite::ModelFile file(bytes, displayName);
  return tflite::Translation(file, options).run();
}

std::unique_ptr<ir::Graph> importTfliteFile(const std::filesystem::path& path,
                                            const TfliteImportOptions& options) {
  tflite::ModelFile file = tflite::ModelFile::read(path);
  return tflite::Translation(file, options).run();
}

std::vector<std::string> supportedTfliteOperators() {
  std::vector<std::string> names;
  for (int32_t code : tflite::supportedCodes()) names.push_back(tfliteBuiltinName(code));
  return names;
}

}  // namespace kiln::import
