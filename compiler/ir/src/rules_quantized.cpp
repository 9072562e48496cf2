// Type rules of the quantized integer ops (QConv2D, QFullyConnected, QAdd, ..., Quantize):
// NHWC layouts, integer dtypes and the presence of quantization parameters on the operands.
// The results' quantization parameters are declared by whoever builds the op (the importer);
// the rules compute dtype and shape only. Semantics: docs/quantization.md.
#include <limits>

#include "kiln/ir/window_geometry.h"
#include "rule_helpers.h"

namespace kiln::ir {

using namespace rules;

namespace {

std::string dtypeText(DType d) { return std::string(dtypeName(d)); }

// i8 or i16 activation with per-tensor quantization parameters.
void requireQuantActivation(const RuleInput& in, size_t i) {
  const TensorType& t = typeOf(in, i);
  if (t.dtype != DType::I8 && t.dtype != DType::I16)
    fail(operandName(i) + " has dtype " + dtypeText(t.dtype) + ", expected i8 or i16");
  if (!t.quant) fail(operandName(i) + " has no quantization parameters");
  if (t.quant->perChannel() || t.quant->scales.size() != 1)
    fail(operandName(i) + " must be quantized per tensor");
}

// act_min <= act_max inside the result dtype's range.
void checkActivationRange(const RuleInput& in, DType result) {
  int64_t lo = result == DType::I8 ? -128 : result == DType::I16 ? -32768 : INT32_MIN;
  int64_t hi = result == DType::I8 ? 127 : result == DType::I16 ? 32767 : INT32_MAX;
  int64_t amin = in.attrs.getInt("act_min", lo), amax = in.attrs.getInt("act_max", hi);
  if (amin < lo || amax > hi || amin > amax)
    fail("activation range [" + std::to_string(amin) + ", " + std::to_string(amax) +
         "] is not inside " + dtypeText(result) + "'s range");
}

// Weights: i8, quantized per tensor or per channel along `channelAxis` with `channels`
// entries, all zero points 0 (symmetric, as TFLite requires for conv weights).
void checkWeights(const RuleInput& in, size_t i, int64_t channelAxis, int64_t channels) {
  const TensorType& w = typeOf(in, i);
  if (w.dtype != DType::I8) fail(operandName(i) + " (weights) has dtype " + dtypeText(w.dtype) + ", expected i8");
  if (!w.quant) fail(operandName(i) + " (weights) has no quantization parameters");
  const QuantParams& q = *w.quant;
  if (q.perChannel()) {
    if (q.axis != channelAxis || int64_t(q.scales.size()) != channels)
      fail(operandName(i) + " (weights) is quantized per channel along axis " +
           std::to_string(q.axis) + " with " + std::to_string(q.scales.size()) +
           " scales, expected axis " + std::to_string(channelAxis) + " with " +
           std::to_string(channels));
  }
  for (int64_t zp : q.zeroPoints)
    if (zp != 0) fail(operandName(i) + " (weights) has a non-zero zero point");
}

void checkBias(const RuleInput& in, size_t i, DType x, int64_t channels) {
  if (!present(in, i)) return;
  const TensorType& b = typeOf(in, i);
  bool ok = b.dtype == DType::I32 || (x == DType::I16 && b.dtype == DType::I64);
  if (!ok)
    fail("bias has dtype " + dtypeText(b.dtype) + ", expected i32" +
         (x == DType::I16 ? " or i64" : ""));
  if (b.shape != Shape{channels})
    fail("bias has shape " + shapeToString(b.shape) + ", expected [" + std::to_string(channels) + "]");
}

// Output spatial size of an NHWC window op.
Shape windowOutput(const RuleInput& in, const Shape& x, std::vector<int64_t> kernel,
                   int64_t channels) {
  WindowGeometry g = computeWindowGeometry({x[1], x[2]}, std::move(kernel), in.attrs, false);
  return {x[0], g.output[0], g.output[1], channels};
}

void requireNhwc(const RuleInput& in, size_t i) {
  if (typeOf(in, i).rank() != 4)
    fail(operandName(i) + " has shape " + shapeToString(typeOf(in, i).shape) + ", expected N x H x W x C");
}

}  // namespace

RuleResult ruleQConv2D(const RuleInput& in) {
  requireQuantActivation(in, 0);
  requireNhwc(in, 0);
  requireRank(in, 1, 4);
  const Shape& x = typeOf(in, 0).shape;
  const Shape& w = typeOf(in, 1).shape;
  int64_t group = in.attrs.getInt("group", 1);
  if (group < 1 || x[3] % group != 0 || w[0] % group != 0)
    fail("group " + std::to_string(group) + " does not divide input channels " +
         std::to_string(x[3]) + " and output channels " + std::to_string(w[0]));
  if (w[3] * group != x[3])
    fail("weight has " + std::to_string(w[3]) + " input channels per group, input has " +
         std::to_string(x[3]) + " channels in " + std::to_string(group) + " group(s)");
  checkWeights(in, 1, 0, w[0]);
  checkBias(in, 2, typeOf(in, 0).dtype, w[0]);
  checkActivationRange(in, typeOf(in, 0).dtype);
  return single(TensorType(typeOf(in, 0).dtype, windowOutput(in, x, {w[1], w[2]}, w[0])));
}

RuleResult ruleQDepthwiseConv2D(const RuleInput& in) {
  requireQuantActivation(in, 0);
  requireNhwc(in, 0);
  requireRank(in, 1, 4);
  const Shape& x = typeOf(in, 0).shape;
  const Shape& w = typeOf(in, 1).shape;
  if (w[0] != 1 || w[3] % x[3] != 0)
    fail("weight has shape " + shapeToString(w) + ", expected [1, KH, KW, a multiple of " +
         std::to_string(x[3]) + "]");
  checkWeights(in, 1, 3, w[3]);
  checkBias(in, 2, typeOf(in, 0).dtype, w[3]);
  checkActivationRange(in, typeOf(in, 0).dtype);
  return single(TensorType(typeOf(in, 0).dtype, windowOutput(in, x, {w[1], w[2]}, w[3])));
}

RuleResult ruleQTransposeConv2D(const RuleInput& in) {
  requireQuantActivation(in, 0);
  requireNhwc(in, 0);
  requireRank(in, 1, 4);
  const Shape& x = typeOf(in, 0).shape;
  const Shape& w = typeOf(in, 1).shape;
  if (w[3] != x[3])
    fail("weight has shape " + shapeToString(w) + ", expected [OC, KH, KW, " +
         std::to_string(x[3]) + "]");
  checkWeights(in, 1, 0, w[0]);
  checkBias(in, 2, typeOf(in, 0).dtype, w[0]);
  checkActivationRange(in, typeOf(in, 0).dtype);
  std::vector<int64_t> strides = in.attrs.getInts("strides", {1, 1});
  std::vector<int64_t> pads = in.attrs.getInts("pads", {0, 0, 0, 0});
  if (strides.size() != 2 || strides[0] < 1 || strides[1] < 1)
    fail("strides must be two positive values");
  if (pads.size() != 4) fail("pads must have 4 values [top, left, bottom, right]");
  Shape out = {x[0], (x[1] - 1) * strides[0] + w[1] - pads[0] - pads[2],
               (x[2] - 1) * strides[1] + w[2] - pads[1] - pads[3], w[0]};
  for (int64_t p : pads)
    if (p < 0) fail("pads must not be negative");
  if (out[1] <= 0 || out[2] <= 0) fail("pads leave an empty result " + shapeToString(out));
  return single(TensorType(typeOf(in, 0).dtype, out));
}

RuleResult ruleQFullyConnected(const RuleInput& in) {
  requireQuantActivation(in, 0);
  requireRank(in, 0, 2);
  requireRank(in, 1, 2);
  const Shape& x = typeOf(in, 0).shape;
  const Shape& w = typeOf(in, 1).shape;
  if (w[1] != x[1])
    fail("weight has shape " + shapeToString(w) + ", expected [N, " + std::to_string(x[1]) + "]");
  const TensorType& wt = typeOf(in, 1);
  if (wt.dtype != DType::I8) fail("operand 1 (weights) has dtype " + dtypeText(wt.dtype) + ", expected i8");
  if (!wt.quant) fail("operand 1 (weights) has no quantization parameters");
  if (wt.quant->perChannel() && (wt.quant->axis != 0 || int64_t(wt.quant->scales.size()) != w[0]))
    fail("operand 1 (weights) per-channel quantization must be along axis 0 with " +
         std::to_string(w[0]) + " scales");
  if (typeOf(in, 0).dtype == DType::I16 || wt.quant->perChannel()) checkWeights(in, 1, 0, w[0]);
  checkBias(in, 2, typeOf(in, 0).dtype, w[0]);
  checkActivationRange(in, typeOf(in, 0).dtype);
  return single(TensorType(typeOf(in, 0).dtype, {x[0], w[0]}));
}

RuleResult ruleQBinary(const RuleInput& in) {
  requireQuantActivation(in, 0);
  requireQuantActivation(in, 1);
  requireSameDType(in, 0, 1);
  checkActivationRange(in, typeOf(in, 0).dtype);
  return single(TensorType(typeOf(in, 0).dtype,
                           broadcastShapes(typeOf(in, 0).shape, typeOf(in, 1).shape)));
}

RuleResult ruleQPool2D(const RuleInput& in) {
  requireQuantActivation(in, 0);
  requireNhwc(in, 0);
  const Shape& x = typeOf(in, 0).shape;
  std::vector<int64_t> kernel = in.attrs.getInts("kernel_shape");
  if (kernel.size() != 2) fail("kernel_shape must have 2 values [KH, KW]");
  checkActivationRange(in, typeOf(in, 0).dtype);
  return single(TensorType(typeOf(in, 0).dtype, windowOutput(in, x, kernel, x[3])));
}

RuleResult ruleQUnary(const RuleInput& in) {
  requireQuantActivation(in, 0);
  if (in.kind == OpKind::QSoftmax && typeOf(in, 0).rank() < 1)
    fail("QSoftmax needs rank >= 1");
  return single(typeOf(in, 0));
}

RuleResult ruleQMean(const RuleInput& in) {
  requireQuantActivation(in, 0);
  const TensorType& x = typeOf(in, 0);
  std::vector<int64_t> axes = in.attrs.getInts("axes");
  if (axes.empty()) fail("axes must name at least one axis");
  std::vector<bool> reduced(size_t(x.rank()), false);
  for (int64_t a : axes) {
    int64_t axis = normalizeAxis(a, x.rank());
    if (reduced[size_t(axis)]) fail("axes repeat axis " + std::to_string(a));
    reduced[size_t(axis)] = true;
  }
  const bool keepDims = in.attrs.getInt("keepdims", 1) != 0;
  Shape out;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (!reduced[size_t(i)])
      out.push_back(x.shape[size_t(i)]);
    else if (keepDims)
      out.push_back(1);
  }
  return single(TensorType(x.dtype, out));
}

