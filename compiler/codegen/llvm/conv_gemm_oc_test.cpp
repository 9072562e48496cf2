// The output-channel-vectorised convolution GEMM (emit_conv_gemm_oc.cpp, policy in
// conv_gemm_oc_plan.cpp) against a straightforward double-precision reference: 1x1 convs read
// in place (stride 1 and 2), 3x3 and others through the im2col (stride 1 and 2, pads,
// dilation), output channels not a multiple of the tile's, pixel counts not a multiple of the
// tile's, maps smaller than a tile, two images, bias, Relu/Clip and a residual chain; the
// weights packed as the driver packs them. Also the plan's choices.
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/codegen/conv_gemm_plan.h"
#include "conv_reference.h"
#include "test_support.h"

namespace kiln::codegen {
namespace {

using testing::product;
using testing::randomFloats;
using testing::runKernel;

using testing::f32;
using Case = testing::ConvCase;

// The vector unit of a friendly target name.
VectorUnit unitOf(const std::string& target) {
  TargetRequest request;
  request.name = target;
  return vectorUnitOf(target == "host" ? testing::hostTarget() : resolveTarget(request));
}

KernelDesc describe(const Case& t) { return testing::describeConv(t, "conv_gemm_oc"); }

// Runs on `target` (a friendly name the test machine can run).
void checkOn(const Case& t, const std::string& target) {
  SCOPED_TRACE(target);
  KernelDesc d = describe(t);
  OcVectorTile tile = ocVectorTile(d, unitOf(target));
  ASSERT_TRUE(tile.applies()) << "the channel-vectorised kernel should take this convolution";
  const int64_t k = t.c * t.kh * t.kw;
  testing::ConvOperands in = testing::randomConvOperands(t);
  d.weightLayout = ConvWeights::OcVectorPanels;
  d.weightPanel = tile.oc();
  std::vector<std::vector<float>> inputs = {in.x, packConvWeightPanels(in.w, t.oc, k, tile.oc())};
  if (t.bias) inputs.push_back(in.b);
  if (t.residual) inputs.push_back(in.r);
  std::vector<float> want = testing::referenceConv(t, in, d.output.shape);
  std::vector<float> got = runKernel(d, inputs, {1, 2, 5}, target);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4f + 1e-4f * std::fabs(want[i])) << "element " << i;
}

// Runs on `target`, or by default on each x86-64 vector target this machine runs: AVX2 always
// (the cases are sized for its 16-channel panels), AVX-512 where its 32-channel panels apply.
void check(const Case& t, const std::string& target = "") {
  if (!target.empty()) return checkOn(t, target);
  for (const std::string& name : testing::runnableVectorTargets())
    if (name == "x86_64-v3" || ocVectorTile(describe(t), unitOf(name)).applies()) checkOn(t, name);
}

// The items two threads share best: MobileNetV2's 14x14 project convs (96 channels: three
// 32-channel panels and 14 tiles of 14 pixels on AVX-512) would split 1 : 2 by panels, 7 : 7
// by tiles; 7x7 maps (7 tiles of 7 pixels) are too small to split by tiles; wide layers in two
// halves of panels (more groups would pack the pixels again); the im2col path (which packs
// every pixel per item) only by panels, unless its packed rows outweigh the weights (a stem's
// 64 channels over 529 pixels: then by tiles, packing each row once); three panels that need
// two groups (the partial sums' budget) in two, with two tile groups each; two images are two
// equal items already.
TEST(ConvGemmOc, ItemsShareTwoThreads) {
  // A map of `pixels` in `tiles` equal tiles.
  auto items = [](int64_t images, int64_t panels, int64_t tiles, int64_t pixels,
                  PixelSplit split, int64_t minGroups) {
    OcVectorItems s =
        ocVectorItems(images, panels, 32, 32, tiles, pixels / tiles, split, minGroups);
    return std::pair<int64_t, int64_t>{s.ocGroups, s.pixelGroups};
  };
  using P = std::pair<int64_t, int64_t>;
  const PixelSplit allowed = PixelSplit::Allowed;
  EXPECT_EQ(items(1, 3, 14, 196, allowed, 1), P(1, 2));
  EXPECT_EQ(items(1, 5, 7, 49, allowed, 1).second, 1);
  EXPECT_EQ(items(1, 40, 7, 49, allowed, 1), P(2, 1));
  EXPECT_EQ(items(1, 16, 7, 49, PixelSplit::None, 1), P(2, 1));
  EXPECT_EQ(items(1, 2, 46, 529, PixelSplit::None, 1), P(2, 1));
  EXPECT_EQ(items(1, 2, 46, 529, PixelSplit::Preferred, 1), P(1, 2));
  EXPECT_EQ(items(1, 3, 14, 196, allowed, 2), P(2, 2));
  EXPECT_EQ(items(2, 3, 14, 196, allowed, 1), P(1, 1));
}

TEST(ConvGemmOc, Pointwise) {
  check({1, 24, 7, 7, 32, 1, 1});    // 49 pixels, two full panels
  check({1, 40, 14, 14, 24, 1, 1});  // 196 pixels, a half-width last panel
  check({2, 16, 5, 9, 21, 1, 1});    // two images, a 5-channel last panel
  check({1, 8, 2, 2, 16, 1, 1});     // 4 pixels: one narrow tile
}

TEST(ConvGemmOc, PointwiseTileGroups) {
  // Few panels on maps of 196-256 pixels: items split by tiles, each storing only its pixels
  // (the last tile, shifted back, overlaps the one before); with K blocks and a residual.
  check({1, 48, 14, 14, 48, 1, 1});
  check({1, 300, 14, 14, 40, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, Activation::Relu, true});
  check({1, 64, 16, 16, 80, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, Activation::Clip, true});
  check({1, 32, 15, 15, 24, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, Activation::None, true});
}

TEST(ConvGemmOc, PointwiseKBlocks) {
  check({1, 300, 4, 4, 16, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, false});  // 2 blocks of 150
  // Blocks of 130 and 129 channels, two images, a residual chain.
  check({2, 259, 5, 5, 40, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, Activation::Relu, true});
}

// 7x7 maps over several K blocks and panels, like MobileNetV2's and ResNet-18's last layers:
// on AVX-512 every tile prefetches its share of the next block's weights over its microkernel
// iterations (at its start on AVX2).
TEST(ConvGemmOc, SevenBySevenWeightPrefetches) {
  check({1, 600, 7, 7, 96, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, Activation::Relu});
  check({1, 40, 14, 14, 64, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, Activation::None, true});
}

TEST(ConvGemmOc, PointwiseStrided) {
  check({1, 20, 14, 14, 32, 1, 1, {2, 2}});  // ResNet's downsample shape, smaller
  check({1, 12, 9, 13, 19, 1, 1, {2, 3}});   // uneven strides
}

TEST(ConvGemmOc, Im2col) {
  check({1, 8, 7, 7, 16, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}});
  check({1, 12, 13, 13, 40, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu});
  check({2, 5, 9, 11, 17, 3, 3, {1, 1}, {2, 2}, {2, 2, 2, 2}});   // dilation 2
  check({1, 4, 6, 10, 16, 3, 5, {1, 2}, {1, 1}, {0, 2, 1, 0}});   // asymmetric pads
  check({1, 3, 8, 8, 16, 1, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}});    // padded 1x1
  check({1, 4, 8, 7, 16, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}});    // 7-wide rows, 56 pixels
  check({1, 6, 20, 20, 16, 3, 3, {3, 3}, {1, 1}, {1, 1, 1, 1}});  // stride 3: loads + shuffle
  check({1, 4, 26, 26, 16, 3, 3, {5, 5}, {1, 1}, {1, 1, 1, 1}});  // stride 5: per column
}

