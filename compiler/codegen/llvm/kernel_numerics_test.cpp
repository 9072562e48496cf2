// Kernel numerics: each op family is generated for the host, loaded with dlopen, run on
// seeded random inputs (with several workgroup splits) and compared with a straightforward
// C++ reference computed here.
#include <gtest/gtest.h>

#include <cmath>

#include "test_support.h"

namespace kiln::codegen {
namespace {

using testing::expectClose;
using testing::f32;
using testing::product;
using testing::randomFloats;
using testing::runKernel;

// ---- Convolution ---------------------------------------------------------------------------
struct ConvCase {
  int64_t n, c, h, w, oc, kh, kw, groups;
  std::array<int64_t, 2> strides, dilations;
  std::array<int64_t, 4> pads;
  bool bias;
  Activation act;
};

std::vector<float> referenceConv(const ConvCase& t, const std::vector<float>& x,
                                 const std::vector<float>& w, const std::vector<float>& b,
                                 int64_t oh, int64_t ow) {
  std::vector<float> y(t.n * t.oc * oh * ow);
  int64_t cg = t.c / t.groups, ocg = t.oc / t.groups;
  for (int64_t n = 0; n < t.n; ++n)
    for (int64_t o = 0; o < t.oc; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = t.bias ? b[o] : 0.0;
          int64_t g = o / ocg;
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t ki = 0; ki < t.kh; ++ki)
              for (int64_t kj = 0; kj < t.kw; ++kj) {
                int64_t ih = i * t.strides[0] - t.pads[0] + ki * t.dilations[0];
                int64_t iw = j * t.strides[1] - t.pads[1] + kj * t.dilations[1];
                if (ih < 0 || ih >= t.h || iw < 0 || iw >= t.w) continue;
                acc += double(x[((n * t.c + g * cg + ic) * t.h + ih) * t.w + iw]) *
                       w[((o * cg + ic) * t.kh + ki) * t.kw + kj];
              }
          float v = static_cast<float>(acc);
          if (t.act == Activation::Relu) v = std::max(v, 0.0f);
          y[((n * t.oc + o) * oh + i) * ow + j] = v;
        }
  return y;
}

void checkConv(const ConvCase& t, const std::string& target = "host") {
  int64_t oh = (t.h + t.pads[0] + t.pads[2] - t.dilations[0] * (t.kh - 1) - 1) / t.strides[0] + 1;
  int64_t ow = (t.w + t.pads[1] + t.pads[3] - t.dilations[1] * (t.kw - 1) - 1) / t.strides[1] + 1;
  KernelDesc d;
  d.kind = KernelKind::Conv;
  d.name = "conv";
  d.inputs = {f32({t.n, t.c, t.h, t.w}), f32({t.oc, t.c / t.groups, t.kh, t.kw})};
  if (t.bias) d.inputs.push_back(f32({t.oc}));
  d.output = f32({t.n, t.oc, oh, ow});
  d.strides = t.strides;
  d.dilations = t.dilations;
  d.pads = t.pads;
  d.groups = t.groups;
  d.epilogue.act = t.act;
  std::vector<float> x = randomFloats(product(d.inputs[0].shape), 1);
  std::vector<float> w = randomFloats(product(d.inputs[1].shape), 2);
  std::vector<float> b = randomFloats(t.oc, 3);
  std::vector<std::vector<float>> inputs = {x, w};
  if (t.bias) inputs.push_back(b);
  expectClose(runKernel(d, inputs, {1, 3, 1000}, target), referenceConv(t, x, w, b, oh, ow));
}

TEST(KernelNumerics, ConvPlain) {
  checkConv({1, 3, 8, 9, 4, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::None});
}
TEST(KernelNumerics, ConvStridedPaddedDilated) {
  checkConv({2, 2, 11, 10, 3, 3, 2, 1, {2, 3}, {2, 1}, {1, 0, 2, 2}, false, Activation::Relu});
  checkConv({1, 1, 5, 5, 1, 1, 1, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, true, Activation::None});
}
TEST(KernelNumerics, ConvWideKernelLoopsOverColumns) {
  // 20 kernel columns (above kMaxUnrolledWindowColumns) and width stride 3 (plain kernel):
  // the column loop runs at run time with ranges computed there.
  checkConv({1, 2, 3, 70, 2, 1, 20, 1, {1, 3}, {1, 2}, {0, 7, 0, 5}, true, Activation::None});
}
TEST(KernelNumerics, ConvGrouped) {
  checkConv({1, 4, 7, 6, 6, 3, 3, 2, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu});
}
TEST(KernelNumerics, ConvDepthwise) {
  checkConv({1, 5, 9, 9, 5, 3, 3, 5, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, Activation::None});
}

TEST(KernelNumerics, ConvWideRowsUseRegisterTiles) {
  // Rows wide enough for several vector tiles, leftovers and padded edges; output-channel
  // blocks of 4 (OCG 8), 2 (OCG 6) and 1 (OCG 3, depthwise), dilation along both axes.
  checkConv({1, 8, 5, 40, 8, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu});
  checkConv({2, 6, 3, 37, 6, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, Activation::None});
  checkConv({1, 4, 6, 29, 12, 3, 5, 2, {2, 1}, {2, 2}, {2, 3, 1, 4}, false, Activation::None});
  checkConv({1, 3, 4, 70, 9, 2, 3, 3, {1, 1}, {1, 3}, {0, 2, 1, 2}, true, Activation::Relu});
  checkConv({1, 5, 7, 33, 5, 3, 3, 5, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::None});
  // Stride 2 along the width: even columns of double-width loads.
  checkConv({1, 4, 9, 66, 8, 3, 3, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu});
  checkConv({1, 3, 20, 61, 4, 7, 7, 1, {2, 2}, {1, 1}, {3, 3, 3, 3}, true, Activation::None});
  checkConv({1, 6, 8, 45, 6, 3, 3, 6, {1, 2}, {1, 2}, {0, 2, 1, 1}, false, Activation::None});
  checkConv({1, 8, 4, 40, 16, 1, 1, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, true, Activation::None});
  // Narrow rows: masked edge tiles only (OW 7, 3, 14; wide padding; stride 2).
  checkConv({1, 8, 7, 7, 8, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu});
  checkConv({1, 4, 3, 3, 4, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::None});
  checkConv({1, 2, 14, 14, 2, 5, 5, 2, {1, 1}, {2, 2}, {4, 4, 4, 4}, true, Activation::None});
  checkConv({1, 4, 14, 14, 8, 3, 3, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, false, Activation::None});
  checkConv({1, 3, 2, 2, 4, 3, 3, 1, {1, 1}, {1, 1}, {2, 2, 2, 2}, true, Activation::None});
}

TEST(KernelNumerics, ConvTilesWithFourLanes) {
  // x86-64-v2 (SSE: 4 lanes, masked accesses scalarised by LLVM).
  checkConv({1, 8, 5, 40, 8, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu},
            "x86_64");
  checkConv({1, 4, 9, 23, 8, 3, 3, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, Activation::None},
            "x86_64");
  checkConv({1, 8, 7, 7, 8, 3, 3, 8, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::None},
            "x86_64");
}

// ---- Matrix products -------------------------------------------------------------------------
TEST(KernelNumerics, GemmTransposedWithBiasAndScales) {
  const int64_t M = 5, K = 7, N = 6;
  KernelDesc d;
  d.kind = KernelKind::MatMul;
  d.inputs = {f32({K, M}), f32({N, K}), f32({N})};  // transA, transB, bias broadcast over rows
  d.output = f32({M, N});
  d.transA = d.transB = true;
  d.alpha = 0.5f;
  d.beta = 2.0f;
  d.epilogue.act = Activation::Relu;
  auto a = randomFloats(K * M, 4), b = randomFloats(N * K, 5), c = randomFloats(N, 6);
  std::vector<float> want(M * N);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += double(a[k * M + m]) * b[n * K + k];
      want[m * N + n] = std::max(0.0f, static_cast<float>(0.5 * acc + 2.0 * c[n]));
    }
  expectClose(runKernel(d, {a, b, c}, {1, 2, 9}), want);
}

