// The vectorised sliding-window kernels (window_tiles.h): depthwise convolution
// (emit_conv_depthwise.cpp) and max/average pools (emit_pool.cpp) generated for the host (and
// for 4-lane x86-64), run with several workgroup splits and compared with straightforward C++
// references computed here: 3x3 and 5x5 windows, strides 1 and 2, padding, odd and narrow
// widths, channel multipliers, fused bias/Clip/HardSwish/residual, ceil mode and
// count_include_pad; and the vectorised reductions over trailing axes (GlobalAveragePool).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "test_support.h"

namespace kiln::codegen {
namespace {

using testing::expectClose;
using testing::f32;
using testing::product;
using testing::randomFloats;
using testing::runKernel;

// ---- Depthwise convolution -----------------------------------------------------------------
enum class Fused { None, ClipField, HardSwish, Residual, Sigmoid };

struct DepthwiseCase {
  int64_t n, c, multiplier, h, w, kh, kw;
  std::array<int64_t, 2> strides;
  std::array<int64_t, 4> pads;  // top, left, bottom, right
  bool bias;
  Fused fused;
};

// chain over the conv result v: HardSwish v * clip(v / 6 + 0.5, 0, 1) (as lower_elementwise
// writes it), v + residual, or sigmoid(v) (not on vectors: the row pass).
ElementwiseExpr chainFor(Fused fused, int32_t residualInput) {
  ElementwiseExpr e;
  ExprNode result;
  result.op = ExprOp::Result;
  e.nodes.push_back(result);
  if (fused == Fused::HardSwish) {
    int32_t scaled = e.addBinary(ExprOp::Mul, 0, e.addConstant(1.0 / 6.0, ElemType::F32));
    int32_t shifted = e.addBinary(ExprOp::Add, scaled, e.addConstant(0.5, ElemType::F32));
    e.addBinary(ExprOp::Mul, 0, e.addUnary(ExprOp::Clip, shifted, 0.0, 1.0));
  } else if (fused == Fused::Residual) {
    e.addBinary(ExprOp::Add, 0, e.addInput(residualInput, ElemType::F32));
  } else {
    e.addUnary(ExprOp::Sigmoid, 0);
  }
  return e;
}

void checkDepthwise(const DepthwiseCase& t, const std::string& target = "host") {
  const int64_t oc = t.c * t.multiplier;
  const int64_t oh = (t.h + t.pads[0] + t.pads[2] - t.kh) / t.strides[0] + 1;
  const int64_t ow = (t.w + t.pads[1] + t.pads[3] - t.kw) / t.strides[1] + 1;
  KernelDesc d;
  d.kind = KernelKind::Conv;
  d.name = "depthwise";
  d.inputs = {f32({t.n, t.c, t.h, t.w}), f32({oc, 1, t.kh, t.kw})};
  if (t.bias) d.inputs.push_back(f32({oc}));
  d.output = f32({t.n, oc, oh, ow});
  d.strides = t.strides;
  d.pads = t.pads;
  d.groups = t.c;
  std::vector<float> x = randomFloats(product(d.inputs[0].shape), 11, -4.0f, 4.0f);
  std::vector<float> w = randomFloats(product(d.inputs[1].shape), 12);
  std::vector<float> b = randomFloats(oc, 13);
  std::vector<float> residual = randomFloats(product(d.output.shape), 14);
  std::vector<std::vector<float>> inputs = {x, w};
  if (t.bias) inputs.push_back(b);
  if (t.fused == Fused::ClipField) {
    d.epilogue.act = Activation::Clip;
    d.epilogue.alpha = 0.0f;
    d.epilogue.beta = 6.0f;
  } else if (t.fused != Fused::None) {
    int32_t residualInput = int32_t(d.inputs.size());
    if (t.fused == Fused::Residual) {
      d.inputs.push_back(d.output);
      inputs.push_back(residual);
      d.epilogue.inputCount = 1;
    }
    d.epilogue.chain = chainFor(t.fused, residualInput);
    d.epilogue.shape = d.output.shape;
  }
  std::vector<float> want(size_t(product(d.output.shape)));
  for (int64_t n = 0; n < t.n; ++n)
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = t.bias ? b[size_t(o)] : 0.0;
          int64_t c = o / t.multiplier;
          for (int64_t ki = 0; ki < t.kh; ++ki)
            for (int64_t kj = 0; kj < t.kw; ++kj) {
              int64_t ih = i * t.strides[0] - t.pads[0] + ki;
              int64_t iw = j * t.strides[1] - t.pads[1] + kj;
              if (ih < 0 || ih >= t.h || iw < 0 || iw >= t.w) continue;
              acc += double(x[size_t(((n * t.c + c) * t.h + ih) * t.w + iw)]) *
                     w[size_t((o * t.kh + ki) * t.kw + kj)];
            }
          size_t at = size_t(((n * oc + o) * oh + i) * ow + j);
          float v = float(acc);
          switch (t.fused) {
            case Fused::None:
              break;
            case Fused::ClipField:
              v = std::min(6.0f, std::max(0.0f, v));
              break;
            case Fused::HardSwish:
              v = v * std::min(1.0f, std::max(0.0f, v / 6.0f + 0.5f));
              break;
            case Fused::Residual:
              v += residual[at];
              break;
            case Fused::Sigmoid:
              v = float(1.0 / (1.0 + std::exp(-acc)));
              break;
          }
          want[at] = v;
        }
  expectClose(runKernel(d, inputs, {1, 3, 1000}, target), want);
}

TEST(WindowKernels, Depthwise3x3Stride1) {
  // MobileNet's shapes, scaled down in height: widths 112, 56, 14 (two overlapping tiles), 15
  // and 9 (odd), 7, 6 and 5 (one 8-lane tile, its first lanes stored), 3 (a 4-lane tile).
  for (int64_t w : {112, 56, 15, 14, 9, 7, 6, 5, 3})
    checkDepthwise({1, 3, 1, 6, w, 3, 3, {1, 1}, {1, 1, 1, 1}, true, Fused::None});
  // Heights that leave a last row group of 1, 2 and 3 rows; no padding; batch 2.
  checkDepthwise({2, 4, 1, 9, 20, 3, 3, {1, 1}, {0, 0, 0, 0}, false, Fused::None});
  checkDepthwise({1, 2, 1, 10, 17, 3, 3, {1, 1}, {1, 1, 1, 1}, true, Fused::ClipField});
  checkDepthwise({1, 2, 1, 7, 30, 3, 3, {1, 1}, {2, 0, 1, 2}, true, Fused::None});
}

// Row groups by register count: with 32 vector registers (AVX-512) maps of up to 14 output
// rows are one group (MobileNetV2's 14x14 and 28 -> 14 stride-2 layers), taller ones groups
// of 4 (stride 1) or 2 (stride 2) rows with a shorter last group; with 16 (AVX2) the groups
// start at 8 rows. Rows narrower than a vector keep their first lanes: one masked store on
// AVX-512 (14 of 16 lanes, 9 of 16, 7 of 8), power-of-two pieces on AVX2.
TEST(WindowKernels, DepthwiseRowGroupsByRegisters) {
  std::vector<std::string> targets = {"x86_64-v3"};
  if (testing::hostRunsAvx512()) targets.push_back("x86_64-v4");
  for (const std::string& target : targets) {
    SCOPED_TRACE(target);
    for (int64_t h : {8, 13, 14, 15, 17, 19})
      checkDepthwise({1, 3, 1, h, 14, 3, 3, {1, 1}, {1, 1, 1, 1}, true, Fused::ClipField}, target);
    checkDepthwise({1, 2, 1, 14, 9, 3, 3, {1, 1}, {1, 1, 1, 1}, false, Fused::Residual}, target);
    checkDepthwise({1, 2, 1, 12, 7, 3, 3, {1, 1}, {1, 1, 1, 1}, true, Fused::HardSwish}, target);
    checkDepthwise({1, 3, 1, 28, 28, 3, 3, {2, 2}, {1, 1, 1, 1}, true, Fused::ClipField}, target);
    checkDepthwise({1, 2, 1, 29, 30, 3, 3, {2, 2}, {1, 1, 1, 1}, true, Fused::None}, target);
    checkDepthwise({1, 2, 1, 14, 14, 5, 5, {1, 1}, {2, 2, 2, 2}, true, Fused::Sigmoid}, target);
  }
}

TEST(WindowKernels, DepthwiseLargeOutputPrefetchesItsStores) {
  // Just over 1 MiB of output (from which stores prefetch their lines two row groups ahead,
  // past the end of the output for the last groups): MobileNetV2's features.1 planes.
  checkDepthwise({1, 21, 1, 112, 112, 3, 3, {1, 1}, {1, 1, 1, 1}, true, Fused::ClipField});
  checkDepthwise({1, 64, 1, 110, 150, 3, 3, {2, 2}, {1, 1, 1, 1}, false, Fused::Residual});
}

TEST(WindowKernels, Depthwise3x3Stride2) {
  // 112 -> 56, 56 -> 28, 14 -> 7 (odd output), 15 -> 8 (odd input), asymmetric pads as
  // TensorFlow-exported models have them.
  for (int64_t w : {112, 56, 15, 14, 7})
    checkDepthwise({1, 3, 1, 7, w, 3, 3, {2, 2}, {1, 1, 1, 1}, true, Fused::ClipField});
  checkDepthwise({1, 2, 1, 8, 28, 3, 3, {2, 2}, {0, 0, 1, 1}, false, Fused::None});
  checkDepthwise({1, 2, 1, 9, 21, 3, 3, {1, 2}, {1, 1, 1, 1}, true, Fused::None});
  checkDepthwise({1, 2, 1, 9, 21, 3, 3, {2, 1}, {1, 1, 1, 1}, true, Fused::None});
}

TEST(WindowKernels, Depthwise5x5) {
  // EfficientNet / MobileNetV3: 5x5 with pads 2, strides 1 and 2.
  for (int64_t w : {28, 14, 15, 7})
    checkDepthwise({1, 3, 1, 6, w, 5, 5, {1, 1}, {2, 2, 2, 2}, true, Fused::HardSwish});
  for (int64_t w : {56, 28, 15, 14})
    checkDepthwise({1, 2, 1, 9, w, 5, 5, {2, 2}, {2, 2, 2, 2}, true, Fused::None});
  checkDepthwise({1, 2, 1, 5, 11, 1, 5, {1, 1}, {0, 2, 0, 2}, false, Fused::None});
}

TEST(WindowKernels, DepthwiseChannelMultiplier) {
  checkDepthwise({1, 3, 2, 6, 19, 3, 3, {1, 1}, {1, 1, 1, 1}, true, Fused::None});
  checkDepthwise({2, 2, 3, 7, 16, 3, 3, {2, 2}, {1, 1, 1, 1}, false, Fused::ClipField});
}

TEST(WindowKernels, DepthwiseFusedEpilogues) {
  checkDepthwise({1, 4, 1, 6, 22, 3, 3, {1, 1}, {1, 1, 1, 1}, true, Fused::HardSwish});
  checkDepthwise({1, 4, 1, 5, 22, 3, 3, {1, 1}, {1, 1, 1, 1}, true, Fused::Residual});
  checkDepthwise({1, 4, 1, 7, 7, 3, 3, {2, 2}, {1, 1, 1, 1}, false, Fused::Residual});
  checkDepthwise({1, 4, 1, 7, 7, 3, 3, {1, 1}, {1, 1, 1, 1}, true, Fused::Residual});
  checkDepthwise({1, 3, 1, 6, 13, 3, 3, {1, 1}, {1, 1, 1, 1}, true, Fused::Sigmoid});
}

TEST(WindowKernels, WideWindowsKeepTheOtherKernels) {
  // 20 kernel columns (above the row engine's 16): the register-tiled conv and the plain pool.
  checkDepthwise({1, 2, 1, 3, 70, 1, 20, {1, 1}, {0, 7, 0, 5}, true, Fused::None});
  checkDepthwise({1, 2, 1, 4, 60, 3, 17, {1, 2}, {1, 8, 1, 8}, false, Fused::HardSwish});
}

TEST(WindowKernels, DepthwiseWithFourLanes) {
  checkDepthwise({1, 3, 1, 6, 23, 3, 3, {1, 1}, {1, 1, 1, 1}, true, Fused::HardSwish}, "x86_64");
  checkDepthwise({1, 3, 1, 7, 14, 3, 3, {2, 2}, {1, 1, 1, 1}, true, Fused::None}, "x86_64");
  checkDepthwise({1, 2, 1, 5, 7, 5, 5, {1, 1}, {2, 2, 2, 2}, false, Fused::None}, "x86_64");
}

// ---- Pools -------------------------------------------------------------------------------------
struct PoolCase {
  PoolKind kind;
  int64_t c, h, w, k, stride;
  std::array<int64_t, 4> pads;  // top, left, bottom, right
  bool ceilMode, includePad;
};

// Output extent as ONNX / PyTorch compute it (in ceil mode the last window must start inside
// the image or its left padding).
int64_t poolExtent(int64_t in, int64_t padBegin, int64_t padEnd, int64_t k, int64_t s, bool ceil) {
  int64_t span = in + padBegin + padEnd - k;
  int64_t out = (ceil ? (span + s - 1) / s : span / s) + 1;
  if (ceil && (out - 1) * s >= in + padBegin) --out;
  return out;
}

void checkPool(const PoolCase& t, const std::string& target = "host") {
  const int64_t oh = poolExtent(t.h, t.pads[0], t.pads[2], t.k, t.stride, t.ceilMode);
  const int64_t ow = poolExtent(t.w, t.pads[1], t.pads[3], t.k, t.stride, t.ceilMode);
  KernelDesc d;
  d.kind = KernelKind::Pool;
  d.name = "pool";
  d.poolKind = t.kind;
  d.countIncludePad = t.includePad;
  d.kernelShape = {t.k, t.k};
  d.strides = {t.stride, t.stride};
  d.pads = t.pads;
  d.inputs = {f32({1, t.c, t.h, t.w})};
  d.output = f32({1, t.c, oh, ow});
  // Negative values everywhere: a max that counted padding as 0 would show.
  std::vector<float> x = randomFloats(size_t(t.c * t.h * t.w), 21, -5.0f, -1.0f);
  std::vector<float> want(size_t(t.c * oh * ow));
  for (int64_t c = 0; c < t.c; ++c)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        float best = -INFINITY;
        double sum = 0;
        int count = 0;
        for (int64_t ki = 0; ki < t.k; ++ki)
          for (int64_t kj = 0; kj < t.k; ++kj) {
            int64_t ih = i * t.stride - t.pads[0] + ki, iw = j * t.stride - t.pads[1] + kj;
            bool inPadded = ih >= -t.pads[0] && ih < t.h + t.pads[2] && iw >= -t.pads[1] &&
                            iw < t.w + t.pads[3];
            if (ih < 0 || ih >= t.h || iw < 0 || iw >= t.w) {
              if (t.includePad && inPadded) ++count;
              continue;
            }
            float v = x[size_t((c * t.h + ih) * t.w + iw)];
            best = std::max(best, v);
            sum += v;
            ++count;
          }
        want[size_t((c * oh + i) * ow + j)] =
            t.kind == PoolKind::Max ? best : float(sum / std::max(count, 1));
      }
  expectClose(runKernel(d, {x}, {1, 3, 1000}, target), want);
}

