// Expand-depthwise fusion tests: a MobileNet block's 1x1 conv + Clip + depthwise conv + Clip
// becomes one dispatch with the depthwise operands as bindings; what stays apart.
#include "kiln/passes/passes.h"
#include "kiln/passes/pipeline.h"
#include "test_util.h"

namespace kiln::passes {
namespace {

ir::DispatchGraph fused(const std::string& text, uint32_t threads = 1) {
  ir::DispatchGraph dg = formDispatches(testing::parseVerified(text));
  fuseElementwise(dg);
  fuseExpandDepthwise(dg, threads);
  return dg;
}

// expand 16 -> 96 on 112x112 (4.8 MB expanded), depthwise 3x3 stride 2, then a 1x1 project.
const char* kBlock = R"(graph @g {
  input %x : f32[1,16,112,112]
  const %w1 : f32[96,16,1,1] = splat(0.5)
  const %b1 : f32[96] = splat(0.25)
  const %w2 : f32[96,1,3,3] = splat(0.125)
  const %b2 : f32[96] = splat(1.0)
  const %lo : f32[] = [0.0]
  const %hi : f32[] = [6.0]
  const %w3 : f32[24,96,1,1] = splat(0.5)
  %e = Conv(%x, %w1, %b1) : f32[1,96,112,112]
  %ec = Clip(%e, %lo, %hi) : f32[1,96,112,112]
  %d = Conv(%ec, %w2, %b2) {group = 96, pads = [1, 1, 1, 1], strides = [2, 2]} : f32[1,96,56,56]
  %dc = Clip(%d, %lo, %hi) : f32[1,96,56,56]
  %p = Conv(%dc, %w3) : f32[1,24,56,56]
  output "p" = %p
})";

TEST(FuseExpandDepthwise, MobileNetBlockIsTwoDispatches) {
  ir::DispatchGraph dg = fused(kBlock);
  ASSERT_EQ(dg.dispatches.size(), 2u);
  const ir::Dispatch& d = dg.dispatches[0];
  EXPECT_EQ(d.root->kind(), ir::OpKind::Conv);
  ASSERT_EQ(d.fused.size(), 3u);
  EXPECT_EQ(d.fused[0]->kind(), ir::OpKind::Clip);
  EXPECT_EQ(d.fused[1]->kind(), ir::OpKind::Conv);
  EXPECT_EQ(d.fused[2]->kind(), ir::OpKind::Clip);
  // x, w1, b1, then the depthwise weights and bias (fused op 1), then the result.
  ASSERT_EQ(d.bindings.size(), 6u);
  EXPECT_EQ(d.bindings[3].value->name(), "w2");
  EXPECT_EQ(d.bindings[3].fusedOp, 1);
  EXPECT_EQ(d.bindings[4].value->name(), "b2");
  EXPECT_EQ(d.bindings[4].fusedOp, 1);
  EXPECT_EQ(d.bindings[5].value->name(), "dc");
  EXPECT_TRUE(d.bindings[5].access & ir::kWrite);
  // The project conv reads what the fused dispatch writes.
  EXPECT_EQ(dg.dispatches[1].root->operand(0)->name(), "dc");
}

TEST(FuseExpandDepthwise, FullPipelineKeepsTheFusionOptional) {
  PipelineOptions on, off;
  off.fusion = false;
  EXPECT_EQ(compileGraph(testing::parseVerified(kBlock), on).dispatches.size(), 2u);
  EXPECT_EQ(compileGraph(testing::parseVerified(kBlock), off).dispatches.size(), 5u);
}

TEST(FuseExpandDepthwise, WhatStaysApart) {
  ir::DispatchGraph dg = fused(R"(graph @g {
  input %x : f32[1,16,112,112]
  input %s : f32[1,16,20,20]
  const %w1 : f32[96,16,1,1] = splat(0.5)
  const %w2 : f32[96,1,3,3] = splat(0.125)
  const %w4 : f32[96,1,3,3] = splat(0.125)
  const %k3 : f32[96,16,3,3] = splat(0.5)
  const %w16 : f32[16,1,3,3] = splat(0.125)
  %e = Conv(%x, %w1) : f32[1,96,112,112]
  %d = Conv(%e, %w2) {group = 96, pads = [1, 1, 1, 1]} : f32[1,96,112,112]
  %d2 = Conv(%e, %w4) {group = 96, pads = [1, 1, 1, 1]} : f32[1,96,112,112]
  %f = Conv(%x, %k3) {pads = [1, 1, 1, 1]} : f32[1,96,112,112]
  %g = Conv(%f, %w2) {group = 96, pads = [1, 1, 1, 1]} : f32[1,96,112,112]
  %small = Conv(%s, %w16) {group = 16, pads = [1, 1, 1, 1]} : f32[1,16,20,20]
  output "d" = %d
  output "d2" = %d2
  output "g" = %g
  output "small" = %small
})");
  // The expanded tensor read twice; a 3x3 producer; a depthwise conv of a graph input.
  EXPECT_EQ(dg.dispatches.size(), 6u);
  for (const ir::Dispatch& d : dg.dispatches) EXPECT_TRUE(d.fused.empty()) << d.name;
}

