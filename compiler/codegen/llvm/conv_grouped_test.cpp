// Grouped convolutions (1 < groups, several input channels per group) on the GEMM kernels
// (groupedView: groups 1 over N x groups images): the pixel-vectorised kernel
// (emit_conv_gemm.cpp) with packed and unpacked weights, and the output-channel-vectorised one
// (emit_conv_gemm_oc.cpp) on small maps, against the double-precision reference: 1x1 and 3x3,
// strides and pads, group counts 2-8, output channels per group not a multiple of the tile's,
// two images, bias, Relu and a residual chain. Also which kernel the policy gives them and the
// per-group panel order.
#include <gtest/gtest.h>

#include <cmath>

#include "conv_reference.h"
#include "kiln/codegen/conv_gemm_plan.h"
#include "test_support.h"

namespace kiln::codegen {
namespace {

using Case = testing::ConvCase;

VectorUnit unitOf(const std::string& target) {
  TargetRequest request;
  request.name = target;
  return vectorUnitOf(resolveTarget(request));
}

// Runs the case with the weights in `layout` (Oihw, GemmPanels or OcVectorPanels) on every
// x86-64 vector target this machine runs.
void check(const Case& t, ConvWeights layout) {
  for (const std::string& target : testing::runnableVectorTargets()) {
    SCOPED_TRACE(target);
    KernelDesc d = testing::describeConv(t, "conv_grouped");
    const KernelDesc view = groupedView(d);
    ASSERT_EQ(view.groups, 1) << "a grouped convolution has a groups-1 view";
    const int64_t k = t.c / t.groups * t.kh * t.kw;
    testing::ConvOperands in = testing::randomConvOperands(t);
    std::vector<std::vector<float>> inputs = {in.x, in.w};
    if (layout == ConvWeights::GemmPanels) {
      ConvGemmTile tile = convGemmTile(view, unitOf(target));
      ASSERT_TRUE(tile.applies());
      d.weightPanel = tile.mr;
      inputs[1] = packConvWeightPanels(in.w, t.oc, k, tile.mr, t.groups);
    } else if (layout == ConvWeights::OcVectorPanels) {
      OcVectorTile tile = ocVectorTile(view, unitOf(target));
      if (!tile.applies()) continue;  // AVX-512's 32-channel panels need 32 per group
      d.weightPanel = tile.oc();
      inputs[1] = packConvWeightPanels(in.w, t.oc, k, tile.oc(), t.groups);
    }
    d.weightLayout = layout;
    if (t.bias) inputs.push_back(in.b);
    if (t.residual) inputs.push_back(in.r);
    std::vector<float> want = testing::referenceConv(t, in, d.output.shape);
    std::vector<float> got = testing::runKernel(d, inputs, {1, 2, 5}, target);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-4f + 1e-4f * std::fabs(want[i])) << "element " << i;
  }
}

TEST(ConvGrouped, ViewIsGroupsOneOverMoreImages) {
  Case t{2, 12, 9, 9, 18, 3, 3};
  t.pads = {1, 1, 1, 1};
  t.groups = 3;
  KernelDesc view = groupedView(testing::describeConv(t, "v"));
  EXPECT_EQ(view.groups, 1);
  EXPECT_EQ(view.inputs[0].shape, (std::vector<int64_t>{6, 4, 9, 9}));
  EXPECT_EQ(view.inputs[1].shape, (std::vector<int64_t>{6, 4, 3, 3}));
  EXPECT_EQ(view.inputs[2].shape, (std::vector<int64_t>{6}));
  EXPECT_EQ(view.output.shape, (std::vector<int64_t>{6, 6, 9, 9}));
  // The epilogue keeps the real output's shape.
  EXPECT_EQ(view.epilogue.shape, (std::vector<int64_t>{2, 18, 9, 9}));
  // Depthwise convolutions (one input channel per group) keep their own kernel.
  Case dw{1, 16, 9, 9, 16, 3, 3};
  dw.groups = 16;
  EXPECT_EQ(groupedView(testing::describeConv(dw, "dw")).groups, 16);
}

TEST(ConvGrouped, PanelsPerGroup) {
  // 2 groups of 3 output channels of 2 values, panels of 2: per group rows 0 1 interleaved,
  // then row 2; group 1 the same from value 6 on.
  std::vector<float> w;
  for (int i = 0; i < 12; ++i) w.push_back(float(i));
  std::vector<float> want = {0, 2, 1, 3, 4, 5, 6, 8, 7, 9, 10, 11};
  EXPECT_EQ(packConvWeightPanels(w, 6, 2, 2, 2), want);
}

TEST(ConvGrouped, PolicyTakesTheGemmKernels) {
  // ShuffleNet v1's grouped 1x1 convolutions (3 groups): on small maps the
  // output-channel-vectorised kernel, on larger ones the pixel-vectorised one.
  Case small{1, 960, 2, 2, 240, 1, 1};
  small.groups = 3;
  EXPECT_EQ(chooseConvWeights(testing::describeConv(small, "s"), {16, 32}),
            ConvWeights::OcVectorPanels);
  Case large{1, 240, 16, 16, 240, 1, 1};
  large.groups = 3;
  EXPECT_EQ(chooseConvWeights(testing::describeConv(large, "l"), {16, 32}),
            ConvWeights::GemmPanels);
  EXPECT_EQ(chooseConvWeights(testing::describeConv(large, "l"), {8, 16}),
            ConvWeights::GemmPanels);
  // Not Winograd, whose kernel has no groups: a grouped 3x3 stride-1 convolution too.
  Case threeByThree{1, 64, 28, 28, 64, 3, 3};
  threeByThree.pads = {1, 1, 1, 1};
  threeByThree.groups = 2;
  EXPECT_EQ(chooseConvWeights(testing::describeConv(threeByThree, "t"), {16, 32}),
            ConvWeights::GemmPanels);
  // Depthwise: not the GEMM kernels.
  Case dw{1, 32, 14, 14, 32, 3, 3};
  dw.groups = 32;
  EXPECT_EQ(chooseConvWeights(testing::describeConv(dw, "dw"), {16, 32}), ConvWeights::Oihw);
}

TEST(ConvGrouped, PixelGemm) {
  // 1x1 in 3 groups, bias and Relu; 3x3 with pads in 2 groups, two images; 3x3 stride 2 in 4
  // groups of 5 output channels (not a multiple of MR); 8 groups of 8 with a residual chain.
  Case pointwise{1, 48, 16, 16, 96, 1, 1};
  pointwise.groups = 3;
  pointwise.act = Activation::Relu;
  Case padded{2, 16, 12, 12, 32, 3, 3};
  padded.pads = {1, 1, 1, 1};
  padded.groups = 2;
  Case strided{1, 24, 17, 17, 20, 3, 3};
  strided.strides = {2, 2};
  strided.pads = {1, 1, 1, 1};
  strided.groups = 4;
  Case residual{1, 64, 10, 10, 64, 1, 1};
  residual.groups = 8;
  residual.residual = true;
  for (const Case& t : {pointwise, padded, strided, residual}) {
    check(t, ConvWeights::GemmPanels);
    check(t, ConvWeights::Oihw);
  }
}

TEST(ConvGrouped, OutputChannelVectorised) {
  // Small maps: 2x2 and 4x4 1x1 convolutions in 3 groups (ShuffleNet v1's last stage), 80 and
  // 40 output channels per group, a residual chain; a 3x3 on a 7x7 map in 2 groups of 64;
  // two images.
  Case last{1, 960, 2, 2, 240, 1, 1};
  last.groups = 3;
  last.act = Activation::Relu;
  Case expand{2, 120, 4, 4, 120, 1, 1};
  expand.groups = 3;
  expand.residual = true;
  Case threeByThree{1, 64, 7, 7, 128, 3, 3};
  threeByThree.pads = {1, 1, 1, 1};
  threeByThree.groups = 2;
  for (const Case& t : {last, expand, threeByThree}) check(t, ConvWeights::OcVectorPanels);
  // A short-row stem in 2 groups (2 input and 32 output channels each, 11x11 stride 4 into
  // 23x23: taken on AVX-512 only): its groups are images of the groups-1 view, split by tiles.
  Case stem{1, 4, 96, 96, 64, 11, 11, {4, 4}};
  stem.pads = {2, 2, 2, 2};
  stem.groups = 2;
  stem.act = Activation::Relu;
  EXPECT_TRUE(ocVectorWins(groupedView(testing::describeConv(stem, "stem")), {16, 32}));
  check(stem, ConvWeights::OcVectorPanels);
}

}  // namespace
}  // namespace kiln::codegen
