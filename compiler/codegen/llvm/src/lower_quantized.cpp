// Lowering of the quantized IR ops (QConv2D ... Requantize) to KernelKind::Quantized
// descriptions: the fixed-point multipliers, shifts, clamps and tables are derived here from
// the tensors' quantization parameters, with exactly the float/double arithmetic of
// TensorFlow Lite Micro's Prepare functions (docs/quantization.md).
#include <algorithm>
#include <cmath>

#include "kiln/ir/quant_math.h"
#include "kiln/ir/window_geometry.h"
#include "lowering.h"

namespace kiln::codegen::detail {
namespace {

using ir::OpKind;

const ir::QuantParams& quantOf(const ir::Op& op, const ir::Value* v, const char* what) {
  if (!v->type().quant)
    unsupported(op, std::string(what) + " '" + v->name() + "' has no quantization parameters");
  const ir::QuantParams& q = *v->type().quant;
  if (q.scales.empty() || q.zeroPoints.empty())
    unsupported(op, std::string(what) + " '" + v->name() + "' has empty quantization parameters");
  return q;
}

int32_t zeroPoint(const ir::QuantParams& q) { return static_cast<int32_t>(q.zeroPoints[0]); }

void setActivation(const ir::Op& op, QuantDesc& q) {
  ir::ActivationRange r = ir::dtypeRange(op.result()->dtype());
  q.actMin = static_cast<int32_t>(op.attrs().getInt("act_min", r.min));
  q.actMax = static_cast<int32_t>(op.attrs().getInt("act_max", r.max));
}

void push(QuantDesc& q, ir::QuantizedMultiplier m) {
  q.multipliers.push_back(m.multiplier);
  q.shifts.push_back(m.shift);
}

void requireZeroZeroPoint(const ir::Op& op, const ir::Value* v, const char* what) {
  if (v->dtype() == ir::DType::I16 && zeroPoint(quantOf(op, v, what)) != 0)
    unsupported(op, std::string("16-bit ") + what + " '" + v->name() + "' must have zero point 0");
}

// Per-channel conv rescale: double(sx) * double(sw_c) / double(sy).
void convMultipliers(const ir::Op& op, QuantDesc& q, int64_t channels) {
  const ir::QuantParams& x = quantOf(op, op.operand(0), "input");
  const ir::QuantParams& w = quantOf(op, op.operand(1), "weight");
  const ir::QuantParams& y = quantOf(op, op.result(), "result");
  for (int64_t c = 0; c < channels; ++c) {
    float ws = w.perChannel() ? w.scales.at(size_t(c)) : w.scales[0];
    double eff = double(x.scales[0]) * double(ws) / double(y.scales[0]);
    push(q, ir::quantizeMultiplier(eff));
  }
}

void lowerWindow(const ir::Op& op, KernelDesc& d, std::vector<int64_t> kernel) {
  const ir::Shape& xs = op.operand(0)->shape();
  ir::WindowGeometry g = ir::computeWindowGeometry({xs[1], xs[2]}, kernel, op.attrs(), false);
  d.kernelShape = {g.kernel[0], g.kernel[1]};
  d.strides = {g.strides[0], g.strides[1]};
  d.dilations = {g.dilations[0], g.dilations[1]};
  d.pads = {g.pads[0], g.pads[1], g.pads[2], g.pads[3]};
}

// exp(-j) of the int8 softmax for j in [0, 256), zero where -j < diff_min.
std::vector<int32_t> softmaxTable(double beta, double inputScale) {
  constexpr int kScaledDiffIntegerBits = 5;
  double real = std::min(beta * inputScale * double(int64_t{1} << (31 - kScaledDiffIntegerBits)),
                         double((int64_t{1} << 31) - 1));
  ir::QuantizedMultiplier m = ir::quantizeMultiplierGreaterThanOne(real);
  double maxInputRescaled = 1.0 * double((1 << kScaledDiffIntegerBits) - 1) *
                            double(int64_t{1} << (31 - kScaledDiffIntegerBits)) /
                            double(int64_t{1} << m.shift);
  int32_t diffMin = -static_cast<int32_t>(std::floor(maxInputRescaled));
  std::vector<int32_t> table(256, 0);
  for (int32_t j = 0; j < 256; ++j) {
    int32_t diff = -j;
    if (diff < diffMin) continue;
    int32_t shifted = static_cast<int32_t>(static_cast<uint32_t>(diff) << m.shift);
    int32_t rescaled = ir::saturatingRoundingDoublingHighMul(shifted, m.multiplier);
    table[size_t(j)] = ir::expOnNegativeValuesQ5(rescaled);
  }
  return table;
}

// -zx * sum(w - zw) per output channel for constant i8-activation weights (wrapping i32
// arithmetic, like the accumulator): lets the kernels accumulate w * x alone.
void zeroPointCorrection(const ir::Op& op, QuantDesc& q, bool depthwise) {
  const ir::Value* w = op.operand(1);
  if (op.operand(0)->dtype() != ir::DType::I8 || !w->isConstant() || q.inputZeroPoint == 0) return;
  const std::vector<uint8_t>& bytes = w->constantBytes();
  const ir::Shape& ws = w->shape();
  const int64_t channels = depthwise ? ws.back() : ws[0];
  const int64_t perChannel = int64_t(bytes.size()) / channels;
  std::vector<uint32_t> sums(size_t(channels), 0);
  for (int64_t i = 0; i < int64_t(bytes.size()); ++i) {
    int64_t c = depthwise ? i % channels : i / perChannel;
    sums[size_t(c)] += uint32_t(int32_t(int8_t(bytes[size_t(i)])) - q.weightZeroPoint);
  }
  for (uint32_t s : sums) q.zeroPointCorrection.push_back(int32_t(uint32_t(-q.inputZeroPoint) * s));
}

}  // namespace

bool lowerQuantized(const ir::Op& op, KernelDesc& d) {
  QuantDesc& q = d.quant;
  const ir::AttributeMap& attrs = op.attrs();
  switch (op.kind()) {
    case OpKind::QConv2D:
    case OpKind::QDepthwiseConv2D:
    case OpKind::QTransposeConv2D: {
      const ir::Shape& ws = op.operand(1)->shape();
      q.op = op.kind() == OpKind::QConv2D            ? QuantOp::Conv
             : op.kind() == OpKind::QDepthwiseConv2D ? QuantOp::DepthwiseConv
                                                     : QuantOp::TransposeConv;
      if (q.op == QuantOp::TransposeConv) {
        std::vector<int64_t> s = attrs.getInts("strides", {1, 1});
        std::vector<int64_t> p = attrs.getInts("pads", {0, 0, 0, 0});
        d.kernelShape = {ws[1], ws[2]};
        d.strides = {s[0], s[1]};
        d.pads = {p[0], p[1], p[2], p[3]};
      } else {
        lowerWindow(op, d, {ws[1], ws[2]});
      }
      d.groups = q.op == QuantOp::Conv ? attrs.getInt("group", 1) : 1;
      requireZeroZeroPoint(op, op.operand(0), "input");
      q.inputZeroPoint = zeroPoint(quantOf(op, op.operand(0), "input"));
      q.outputZeroPoint = zeroPoint(quantOf(op, op.result(), "result"));
      convMultipliers(op, q, q.op == QuantOp::DepthwiseConv ? ws[3] : ws[0]);
      if (q.op != QuantOp::TransposeConv) zeroPointCorrection(op, q, q.op == QuantOp::DepthwiseConv);
      setActivation(op, q);
      break;
    }
    case OpKind::QFullyConnected: {
      const ir::QuantParams& x = quantOf(op, op.operand(0), "input");
      const ir::QuantParams& w = quantOf(op, op.operand(1), "weight");
      const ir::QuantParams& y = quantOf(op, op.result(), "result");
      q.op = QuantOp::FullyConnected;
      requireZeroZeroPoint(op, op.operand(0), "input");
      q.inputZeroPoint = zeroPoint(x);
      q.weightZeroPoint = w.perChannel() ? 0 : zeroPoint(w);
      q.outputZeroPoint = zeroPoint(y);
      if (w.perChannel()) {
        convMultipliers(op, q, op.operand(1)->shape()[0]);
      } else {
        // TFLite's GetQuantizedConvolutionMultipler: the scales' product is a float product.
        float product = x.scales[0] * w.scales[0];
        push(q, ir::quantizeMultiplier(double(product) / double(y.scales[0])));
      }
      zeroPointCorrection(op, q, false);
      setActivation(op, q);
      break;
    }
    case OpKind::QAdd:
    case OpKind::QSub: {
      const ir::QuantParams& a = quantOf(op, op.operand(0), "input");
      const ir::QuantParams& b = quantOf(op, op.operand(1), "input");
      const ir::QuantParams& y = quantOf(op, op.result(), "result");
      q.op = op.kind() == OpKind::QAdd ? QuantOp::Add : QuantOp::Sub;
      q.inputZeroPoint = zeroPoint(a);
      q.input2ZeroPoint = zeroPoint(b);
      q.outputZeroPoint = zeroPoint(y);
      q.leftShift = op.result()->dtype() == ir::DType::I16 ? 15 : 20;
      ir::QuantizedMultiplier m1, m2, mo;
      if (q.op == QuantOp::Add) {
        // TFLM add: the ratios in double.
        const double twiceMax = 2 * double(std::max(a.scales[0], b.scales[0]));
        m1 = ir::quantizeMultiplier(double(a.scales[0]) / twiceMax);
        m2 = ir::quantizeMultiplier(double(b.scales[0]) / twiceMax);
        mo = ir::quantizeMultiplier(twiceMax / (double(1 << q.leftShift) * double(y.scales[0])));
      } else {
        // TFLM sub: the same ratios computed in float, then widened.
        const float twiceMax = 2 * std::max(a.scales[0], b.scales[0]);
        m1 = ir::quantizeMultiplier(double(a.scales[0] / twiceMax));
        m2 = ir::quantizeMultiplier(double(b.scales[0] / twiceMax));
        mo = ir::quantizeMultiplier(double(twiceMax / (float(1 << q.leftShift) * y.scales[0])));
      }
      q.input1Multiplier = m1.multiplier;
      q.input1Shift = m1.shift;
      q.input2Multiplier = m2.multiplier;
      q.input2Shift = m2.shift;
      push(q, mo);
      setActivation(op, q);
      break;
    }
    case OpKind::QMul: {
      const ir::QuantParams& a = quantOf(op, op.operand(0), "input");
      const ir::QuantParams& b = quantOf(op, op.operand(1), "input");
      const ir::QuantParams& y = quantOf(op, op.result(), "result");
      if (op.result()->dtype() != ir::DType::I8)
        unsupported(op, "only int8 multiplication is supported (TFLM's int16 MUL uses another path)");
      q.op = QuantOp::Mul;
      q.inputZeroPoint = zeroPoint(a);
      q.input2ZeroPoint = zeroPoint(b);
      q.outputZeroPoint = zeroPoint(y);
      push(q, ir::quantizeMultiplier(double(a.scales[0]) * double(b.scales[0]) / double(y.scales[0])));
      setActivation(op, q);
      break;
    }
    case OpKind::QAveragePool2D:
    case OpKind::QMaxPool2D: {
      q.op = op.kind() == OpKind::QMaxPool2D ? QuantOp::MaxPool : QuantOp::AveragePool;
      lowerWindow(op, d, attrs.getInts("kernel_shape"));
      const ir::QuantParams& x = quantOf(op, op.operand(0), "input");
      const ir::QuantParams& y = quantOf(op, op.result(), "result");
      if (x.scales[0] != y.scales[0] || x.zeroPoints[0] != y.zeroPoints[0])
        unsupported(op, "pooling needs equal input and result quantization parameters");
      setActivation(op, q);
      break;
    }
    case OpKind::QSoftmax: {
      const ir::QuantParams& x = quantOf(op, op.operand(0), "input");
      const ir::QuantParams& y = quantOf(op, op.result(), "result");
      if (op.operand(0)->dtype() != ir::DType::I8 || op.result()->dtype() != ir::DType::I8)
        unsupported(op, "only int8 -> int8 softmax is supported");
      if (y.zeroPoints[0] != -128 || y.scales[0] != 1.0f / 256)
        unsupported(op, "int8 softmax needs result scale 1/256 and zero point -128");
      q.op = QuantOp::Softmax;
      q.table = softmaxTable(double(attrs.getFloat("beta", 1.0f)), double(x.scales[0]));
      setActivation(op, q);
      break;
    }
    case OpKind::QLeakyRelu: {
      const ir::QuantParams& x = quantOf(op, op.operand(0), "input");
      const ir::QuantParams& y = quantOf(op, op.result(), "result");
      const float alpha = attrs.getFloat("alpha", 0.01f);
      q.op = QuantOp::LeakyRelu;
      q.inputZeroPoint = zeroPoint(x);
      q.outputZeroPoint = zeroPoint(y);
      // TFLM computes both ratios in float, then widens.
      const float identity = x.scales[0] / y.scales[0];
      const float alphaRatio = x.scales[0] * alpha / y.scales[0];
      push(q, ir::quantizeMultiplier(double(identity)));
      push(q, ir::quantizeMultiplier(double(alphaRatio)));
      setActivation(op, q);
      break;
    }
    case OpKind::Quantize: {
      const ir::QuantParams& y = quantOf(op, op.result(), "result");
      if (y.perChannel()) unsupported(op, "per-channel quantization of activations is not supported");
      q.op = QuantOp::Quantize;
      q.scale = y.scales[0];
      q.outputZeroPoint = zeroPoint(y);
      setActivation(op, q);
      break;
    }
    case OpKind::Dequantize: {
      const ir::QuantParams& x = quantOf(op, op.operand(0), "input");
      q.op = QuantOp::Dequantize;
      q.scale = x.scales[0];
      q.inputZeroPoint = zeroPoint(x);
      break;
    }
    case OpKind::Requantize: {
      const ir::QuantParams& x = quantOf(op, op.operand(0), "input");
      const ir::QuantParams& y = quantOf(op, op.result(), "result");
      q.op = QuantOp::Requantize;
      q.inputZeroPoint = zeroPoint(x);
      q.outputZeroPoint = zeroPoint(y);
      push(q, ir::quantizeMultiplier(double(x.scales[0]) / double(y.scales[0])));
      setActivation(op, q);
      break;
    }
    case OpKind::QMean: {
      const ir::QuantParams& x = quantOf(op, op.operand(0), "input");
      const ir::QuantParams& y = quantOf(op, op.result(), "result");
      q.op = QuantOp::Mean;
      const int64_t rank = int64_t(op.operand(0)->shape().size());
      for (int64_t a : attrs.getInts("axes")) d.axes.push_back(a < 0 ? a + rank : a);
      std::sort(d.axes.begin(), d.axes.end());
      q.inputZeroPoint = zeroPoint(x);
      q.outputZeroPoint = zeroPoint(y);
      q.sameParameters = x.scales[0] == y.scales[0] && x.zeroPoints[0] == y.zeroPoints[0];
      q.scale = x.scales[0] / y.scales[0];  // TFLM: float ratio
      setActivation(op, q);
      break;
    }
    case OpKind::QLogistic:
    case OpKind::QTanh: {
      // TFLM's int8 kernels evaluated for all 256 inputs at compile time.
      const ir::QuantParams& x = quantOf(op, op.operand(0), "input");
      const ir::QuantParams& y = quantOf(op, op.result(), "result");
      if (op.operand(0)->dtype() != ir::DType::I8 || op.result()->dtype() != ir::DType::I8)
        unsupported(op, "only int8 is supported for this operator");
      const bool logistic = op.kind() == OpKind::QLogistic;
      if (y.zeroPoints[0] != (logistic ? -128 : 0))
        unsupported(op, std::string("int8 ") + (logistic ? "logistic needs result zero point -128"
                                                          : "tanh needs result zero point 0"));
      q.op = QuantOp::Lookup;
      q.table = logistic ? ir::int8LogisticTable(x.scales[0], zeroPoint(x))
                         : ir::int8TanhTable(x.scales[0], zeroPoint(x));
      setActivation(op, q);
      break;
    }
    case OpKind::QHardSwish: {
      const ir::QuantParams& x = quantOf(op, op.operand(0), "input");
      const ir::QuantParams& y = quantOf(op, op.result(), "result");
      if (op.operand(0)->dtype() != ir::DType::I8 || op.result()->dtype() != ir::DType::I8)
        unsupported(op, "only int8 is supported for this operator");
      if (ir::quantizeMultiplier(double((x.scales[0] / 128.0f) / y.scales[0])).shift > 0)
        unsupported(op, "hard swish needs result scale >= input scale / 128");
      q.op = QuantOp::Lookup;
      q.table = ir::int8HardSwishTable(x.scales[0], zeroPoint(x), y.scales[0], zeroPoint(y));
      setActivation(op, q);
      break;
    }
    default:
      return false;
  }
  d.kind = KernelKind::Quantized;
  return true;
}

}  // namespace kiln::codegen::detail