TEST(KernelNumerics, MatMulBroadcastBatch) {
  // [2,1,3,4] x [3,4,5] -> [2,3,3,5]
  KernelDesc d;
  d.kind = KernelKind::MatMul;
  d.inputs = {f32({2, 1, 3, 4}), f32({3, 4, 5})};
  d.output = f32({2, 3, 3, 5});
  auto a = randomFloats(24, 7), b = randomFloats(60, 8);
  std::vector<float> want(90);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int m = 0; m < 3; ++m)
        for (int n = 0; n < 5; ++n) {
          double acc = 0;
          for (int k = 0; k < 4; ++k)
            acc += double(a[(i * 3 + m) * 4 + k]) * b[(j * 4 + k) * 5 + n];
          want[((i * 3 + j) * 3 + m) * 5 + n] = static_cast<float>(acc);
        }
  expectClose(runKernel(d, {a, b}, {1, 4}), want);
}

// ---- Elementwise -----------------------------------------------------------------------------
TEST(KernelNumerics, BroadcastingArithmetic) {
  // (x[2,3,4] + y[3,1]) * z[4] - 0.5, then relu
  KernelDesc d;
  d.kind = KernelKind::Elementwise;
  d.inputs = {f32({2, 3, 4}), f32({3, 1}), f32({4})};
  d.output = f32({2, 3, 4});
  ElementwiseExpr& e = d.expr;
  int x = e.addInput(0, ElemType::F32), y = e.addInput(1, ElemType::F32);
  int z = e.addInput(2, ElemType::F32);
  int t = e.addBinary(ExprOp::Mul, e.addBinary(ExprOp::Add, x, y), z);
  t = e.addBinary(ExprOp::Sub, t, e.addConstant(0.5, ElemType::F32));
  e.addUnary(ExprOp::Relu, t);
  auto xs = randomFloats(24, 9), ys = randomFloats(3, 10), zs = randomFloats(4, 11);
  std::vector<float> want(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        int at = (i * 3 + j) * 4 + k;
        want[at] = std::max(0.0f, (xs[at] + ys[j]) * zs[k] - 0.5f);
      }
  expectClose(runKernel(d, {xs, ys, zs}, {1, 5, 100}), want);
}

