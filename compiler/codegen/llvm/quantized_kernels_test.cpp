// Quantized kernels and the fixed-point primitives they use, against an independent C++
// reference written here from TFLite's documented formulas (docs/quantization.md):
// rounding ties, negative values, saturation, zero points, activation clamps, broadcasting,
// per-channel rescales and the i64 accumulation of 16x8 ops. Each kernel is generated for the
// host, loaded with dlopen and run with several workgroup splits (which must agree).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kiln/codegen/target_config.h"
#include "kiln/ir/quant_math.h"
#include "kiln/support/diagnostics.h"
#include "quantized_reference.h"
#include "test_support.h"

namespace kiln::codegen {
namespace {

// The independent reference primitives: quantized_reference.h.
using testing::clampTo;
using testing::refMbqm;
using testing::refMbqm64;
using testing::refRdivpot;
using testing::refSrdhm;

// ---- running generated kernels --------------------------------------------------------------
// Generates the kernel for the host and runs it with every workgroup split.
template <typename Out>
std::vector<Out> run(const KernelDesc& d, std::vector<const void*> inputs) {
  return testing::runEverySplit<Out>(generateKernels({d}, testing::hostTarget()).bytes, d, inputs);
}

using testing::randomInts;

KernelDesc quantKernel(QuantOp op, std::vector<BufferDesc> inputs, BufferDesc output) {
  KernelDesc d;
  d.kind = KernelKind::Quantized;
  d.name = "q";
  d.quant.op = op;
  d.inputs = std::move(inputs);
  d.output = std::move(output);
  return d;
}

// ---- primitives ---------------------------------------------------------------------------

TEST(QuantMath, PrimitivesMatchTheReference) {
  // Hand-checked ties and signs.
  EXPECT_EQ(ir::roundingDivideByPOT(5, 1), 3);    // 2.5 -> 3
  EXPECT_EQ(ir::roundingDivideByPOT(-5, 1), -3);  // -2.5 -> -3
  EXPECT_EQ(ir::roundingDivideByPOT(-3, 1), -2);  // -1.5 -> -2
  EXPECT_EQ(ir::roundingDivideByPOT(7, 2), 2);    // 1.75 -> 2
  EXPECT_EQ(ir::roundingDivideByPOT(-6, 2), -2);  // -1.5 -> -2
  EXPECT_EQ(ir::saturatingRoundingDoublingHighMul(INT32_MIN, INT32_MIN), INT32_MAX);
  EXPECT_EQ(ir::saturatingRoundingDoublingHighMul(1 << 30, 1 << 30), 1 << 29);
  EXPECT_EQ(ir::saturatingRoundingDoublingHighMul(1, 1 << 30), 1);    // 0.5 rounds up
  EXPECT_EQ(ir::saturatingRoundingDoublingHighMul(-1, 1 << 30), 0);   // -0.5 rounds up too
  EXPECT_EQ(ir::saturatingRoundingDoublingHighMul(-3, 1 << 30), -1);  // -1.5 -> -1
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    int32_t a = int32_t(rng()), b = int32_t(rng());
    if (i % 3 == 0) a >>= rng() % 31;
    int e = int(rng() % 32);
    ASSERT_EQ(ir::saturatingRoundingDoublingHighMul(a, b), refSrdhm(a, b)) << a << " " << b;
    ASSERT_EQ(ir::roundingDivideByPOT(a, e), refRdivpot(a, e)) << a << " " << e;
    int32_t m = int32_t(rng() >> 1) | (1 << 30);
    int shift = int(rng() % 40) - 31;
    int32_t x = int32_t(rng()) >> 12;
    ASSERT_EQ(ir::multiplyByQuantizedMultiplier(x, m, std::min(shift, 8)), refMbqm(x, m, std::min(shift, 8)));
    int64_t x64 = int64_t(rng()) << 12 >> 20;
    int s64 = int(rng() % 38) - 31;
    ASSERT_EQ(ir::multiplyByQuantizedMultiplier64(x64, m, s64), refMbqm64(x64, m, s64));
  }
}

TEST(QuantMath, QuantizeMultiplier) {
  auto qm = [](double v) { return ir::quantizeMultiplier(v); };
  EXPECT_EQ(qm(0.5).multiplier, 1 << 30);
  EXPECT_EQ(qm(0.5).shift, 0);
  EXPECT_EQ(qm(1.0).multiplier, 1 << 30);
  EXPECT_EQ(qm(1.0).shift, 1);
  EXPECT_EQ(qm(0.75).multiplier, 1610612736);
  EXPECT_EQ(qm(1.0 / 3.0).multiplier, 1431655765);  // round(2/3 * 2^31)
  EXPECT_EQ(qm(1.0 / 3.0).shift, -1);
  EXPECT_EQ(qm(1.0 - std::ldexp(1.0, -40)).multiplier, 1 << 30);  // rounds up to 2^31
  EXPECT_EQ(qm(1.0 - std::ldexp(1.0, -40)).shift, 1);
  EXPECT_EQ(qm(std::ldexp(1.0, -40)).multiplier, 0);  // shift < -31 flushes to zero
  EXPECT_EQ(qm(0.0).multiplier, 0);
  // TFLite's activation ranges: RELU6 at scale 0.05, zero point -128 -> [-128, -8].
  ir::ActivationRange r = ir::activationRange(ir::FusedActivation::Relu6, ir::DType::I8, 0.05f, -128);
  EXPECT_EQ(r.min, -128);
  EXPECT_EQ(r.max, -8);
  r = ir::activationRange(ir::FusedActivation::Relu, ir::DType::I8, 0.1f, 5);
  EXPECT_EQ(r.min, 5);
  EXPECT_EQ(r.max, 127);
}

TEST(QuantMath, FixedPointExpAndReciprocal) {
  EXPECT_EQ(ir::expOnNegativeValuesQ5(0), INT32_MAX);
  for (double v : {-0.01, -0.25, -0.3, -1.0, -2.5, -7.9, -15.0, -31.0}) {
    int32_t a = int32_t(std::lround(v * double(1 << 26)));
    double got = ir::expOnNegativeValuesQ5(a) / 2147483648.0;
    EXPECT_NEAR(got, std::exp(v), 2e-7 + 1e-6 * std::exp(v)) << v;
  }
  for (double v : {0.0, 0.1, 0.5, 0.9, 0.999}) {
    int32_t a = int32_t(std::lround(v * 2147483647.0));
    double got = ir::oneOverOnePlusXForXIn01(a) / 2147483648.0;
    EXPECT_NEAR(got, 1.0 / (1.0 + v), 1e-7) << v;
  }
}

TEST(QuantMath, Int8LogisticAndTanhTablesTrackFloat) {
  EXPECT_EQ(ir::logisticFixedPoint(0, 4), 1 << 30);
  EXPECT_EQ(ir::tanhFixedPoint(0, 4), 0);
  for (auto [scale, zp] : std::vector<std::pair<float, int32_t>>{{0.1f, 3}, {0.0625f, -128}, {0.02f, 0}}) {
    std::vector<int32_t> lg = ir::int8LogisticTable(scale, zp), th = ir::int8TanhTable(scale, zp);
    ASSERT_EQ(lg.size(), 256u);
    for (int32_t x = -128; x <= 127; ++x) {
      double real = double(scale) * (x - zp);
      double wantL = std::min(127.0, std::round(256.0 / (1.0 + std::exp(-real))) - 128);
      double wantT = std::clamp(std::round(128.0 * std::tanh(real)), -128.0, 127.0);
      EXPECT_NEAR(lg[size_t(x + 128)], wantL, 1.0) << scale << " " << x;
      EXPECT_NEAR(th[size_t(x + 128)], wantT, 1.0) << scale << " " << x;
      if (x > -128) {
        EXPECT_GE(lg[size_t(x + 128)], lg[size_t(x + 127)]);
        EXPECT_GE(th[size_t(x + 128)], th[size_t(x + 127)]);
      }
    }
  }
}

TEST(QuantMath, Int8HardSwishTableTracksFloat) {
  for (auto [si, zi, so, zo] : std::vector<std::tuple<float, int32_t, float, int32_t>>{
           {0.05f, 3, 0.04f, -100}, {0.1f, -128, 0.08f, -90}, {0.02f, 0, 0.02f, -20}}) {
    std::vector<int32_t> t = ir::int8HardSwishTable(si, zi, so, zo);
    for (int32_t x = -128; x <= 127; ++x) {
      double real = double(si) * (x - zi);
      double hs = real * std::min(6.0, std::max(0.0, real + 3.0)) / 6.0;
      double want = std::clamp(std::round(hs / so) + zo, -128.0, 127.0);
      EXPECT_NEAR(t[size_t(x + 128)], want, 1.0) << si << " " << x;
    }
  }
}

TEST(QuantizedKernels, LookupCoversEveryInt8Input) {
  KernelDesc d = quantKernel(QuantOp::Lookup, {{ElemType::I8, {2, 128}}}, {ElemType::I8, {2, 128}});
  for (int i = 0; i < 256; ++i) d.quant.table.push_back(127 - i);  // y = -1 - x
  std::vector<int8_t> x(256);
  for (int i = 0; i < 256; ++i) x[size_t(i)] = int8_t(i - 128);
  std::vector<int8_t> got = run<int8_t>(d, {x.data()});
  for (int i = 0; i < 256; ++i) ASSERT_EQ(got[size_t(i)], -1 - x[size_t(i)]);
}

// ---- elementwise kernels --------------------------------------------------------------------

TEST(QuantizedKernels, RequantizeBothShiftSignsAndClamp) {
  for (auto [m, shift] : std::vector<std::pair<int32_t, int32_t>>{{1518500250, -3}, {1073741824, 2}, {2147483647, 0}}) {
    KernelDesc d = quantKernel(QuantOp::Requantize, {{ElemType::I8, {300}}}, {ElemType::I8, {300}});
    d.quant.inputZeroPoint = -5;
    d.quant.outputZeroPoint = 7;
    d.quant.multipliers = {m};
    d.quant.shifts = {shift};
    d.quant.actMin = -100;
    d.quant.actMax = 90;
    std::vector<int8_t> x = randomInts<int8_t>(300, 3, -128, 127);
    x[0] = -128, x[1] = 127, x[2] = -5;
    std::vector<int8_t> got = run<int8_t>(d, {x.data()});
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(got[i], clampTo(refMbqm(x[i] + 5, m, shift) + 7, -100, 90)) << i;
  }
}

TEST(QuantizedKernels, RequantizeWidthChanges) {
  // i16 -> i32 (a left shift) and i32 -> i16 (saturating at the i16 range).
  KernelDesc up = quantKernel(QuantOp::Requantize, {{ElemType::I16, {64}}}, {ElemType::I32, {64}});
  up.quant.multipliers = {1739461375};
  up.quant.shifts = {12};
  up.quant.actMin = INT32_MIN;
  up.quant.actMax = INT32_MAX;
  std::vector<int16_t> x16 = randomInts<int16_t>(64, 4, -32768, 32767);
  std::vector<int32_t> got32 = run<int32_t>(up, {x16.data()});
  for (size_t i = 0; i < x16.size(); ++i) ASSERT_EQ(got32[i], refMbqm(x16[i], 1739461375, 12));

  KernelDesc down = quantKernel(QuantOp::Requantize, {{ElemType::I32, {64}}}, {ElemType::I16, {64}});
  down.quant.multipliers = {1325400064};
  down.quant.shifts = {-12};
  down.quant.actMin = -32768;
  down.quant.actMax = 32767;
  std::vector<int32_t> x32 = randomInts<int32_t>(64, 5, -400000000, 400000000);
  std::vector<int16_t> got16 = run<int16_t>(down, {x32.data()});
  for (size_t i = 0; i < x32.size(); ++i)
    ASSERT_EQ(got16[i], clampTo(refMbqm(x32[i], 1325400064, -12), -32768, 32767));
}

int32_t refAdd(int32_t a, int32_t b, const QuantDesc& q, bool sub) {
  int32_t va = refMbqm((a - q.inputZeroPoint) * (1 << q.leftShift), q.input1Multiplier, q.input1Shift);
  int32_t vb = refMbqm((b - q.input2ZeroPoint) * (1 << q.leftShift), q.input2Multiplier, q.input2Shift);
  int32_t raw = sub ? va - vb : va + vb;
  return clampTo(refMbqm(raw, q.multipliers[0], q.shifts[0]) + q.outputZeroPoint, q.actMin, q.actMax);
}

TEST(QuantizedKernels, AddInt8Broadcast) {
  KernelDesc d = quantKernel(QuantOp::Add, {{ElemType::I8, {2, 3, 8}}, {ElemType::I8, {8}}}, {ElemType::I8, {2, 3, 8}});
  QuantDesc& q = d.quant;
  q.inputZeroPoint = 3, q.input2ZeroPoint = -20, q.outputZeroPoint = -9, q.leftShift = 20;
  q.input1Multiplier = 1073741824, q.input1Shift = 0;   // 0.5
  q.input2Multiplier = 1431655765, q.input2Shift = -1;  // 1/3
  q.multipliers = {1288490189}, q.shifts = {-17};
  q.actMin = -128, q.actMax = 100;
  std::vector<int8_t> a = randomInts<int8_t>(48, 1, -128, 127), b = randomInts<int8_t>(8, 2, -128, 127);
  std::vector<int8_t> got = run<int8_t>(d, {a.data(), b.data()});
  for (size_t i = 0; i < 48; ++i) ASSERT_EQ(got[i], refAdd(a[i], b[i % 8], q, false)) << i;
}

TEST(QuantizedKernels, AddWithoutBroadcastOnEveryVectorWidth) {
  // The loop LLVM vectorises (inputs of the output's shape), 45 elements (no vector width
  // divides them), on SSE4.2, AVX2, AVX-512 where this machine runs them, every split.
  KernelDesc d = quantKernel(QuantOp::Add, {{ElemType::I8, {3, 15}}, {ElemType::I8, {3, 15}}},
                             {ElemType::I8, {3, 15}});
  QuantDesc& q = d.quant;
  q.inputZeroPoint = -128, q.input2ZeroPoint = 127, q.outputZeroPoint = 5, q.leftShift = 20;
  q.input1Multiplier = 1900000000, q.input1Shift = -1;
  q.input2Multiplier = 1073741824, q.input2Shift = 0;
  q.multipliers = {1288490189}, q.shifts = {-19};
  q.actMin = -110, q.actMax = 127;
  std::vector<int8_t> a = randomInts<int8_t>(45, 41, -128, 127), b = randomInts<int8_t>(45, 42, -128, 127);
  std::vector<std::string> targets = {"x86_64"};
  for (const std::string& t : testing::runnableVectorTargets()) targets.push_back(t);
  for (const std::string& name : targets) {
    TargetRequest request;
    request.name = name;
    std::vector<int8_t> got = testing::runEverySplit<int8_t>(
        generateKernels({d}, resolveTarget(request)).bytes, d, {a.data(), b.data()});
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i], refAdd(a[i], b[i], q, false)) << name << ", element " << i;
  }
}

