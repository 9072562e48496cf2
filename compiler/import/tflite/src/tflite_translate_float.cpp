// Compute operators on float data -> the IR's ONNX-style ops: convolutions and pools run
// channels first (NCHW) and their results stay channels first until an operator needs NHWC
// (a Reshape, a graph output...); elementwise ops follow their operands' layout. Integer
// (quantized) data goes to tflite_translate_quantized.cpp, data movement to
// tflite_translate_data.cpp.
#include <cmath>

#include "kiln/ir/constant_data.h"
#include "kiln/support/diagnostics.h"
#include "tflite_translation.h"

namespace kiln::import::tflite {
namespace {

using ir::OpKind;

// The output tensor's name for the final value; intermediate values get a suffix.
std::string outName(Translation& t, const OpView& v, const char* suffix = "") {
  return t.tensorName(v.outputs[0]) + suffix;
}

// Applies a float fused activation.
ir::Value* floatActivation(Translation& t, ir::Value* x, fb::ActivationFunctionType act,
                           const std::string& name) {
  switch (act) {
    case fb::ActivationFunctionType::NONE:
      return x;
    case fb::ActivationFunctionType::RELU:
      return t.emitInferred(OpKind::Relu, {x}, {}, name);
    case fb::ActivationFunctionType::RELU6:
      return t.emitInferred(OpKind::Clip, {x, t.scalarF32("zero", 0), t.scalarF32("six", 6)}, {},
                            name);
    case fb::ActivationFunctionType::RELU_N1_TO_1:
      return t.emitInferred(OpKind::Clip, {x, t.scalarF32("minus_one", -1), t.scalarF32("one", 1)},
                            {}, name);
    case fb::ActivationFunctionType::TANH:
      return t.emitInferred(OpKind::Tanh, {x}, {}, name);
    default:
      t.fail(std::string("fused activation ") + fb::EnumNameActivationFunctionType(act) +
             " is not supported");
  }
}

}  // namespace

// The result of an op followed by the operator's fused activation, named after the output.
ir::Value* withActivation(Translation& t, const OpView& v, OpKind kind,
                          std::vector<ir::Value*> operands, ir::AttributeMap attrs) {
  fb::ActivationFunctionType act = fusedActivation(v);
  bool none = act == fb::ActivationFunctionType::NONE;
  ir::Value* y = t.emitInferred(kind, std::move(operands), std::move(attrs),
                                outName(t, v, none ? "" : "/preact"));
  return floatActivation(t, y, act, outName(t, v));
}

namespace {

void requireFloat(Translation& t, int32_t tensor, const char* what) {
  ir::DType d = t.tensorType(tensor).dtype;
  if (d != ir::DType::F32)
    t.fail(
        std::string("the ") + what + " tensor has type " + std::string(ir::dtypeName(d)) +
        "; float operators need f32" +
        (isQuantizedType(t.tensorType(tensor)) ? " (hybrid quantization is not supported)" : ""));
}

ir::Value* optionalBias(Translation& t, const OpView& v, size_t i) {
  int32_t b = v.input(i);
  return b < 0 ? nullptr : t.nhwc(b);
}

std::vector<ir::Value*> withOptional(std::vector<ir::Value*> operands, ir::Value* optional) {
  if (optional) operands.push_back(optional);
  return operands;
}

// Both operands of a binary elementwise op in one layout: channels first if either is.
std::pair<std::vector<ir::Value*>, bool> sameLayout(Translation& t,
                                                    const std::vector<int32_t>& in) {
  bool anyFirst = false;
  for (int32_t i : in) anyFirst |= t.channelsFirst(i);
  std::vector<ir::Value*> values;
  if (!anyFirst) {
    for (int32_t i : in) values.push_back(t.nhwc(i));
    return {values, false};
  }
  for (int32_t i : in) {
    ir::TensorType type = t.tensorType(i);
    if (type.rank() == 4) {
      values.push_back(t.nchw(i));
    } else if (type.rank() < 4) {
      // NHWC broadcasting aligns trailing dims: pad to rank 4 with leading 1s, then permute.
      ir::Shape shape(size_t(4 - type.rank()), 1);
      shape.insert(shape.end(), type.shape.begin(), type.shape.end());
      ir::Value* r = t.reshape(t.nhwc(i), shape);
      values.push_back(t.transpose(r, {0, 3, 1, 2}));
    } else {
      t.fail("cannot mix a rank-" + std::to_string(type.rank()) + " operand with NCHW data");
    }
  }
  return {values, true};
}

// The fused activation of an operator whose options table has one (absent options: NONE).
template <typename Options>
fb::ActivationFunctionType activationOf(const Options* options) {
  return options ? options->fused_activation_function() : fb::ActivationFunctionType::NONE;
}

}  // namespace

fb::ActivationFunctionType fusedActivation(const OpView& v) {
  const fb::Operator& op = *v.op;
  switch (v.code) {
    case 0:
      return activationOf(op.builtin_options_as_AddOptions());
    case 41:
      return activationOf(op.builtin_options_as_SubOptions());
    case 18:
      return activationOf(op.builtin_options_as_MulOptions());
    case 3:
      return activationOf(op.builtin_options_as_Conv2DOptions());
    case 4:
      return activationOf(op.builtin_options_as_DepthwiseConv2DOptions());
    case 9:
      return activationOf(op.builtin_options_as_FullyConnectedOptions());
    case 1:
    case 17:
      return activationOf(op.builtin_options_as_Pool2DOptions());
    case 2:
      return activationOf(op.builtin_options_as_ConcatenationOptions());
    case 67:
      return activationOf(op.builtin_options_as_TransposeConvOptions());
    default:
      return fb::ActivationFunctionType::NONE;
  }
}

std::vector<int64_t> windowPads(Translation& t, fb::Padding padding, int64_t inH, int64_t inW,
                                int64_t kH, int64_t kW, int64_t strideH, int64_t strideW,
                                int64_t dilationH, int64_t dilationW) {
  // A corrupt or hand-made file can hold anything here: refuse before dividing by a stride.
  if (strideH <= 0 || strideW <= 0 || dilationH <= 0 || dilationW <= 0 || kH <= 0 || kW <= 0)
    t.fail("strides (" + std::to_string(strideH) + ", " + std::to_string(strideW) +
           "), dilations (" + std::to_string(dilationH) + ", " + std::to_string(dilationW) +
           ") and window (" + std::to_string(kH) + ", " + std::to_string(kW) +
           ") must be positive");
  auto one = [&](int64_t in, int64_t k, int64_t s, int64_t d) -> std::pair<int64_t, int64_t> {
    if (padding != fb::Padding::SAME) return {0, 0};
    int64_t effective = (k - 1) * d + 1;
    int64_t out = (in + s - 1) / s;
    int64_t total = std::max<int64_t>((out - 1) * s + effective - in, 0);
    return {total / 2, total - total / 2};  // TFLite puts the odd pixel at the end
  };
  auto [top, bottom] = one(inH, kH, strideH, dilationH);
  auto [left, right] = one(inW, kW, strideW, dilationW);
  return {top, left, bottom, right};
}

ir::AttributeMap poolWindowAttributes(Translation& t, const fb::Pool2DOptions& o,
                                      const ir::TensorType& x) {
  if (x.rank() != 4) t.fail("the input must be rank 4 (NHWC)");
  ir::AttributeMap attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{o.filter_height(), o.filter_width()});
  attrs.set("strides", std::vector<int64_t>{o.stride_h(), o.stride_w()});
  attrs.set("pads", windowPads(t, o.padding(), x.shape[1], x.shape[2], o.filter_height(),
                               o.filter_width(), o.stride_h(), o.stride_w(), 1, 1));
  return attrs;
}