TEST(KernelNumerics, ScaleShiftPerChannel) {
  // BatchNorm as scale/shift: x[1,3,4,5] * s[3,1,1] + b[3,1,1]
  KernelDesc d;
  d.kind = KernelKind::Elementwise;
  d.inputs = {f32({1, 3, 4, 5}), f32({3, 1, 1}), f32({3, 1, 1})};
  d.output = f32({1, 3, 4, 5});
  ElementwiseExpr& e = d.expr;
  e.addBinary(ExprOp::Add,
              e.addBinary(ExprOp::Mul, e.addInput(0, ElemType::F32), e.addInput(1, ElemType::F32)),
              e.addInput(2, ElemType::F32));
  auto x = randomFloats(60, 12), s = randomFloats(3, 13), b = randomFloats(3, 14);
  std::vector<float> want(60);
  for (int i = 0; i < 60; ++i) want[i] = x[i] * s[i / 20] + b[i / 20];
  expectClose(runKernel(d, {x, s, b}, {1, 2}), want);
}

// One unary function over [-lo, hi] against the C library.
void checkUnary(ExprOp op, double (*reference)(double), float lo, float hi, float atol, float rtol,
                double alpha = 0, double beta = 0) {
  KernelDesc d;
  d.kind = KernelKind::Elementwise;
  d.inputs = {f32({1001})};
  d.output = f32({1001});
  d.expr.addUnary(op, d.expr.addInput(0, ElemType::F32), alpha, beta);
  std::vector<float> x(1001), want(1001);
  for (int i = 0; i <= 1000; ++i) {
    x[i] = lo + (hi - lo) * static_cast<float>(i) / 1000.0f;
    want[i] = static_cast<float>(reference(x[i]));
  }
  expectClose(runKernel(d, {x}, {1, 3}), want, atol, rtol);
}

