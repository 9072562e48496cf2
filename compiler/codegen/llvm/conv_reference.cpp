// The convolution tests' shared case, description and double-precision reference
// (conv_reference.h).
#include "conv_reference.h"

#include <algorithm>
#include <cmath>

#include "test_support.h"

namespace kiln::codegen::testing {

KernelDesc describeConv(const ConvCase& t, const std::string& name) {
  const int64_t oh =
      (t.h + t.pads[0] + t.pads[2] - t.dilations[0] * (t.kh - 1) - 1) / t.strides[0] + 1;
  const int64_t ow =
      (t.w + t.pads[1] + t.pads[3] - t.dilations[1] * (t.kw - 1) - 1) / t.strides[1] + 1;
  KernelDesc d;
  d.kind = KernelKind::Conv;
  d.name = name;
  d.inputs = {f32({t.n, t.c, t.h, t.w}), f32({t.oc, t.c / t.groups, t.kh, t.kw})};
  d.groups = t.groups;
  if (t.bias) d.inputs.push_back(f32({t.oc}));
  d.output = f32({t.n, t.oc, oh, ow});
  d.strides = t.strides;
  d.dilations = t.dilations;
  d.pads = t.pads;
  d.epilogue.act = t.act;
  if (t.act == Activation::Clip) d.epilogue.beta = 6.0f;  // Clip(0, 6)
  if (t.residual) {
    const int32_t residualInput = int32_t(d.inputs.size());
    d.inputs.push_back(d.output);
    ElementwiseExpr& e = d.epilogue.chain;
    ExprNode result;
    result.op = ExprOp::Result;
    e.nodes.push_back(result);
    e.addUnary(ExprOp::Relu, e.addBinary(ExprOp::Add, 0, e.addInput(residualInput, ElemType::F32)));
    d.epilogue.inputCount = 1;
    d.epilogue.shape = d.output.shape;
  }
  return d;
}

ConvOperands randomConvOperands(const ConvCase& t) {
  const int64_t oh =
      (t.h + t.pads[0] + t.pads[2] - t.dilations[0] * (t.kh - 1) - 1) / t.strides[0] + 1;
  const int64_t ow =
      (t.w + t.pads[1] + t.pads[3] - t.dilations[1] * (t.kw - 1) - 1) / t.strides[1] + 1;
  return {randomFloats(t.n * t.c * t.h * t.w, 1),
          randomFloats(t.oc * (t.c / t.groups) * t.kh * t.kw, 2),
          randomFloats(t.oc, 3), randomFloats(t.n * t.oc * oh * ow, 4)};
}

std::vector<float> referenceConv(const ConvCase& t, const ConvOperands& in,
                                 const std::vector<int64_t>& output) {
  const int64_t oh = output[2], ow = output[3];
  // Output channel o of group o / (oc / groups) reads that group's c / groups input channels.
  const int64_t cg = t.c / t.groups, ocg = t.oc / t.groups;
  std::vector<float> want(size_t(t.n * t.oc * oh * ow));
  for (int64_t n = 0; n < t.n; ++n)
    for (int64_t o = 0; o < t.oc; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = t.bias ? in.b[o] : 0.0;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t ki = 0; ki < t.kh; ++ki)
              for (int64_t kj = 0; kj < t.kw; ++kj) {
                int64_t ih = i * t.strides[0] - t.pads[0] + ki * t.dilations[0];
                int64_t iw = j * t.strides[1] - t.pads[1] + kj * t.dilations[1];
                if (ih < 0 || ih >= t.h || iw < 0 || iw >= t.w) continue;
                const int64_t channel = o / ocg * cg + c;
                acc += double(in.x[((n * t.c + channel) * t.h + ih) * t.w + iw]) *
                       in.w[((o * cg + c) * t.kh + ki) * t.kw + kj];
              }
          float v = float(acc);
          if (t.act == Activation::Relu) v = std::max(v, 0.0f);
          if (t.act == Activation::Clip) v = std::min(std::max(v, 0.0f), 6.0f);
          if (t.act == Activation::Sigmoid) v = float(1.0 / (1.0 + std::exp(-acc)));
          if (t.act == Activation::Tanh) v = float(std::tanh(acc));
          size_t at = size_t(((n * t.oc + o) * oh + i) * ow + j);
          if (t.residual) v = std::max(v + in.r[at], 0.0f);
          want[at] = v;
        }
  return want;
}

}  // namespace kiln::codegen::testing
