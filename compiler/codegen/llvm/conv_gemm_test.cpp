// The convolution GEMM kernel (emit_conv_gemm.cpp, emit_gemm_microkernel.cpp) against a
// straightforward double-precision reference: many shapes (1x1 to 7x7, strides, dilation,
// asymmetric pads, OC not a multiple of MR, pixel counts not a multiple of NR, K larger than
// a K block, two images), bias, fused activation and a residual epilogue chain, with the
// weights packed in panel order (conv_gemm_plan.h) as the driver packs them, and unpacked.
// Also the packing itself and the plan's choices.
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

TargetConfig targetNamed(const std::string& name) {
  if (name == "host") return testing::hostTarget();
  TargetRequest request;
  request.name = name;
  return resolveTarget(request);
}

void checkOn(const Case& t, bool pack, const std::string& target) {
  SCOPED_TRACE(target);
  KernelDesc d = testing::describeConv(t, "conv_gemm");
  ConvGemmTile tile = convGemmTile(d, vectorUnitOf(targetNamed(target)));
  ASSERT_TRUE(tile.applies()) << "the GEMM kernel should take this convolution";
  const int64_t k = t.c * t.kh * t.kw;
  testing::ConvOperands in = testing::randomConvOperands(t);
  std::vector<std::vector<float>> inputs = {in.x, in.w};
  if (pack) {
    d.weightLayout = ConvWeights::GemmPanels;
    d.weightPanel = tile.mr;
    inputs[1] = packConvWeightPanels(in.w, t.oc, k, tile.mr);
  }
  if (t.bias) inputs.push_back(in.b);
  if (t.residual) inputs.push_back(in.r);
  std::vector<float> want = testing::referenceConv(t, in, d.output.shape);
  std::vector<float> got = runKernel(d, inputs, {1, 2, 5}, target);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4f + 1e-4f * std::fabs(want[i])) << "element " << i;
}

// `target`: a friendly target the test machine runs ("x86_64": SSE); by default every vector
// target it runs (AVX2, and AVX-512 where the host has it: their tiles and paths differ).
void check(const Case& t, bool pack = true, const std::string& target = "") {
  if (!target.empty()) return checkOn(t, pack, target);
  for (const std::string& name : testing::runnableVectorTargets()) checkOn(t, pack, name);
}

TEST(ConvGemm, PanelPackingOrder) {
  // 5 output channels of 3 values in panels of 2: [0 1][2 3] rows interleaved, then row 4.
  std::vector<float> w;
  for (int i = 0; i < 15; ++i) w.push_back(float(i));
  std::vector<float> want = {0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11, 12, 13, 14};
  EXPECT_EQ(packConvWeightPanels(w, 5, 3, 2), want);
}

TEST(ConvGemm, TileFollowsTheVectorUnit) {
  KernelDesc d;
  d.kind = KernelKind::Conv;
  d.inputs = {f32({1, 8, 9, 9}), f32({8, 8, 3, 3})};
  d.output = f32({1, 8, 9, 9});
  ConvGemmTile avx2 = convGemmTile(d, {8, 16});
  EXPECT_EQ(avx2.mr, 6);
  EXPECT_EQ(avx2.nr(), 16);
  ConvGemmTile avx512 = convGemmTile(d, {16, 32});
  EXPECT_EQ(avx512.nr(), 32);
  EXPECT_EQ(avx512.mr * avx512.nrVectors + avx512.nrVectors + 1 <= 32, true);
  d.inputs = {f32({1, 32, 9, 9}), f32({16, 32, 1, 1})};
  d.output = f32({1, 16, 9, 9});
  ConvGemmTile pointwise16 = convGemmTile(d, {8, 16});  // 16 = 4 + 4 + 4 + 4, not 6 + 6 + 4
  EXPECT_EQ(pointwise16.mr, 4);
  EXPECT_EQ(pointwise16.nr(), 24);
  d.inputs = {f32({1, 8, 9, 9}), f32({8, 8, 3, 3})};
  d.output = f32({1, 8, 9, 9});
  ConvGemmTile neon = convGemmTile(d, {4, 32});
  EXPECT_EQ(neon.nr(), 16);
  EXPECT_FALSE(convGemmTile(d, {0, 0}).applies());  // microcontrollers keep their kernels
  d.bindingsMayAlias = true;
  EXPECT_FALSE(convGemmTile(d, {8, 16}).applies());  // partial sums would clobber an operand
  d.bindingsMayAlias = false;
  d.groups = 2;
  d.inputs[1] = f32({8, 4, 3, 3});
  EXPECT_FALSE(convGemmTile(d, {8, 16}).applies());  // grouped: the other kernels
}