TEST(KernelNumerics, Activations) {
  checkUnary(
      ExprOp::Relu, [](double v) { return std::max(v, 0.0); }, -3, 3, 0, 0);
  checkUnary(
      ExprOp::Sigmoid, [](double v) { return 1 / (1 + std::exp(-v)); }, -20, 20, 1e-7f, 1e-5f);
  checkUnary(
      ExprOp::Tanh, [](double v) { return std::tanh(v); }, -10, 10, 1e-7f, 1e-5f);
  checkUnary(
      ExprOp::Tanh, [](double v) { return std::tanh(v); }, -1e-3f, 1e-3f, 1e-9f, 1e-5f);
  checkUnary(
      ExprOp::Exp, [](double v) { return std::exp(v); }, -80, 80, 1e-30f, 1e-5f);
  checkUnary(
      ExprOp::Erf, [](double v) { return std::erf(v); }, -4, 4, 2e-7f, 1e-5f);
  checkUnary(
      ExprOp::Sqrt, [](double v) { return std::sqrt(v); }, 0, 100, 1e-6f, 1e-6f);
  checkUnary(
      ExprOp::LeakyRelu, [](double v) { return v < 0 ? 0.1 * v : v; }, -3, 3, 1e-7f, 1e-6f, 0.1);
  checkUnary(
      ExprOp::Clip, [](double v) { return std::min(std::max(v, 0.0), 6.0); }, -10, 10, 0, 0, 0.0,
      6.0);
}

TEST(KernelNumerics, IntegerAndCast) {
  // i64 shape arithmetic: (a + b) * 2, and f32 -> i32 -> f32 truncation.
  KernelDesc d;
  d.kind = KernelKind::Elementwise;
  d.inputs = {{ElemType::I64, {4}}, {ElemType::I64, {1}}};
  d.output = {ElemType::I64, {4}};
  ElementwiseExpr& e = d.expr;
  e.addBinary(ExprOp::Mul,
              e.addBinary(ExprOp::Add, e.addInput(0, ElemType::I64), e.addInput(1, ElemType::I64)),
              e.addConstant(2, ElemType::I64));
  CodegenResult r = generateKernels({d}, testing::hostTarget());
  testing::LoadedLibrary lib(r.bytes);
  std::vector<int64_t> a = {1, -2, 3, 1LL << 40}, b = {5}, out(4);
  lib.run(0, {a.data(), b.data(), out.data()});
  EXPECT_EQ(out, (std::vector<int64_t>{12, 6, 16, (1LL << 41) + 10}));

  KernelDesc c;
  c.kind = KernelKind::Elementwise;
  c.inputs = {f32({4})};
  c.output = f32({4});
  c.expr.addCast(c.expr.addCast(c.expr.addInput(0, ElemType::F32), ElemType::I32), ElemType::F32);
  expectClose(runKernel(c, {{1.7f, -2.5f, 0.2f, 100.9f}}), {1, -2, 0, 100}, 0, 0);
}

// ---- Pooling and reductions ------------------------------------------------------------------
void checkPool(PoolKind kind, bool includePad, std::array<int64_t, 4> pads) {
  const int64_t N = 1, C = 2, H = 7, W = 8, KH = 3, KW = 3, S = 2;
  int64_t OH = (H + pads[0] + pads[2] - KH) / S + 1, OW = (W + pads[1] + pads[3] - KW) / S + 1;
  KernelDesc d;
  d.kind = KernelKind::Pool;
  d.poolKind = kind;
  d.countIncludePad = includePad;
  d.kernelShape = {KH, KW};
  d.strides = {S, S};
  d.pads = pads;
  d.inputs = {f32({N, C, H, W})};
  d.output = f32({N, C, OH, OW});
  auto x = randomFloats(N * C * H * W, 15);
  std::vector<float> want(N * C * OH * OW);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t i = 0; i < OH; ++i)
      for (int64_t j = 0; j < OW; ++j) {
        float best = -INFINITY;
        double sum = 0;
        int count = 0;
        for (int64_t ki = 0; ki < KH; ++ki)
          for (int64_t kj = 0; kj < KW; ++kj) {
            int64_t ih = i * S - pads[0] + ki, iw = j * S - pads[1] + kj;
            bool inPadded =
                ih >= -pads[0] && ih < H + pads[2] && iw >= -pads[1] && iw < W + pads[3];
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) {
              if (includePad && inPadded) ++count;
              continue;
            }
            float v = x[(c * H + ih) * W + iw];
            best = std::max(best, v);
            sum += v;
            ++count;
          }
        want[(c * OH + i) * OW + j] =
            kind == PoolKind::Max ? best : static_cast<float>(sum / count);
      }
  expectClose(runKernel(d, {x}, {1, 4}), want);
}

