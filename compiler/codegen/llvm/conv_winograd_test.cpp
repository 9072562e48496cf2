// The Winograd convolution kernel (emit_conv_winograd.cpp) against a double-precision direct
// convolution, for F(2x2, 3x3) and F(4x4, 3x3): maps that are and are not multiples of the
// tile (7x7, 13x13, 14x14, 30x28), pads 0, 1 and asymmetric, OC not a multiple of the GEMM
// tile, channel counts that need several channel blocks, two images, bias, Relu/Clip and a
// residual epilogue chain; the weights as the driver packs them, transformed at compile time
// (Winograd) and transformed by the kernel (WinogradPanels: runs of channels and a shorter
// last run), on AVX2, SSE and, where the host runs it, AVX-512 (packed transforms on maps of
// few tiles per row); compile-only on NEON. Also the weight transform and the tap
// packing against hand-computed values and the policy's choices. Every case also runs with its
// input, output and residual in row groups (row_groups.h) and must give the same bits.
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/codegen/winograd_plan.h"
#include "kiln/codegen/work_queue.h"
#include "conv_reference.h"
#include "test_support.h"

namespace kiln::codegen {
namespace {

using testing::product;
using testing::randomFloats;
using testing::runKernel;

using testing::f32;

struct Case {
  int64_t n, c, h, w, oc;
  std::array<int64_t, 4> pads{1, 1, 1, 1};  // top, left, bottom, right
  bool bias = true;
  Activation act = Activation::None;
  bool residual = false;  // chain: result + R[n][oc][oh][ow], then Relu
};

VectorUnit hostUnit() { return vectorUnitOf(testing::hostTarget()); }

TargetConfig targetNamed(const std::string& name) {
  if (name == "host") return testing::hostTarget();
  TargetRequest request;
  request.name = name;
  return resolveTarget(request);
}

// The case as a 3x3 stride-1 convolution of the shared reference.
testing::ConvCase toConv(const Case& t) {
  return {t.n, t.c, t.h, t.w, t.oc, 3, 3, {1, 1}, {1, 1}, t.pads, t.bias, t.act, t.residual};
}

KernelDesc describe(const Case& t) { return testing::describeConv(toConv(t), "conv_winograd"); }

// Runs the case with F(m x m), the weights in `layout` (Winograd or WinogradPanels), on the
// friendly target `target`, against the double-precision reference.
void check(const Case& t, int64_t m, ConvWeights layout = ConvWeights::Winograd,
           const std::string& target = "host") {
  KernelDesc d = describe(t);
  WinogradPlan plan = winogradPlan(d, vectorUnitOf(targetNamed(target)));
  ASSERT_TRUE(plan.applies()) << "the Winograd kernel should take this convolution: " << t.c
                              << " -> " << t.oc << " on " << t.h << "x" << t.w << ", " << target;
  testing::ConvOperands in = testing::randomConvOperands(toConv(t));
  d.weightLayout = layout;
  d.weightPanel = plan.tile.mr;
  d.winogradTile = m;
  const int64_t blockC = winogradBlocks(d, plan.tile, m).blockC;
  std::vector<std::vector<float>> inputs = {
      in.x, layout == ConvWeights::Winograd
                ? winogradTransformWeights(in.w, t.oc, t.c, m, plan.tile.mr)
                : winogradPackTaps(in.w, t.oc, t.c, plan.tile.mr, blockC,
                                   winogradTransformChannels(m, plan.tile.mr, blockC))};
  if (t.bias) inputs.push_back(in.b);
  if (t.residual) inputs.push_back(in.r);
  std::vector<float> want = testing::referenceConv(toConv(t), in, d.output.shape);

  std::vector<float> got = runKernel(d, inputs, {1, 2, 5}, target);
  ASSERT_EQ(got.size(), want.size());
  // Winograd rounds differently from a direct sum (F(4x4) the most): errors grow with the
  // number of channels, relative to the size of the terms.
  const float tolerance = (m == 2 ? 2e-5f : 1e-4f) * std::sqrt(float(t.c * 9));
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tolerance * (1.0f + std::fabs(want[i]))) << "element " << i;