std::vector<int64_t> transposeConvPads(Translation& t, const fb::TransposeConvOptions& o,
                                       const ir::TensorType& x, const ir::TensorType& w,
                                       const ir::TensorType& out) {
  auto crop = [&](int64_t in, int64_t outSize, int64_t k,
                  int64_t s) -> std::pair<int64_t, int64_t> {
    int64_t full = (in - 1) * s + k;
    int64_t before =
        o.padding() == fb::Padding::SAME ? std::max<int64_t>(full - outSize, 0) / 2 : 0;
    return {before, full - outSize - before};
  };
  if (o.stride_h() <= 0 || o.stride_w() <= 0) t.fail("strides must be positive");
  auto [top, bottom] = crop(x.shape[1], out.shape[1], w.shape[1], o.stride_h());
  auto [left, right] = crop(x.shape[2], out.shape[2], w.shape[2], o.stride_w());
  if (bottom < 0 || right < 0)
    t.fail("the output shape is larger than the transposed convolution's result");
  return {top, left, bottom, right};
}

void translateConv2D(Translation& t, const OpView& v) {
  if (isQuantizedType(t.tensorType(v.input(0)))) return translateQuantizedConv(t, v, false);
  requireFloat(t, v.input(0), "input");
  requireFloat(t, v.input(1), "filter");
  const auto* o = v.op->builtin_options_as_Conv2DOptions();
  if (!o) t.fail("missing Conv2DOptions");
  ir::TensorType x = t.tensorType(v.input(0)), w = t.tensorType(v.input(1));
  if (x.rank() != 4 || w.rank() != 4) t.fail("input and filter must be rank 4 (NHWC, OHWI)");
  if (!t.isConstant(v.input(1))) t.fail("the filter must be a constant tensor");
  if (w.shape[3] <= 0 || x.shape[3] % w.shape[3] != 0)
    t.fail("input channels " + std::to_string(x.shape[3]) + " are not a multiple of the filter's " +
           std::to_string(w.shape[3]));
  ir::AttributeMap attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{w.shape[1], w.shape[2]});
  attrs.set("strides", std::vector<int64_t>{o->stride_h(), o->stride_w()});
  attrs.set("dilations", std::vector<int64_t>{o->dilation_h_factor(), o->dilation_w_factor()});
  attrs.set("pads", windowPads(t, o->padding(), x.shape[1], x.shape[2], w.shape[1], w.shape[2],
                               o->stride_h(), o->stride_w(), o->dilation_h_factor(),
                               o->dilation_w_factor()));
  attrs.set("group", x.shape[3] / w.shape[3]);
  ir::Value* filter = t.permutedConstant(v.input(1), {0, 3, 1, 2});  // OHWI -> OIHW
  ir::Value* y = withActivation(
      t, v, OpKind::Conv, withOptional({t.nchw(v.input(0)), filter}, optionalBias(t, v, 2)), attrs);
  t.define(v.outputs[0], y, true);
}