TEST(KernelNumerics, MaxPool) { checkPool(PoolKind::Max, false, {1, 1, 1, 1}); }

// A wide 1-D window (like ONNX's test_MaxPool1d_stride_padding_dilation, scaled down): more
// kernel columns than are unrolled, dilated, strided and padded on both sides.
void checkWidePool(PoolKind kind, bool includePad) {
  const int64_t C = 2, W = 400, KW = 40, S = 7, DIL = 3, PL = 20, PR = 20;
  const int64_t OW = (W + PL + PR - DIL * (KW - 1) - 1) / S + 1;
  KernelDesc d;
  d.kind = KernelKind::Pool;
  d.poolKind = kind;
  d.countIncludePad = includePad;
  d.kernelShape = {1, KW};
  d.strides = {1, S};
  d.dilations = {1, DIL};
  d.pads = {0, PL, 0, PR};
  d.inputs = {f32({1, C, 1, W})};
  d.output = f32({1, C, 1, OW});
  auto x = randomFloats(C * W, 16);
  std::vector<float> want(C * OW);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t j = 0; j < OW; ++j) {
      float best = -INFINITY;
      double sum = 0;
      int count = 0;
      for (int64_t k = 0; k < KW; ++k) {
        int64_t iw = j * S - PL + k * DIL;
        if (iw < 0 || iw >= W) {
          if (includePad && iw < W + PR) ++count;
          continue;
        }
        best = std::max(best, x[c * W + iw]);
        sum += x[c * W + iw];
        ++count;
      }
      want[c * OW + j] = kind == PoolKind::Max ? best : static_cast<float>(sum / count);
    }
  expectClose(runKernel(d, {x}, {1, 3}), want);
}

TEST(KernelNumerics, WideWindowPool) {
  checkWidePool(PoolKind::Max, false);
  checkWidePool(PoolKind::Average, false);
  checkWidePool(PoolKind::Average, true);
}
TEST(KernelNumerics, AveragePool) {
  checkPool(PoolKind::Average, false, {1, 1, 1, 1});
  checkPool(PoolKind::Average, true, {1, 0, 1, 1});
}

TEST(KernelNumerics, GlobalAveragePoolAsReduceMean) {
  KernelDesc d;
  d.kind = KernelKind::Reduce;
  d.reduceKind = ReduceKind::Mean;
  d.axes = {2, 3};
  d.inputs = {f32({2, 3, 4, 5})};
  d.output = f32({2, 3, 1, 1});
  auto x = randomFloats(120, 16);
  std::vector<float> want(6);
  for (int p = 0; p < 6; ++p) {
    double s = 0;
    for (int i = 0; i < 20; ++i) s += x[p * 20 + i];
    want[p] = static_cast<float>(s / 20);
  }
  expectClose(runKernel(d, {x}, {1, 4}), want);
}

TEST(KernelNumerics, ReduceMaxOverMiddleAxis) {
  KernelDesc d;
  d.kind = KernelKind::Reduce;
  d.reduceKind = ReduceKind::Max;
  d.axes = {1};
  d.inputs = {f32({2, 3, 4})};
  d.output = f32({2, 4});
  auto x = randomFloats(24, 17);
  std::vector<float> want(8);
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k) {
      float m = -INFINITY;
      for (int j = 0; j < 3; ++j) m = std::max(m, x[(i * 3 + j) * 4 + k]);
      want[i * 4 + k] = m;
    }
  expectClose(runKernel(d, {x}), want, 0, 0);
}

