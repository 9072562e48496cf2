// Row groups (kiln/codegen/row_groups.h): the element index against hand-counted offsets, the
// halo rows' groups, and splitForThreads + placeRowGroups on a small residual block (and a
// fused expand + depthwise convolution) through the real pass pipeline and weight packing:
// which convolutions are split for the threads, which tensors take the layout (those only
// Winograd convolutions write and read) and which stay dense (the graph's input and output, a
// tensor a pool reads). The kernels in the layout are checked by the Winograd and conv+pool
// tests (every case again in row groups, the same bits) and ResNet-18 end to end (tests/e2e).
#include "kiln/codegen/row_groups.h"

#include <gtest/gtest.h>

#include <string>

#include "kiln/codegen/conv_gemm_plan.h"
#include "kiln/codegen/dispatch_lowering.h"
#include "kiln/codegen/winograd_plan.h"
#include "kiln/ir/parser.h"
#include "kiln/passes/pipeline.h"
#include "test_support.h"

namespace kiln::codegen {
namespace {

TEST(RowGroups, IndexByHand) {
  // [2, 3, 5, 4], groups {0, 2, 5}: per image, rows 0-1 of the 3 channels (24 floats), then
  // rows 2-4 of the 3 channels (36 floats); 60 floats an image.
  BufferDesc b{ElemType::F32, {2, 3, 5, 4}};
  b.rowGroups = {0, 2, 5};
  EXPECT_EQ(rowGroupsIndex(b, 0, 0, 0, 0), 0);
  EXPECT_EQ(rowGroupsIndex(b, 0, 0, 1, 3), 7);
  EXPECT_EQ(rowGroupsIndex(b, 0, 1, 0, 0), 8);    // channel 1's rows 0-1 follow channel 0's
  EXPECT_EQ(rowGroupsIndex(b, 0, 2, 1, 3), 23);   // the first group's last float
  EXPECT_EQ(rowGroupsIndex(b, 0, 0, 2, 0), 24);   // the second group starts
  EXPECT_EQ(rowGroupsIndex(b, 0, 1, 2, 0), 36);   // 3 rows of 4 per channel
  EXPECT_EQ(rowGroupsIndex(b, 0, 2, 4, 3), 59);
  EXPECT_EQ(rowGroupsIndex(b, 1, 0, 0, 0), 60);
  b.rowGroups.clear();  // dense
  EXPECT_EQ(rowGroupsIndex(b, 1, 2, 4, 3), 119);
  EXPECT_EQ(rowGroupsIndex(b, 0, 1, 2, 0), 28);
}

TEST(RowGroups, HaloRowsApart) {
  EXPECT_EQ(haloRowGroups({0, 12, 28}), (std::vector<int64_t>{0, 11, 12, 13, 28}));
  EXPECT_EQ(haloRowGroups({0, 8, 16, 28}),
            (std::vector<int64_t>{0, 7, 8, 9, 15, 16, 17, 28}));
  // Blocks of one or two rows: no empty group.
  EXPECT_EQ(haloRowGroups({0, 1, 2, 4}), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(haloRowGroups({0, 7}), (std::vector<int64_t>{0, 7}));
}

// conv -> relu -> conv + x -> relu -> max pool: %r and %s are written and read by 3x3
// stride-1 convolutions only (%s also by the pool).
constexpr const char* kBlock = R"(graph @g {
  input %x : f32[1,64,28,28]
  const %w1 : f32[64,64,3,3] = splat(0.01)
  const %w2 : f32[64,64,3,3] = splat(-0.01)
  const %w3 : f32[64,64,3,3] = splat(0.02)
  %c1 = Conv(%x, %w1) {pads = [1, 1, 1, 1]} : f32[1,64,28,28]
  %r = Relu(%c1) : f32[1,64,28,28]
  %c2 = Conv(%r, %w2) {pads = [1, 1, 1, 1]} : f32[1,64,28,28]
  %a = Add(%c2, %x) : f32[1,64,28,28]
  %s = Relu(%a) : f32[1,64,28,28]
  %c3 = Conv(%s, %w3) {pads = [1, 1, 1, 1]} : f32[1,64,28,28]
  %t = Relu(%c3) : f32[1,64,28,28]
  %u = Add(%t, %r) : f32[1,64,28,28]
  %p = MaxPool(%u) {kernel_shape = [2, 2], strides = [2, 2]} : f32[1,64,14,14]
  output "y" = %p
})";

TEST(RowGroups, PlacedOnTensorsOnlyWinogradTouches) {
  const TargetConfig target = testing::hostTarget();
  ir::DispatchGraph g = passes::compileGraph(ir::parseGraph(kBlock), {});
  std::vector<KernelDesc> kernels = lowerDispatches(g);
  packConvWeights(g, kernels, target, true);
  ASSERT_EQ(kernels.size(), 4u);  // three convolutions (chains fused), the pool
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(kernels[size_t(i)].weightLayout == ConvWeights::Winograd ||
                kernels[size_t(i)].weightLayout == ConvWeights::WinogradPanels)
        << "convolution " << i << " should take the Winograd kernel";
  // %r and the second block's input %s.
  // 28x28: 7 tile rows of F(4x4) or 14 of F(2x2); split where two runs hold as many
  // (RowGroups.SplitOnlyIntoEqualRuns).
  splitForThreads(kernels, target, 2);
  for (int i = 0; i < 3; ++i) {
    const KernelDesc& d = kernels[size_t(i)];
    const size_t blocks = winogradRowBoundaries(d, vectorUnitOf(target)).size() - 1;
    const bool even = blocks % 2 == 0 && 28 / d.winogradTile % 2 == 0;
    EXPECT_EQ(d.threadSplit, even ? 2 : 0) << "convolution " << i;
  }
  EXPECT_EQ(placeRowGroups(g, kernels, target, 2).size(), 2u);
  const std::vector<int64_t> want =
      haloRowGroups(winogradRowBoundaries(kernels[0], vectorUnitOf(target)));
  ASSERT_GT(want.size(), 2u);
  // %r: written by the first convolution, read by the second (input) and the third (its
  // residual, a chain input of the output's shape).
  EXPECT_EQ(kernels[0].output.rowGroups, want);
  EXPECT_EQ(kernels[1].inputs[0].rowGroups, want);
  EXPECT_EQ(kernels[2].inputs.back().rowGroups, want);
  // %s: the second convolution's output, the third's input.
  EXPECT_EQ(kernels[1].output.rowGroups, want);
  EXPECT_EQ(kernels[2].inputs[0].rowGroups, want);
  // Dense: the graph's input (the first convolution's input, the second's residual), the
  // third convolution's output (a pool reads it), the pool's output.
  EXPECT_TRUE(kernels[0].inputs[0].rowGroups.empty());
  EXPECT_TRUE(kernels[1].inputs.back().rowGroups.empty());
  EXPECT_TRUE(kernels[2].output.rowGroups.empty());
  EXPECT_TRUE(kernels[3].inputs[0].rowGroups.empty());
  EXPECT_TRUE(kernels[3].output.rowGroups.empty());
}

// A fused expand + depthwise convolution (MobileNetV2's features.2, stride 2) in an artifact
// for two threads: one run of steps of rows per thread (KernelDesc::threadSplit), its
// tensors dense.
TEST(RowGroups, ExpandDepthwiseOneRunPerThread) {
  const TargetConfig target = testing::hostTarget();
  passes::PipelineOptions options;
  options.threads = 2;
  ir::DispatchGraph g = passes::compileGraph(ir::parseGraph(R"(graph @g {
  input %x : f32[1,16,112,112]
  const %w1 : f32[96,16,1,1] = splat(0.5)
  const %w2 : f32[96,1,3,3] = splat(0.125)
  %e = Conv(%x, %w1) : f32[1,96,112,112]
  %d = Conv(%e, %w2) {group = 96, pads = [1, 1, 1, 1], strides = [2, 2]} : f32[1,96,56,56]
  output "d" = %d
})"), options);
  std::vector<KernelDesc> kernels = lowerDispatches(g);
  packConvWeights(g, kernels, target, true);
  ASSERT_EQ(kernels.size(), 1u);
  ASSERT_GE(kernels[0].tailB, 0) << "the depthwise convolution should be fused";
  EXPECT_EQ(kernels[0].threadSplit, 0);
  splitForThreads(kernels, target, 1);
  EXPECT_EQ(kernels[0].threadSplit, 0) << "one thread: the kernel's own workgroups";
  splitForThreads(kernels, target, 2);
  EXPECT_EQ(kernels[0].threadSplit, 2);
  EXPECT_TRUE(placeRowGroups(g, kernels, target, 2).empty());
  EXPECT_TRUE(kernels[0].output.rowGroups.empty());
}

// One 3x3 convolution of 64 channels on an HxH map, weights packed for `target`.
std::vector<KernelDesc> oneConv(int64_t H, const TargetConfig& target, ir::DispatchGraph& g) {
  const std::string h = std::to_string(H);
  g = passes::compileGraph(ir::parseGraph(R"(graph @g {
  input %x : f32[1,64,)" + h + "," + h + R"(]
  const %w : f32[64,64,3,3] = splat(0.01)
  %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} : f32[1,64,)" + h + "," + h + R"(]
  output "y" = %c
})"), {});
  std::vector<KernelDesc> kernels = lowerDispatches(g);
  packConvWeights(g, kernels, target, true);
  return kernels;
}