  // The input, output and residual in row groups (row_groups.h): the output's at the
  // kernel's own blocks of rows, the input's there too or, where its height differs, at its
  // middle row, the residual's at a third of the output's height. The same arithmetic on the same values: the same bits, wherever they lie.
  const std::vector<int64_t> bounds = winogradRowBoundaries(d, vectorUnitOf(targetNamed(target)));
  const int64_t OH = d.output.shape[2];
  if (OH >= 2 && t.h >= 2) {
    KernelDesc g = d;
    g.output.rowGroups = bounds.size() > 2 ? bounds : std::vector<int64_t>{0, OH / 2, OH};
    g.inputs[0].rowGroups =
        t.h == OH ? g.output.rowGroups : std::vector<int64_t>{0, t.h / 2, t.h};
    std::vector<std::vector<float>> groupedInputs = inputs;
    groupedInputs[0] = testing::toRowGroups(g.inputs[0], inputs[0]);
    if (t.residual) {  // at other rows than the output's
      g.inputs.back().rowGroups = {0, (OH + 1) / 3, OH};
      groupedInputs.back() = testing::toRowGroups(g.inputs.back(), inputs.back());
    }
    EXPECT_EQ(testing::fromRowGroups(g.output, runKernel(g, groupedInputs, {1, 2, 5}, target)),
              got)
        << "in row groups";
  }

  // Split for two threads (KernelDesc::threadSplit: two workgroups of consecutive row blocks,
  // every panel each): the same bits, in one run and on two threads.
  const int64_t rowBlocks =
      int64_t(winogradRowBoundaries(d, vectorUnitOf(targetNamed(target))).size()) - 1;
  if (t.n == 1 && rowBlocks % 2 == 0) {
    KernelDesc s = d;
    s.threadSplit = 2;
    EXPECT_EQ(runKernel(s, inputs, {1, 2}, target), got) << "split for two threads";
    EXPECT_EQ(testing::runKernelOnThreads(s, inputs, 2, target), got) << "two threads";
  }

  // Where the kernel would share its panels through work queues (few row blocks, one channel
  // block), the shared form computes every panel the same way: the same bits, whether the
  // workgroups run one after another (any split) or four threads claim panels at once.
  const int64_t tasks = winogradSharedTasks(d, vectorUnitOf(targetNamed(target)));
  if (tasks == 0 || d.winogradTile != winogradPlan(d, vectorUnitOf(targetNamed(target))).m)
    return;
  d.workQueues = tasks;
  EXPECT_EQ(runKernel(d, inputs, {1, 2, 5}, target), got) << "shared panels, one thread";
  EXPECT_EQ(testing::runKernelOnThreads(d, inputs, 4, target), got) << "shared panels, 4 threads";
}

// Both tile sizes, both weight forms, on AVX2 and (where the host runs it) AVX-512: on
// AVX-512 the maps of at most 8 tiles per row take the packed transforms
// (winogradPackedSlots).
void checkBoth(const Case& t) {
  for (const std::string& target : testing::runnableVectorTargets())
    for (ConvWeights layout : {ConvWeights::Winograd, ConvWeights::WinogradPanels}) {
      check(t, 2, layout, target);
      check(t, 4, layout, target);
    }
}

TEST(ConvWinograd, WeightTransformByHand) {
  // F(2x2): G g G^T for g = all ones is the outer product of G's row sums (1, 1.5, 0.5, 1).
  std::vector<float> ones(9, 1.0f);
  std::vector<float> u = winogradTransformWeights(ones, 1, 1, 2, 6);
  const float sums[4] = {1, 1.5f, 0.5f, 1};
  ASSERT_EQ(u.size(), 16u);
  for (int r = 0; r < 4; ++r)
    for (int s = 0; s < 4; ++s) EXPECT_FLOAT_EQ(u[r * 4 + s], sums[r] * sums[s]) << r << "," << s;
  // A filter with only its centre tap: G's middle column (0, 0.5, -0.5, 0) outer itself.
  std::vector<float> centre(9, 0.0f);
  centre[4] = 2.0f;
  u = winogradTransformWeights(centre, 1, 1, 2, 6);
  const float mid[4] = {0, 0.5f, -0.5f, 0};
  for (int r = 0; r < 4; ++r)
    for (int s = 0; s < 4; ++s) EXPECT_FLOAT_EQ(u[r * 4 + s], 2.0f * mid[r] * mid[s]);
  // F(4x4) (points 0, 1, -1, 1/2, -2), top-left tap only: G's first column
  // (1, 1/3, -1/3, -16/15, 1/15, 0) outer itself.
  std::vector<float> corner(9, 0.0f);
  corner[0] = 1.0f;
  u = winogradTransformWeights(corner, 1, 1, 4, 6);
  const double first[6] = {1, 1.0 / 3, -1.0 / 3, -16.0 / 15, 1.0 / 15, 0};
  ASSERT_EQ(u.size(), 36u);
  for (int r = 0; r < 6; ++r)
    for (int s = 0; s < 6; ++s) EXPECT_FLOAT_EQ(u[r * 6 + s], float(first[r] * first[s]));
}

TEST(ConvWinograd, WeightPanelOrder) {
  // 7 output channels x 2 input channels, panels of 6: panel 0 holds per position
  // (channel, oc) pairs as c * 6 + oc, then panel 1 (the last output channel) per position
  // its 2 values.
  const int64_t oc = 7, c = 2;
  std::vector<float> w(size_t(oc * c * 9), 0.0f);
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t i = 0; i < c; ++i) w[size_t((o * c + i) * 9 + 4)] = float(o * 10 + i);
  std::vector<float> u = winogradTransformWeights(w, oc, c, 2, 6);
  ASSERT_EQ(u.size(), size_t(16 * oc * c));
  const int64_t pos = 1 * 4 + 1;  // 0.25 x the centre tap
  const float* panel0 = u.data() + pos * c * 6;
  for (int64_t o = 0; o < 6; ++o)
    for (int64_t i = 0; i < c; ++i) EXPECT_FLOAT_EQ(panel0[i * 6 + o], 0.25f * float(o * 10 + i));
  const float* panel1 = u.data() + 6 * 16 * c + pos * c;
  EXPECT_FLOAT_EQ(panel1[0], 0.25f * 60);
  EXPECT_FLOAT_EQ(panel1[1], 0.25f * 61);
  EXPECT_FLOAT_EQ(u[6 * 16 * c], 0.0f);  // position (0, 0) of the centre tap
}