TEST(ConvGemmOc, Im2colKBlocks) {
  // 61 channels x 9 taps: five blocks of 11 channels and one of 6 (<= 108 rows each).
  check({1, 61, 13, 13, 24, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}});
  check({2, 35, 8, 8, 32, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu, true});
}

TEST(ConvGemmOc, Activations) {
  check({1, 32, 7, 7, 48, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, Activation::Clip});
  check({1, 16, 6, 6, 20, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu});
}

TEST(ConvGemmOc, ResidualChain) {
  check({1, 16, 7, 7, 32, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::None, true});
  check({2, 24, 5, 11, 23, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, Activation::Relu, true});
}

TEST(ConvGemmOc, FourLaneTiles) {
  // SSE (x86_64): 8-channel panels of two 4-lane vectors, tiles of 6 pixels transposed in
  // two chunks of 4 (as on NEON, whose tiles are 6 x 16).
  ASSERT_EQ(ocVectorTile(describe({1, 24, 7, 7, 32, 1, 1}), unitOf("x86_64")).pixels, 5);
  check({1, 24, 7, 7, 20, 1, 1}, "x86_64");
  check({1, 12, 6, 6, 16, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu, true},
        "x86_64");
  check({2, 9, 9, 9, 13, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, false, Activation::Clip}, "x86_64");
}