// Two threads take fixed runs of a Winograd convolution's blocks only where the runs hold as
// many tile rows; else they share the blocks' panels at run time. On AVX-512 (F(4x4) tiles):
// 56x56 has 14 tile rows, 7 + 7; 28x28 has 7, which two runs can only cut 4 + 3 (or 3 + 4).
TEST(RowGroups, SplitOnlyIntoEqualRuns) {
  TargetRequest request;
  request.name = "x86_64-v4";
  const TargetConfig target = resolveTarget(request);
  const VectorUnit unit = vectorUnitOf(target);
  for (const int64_t H : {56, 28}) {
    SCOPED_TRACE("map " + std::to_string(H) + "x" + std::to_string(H));
    ir::DispatchGraph g;
    std::vector<KernelDesc> kernels = oneConv(H, target, g);
    ASSERT_EQ(kernels.size(), 1u);
    ASSERT_EQ(kernels[0].winogradTile, 4);
    const std::vector<int64_t> bounds = winogradRowBoundaries(kernels[0], unit);
    const size_t blocks = bounds.size() - 1;
    ASSERT_EQ(blocks % 2, 0u) << "an even count of blocks, so only the tile rows decide";
    const int64_t middle = bounds[blocks / 2];
    ASSERT_EQ(middle % 4, 0);
    splitForThreads(kernels, target, 2);
    if (H == 56) {
      EXPECT_EQ(middle, 28) << "7 + 7 tile rows";
      EXPECT_EQ(kernels[0].threadSplit, 2);
      EXPECT_EQ(kernels[0].workQueues, 0);
    } else {
      EXPECT_TRUE(middle == 16 || middle == 12) << "4 + 3 or 3 + 4 tile rows, not " << middle;
      EXPECT_EQ(kernels[0].threadSplit, 0) << "unequal runs: shared at run time instead";
    }
  }
}

TEST(RowGroups, NoneWithoutVectors) {
  TargetRequest request;
  request.name = "cortex-m4";
  const TargetConfig target = resolveTarget(request);
  ir::DispatchGraph g = passes::compileGraph(ir::parseGraph(kBlock), {});
  std::vector<KernelDesc> kernels = lowerDispatches(g);
  packConvWeights(g, kernels, target, true);
  splitForThreads(kernels, target, 2);
  EXPECT_TRUE(placeRowGroups(g, kernels, target, 2).empty());
  for (const KernelDesc& d : kernels) {
    EXPECT_TRUE(d.output.rowGroups.empty());
    EXPECT_EQ(d.threadSplit, 0);
  }
}

}  // namespace
}  // namespace kiln::codegen