TEST(ConvWinograd, Policy) {
  KernelDesc d = describe({1, 64, 56, 56, 64});
  EXPECT_EQ(winogradPlan(d, {8, 16}).m, 4);  // large maps: F(4x4)
  d = describe({1, 256, 7, 7, 256});
  EXPECT_EQ(winogradPlan(d, {8, 16}).m, 2);  // 7 x 7: F(2x2)
  EXPECT_FALSE(winogradApplies(d, {0, 0}));  // no vector unit
  d = describe({1, 8, 14, 14, 64});
  EXPECT_FALSE(winogradApplies(d, {8, 16}));  // too few channels to pay for the transforms
  d = describe({1, 64, 14, 14, 64});
  d.strides = {2, 2};
  d.output.shape = {1, 64, 7, 7};
  EXPECT_FALSE(winogradApplies(d, {8, 16}));  // stride 2
  d = describe({1, 64, 14, 14, 64});
  d.inputs[1].shape = {64, 64, 1, 1};
  d.output.shape = {1, 64, 16, 16};
  EXPECT_FALSE(winogradApplies(d, {8, 16}));  // 1x1
  d = describe({1, 64, 14, 14, 64});
  EXPECT_EQ(chooseConvWeights(d, {8, 16}), ConvWeights::Winograd);
  // --optimize=size: the kernel transforms the weights (their size unchanged).
  EXPECT_EQ(chooseConvWeights(d, {8, 16}, false), ConvWeights::WinogradPanels);
  // Stored transforms over 4 MB: transformed by the kernel. ResNet-18's layer3 (F(4x4), 36
  // x 256 x 256 floats, 9.4 MB) and layer4 (F(2x2), 16.8 MB); not layer2 (2.4 MB).
  d = describe({1, 256, 14, 14, 256});
  EXPECT_TRUE(winogradPlan(d, {8, 16}).transformInKernel);
  EXPECT_EQ(chooseConvWeights(d, {8, 16}), ConvWeights::WinogradPanels);
  d = describe({1, 512, 7, 7, 512});
  EXPECT_TRUE(winogradPlan(d, {8, 16}).transformInKernel);
  d = describe({1, 128, 28, 28, 128});
  EXPECT_FALSE(winogradPlan(d, {8, 16}).transformInKernel);
  EXPECT_EQ(chooseConvWeights(d, {8, 16}), ConvWeights::Winograd);
  // AVX-512, maps of at most 16 tiles: stored transforms over 1 MB are transformed by the
  // kernel: SqueezeNet's 13x13 expand3x3 (48 -> 192, 1.3 MB; 64 -> 256, 2.4 MB), not its
  // 27x27 one (32 -> 128, 0.6 MB), nor ResNet-18's layer2 (28x28, 49 tiles, 2.4 MB); AVX2
  // keeps 4 MB.
  d = describe({1, 48, 13, 13, 192});
  EXPECT_TRUE(winogradPlan(d, {16, 32}).transformInKernel);
  EXPECT_FALSE(winogradPlan(d, {8, 16}).transformInKernel);
  d = describe({1, 128, 28, 28, 128});
  EXPECT_FALSE(winogradPlan(d, {16, 32}).transformInKernel);
  d = describe({1, 32, 27, 27, 128});
  EXPECT_FALSE(winogradPlan(d, {16, 32}).transformInKernel);
}

