// The state of one TFLite -> IR translation, shared by the operator translators:
// the IR value of every TFLite tensor with its layout, tensor types and constants, IR op
// creation with the operator's name attached, and diagnostics naming the operator.
//
// Layout: TFLite tensors are NHWC. A rank-4 tensor's IR value is either NHWC (as TFLite holds
// it) or "channels first" (the NHWC tensor permuted to NCHW, what the IR's float Conv and
// pools use). nhwc()/nchw() give a tensor in the layout an op needs, inserting one Transpose
// (or a free Reshape when the permutation moves only size-1 dims) and caching it.
// Quantized ops are NHWC: in an int8 model no tensor is ever channels first.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kiln/import/tflite/tflite_import.h"
#include "kiln/ir/graph.h"
#include "tflite_model_reader.h"

namespace kiln::import::tflite {

// The operator being translated.
struct OpView {
  const fb::Operator* op = nullptr;
  size_t index = 0;             // position in the subgraph's operator list
  int32_t code = 0;             // builtin code
  std::string name;             // builtin name ("CONV_2D")
  std::vector<int32_t> inputs;  // tensor indices, -1 = absent
  std::vector<int32_t> outputs;

  int32_t input(size_t i) const { return i < inputs.size() ? inputs[i] : -1; }
};

class Translation {
 public:
  Translation(const ModelFile& file, const TfliteImportOptions& options);
  std::unique_ptr<ir::Graph> run();

  // ---- for translators ----
  ir::Graph& graph() { return *graph_; }
  const OpView& current() const { return *current_; }
  // "FILE: operator #3 (CONV_2D): MESSAGE"
  [[noreturn]] void fail(const std::string& message) const;

  const fb::Tensor& tensor(int32_t index) const;
  // The tensor's type: dtype, NHWC shape, quantization parameters (if any).
  ir::TensorType tensorType(int32_t index) const;
  std::string tensorName(int32_t index) const;
  // Constant tensors: present buffer with data. Bytes are little-endian, row-major (NHWC).
  bool isConstant(int32_t index) const;
  std::span<const uint8_t> constantBytes(int32_t index) const;
  // A constant integer tensor (int32 or int64) as int64 values; `what` names it in errors.
  std::vector<int64_t> constantInts(int32_t index, const std::string& what) const;

  // The tensor's value in NHWC (its own shape) / NCHW (rank 4 only).
  ir::Value* nhwc(int32_t index);
  ir::Value* nchw(int32_t index);
  bool channelsFirst(int32_t index) const;
  // Records the IR value of an operator output; `channelsFirst` for an NCHW value of a rank-4
  // tensor. Checks the value's dtype and shape against the TFLite tensor.
  void define(int32_t index, ir::Value* value, bool channelsFirst = false);

  // New IR constants (fresh names based on `hint`).
  ir::Value* constant(const std::string& hint, ir::TensorType type, std::vector<uint8_t> bytes);
  ir::Value* constantI64(const std::string& hint, const std::vector<int64_t>& values);
  ir::Value* scalarF32(const std::string& hint, float value);
  // A constant holding tensor `index` permuted by `perm` (of its NHWC shape); quantization
  // parameters follow (per-channel axis permuted).
  ir::Value* permutedConstant(int32_t index, const std::vector<int64_t>& perm);

  // IR op creation with the current operator's source info. `resultName` names the result
  // (usually the TFLite output tensor's name; "" = fresh).
  ir::Value* emit(ir::OpKind kind, std::vector<ir::Value*> operands, ir::AttributeMap attrs,
                  ir::TensorType resultType, const std::string& resultName = "");
  ir::Value* emitInferred(ir::OpKind kind, std::vector<ir::Value*> operands,
                          ir::AttributeMap attrs = {}, const std::string& resultName = "");
  // Reshape as a free view to `shape` (quantization parameters kept).
  ir::Value* reshape(ir::Value* value, const ir::Shape& shape, const std::string& resultName = "");
  // Transpose by `perm` (a Reshape when only size-1 dims move).
  ir::Value* transpose(ir::Value* value, const std::vector<int64_t>& perm,
                       const std::string& resultName = "");

 private:
  struct Slot {
    ir::Value* value = nullptr;
    bool channelsFirst = false;
    ir::Value* converted = nullptr;  // the other layout, once made
  };
  void createInputs();
  void translateOperators();
  void createOutputs();
  Slot& slot(int32_t index);