TEST(QuantizedKernels, SubInt16) {
  KernelDesc d = quantKernel(QuantOp::Sub, {{ElemType::I16, {4, 16}}, {ElemType::I16, {4, 16}}}, {ElemType::I16, {4, 16}});
  QuantDesc& q = d.quant;
  q.leftShift = 15;
  q.input1Multiplier = 1073741824, q.input1Shift = 0;
  q.input2Multiplier = 1900000000, q.input2Shift = -3;
  q.multipliers = {1500000000}, q.shifts = {-14};
  q.actMin = -32768, q.actMax = 32767;
  std::vector<int16_t> a = randomInts<int16_t>(64, 11, -32768, 32767), b = randomInts<int16_t>(64, 12, -32768, 32767);
  std::vector<int16_t> got = run<int16_t>(d, {a.data(), b.data()});
  for (size_t i = 0; i < 64; ++i) ASSERT_EQ(got[i], refAdd(a[i], b[i], q, true)) << i;
}

TEST(QuantizedKernels, MulInt8) {
  KernelDesc d = quantKernel(QuantOp::Mul, {{ElemType::I8, {40}}, {ElemType::I8, {40}}}, {ElemType::I8, {40}});
  QuantDesc& q = d.quant;
  q.inputZeroPoint = 10, q.input2ZeroPoint = -3, q.outputZeroPoint = 1;
  q.multipliers = {1717986918}, q.shifts = {-6};
  q.actMin = -128, q.actMax = 127;
  std::vector<int8_t> a = randomInts<int8_t>(40, 21, -128, 127), b = randomInts<int8_t>(40, 22, -128, 127);
  std::vector<int8_t> got = run<int8_t>(d, {a.data(), b.data()});
  for (size_t i = 0; i < 40; ++i)
    ASSERT_EQ(got[i], clampTo(refMbqm((a[i] - 10) * (b[i] + 3), q.multipliers[0], -6) + 1, -128, 127));
}