TEST(ConvWinograd, SmallMapsTakeTheDirectKernel) {
  // Maps of a few tiles leave most lanes of the products' vectors empty. On AVX-512, F(2x2)
  // over whole vectors of 16 tiles: 2x2 (1 tile, 16 x 16 products per channel pair against
  // 9 x 4 direct ones), 4x4 (4 tiles: 256 against 144), 5x5 (9: 256 against 225) and 6x6
  // (256 against 324) go to the direct kernel; 7x7 (16 tiles: 256 against 441), 8x8 and 9x9
  // (25 tiles in two vectors: 512 against 729) stay on Winograd. ResNet-50's layer4 at a
  // 64x64 input is the 2x2 case.
  for (int64_t hw : {2, 4, 5, 6}) {
    KernelDesc d = describe({1, 512, hw, hw, 512});
    EXPECT_FALSE(winogradApplies(d, {16, 32})) << hw << "x" << hw;
    EXPECT_NE(chooseConvWeights(d, {16, 32}), ConvWeights::Winograd) << hw << "x" << hw;
    EXPECT_NE(chooseConvWeights(d, {16, 32}), ConvWeights::WinogradPanels) << hw << "x" << hw;
  }
  for (int64_t hw : {7, 8, 9}) {
    KernelDesc d = describe({1, 512, hw, hw, 512});
    EXPECT_TRUE(winogradApplies(d, {16, 32})) << hw << "x" << hw;
  }
  // AVX2's 8-lane vectors: 4x4 (4 tiles in one vector: 128 against 144) still goes direct,
  // 7x7 stays.
  EXPECT_FALSE(winogradApplies(describe({1, 256, 4, 4, 256}), {8, 16}));
  EXPECT_TRUE(winogradApplies(describe({1, 256, 7, 7, 256}), {8, 16}));
}

TEST(ConvWinograd, PackedSlots) {
  // Packed transforms where a tile row has at most half a vector of tiles: on AVX-512 13x13
  // F(4x4) (4 tiles), 27x27 F(4x4) (7), 7x7 F(2x2) (4), not 55x55 F(4x4) (14); on AVX2 the
  // 4-tile maps only; not on SSE.
  auto packed = [](const Case& t, VectorUnit unit) {
    KernelDesc d = describe(t);
    WinogradPlan plan = winogradPlan(d, unit);
    return winogradPackedSlots(winogradBlocks(d, plan.tile, plan.m), unit.lanes);
  };
  EXPECT_TRUE(packed({1, 64, 13, 13, 256}, {16, 32}));
  EXPECT_TRUE(packed({1, 32, 27, 27, 128}, {16, 32}));
  EXPECT_TRUE(packed({1, 512, 7, 7, 512}, {16, 32}));
  EXPECT_FALSE(packed({1, 16, 55, 55, 64}, {16, 32}));
  EXPECT_TRUE(packed({1, 64, 13, 13, 256}, {8, 16}));
  EXPECT_FALSE(packed({1, 32, 27, 27, 128}, {8, 16}));
  EXPECT_FALSE(packed({1, 16, 6, 6, 16}, {4, 16}));
  // Vectors that span two to four tile rows (7, 5 and 4 tiles per row), a shorter last
  // vector, two images, pads that leave a piece with only padding columns, Relu and a
  // residual chain, on AVX2 and AVX-512 (MapsAndPads and the others run packed blocks too).
  for (const std::string& target : testing::runnableVectorTargets())
    for (ConvWeights layout : {ConvWeights::Winograd, ConvWeights::WinogradPanels}) {
      check({1, 20, 27, 27, 30}, 4, layout, target);
      check({1, 16, 20, 20, 16, {1, 1, 1, 1}, true, Activation::Relu}, 4, layout, target);
      check({2, 16, 9, 9, 18, {4, 4, 0, 0}}, 2, layout, target);  // tile column 0: padding
      check({1, 24, 10, 10, 16, {1, 1, 1, 1}, false, Activation::None, true}, 2, layout, target);
      check({1, 16, 7, 7, 20}, 2, layout, target);  // 4 tiles per row: packed on AVX2 too
      check({1, 24, 13, 13, 17}, 4, layout, target);
    }
}

