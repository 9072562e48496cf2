// Loads an ONNX model with libonnx and prepares it for translation (see onnx_model_loader.h
// for the steps). This is the one file that includes libonnx's checker, shape inference and
// version converter headers; libonnx's exceptions are turned into kiln::CompileError here.
#include "onnx_model_loader.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <unordered_map>

#include "kiln/support/diagnostics.h"
#include "onnx_translation.h"

namespace kiln::import::detail {

namespace {

// libonnx messages span several lines ("...\n\n==> Context: ..."); diagnostics are one line.
std::string oneLine(std::string text) {
  const std::string context = "\n\n==> Context: ";
  for (size_t at = text.find(context); at != std::string::npos; at = text.find(context, at)) {
    text.replace(at, context.size(), "; context: ");
  }
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

bool isDefaultDomain(std::string_view domain) { return domain.empty() || domain == "ai.onnx"; }

// The opset the model imports for a domain; -1 when it does not import it.
int64_t importedOpset(const onnx::ModelProto& model, std::string_view domain) {
  for (const auto& opset : model.opset_import()) {
    if (isDefaultDomain(opset.domain()) ? isDefaultDomain(domain) : opset.domain() == domain) {
      return opset.version();
    }
  }
  return -1;
}

// Runs one libonnx step and turns its exceptions into a CompileError "<file>: <what>: <msg>".
template <typename Step>
void runOnnxStep(const OnnxSource& source, const std::string& what, Step step) {
  try {
    step();
  } catch (const CompileError&) {
    throw;
  } catch (const std::exception& error) {
    throw CompileError(source.displayName + ": " + what + ": " + oneLine(error.what()));
  }
}

void checkOpsetRange(const onnx::ModelProto& model, const OnnxSource& source) {
  int64_t opset = importedOpset(model, "");
  if (opset > kOnnxTargetOpset) {
    throw CompileError(source.displayName + ": the model uses opset " + std::to_string(opset) +
                       " of domain 'ai.onnx'; kiln supports ai.onnx opsets up to " +
                       std::to_string(kOnnxTargetOpset));
  }
}

// Graph inputs and outputs must be non-string tensors: sequences, maps, optionals and
// strings have no place in kiln's IR.
void checkValueType(const onnx::ValueInfoProto& value, const char* role,
                    const OnnxSource& source) {
  const auto& type = value.type();
  const char* kind = nullptr;
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType:
      if (type.tensor_type().elem_type() == onnx::TensorProto::STRING) {
        throw CompileError(source.displayName + ": " + role + " '" + value.name() +
                           "' is a string tensor; kiln supports numeric tensors only");
      }
      return;
    case onnx::TypeProto::kSequenceType: kind = "a sequence"; break;
    case onnx::TypeProto::kMapType: kind = "a map"; break;
    case onnx::TypeProto::kOptionalType: kind = "an optional"; break;
    case onnx::TypeProto::kSparseTensorType: kind = "a sparse tensor"; break;
    default: kind = "of unknown type"; break;
  }
  throw CompileError(source.displayName + ": " + role + " '" + value.name() + "' is " + kind +
                     "; kiln supports tensors only: export the model with a fixed number of "
                     "tensor inputs and outputs instead");
}

void checkValueTypes(const onnx::GraphProto& graph, const OnnxSource& source) {
  for (const auto& input : graph.input()) checkValueType(input, "input", source);
  for (const auto& output : graph.output()) checkValueType(output, "output", source);
}

// libonnx 1.12's checker lets a graph output name a value nothing defines; its version
// converter then crashes. Every output must be an input, an initializer or a node output.
void checkOutputsDefined(const onnx::GraphProto& graph, const OnnxSource& source) {
  std::set<std::string> defined;
  for (const auto& input : graph.input()) defined.insert(input.name());
  for (const auto& tensor : graph.initializer()) defined.insert(tensor.name());
  for (const auto& node : graph.node()) defined.insert(node.output().begin(), node.output().end());
  for (const auto& output : graph.output()) {
    if (!defined.count(output.name())) {
      throw CompileError(source.displayName + ": invalid ONNX model: graph output '" +
                         output.name() + "' is not produced by any node, input or initializer");
    }
  }
}

void checkOperatorsSupported(const onnx::ModelProto& model, const OnnxSource& source) {
  const auto& nodes = model.graph().node();
  for (int i = 0; i < nodes.size(); ++i) {
    const auto& node = nodes[i];
    if (isSupportedOnnxOp(node.domain(), node.op_type())) continue;
    int64_t opset = importedOpset(model, node.domain());
    throw CompileError(source.displayName + ": unsupported operator '" + node.op_type() +
                       "' (domain '" + displayDomain(node.domain()) + "', opset " +
                       (opset < 0 ? std::string("not imported") : std::to_string(opset)) +
                       ") at node " + onnxNodeRef(node.name(), i) +
                       unsupportedOpAdvice(node.domain(), node.op_type()));
  }
}

// The version converter copies every initializer twice (into its own graph and back). Large
// float weights take no part in any conversion, so their bytes wait outside meanwhile.
using WeightBytes = std::unordered_map<std::string, std::string>;
constexpr size_t kSetAsideBytes = 4096;

WeightBytes setWeightsAside(onnx::ModelProto& model) {
  WeightBytes aside;
  for (auto& tensor : *model.mutable_graph()->mutable_initializer()) {
    bool isFloat = tensor.data_type() == onnx::TensorProto::FLOAT ||
                   tensor.data_type() == onnx::TensorProto::FLOAT16;
    if (isFloat && tensor.raw_data().size() >= kSetAsideBytes && !aside.count(tensor.name())) {
      tensor.mutable_raw_data()->swap(aside[tensor.name()]);
    }
  }
  return aside;
}

void restoreWeights(onnx::ModelProto& model, WeightBytes& aside) {
  for (auto& tensor : *model.mutable_graph()->mutable_initializer()) {
    auto found = aside.find(tensor.name());
    if (found == aside.end()) continue;
    tensor.mutable_raw_data()->swap(found->second);
    aside.erase(found);
  }
}

void inferShapes(onnx::ModelProto& model, const OnnxSource& source) {
  runOnnxStep(source, "shape inference failed", [&] {
    onnx::ShapeInferenceOptions options(/*check_type=*/true, /*error_mode=*/1,
                                        /*enable_data_propagation=*/true);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  });
}

}  // namespace

std::string displayDomain(std::string_view domain) {
  return isDefaultDomain(domain) ? std::string("ai.onnx") : std::string(domain);
}

OnnxSource readOnnxFile(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    throw CompileError(path.string() + ": cannot open ONNX model: " + std::strerror(errno));
  }
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw CompileError(path.string() + ": cannot open ONNX model: it is a directory");
  }
  OnnxSource source;
  source.bytes.resize(static_cast<size_t>(std::filesystem::file_size(path, error)));
  file.read(source.bytes.data(), static_cast<std::streamsize>(source.bytes.size()));
  if (error || !file) throw CompileError(path.string() + ": cannot read ONNX model");
  source.displayName = path.string();
  source.externalDataDir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  return source;
}