TEST(WindowKernels, MaxPoolCeilMode) {
  // SqueezeNet 1.1: 3x3 stride 2, ceil mode, no padding (111 -> 55, 55 -> 27, 27 -> 13).
  for (int64_t w : {111, 55, 27, 13, 8})
    checkPool({PoolKind::Max, 2, 9, w, 3, 2, {0, 0, 0, 0}, true, false});
  // ResNet: 3x3 stride 2 pads 1 (112 -> 56).
  checkPool({PoolKind::Max, 2, 8, 112, 3, 2, {1, 1, 1, 1}, false, false});
  checkPool({PoolKind::Max, 2, 9, 30, 3, 2, {1, 1, 1, 1}, true, false});
  checkPool({PoolKind::Max, 3, 7, 20, 3, 1, {1, 1, 1, 1}, false, false});
  checkPool({PoolKind::Max, 2, 6, 3, 2, 2, {0, 0, 0, 0}, false, false});
  checkPool({PoolKind::Max, 2, 9, 19, 2, 2, {0, 0, 0, 0}, true, false});
}

TEST(WindowKernels, AveragePoolPadsAndCountIncludePad) {
  for (bool include : {false, true}) {
    checkPool({PoolKind::Average, 2, 9, 21, 3, 2, {1, 1, 1, 1}, false, include});
    checkPool({PoolKind::Average, 2, 9, 21, 3, 2, {1, 1, 1, 1}, true, include});
    checkPool({PoolKind::Average, 2, 8, 35, 3, 1, {1, 1, 1, 1}, false, include});
    checkPool({PoolKind::Average, 2, 8, 14, 5, 1, {2, 2, 2, 2}, false, include});
    checkPool({PoolKind::Average, 2, 8, 22, 3, 2, {0, 1, 1, 0}, true, include});
    checkPool({PoolKind::Average, 2, 8, 7, 3, 1, {1, 1, 1, 1}, false, include});  // one 8-lane tile
  }
  checkPool({PoolKind::Average, 2, 8, 16, 2, 2, {0, 0, 0, 0}, false, false});
}