TEST(ConvWinograd, RowBlocks) {
  // ResNet-18 layer1, 56 x 56 x 64: 14 tile rows of 14 tiles; V of a block within 256 KB
  // takes 2-row blocks (7), rounded up to 8 blocks of 1 or 2 rows (items for the threads).
  KernelDesc d = describe({1, 64, 56, 56, 64});
  WinogradPlan plan = winogradPlan(d, {8, 16});
  WinogradBlocks k = winogradBlocks(d, plan.tile, plan.m);
  EXPECT_EQ(k.tileRows, 14);
  EXPECT_EQ(k.rowBlocks, 8);
  EXPECT_EQ(k.blockRows, 2);
  EXPECT_EQ(k.slots, 32);
  EXPECT_EQ(k.channelBlocks, 1);
  // SqueezeNet's 55 x 55 x 16 -> 64: V of 4-row blocks is small, 4 blocks of 3-4 rows.
  d = describe({1, 16, 55, 55, 64});
  k = winogradBlocks(d, winogradPlan(d, {8, 16}).tile, 4);
  EXPECT_EQ(k.rowBlocks, 4);
  EXPECT_EQ(k.blockRows, 4);
  // 28 x 28 x 128: 256 KB would take blocks below a GEMM tile (16 slots): 3 rows (21 slots).
  d = describe({1, 128, 28, 28, 128});
  k = winogradBlocks(d, winogradPlan(d, {8, 16}).tile, 4);
  EXPECT_EQ(k.rowBlocks, 3);
  EXPECT_EQ(k.blockRows, 3);
  EXPECT_EQ(k.channelBlocks, 1);
  // 13 x 13 (SqueezeNet's late expand3x3): one block of 4 x 4 tiles.
  d = describe({1, 64, 13, 13, 256});
  k = winogradBlocks(d, winogradPlan(d, {8, 16}).tile, 4);
  EXPECT_EQ(k.rowBlocks, 1);
  EXPECT_EQ(k.slots, 16);
}

TEST(ConvWinograd, SharedPanelsPolicy) {
  // Work queues: fewer (image, row block) tasks than kWorkQueueThreads, one channel block.
  // AVX-512 (16 lanes).
  const VectorUnit avx512{16, 32};
  auto tasks = [&](const Case& t) { return winogradSharedTasks(describe(t), avx512); };
  EXPECT_EQ(tasks({1, 64, 56, 56, 64}), 6);     // ResNet-18 layer1: 6 row blocks
  EXPECT_EQ(tasks({2, 64, 56, 56, 64}), 0);     // 12: a task per thread already
  EXPECT_EQ(tasks({1, 128, 28, 28, 128}), 2);   // layer2: 2 row blocks
  EXPECT_EQ(tasks({1, 256, 14, 14, 256}), 1);   // layer3
  EXPECT_EQ(tasks({1, 512, 7, 7, 512}), 1);     // layer4
  EXPECT_EQ(tasks({2, 512, 7, 7, 512}), 2);     // one task per image
  EXPECT_EQ(tasks({1, 797, 7, 7, 17}), 0);      // several channel blocks
  EXPECT_EQ(tasks({1, 8, 14, 14, 8}), 0);       // too few channels for Winograd
  // Workgroups per task: together at least kWorkQueueThreads.
  EXPECT_EQ(workgroupsPerTask(1), 8);
  EXPECT_EQ(workgroupsPerTask(2), 4);
  EXPECT_EQ(workgroupsPerTask(3), 3);
  EXPECT_EQ(workgroupsPerTask(8), 1);
}