TEST(KernelNumerics, SoftmaxAndLogSoftmax) {
  for (bool log : {false, true}) {
    KernelDesc d;
    d.kind = KernelKind::Softmax;
    d.axis = 1;
    d.logSoftmax = log;
    d.inputs = {f32({2, 5, 3})};
    d.output = f32({2, 5, 3});
    auto x = randomFloats(30, 18, -5, 5);
    std::vector<float> want(30);
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 3; ++k) {
        double m = -INFINITY, s = 0;
        for (int j = 0; j < 5; ++j) m = std::max<double>(m, x[(i * 5 + j) * 3 + k]);
        for (int j = 0; j < 5; ++j) s += std::exp(x[(i * 5 + j) * 3 + k] - m);
        for (int j = 0; j < 5; ++j) {
          double v = x[(i * 5 + j) * 3 + k] - m;
          want[(i * 5 + j) * 3 + k] = static_cast<float>(log ? v - std::log(s) : std::exp(v) / s);
        }
      }
    expectClose(runKernel(d, {x}, {1, 4}), want, 1e-6f, 1e-5f);
  }
}

TEST(KernelNumerics, SoftmaxRowsInVectors) {
  // Along the last axis: rows read in vectors (emitSoftmaxRows), of lengths with and without
  // a masked last vector (8, 37, 512), values up to 80 (exp would overflow without the max
  // taken out first) and a row with one large value; against double precision, on every
  // vector target this machine runs.
  for (int64_t A : {8, 37, 512})
    for (bool log : {false, true}) {
      KernelDesc d;
      d.kind = KernelKind::Softmax;
      d.axis = 1;
      d.logSoftmax = log;
      d.inputs = {f32({3, A})};
      d.output = f32({3, A});
      auto x = randomFloats(size_t(3 * A), 19, -80, 80);
      x[size_t(A + 5)] = 1000.0f;  // row 1: one element takes (nearly) all of the mass
      std::vector<float> want(size_t(3 * A));
      for (int64_t r = 0; r < 3; ++r) {
        double m = -INFINITY, s = 0;
        for (int64_t j = 0; j < A; ++j) m = std::max<double>(m, x[size_t(r * A + j)]);
        for (int64_t j = 0; j < A; ++j) s += std::exp(double(x[size_t(r * A + j)]) - m);
        for (int64_t j = 0; j < A; ++j) {
          double v = double(x[size_t(r * A + j)]) - m;
          want[size_t(r * A + j)] = float(log ? v - std::log(s) : std::exp(v) / s);
        }
      }
      for (const std::string& target : testing::runnableVectorTargets()) {
        SCOPED_TRACE(target + ", A = " + std::to_string(A) + (log ? ", log" : ""));
        expectClose(testing::runKernel(d, {x}, {1, 2}, target), want, 1e-6f, 1e-5f);
      }
    }
}

// ---- Data movement -----------------------------------------------------------------------------
TEST(KernelNumerics, Transpose) {
  KernelDesc d;
  d.kind = KernelKind::Transpose;
  d.perm = {0, 2, 3, 1};
  d.inputs = {f32({2, 3, 4, 5})};
  d.output = f32({2, 4, 5, 3});
  auto x = randomFloats(120, 19);
  std::vector<float> want(120);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c)
        for (int e = 0; e < 5; ++e)
          want[((a * 4 + c) * 5 + e) * 3 + b] = x[((a * 3 + b) * 4 + c) * 5 + e];
  expectClose(runKernel(d, {x}, {1, 3}), want, 0, 0);
}

TEST(KernelNumerics, Concat) {
  KernelDesc d;
  d.kind = KernelKind::Concat;
  d.axis = 1;
  d.inputs = {f32({2, 1, 3}), f32({2, 2, 3})};
  d.output = f32({2, 3, 3});
  std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = randomFloats(12, 20);
  std::vector<float> want;
  for (int i = 0; i < 2; ++i) {
    want.insert(want.end(), a.begin() + i * 3, a.begin() + i * 3 + 3);
    want.insert(want.end(), b.begin() + i * 6, b.begin() + i * 6 + 6);
  }
  expectClose(runKernel(d, {a, b}, {1, 2}), want, 0, 0);
}

TEST(KernelNumerics, SliceWithStepsAndReverse) {
  // x[4,6]: rows 1..3 step 2, columns reversed from 5 with step -2.
  KernelDesc d;
  d.kind = KernelKind::Slice;
  d.inputs = {f32({4, 6})};
  d.output = f32({2, 3});
  d.starts = {1, 5};
  d.steps = {2, -2};
  std::vector<float> x(24);
  for (int i = 0; i < 24; ++i) x[i] = static_cast<float>(i);
  expectClose(runKernel(d, {x}), {11, 9, 7, 23, 21, 19}, 0, 0);
}

