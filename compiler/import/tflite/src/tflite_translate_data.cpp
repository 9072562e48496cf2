// Data movement operators (RESHAPE, SQUEEZE, PAD, PADV2, CONCATENATION, TRANSPOSE,
// STRIDED_SLICE) for float and quantized data alike: the IR's Reshape/Pad/Concat/Transpose/
// Slice, layouts remapped when the data is channels first, quantization parameters carried to
// the results (quantized PAD pads with the zero point, CONCATENATION requantizes inputs on
// another scale).
#include <algorithm>

#include "kiln/ir/constant_data.h"
#include "kiln/support/diagnostics.h"
#include "tflite_translation.h"

namespace kiln::import::tflite {
namespace {

using ir::OpKind;

std::string outName(Translation& t, const OpView& v) { return t.tensorName(v.outputs[0]); }

}  // namespace

void translateReshape(Translation& t, const OpView& v) {
  ir::TensorType out = t.tensorType(v.outputs[0]);
  ir::Value* x = t.nhwc(v.input(0));
  if (x->type().numElements() != out.numElements())
    t.fail("cannot reshape " + ir::shapeToString(x->shape()) + " to " +
           ir::shapeToString(out.shape));
  t.define(v.outputs[0], t.reshape(x, out.shape, outName(t, v)));
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
    if (vt.numElements() != 1 || vt.dtype != x.dtype)
      t.fail("constant_values must be one value of the input's type");
    value = t.constant("pad_value", ir::TensorType(x.dtype, {}), {bytes.begin(), bytes.end()});
  } else if (isQuantizedType(x)) {
    // Quantized PAD pads with the output's zero point (real 0).
    int64_t zero = out.quant ? out.quant->zeroPoints[0] : 0;
    ir::TensorType vt(x.dtype, {});
    value =
        t.constant("pad_zero_point", vt, ir::makeConstantBytesInt(vt, std::vector<int64_t>{zero}));
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
  if (begin.size() != end.size() || begin.size() != strides.size() ||
      int64_t(begin.size()) > x.rank())
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
  ir::Value* y = t.emitInferred(
      OpKind::Slice,
      {t.nhwc(v.input(0)), t.constantI64("starts", starts), t.constantI64("ends", ends),
       t.constantI64("axes", axes), t.constantI64("steps", steps)},
      {}, outName(t, v) + "/slice");
  ir::TensorType out = t.tensorType(v.outputs[0]);
  y = t.reshape(y, out.shape, outName(t, v));
  ir::TensorType type = y->type();
  type.quant = out.quant;
  y->setType(type);
  t.define(v.outputs[0], y);
}

}  // namespace kiln::import::tflite