void translateDepthwiseConv2D(Translation& t, const OpView& v) {
  if (isQuantizedType(t.tensorType(v.input(0)))) return translateQuantizedConv(t, v, true);
  requireFloat(t, v.input(0), "input");
  requireFloat(t, v.input(1), "filter");
  const auto* o = v.op->builtin_options_as_DepthwiseConv2DOptions();
  if (!o) t.fail("missing DepthwiseConv2DOptions");
  ir::TensorType x = t.tensorType(v.input(0)), w = t.tensorType(v.input(1));
  if (x.rank() != 4 || w.rank() != 4 || w.shape[0] != 1)
    t.fail("input must be NHWC and the filter [1, KH, KW, C*M]");
  if (!t.isConstant(v.input(1))) t.fail("the filter must be a constant tensor");
  if (x.shape[3] == 0 || w.shape[3] % x.shape[3] != 0)
    t.fail("filter channels are not a multiple of the input channels");
  ir::AttributeMap attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{w.shape[1], w.shape[2]});
  attrs.set("strides", std::vector<int64_t>{o->stride_h(), o->stride_w()});
  attrs.set("dilations", std::vector<int64_t>{o->dilation_h_factor(), o->dilation_w_factor()});
  attrs.set("pads", windowPads(t, o->padding(), x.shape[1], x.shape[2], w.shape[1], w.shape[2],
                               o->stride_h(), o->stride_w(), o->dilation_h_factor(),
                               o->dilation_w_factor()));
  attrs.set("group", x.shape[3]);
  // [1, KH, KW, C*M] -> [C*M, 1, KH, KW]: output channel c*M + m reads input channel c, as in
  // a grouped convolution with C groups.
  ir::Value* filter = t.permutedConstant(v.input(1), {3, 0, 1, 2});
  ir::Value* y = withActivation(
      t, v, OpKind::Conv, withOptional({t.nchw(v.input(0)), filter}, optionalBias(t, v, 2)), attrs);
  t.define(v.outputs[0], y, true);
}

