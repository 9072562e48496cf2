// Conv + MaxPool fusion tests: a stem (Conv -> Relu -> MaxPool) becomes one dispatch whose
// result is the pooled tensor; what stays apart (maps of 1 MiB, 64x64x64 floats, unless
// the case is about the size).
#include "kiln/passes/passes.h"
#include "kiln/passes/pipeline.h"
#include "test_util.h"

namespace kiln::passes {
namespace {

ir::DispatchGraph fused(const std::string& text) {
  ir::DispatchGraph dg = formDispatches(testing::parseVerified(text));
  fuseElementwise(dg);
  fuseGemmChains(dg);
  fuseConvPools(dg);
  return dg;
}

TEST(FuseConvPools, StemIsOneDispatch) {
  ir::DispatchGraph dg = fused(R"(graph @g {
  input %x : f32[1,3,129,129]
  const %w : f32[64,3,3,3] = splat(0.5)
  const %b : f32[64] = splat(0.25)
  %c = Conv(%x, %w, %b) {strides = [2, 2]} : f32[1,64,64,64]
  %r = Relu(%c) : f32[1,64,64,64]
  %p = MaxPool(%r) {kernel_shape = [3, 3], strides = [2, 2], ceil_mode = 1} : f32[1,64,32,32]
  output "p" = %p
})");
  ASSERT_EQ(dg.dispatches.size(), 1u);
  const ir::Dispatch& d = dg.dispatches[0];
  EXPECT_EQ(d.root->kind(), ir::OpKind::Conv);
  ASSERT_EQ(d.fused.size(), 2u);
  EXPECT_EQ(d.fused[0]->kind(), ir::OpKind::Relu);
  EXPECT_EQ(d.fused[1]->kind(), ir::OpKind::MaxPool);
  ASSERT_EQ(d.bindings.size(), 4u);  // x, w, b, then the pooled result
  EXPECT_EQ(d.bindings[3].value->name(), "p");
}

TEST(FuseConvPools, WhatStaysApart) {
  ir::DispatchGraph dg = fused(R"(graph @g {
  input %x : f32[1,64,64,64]
  input %s : f32[1,64,64,64]
  input %small : f32[1,16,32,32]
  const %w : f32[64,64,1,1] = splat(0.5)
  const %wg : f32[64,1,3,3] = splat(0.5)
  const %ws : f32[16,16,1,1] = splat(0.5)
  %c1 = Conv(%x, %w) : f32[1,64,64,64]
  %p1 = MaxPool(%c1) {kernel_shape = [2, 2], strides = [2, 2]} : f32[1,64,32,32]
  %e1 = Exp(%c1) : f32[1,64,64,64]
  %c2 = Conv(%x, %w) : f32[1,64,64,64]
  %a2 = Add(%c2, %s) : f32[1,64,64,64]
  %p2 = MaxPool(%a2) {kernel_shape = [2, 2], strides = [2, 2]} : f32[1,64,32,32]
  %c3 = Conv(%x, %wg) {group = 64, pads = [1, 1, 1, 1]} : f32[1,64,64,64]
  %p3 = MaxPool(%c3) {kernel_shape = [2, 2], strides = [2, 2]} : f32[1,64,32,32]
  %c4 = Conv(%x, %w) : f32[1,64,64,64]
  %p4 = AveragePool(%c4) {kernel_shape = [2, 2], strides = [2, 2]} : f32[1,64,32,32]
  %c5 = Conv(%x, %w) : f32[1,64,64,64]
  %p5 = MaxPool(%c5) {kernel_shape = [2, 2], dilations = [2, 2]} : f32[1,64,62,62]
  %c6 = Conv(%small, %ws) : f32[1,16,32,32]
  %p6 = MaxPool(%c6) {kernel_shape = [2, 2], strides = [2, 2]} : f32[1,16,16,16]
  output "p1" = %p1
  output "e1" = %e1
  output "p2" = %p2
  output "p3" = %p3
  output "p4" = %p4
  output "p5" = %p5
  output "c5" = %c5
  output "p6" = %p6
})");
  // c1 is read twice; c2's chain reads another tensor; c3 is grouped; an average pool;
  // a dilated pool over a graph output; c6 is 64 KiB (in L2 anyway).
  for (const ir::Dispatch& d : dg.dispatches)
    for (const ir::Op* op : d.fused) EXPECT_NE(op->kind(), ir::OpKind::MaxPool) << d.name;
}

TEST(FuseConvPools, PipelineFusesUnlessFusionIsOff) {
  const char* text = R"(graph @g {
  input %x : f32[1,1,68,68]
  const %w : f32[64,1,5,5] = splat(0.5)
  %c = Conv(%x, %w) : f32[1,64,64,64]
  %p = MaxPool(%c) {kernel_shape = [2, 2], strides = [2, 2]} : f32[1,64,32,32]
  output "p" = %p
})";
  PipelineOptions on;
  EXPECT_EQ(compileGraph(testing::parseVerified(text), on).dispatches.size(), 1u);
  PipelineOptions off;
  off.fusion = false;
  EXPECT_EQ(compileGraph(testing::parseVerified(text), off).dispatches.size(), 2u);
}

}  // namespace
}  // namespace kiln::passes
