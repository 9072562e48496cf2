// placeWorkQueues (work_queue.h): the queues' region at the end of the arena, one binding per
// dispatch that has queues, and the FILL that empties them in a stage of its own before the
// rest; a graph without queues stays as it was.
#include "kiln/codegen/work_queue.h"

#include <gtest/gtest.h>

namespace kiln::codegen {
namespace {

// Three dispatches in stages 0, 0 and 1, an arena of 1000 bytes.
ir::DispatchGraph threeDispatches() {
  ir::DispatchGraph g;
  g.arenaSize = 1000;
  g.numStages = 2;
  for (uint32_t i = 0; i < 3; ++i) {
    ir::Dispatch d;
    d.id = i;
    d.bindings.resize(2);
    g.dispatches.push_back(d);
    ir::Step step;
    step.dispatch = i;
    step.stage = i == 2 ? 1 : 0;
    g.steps.push_back(step);
  }
  return g;
}

TEST(WorkQueues, PlacedAfterTheArenaAndEmptiedFirst) {
  ir::DispatchGraph g = threeDispatches();
  std::vector<KernelDesc> kernels(3);
  kernels[1].workQueues = 2;
  kernels[2].workQueues = 1;
  ASSERT_EQ(placeWorkQueues(g, kernels), uint64_t(3 * kWorkQueueBytes));
  // 1000 rounded up to a whole line: 1024; dispatch 1's two lines, then dispatch 2's.
  EXPECT_EQ(g.arenaSize, 1024u + 3 * kWorkQueueBytes);
  EXPECT_EQ(g.dispatches[0].bindings.size(), 2u);
  ASSERT_EQ(g.dispatches[1].bindings.size(), 3u);
  ASSERT_EQ(g.dispatches[2].bindings.size(), 3u);
  const ir::Binding& q1 = g.dispatches[1].bindings.back();
  const ir::Binding& q2 = g.dispatches[2].bindings.back();
  EXPECT_EQ(q1.value, nullptr);
  EXPECT_EQ(q1.access, ir::kRead | ir::kWrite);
  EXPECT_EQ(q1.ref, (ir::BufferRef{ir::Space::Arena, 0, 1024, 2 * kWorkQueueBytes}));
  EXPECT_EQ(q2.ref, (ir::BufferRef{ir::Space::Arena, 0, 1024 + 2 * kWorkQueueBytes,
                                   uint64_t(kWorkQueueBytes)}));
  // The FILL first, alone in stage 0; the dispatches' stages one later.
  ASSERT_EQ(g.steps.size(), 4u);
  EXPECT_EQ(g.steps[0].kind, ir::StepKind::Fill);
  EXPECT_EQ(g.steps[0].stage, 0u);
  EXPECT_EQ(g.steps[0].fillByte, 0);
  EXPECT_EQ(g.steps[0].dst, (ir::BufferRef{ir::Space::Arena, 0, 1024, 3 * kWorkQueueBytes}));
  EXPECT_EQ(g.steps[1].stage, 1u);
  EXPECT_EQ(g.steps[2].stage, 1u);
  EXPECT_EQ(g.steps[3].stage, 2u);
  EXPECT_EQ(g.numStages, 3u);
}

TEST(WorkQueues, NoneLeavesTheGraphAlone) {
  ir::DispatchGraph g = threeDispatches();
  ASSERT_EQ(placeWorkQueues(g, std::vector<KernelDesc>(3)), 0u);
  EXPECT_EQ(g.arenaSize, 1000u);
  EXPECT_EQ(g.steps.size(), 3u);
  EXPECT_EQ(g.steps[0].stage, 0u);
  for (const ir::Dispatch& d : g.dispatches) EXPECT_EQ(d.bindings.size(), 2u);
}

}  // namespace
}  // namespace kiln::codegen
