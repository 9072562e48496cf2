// The fused Conv + MaxPool kernel (emit_conv_pool.cpp, conv_pool_plan.h) against a double-
// precision reference (the convolution, then the pool over it): odd map sizes, strided and
// padded convolutions (3x3 s2 as SqueezeNet's stem, 7x7 s2 pad 3 as ResNet's), pools with
// pads, ceil mode and windows wholly in the padding, K larger than one block, OC not a
// multiple of the panel, two images, weights packed (as the driver packs them) and OIHW,
// AVX2 (x86_64-v3), AVX-512 (x86_64-v4, where the host has it) and 4-lane SSE, the plain
// loops (pool width stride 5), the width pass's strides 1-4 with tails and pads, and 1, 2
// and 5 workgroups (every split must agree). Few-channel convolutions read input planes
// (strides 1-4, pads, rows outside the image) and the unpooled stems (convStemDirect) store
// their rows straight to the output; AVX-512 and NEON compile both everywhere. Outputs in row
// groups (row_groups.h) give the same bits.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "conv_reference.h"
#include "kiln/codegen/codegen.h"
#include "kiln/codegen/conv_pool_plan.h"
#include "test_support.h"

namespace kiln::codegen {
namespace {

using testing::runKernel;

struct PoolCase {
  std::array<int64_t, 2> kernel{3, 3}, strides{2, 2};
  std::array<int64_t, 4> pads{0, 0, 0, 0};
  bool ceil = false;
};

int64_t pooledSize(int64_t in, int64_t k, int64_t s, int64_t before, int64_t after, bool ceil) {
  int64_t span = in + before + after - k;
  return (ceil ? (span + s - 1) / s : span / s) + 1;
}

// The pooled description of conv case t.
KernelDesc describe(const testing::ConvCase& t, const PoolCase& p) {
  KernelDesc d = testing::describeConv(t, "conv_pool");
  d.convOutput = d.output.shape;
  d.poolKernel = p.kernel;
  d.poolStrides = p.strides;
  d.poolPads = p.pads;
  d.output.shape[2] =
      pooledSize(d.convOutput[2], p.kernel[0], p.strides[0], p.pads[0], p.pads[2], p.ceil);
  d.output.shape[3] =
      pooledSize(d.convOutput[3], p.kernel[1], p.strides[1], p.pads[1], p.pads[3], p.ceil);
  return d;
}

// Max of the convolution over each window's taps inside the map (-inf if there are none).
std::vector<float> referencePool(const std::vector<float>& conv, const KernelDesc& d) {
  const int64_t planes = d.output.shape[0] * d.output.shape[1];
  const int64_t OH = d.convOutput[2], OW = d.convOutput[3];
  const int64_t PH = d.output.shape[2], PW = d.output.shape[3];
  std::vector<float> want;
  for (int64_t plane = 0; plane < planes; ++plane)
    for (int64_t ph = 0; ph < PH; ++ph)
      for (int64_t pw = 0; pw < PW; ++pw) {
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t i = 0; i < d.poolKernel[0]; ++i)
          for (int64_t j = 0; j < d.poolKernel[1]; ++j) {
            int64_t r = ph * d.poolStrides[0] - d.poolPads[0] + i;
            int64_t c = pw * d.poolStrides[1] - d.poolPads[1] + j;
            if (r >= 0 && r < OH && c >= 0 && c < OW)
              m = std::max(m, double(conv[size_t((plane * OH + r) * OW + c)]));
          }
        want.push_back(float(m));
      }
  return want;
}

// The output in row groups (row_groups.h) at a third and two thirds of its height: the same
// bits as the dense output `got`, wherever they lie.
void expectSameInRowGroups(KernelDesc d, const std::vector<std::vector<float>>& inputs,
                           const std::vector<float>& got, const std::string& target) {
  const int64_t H = d.output.shape[2];
  if (H < 3) return;
  d.output.rowGroups = {0, H / 3, 2 * H / 3, H};
  EXPECT_EQ(testing::fromRowGroups(d.output, runKernel(d, inputs, {1, 2, 5}, target)), got)
      << "output in row groups";
}

void check(const testing::ConvCase& t, const PoolCase& p, const std::string& target,
           bool pack = true) {
  SCOPED_TRACE(target);
  KernelDesc d = describe(t, p);
  testing::ConvOperands in = testing::randomConvOperands(t);
  std::vector<std::vector<float>> inputs = {in.x, in.w};
  TargetRequest request;
  request.name = target;
  VectorUnit unit = vectorUnitOf(resolveTarget(request));
  if (pack && chooseConvWeights(d, unit, true) == ConvWeights::GemmPanels) {
    ConvGemmTile tile = convGemmTile(d, unit);
    d.weightLayout = ConvWeights::GemmPanels;
    d.weightPanel = tile.mr;
    inputs[1] = packConvWeightPanels(in.w, t.oc, t.c * t.kh * t.kw, tile.mr);
  }
  if (t.bias) inputs.push_back(in.b);
  std::vector<float> want = referencePool(testing::referenceConv(t, in, d.convOutput), d);
  std::vector<float> got = runKernel(d, inputs, {1, 2, 5}, target);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(want[i])) {
      ASSERT_EQ(got[i], want[i]) << "element " << i;
      continue;
    }
    ASSERT_NEAR(got[i], want[i], 1e-4f + 1e-4f * std::fabs(want[i])) << "element " << i;
  }
  if (d.epilogue.inputCount == 0) expectSameInRowGroups(d, inputs, got, target);
}