TEST(FuseExpandDepthwise, SmallExpandedMapsStayApart) {
  // 144 x 56 x 56 floats (1.8 MB, MobileNetV2's features.3): the separate kernels are faster.
  ir::DispatchGraph dg = fused(R"(graph @g {
  input %x : f32[1,24,56,56]
  const %w1 : f32[144,24,1,1] = splat(0.5)
  const %w2 : f32[144,1,3,3] = splat(0.125)
  %e = Conv(%x, %w1) : f32[1,144,56,56]
  %r = Relu(%e) : f32[1,144,56,56]
  %d = Conv(%r, %w2) {group = 144, pads = [1, 1, 1, 1]} : f32[1,144,56,56]
  output "d" = %d
})");
  EXPECT_EQ(dg.dispatches.size(), 2u);
}

// An expand + depthwise block with `channels` expanded channels on a size x size map.
std::string blockOf(int channels, int size) {
  const std::string c = std::to_string(channels), s = std::to_string(size);
  return "graph @g {\n  input %x : f32[1,32," + s + "," + s + "]\n  const %w1 : f32[" + c +
         ",32,1,1] = splat(0.5)\n  const %w2 : f32[" + c +
         ",1,3,3] = splat(0.125)\n  %e = Conv(%x, %w1) : f32[1," + c + "," + s + "," + s +
         "]\n  %d = Conv(%e, %w2) {group = " + c + ", pads = [1, 1, 1, 1]} : f32[1," + c + "," +
         s + "," + s + "]\n  output \"d\" = %d\n}";
}

// For an artifact two threads will run, expanded tensors from 512 KiB on are fused too:
// MobileNetV2's 56x56 (1.8 MB) and 28x28 (192 channels, 602 KB) blocks, not its 14x14 ones
// (576 channels, 451 KB); one thread keeps them apart. The pipeline passes its thread count.
TEST(FuseExpandDepthwise, TwoThreadsFuseSmallerBlocks) {
  EXPECT_EQ(fused(blockOf(144, 56), 1).dispatches.size(), 2u);
  EXPECT_EQ(fused(blockOf(144, 56), 2).dispatches.size(), 1u);
  EXPECT_EQ(fused(blockOf(192, 28), 1).dispatches.size(), 2u);
  EXPECT_EQ(fused(blockOf(192, 28), 2).dispatches.size(), 1u);
  EXPECT_EQ(fused(blockOf(192, 28), 4).dispatches.size(), 1u);
  EXPECT_EQ(fused(blockOf(576, 14), 2).dispatches.size(), 2u);
  PipelineOptions one, two;
  two.threads = 2;
  EXPECT_EQ(compileGraph(testing::parseVerified(blockOf(192, 28)), one).dispatches.size(), 2u);
  EXPECT_EQ(compileGraph(testing::parseVerified(blockOf(192, 28)), two).dispatches.size(), 1u);
}

TEST(FuseExpandDepthwise, RowsWiderThanTheStackBufferStayApart) {
  // 256 channels x 3 rows x 1024 columns (3 MB) would not fit the kernel's 256 KiB buffer.
  ir::DispatchGraph dg = fused(R"(graph @g {
  input %x : f32[1,8,4,1024]
  const %w1 : f32[256,8,1,1] = splat(0.5)
  const %w2 : f32[256,1,3,3] = splat(0.125)
  %e = Conv(%x, %w1) : f32[1,256,4,1024]
  %d = Conv(%e, %w2) {group = 256, pads = [1, 1, 1, 1]} : f32[1,256,4,1024]
  output "d" = %d
})");
  EXPECT_EQ(dg.dispatches.size(), 2u);
}

}  // namespace
}  // namespace kiln::passes