TEST(KernelNumerics, GatherWithNegativeIndices) {
  KernelDesc d;
  d.kind = KernelKind::Gather;
  d.axis = 1;
  d.inputs = {f32({2, 4, 2}), {ElemType::I64, {3}}};
  d.output = f32({2, 3, 2});
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i);
  std::vector<int64_t> idx = {3, 0, -3};
  CodegenResult r = generateKernels({d}, testing::hostTarget());
  testing::LoadedLibrary lib(r.bytes);
  std::vector<float> out(12);
  lib.run(0, {x.data(), idx.data(), out.data()}, 2);
  EXPECT_EQ(out, (std::vector<float>{6, 7, 0, 1, 2, 3, 14, 15, 8, 9, 10, 11}));
}

TEST(KernelNumerics, GatherRunsShortAndLong) {
  // Along the last axis (runs of one element: a row per item) and along an axis with runs of
  // 8 (an item per index); negative indices from the end, out-of-range ones clamped; split
  // over 1 and 3 workgroups.
  std::vector<int64_t> idx = {4, 0, -1, 2, 2, 9};
  {
    KernelDesc d;
    d.kind = KernelKind::Gather;
    d.axis = 1;
    d.inputs = {f32({3, 5}), {ElemType::I64, {6}}};
    d.output = f32({3, 6});
    std::vector<float> x(15);
    for (int i = 0; i < 15; ++i) x[i] = float(i / 5 * 10 + i % 5);  // row r, column c: 10r + c
    CodegenResult r = generateKernels({d}, testing::hostTarget());
    testing::LoadedLibrary lib(r.bytes);
    for (uint32_t workgroups : {1u, 3u}) {
      std::vector<float> out(18, -1.0f);
      lib.run(0, {x.data(), idx.data(), out.data()}, workgroups);
      EXPECT_EQ(out, (std::vector<float>{4, 0, 4, 2, 2, 4, 14, 10, 14, 12, 12, 14, 24, 20, 24,
                                         22, 22, 24}))
          << workgroups << " workgroups";
    }
  }
  {
    KernelDesc d;
    d.kind = KernelKind::Gather;
    d.axis = 0;
    d.inputs = {f32({5, 8}), {ElemType::I64, {6}}};
    d.output = f32({6, 8});
    std::vector<float> x(40);
    for (int i = 0; i < 40; ++i) x[i] = float(i);
    CodegenResult r = generateKernels({d}, testing::hostTarget());
    testing::LoadedLibrary lib(r.bytes);
    std::vector<float> want;
    for (int64_t row : {4, 0, 4, 2, 2, 4})
      for (int j = 0; j < 8; ++j) want.push_back(float(row * 8 + j));
    for (uint32_t workgroups : {1u, 3u}) {
      std::vector<float> out(48, -1.0f);
      lib.run(0, {x.data(), idx.data(), out.data()}, workgroups);
      EXPECT_EQ(out, want) << workgroups << " workgroups";
    }
  }
}