// Quantize (f32 -> i8/i16) and Requantize (i8/i16/i32 -> i8/i16/i32).
RuleResult ruleQuantize(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  int64_t to = in.attrs.getInt("to");
  if (to < 0 || to >= kDTypeCount) fail("attribute 'to' = " + std::to_string(to) + " is not a kiln dtype");
  DType result = DType(to);
  if (in.kind == OpKind::Quantize) {
    if (x.dtype != DType::F32) fail("operand 0 has dtype " + dtypeText(x.dtype) + ", expected f32");
    if (result != DType::I8 && result != DType::I16)
      fail("attribute 'to' is " + dtypeText(result) + ", expected i8 or i16");
  } else {
    if (x.dtype != DType::I8 && x.dtype != DType::I16 && x.dtype != DType::I32)
      fail("operand 0 has dtype " + dtypeText(x.dtype) + ", expected i8, i16 or i32");
    if (!x.quant || x.quant->perChannel()) fail("operand 0 must be quantized per tensor");
    if (result != DType::I8 && result != DType::I16 && result != DType::I32)
      fail("attribute 'to' is " + dtypeText(result) + ", expected i8, i16 or i32");
    checkActivationRange(in, result);
  }
  return single(TensorType(result, x.shape));
}

RuleResult ruleDequantize(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  if (x.dtype != DType::I8 && x.dtype != DType::I16 && x.dtype != DType::I32)
    fail("operand 0 has dtype " + dtypeText(x.dtype) + ", expected i8, i16 or i32");
  if (!x.quant || x.quant->perChannel()) fail("operand 0 must be quantized per tensor");
  return single(TensorType(DType::F32, x.shape));
}

}  // namespace kiln::ir