// AVX2, AVX-512 where this machine has it, and SSE (4 lanes).
void checkTargets(const testing::ConvCase& t, const PoolCase& p) {
  for (const std::string& target : testing::runnableVectorTargets()) {
    check(t, p, target);
    check(t, p, target, /*pack=*/false);
  }
  check(t, p, "x86_64");
}

TEST(ConvPool, SqueezeNetStem) {
  // 3x3 s2 3->10 at 25x25 (conv 12x12), Relu, MaxPool 3x3 s2 ceil mode (6x6: the last
  // window has two rows and columns).
  checkTargets({1, 3, 25, 25, 10, 3, 3, {2, 2}, {1, 1}, {0, 0, 0, 0}, true, Activation::Relu},
               {{3, 3}, {2, 2}, {0, 0, 0, 0}, true});
}

TEST(ConvPool, ResNetStem) {
  // 7x7 s2 pad 3, 3->7 at 37x41 (conv 19x21), Relu, MaxPool 3x3 s2 pad 1.
  checkTargets({1, 3, 37, 41, 7, 7, 7, {2, 2}, {1, 1}, {3, 3, 3, 3}, true, Activation::Relu},
               {{3, 3}, {2, 2}, {1, 1, 1, 1}, false});
}

TEST(ConvPool, MnistShapes) {
  // 5x5 valid conv 1->6 at 28x28, 2x2 s2; 3x3 pad 1 conv 6->16 at 13x13 (odd), 2x2 s2.
  checkTargets({1, 1, 28, 28, 6, 5, 5, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, Activation::Relu},
               {{2, 2}, {2, 2}, {0, 0, 0, 0}, false});
  checkTargets({1, 6, 13, 13, 16, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, Activation::None},
               {{2, 2}, {2, 2}, {0, 0, 0, 0}, true});
}

TEST(ConvPool, WideRowsTwoImagesAndClip) {
  // Rows of several tiles with a tail, two images, OC % 6 = 5, Clip, pool stride 1.
  checkTargets({2, 4, 9, 45, 11, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::Clip},
               {{2, 3}, {1, 1}, {0, 1, 1, 0}, false});
}

TEST(ConvPool, KLargerThanABlock) {
  // K = 200 * 9 = 1800: the row's panels do not fit one block; partial sums in the buffer.
  checkTargets({1, 200, 12, 40, 13, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu},
               {{3, 3}, {2, 2}, {1, 1, 1, 1}, true});
}

TEST(ConvPool, WindowsInThePadding) {
  // Pads as large as the kernel with ceil mode: the last pooled row and column see no
  // convolution value (-inf, as the plain pool gives).
  checkTargets({1, 2, 7, 7, 5, 3, 3, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, Activation::None},
               {{2, 2}, {2, 2}, {0, 0, 2, 2}, true});
}

TEST(ConvPool, PlainLoops) {
  // Pool width stride 5: the plain loops (OIHW weights) on every target.
  KernelDesc d =
      describe({1, 3, 20, 33, 5, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu},
               {{2, 5}, {2, 5}, {0, 0, 0, 0}, true});
  EXPECT_FALSE(convPoolVectorised(d, {8, 16}));
  EXPECT_EQ(chooseConvWeights(d, {8, 16}, true), ConvWeights::Oihw);
  checkTargets({1, 3, 20, 33, 5, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu},
               {{2, 5}, {2, 5}, {0, 0, 0, 0}, true});
}

