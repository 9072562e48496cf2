// Scheduling tests: stages of independent work, deterministic order, copies after producers.
#include "kiln/passes/passes.h"
#include "test_util.h"

namespace kiln::passes {
namespace {

using testing::parseVerified;

ir::DispatchGraph formAndSchedule(const std::string& text) {
  ir::DispatchGraph dg = formDispatches(parseVerified(text));
  scheduleDispatches(dg);
  return dg;
}

TEST(Schedule, DiamondGetsTwoParallelDispatchesThenTheJoin) {
  ir::DispatchGraph dg = formAndSchedule(R"(graph @g {
  input %x : f32[8]
  %e = Exp(%x) : f32[8]
  %a = Relu(%e) : f32[8]
  %b = Sigmoid(%e) : f32[8]
  %c = Add(%a, %b) : f32[8]
  %late = Neg(%x) : f32[8]
  output "c" = %c
  output "late" = %late
})");
  ASSERT_EQ(dg.dispatches.size(), 5u);
  std::vector<std::pair<std::string, uint32_t>> order;
  for (const ir::Dispatch& d : dg.dispatches) order.emplace_back(d.root->result()->name(), d.stage);
  // Neg reads only the input: stage 0 with Exp, after it in graph order.
  EXPECT_EQ(order, (std::vector<std::pair<std::string, uint32_t>>{
                       {"e", 0}, {"late", 0}, {"a", 1}, {"b", 1}, {"c", 2}}));
  EXPECT_EQ(dg.numStages, 3u);
  for (size_t i = 0; i < dg.dispatches.size(); ++i) EXPECT_EQ(dg.dispatches[i].id, i);
  ASSERT_EQ(dg.steps.size(), 5u);
  for (size_t i = 0; i + 1 < dg.steps.size(); ++i)
    EXPECT_LE(dg.steps[i].stage, dg.steps[i + 1].stage);
}

// A stage's dispatches go cheapest first (the pool takes them last to first: the big
// workgroups first, the small ones fill in). A 3x3 conv (2 x 32 outputs x 18 MACs = 1152
// FLOPs) listed before a 1x1 conv of the same input (128 FLOPs) and two elementwise ops (32
// elements each): the elementwise ops in list order (equal costs), the 1x1, the 3x3.
TEST(Schedule, StageGoesCheapestFirst) {
  ir::DispatchGraph dg = formAndSchedule(R"(graph @g {
  input %x : f32[1,2,4,4]
  const %w3 : f32[2,2,3,3] = splat(0.5)
  const %w1 : f32[2,2,1,1] = splat(0.5)
  %big = Conv(%x, %w3) {pads = [1, 1, 1, 1]} : f32[1,2,4,4]
  %small = Conv(%x, %w1) : f32[1,2,4,4]
  %tiny = Relu(%x) : f32[1,2,4,4]
  %same = Neg(%x) : f32[1,2,4,4]
  output "big" = %big
  output "small" = %small
  output "tiny" = %tiny
  output "same" = %same
})");
  ASSERT_EQ(dg.dispatches.size(), 4u);
  std::vector<std::string> order;
  for (const ir::Dispatch& d : dg.dispatches) {
    EXPECT_EQ(d.stage, 0u);
    order.push_back(d.root->result()->name());
  }
  EXPECT_EQ(order, (std::vector<std::string>{"tiny", "same", "small", "big"}));
}

TEST(Schedule, ViewsDoNotAddStagesAndCopiesFollowTheirProducer) {
  ir::DispatchGraph dg = formAndSchedule(R"(graph @g {
  input %x : f32[2,4]
  const %s : i64[1] = [8]
  %e = Exp(%x) : f32[2,4]
  %v = Reshape(%e, %s) : f32[8]
  %r = Relu(%v) : f32[8]
  output "e" = %e
  output "v" = %v
  output "r" = %r
})");
  ASSERT_EQ(dg.dispatches.size(), 2u);
  EXPECT_EQ(dg.dispatches[1].stage, 1u);
  ASSERT_EQ(dg.steps.size(), 3u);
  EXPECT_EQ(dg.steps[1].kind, ir::StepKind::Dispatch);
  EXPECT_EQ(dg.steps[2].kind, ir::StepKind::Copy);  // output "v" = copy of output "e"
  EXPECT_EQ(dg.steps[2].stage, 1u);
}

}  // namespace
}  // namespace kiln::passes
