// Gemm-chain fusion tests: an MLP head becomes one dispatch; what stays apart.
#include "kiln/passes/passes.h"
#include "kiln/passes/pipeline.h"
#include "test_util.h"

namespace kiln::passes {
namespace {

ir::DispatchGraph fused(const std::string& text) {
  ir::DispatchGraph dg = formDispatches(testing::parseVerified(text));
  fuseElementwise(dg);
  fuseGemmChains(dg);
  return dg;
}

TEST(FuseGemmChains, MlpHeadIsOneDispatch) {
  ir::DispatchGraph dg = fused(R"(graph @g {
  input %x : f32[2,8]
  const %w1 : f32[16,8] = splat(0.5)
  const %b1 : f32[16] = splat(0.25)
  const %w2 : f32[16,3] = splat(0.125)
  const %b2 : f32[3] = [1.0, 2.0, 3.0]
  %h = Gemm(%x, %w1, %b1) {transB = 1} : f32[2,16]
  %r = Relu(%h) : f32[2,16]
  %y = Gemm(%r, %w2, %b2) : f32[2,3]
  output "y" = %y
})");
  ASSERT_EQ(dg.dispatches.size(), 1u);
  const ir::Dispatch& d = dg.dispatches[0];
  ASSERT_EQ(d.fused.size(), 2u);
  EXPECT_EQ(d.fused[1]->kind(), ir::OpKind::Gemm);
  ASSERT_EQ(d.bindings.size(), 6u);
  EXPECT_EQ(d.bindings[3].value->name(), "w2");
  EXPECT_EQ(d.bindings[3].fusedOp, 1);
  EXPECT_EQ(d.bindings[4].value->name(), "b2");
  EXPECT_EQ(d.bindings[5].value->name(), "y");
}

TEST(FuseGemmChains, WhatStaysApart) {
  ir::DispatchGraph dg = fused(R"(graph @g {
  input %x : f32[2,8]
  input %w : f32[8,4]
  const %w1 : f32[8,2048] = splat(0.5)
  const %w2 : f32[2048,3] = splat(0.125)
  const %w3 : f32[8,8] = splat(0.5)
  %big = MatMul(%x, %w1) : f32[2,2048]
  %y1 = MatMul(%big, %w2) : f32[2,3]
  %h = MatMul(%x, %w3) : f32[2,8]
  %y2 = MatMul(%h, %w) : f32[2,4]
  %h2 = MatMul(%x, %w3) : f32[2,8]
  %y3 = MatMul(%h2, %w3) : f32[2,8]
  %e = Exp(%h2) : f32[2,8]
  output "y1" = %y1
  output "y2" = %y2
  output "y3" = %y3
  output "e" = %e
})");
  // Hidden row over 1024 floats; weights not constant; hidden value used twice.
  EXPECT_EQ(dg.dispatches.size(), 7u);
}

}  // namespace
}  // namespace kiln::passes