TEST(ConvPool, InputPlanes) {
  // Strides 1-4 (phase planes), pads left and right wider than a stride, rows above and
  // below the image, a tail tile; C * KH rows split per convolution row.
  checkTargets({1, 3, 23, 70, 9, 3, 3, {2, 3}, {1, 1}, {2, 4, 3, 5}, true, Activation::Relu},
               {{3, 3}, {2, 2}, {1, 1, 1, 1}, false});
  checkTargets({1, 2, 17, 75, 7, 5, 4, {1, 4}, {1, 1}, {3, 2, 2, 3}, false, Activation::None},
               {{2, 2}, {2, 2}, {0, 0, 0, 0}, true});
  checkTargets({2, 1, 12, 40, 13, 3, 9, {1, 1}, {1, 1}, {1, 4, 1, 4}, true, Activation::Clip},
               {{3, 3}, {1, 2}, {1, 1, 1, 1}, false});
}

TEST(ConvPool, WidthPassTails) {
  // The width pass on 75 convolution columns (AVX-512: 2 or 4 vectors of pooled columns and
  // a tail; AVX2: more): pad 1 (the window starts 15 lanes into a vector), stride 3 with a
  // 5-wide window, ceil mode; the tail loads only the row vectors its lanes read.
  const testing::ConvCase conv{1, 3,      9,      75,           5,    3,
                               3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu};
  checkTargets(conv, {{3, 3}, {2, 2}, {1, 1, 1, 1}, false});
  checkTargets(conv, {{2, 5}, {1, 3}, {0, 2, 0, 2}, false});
  checkTargets(conv, {{3, 4}, {2, 2}, {0, 0, 0, 0}, true});
  checkTargets(conv, {{2, 2}, {2, 4}, {0, 1, 0, 1}, true});
}

TEST(ConvPool, StemsReadPlanesOnAvx512) {
  // The torch stems with AVX-512's 12 x 32 tile: SqueezeNet's and ResNet-18's (3 * 7 rows
  // * 2 phases * 144 floats = 6048, just within the planes' 24 KB) read planes, and
  // MobileNetV2's unpooled stem takes the conv+pool kernel.
  const VectorUnit avx512{16, 32};
  KernelDesc squeeze = describe({1, 3, 224, 224, 64, 3, 3, {2, 2}}, {{3, 3}, {2, 2}, {}, true});
  KernelDesc resnet = describe({1, 3, 224, 224, 64, 7, 7, {2, 2}, {1, 1}, {3, 3, 3, 3}},
                               {{3, 3}, {2, 2}, {1, 1, 1, 1}, false});
  for (const KernelDesc* d : {&squeeze, &resnet}) {
    const ConvGemmTile tile = convGemmTile(*d, avx512);
    EXPECT_EQ(tile.mr, 12);
    EXPECT_EQ(tile.nr(), 32);
    EXPECT_TRUE(convPoolPlanes(*d, tile));
    EXPECT_EQ(convPlaneLength(*d, tile), 144);  // 4 tiles of 32 + the kernel's overhang
  }
  KernelDesc mobile = testing::describeConv(
      {1, 3, 224, 224, 32, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, Activation::Clip}, "stem");
  EXPECT_TRUE(convStemDirect(mobile, avx512));
  EXPECT_EQ(chooseConvWeights(mobile, avx512, true), ConvWeights::GemmPanels);
}

TEST(ConvPool, WhichConvolutionsReadPlanes) {
  const ConvGemmTile avx2{6, 2, 8};
  KernelDesc squeeze = describe({1, 3, 224, 224, 64, 3, 3, {2, 2}}, {{3, 3}, {2, 2}, {}, true});
  EXPECT_TRUE(convPoolPlanes(squeeze, avx2));
  EXPECT_EQ(convPlaneLength(squeeze, avx2), 120);  // 7 tiles of 16 + 1 column, in vectors
  KernelDesc resnet = describe({1, 3, 224, 224, 64, 7, 7, {2, 2}, {1, 1}, {3, 3, 3, 3}},
                               {{3, 3}, {2, 2}, {1, 1, 1, 1}, false});
  EXPECT_TRUE(convPoolPlanes(resnet, avx2));  // 3 * 7 rows * 2 phases * 120 floats = 20 KB
  KernelDesc deep = describe({1, 200, 12, 40, 13, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}},
                             {{3, 3}, {2, 2}, {1, 1, 1, 1}, true});
  EXPECT_FALSE(convPoolPlanes(deep, avx2));  // im2col in K blocks
  KernelDesc dilated =
      describe({1, 3, 30, 30, 8, 3, 3, {1, 1}, {2, 2}}, {{2, 2}, {2, 2}, {}, false});
  EXPECT_FALSE(convPoolPlanes(dilated, avx2));
}