  const ModelFile& file_;
  TfliteImportOptions options_;
  const fb::SubGraph& subgraph_;
  std::unique_ptr<ir::Graph> graph_;
  std::vector<Slot> slots_;
  const OpView* current_ = nullptr;
};

// Operator translators (tflite_op_table.cpp dispatches to them).
using TranslateFn = void (*)(Translation&, const OpView&);
// The translator of a builtin code, or nullptr if kiln does not import it.
TranslateFn findTranslator(int32_t code);
std::vector<int32_t> supportedCodes();

// Translators (tflite_translate_float.cpp, tflite_translate_data.cpp); each handles one
// builtin, the compute ones hand quantized data to tflite_translate_quantized.cpp.
void translateConv2D(Translation&, const OpView&);
void translateDepthwiseConv2D(Translation&, const OpView&);
void translateFullyConnected(Translation&, const OpView&);
void translateBinary(Translation&, const OpView&);   // ADD, SUB, MUL
void translatePool(Translation&, const OpView&);     // AVERAGE_POOL_2D, MAX_POOL_2D
void translateReshape(Translation&, const OpView&);  // RESHAPE, SQUEEZE
void translateSoftmax(Translation&, const OpView&);
void translateQuantize(Translation&, const OpView&);
void translateDequantize(Translation&, const OpView&);
void translatePad(Translation&, const OpView&);  // PAD, PADV2
void translateMean(Translation&, const OpView&);
void translateConcatenation(Translation&, const OpView&);
void translateActivation(Translation&,
                         const OpView&);  // RELU, RELU6, LOGISTIC, TANH, HARD_SWISH, LEAKY_RELU
void translateTranspose(Translation&, const OpView&);
void translateStridedSlice(Translation&, const OpView&);
void translateTransposeConv(Translation&, const OpView&);

// Quantized forms, called by the translators above when the data is integer.
void translateQuantizedConv(Translation&, const OpView&, bool depthwise);
void translateQuantizedFullyConnected(Translation&, const OpView&);
void translateQuantizedBinary(Translation&, const OpView&);
void translateQuantizedPool(Translation&, const OpView&);
void translateQuantizedSoftmax(Translation&, const OpView&);
void translateQuantizedMean(Translation&, const OpView&);
void translateQuantizedActivation(Translation&, const OpView&);
void translateQuantizedTransposeConv(Translation&, const OpView&);

// NHWC dim -> its position in NCHW.
inline constexpr int64_t kNchwPosition[4] = {0, 2, 3, 1};
// int8 / int16 / uint8 data: the quantized translators apply.
inline bool isQuantizedType(const ir::TensorType& type) {
  return type.dtype == ir::DType::I8 || type.dtype == ir::DType::I16 || type.dtype == ir::DType::U8;
}
// The float op's result followed by the operator's fused activation, named after its output.
ir::Value* withActivation(Translation& t, const OpView& v, ir::OpKind kind,
                          std::vector<ir::Value*> operands, ir::AttributeMap attrs);

// Fused activation of CONV_2D, ADD, ... as TFLite's ActivationFunctionType.
fb::ActivationFunctionType fusedActivation(const OpView& view);
// Explicit [top, left, bottom, right] pads of TFLite's SAME/VALID for a 2-D window.
std::vector<int64_t> windowPads(Translation& t, fb::Padding padding, int64_t inH, int64_t inW,
                                int64_t kH, int64_t kW, int64_t strideH, int64_t strideW,
                                int64_t dilationH, int64_t dilationW);
// The window of a 2-D pool on NHWC input x as attributes (kernel_shape, strides and explicit
// pads); fails unless x is rank 4.
ir::AttributeMap poolWindowAttributes(Translation& t, const fb::Pool2DOptions& o,
                                      const ir::TensorType& x);
// Explicit [top, left, bottom, right] pads of a TRANSPOSE_CONV from input x, weights w [OC, KH,
// KW, IC] and output (NHWC): TFLite computes the padding with input and output swapped, so the
// full (H-1)*s+KH result is cropped by `before` at the start and the rest of the surplus at
// the end. Fails on non-positive strides or an output larger than the full result.
std::vector<int64_t> transposeConvPads(Translation& t, const fb::TransposeConvOptions& o,
                                       const ir::TensorType& x, const ir::TensorType& w,
                                       const ir::TensorType& out);
// TFLite's activation range on the quantized output: clamp bounds as [min, max].
std::pair<int64_t, int64_t> quantizedActivationRange(Translation& t, fb::ActivationFunctionType act,
                                                     int32_t outputTensor);

}  // namespace kiln::import::tflite