TEST(QuantizedKernels, LeakyReluInt16) {
  KernelDesc d = quantKernel(QuantOp::LeakyRelu, {{ElemType::I16, {100}}}, {ElemType::I16, {100}});
  QuantDesc& q = d.quant;
  q.multipliers = {1288490189, 1717986918};
  q.shifts = {1, -4};
  q.actMin = -32768, q.actMax = 32767;
  std::vector<int16_t> x = randomInts<int16_t>(100, 31, -32768, 32767);
  std::vector<int16_t> got = run<int16_t>(d, {x.data()});
  for (size_t i = 0; i < x.size(); ++i) {
    int32_t want = x[i] >= 0 ? refMbqm(x[i], q.multipliers[0], 1) : refMbqm(x[i], q.multipliers[1], -4);
    ASSERT_EQ(got[i], clampTo(want, -32768, 32767)) << x[i];
  }
}

TEST(QuantizedKernels, QuantizeRoundsHalfAwayAndDequantizes) {
  KernelDesc d = quantKernel(QuantOp::Quantize, {{ElemType::F32, {9}}}, {ElemType::I8, {9}});
  d.quant.scale = 0.5f;
  d.quant.outputZeroPoint = -3;
  d.quant.actMin = -128, d.quant.actMax = 127;
  std::vector<float> x = {1.25f, -1.25f, 0.75f, -0.75f, 0.2f, 100.0f, -100.0f, 0.0f, 1e20f};
  std::vector<int8_t> got = run<int8_t>(d, {x.data()});
  EXPECT_EQ(got, (std::vector<int8_t>{0, -6, -1, -5, -3, 127, -128, -3, 127}));

  KernelDesc dq = quantKernel(QuantOp::Dequantize, {{ElemType::I8, {4}}}, {ElemType::F32, {4}});
  dq.quant.scale = 0.1f;
  dq.quant.inputZeroPoint = 5;
  std::vector<int8_t> q = {5, -128, 127, 0};
  std::vector<float> back = run<float>(dq, {q.data()});
  for (size_t i = 0; i < q.size(); ++i) EXPECT_EQ(back[i], float(double(0.1f) * (q[i] - 5)));
}