// Pools over 14-row maps and taller ones (one group of rows, or groups and a last one, by the
// target's registers), and a 13-wide row stored under a mask on AVX-512.
TEST(WindowKernels, PoolRowGroupsByRegisters) {
  std::vector<std::string> targets = {"x86_64-v3"};
  if (testing::hostRunsAvx512()) targets.push_back("x86_64-v4");
  for (const std::string& target : targets) {
    SCOPED_TRACE(target);
    checkPool({PoolKind::Max, 2, 28, 28, 3, 2, {1, 1, 1, 1}, false, false}, target);
    checkPool({PoolKind::Max, 2, 27, 27, 3, 2, {0, 0, 0, 0}, true, false}, target);
    checkPool({PoolKind::Average, 2, 14, 14, 3, 1, {1, 1, 1, 1}, false, true}, target);
    checkPool({PoolKind::Average, 2, 17, 13, 3, 1, {1, 1, 1, 1}, false, false}, target);
  }
}

TEST(WindowKernels, PoolsWithFourLanes) {
  checkPool({PoolKind::Max, 2, 9, 27, 3, 2, {0, 0, 0, 0}, true, false}, "x86_64");
  checkPool({PoolKind::Average, 2, 9, 21, 3, 2, {1, 1, 1, 1}, true, true}, "x86_64");
}

