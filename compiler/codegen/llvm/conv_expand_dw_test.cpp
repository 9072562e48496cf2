// The fused expand 1x1 + depthwise convolution kernel (emit_conv_expand_dw.cpp) against a
// double-precision reference: odd maps and channel counts (tails of tiles and of panels),
// stride 1 and 2, 3x3 and 5x5 windows, asymmetric pads, two images, with and without biases,
// Clip after each convolution, weights packed in panels as the driver packs them and
// unpacked, and 1, 2 and 5 workgroups (runKernel checks that every split agrees). A chain
// that does not evaluate on vectors (and stride 2 over odd widths) takes the plain loops. Also the
// lowering of a fused dispatch into the kernel description.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kiln/codegen/conv_gemm_plan.h"
#include "kiln/codegen/dispatch_lowering.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/verifier.h"
#include "kiln/passes/passes.h"
#include "test_support.h"

namespace kiln::codegen {
namespace {

using testing::f32;
using testing::product;
using testing::randomFloats;
using testing::runKernel;

struct Case {
  int64_t n, c, h, w, ch, k;  // input, expanded channels, depthwise window k x k
  int64_t stride = 1;
  std::array<int64_t, 4> pads{1, 1, 1, 1};  // top, left, bottom, right
  bool bias = true;
  bool clip = true;         // Clip(0, 6) after each convolution
  bool tanhExpand = false;   // Tanh after the expand instead (on vectors, as Sigmoid, Exp...)
  bool floorExpand = false;  // Floor after the expand instead (not vectorisable: plain loops)
};

ElementwiseExpr resultThen(ExprOp op, bool clip) {
  ElementwiseExpr e;
  ExprNode result;
  result.op = ExprOp::Result;
  e.nodes.push_back(result);
  if (clip) {
    e.addUnary(ExprOp::Clip, 0, 0.0, 6.0);
  } else {
    e.addUnary(op, 0);
  }
  return e;
}

KernelDesc describe(const Case& t) {
  const int64_t oh = (t.h + t.pads[0] + t.pads[2] - t.k) / t.stride + 1;
  const int64_t ow = (t.w + t.pads[1] + t.pads[3] - t.k) / t.stride + 1;
  KernelDesc d;
  d.kind = KernelKind::Conv;
  d.name = "expand_dw";
  d.inputs = {f32({t.n, t.c, t.h, t.w}), f32({t.ch, t.c, 1, 1})};
  if (t.bias) d.inputs.push_back(f32({t.ch}));
  d.tailB = int32_t(d.inputs.size());
  d.inputs.push_back(f32({t.ch, 1, t.k, t.k}));
  if (t.bias) {
    d.tailBias = int32_t(d.inputs.size());
    d.inputs.push_back(f32({t.ch}));
  }
  d.epilogue.inputCount = t.bias ? 2 : 1;
  d.epilogue.shape = {t.n, t.ch, t.h, t.w};
  if (t.clip || t.tanhExpand || t.floorExpand)
    d.epilogue.chain = resultThen(t.floorExpand ? ExprOp::Floor : ExprOp::Tanh,
                                  !t.tanhExpand && !t.floorExpand);
  if (t.clip) d.tailChain = resultThen(ExprOp::Clip, true);
  d.tailStrides = {t.stride, t.stride};
  d.tailPads = t.pads;
  d.output = f32({t.n, t.ch, oh, ow});
  return d;
}

struct Operands {
  std::vector<float> x, w1, b1, w2, b2;
};

std::vector<float> reference(const Case& t, const Operands& in, const std::vector<int64_t>& ys) {
  const int64_t oh = ys[2], ow = ys[3];
  std::vector<double> e(size_t(t.n * t.ch * t.h * t.w));
  for (int64_t n = 0; n < t.n; ++n)
    for (int64_t c = 0; c < t.ch; ++c)
      for (int64_t p = 0; p < t.h * t.w; ++p) {
        double s = t.bias ? in.b1[size_t(c)] : 0.0;
        for (int64_t k = 0; k < t.c; ++k)
          s += double(in.w1[size_t(c * t.c + k)]) * in.x[size_t((n * t.c + k) * t.h * t.w + p)];
        if (t.clip) s = std::clamp(s, 0.0, 6.0);
        if (t.tanhExpand) s = std::tanh(s);
        if (t.floorExpand) s = std::floor(s);
        e[size_t((n * t.ch + c) * t.h * t.w + p)] = s;
      }
  std::vector<float> y(size_t(t.n * t.ch * oh * ow));
  for (int64_t n = 0; n < t.n; ++n)
    for (int64_t c = 0; c < t.ch; ++c)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double s = t.bias ? in.b2[size_t(c)] : 0.0;
          for (int64_t kh = 0; kh < t.k; ++kh)
            for (int64_t kw = 0; kw < t.k; ++kw) {
              const int64_t ih = i * t.stride - t.pads[0] + kh, iw = j * t.stride - t.pads[1] + kw;
              if (ih < 0 || ih >= t.h || iw < 0 || iw >= t.w) continue;
              s += double(in.w2[size_t((c * t.k + kh) * t.k + kw)]) *
                   e[size_t(((n * t.ch + c) * t.h + ih) * t.w + iw)];
            }
          if (t.clip) s = std::clamp(s, 0.0, 6.0);
          y[size_t(((n * t.ch + c) * oh + i) * ow + j)] = float(s);
        }
  return y;
}

void check(const Case& t, bool pack = true, const std::string& target = "host") {
  KernelDesc d = describe(t);
  Operands in;
  in.x = randomFloats(size_t(t.n * t.c * t.h * t.w), 1);
  in.w1 = randomFloats(size_t(t.ch * t.c), 2);
  in.b1 = randomFloats(size_t(t.ch), 3, 0.0f, 1.0f);
  in.w2 = randomFloats(size_t(t.ch * t.k * t.k), 4);
  in.b2 = randomFloats(size_t(t.ch), 5, 0.0f, 1.0f);
  std::vector<std::vector<float>> inputs = {in.x, in.w1};
  TargetRequest request;
  request.name = target;
  ConvGemmTile tile = convGemmTile(
      d, vectorUnitOf(target == "host" ? testing::hostTarget() : resolveTarget(request)));
  if (pack && tile.applies()) {
    d.weightLayout = ConvWeights::GemmPanels;
    d.weightPanel = tile.mr;
    inputs[1] = packConvWeightPanels(in.w1, t.ch, t.c, tile.mr);
  }
  if (t.bias) inputs.push_back(in.b1);
  inputs.push_back(in.w2);
  if (t.bias) inputs.push_back(in.b2);
  std::vector<float> want = reference(t, in, d.output.shape);
  std::vector<float> got = runKernel(d, inputs, {1, 2, 5}, target);
  testing::expectClose(got, want, 1e-4f, 1e-4f);
}

TEST(ConvExpandDepthwise, StrideOne) {
  check({1, 16, 12, 20, 24, 3});                             // whole tiles and panels
  check({1, 5, 13, 11, 13, 3});                              // odd everything: tails, OC % 6 = 1
  check({2, 7, 9, 17, 8, 3, 1, {1, 1, 1, 1}, false});        // two images, no biases
  check({1, 8, 10, 30, 6, 3}, false);                        // unpacked weights
  check({1, 4, 16, 8, 9, 3, 1, {1, 1, 1, 1}, true, false});  // no Clip at all
}

TEST(ConvExpandDepthwise, StrideTwo) {
  check({1, 16, 28, 28, 18, 3, 2});               // MobileNet-like, 14x14 out
  check({1, 6, 15, 22, 7, 3, 2});                 // odd rows, 11 wide out
  check({1, 5, 9, 30, 8, 3, 2, {1, 1, 0, 0}});    // the last column outside the window
  check({2, 3, 8, 40, 12, 3, 2, {0, 1, 1, 0}});   // asymmetric pads
  check({1, 9, 17, 10, 11, 5, 2, {2, 2, 2, 2}});  // 5x5 window
}

TEST(ConvExpandDepthwise, WideAndTallMaps) {
  check({1, 8, 56, 56, 12, 3, 2});             // 112-pixel steps
  check({1, 4, 40, 70, 7, 3, 1});              // rows wider than 4 vectors
  check({1, 3, 7, 5, 2, 5, 1, {2, 2, 2, 2}});  // maps smaller than the window's reach
}

TEST(ConvExpandDepthwise, OddWidthsWithStrideTwoTakeThePlainLoops) {
  check({1, 6, 15, 21, 7, 3, 2});  // even and odd columns no longer alternate over rows
}

TEST(ConvExpandDepthwise, NonVectorChainTakesThePlainLoops) {
  Case t{1, 5, 9, 11, 7, 3, 2};
  t.clip = false;
  t.floorExpand = true;
  EXPECT_FALSE(convGemmTile(describe(t), vectorUnitOf(testing::hostTarget())).applies());
  check(t);
}

TEST(ConvExpandDepthwise, TanhChainOnVectors) {
  // Tanh (like Sigmoid, Exp, Log, Erf) evaluates on the tiles' vectors.
  Case t{1, 5, 9, 11, 7, 3, 2};
  t.clip = false;
  t.tanhExpand = true;
  EXPECT_TRUE(convGemmTile(describe(t), vectorUnitOf(testing::hostTarget())).applies());
  check(t);
}

TEST(ConvExpandDepthwise, FourLaneVectors) {
  check({1, 5, 13, 11, 13, 3}, true, "x86_64");    // SSE: 8-pixel tiles, 4-lane rows
  check({1, 6, 15, 22, 7, 3, 2}, true, "x86_64");  // even/odd planes of 4 lanes
  check({1, 3, 7, 5, 2, 5, 1, {2, 2, 2, 2}}, true, "x86_64");
}

TEST(ConvExpandDepthwise, WideAndNeonVectors) {
  // Compile-only: AVX-512 (32-pixel tiles, 16-lane planes) and NEON (4 vectors a tile).
  for (const testing::WideTarget& t : testing::wideTargets()) {
    TargetRequest request;
    request.name = t.name;
    TargetConfig target = resolveTarget(request);
    for (int64_t stride : {1, 2}) {
      KernelDesc d = describe({1, 16, 28, 28, 24, 3, stride});
      ConvGemmTile tile = convGemmTile(d, vectorUnitOf(target));
      ASSERT_TRUE(tile.applies()) << t.name;
      d.weightLayout = ConvWeights::GemmPanels;
      d.weightPanel = tile.mr;
      CodegenResult result = generateKernels({d}, target);
      std::string text = testing::disassemble(result);
      int vectorMultiplyAdds = testing::vectorMultiplyAdds(text, t);
      // The microkernel's tile and the depthwise window's taps.
      EXPECT_GE(vectorMultiplyAdds, tile.mr * tile.nrVectors + 9) << t.name << " stride " << stride;
    }
  }
}

// The pass's fused dispatch lowers to the kernel description the tests above use.
TEST(ConvExpandDepthwise, LoweringOfTheFusedDispatch) {
  auto graph = ir::parseGraph(R"(graph @g {
  input %x : f32[1,16,112,112]
  const %w1 : f32[96,16,1,1] = splat(0.5)
  const %b1 : f32[96] = splat(0.25)
  const %w2 : f32[96,1,3,3] = splat(0.125)
  const %lo : f32[] = [0.0]
  const %hi : f32[] = [6.0]
  %e = Conv(%x, %w1, %b1) : f32[1,96,112,112]
  %ec = Clip(%e, %lo, %hi) : f32[1,96,112,112]
  %d = Conv(%ec, %w2) {group = 96, pads = [1, 1, 1, 1], strides = [2, 2]} : f32[1,96,56,56]
  %dc = Clip(%d, %lo, %hi) : f32[1,96,56,56]
  output "y" = %dc
})",
                              "test.kir");
  ir::verifyGraph(*graph);
  ir::DispatchGraph dg = passes::formDispatches(std::move(graph));
  passes::fuseElementwise(dg);
  passes::fuseExpandDepthwise(dg);
  std::vector<KernelDesc> kernels = lowerDispatches(dg);
  ASSERT_EQ(kernels.size(), 1u);
  const KernelDesc& d = kernels[0];
  EXPECT_EQ(d.kind, KernelKind::Conv);
  EXPECT_EQ(d.tailB, 3);
  EXPECT_EQ(d.tailBias, -1);
  EXPECT_EQ(d.tailStrides, (std::array<int64_t, 2>{2, 2}));
  EXPECT_EQ(d.tailPads, (std::array<int64_t, 4>{1, 1, 1, 1}));
  EXPECT_EQ(d.output.shape, (std::vector<int64_t>{1, 96, 56, 56}));
  EXPECT_EQ(d.epilogue.inputCount, 1u);
  EXPECT_FALSE(d.epilogue.chain.nodes.empty());  // the expand's Clip
  EXPECT_FALSE(d.tailChain.nodes.empty());       // the depthwise Clip
  EXPECT_EQ(d.tailChain.nodes.back().op, ExprOp::Clip);
  EXPECT_EQ(chooseConvWeights(d, {8, 16}), ConvWeights::GemmPanels);
}

}  // namespace
}  // namespace kiln::codegen