TEST(ConvGemm, Pointwise) {
  check({1, 16, 7, 9, 13, 1, 1});          // direct B, 63 pixels (tail), OC % 6 = 1
  check({2, 40, 14, 14, 32, 1, 1});        // two images
  check({1, 300, 4, 4, 70, 1, 1}, false);  // 1x1 with many channels: packed B, unpacked A
  check({2, 160, 5, 5, 65, 1, 1});         // C > kMaxDirectK, OC > kFewOC: packed K blocks
  check({1, 520, 5, 7, 13, 1, 1});         // C > kMaxFewOCK: packed, K blocks of 260
  // K = 1100: four blocks of 275 channels, the partial sums through the output.
  check({1, 1100, 3, 7, 70, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, Activation::Relu});
  check({1, 8, 10, 10, 8, 1, 1, {2, 2}});  // stride 2: im2col panel
  // 8 or 16 output channels, read in place: AVX2 tiles of 4 rows x 24 pixels.
  check({1, 32, 11, 13, 16, 1, 1});  // 143 pixels: 5 tiles and a 23-pixel tail
  check({2, 12, 7, 9, 8, 1, 1}, false);
}

// Up to kMaxFewOCK (256; AVX-512 kMaxFewOCK16, 512) channels into at most kFewOC (64): B read
// in place, tile by tile over every panel, the next tile's rows prefetched (the last full
// tile's prefetch stays in the map).
TEST(ConvGemm, PointwiseFewOutputChannels) {
  check({1, 200, 4, 4, 12, 1, 1}, false);  // one full tile, unpacked A
  check({2, 160, 5, 5, 13, 1, 1});         // 25 pixels: a 9-pixel tail, OC % 6 = 1
  check({1, 256, 13, 13, 48, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, Activation::Relu});
  check({1, 256, 9, 11, 64, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, Activation::None, true});
  // 384 channels: packed again on AVX2 (a tile's rows would not fit L1), one 384-row K block;
  // in place on AVX-512 (up to kMaxFewOCK16, 512 channels), as is 512 -> 64.
  check({1, 384, 7, 9, 64, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, Activation::None, true});
  check({1, 512, 13, 13, 64, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, Activation::Relu});
  check({1, 520, 5, 5, 48, 1, 1});  // over 512: packed on both
  check({1, 144, 7, 7, 32, 1, 1});  // 49 = 3 x 16 + 1: the tail over panel pairs
  check({2, 129, 6, 5, 7, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, Activation::Clip});
}

// SSE's 4-lane tiles (6 x 8) on the same paths: read in place, packed, im2col.
TEST(ConvGemm, SseTiles) {
  check({1, 200, 9, 7, 20, 1, 1}, true, "x86_64");  // in place, 63 pixels
  check({1, 24, 5, 5, 9, 1, 1}, false, "x86_64");   // 25 = 3 x 8 + 1
  check({1, 150, 6, 6, 70, 1, 1}, true, "x86_64");  // packed K blocks
  check({1, 8, 11, 13, 10, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu}, true,
        "x86_64");
}