// ---- Reductions over trailing axes (GlobalAveragePool) --------------------------------------
void checkTrailingReduce(ReduceKind kind, std::vector<int64_t> shape, size_t reducedAxes,
                         const std::string& target = "host") {
  KernelDesc d;
  d.kind = KernelKind::Reduce;
  d.name = "reduce";
  d.reduceKind = kind;
  d.inputs = {f32(shape)};
  std::vector<int64_t> outShape = shape;
  for (size_t i = shape.size() - reducedAxes; i < shape.size(); ++i) {
    d.axes.push_back(int64_t(i));
    outShape[i] = 1;
  }
  d.output = f32(outShape);
  std::vector<float> x = randomFloats(size_t(product(shape)), 31, -3.0f, 2.0f);
  int64_t inner = 1;
  for (size_t i = shape.size() - reducedAxes; i < shape.size(); ++i) inner *= shape[i];
  std::vector<float> want(x.size() / size_t(inner));
  for (size_t o = 0; o < want.size(); ++o) {
    double sum = 0;
    float best = kind == ReduceKind::Max ? -INFINITY : INFINITY;
    for (int64_t i = 0; i < inner; ++i) {
      float v = x[o * size_t(inner) + size_t(i)];
      sum += v;
      best = kind == ReduceKind::Max ? std::max(best, v) : std::min(best, v);
    }
    want[o] = kind == ReduceKind::Sum    ? float(sum)
              : kind == ReduceKind::Mean ? float(sum / double(inner))
                                         : best;
  }
  expectClose(runKernel(d, {x}, {1, 3, 1000}, target), want);
}

TEST(WindowKernels, GlobalAveragePoolAndTrailingReductions) {
  // SqueezeNet's 1000 x 13 x 13 (169 = 21 vectors + a masked one), ResNet's 512 x 7 x 7,
  // MobileNet's 1280 x 7 x 7 (scaled down), a run of exactly one vector, the last axis only.
  checkTrailingReduce(ReduceKind::Mean, {1, 40, 13, 13}, 2);
  checkTrailingReduce(ReduceKind::Mean, {2, 24, 7, 7}, 2);
  checkTrailingReduce(ReduceKind::Sum, {3, 2, 8}, 1);
  checkTrailingReduce(ReduceKind::Max, {5, 37}, 1);
  checkTrailingReduce(ReduceKind::Min, {4, 3, 5, 5}, 3);
  checkTrailingReduce(ReduceKind::Mean, {1, 6, 3}, 1);  // narrower than 4 lanes: plain loop
  checkTrailingReduce(ReduceKind::Mean, {1, 9, 13, 13}, 2, "x86_64");
}

}  // namespace
}  // namespace kiln::codegen
