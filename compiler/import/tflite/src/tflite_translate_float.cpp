// Operator translators. Float data maps to the IR's ONNX-style ops: convolutions and pools
// run channels first (NCHW) and their results stay channels first until an operator needs
// NHWC (a Reshape, a graph output...); elementwise ops follow their operands' layout.
// Integer (quantized) data goes to tflite_translate_quantized.cpp; data movement (reshape,
// pad, slice, transpose, concat) is shared, the quantization parameters riding along.
#include <cmath>

#include "kiln/ir/constant_data.h"
#include "kiln/support/diagnostics.h"
#include "tflite_translation.h"

namespace kiln::import::tflite {
namespace {

using ir::OpKind;

// NHWC dim -> its position in NCHW.
constexpr int64_t kNchwPosition[4] = {0, 2, 3, 1};

bool isQuantizedType(const ir::TensorType& type) {
  return type.dtype == ir::DType::I8 || type.dtype == ir::DType::I16 ||
         type.dtype == ir::DType::U8;
}

// The output tensor's name for the final value; intermediate values get a suffix.
std::string outName(Translation& t, const OpView& v, const char* suffix = "") {
  return t.tensorName(v.outputs[0]) + suffix;
}

// Applies a float fused activation.
ir::Value* floatActivation(Translation& t, ir::Value* x, fb::ActivationFunctionType act,
                           const std::string& name) {
  switch (act) {
    case fb::ActivationFunctionType::NONE: return x;
    case fb::ActivationFunctionType::RELU: return t.emitInferred(OpKind::Relu, {x}, {}, name);
    case fb::ActivationFunctionType::RELU6:
      return t.emitInferred(OpKind::Clip, {x, t.scalarF32("zero", 0), t.scalarF32("six", 6)}, {},
                            name);
    case fb::ActivationFunctionType::RELU_N1_TO_1:
      return t.emitInferred(OpKind::Clip, {x, t.scalarF32("minus_one", -1), t.scalarF32("one", 1)},
                            {}, name);
    case fb::ActivationFunctionType::TANH: return t.emitInferred(OpKind::Tanh, {x}, {}, name);
    default:
      t.fail(std::string("fused activation ") + fb::EnumNameActivationFunctionType(act) +
             " is not supported");
  }
}

// The result of an op followed by the operator's fused activation, named after the output.
ir::Value* withActivation(Translation& t, const OpView& v, OpKind kind,
                          std::vector<ir::Value*> operands, ir::AttributeMap attrs) {
  fb::ActivationFunctionType act = fusedActivation(v);
  bool none = act == fb::ActivationFunctionType::NONE;
  ir::Value* y = t.emitInferred(kind, std::move(operands), std::move(attrs),
                                outName(t, v, none ? "" : "/preact"));
  return floatActivation(t, y, act, outName(t, v));
}

void requireFloat(Translation& t, int32_t tensor, const char* what) {
  ir::DType d = t.tensorType(tensor).dtype;
  if (d != ir::DType::F32)
    t.fail(std::string("the ") + what + " tensor has type " + std::string(ir::dtypeName(d)) +
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
std::pair<std::vector<ir::Value*>, bool> sameLayout(Translation& t, const std::vector<int32_t>& in) {
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

}  // namespace

fb::ActivationFunctionType fusedActivation(const OpView& v) {
  const fb::Operator& op = *v.op;
  using A = fb::ActivationFunctionType;
  switch (v.code) {
    case 0: return op.builtin_options_as_AddOptions() ? op.builtin_options_as_AddOptions()->fused_activation_function() : A::NONE;
    case 41: return op.builtin_options_as_SubOptions() ? op.builtin_options_as_SubOptions()->fused_activation_function() : A::NONE;
    case 18: return op.builtin_options_as_MulOptions() ? op.builtin_options_as_MulOptions()->fused_activation_function() : A::NONE;
    case 3: return op.builtin_options_as_Conv2DOptions() ? op.builtin_options_as_Conv2DOptions()->fused_activation_function() : A::NONE;
    case 4: return op.builtin_options_as_DepthwiseConv2DOptions() ? op.builtin_options_as_DepthwiseConv2DOptions()->fused_activation_function() : A::NONE;
    case 9: return op.builtin_options_as_FullyConnectedOptions() ? op.builtin_options_as_FullyConnectedOptions()->fused_activation_function() : A::NONE;
    case 1:
    case 17: return op.builtin_options_as_Pool2DOptions() ? op.builtin_options_as_Pool2DOptions()->fused_activation_function() : A::NONE;
    case 2: return op.builtin_options_as_ConcatenationOptions() ? op.builtin_options_as_ConcatenationOptions()->fused_activation_function() : A::NONE;
    case 67: return op.builtin_options_as_TransposeConvOptions() ? op.builtin_options_as_TransposeConvOptions()->fused_activation_function() : A::NONE;
    default: return A::NONE;
  }
}

std::vector<int64_t> windowPads(fb::Padding padding, int64_t inH, int64_t inW, int64_t kH,
                                int64_t kW, int64_t strideH, int64_t strideW, int64_t dilationH,
                                int64_t dilationW) {
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
  attrs.set("pads", windowPads(o->padding(), x.shape[1], x.shape[2], w.shape[1], w.shape[2],
                               o->stride_h(), o->stride_w(), o->dilation_h_factor(),
                               o->dilation_w_factor()));
  attrs.set("group", x.shape[3] / w.shape[3]);
  ir::Value* filter = t.permutedConstant(v.input(1), {0, 3, 1, 2});  // OHWI -> OIHW
  ir::Value* y = withActivation(t, v, OpKind::Conv,
                                withOptional({t.nchw(v.input(0)), filter}, optionalBias(t, v, 2)),
                                attrs);
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
  attrs.set("pads", windowPads(o->padding(), x.shape[1], x.shape[2], w.shape[1], w.shape[2],
                               o->stride_h(), o->stride_w(), o->dilation_h_factor(),
                               o->dilation_w_factor()));
  attrs.set("group", x.shape[3]);
  // [1, KH, KW, C*M] -> [C*M, 1, KH, KW]: output channel c*M + m reads input channel c, as in
  // a grouped convolution with C groups.
  ir::Value* filter = t.permutedConstant(v.input(1), {3, 0, 1, 2});
  ir::Value* y = withActivation(t, v, OpKind::Conv,
                                withOptional({t.nchw(v.input(0)), filter}, optionalBias(t, v, 2)),
                                attrs);
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
    t.fail("input " + ir::shapeToString(x.shape) + " does not divide into rows of " + std::to_string(k));
  ir::Value* rows = t.reshape(t.nhwc(v.input(0)), {x.numElements() / k, k});
  ir::AttributeMap attrs;
  attrs.set("transB", int64_t(1));
  ir::TensorType out = t.tensorType(v.outputs[0]);
  bool needsReshape = out.shape != ir::Shape{x.numElements() / k, w.shape[0]};
  fb::ActivationFunctionType act = fusedActivation(v);
  ir::Value* y = t.emitInferred(OpKind::Gemm, withOptional({rows, t.nhwc(v.input(1))}, optionalBias(t, v, 2)),
                                attrs, outName(t, v, act == fb::ActivationFunctionType::NONE && !needsReshape ? "" : "/gemm"));
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
  ir::TensorType x = t.tensorType(v.input(0));
  if (x.rank() != 4) t.fail("the input must be rank 4 (NHWC)");
  ir::AttributeMap attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{o->filter_height(), o->filter_width()});
  attrs.set("strides", std::vector<int64_t>{o->stride_h(), o->stride_w()});
  attrs.set("pads", windowPads(o->padding(), x.shape[1], x.shape[2], o->filter_height(),
                               o->filter_width(), o->stride_h(), o->stride_w(), 1, 1));
  // TFLite's average excludes padding (ONNX count_include_pad = 0, the default).
  OpKind kind = v.code == 1 ? OpKind::AveragePool : OpKind::MaxPool;
  t.define(v.outputs[0], withActivation(t, v, kind, {t.nchw(v.input(0))}, attrs), true);
}

void translateReshape(Translation& t, const OpView& v) {
  ir::TensorType out = t.tensorType(v.outputs[0]);
  ir::Value* x = t.nhwc(v.input(0));
  if (x->type().numElements() != out.numElements())
    t.fail("cannot reshape " + ir::shapeToString(x->shape()) + " to " + ir::shapeToString(out.shape));
  t.define(v.outputs[0], t.reshape(x, out.shape, outName(t, v)));
}

void translateSoftmax(Translation& t, const OpView& v) {
  if (isQuantizedType(t.tensorType(v.input(0)))) return translateQuantizedSoftmax(t, v);
  const auto* o = v.op->builtin_options_as_SoftmaxOptions();
  float beta = o ? o->beta() : 1.0f;
  ir::Value* x = t.nhwc(v.input(0));
  if (beta != 1.0f) x = t.emitInferred(OpKind::Mul, {x, t.scalarF32("beta", beta)}, {}, outName(t, v, "/scaled"));
  ir::AttributeMap attrs;
  attrs.set("axis", int64_t(-1));
  t.define(v.outputs[0], t.emitInferred(OpKind::Softmax, {x}, attrs, outName(t, v)));
}

void translatePad(Translation& t, const OpView& v) {
  ir::TensorType x = t.tensorType(v.input(0));
  std::vector<int64_t> paddings = t.constantInts(v.input(1), "paddings");
  int64_t rank = x.rank();
  if (int64_t(paddings.size()) != 2 * rank)
    t.fail("paddings has " + std::to_string(paddings.size()) + " values for a rank-" +
           std::to_string(rank) + " input");
  bool first = t.channelsFirst(v.input(0)) && rank == 4;
  std::vector<int64_t> pads(size_t(2 * rank));
  for (int64_t d = 0; d < rank; ++d) {
    int64_t at = first ? kNchwPosition[d] : d;
    pads[size_t(at)] = paddings[size_t(2 * d)];
    pads[size_t(at + rank)] = paddings[size_t(2 * d + 1)];
  }
  ir::TensorType out = t.tensorType(v.outputs[0]);
  ir::Value* value = nullptr;
  if (v.input(2) >= 0) {
    // PADV2: the pad value as a scalar constant of the data's dtype.
    if (!t.isConstant(v.input(2))) t.fail("the constant_values input must be a constant tensor");
    std::span<const uint8_t> bytes = t.constantBytes(v.input(2));
    ir::TensorType vt = t.tensorType(v.input(2));
    if (vt.numElements() != 1 || vt.dtype != x.dtype) t.fail("constant_values must be one value of the input's type");
    value = t.constant("pad_value", ir::TensorType(x.dtype, {}), {bytes.begin(), bytes.end()});
  } else if (isQuantizedType(x)) {
    // Quantized PAD pads with the output's zero point (real 0).
    int64_t zero = out.quant ? out.quant->zeroPoints[0] : 0;
    ir::TensorType vt(x.dtype, {});
    value = t.constant("pad_zero_point", vt, ir::makeConstantBytesInt(vt, std::vector<int64_t>{zero}));
  }
  std::vector<ir::Value*> operands = {first ? t.nchw(v.input(0)) : t.nhwc(v.input(0)),
                                      t.constantI64("pads", pads)};
  if (value) operands.push_back(value);
  ir::Value* y = t.emitInferred(OpKind::Pad, operands, {}, outName(t, v));
  if (out.quant) {
    ir::TensorType type = y->type();
    type.quant = out.quant;
    y->setType(type);
  }
  t.define(v.outputs[0], y, first);
}

void translateMean(Translation& t, const OpView& v) {
  ir::TensorType x = t.tensorType(v.input(0));
  if (x.dtype != ir::DType::F32) t.fail("MEAN on " + std::string(ir::dtypeName(x.dtype)) + " data is not supported");
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
  t.define(v.outputs[0], t.emitInferred(OpKind::ReduceMean, {in}, attrs, outName(t, v)), first && keep);
}

void translateConcatenation(Translation& t, const OpView& v) {
  const auto* o = v.op->builtin_options_as_ConcatenationOptions();
  ir::TensorType out = t.tensorType(v.outputs[0]);
  int64_t rank = out.rank();
  int64_t axis = o ? o->axis() : 0;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) t.fail("axis out of range");
  std::vector<int32_t> inputs;
  for (int32_t i : v.inputs)
    if (i >= 0) inputs.push_back(i);
  bool quantized = isQuantizedType(out);
  bool first = !quantized && rank == 4;
  bool anyFirst = false;
  for (int32_t i : inputs) anyFirst |= t.channelsFirst(i);
  first = first && anyFirst;
  std::vector<ir::Value*> operands;
  for (int32_t i : inputs) {
    ir::Value* x = first ? t.nchw(i) : t.nhwc(i);
    if (quantized && x->type().quant != out.quant) {
      // Inputs on another scale are requantized to the output's first (TFLite does the same).
      ir::TensorType type = x->type();
      type.quant = out.quant;
      ir::AttributeMap attrs;
      attrs.set("to", int64_t(out.dtype));
      x = t.emit(OpKind::Requantize, {x}, attrs, type, t.tensorName(i) + "/requantized");
    }
    operands.push_back(x);
  }
  ir::AttributeMap attrs;
  attrs.set("axis", first ? kNchwPosition[axis] : axis);
  if (quantized) {
    if (fusedActivation(v) != fb::ActivationFunctionType::NONE)
      t.fail("a fused activation on a quantized CONCATENATION is not supported");
    ir::Value* y = t.emitInferred(OpKind::Concat, operands, attrs, outName(t, v));
    ir::TensorType type = y->type();
    type.quant = out.quant;
    y->setType(type);
    return t.define(v.outputs[0], y);
  }
  t.define(v.outputs[0], withActivation(t, v, OpKind::Concat, operands, attrs), first);
}

void translateActivation(Translation& t, const OpView& v) {
  if (isQuantizedType(t.tensorType(v.input(0)))) return translateQuantizedActivation(t, v);
  requireFloat(t, v.input(0), "input");
  bool first = t.channelsFirst(v.input(0));
  ir::Value* x = first ? t.nchw(v.input(0)) : t.nhwc(v.input(0));
  std::string name = outName(t, v);
  ir::Value* y = nullptr;
  switch (v.code) {
    case 19: y = floatActivation(t, x, fb::ActivationFunctionType::RELU, name); break;
    case 20: y = floatActivation(t, x, fb::ActivationFunctionType::RELU_N1_TO_1, name); break;
    case 21: y = floatActivation(t, x, fb::ActivationFunctionType::RELU6, name); break;
    case 28: y = floatActivation(t, x, fb::ActivationFunctionType::TANH, name); break;
    case 14: y = t.emitInferred(OpKind::Sigmoid, {x}, {}, name); break;
    case 117: y = t.emitInferred(OpKind::HardSwish, {x}, {}, name); break;
    case 98: {
      const auto* o = v.op->builtin_options_as_LeakyReluOptions();
      ir::AttributeMap attrs;
      attrs.set("alpha", o ? o->alpha() : 0.0f);
      y = t.emitInferred(OpKind::LeakyRelu, {x}, attrs, name);
      break;
    }
    default: KILN_UNREACHABLE("translateActivation: code " + std::to_string(v.code));
  }
  t.define(v.outputs[0], y, first);
}

void translateTranspose(Translation& t, const OpView& v) {
  std::vector<int64_t> perm = t.constantInts(v.input(1), "perm");
  ir::TensorType x = t.tensorType(v.input(0));
  if (int64_t(perm.size()) != x.rank()) t.fail("perm has the wrong length");
  for (int64_t& p : perm) {
    if (p < 0) p += x.rank();
    if (p < 0 || p >= x.rank()) t.fail("perm value out of range");
  }
  ir::Value* in = t.nhwc(v.input(0));
  if (t.channelsFirst(v.input(0))) {
    // Compose with the NCHW -> NHWC permutation instead of transposing twice.
    static const int64_t toNhwc[4] = {0, 2, 3, 1};
    for (int64_t& p : perm) p = toNhwc[p];
    in = t.nchw(v.input(0));
  }
  ir::Value* y = t.transpose(in, perm, outName(t, v));
  ir::TensorType out = t.tensorType(v.outputs[0]);
  if (out.quant) {
    ir::TensorType type = y->type();
    type.quant = out.quant;
    y->setType(type);
  }
  t.define(v.outputs[0], y);
}

void translateStridedSlice(Translation& t, const OpView& v) {
  const auto* o = v.op->builtin_options_as_StridedSliceOptions();
  if (o && (o->ellipsis_mask() || o->new_axis_mask()))
    t.fail("ellipsis_mask and new_axis_mask are not supported");
  if (o && o->offset()) t.fail("offset = true is not supported");
  ir::TensorType x = t.tensorType(v.input(0));
  std::vector<int64_t> begin = t.constantInts(v.input(1), "begin");
  std::vector<int64_t> end = t.constantInts(v.input(2), "end");
  std::vector<int64_t> strides = t.constantInts(v.input(3), "strides");
  if (begin.size() != end.size() || begin.size() != strides.size() || int64_t(begin.size()) > x.rank())
    t.fail("begin, end and strides must have one value per sliced dim");
  int32_t beginMask = o ? o->begin_mask() : 0, endMask = o ? o->end_mask() : 0,
          shrinkMask = o ? o->shrink_axis_mask() : 0;
  std::vector<int64_t> starts, ends, axes, steps;
  for (size_t d = 0; d < begin.size(); ++d) {
    int64_t dim = x.shape[d], s = strides[d];
    if (s == 0) t.fail("stride 0 in dim " + std::to_string(d));
    auto clampIndex = [&](int64_t i) {
      if (i < 0) i += dim;
      return s > 0 ? std::clamp<int64_t>(i, 0, dim) : std::clamp<int64_t>(i, -1, dim - 1);
    };
    // TFLite's StartForAxis / StopForAxis.
    int64_t start = (beginMask >> d) & 1 ? (s > 0 ? 0 : dim - 1) : clampIndex(begin[d]);
    int64_t stop;
    if ((shrinkMask >> d) & 1) {
      stop = start + 1;
      s = 1;
    } else {
      stop = (endMask >> d) & 1 ? (s > 0 ? dim : -1) : clampIndex(end[d]);
    }
    int64_t count = s > 0 ? (stop - start + s - 1) / s : (start - stop + (-s) - 1) / (-s);
    if (count <= 0) t.fail("dim " + std::to_string(d) + " of the slice is empty");
    starts.push_back(start);
    ends.push_back(s < 0 && stop == -1 ? -dim - 1 : stop);  // ONNX: -dim-1 = before index 0
    axes.push_back(int64_t(d));
    steps.push_back(s);
  }
  ir::Value* y = t.emitInferred(OpKind::Slice,
                                {t.nhwc(v.input(0)), t.constantI64("starts", starts),
                                 t.constantI64("ends", ends), t.constantI64("axes", axes),
                                 t.constantI64("steps", steps)},
                                {}, outName(t, v, "/slice"));
  ir::TensorType out = t.tensorType(v.outputs[0]);
  y = t.reshape(y, out.shape, outName(t, v));
  ir::TensorType type = y->type();
  type.quant = out.quant;
  y->setType(type);
  t.define(v.outputs[0], y);
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
  if (x.rank() != 4 || w.rank() != 4 || out.rank() != 4) t.fail("input, filter and output must be rank 4");
  auto crop = [&](int64_t in, int64_t outSize, int64_t k, int64_t s) -> std::pair<int64_t, int64_t> {
    int64_t full = (in - 1) * s + k;
    int64_t before = o->padding() == fb::Padding::SAME ? std::max<int64_t>(full - outSize, 0) / 2 : 0;
    return {before, full - outSize - before};
  };
  auto [top, bottom] = crop(x.shape[1], out.shape[1], w.shape[1], o->stride_h());
  auto [left, right] = crop(x.shape[2], out.shape[2], w.shape[2], o->stride_w());
  if (bottom < 0 || right < 0) t.fail("the output shape is larger than the transposed convolution's result");
  ir::AttributeMap attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{w.shape[1], w.shape[2]});
  attrs.set("strides", std::vector<int64_t>{o->stride_h(), o->stride_w()});
  attrs.set("pads", std::vector<int64_t>{top, left, bottom, right});
  ir::Value* filter = t.permutedConstant(wi, {3, 0, 1, 2});  // OHWI -> IOHW
  ir::Value* y = withActivation(t, v, OpKind::ConvTranspose,
                                withOptional({t.nchw(xi), filter}, optionalBias(t, v, 3)), attrs);
  t.define(v.outputs[0], y, true);
}

}  // namespace kiln::import::tflite