// Compile-only: AVX-512 and NEON tiles of the in-place 1x1 kernel become vector
// multiply-adds, with the prefetches of the next tile.
TEST(ConvGemm, WideAndNeonTiles) {
  for (const testing::WideTarget& t : testing::wideTargets()) {
    TargetConfig target = targetNamed(t.name);
    KernelDesc d = testing::describeConv({1, 256, 13, 13, 48, 1, 1}, "conv_gemm");  // in place
    ConvGemmTile tile = convGemmTile(d, vectorUnitOf(target));
    ASSERT_TRUE(tile.applies()) << t.name;
    d.weightLayout = ConvWeights::GemmPanels;
    d.weightPanel = tile.mr;
    CodegenResult result = generateKernels({d}, target);
    std::string text = testing::disassemble(result);
    int vectorMultiplyAdds = testing::vectorMultiplyAdds(text, t);
    EXPECT_GE(vectorMultiplyAdds, tile.mr * tile.nrVectors) << t.name;
    EXPECT_NE(text.find(t.prefetch), std::string::npos) << t.name;
    // Packed tiles prefetch the next panel's weights (B is not read in place here).
    KernelDesc packed = testing::describeConv({1, 600, 9, 9, 70, 1, 1}, "conv_gemm");
    packed.weightLayout = ConvWeights::GemmPanels;
    packed.weightPanel = convGemmTile(packed, vectorUnitOf(target)).mr;
    std::string packedText = testing::disassemble(generateKernels({packed}, target));
    EXPECT_NE(packedText.find(t.prefetch), std::string::npos) << t.name << " (packed)";
  }
}

// Packed 1x1 tiles like SqueezeNet's classifier (169 pixels: a 9-pixel tail over panel pairs
// on AVX-512, groups of tiles over many panels, each prefetching the next panel's weights;
// on AVX-512 the whole map is one group of tiles, 384 KB of B panels, also with two images).
TEST(ConvGemm, PackedPanelsPrefetchingWeights) {
  check({1, 512, 13, 13, 100, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, Activation::Relu});
  check({2, 300, 6, 11, 90, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, Activation::None, true});
}

TEST(ConvGemm, ThreeByThree) {
  check({1, 8, 20, 37, 14, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}});  // row tiles + tail
  check({1, 64, 14, 14, 20, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu});
  check({1, 40, 7, 7, 9, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}});  // K = 360 > one block
  check({2, 5, 17, 16, 7, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, false});
  check({1, 3, 12, 40, 6, 3, 3, {1, 1}, {2, 2}, {2, 2, 2, 2}});  // dilation 2
  check({1, 4, 11, 33, 5, 3, 3, {1, 1}, {1, 1}, {0, 2, 1, 0}});  // asymmetric pads
  check({1, 30, 9, 9, 6, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}}, false);
}

TEST(ConvGemm, OneVectorTailsOverPanelPairs) {
  check({1, 16, 7, 7, 64, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}});  // 49 = 3 x 16 + 1
  check({2, 24, 6, 4, 70, 1, 1});                                // direct, 24 = 16 + 8
  check({1, 9, 7, 7, 64, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu, true}, false);
  check({1, 5, 11, 56, 60, 3, 3, {1, 1}, {1, 1}, {0, 1, 0, 1}});  // 616 = 38 x 16 + 8
}

TEST(ConvGemm, LargeKernels) {
  check({1, 3, 40, 40, 10, 7, 7, {2, 2}, {1, 1}, {3, 3, 3, 3}, true, Activation::Relu});
  check({1, 6, 15, 21, 8, 5, 5, {1, 2}, {1, 1}, {2, 1, 2, 3}});
  check({1, 2, 9, 30, 4, 1, 5, {1, 1}, {1, 1}, {0, 2, 0, 2}});
  check({1, 4, 9, 70, 5, 3, 3, {1, 3}, {1, 1}, {1, 1, 1, 1}});  // row tiles, stride 3 loads
}