TEST(ConvGemmOc, WideAndNeonTiles) {
  // Compile-only: on AVX-512 (32-channel panels, 12-pixel tiles, 16-lane transposes) and NEON
  // (16 channels as 4 vectors, 6-pixel tiles transposed in chunks of 4) the tiles become
  // vector multiply-adds.
  for (const testing::WideTarget& t : testing::wideTargets()) {
    TargetRequest request;
    request.name = t.name;
    TargetConfig target = resolveTarget(request);
    KernelDesc d = describe(
        {1, 64, 7, 7, 72, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu, true});
    OcVectorTile tile = ocVectorTile(d, vectorUnitOf(target));
    ASSERT_TRUE(tile.applies()) << t.name;
    d.weightLayout = ConvWeights::OcVectorPanels;
    d.weightPanel = tile.oc();
    CodegenResult result = generateKernels({d}, target);
    std::string text = testing::disassemble(result);
    int vectorMultiplyAdds = testing::vectorMultiplyAdds(text, t);
    EXPECT_GE(vectorMultiplyAdds, tile.pixels * tile.ocVectors) << t.name;
  }
}

TEST(ConvGemmOc, PlanTakesSmallMaps) {
  const VectorUnit avx2{8, 16};
  KernelDesc small = describe({1, 320, 7, 7, 1280, 1, 1});
  OcVectorTile tile = ocVectorTile(small, avx2);
  ASSERT_TRUE(tile.applies());
  EXPECT_EQ(tile.oc(), 16);
  EXPECT_EQ(tile.pixels, 5);  // 49 pixels: 10 tiles of 5 (50) beat 9 of 6 (54)
  // 196 pixels: 33 tiles of 6 (198), not 49 of 4 (8 accumulators, slower) or 40 of 5 (200).
  EXPECT_EQ(ocVectorTile(describe({1, 384, 14, 14, 64, 1, 1}), avx2).pixels, 6);
  EXPECT_EQ(ocVectorTile(describe({1, 8, 2, 2, 16, 1, 1}), avx2).pixels, 4);      // the whole map
  EXPECT_EQ(chooseConvWeights(small, avx2), ConvWeights::OcVectorPanels);
  EXPECT_FALSE(ocVectorTile(describe({1, 64, 56, 56, 64, 1, 1}), avx2).applies());  // big map
  EXPECT_FALSE(ocVectorTile(describe({1, 64, 7, 7, 8, 1, 1}), avx2).applies());     // OC < 16
  // Chosen for maps of at most 64 pixels; larger ones (up to 256) only when asked for.
  EXPECT_TRUE(ocVectorWins(small, avx2));
  EXPECT_TRUE(ocVectorWins(describe({1, 256, 14, 14, 512, 1, 1, {2, 2}}), avx2));  // to 7x7
  // 14x14 maps with a long K and 96-256 output channels: MobileNetV2's project convs,
  // ResNet-18's layer3.0 conv1; not short K, 64 channels or SqueezeNet's classifier.
  EXPECT_TRUE(ocVectorWins(describe({1, 576, 14, 14, 96, 1, 1}), avx2));
  EXPECT_TRUE(ocVectorWins(describe({1, 384, 14, 14, 96, 1, 1}), avx2));
  EXPECT_TRUE(
      ocVectorWins(describe({1, 128, 28, 28, 256, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}}), avx2));
  EXPECT_TRUE(ocVectorTile(describe({1, 384, 14, 14, 64, 1, 1}), avx2).applies());
  EXPECT_FALSE(ocVectorWins(describe({1, 384, 14, 14, 64, 1, 1}), avx2));
  EXPECT_FALSE(ocVectorWins(describe({1, 192, 14, 14, 96, 1, 1}), avx2));
  EXPECT_FALSE(ocVectorWins(describe({1, 512, 13, 13, 1000, 1, 1}), avx2));
  EXPECT_FALSE(ocVectorWins(describe({1, 576, 16, 16, 96, 1, 1}), avx2));  // 256 pixels
  EXPECT_EQ(chooseConvWeights(describe({1, 96, 14, 14, 576, 1, 1}), avx2), ConvWeights::GemmPanels);
  // ResNet-18's layer4.0 conv1 (3x3 stride 2 into 7x7): its im2col in K blocks.
  EXPECT_TRUE(
      ocVectorWins(describe({1, 256, 14, 14, 512, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}}), avx2));
  EXPECT_FALSE(ocVectorTile(describe({1, 8, 3, 40, 16, 3, 3}), avx2).applies());  // 38-wide rows
  EXPECT_FALSE(ocVectorTile(small, {0, 0}).applies());  // microcontrollers
}