TEST(ConvWinograd, MapsAndPads) {
  checkBoth({1, 16, 14, 14, 16});                 // whole tiles (F(2x2))
  checkBoth({1, 16, 7, 7, 20});                   // 7 x 7: edge tiles, OC % 6 = 2
  checkBoth({1, 24, 13, 13, 17});                 // odd map, OC % 6 = 5
  checkBoth({1, 16, 12, 30, 16, {0, 0, 0, 0}});   // pads 0: 10 x 28
  checkBoth({1, 16, 11, 9, 18, {0, 1, 2, 0}});    // asymmetric pads
  checkBoth({2, 16, 30, 28, 16});                 // two images, several row blocks
}

TEST(ConvWinograd, ChannelBlocks) {
  // Several channel blocks (partial products in the M buffer), the last one shorter.
  KernelDesc d = describe({1, 797, 7, 7, 17});
  WinogradPlan plan = winogradPlan(d, hostUnit());
  ASSERT_TRUE(plan.applies());
  WinogradBlocks blocks = winogradBlocks(d, plan.tile, 2);
  EXPECT_GT(blocks.channelBlocks, 1);
  EXPECT_NE(797 % blocks.blockC, 0);
  checkBoth({1, 797, 7, 7, 17});
  checkBoth({1, 300, 14, 14, 22});
  checkBoth({1, 256, 7, 7, 40, {1, 1, 1, 1}, true, Activation::Relu});
}

TEST(ConvWinograd, Epilogues) {
  checkBoth({1, 16, 14, 14, 16, {1, 1, 1, 1}, true, Activation::Relu});
  checkBoth({2, 20, 9, 10, 16, {1, 1, 1, 1}, false, Activation::Clip, true});
  checkBoth({1, 32, 7, 7, 64, {1, 1, 1, 1}, true, Activation::None, true});  // residual
}

TEST(ConvWinograd, MatricesFactorG) {
  // G = diag(d) H with H of small integers, d each row's entry of least magnitude.
  for (int64_t m : {2, 4}) {
    WinogradMatrices w = winogradMatrices(m);
    ASSERT_EQ(w.h.size(), size_t(w.alpha * 3));
    ASSERT_EQ(w.d.size(), size_t(w.alpha));
    for (int64_t r = 0; r < w.alpha; ++r)
      for (int64_t k = 0; k < 3; ++k) {
        const double h = w.h[size_t(r * 3 + k)];
        EXPECT_DOUBLE_EQ(w.d[size_t(r)] * h, w.g[size_t(r * 3 + k)]) << m << ": " << r << k;
        EXPECT_EQ(h, std::round(h)) << m << ": " << r << k;
      }
  }
  const std::vector<double> h4 = {1, 0, 0, 1, 1, 1, 1, -1, 1, 4, 2, 1, 1, -2, 4, 0, 0, 1};
  EXPECT_EQ(winogradMatrices(4).h, h4);
  EXPECT_EQ(winogradMatrices(2).d, (std::vector<double>{1, 0.5, 0.5, 1}));
}

// The matrices compute the correlation exactly (in exact arithmetic): for 1-D data d and taps
// g, A^T ((G g) .* (B^T d)) = y with y_j = sum_k d_(j+k) g_k.
TEST(ConvWinograd, MatricesComputeTheCorrelation) {
  for (int64_t m : {2, 4}) {
    const WinogradMatrices w = winogradMatrices(m);
    const int64_t a = w.alpha;
    for (int trial = 0; trial < 8; ++trial) {
      std::vector<double> d(static_cast<size_t>(a), 0.0), g(3, 0.0);
      for (int64_t i = 0; i < a; ++i) d[size_t(i)] = double((i * 7 + trial * 5) % 11 - 5);
      for (int64_t k = 0; k < 3; ++k) g[size_t(k)] = double((k * 3 + trial * 2) % 7 - 3);
      std::vector<double> product(static_cast<size_t>(a), 0.0);
      for (int64_t i = 0; i < a; ++i) {
        double gg = 0, bd = 0;
        for (int64_t k = 0; k < 3; ++k) gg += w.g[size_t(i * 3 + k)] * g[size_t(k)];
        for (int64_t l = 0; l < a; ++l) bd += w.bt[size_t(i * a + l)] * d[size_t(l)];
        product[size_t(i)] = gg * bd;
      }
      for (int64_t j = 0; j < m; ++j) {
        double y = 0, want = 0;
        for (int64_t i = 0; i < a; ++i) y += w.at[size_t(j * a + i)] * product[size_t(i)];
        for (int64_t k = 0; k < 3; ++k) want += d[size_t(j + k)] * g[size_t(k)];
        EXPECT_NEAR(y, want, 1e-9) << "F(" << m << "), trial " << trial << ", output " << j;
      }
    }
  }
}