// An unpooled convolution (convStemDirect) against the plain reference, through the normal
// kernel selection (emitKernelBody routes it to the conv+pool kernel).
void checkDirectOn(const testing::ConvCase& t, const std::string& target) {
  SCOPED_TRACE(target);
  KernelDesc d = testing::describeConv(t, "conv_stem");
  TargetRequest request;
  request.name = target;
  VectorUnit unit = vectorUnitOf(resolveTarget(request));
  ASSERT_TRUE(convStemDirect(d, unit));
  ASSERT_EQ(chooseConvWeights(d, unit, true), ConvWeights::GemmPanels);
  testing::ConvOperands in = testing::randomConvOperands(t);
  std::vector<std::vector<float>> inputs = {in.x, in.w};
  ConvGemmTile tile = convGemmTile(d, unit);
  d.weightLayout = ConvWeights::GemmPanels;
  d.weightPanel = tile.mr;
  inputs[1] = packConvWeightPanels(in.w, t.oc, t.c * t.kh * t.kw, tile.mr);
  if (t.bias) inputs.push_back(in.b);
  std::vector<float> want = testing::referenceConv(t, in, d.output.shape);
  std::vector<float> got = runKernel(d, inputs, {1, 2, 5}, target);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4f + 1e-4f * std::fabs(want[i])) << "element " << i;
  expectSameInRowGroups(d, inputs, got, target);
}

// On `target`, or by default on AVX2 (which takes every case here) and on AVX-512 where this
// machine has it and its policy takes the case.
void checkDirect(const testing::ConvCase& t, const std::string& target = "") {
  if (!target.empty()) return checkDirectOn(t, target);
  for (const std::string& name : testing::runnableVectorTargets()) {
    TargetRequest request;
    request.name = name;
    KernelDesc d = testing::describeConv(t, "conv_stem");
    if (name == "x86_64-v3" || convStemDirect(d, vectorUnitOf(resolveTarget(request))))
      checkDirectOn(t, name);
  }
}

TEST(ConvPool, UnpooledStems) {
  // MobileNetV2's stem shape, smaller: 3x3 s2 pad 1, 3 -> 32 (5 panels + 2 rows), Clip.
  checkDirect({1, 3, 47, 61, 32, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, Activation::Clip});
  checkDirect({1, 3, 47, 61, 32, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, Activation::Clip},
              "x86_64");
  // One channel, stride 1, two images, no bias; 4 channels, 5x5 stride 3.
  checkDirect({2, 1, 9, 33, 7, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, Activation::Relu});
  checkDirect({1, 4, 26, 80, 13, 5, 5, {3, 3}, {1, 1}, {2, 2, 2, 2}, true, Activation::None});
  // The e2e two_branch model's 3x3 pad 1 3 -> 16 at 32x32 (no tail tile); a 1x1 stride 2.
  checkDirect({1, 3, 32, 32, 16, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu});
  checkDirect({1, 3, 64, 64, 8, 1, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, true, Activation::Relu});
  // Rows shorter than AVX-512's 32-pixel tile (one row tile, the lanes past the row dropped):
  // 29x29 from a 7x7 stride 2, two images; 12x12 from a 3x3 stride 2 (AVX2: under its 16).
  checkDirect({2, 3, 64, 64, 24, 7, 7, {2, 2}, {1, 1}, {0, 0, 0, 0}, true, Activation::Relu});
  checkDirect({1, 3, 24, 24, 32, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, Activation::Clip});
}

TEST(ConvPool, UnpooledStemsOnlyFewChannels) {
  const VectorUnit avx2{8, 16};
  KernelDesc stem = testing::describeConv(
      {1, 3, 224, 224, 32, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, Activation::Clip}, "stem");
  EXPECT_TRUE(convStemDirect(stem, avx2));
  EXPECT_FALSE(convStemDirect(stem, {}));  // no vector unit
  KernelDesc wide = testing::describeConv({1, 8, 56, 56, 32, 3, 3, {1, 1}}, "wide");
  EXPECT_FALSE(convStemDirect(wide, avx2));  // more than 4 channels: the GEMM kernel
  KernelDesc pointwise = testing::describeConv({1, 3, 32, 32, 8, 1, 1}, "pointwise");
  EXPECT_FALSE(convStemDirect(pointwise, avx2));  // read in place by the GEMM kernel
  KernelDesc narrow = testing::describeConv({1, 3, 20, 20, 32, 3, 3, {2, 2}}, "narrow");
  EXPECT_FALSE(convStemDirect(narrow, avx2));  // 9-pixel rows: under a tile and 12 pixels
  // AVX-512's 32-pixel tiles: rows of 12 pixels or more take one row tile (SqueezeNet 1.0's
  // 7x7 stem on a 64x64 input, 29x29; a 12x12 map), the digits' 8x8 maps do not.
  const VectorUnit avx512{16, 32};
  EXPECT_TRUE(convStemDirect(testing::describeConv({1, 3, 64, 64, 96, 7, 7, {2, 2}}, "s"), avx512));
  EXPECT_TRUE(convStemDirect(
      testing::describeConv({1, 3, 24, 24, 32, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}}, "s"), avx512));
  EXPECT_FALSE(convStemDirect(
      testing::describeConv({1, 1, 8, 8, 16, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}}, "s"), avx512));
  KernelDesc residual = testing::describeConv(
      {1, 3, 40, 40, 16, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::None, true},
      "residual");
  EXPECT_FALSE(convStemDirect(residual, avx2));  // the chain reads another tensor
}