void translateFullyConnected(Translation& t, const OpView& v) {
  if (isQuantizedType(t.tensorType(v.input(0)))) return translateQuantizedFullyConnected(t, v);
  requireFloat(t, v.input(0), "input");
  requireFloat(t, v.input(1), "weights");
  const auto* o = v.op->builtin_options_as_FullyConnectedOptions();
  if (o && o->weights_format() != 0) t.fail("shuffled weights are not supported");
  ir::TensorType x = t.tensorType(v.input(0)), w = t.tensorType(v.input(1));
  if (w.rank() != 2) t.fail("the weights must be rank 2 [N, K]");
  int64_t k = w.shape[1];
  if (k == 0 || x.numElements() % k != 0)
    t.fail("input " + ir::shapeToString(x.shape) + " does not divide into rows of " +
           std::to_string(k));
  ir::Value* rows = t.reshape(t.nhwc(v.input(0)), {x.numElements() / k, k});
  ir::AttributeMap attrs;
  attrs.set("transB", int64_t(1));
  ir::TensorType out = t.tensorType(v.outputs[0]);
  bool needsReshape = out.shape != ir::Shape{x.numElements() / k, w.shape[0]};
  fb::ActivationFunctionType act = fusedActivation(v);
  ir::Value* y = t.emitInferred(
      OpKind::Gemm, withOptional({rows, t.nhwc(v.input(1))}, optionalBias(t, v, 2)), attrs,
      outName(t, v, act == fb::ActivationFunctionType::NONE && !needsReshape ? "" : "/gemm"));
  y = floatActivation(t, y, act, outName(t, v, needsReshape ? "/act" : ""));
  if (needsReshape) y = t.reshape(y, out.shape, outName(t, v));
  t.define(v.outputs[0], y);
}

void translateBinary(Translation& t, const OpView& v) {
  if (isQuantizedType(t.tensorType(v.input(0)))) return translateQuantizedBinary(t, v);
  OpKind kind = v.code == 0 ? OpKind::Add : v.code == 41 ? OpKind::Sub : OpKind::Mul;
  auto [operands, first] = sameLayout(t, {v.input(0), v.input(1)});
  t.define(v.outputs[0], withActivation(t, v, kind, operands, {}), first);
}

void translatePool(Translation& t, const OpView& v) {
  if (isQuantizedType(t.tensorType(v.input(0)))) return translateQuantizedPool(t, v);
  const auto* o = v.op->builtin_options_as_Pool2DOptions();
  if (!o) t.fail("missing Pool2DOptions");
  ir::AttributeMap attrs = poolWindowAttributes(t, *o, t.tensorType(v.input(0)));
  // TFLite's average excludes padding (ONNX count_include_pad = 0, the default).
  OpKind kind = v.code == 1 ? OpKind::AveragePool : OpKind::MaxPool;
  t.define(v.outputs[0], withActivation(t, v, kind, {t.nchw(v.input(0))}, attrs), true);
}

void translateSoftmax(Translation& t, const OpView& v) {
  if (isQuantizedType(t.tensorType(v.input(0)))) return translateQuantizedSoftmax(t, v);
  const auto* o = v.op->builtin_options_as_SoftmaxOptions();
  float beta = o ? o->beta() : 1.0f;
  ir::Value* x = t.nhwc(v.input(0));
  if (beta != 1.0f)
    x = t.emitInferred(OpKind::Mul, {x, t.scalarF32("beta", beta)}, {}, outName(t, v, "/scaled"));
  ir::AttributeMap attrs;
  attrs.set("axis", int64_t(-1));
  t.define(v.outputs[0], t.emitInferred(OpKind::Softmax, {x}, attrs, outName(t, v)));
}