// ---- convolutions ---------------------------------------------------------------------------
struct QConvCase {
  QuantOp op;
  ElemType x;
  int64_t n, h, w, c, oc, kh, kw, groups;
  std::array<int64_t, 2> strides, dilations;
  std::array<int64_t, 4> pads;
  bool bias;
};

void checkConv(const QConvCase& t) {
  const bool wide = t.x == ElemType::I16;
  const bool dw = t.op == QuantOp::DepthwiseConv, tr = t.op == QuantOp::TransposeConv;
  int64_t oh, ow;
  if (tr) {
    oh = (t.h - 1) * t.strides[0] + t.kh - t.pads[0] - t.pads[2];
    ow = (t.w - 1) * t.strides[1] + t.kw - t.pads[1] - t.pads[3];
  } else {
    oh = (t.h + t.pads[0] + t.pads[2] - ((t.kh - 1) * t.dilations[0] + 1)) / t.strides[0] + 1;
    ow = (t.w + t.pads[1] + t.pads[3] - ((t.kw - 1) * t.dilations[1] + 1)) / t.strides[1] + 1;
  }
  std::vector<int64_t> wshape = dw ? std::vector<int64_t>{1, t.kh, t.kw, t.oc}
                                   : std::vector<int64_t>{t.oc, t.kh, t.kw, t.c / t.groups};
  std::vector<BufferDesc> ins = {{t.x, {t.n, t.h, t.w, t.c}}, {ElemType::I8, wshape}};
  if (t.bias) ins.push_back({wide ? ElemType::I64 : ElemType::I32, {t.oc}});
  KernelDesc d = quantKernel(t.op, ins, {t.x, {t.n, oh, ow, t.oc}});
  d.kernelShape = {t.kh, t.kw};
  d.strides = t.strides;
  d.dilations = t.dilations;
  d.pads = t.pads;
  d.groups = t.groups;
  QuantDesc& q = d.quant;
  q.inputZeroPoint = wide ? 0 : -7;
  q.outputZeroPoint = wide ? 0 : 4;
  q.actMin = wide ? -30000 : -120;
  q.actMax = wide ? 32767 : 110;
  std::mt19937 rng(9);
  for (int64_t o = 0; o < t.oc; ++o) {
    q.multipliers.push_back(int32_t(1 << 30) + int32_t(rng() % (1 << 30)));
    q.shifts.push_back(wide ? -int32_t(10 + rng() % 6) : -int32_t(6 + rng() % 4));
  }
  const int64_t xCount = t.n * t.h * t.w * t.c;
  std::vector<int16_t> x16 = randomInts<int16_t>(size_t(xCount), 1, wide ? -32768 : -128, wide ? 32767 : 127);
  std::vector<int8_t> x8(x16.begin(), x16.end());
  int64_t wCount = 1;
  for (int64_t e : wshape) wCount *= e;
  std::vector<int8_t> w = randomInts<int8_t>(size_t(wCount), 2, -127, 127);
  std::vector<int64_t> b64 = randomInts<int64_t>(size_t(t.oc), 3, wide ? -(int64_t(1) << 36) : -20000, wide ? (int64_t(1) << 36) : 20000);
  std::vector<int32_t> b32(b64.begin(), b64.end());
  std::vector<const void*> inputs = {wide ? static_cast<const void*>(x16.data()) : x8.data(), w.data()};
  if (t.bias) inputs.push_back(wide ? static_cast<const void*>(b64.data()) : b32.data());

  auto xAt = [&](int64_t n, int64_t i, int64_t j, int64_t c) -> int64_t {
    return x16[size_t(((n * t.h + i) * t.w + j) * t.c + c)];
  };
  std::vector<int64_t> want;
  for (int64_t n = 0; n < t.n; ++n)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        for (int64_t o = 0; o < t.oc; ++o) {
          int64_t acc = 0;
          if (tr) {
            for (int64_t ih = 0; ih < t.h; ++ih)
              for (int64_t iw = 0; iw < t.w; ++iw)
                for (int64_t ki = 0; ki < t.kh; ++ki)
                  for (int64_t kj = 0; kj < t.kw; ++kj) {
                    if (ih * t.strides[0] + ki - t.pads[0] != i || iw * t.strides[1] + kj - t.pads[1] != j) continue;
                    for (int64_t c = 0; c < t.c; ++c)
                      acc += w[size_t(((o * t.kh + ki) * t.kw + kj) * t.c + c)] * (xAt(n, ih, iw, c) - q.inputZeroPoint);
                  }
          } else {
            int64_t cg = dw ? 1 : t.c / t.groups, g = dw ? 0 : o / (t.oc / t.groups);
            for (int64_t ki = 0; ki < t.kh; ++ki)
              for (int64_t kj = 0; kj < t.kw; ++kj) {
                int64_t ih = i * t.strides[0] - t.pads[0] + ki * t.dilations[0];
                int64_t iw = j * t.strides[1] - t.pads[1] + kj * t.dilations[1];
                if (ih < 0 || ih >= t.h || iw < 0 || iw >= t.w) continue;
                for (int64_t c = 0; c < cg; ++c) {
                  int64_t ic = dw ? o / (t.oc / t.c) : g * cg + c;
                  int64_t wv = dw ? w[size_t((ki * t.kw + kj) * t.oc + o)] : w[size_t(((o * t.kh + ki) * t.kw + kj) * cg + c)];
                  acc += wv * (xAt(n, ih, iw, ic) - q.inputZeroPoint);
                }
              }
          }
          if (t.bias) acc += wide ? b64[size_t(o)] : b32[size_t(o)];
          int32_t s = wide ? refMbqm64(acc, q.multipliers[size_t(o)], q.shifts[size_t(o)])
                           : refMbqm(int32_t(acc), q.multipliers[size_t(o)], q.shifts[size_t(o)]);
          want.push_back(clampTo(s + q.outputZeroPoint, q.actMin, q.actMax));
        }
  std::vector<int64_t> got;
  if (wide) {
    for (int16_t v : run<int16_t>(d, inputs)) got.push_back(v);
  } else {
    for (int8_t v : run<int8_t>(d, inputs)) got.push_back(v);
  }
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "element " << i;
  if (wide || tr) return;
  // The same with the zero point folded into the accumulator's start (-zx * sum of the
  // channel's weights; border taps add zx * w back): identical bytes.
  for (int64_t o = 0; o < t.oc; ++o) {
    int32_t sum = 0;
    for (int64_t i = 0; i < wCount; ++i)
      if ((dw ? i % t.oc : i / (wCount / t.oc)) == o) sum += w[size_t(i)];
    q.zeroPointCorrection.push_back(-q.inputZeroPoint * sum);
  }
  std::vector<int8_t> corrected = run<int8_t>(d, inputs);
  for (size_t i = 0; i < corrected.size(); ++i) ASSERT_EQ(corrected[i], want[i]) << "corrected, element " << i;
}