TEST(ConvPool, PlanesCompileForWideVectorTargets) {
  // AVX-512 and NEON: the pooled and the unpooled stem compile to vector multiply-adds.
  for (const testing::WideTarget& t : testing::wideTargets()) {
    TargetRequest request;
    request.name = t.name;
    TargetConfig target = resolveTarget(request);
    VectorUnit unit = vectorUnitOf(target);
    KernelDesc pooled =
        describe({1, 3, 64, 70, 16, 3, 3, {2, 2}, {1, 1}, {0, 0, 0, 0}, true, Activation::Relu},
                 {{3, 3}, {2, 2}, {0, 0, 0, 0}, true});
    KernelDesc stem = testing::describeConv(
        {1, 3, 64, 70, 16, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, Activation::Clip}, "stem");
    ASSERT_TRUE(convPoolPlanes(pooled, convGemmTile(pooled, unit))) << t.name;
    ASSERT_TRUE(convStemDirect(stem, unit)) << t.name;
    for (KernelDesc* d : {&pooled, &stem}) {
      d->weightLayout = ConvWeights::GemmPanels;
      d->weightPanel = convGemmTile(*d, unit).mr;
    }
    CodegenResult result = generateKernels({pooled, stem}, target);
    std::string text = testing::disassemble(result);
    int vectorMultiplyAdds = testing::vectorMultiplyAdds(text, t);
    EXPECT_GE(vectorMultiplyAdds, 2 * 9) << t.name;
  }
}

TEST(ConvPool, PlanSplitsIntoEvenBands) {
  // SqueezeNet: conv 64x111x111 -> 55x55; ResNet-18: 64x112x112 -> 56x56 (pad 1).
  KernelDesc squeeze = describe({1, 3, 224, 224, 64, 3, 3, {2, 2}}, {{3, 3}, {2, 2}, {}, true});
  ASSERT_EQ(squeeze.output.shape[2], 55);
  ConvPoolPlan p = convPoolPlan(squeeze, 6, 8, 16);
  EXPECT_EQ(p.ocGroups, 1);
  EXPECT_EQ(p.ocPerGroup, 66);
  EXPECT_EQ(p.bandRows, 7);
  EXPECT_EQ(p.bands, 8);
  EXPECT_EQ(p.rowLen % 8, 0);
  EXPECT_GE(p.rowLen, 7 * 16);
  EXPECT_EQ(chooseConvWeights(squeeze, {8, 16}, true), ConvWeights::GemmPanels);
  KernelDesc resnet = describe({1, 3, 224, 224, 64, 7, 7, {2, 2}, {1, 1}, {3, 3, 3, 3}},
                               {{3, 3}, {2, 2}, {1, 1, 1, 1}, false});
  ASSERT_EQ(resnet.output.shape[2], 56);
  EXPECT_EQ(convPoolPlan(resnet, 6, 8, 16).bands, 8);
  // MNIST's 14 pooled rows: an even count of bands (4 of 4, not 7 of 2).
  KernelDesc mnist =
      describe({1, 1, 28, 28, 16, 5, 5, {1, 1}, {1, 1}, {2, 2, 2, 2}}, {{2, 2}, {2, 2}, {}, false});
  ASSERT_EQ(mnist.output.shape[2], 14);
  EXPECT_EQ(convPoolPlan(mnist, 6, 8, 16).bands, 4);
  // Windows' convolution rows: clipped to the map.
  EXPECT_EQ(convRowsOf(resnet, 0).first, 0);
  EXPECT_EQ(convRowsOf(resnet, 0).end, 2);
  EXPECT_EQ(convRowsOf(resnet, 55).first, 109);
  EXPECT_EQ(convRowsOf(resnet, 55).end, 112);
}

}  // namespace
}  // namespace kiln::codegen