// Few-channel stems with rows narrower than the pixel-vectorised kernel's 32-pixel tiles and
// a width stride of 3 or more, on AVX-512 only: AlexNet's 11x11 stride-4 stem on a 96x96
// input (23x23), a 4x4 stride-4 patch stem; not stride 2 (SqueezeNet 1.0's 7x7 stem on
// 64x64), not AVX2, not wide rows (224x224: 55x55) or more than 4 input channels.
TEST(ConvGemmOc, PlanTakesShortRowStems) {
  const VectorUnit avx512{16, 32}, avx2{8, 16};
  const KernelDesc alexnet =
      describe({1, 3, 96, 96, 64, 11, 11, {4, 4}, {1, 1}, {2, 2, 2, 2}, true, Activation::Relu});
  EXPECT_TRUE(ocVectorWins(alexnet, avx512));
  EXPECT_EQ(chooseConvWeights(alexnet, avx512), ConvWeights::OcVectorPanels);
  EXPECT_EQ(ocVectorTile(alexnet, avx512).oc(), 32);
  EXPECT_TRUE(ocVectorWins(describe({1, 3, 96, 96, 64, 4, 4, {4, 4}}), avx512));
  EXPECT_FALSE(ocVectorWins(alexnet, avx2));
  EXPECT_FALSE(ocVectorTile(alexnet, avx2).applies());
  EXPECT_FALSE(
      ocVectorWins(describe({1, 3, 64, 64, 96, 7, 7, {2, 2}, {1, 1}, {0, 0, 0, 0}}), avx512));
  EXPECT_FALSE(
      ocVectorTile(describe({1, 3, 224, 224, 64, 11, 11, {4, 4}, {1, 1}, {2, 2, 2, 2}}), avx512)
          .applies());
  EXPECT_FALSE(
      ocVectorWins(describe({1, 8, 96, 96, 64, 11, 11, {4, 4}, {1, 1}, {2, 2, 2, 2}}), avx512));
}