TEST(QuantizedKernels, ConvInt8PaddedStridedDilated) {
  checkConv({QuantOp::Conv, ElemType::I8, 2, 7, 6, 5, 4, 3, 3, 1, {2, 1}, {1, 2}, {1, 2, 1, 0}, true});
}
TEST(QuantizedKernels, ConvInt8SixteenChannelsUnrolled) {
  checkConv({QuantOp::Conv, ElemType::I8, 1, 5, 4, 16, 3, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true});
}
TEST(QuantizedKernels, ConvInt8GroupedNoBias) {
  checkConv({QuantOp::Conv, ElemType::I8, 1, 5, 5, 6, 4, 3, 2, 2, {1, 1}, {1, 1}, {1, 1, 1, 0}, false});
}
TEST(QuantizedKernels, DepthwiseInt8WithMultiplier) {
  checkConv({QuantOp::DepthwiseConv, ElemType::I8, 1, 9, 8, 3, 6, 3, 3, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, true});
}
TEST(QuantizedKernels, DepthwiseInt8ManyChannelsPerChannelLoop) {
  // More accumulators than the per-pixel variant keeps on the stack: the per-channel loop.
  checkConv({QuantOp::DepthwiseConv, ElemType::I8, 1, 3, 4, 520, 520, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true});
}
TEST(QuantizedKernels, Conv16x8WithI64Bias) {
  checkConv({QuantOp::Conv, ElemType::I16, 1, 4, 12, 8, 5, 3, 5, 1, {1, 2}, {1, 1}, {0, 2, 0, 2}, true});
}
TEST(QuantizedKernels, TransposeConv16x8) {
  checkConv({QuantOp::TransposeConv, ElemType::I16, 1, 2, 5, 4, 3, 3, 4, 1, {1, 2}, {1, 1}, {0, 1, 1, 1}, true});
}
TEST(QuantizedKernels, TransposeConvInt8) {
  checkConv({QuantOp::TransposeConv, ElemType::I8, 1, 3, 3, 2, 2, 3, 3, 1, {2, 2}, {1, 1}, {1, 1, 0, 0}, false});
}