TEST(ConvWinograd, TapPanelOrder) {
  // 7 output channels x 5 input channels, panels of 6, blocks of 4 channels in runs of 3:
  // runs of channels {0, 1, 2}, {3}, {4}; panel 0 holds per run, per tap, the (channel, oc)
  // pairs as i * 6 + oc; panel 1 (the last output channel) the same with 1 row.
  const int64_t oc = 7, c = 5;
  std::vector<float> w(size_t(oc * c * 9));
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t i = 0; i < c; ++i)
      for (int64_t t = 0; t < 9; ++t) w[size_t((o * c + i) * 9 + t)] = float(o * 100 + i * 10 + t);
  std::vector<float> p = winogradPackTaps(w, oc, c, 6, 4, 3);
  ASSERT_EQ(p.size(), w.size());
  struct Run {
    int64_t c0, n;
  };
  for (const Run& run : {Run{0, 3}, Run{3, 1}, Run{4, 1}})
    for (int64_t t = 0; t < 9; ++t)
      for (int64_t i = 0; i < run.n; ++i) {
        const int64_t c = run.c0 + i;
        for (int64_t o = 0; o < 6; ++o)
          EXPECT_EQ(p[size_t(9 * run.c0 * 6 + (t * run.n + i) * 6 + o)],
                    float(o * 100 + c * 10 + t))
              << c << " " << t << " " << o;
        EXPECT_EQ(p[size_t(6 * 9 * 5 + 9 * run.c0 + t * run.n + i)], float(600 + c * 10 + t));
      }
}

TEST(ConvWinograd, TransformedInKernelRuns) {
  // Channels in runs of winogradTransformChannels (F(4x4) 56, F(2x2) 128 with 6-row panels):
  // fewer channels than a run, exact runs, runs and a shorter last one, with OC % 6 != 0 and
  // several row blocks; on AVX2, SSE and (where the host runs it) AVX-512.
  ASSERT_EQ(winogradTransformChannels(4, 6, 512), 56);
  ASSERT_EQ(winogradTransformChannels(2, 6, 512), 128);
  ASSERT_EQ(winogradTransformChannels(2, 6, 40), 40);
  std::vector<std::string> targets = testing::runnableVectorTargets();
  targets.push_back("x86_64");
  for (const std::string& target : targets) {
    for (int64_t m : {2, 4}) {
      check({1, 100, 14, 14, 20}, m, ConvWeights::WinogradPanels, target);
      check({1, 260, 7, 7, 16}, m, ConvWeights::WinogradPanels, target);
      check({1, 56, 9, 11, 19, {0, 1, 2, 0}}, m, ConvWeights::WinogradPanels, target);
      check({2, 64, 30, 28, 16, {1, 1, 1, 1}, true, Activation::Relu}, m,
            ConvWeights::WinogradPanels, target);
      check({1, 130, 7, 7, 22, {1, 1, 1, 1}, false, Activation::None, true}, m,
            ConvWeights::WinogradPanels, target);
    }
  }
  check({1, 797, 7, 7, 17}, 2, ConvWeights::WinogradPanels, "x86_64");  // channel blocks
}

TEST(ConvWinograd, TransformedInKernelWideAndNeon) {
  // Compile-only: on AVX-512 (14-row panels, 16 lanes) and NEON the kernel's products and
  // weight transform are vector code.
  for (const testing::WideTarget& t : testing::wideTargets()) {
    TargetConfig target = targetNamed(t.name);
    KernelDesc d = describe({1, 64, 14, 14, 72, {1, 1, 1, 1}, true, Activation::Relu, true});
    WinogradPlan plan = winogradPlan(d, vectorUnitOf(target));
    ASSERT_TRUE(plan.applies()) << t.name;
    d.weightLayout = ConvWeights::WinogradPanels;
    d.weightPanel = plan.tile.mr;
    d.winogradTile = plan.m;
    CodegenResult result = generateKernels({d}, target);
    std::string text = testing::disassemble(result);
    int vectorMultiplyAdds = testing::vectorMultiplyAdds(text, t);
    EXPECT_GE(vectorMultiplyAdds, plan.tile.mr * plan.tile.nrVectors) << t.name;
  }
}

}  // namespace
}  // namespace kiln::codegen