void translateMean(Translation& t, const OpView& v) {
  if (isQuantizedType(t.tensorType(v.input(0)))) return translateQuantizedMean(t, v);
  ir::TensorType x = t.tensorType(v.input(0));
  if (x.dtype != ir::DType::F32)
    t.fail("MEAN on " + std::string(ir::dtypeName(x.dtype)) + " data is not supported");
  std::vector<int64_t> axes = t.constantInts(v.input(1), "axis");
  const auto* o = v.op->builtin_options_as_ReducerOptions();
  bool keep = o && o->keep_dims();
  std::vector<bool> reduced(size_t(x.rank()), false);
  for (int64_t& a : axes) {
    if (a < 0) a += x.rank();
    if (a < 0 || a >= x.rank()) t.fail("axis out of range");
    reduced[size_t(a)] = true;
  }
  // Channels first works when the kept dims keep their order (keep_dims, or C reduced, or
  // both H and W reduced).
  bool first = t.channelsFirst(v.input(0)) && x.rank() == 4 &&
               (keep || reduced[3] || (reduced[1] && reduced[2]));
  std::vector<int64_t> irAxes;
  for (int64_t a : axes) irAxes.push_back(first ? kNchwPosition[a] : a);
  ir::AttributeMap attrs;
  attrs.set("axes", irAxes);
  attrs.set("keepdims", int64_t(keep ? 1 : 0));
  ir::Value* in = first ? t.nchw(v.input(0)) : t.nhwc(v.input(0));
  t.define(v.outputs[0], t.emitInferred(OpKind::ReduceMean, {in}, attrs, outName(t, v)),
           first && keep);
}

void translateActivation(Translation& t, const OpView& v) {
  if (isQuantizedType(t.tensorType(v.input(0)))) return translateQuantizedActivation(t, v);
  requireFloat(t, v.input(0), "input");
  bool first = t.channelsFirst(v.input(0));
  ir::Value* x = first ? t.nchw(v.input(0)) : t.nhwc(v.input(0));
  std::string name = outName(t, v);
  ir::Value* y = nullptr;
  switch (v.code) {
    case 19:
      y = floatActivation(t, x, fb::ActivationFunctionType::RELU, name);
      break;
    case 20:
      y = floatActivation(t, x, fb::ActivationFunctionType::RELU_N1_TO_1, name);
      break;
    case 21:
      y = floatActivation(t, x, fb::ActivationFunctionType::RELU6, name);
      break;
    case 28:
      y = floatActivation(t, x, fb::ActivationFunctionType::TANH, name);
      break;
    case 14:
      y = t.emitInferred(OpKind::Sigmoid, {x}, {}, name);
      break;
    case 117:
      y = t.emitInferred(OpKind::HardSwish, {x}, {}, name);
      break;
    case 98: {
      const auto* o = v.op->builtin_options_as_LeakyReluOptions();
      ir::AttributeMap attrs;
      attrs.set("alpha", o ? o->alpha() : 0.0f);
      y = t.emitInferred(OpKind::LeakyRelu, {x}, attrs, name);
      break;
    }
    default:
      KILN_UNREACHABLE("translateActivation: code " + std::to_string(v.code));
  }
  t.define(v.outputs[0], y, first);
}

void translateTransposeConv(Translation& t, const OpView& v) {
  if (isQuantizedType(t.tensorType(v.input(2)))) return translateQuantizedTransposeConv(t, v);
  // Inputs: output_shape, weights [OC, KH, KW, IC], input [N, H, W, IC], bias? -> the IR's
  // ConvTranspose on NCHW with weights [IC, OC, KH, KW]; TFLite's padding crops the full
  // (H-1)*s+KH result by `top` at the start and the rest at the end.
  const auto* o = v.op->builtin_options_as_TransposeConvOptions();
  if (!o) t.fail("missing TransposeConvOptions");
  int32_t wi = v.input(1), xi = v.input(2);
  requireFloat(t, xi, "input");
  requireFloat(t, wi, "filter");
  if (!t.isConstant(wi)) t.fail("the filter must be a constant tensor");
  ir::TensorType x = t.tensorType(xi), w = t.tensorType(wi), out = t.tensorType(v.outputs[0]);
  if (x.rank() != 4 || w.rank() != 4 || out.rank() != 4)
    t.fail("input, filter and output must be rank 4");
  ir::AttributeMap attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{w.shape[1], w.shape[2]});
  attrs.set("strides", std::vector<int64_t>{o->stride_h(), o->stride_w()});
  attrs.set("pads", transposeConvPads(t, *o, x, w, out));
  ir::Value* filter = t.permutedConstant(wi, {3, 0, 1, 2});  // OHWI -> IOHW
  ir::Value* y = withActivation(t, v, OpKind::ConvTranspose,
                                withOptional({t.nchw(xi), filter}, optionalBias(t, v, 3)), attrs);
  t.define(v.outputs[0], y, true);
}

}  // namespace kiln::import::tflite