TEST(QuantizedKernels, FullyConnectedInt8WeightZeroPointAndPerChannel) {
  for (bool perChannel : {false, true}) {
    KernelDesc d = quantKernel(QuantOp::FullyConnected,
                               {{ElemType::I8, {3, 37}}, {ElemType::I8, {5, 37}}, {ElemType::I32, {5}}},
                               {ElemType::I8, {3, 5}});
    QuantDesc& q = d.quant;
    q.inputZeroPoint = 12, q.weightZeroPoint = perChannel ? 0 : 2, q.outputZeroPoint = -100;
    q.actMin = -128, q.actMax = 127;
    q.multipliers = perChannel ? std::vector<int32_t>{1100000000, 1200000000, 1300000000, 1400000000, 2000000000}
                               : std::vector<int32_t>{1500000000};
    q.shifts = perChannel ? std::vector<int32_t>{-8, -9, -10, -7, -8} : std::vector<int32_t>{-9};
    std::vector<int8_t> x = randomInts<int8_t>(111, 41, -128, 127), w = randomInts<int8_t>(185, 42, -127, 127);
    std::vector<int32_t> b = randomInts<int32_t>(5, 43, -5000, 5000);
    std::vector<int8_t> got = run<int8_t>(d, {x.data(), w.data(), b.data()});
    for (int r = 0; r < 3; ++r)
      for (int n = 0; n < 5; ++n) {
        int32_t acc = b[size_t(n)];
        for (int k = 0; k < 37; ++k) acc += (w[size_t(n * 37 + k)] - q.weightZeroPoint) * (x[size_t(r * 37 + k)] - 12);
        size_t c = perChannel ? size_t(n) : 0;
        ASSERT_EQ(got[size_t(r * 5 + n)], clampTo(refMbqm(acc, q.multipliers[c], q.shifts[c]) - 100, -128, 127));
      }
    // Zero point folded into the accumulator's start: the same bytes.
    for (int n = 0; n < 5; ++n) {
      int32_t sum = 0;
      for (int k = 0; k < 37; ++k) sum += w[size_t(n * 37 + k)] - q.weightZeroPoint;
      q.zeroPointCorrection.push_back(-12 * sum);
    }
    EXPECT_EQ(run<int8_t>(d, {x.data(), w.data(), b.data()}), got);
  }
}