PreparedOnnxModel prepareOnnxModel(const OnnxSource& source, const OnnxImportOptions& options) {
  PreparedOnnxModel prepared;
  onnx::ModelProto& model = prepared.model;
  if (source.bytes.empty() || !model.ParseFromString(source.bytes)) {
    throw CompileError(source.displayName +
                       ": not a valid ONNX model: the protobuf data is malformed or truncated");
  }
  checkOpsetRange(model, source);
  inlineExternalData(model, source);
  // Before the checker, which wants a shape on every graph input: an input of unknown rank
  // is then named, with the flag that fixes it, instead of "Field 'shape' ... missing".
  checkValueTypes(model.graph(), source);
  checkOperatorsSupported(model, source);
  applyFixedInputs(*model.mutable_graph(), options.fixedInputs, source.displayName,
                   model.ir_version());
  applyInputShapes(*model.mutable_graph(), options.inputShapes, source.displayName);
  runOnnxStep(source, "invalid ONNX model", [&] { onnx::checker::check_model(model); });
  prepared.sourceOpset = importedOpset(model, "");
  checkOutputsDefined(model.graph(), source);
  inferShapes(model, source);
  if (prepared.sourceOpset != kOnnxTargetOpset) {
    if (fixLegacyBroadcast(model, prepared.sourceOpset)) inferShapes(model, source);
    runOnnxStep(source,
                "cannot convert the model from opset " + std::to_string(prepared.sourceOpset) +
                    " to opset " + std::to_string(kOnnxTargetOpset),
                [&] {
                  WeightBytes aside = setWeightsAside(model);
                  model = onnx::version_conversion::ConvertVersion(
                      model, static_cast<int>(kOnnxTargetOpset));
                  restoreWeights(model, aside);
                });
    inferShapes(model, source);
  }
  return prepared;
}

}  // namespace kiln::import::detail
