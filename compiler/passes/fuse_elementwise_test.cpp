// Elementwise fusion tests: which consumers join which producers, the bindings of fused
// dispatches, and that fused dispatch graphs still plan and verify.
#include "kiln/passes/passes.h"
#include "kiln/passes/pipeline.h"
#include "test_util.h"

namespace kiln::passes {
namespace {

ir::DispatchGraph fused(const std::string& text) {
  ir::DispatchGraph dg = formDispatches(testing::parseVerified(text));
  fuseElementwise(dg);
  return dg;
}

std::vector<std::string> names(const ir::Dispatch& d) {
  std::vector<std::string> out;
  for (const ir::Binding& b : d.bindings)
    out.push_back(((b.access & ir::kWrite) ? "w:" : "r:") + b.value->name());
  return out;
}

using Names = std::vector<std::string>;

TEST(FuseElementwise, ConvBiasReluChainIsOneDispatch) {
  ir::DispatchGraph dg = fused(R"(graph @g {
  input %x : f32[1,2,4,4]
  const %w : f32[3,2,3,3] = splat(0.5)
  const %scale : f32[1,3,1,1] = [1.0, 2.0, 3.0]
  const %shift : f32[3,1,1] = [0.5, 0.25, 0.0]
  %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} : f32[1,3,4,4]
  %m = Mul(%c, %scale) : f32[1,3,4,4]
  %a = Add(%shift, %m) : f32[1,3,4,4]
  %r = Relu(%a) : f32[1,3,4,4]
  output "y" = %r
})");
  ASSERT_EQ(dg.dispatches.size(), 1u);
  const ir::Dispatch& d = dg.dispatches[0];
  ASSERT_EQ(d.fused.size(), 3u);
  EXPECT_EQ(d.fused[0]->kind(), ir::OpKind::Mul);
  EXPECT_EQ(d.fused[2]->kind(), ir::OpKind::Relu);
  EXPECT_EQ(names(d), (Names{"r:x", "r:w", "r:scale", "r:shift", "w:r"}));
  EXPECT_EQ(d.bindings[2].fusedOp, 0);
  EXPECT_EQ(d.bindings[3].fusedOp, 1);
  EXPECT_EQ(d.bindings[4].resultIndex, 0);
  EXPECT_EQ(dg.placement.at(d.bindings[4].value).space, ir::Space::Output);
}

TEST(FuseElementwise, ResizeTapsJoinTheirGathers) {
  // Resize's linear taps along an axis: Gather(x, i0) * w0 + Gather(x, i1) * w1. Each Mul
  // joins its Gather (integer indices, f32 data), the Add the second one: two dispatches.
  ir::DispatchGraph dg = fused(R"(graph @g {
  input %x : f32[1,2,3,4]
  const %i0 : i64[6] = [0, 0, 1, 1, 2, 3]
  const %i1 : i64[6] = [0, 1, 1, 2, 3, 3]
  const %w0 : f32[6] = [1.0, 0.75, 0.25, 0.75, 0.25, 1.0]
  const %w1 : f32[6] = [0.0, 0.25, 0.75, 0.25, 0.75, 0.0]
  %g0 = Gather(%x, %i0) {axis = 3} : f32[1,2,3,6]
  %t0 = Mul(%g0, %w0) : f32[1,2,3,6]
  %g1 = Gather(%x, %i1) {axis = 3} : f32[1,2,3,6]
  %t1 = Mul(%g1, %w1) : f32[1,2,3,6]
  %y = Add(%t0, %t1) : f32[1,2,3,6]
  output "y" = %y
})");
  ASSERT_EQ(dg.dispatches.size(), 2u);
  EXPECT_EQ(names(dg.dispatches[0]), (Names{"r:x", "r:i0", "r:w0", "w:t0"}));
  EXPECT_EQ(names(dg.dispatches[1]), (Names{"r:x", "r:i1", "r:w1", "r:t0", "w:y"}));
}