// The stems above against the reference: 529 pixels in two tile groups, each packing only the
// output rows of its tiles (three K blocks of 121 taps); 3 panels split by tiles (26x26, 3x3
// stride 3); two images with a residual chain.
TEST(ConvGemmOc, ShortRowStems) {
  if (!testing::hostRunsAvx512()) GTEST_SKIP() << "the stems take this kernel on AVX-512 only";
  checkOn({1, 3, 96, 96, 64, 11, 11, {4, 4}, {1, 1}, {2, 2, 2, 2}, true, Activation::Relu},
          "x86_64-v4");
  checkOn({1, 3, 80, 80, 96, 3, 3, {3, 3}, {1, 1}, {0, 0, 0, 0}}, "x86_64-v4");
  checkOn({2, 3, 40, 44, 40, 4, 4, {4, 4}, {1, 1}, {0, 1, 0, 1}, false, Activation::None, true},
          "x86_64-v4");
}

// AVX-512: 32-channel panels; 14x14 maps read in place in tiles of 14 pixels (14 x 2
// accumulators), the im2col path and 7x7 maps in tiles of at most 12 (here 7).
TEST(ConvGemmOc, Avx512Tiles) {
  const VectorUnit avx512{16, 32};
  OcVectorTile project = ocVectorTile(describe({1, 576, 14, 14, 96, 1, 1}), avx512);
  EXPECT_EQ(project.oc(), 32);
  EXPECT_EQ(project.pixels, 14);
  EXPECT_EQ(ocVectorTile(describe({1, 960, 7, 7, 320, 1, 1}), avx512).pixels, 7);
  EXPECT_EQ(
      ocVectorTile(describe({1, 128, 28, 28, 256, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}}), avx512)
          .pixels,
      7);  // 196 pixels in 28 tiles of 7: no 14-pixel tiles on the im2col path
  check({1, 200, 14, 14, 64, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, Activation::None, true});
}

// Maps split only by panels take one-vector panels on AVX-512 where two-vector ones would be
// an odd count: MobileNetV2's 7x7 960 -> 160 (five panels of 32 -> ten of 16, tiles of 10
// pixels), and a 7x7 96-channel conv; an even count (320), a map that splits by tiles (14x14,
// 96 channels), channels that are not whole vectors (168) and AVX2 keep two vectors.
TEST(ConvGemmOc, OneVectorPanelsWhereTwoWouldShareUnevenly) {
  const VectorUnit avx512{16, 32}, avx2{8, 16};
  OcVectorTile narrow = ocVectorTile(describe({1, 960, 7, 7, 160, 1, 1}), avx512);
  EXPECT_EQ(narrow.ocVectors, 1);
  EXPECT_EQ(narrow.pixels, 10);
  EXPECT_EQ(ocVectorTile(describe({1, 64, 7, 7, 96, 1, 1}), avx512).ocVectors, 1);
  EXPECT_EQ(ocVectorTile(describe({1, 960, 7, 7, 320, 1, 1}), avx512).ocVectors, 2);
  EXPECT_EQ(ocVectorTile(describe({1, 576, 14, 14, 96, 1, 1}), avx512).ocVectors, 2);
  EXPECT_EQ(ocVectorTile(describe({1, 960, 7, 7, 168, 1, 1}), avx512).ocVectors, 2);
  EXPECT_EQ(ocVectorTile(describe({1, 960, 7, 7, 160, 1, 1}), avx2).ocVectors, 2);
  // Against the reference (with a residual, and a 3x3 im2col conv into 7x7 with 80 channels).
  check({1, 96, 7, 7, 160, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, Activation::None, true});
  check({1, 24, 14, 14, 80, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu});
}

}  // namespace
}  // namespace kiln::codegen