// ---- pools and softmax ----------------------------------------------------------------------

TEST(QuantizedKernels, AveragePoolRoundsAwayAndSkipsPadding) {
  KernelDesc d = quantKernel(QuantOp::AveragePool, {{ElemType::I8, {1, 5, 5, 3}}}, {ElemType::I8, {1, 3, 3, 3}});
  d.kernelShape = {3, 3};
  d.strides = {2, 2};
  d.pads = {1, 1, 1, 1};
  d.quant.actMin = -128, d.quant.actMax = 120;
  std::vector<int8_t> x = randomInts<int8_t>(75, 51, -128, 127);
  std::vector<int8_t> got = run<int8_t>(d, {x.data()});
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int c = 0; c < 3; ++c) {
        int32_t sum = 0, count = 0;
        for (int ki = 0; ki < 3; ++ki)
          for (int kj = 0; kj < 3; ++kj) {
            int ih = i * 2 - 1 + ki, iw = j * 2 - 1 + kj;
            if (ih < 0 || ih >= 5 || iw < 0 || iw >= 5) continue;
            sum += x[size_t((ih * 5 + iw) * 3 + c)], ++count;
          }
        // Nearest, ties away from zero.
        int32_t avg = int32_t(std::lround(double(sum) / count));
        ASSERT_EQ(got[size_t((i * 3 + j) * 3 + c)], clampTo(avg, -128, 120));
      }
  d.quant.op = QuantOp::MaxPool;
  got = run<int8_t>(d, {x.data()});
  EXPECT_EQ(got[0], std::max({x[0], x[3], x[15], x[18]}));
}