TEST(FuseElementwise, ResidualAddJoinsTheSecondConv) {
  // Two convs feed the Add: it joins the second, the deeper one (ResidualAddJoinsTheDeeper-
  // Producer below has the deeper producer listed first).
  ir::DispatchGraph dg = fused(R"(graph @g {
  input %x : f32[1,2,4,4]
  const %w : f32[2,2,1,1] = splat(0.5)
  %c1 = Conv(%x, %w) : f32[1,2,4,4]
  %r1 = Relu(%c1) : f32[1,2,4,4]
  %c2 = Conv(%r1, %w) : f32[1,2,4,4]
  %s = Add(%c2, %r1) : f32[1,2,4,4]
  %o = Relu(%s) : f32[1,2,4,4]
  output "y" = %o
})");
  // %r1 has two users: Relu joins conv 1 only because %c1 has one; the Add and the final
  // Relu join conv 2.
  ASSERT_EQ(dg.dispatches.size(), 2u);
  EXPECT_EQ(dg.dispatches[0].fused.size(), 1u);
  EXPECT_EQ(names(dg.dispatches[0]), (Names{"r:x", "r:w", "w:r1"}));
  EXPECT_EQ(dg.dispatches[1].fused.size(), 2u);
  EXPECT_EQ(names(dg.dispatches[1]), (Names{"r:r1", "r:w", "r:r1", "w:o"}));
  EXPECT_EQ(dg.dispatches[1].id, 1u);
}

TEST(FuseElementwise, ResidualAddJoinsTheDeeperProducer) {
  // A ResNet block with a projection shortcut: Add(conv2(relu(conv1(x))), downsample(x)).
  // The downsample conv comes later in the list, but conv2 ends the longer chain: the Add
  // and the final Relu join conv2, and the downsample stays a plain conv that runs in conv1's
  // stage: 2 stages, where joining the downsample would leave it alone in a third.
  ir::DispatchGraph dg = fused(R"(graph @g {
  input %x : f32[1,2,4,4]
  const %w : f32[2,2,1,1] = splat(0.5)
  const %wd : f32[2,2,1,1] = splat(0.25)
  %c1 = Conv(%x, %w) : f32[1,2,4,4]
  %r1 = Relu(%c1) : f32[1,2,4,4]
  %c2 = Conv(%r1, %w) : f32[1,2,4,4]
  %d = Conv(%x, %wd) : f32[1,2,4,4]
  %s = Add(%c2, %d) : f32[1,2,4,4]
  %o = Relu(%s) : f32[1,2,4,4]
  output "y" = %o
})");
  ASSERT_EQ(dg.dispatches.size(), 3u);
  EXPECT_EQ(names(dg.dispatches[1]), (Names{"r:r1", "r:w", "r:d", "w:o"}));
  EXPECT_EQ(dg.dispatches[1].fused.size(), 2u);
  EXPECT_TRUE(dg.dispatches[2].fused.empty());
  EXPECT_EQ(names(dg.dispatches[2]), (Names{"r:x", "r:wd", "w:d"}));

  // conv1 and the downsample share stage 0; conv2 + Add + Relu runs alone in stage 1.
  scheduleDispatches(dg);
  EXPECT_EQ(dg.numStages, 2u);
  ASSERT_EQ(dg.dispatches.size(), 3u);
  EXPECT_EQ(dg.dispatches[0].stage, 0u);
  EXPECT_EQ(dg.dispatches[1].stage, 0u);
  EXPECT_EQ(names(dg.dispatches[1]), (Names{"r:x", "r:wd", "w:d"}));
  EXPECT_EQ(dg.dispatches[2].stage, 1u);
  EXPECT_EQ(names(dg.dispatches[2]), (Names{"r:r1", "r:w", "r:d", "w:o"}));
}

TEST(FuseElementwise, ElementwiseChainBecomesOneKernel) {
  ir::DispatchGraph dg = fused(R"(graph @g {
  input %x : f32[8]
  input %y : f32[8]
  const %half : f32[] = [0.5]
  %a = Add(%x, %y) : f32[8]
  %m = Mul(%a, %half) : f32[8]
  %t = Tanh(%m) : f32[8]
  %h = HardSwish(%t) : f32[8]
  output "h" = %h
})");
  ASSERT_EQ(dg.dispatches.size(), 1u);
  EXPECT_EQ(dg.dispatches[0].root->kind(), ir::OpKind::Add);
  EXPECT_EQ(dg.dispatches[0].fused.size(), 3u);
  EXPECT_EQ(names(dg.dispatches[0]), (Names{"r:x", "r:y", "r:half", "w:h"}));
}

