// Quantized (int8 / int16) operators -> the IR's NHWC integer ops (ops.def, "quantized
// integer ops"; semantics in docs/quantization.md). Tensors keep TFLite's layouts and
// quantization parameters; the importer computes only what TFLite fixes at prepare time from
// the tensors alone: explicit pads and the fused activation's clamp on the quantized output.

#include "kiln/ir/constant_data.h"
#include "kiln/ir/quant_math.h"
#include "kiln/support/diagnostics.h"
#include "tflite_translation.h"

namespace kiln::import::tflite {
namespace {

using ir::OpKind;

// The output tensor's type (NHWC, with its quantization parameters); it must be quantized.
ir::TensorType quantizedOutput(Translation& t, const OpView& v) {
  ir::TensorType out = t.tensorType(v.outputs[0]);
  if (!out.quant)
    t.fail("the output tensor '" + t.tensorName(v.outputs[0]) + "' has no quantization parameters");
  return out;
}

void requireQuantized(Translation& t, int32_t tensor, const char* what) {
  ir::TensorType type = t.tensorType(tensor);
  if (!type.quant)
    t.fail(std::string("the ") + what + " '" + t.tensorName(tensor) +
           "' has no quantization parameters");
}

void setActivationRange(Translation& t, const OpView& v, ir::AttributeMap& attrs) {
  auto [lo, hi] = quantizedActivationRange(t, fusedActivation(v), v.outputs[0]);
  attrs.set("act_min", lo);
  attrs.set("act_max", hi);
}

ir::Value* emitQuantized(Translation& t, const OpView& v, OpKind kind,
                         std::vector<ir::Value*> operands, ir::AttributeMap attrs) {
  ir::TensorType out = quantizedOutput(t, v);
  // The rule checks operands and computes dtype and shape; the result carries the output
  // tensor's quantization parameters.
  ir::Value* y =
      t.emitInferred(kind, std::move(operands), std::move(attrs), t.tensorName(v.outputs[0]));
  ir::TensorType type = y->type();
  type.quant = out.quant;
  y->setType(type);
  return y;
}

}  // namespace

std::pair<int64_t, int64_t> quantizedActivationRange(Translation& t, fb::ActivationFunctionType act,
                                                     int32_t outputTensor) {
  ir::TensorType out = t.tensorType(outputTensor);
  ir::FusedActivation fused;
  switch (act) {
    case fb::ActivationFunctionType::NONE:
      fused = ir::FusedActivation::None;
      break;
    case fb::ActivationFunctionType::RELU:
      fused = ir::FusedActivation::Relu;
      break;
    case fb::ActivationFunctionType::RELU6:
      fused = ir::FusedActivation::Relu6;
      break;
    case fb::ActivationFunctionType::RELU_N1_TO_1:
      fused = ir::FusedActivation::ReluN1To1;
      break;
    default:
      t.fail(std::string("fused activation ") + fb::EnumNameActivationFunctionType(act) +
             " on quantized data is not supported");
  }
  if (!out.quant)
    t.fail("the output tensor '" + t.tensorName(outputTensor) + "' has no quantization parameters");
  // TFLite's CalculateActivationRangeQuantized, shared with codegen (kiln/ir/quant_math.h).
  ir::ActivationRange range = ir::activationRange(fused, out.dtype, out.quant->scales[0],
                                                  int32_t(out.quant->zeroPoints[0]));
  return {range.min, range.max};
}

void translateQuantizedConv(Translation& t, const OpView& v, bool depthwise) {
  int32_t xi = v.input(0), wi = v.input(1);
  requireQuantized(t, xi, "input");
  requireQuantized(t, wi, "filter");
  ir::TensorType x = t.tensorType(xi), w = t.tensorType(wi);
  if (x.rank() != 4 || w.rank() != 4) t.fail("input and filter must be rank 4");
  ir::AttributeMap attrs;
  int64_t sh, sw, dh, dw;
  fb::Padding padding;
  if (depthwise) {
    const auto* o = v.op->builtin_options_as_DepthwiseConv2DOptions();
    if (!o) t.fail("missing DepthwiseConv2DOptions");
    sh = o->stride_h(), sw = o->stride_w(), dh = o->dilation_h_factor(),
    dw = o->dilation_w_factor();
    padding = o->padding();
  } else {
    const auto* o = v.op->builtin_options_as_Conv2DOptions();
    if (!o) t.fail("missing Conv2DOptions");
    sh = o->stride_h(), sw = o->stride_w(), dh = o->dilation_h_factor(),
    dw = o->dilation_w_factor();
    padding = o->padding();
    if (w.shape[3] <= 0 || x.shape[3] % w.shape[3] != 0)
      t.fail("input channels are not a multiple of the filter's");
    attrs.set("group", x.shape[3] / w.shape[3]);
  }
  attrs.set("strides", std::vector<int64_t>{sh, sw});
  attrs.set("dilations", std::vector<int64_t>{dh, dw});
  attrs.set("pads",
            windowPads(t, padding, x.shape[1], x.shape[2], w.shape[1], w.shape[2], sh, sw, dh, dw));
  setActivationRange(t, v, attrs);
  std::vector<ir::Value*> operands = {t.nhwc(xi), t.nhwc(wi)};
  if (v.input(2) >= 0) operands.push_back(t.nhwc(v.input(2)));
  t.define(v.outputs[0], emitQuantized(t, v, depthwise ? OpKind::QDepthwiseConv2D : OpKind::QConv2D,
                                       operands, attrs));
}

void translateQuantizedFullyConnected(Translation& t, const OpView& v) {
  const auto* o = v.op->builtin_options_as_FullyConnectedOptions();
  if (o && o->weights_format() != 0) t.fail("shuffled weights are not supported");
  requireQuantized(t, v.input(0), "input");
  requireQuantized(t, v.input(1), "weights");
  ir::TensorType x = t.tensorType(v.input(0)), w = t.tensorType(v.input(1));
  if (w.rank() != 2) t.fail("the weights must be rank 2 [N, K]");
  int64_t k = w.shape[1];
  if (k == 0 || x.numElements() % k != 0) t.fail("the input does not divide into rows of K");
  ir::Value* rows = t.reshape(t.nhwc(v.input(0)), {x.numElements() / k, k});
  ir::AttributeMap attrs;
  setActivationRange(t, v, attrs);
  std::vector<ir::Value*> operands = {rows, t.nhwc(v.input(1))};
  if (v.input(2) >= 0) operands.push_back(t.nhwc(v.input(2)));
  ir::TensorType out = quantizedOutput(t, v);
  ir::Value* y = emitQuantized(t, v, OpKind::QFullyConnected, operands, attrs);
  if (y->shape() != out.shape)
    y = t.reshape(y, out.shape, t.tensorName(v.outputs[0]) + "/reshaped");
  t.define(v.outputs[0], y);
}

void translateQuantizedBinary(Translation& t, const OpView& v) {
  requireQuantized(t, v.input(0), "first input");
  requireQuantized(t, v.input(1), "second input");
  OpKind kind = v.code == 0 ? OpKind::QAdd : v.code == 41 ? OpKind::QSub : OpKind::QMul;
  ir::AttributeMap attrs;
  setActivationRange(t, v, attrs);
  t.define(v.outputs[0],
           emitQuantized(t, v, kind, {t.nhwc(v.input(0)), t.nhwc(v.input(1))}, attrs));
}

void translateQuantizedPool(Translation& t, const OpView& v) {
  const auto* o = v.op->builtin_options_as_Pool2DOptions();
  if (!o) t.fail("missing Pool2DOptions");
  requireQuantized(t, v.input(0), "input");
  ir::AttributeMap attrs = poolWindowAttributes(t, *o, t.tensorType(v.input(0)));
  setActivationRange(t, v, attrs);
  OpKind kind = v.code == 1 ? OpKind::QAveragePool2D : OpKind::QMaxPool2D;
  t.define(v.outputs[0], emitQuantized(t, v, kind, {t.nhwc(v.input(0))}, attrs));
}

// MEAN on int8/int16 data: QMean over the NHWC axes (TFLM's integer mean when the input and
// output parameters are equal, its float rescale otherwise; docs/quantization.md).
void translateQuantizedMean(Translation& t, const OpView& v) {
  requireQuantized(t, v.input(0), "input");
  ir::TensorType x = t.tensorType(v.input(0));
  std::vector<int64_t> axes = t.constantInts(v.input(1), "axis");
  for (int64_t& a : axes) {
    if (a < 0) a += x.rank();
    if (a < 0 || a >= x.rank()) t.fail("axis out of range");
  }
  const auto* o = v.op->builtin_options_as_ReducerOptions();
  ir::AttributeMap attrs;
  attrs.set("axes", axes);
  attrs.set("keepdims", int64_t(o && o->keep_dims() ? 1 : 0));
  t.define(v.outputs[0], emitQuantized(t, v, OpKind::QMean, {t.nhwc(v.input(0))}, attrs));
}

void translateQuantizedSoftmax(Translation& t, const OpView& v) {
  requireQuantized(t, v.input(0), "input");
  const auto* o = v.op->builtin_options_as_SoftmaxOptions();
  ir::AttributeMap attrs;
  attrs.set("beta", o ? o->beta() : 1.0f);
  t.define(v.outputs[0], emitQuantized(t, v, OpKind::QSoftmax, {t.nhwc(v.input(0))}, attrs));
}

void translateQuantizedActivation(Translation& t, const OpView& v) {
  requireQuantized(t, v.input(0), "input");
  ir::Value* x = t.nhwc(v.input(0));
  ir::AttributeMap attrs;
  switch (v.code) {
    case 19:  // RELU, RELU_N1_TO_1, RELU6: a requantize to the output's parameters with a clamp
    case 20:
    case 21: {
      using A = fb::ActivationFunctionType;
      A act = v.code == 19 ? A::RELU : v.code == 20 ? A::RELU_N1_TO_1 : A::RELU6;
      auto [lo, hi] = quantizedActivationRange(t, act, v.outputs[0]);
      attrs.set("to", int64_t(quantizedOutput(t, v).dtype));
      attrs.set("act_min", lo);
      attrs.set("act_max", hi);
      return t.define(v.outputs[0], emitQuantized(t, v, OpKind::Requantize, {x}, attrs));
    }
    case 14:
      return t.define(v.outputs[0], emitQuantized(t, v, OpKind::QLogistic, {x}, attrs));
    case 28:
      return t.define(v.outputs[0], emitQuantized(t, v, OpKind::QTanh, {x}, attrs));
    case 117:
      return t.define(v.outputs[0], emitQuantized(t, v, OpKind::QHardSwish, {x}, attrs));
    case 98: {
      const auto* o = v.op->builtin_options_as_LeakyReluOptions();
      attrs.set("alpha", o ? o->alpha() : 0.0f);
      return t.define(v.outputs[0], emitQuantized(t, v, OpKind::QLeakyRelu, {x}, attrs));
    }
    default:
      KILN_UNREACHABLE("translateQuantizedActivation: code " + std::to_string(v.code));
  }
}

void translateQuantizedTransposeConv(Translation& t, const OpView& v) {
  // Inputs: output_shape, weights [OC, KH, KW, IC], input [N, H, W, IC], bias?
  const auto* o = v.op->builtin_options_as_TransposeConvOptions();
  if (!o) t.fail("missing TransposeConvOptions");
  int32_t wi = v.input(1), xi = v.input(2);
  requireQuantized(t, xi, "input");
  requireQuantized(t, wi, "filter");
  ir::TensorType x = t.tensorType(xi), w = t.tensorType(wi), out = quantizedOutput(t, v);
  if (x.rank() != 4 || w.rank() != 4 || out.rank() != 4)
    t.fail("input, filter and output must be rank 4");
  ir::AttributeMap attrs;
  attrs.set("strides", std::vector<int64_t>{o->stride_h(), o->stride_w()});
  attrs.set("pads", transposeConvPads(t, *o, x, w, out));
  setActivationRange(t, v, attrs);
  std::vector<ir::Value*> operands = {t.nhwc(xi), t.nhwc(wi)};
  if (v.input(3) >= 0) operands.push_back(t.nhwc(v.input(3)));
  t.define(v.outputs[0], emitQuantized(t, v, OpKind::QTransposeConv2D, operands, attrs));
}

void translateQuantize(Translation& t, const OpView& v) {
  ir::TensorType x = t.tensorType(v.input(0));
  ir::TensorType out = quantizedOutput(t, v);
  ir::AttributeMap attrs;
  attrs.set("to", int64_t(out.dtype));
  if (x.dtype == ir::DType::F32)
    return t.define(v.outputs[0],
                    emitQuantized(t, v, OpKind::Quantize, {t.nhwc(v.input(0))}, attrs));
  requireQuantized(t, v.input(0), "input");
  t.define(v.outputs[0], emitQuantized(t, v, OpKind::Requantize, {t.nhwc(v.input(0))}, attrs));
}

void translateDequantize(Translation& t, const OpView& v) {
  requireQuantized(t, v.input(0), "input");
  if (t.tensorType(v.outputs[0]).dtype != ir::DType::F32) t.fail("DEQUANTIZE must produce float32");
  t.define(v.outputs[0], t.emitInferred(OpKind::Dequantize, {t.nhwc(v.input(0))}, {},
                                        t.tensorName(v.outputs[0])));
}

}  // namespace kiln::import::tflite