TEST(KernelNumerics, GatherWithFusedChain) {
  // Gather(x, idx) * w + r, the chain fused into the gather (a Resize tap): along the last
  // axis (short runs, a row per item), along axis 1 (runs of 8: an output row each) and along
  // axis 0 (runs of 24: three output rows each, index 2 clamped to 1); w broadcasts along the
  // gathered axis, r is a tensor of the output's shape.
  for (int64_t axis : {2, 1, 0}) {
    const std::vector<int64_t> xs = {2, 3, 8};
    std::vector<int64_t> ys = xs;
    ys[size_t(axis)] = 4;
    std::vector<int64_t> idx = {2, 0, -1, 1};
    KernelDesc d;
    d.kind = KernelKind::Gather;
    d.axis = axis;
    std::vector<int64_t> ws(3 - size_t(axis), 1);
    ws[0] = 4;  // [4] or [4, 1]
    d.inputs = {f32(xs), {ElemType::I64, {4}}, f32(ws), f32(ys)};
    d.output = f32(ys);
    ElementwiseExpr& e = d.epilogue.chain;
    ExprNode result;
    result.op = ExprOp::Result;
    e.nodes.push_back(result);
    e.addBinary(ExprOp::Add, e.addBinary(ExprOp::Mul, 0, e.addInput(2, ElemType::F32)),
                e.addInput(3, ElemType::F32));
    d.epilogue.inputCount = 2;
    d.epilogue.shape = ys;
    auto x = randomFloats(48, 31);
    auto w = randomFloats(4, 32);
    auto r = randomFloats(size_t(product(ys)), 33);
    std::vector<float> want;
    for (int64_t a = 0; a < ys[0]; ++a)
      for (int64_t b = 0; b < ys[1]; ++b)
        for (int64_t c = 0; c < ys[2]; ++c) {
          int64_t k = axis == 2 ? c : axis == 1 ? b : a;
          int64_t i = idx[size_t(k)] < 0 ? idx[size_t(k)] + xs[size_t(axis)] : idx[size_t(k)];
          i = std::min(i, xs[size_t(axis)] - 1);
          float v = x[size_t(((axis == 0 ? i : a) * xs[1] + (axis == 1 ? i : b)) * xs[2] +
                             (axis == 2 ? i : c))];
          want.push_back(v * w[size_t(k)] + r[want.size()]);
        }
    CodegenResult lib = generateKernels({d}, testing::hostTarget());
    testing::LoadedLibrary loaded(lib.bytes);
    for (uint32_t workgroups : {1u, 2u}) {
      std::vector<float> out(want.size(), -1.0f);
      loaded.run(0, {x.data(), idx.data(), w.data(), r.data(), out.data()}, workgroups);
      expectClose(out, want, 1e-6f, 1e-6f);
    }
  }
}

TEST(KernelNumerics, PadModes) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6};  // [2,3]
  auto pad = [&](PadMode mode) {
    KernelDesc d;
    d.kind = KernelKind::Pad;
    d.padMode = mode;
    d.padValue = -1;
    d.starts = {1, 2};  // before; after = {0, 1}
    d.inputs = {f32({2, 3})};
    d.output = f32({3, 6});
    return runKernel(d, {x}, {1, 2});
  };
  expectClose(pad(PadMode::Constant),
              {-1, -1, -1, -1, -1, -1, -1, -1, 1, 2, 3, -1, -1, -1, 4, 5, 6, -1}, 0, 0);
  expectClose(pad(PadMode::Edge), {1, 1, 1, 2, 3, 3, 1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6}, 0, 0);
  expectClose(pad(PadMode::Reflect), {6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5}, 0, 0);
}

// ---- Library structure
// ---------------------------------------------------------------------------
TEST(KernelLibrary, IdenticalKernelsAreMerged) {
  KernelDesc relu;
  relu.kind = KernelKind::Elementwise;
  relu.inputs = {f32({16})};
  relu.output = f32({16});
  relu.expr.addUnary(ExprOp::Relu, relu.expr.addInput(0, ElemType::F32));
  KernelDesc other = relu;
  other.name = "second relu";
  KernelDesc sigmoid = relu;
  sigmoid.expr.nodes.back().op = ExprOp::Sigmoid;
  CodegenResult r = generateKernels({relu, sigmoid, other}, testing::hostTarget());
  EXPECT_EQ(r.kernelCount, 2u);
  EXPECT_EQ(r.kernelIndex, (std::vector<uint32_t>{0, 1, 0}));
  testing::LoadedLibrary lib(r.bytes);
  EXPECT_EQ(lib.library().abi_version, KILN_KERNEL_ABI_VERSION);
  EXPECT_EQ(lib.library().kernel_count, 2u);
  // Leaf kernels without spills may use no stack at all on x86-64.
  EXPECT_LT(r.stackBoundBytes, 4096u);
}

TEST(KernelLibrary, InvalidDescriptionIsACompileError) {
  KernelDesc d;
  d.kind = KernelKind::Conv;
  d.name = "conv_7";
  d.inputs = {f32({1, 3, 4, 4}), f32({2, 2, 1, 1})};
  d.output = f32({1, 2, 4, 4});
  try {
    generateKernels({d}, testing::hostTarget());
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "cannot generate conv kernel 'conv_7': channels do not match groups");
  }
}

}  // namespace
}  // namespace kiln::codegen