TEST(FuseElementwise, WhatDoesNotFuse) {
  ir::DispatchGraph dg = fused(R"(graph @g {
  input %x : f32[1,2,4,4]
  input %b : f32[3,1,2,4,4]
  const %w : f32[2,2,1,1] = splat(0.5)
  const %shape : i64[2] = [1, 32]
  %c = Conv(%x, %w) : f32[1,2,4,4]
  %r = Relu(%c) : f32[1,2,4,4]
  %s = Sigmoid(%r) : f32[1,2,4,4]
  %c2 = Conv(%x, %w) : f32[1,2,4,4]
  %g = Add(%c2, %b) : f32[3,1,2,4,4]
  %c3 = Conv(%x, %w) : f32[1,2,4,4]
  %f = Reshape(%c3, %shape) : f32[1,32]
  %e = Exp(%f) : f32[1,32]
  %n = Neg(%x) : f32[1,2,4,4]
  %sm = Softmax(%n) : f32[1,2,4,4]
  %q = Relu(%sm) : f32[1,2,4,4]
  output "r" = %r
  output "s" = %s
  output "g" = %g
  output "e" = %e
  output "q" = %q
})");
  // %r is a graph output (Sigmoid stays apart, Relu joins the conv); the Add would grow the
  // iteration space; Exp reads the conv through a view; Softmax is not a fusable producer
  // (and Neg's consumer is Softmax, not elementwise).
  std::vector<size_t> fusedCounts;
  for (const ir::Dispatch& d : dg.dispatches) fusedCounts.push_back(d.fused.size());
  EXPECT_EQ(fusedCounts, (std::vector<size_t>{1, 0, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(FuseElementwise, RefusesIntegerChains) {
  ir::DispatchGraph dg = fused(R"(graph @g {
  input %x : i32[4]
  %a = Abs(%x) : i32[4]
  %n = Neg(%a) : i32[4]
  output "n" = %n
})");
  EXPECT_EQ(dg.dispatches.size(), 2u);
}

TEST(FuseElementwise, PipelinePlansAndVerifiesFusedGraphs) {
  const char* text = R"(graph @g {
  input %x : f32[1,4,8,8]
  const %w : f32[4,4,3,3] = splat(0.125)
  const %bias : f32[4] = [0.0, 1.0, 2.0, 3.0]
  %c1 = Conv(%x, %w, %bias) {pads = [1, 1, 1, 1]} : f32[1,4,8,8]
  %r1 = Relu(%c1) : f32[1,4,8,8]
  %c2 = Conv(%r1, %w, %bias) {pads = [1, 1, 1, 1]} : f32[1,4,8,8]
  %s = Add(%c2, %r1) : f32[1,4,8,8]
  %r2 = Clip(%s) : f32[1,4,8,8]
  %p = MaxPool(%r2) {kernel_shape = [2, 2], strides = [2, 2]} : f32[1,4,4,4]
  %e = Exp(%p) : f32[1,4,4,4]
  %n = Neg(%e) : f32[1,4,4,4]
  output "y" = %n
})";
  ir::DispatchGraph dg = compileGraph(testing::parseVerified(text));
  ASSERT_EQ(dg.dispatches.size(), 3u);
  EXPECT_EQ(dg.numStages, 3u);
  testing::expectNoConflicts(dg);
  // %r1 is read by both later dispatches; the conv outputs inside chains take no memory:
  // the arena holds %r1 and %r2 only (1 KiB each).
  EXPECT_EQ(dg.arenaSize, 2048u);
  EXPECT_NE(ir::printDispatchGraph(dg).find("dispatch 1 Conv+Add+Clip"), std::string::npos);
  PipelineOptions none;
  none.fusion = false;
  ir::DispatchGraph unfused = compileGraph(testing::parseVerified(text), none);
  EXPECT_EQ(unfused.dispatches.size(), 8u);
  for (const ir::Dispatch& d : unfused.dispatches) EXPECT_TRUE(d.fused.empty());
}

TEST(FuseElementwise, InPlaceStaysLegalForElementwiseChains) {
  const char* text = R"(graph @g {
  input %x : f32[1,64]
  %a = Softmax(%x) : f32[1,64]
  %e = Exp(%a) : f32[1,64]
  %l = Log(%e) : f32[1,64]
  %t = Tanh(%l) : f32[1,64]
  %b = Softmax(%t) : f32[1,64]
  output "b" = %b
})";
  ir::DispatchGraph dg = compileGraph(testing::parseVerified(text));
  testing::expectNoConflicts(dg);
  ASSERT_EQ(dg.dispatches.size(), 3u);
  EXPECT_EQ(dg.dispatches[1].root->kind(), ir::OpKind::Exp);
  EXPECT_EQ(dg.dispatches[1].fused.size(), 2u);
  // The chain writes its result in place over %a, which dies there: one 256-byte buffer.
  EXPECT_EQ(dg.dispatches[1].aliases.size(), 1u);
  EXPECT_EQ(dg.arenaSize, 256u);
}

}  // namespace
}  // namespace kiln::passes