// Flattened tiles over rows narrower than a tile with a stride or a width change: the
// im2col panel reads per-row segments (emit_im2col.h), or gathers when rows are tiny.
TEST(ConvGemm, StridedNarrowRows) {
  check({1, 8, 28, 28, 13, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}});  // 14x14 out: 2 segments
  check({2, 16, 14, 14, 20, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu});  // 7x7
  check({1, 24, 14, 14, 9, 1, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, true, Activation::None, true});
  check({1, 5, 21, 21, 7, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}});   // 11x11 out
  check({1, 6, 20, 20, 8, 3, 3, {3, 3}, {1, 1}, {0, 0, 0, 0}});   // stride 3, 6x6: 3 segments
  check({1, 4, 15, 15, 6, 3, 3, {2, 2}, {2, 2}, {2, 2, 2, 2}});   // dilation 2 with stride 2
  check({1, 7, 8, 8, 10, 1, 1, {2, 2}}, false);                   // 4x4 out, unpacked A
  check({1, 3, 4, 4, 5, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}});     // 2x2 out: gathers
  check({1, 9, 9, 9, 7, 3, 3});                                   // stride 1, 9 -> 7 wide
  check({1, 6, 13, 17, 11, 3, 3, {2, 2}, {1, 1}, {0, 1, 2, 0}});  // asymmetric pads, 8 wide
  check({1, 3, 9, 13, 4, 3, 3, {2, 3}, {1, 1}, {1, 1, 1, 1}});    // strides differ, 5x5
}

// Row tiles over 2 or 3 output rows where one row would end in a wide, partly empty tile.
TEST(ConvGemm, RowGroups) {
  check({1, 8, 56, 56, 13, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu});  // 28
  check({2, 5, 18, 28, 7, 3, 3});                                // stride 1, 26 wide
  check({1, 6, 18, 58, 9, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}});  // 9 rows of 29: 3 at a time
  check({1, 4, 56, 56, 8, 1, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, false, Activation::None, true});
}

TEST(ConvGemm, Stems) {
  check({1, 3, 30, 30, 16, 7, 7, {2, 2}, {1, 1}, {3, 3, 3, 3}, true, Activation::Relu});
  check({2, 3, 23, 23, 10, 3, 3, {2, 2}});  // 11x11 out, no padding
  check({1, 3, 35, 35, 8, 3, 3, {2, 2}});   // 17x17 out: row tiles, 1-pixel tails
  check({1, 3, 64, 64, 32, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, Activation::Clip});
}

TEST(ConvGemm, FusedEpilogue0) {
  check({1, 16, 14, 14, 16, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::None, true});
}

TEST(ConvGemm, FusedEpilogue1) {
  check({2, 12, 8, 20, 11, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, Activation::Clip, true});
}

TEST(ConvGemm, FusedEpilogue2) {
  check({1, 70, 6, 6, 8, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Activation::Relu, true});
}

TEST(ConvGemm, FusedEpilogue3) {
  check({1, 24, 5, 11, 7, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, Activation::None, true});
}

TEST(ConvGemm, SigmoidAndTanhOnTheTiles) {
  // The activation field's Sigmoid and Tanh evaluate on the accumulators' vectors
  // (math_approx.h takes vectors): a 3x3 with pads, a pointwise conv with a pixel tail, on
  // every vector target the machine runs; and the output-channel-vectorised kernel's small map.
  for (Activation act : {Activation::Sigmoid, Activation::Tanh}) {
    Case padded{1, 8, 10, 11, 12, 3, 3};
    padded.pads = {1, 1, 1, 1};
    padded.act = act;
    Case pointwise{2, 16, 5, 7, 20, 1, 1};
    pointwise.act = act;
    for (const Case& t : {padded, pointwise}) {
      EXPECT_TRUE(convGemmTile(testing::describeConv(t, "c"), {8, 16}).applies());
      check(t);
    }
  }
}

}  // namespace
}  // namespace kiln::codegen
