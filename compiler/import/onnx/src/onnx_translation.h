// Internal: the ONNX-free side of the translation to the IR. The walker
// (onnx_translate.cpp) turns each ONNX node into an OnnxNode — operands already mapped to IR
// values, attributes already converted — and the op table (onnx_op_table.cpp) turns an
// OnnxNode into IR ops. Adding an operator is one line in the table, plus a translator
// function when the ONNX node does not map one to one onto an IR op.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/graph.h"
#include "onnx_shape_values.h"

namespace kiln::import::detail {

// A tensor's contents in IR form (from an initializer or a TENSOR attribute).
struct ConstantTensor {
  ir::TensorType type;
  std::vector<uint8_t> bytes;
};

// One ONNX node with its operands resolved to IR values and its attributes converted.
struct OnnxNode {
  std::string name;    // may be empty
  std::string opType;  // "Conv"
  std::string domain;  // "" for ai.onnx
  int index = 0;       // position in the graph, for unnamed nodes
  std::vector<ir::Value*> inputs;              // nullptr for an absent optional input
  std::vector<std::string> outputNames;        // "" for an absent optional output
  // From ONNX shape inference; nullopt where it left a dim unknown (see ShapeValues).
  std::vector<std::optional<ir::TensorType>> outputTypes;
  std::vector<std::string> outputShapes;       // ONNX's shape as text ("Nx12"), for messages
  ir::AttributeMap attrs;                      // int, float, string, ints, floats
  std::map<std::string, ConstantTensor> tensorAttrs;  // TENSOR attributes
  std::map<std::string, std::string> otherAttrs;      // name -> ONNX type of the rest
};

// State shared by the translators of one model.
struct OnnxTranslation {
  ir::Graph& graph;
  std::string displayName;  // the model file, for diagnostics
  int64_t sourceOpset;      // the model's ai.onnx opset before conversion (nodes are at 17)
  ShapeValues shapeValues;  // contents of shape tensors, for types ONNX left unknown

  // "model.onnx: node 'conv1' (Conv): <why>" as a CompileError.
  [[noreturn]] void fail(const OnnxNode& node, const std::string& why) const;
  // "node 'conv1' (Conv)" or "node #3 (Conv)" for an unnamed node.
  static std::string describe(const OnnxNode& node);
};

// Translates one node into IR ops of `kind` (the table's IR op for the node, if any);
// returns one IR value per ONNX output (nullptr for absent outputs).
using OnnxTranslateFn = std::vector<ir::Value*> (*)(OnnxTranslation&, const OnnxNode&,
                                                   std::optional<ir::OpKind> kind);

struct OnnxOpEntry {
  std::string_view opType;          // ai.onnx op type
  std::optional<ir::OpKind> kind;   // the IR op it becomes (none: e.g. Constant)
  OnnxTranslateFn translate;
};

// The table entry for an op type, or nullptr if kiln does not support it.
const OnnxOpEntry* findOnnxOp(std::string_view domain, std::string_view opType);
bool isSupportedOnnxOp(std::string_view domain, std::string_view opType);
// What the user can do about an unsupported op of a known kind (training, sequences and
// optionals, data-dependent output shapes, control flow), as "; <advice>", else "".
std::string unsupportedOpAdvice(std::string_view domain, std::string_view opType);
// Every supported ai.onnx op type, in table order (documentation and tests).
std::vector<std::string_view> supportedOnnxOps();

// "'conv1'" for a named node, "#3" (its position in the graph) for an unnamed one.
std::string onnxNodeRef(std::string_view name, int index);

// ONNX's TensorProto.DataType numbers <-> IR dtypes; nullopt for types kiln lacks.
std::optional<ir::DType> dtypeFromOnnx(int32_t onnxType);
// "float", "double", "string"... for messages.
std::string onnxTypeName(int32_t onnxType);

}  // namespace kiln::import::detail