TEST(QuantizedKernels, SoftmaxInt8MatchesFloatWithinOneStep) {
  // Input scale 1/16, beta 1: the kernel's table is the fixed-point exp of TFLite.
  KernelDesc d = quantKernel(QuantOp::Softmax, {{ElemType::I8, {3, 10}}}, {ElemType::I8, {3, 10}});
  ir::QuantizedMultiplier m = ir::quantizeMultiplierGreaterThanOne(0.0625 * double(1 << 26));
  int32_t diffMin = -int32_t(std::floor(31.0 * double(1 << 26) / double(int64_t(1) << m.shift)));
  for (int j = 0; j < 256; ++j) {
    int32_t v = 0;
    if (-j >= diffMin) v = ir::expOnNegativeValuesQ5(refSrdhm(-j * (1 << m.shift), m.multiplier));
    d.quant.table.push_back(v);
  }
  d.quant.actMin = -128, d.quant.actMax = 127;
  std::vector<int8_t> x = randomInts<int8_t>(30, 61, -128, 127);
  for (int i = 10; i < 20; ++i) x[size_t(i)] = 5;  // a uniform row: 0.1 each
  std::vector<int8_t> got = run<int8_t>(d, {x.data()});
  for (int r = 0; r < 3; ++r) {
    double mx = -1e9, sum = 0;
    for (int i = 0; i < 10; ++i) mx = std::max(mx, x[size_t(r * 10 + i)] / 16.0);
    for (int i = 0; i < 10; ++i) sum += std::exp(x[size_t(r * 10 + i)] / 16.0 - mx);
    for (int i = 0; i < 10; ++i) {
      double p = std::exp(x[size_t(r * 10 + i)] / 16.0 - mx) / sum;
      EXPECT_NEAR(got[size_t(r * 10 + i)], std::min(127.0, std::round(p * 256) - 128), 1.0) << r << " " << i;
    }
  }
  for (int i = 10; i < 20; ++i) EXPECT_EQ(got[size_t(i)], -102);  // 0.1 * 256 = 25.6 -> 26 - 128
}

TEST(QuantizedKernels, MeanBothTflmPaths) {
  // x [2,3,4,5] reduced over axes 1 and 2 (keepdims): 12 elements per output.
  std::vector<int8_t> x = randomInts<int8_t>(120, 71, -128, 127);
  for (bool same : {true, false}) {
    KernelDesc d = quantKernel(QuantOp::Mean, {{ElemType::I8, {2, 3, 4, 5}}}, {ElemType::I8, {2, 1, 1, 5}});
    d.axes = {1, 2};
    d.quant.sameParameters = same;
    d.quant.inputZeroPoint = same ? 0 : -7;
    d.quant.outputZeroPoint = same ? 0 : 12;
    d.quant.scale = 0.02f / 0.015f;
    d.quant.actMin = -128, d.quant.actMax = 127;
    std::vector<int8_t> got = run<int8_t>(d, {x.data()});
    for (int n = 0; n < 2; ++n)
      for (int c = 0; c < 5; ++c) {
        int32_t sum = 0;
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 4; ++j) sum += x[size_t(((n * 3 + i) * 4 + j) * 5 + c)];
        int32_t want;
        if (same) {
          want = sum / 12;  // C++ division truncates toward zero, as TFLM's
        } else {
          volatile float mean = float(sum) / 12.0f;  // no contraction in the reference either
          volatile float product = mean * d.quant.scale;
          float value = product + float(7) * d.quant.scale;
          want = clampTo(int32_t(std::round(value)) + 12, -128, 127);
        }
        ASSERT_EQ(got[size_t(n * 5 + c)], want) << same << " " << n << " " << c;
      }
  }
}

TEST(QuantizedKernels, DescriptionErrorsNameTheKernel) {
  KernelDesc d = quantKernel(QuantOp::Softmax, {{ElemType::I8, {4}}}, {ElemType::I8, {4}});
  try {
    generateKernels({d}, testing::hostTarget());
    FAIL() << "expected an error";
  } catch (const kiln::CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot generate quantized kernel 'q': exp table must have 256 entries"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace kiln::codegen
