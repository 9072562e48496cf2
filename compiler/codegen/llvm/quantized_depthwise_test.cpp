// The int8 depthwise kernel vectorised over channels (emit_quantized_depthwise.cpp) against
// an independent reference (TFLite's reference depthwise convolution written out here in plain
// C++): random int8 data with zero points, channel counts that its vectors do not divide,
// padding taps on every side, strides, dilations, per-channel and per-tensor rescales, with
// and without the lowering's zero-point correction, run with several workgroup splits on every
// x86-64 vector target this machine runs (SSE4.2: 4 lanes, AVX2: 8, AVX-512: 16). The kernels'
// IR holds the vectors of the target's width.
#include <gtest/gtest.h>

#include <array>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>

#include "kiln/codegen/codegen.h"
#include "kiln/codegen/kernel_desc.h"
#include "kiln/codegen/target_config.h"
#include "quantized_reference.h"
#include "test_support.h"

namespace kiln::codegen {
namespace {

using testing::clampTo;
using testing::randomInts;
using testing::refMbqm;

TargetConfig target(const std::string& name) {
  TargetRequest request;
  request.name = name;
  return resolveTarget(request);
}

struct DepthwiseCase {
  int64_t n, h, w, c, kh, kw;
  std::array<int64_t, 2> strides, dilations;
  std::array<int64_t, 4> pads;  // top, left, bottom, right
  int32_t zx;
  bool bias, perChannel;
};

using Problem = testing::QuantProblem;

// `fill`: every activation fill->first and every weight fill->second instead of random ones.
Problem depthwiseProblem(const DepthwiseCase& t, std::optional<std::pair<int8_t, int8_t>> fill = {}) {
  const int64_t oh = testing::refWindowOutput(t.h, t.kh, t.strides[0], t.dilations[0], t.pads[0], t.pads[2]);
  const int64_t ow = testing::refWindowOutput(t.w, t.kw, t.strides[1], t.dilations[1], t.pads[1], t.pads[3]);
  Problem p;
  KernelDesc& d = p.desc;
  d.kind = KernelKind::Quantized;
  d.name = "qdw";
  d.quant.op = QuantOp::DepthwiseConv;
  d.inputs = {{ElemType::I8, {t.n, t.h, t.w, t.c}}, {ElemType::I8, {1, t.kh, t.kw, t.c}}};
  if (t.bias) d.inputs.push_back({ElemType::I32, {t.c}});
  d.output = {ElemType::I8, {t.n, oh, ow, t.c}};
  d.kernelShape = {t.kh, t.kw};
  d.strides = t.strides;
  d.dilations = t.dilations;
  d.pads = t.pads;
  d.groups = t.c;
  QuantDesc& q = d.quant;
  q.inputZeroPoint = t.zx;
  q.outputZeroPoint = -5;
  q.actMin = -120, q.actMax = 115;
  std::mt19937 rng(21);
  for (int64_t o = 0; o < t.c; ++o) {
    if (!t.perChannel && o > 0) {  // the per-tensor rescale, repeated for every channel
      q.multipliers.push_back(q.multipliers[0]);
      q.shifts.push_back(q.shifts[0]);
      continue;
    }
    q.multipliers.push_back(int32_t(1 << 30) + int32_t(rng() % (1 << 30)));
    // Every fifth channel a left shift or a shift that leaves nothing.
    q.shifts.push_back(o % 5 == 4 ? (o % 2 ? 1 : -31) : -int32_t(5 + rng() % 4));
  }
  p.x = randomInts<int8_t>(size_t(t.n * t.h * t.w * t.c), 31, -128, 127);
  p.w = randomInts<int8_t>(size_t(t.kh * t.kw * t.c), 32, -127, 127);
  if (t.bias) p.b = randomInts<int32_t>(size_t(t.c), 33, -20000, 20000);
  if (fill) {
    std::fill(p.x.begin(), p.x.end(), fill->first);
    std::fill(p.w.begin(), p.w.end(), fill->second);
  }
  for (int64_t n = 0; n < t.n; ++n)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        for (int64_t c = 0; c < t.c; ++c) {
          int32_t acc = 0;
          for (int64_t ki = 0; ki < t.kh; ++ki)
            for (int64_t kj = 0; kj < t.kw; ++kj) {
              int64_t ih = i * t.strides[0] - t.pads[0] + ki * t.dilations[0];
              int64_t iw = j * t.strides[1] - t.pads[1] + kj * t.dilations[1];
              if (ih < 0 || ih >= t.h || iw < 0 || iw >= t.w) continue;  // skipped, as in TFLite
              int32_t xv = p.x[size_t(((n * t.h + ih) * t.w + iw) * t.c + c)];
              int32_t wv = p.w[size_t((ki * t.kw + kj) * t.c + c)];
              acc += wv * (xv - t.zx);
            }
          if (t.bias) acc += p.b[size_t(c)];
          int32_t y = refMbqm(acc, q.multipliers[size_t(c)], q.shifts[size_t(c)]) + q.outputZeroPoint;
          p.want.push_back(int8_t(clampTo(y, q.actMin, q.actMax)));
        }
  return p;
}

// The x86-64 targets this machine runs, SSE4.2's 4 lanes first.
std::vector<std::string> targets() {
  std::vector<std::string> names = {"x86_64"};
  for (const std::string& t : testing::runnableVectorTargets()) names.push_back(t);
  return names;
}

void checkCase(Problem p) {
  for (bool corrected : {false, true}) {
    if (corrected) p.addCorrections();
    SCOPED_TRACE(corrected ? "with the zero-point correction" : "zero point in the kernel");
    for (const std::string& name : targets()) {
      std::vector<int8_t> got = testing::runEverySplit<int8_t>(
          generateKernels({p.desc}, target(name)).bytes, p.desc, p.inputs());
      ASSERT_EQ(got.size(), p.want.size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(int(got[i]), int(p.want[i])) << name << ", element " << i;
    }
  }
}

TEST(QuantizedDepthwise, Same3x3EightChannels) {
  checkCase(depthwiseProblem({1, 9, 11, 8, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, -7, true, true}));
}

TEST(QuantizedDepthwise, StrideTwoChannelsNoVectorDivides) {
  // 20 channels: 16 + an overlapping block on AVX-512, 8 + 8 + 4-overlap on AVX2, 5 x 4 on SSE.
  // TFLite's SAME padding at stride 2: the extra row and column at the bottom and right.
  checkCase(depthwiseProblem({2, 10, 9, 20, 3, 3, {2, 2}, {1, 1}, {0, 0, 1, 1}, 12, true, true}));
}

TEST(QuantizedDepthwise, DilatedFiveByFiveManyChannelsNoBias) {
  checkCase(depthwiseProblem({1, 8, 7, 520, 5, 5, {1, 1}, {2, 2}, {4, 3, 4, 5}, -128, false, true}));
}

TEST(QuantizedDepthwise, OneRowKernelPerTensorRescale) {
  checkCase(depthwiseProblem({1, 3, 12, 4, 1, 5, {1, 2}, {1, 1}, {0, 2, 0, 2}, 0, true, false}));
}

TEST(QuantizedDepthwise, ImageSmallerThanTheKernel) {
  // Every pixel is a border pixel: only the select path runs.
  checkCase(depthwiseProblem({1, 2, 2, 12, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, 3, true, true}));
}

TEST(QuantizedDepthwise, ExtremeValuesSaturateTheClamp) {
  // |acc| of 9 * 255 * 127 plus the bias; outputs pinned at both ends of the clamp.
  for (auto fill : {std::pair<int8_t, int8_t>{-128, 127}, std::pair<int8_t, int8_t>{127, -127},
                    std::pair<int8_t, int8_t>{127, 127}}) {
    SCOPED_TRACE(::testing::Message() << "x " << int(fill.first) << ", w " << int(fill.second));
    checkCase(
        depthwiseProblem({1, 5, 5, 16, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, 127, true, true}, fill));
  }
}

TEST(QuantizedDepthwise, PixelGroupsOfFourChannels) {
  // 4 channels at stride 1: 4 pixels a vector on AVX-512, 2 on AVX2 (SSE: one pixel of 4
  // channels); 7 columns: the last group overlaps the one before; two images.
  checkCase(depthwiseProblem({2, 6, 7, 4, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, -3, true, true}));
  checkCase(depthwiseProblem({1, 5, 9, 4, 3, 3, {2, 1}, {1, 2}, {2, 2, 1, 2}, 9, false, true}));
}

TEST(QuantizedDepthwise, PixelGroupsAtTheInputsEnd) {
  // 8 channels in a 3x3 image: every group is a border group (masked loads), and the input
  // ends at an inaccessible page, so a load of a tap past the image's last pixel would fault.
  Problem p = depthwiseProblem({1, 3, 3, 8, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, 4, true, true});
  checkCase(p);
  testing::GuardedBytes x(p.x);
  std::vector<const void*> inputs = p.inputs();
  inputs[0] = x.data();
  for (const std::string& name : targets()) {
    std::vector<int8_t> got = testing::runEverySplit<int8_t>(
        generateKernels({p.desc}, target(name)).bytes, p.desc, inputs);
    EXPECT_EQ(got, p.want) << name;
  }
}

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(QuantizedDepthwise, KernelsUseTheTargetsVectorWidth) {
  Problem p = depthwiseProblem({1, 6, 6, 64, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, -7, true, true});
  struct Expect {
    const char* target;
    const char* product;  // the i32 products of the taps
  };
  for (Expect e : {Expect{"x86_64", "mul nsw <4 x i32>"}, Expect{"x86_64-v3", "mul nsw <8 x i32>"},
                   Expect{"x86_64-v4", "mul nsw <16 x i32>"},
                   Expect{"aarch64", "mul nsw <4 x i32>"}}) {
    testing::TempFile ir({}, ".ll");
    CodegenOptions options;
    options.dumpIrPath = ir.path();
    generateKernels({p.desc}, target(e.target), options);
    EXPECT_NE(readText(ir.path()).find(e.product), std::string::npos) << e.target;
  }
  // A microcontroller keeps the plain loops: no vectors.
  testing::TempFile ir({}, ".ll");
  CodegenOptions options;
  options.dumpIrPath = ir.path();
  generateKernels({p.desc}, target("cortex-m4"), options);
  EXPECT_EQ(readText(ir.path()).find("x i32>"), std::string::npos) << "cortex-m4";
}

}  // namespace
}  // namespace kiln::codegen
