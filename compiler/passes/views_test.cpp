// Free views: Concat written in place (each producer writes straight into its slice of the
// result), contiguous Split/Slice results as views with an offset, and what keeps each of
// them a copying dispatch. Runs formDispatches -> scheduleDispatches -> planMemory and the
// dispatch-graph verifier on IR text.
#include "kiln/passes/passes.h"
#include "kiln/passes/pipeline.h"
#include "kiln/support/diagnostics.h"
#include "test_util.h"

namespace kiln::passes {
namespace {

using testing::expectNoConflicts;
using testing::parseVerified;

ir::DispatchGraph plan(const std::string& text) {
  ir::DispatchGraph dg = formDispatches(parseVerified(text));
  scheduleDispatches(dg);
  planMemory(dg);
  expectNoConflicts(dg);
  return dg;
}

int countKind(const ir::DispatchGraph& dg, ir::OpKind kind) {
  int n = 0;
  for (const ir::Dispatch& d : dg.dispatches) n += d.root->kind() == kind;
  return n;
}

// The reference of the binding of `value` in the first dispatch that binds it.
ir::BufferRef refOf(const ir::DispatchGraph& dg, const std::string& value) {
  for (const ir::Dispatch& d : dg.dispatches)
    for (const ir::Binding& b : d.bindings)
      if (b.value->name() == value) return b.ref;
  ADD_FAILURE() << "no binding of %" << value;
  return {};
}

// A SqueezeNet fire module at batch 1: squeeze, two expand convs, channel concat.
constexpr const char* kFire = R"(graph @fire {
  input %x : f32[1,8,6,6]
  const %ws : f32[4,8,1,1] = splat(0.1)
  const %w1 : f32[16,4,1,1] = splat(0.2)
  const %w3 : f32[16,4,3,3] = splat(0.3)
  const %wn : f32[2,32,1,1] = splat(0.4)
  %s = Conv(%x, %ws) : f32[1,4,6,6]
  %e1 = Conv(%s, %w1) : f32[1,16,6,6]
  %e3 = Conv(%s, %w3) {pads = [1, 1, 1, 1]} : f32[1,16,6,6]
  %cat = Concat(%e1, %e3) {axis = 1} : f32[1,32,6,6]
  %n = Conv(%cat, %wn) : f32[1,2,6,6]
  output "y" = %n
})";

TEST(ConcatInPlace, FireModuleProducersWriteTheirSlices) {
  ir::DispatchGraph dg = plan(kFire);
  EXPECT_EQ(countKind(dg, ir::OpKind::Concat), 0);
  ASSERT_EQ(dg.dispatches.size(), 4u);
  ir::BufferRef cat = refOf(dg, "cat"), e1 = refOf(dg, "e1"), e3 = refOf(dg, "e3");
  EXPECT_EQ(cat.space, ir::Space::Arena);
  EXPECT_EQ(cat.length, 32u * 36 * 4);
  EXPECT_EQ(e1.offset, cat.offset);
  EXPECT_EQ(e1.length, 16u * 36 * 4);
  EXPECT_EQ(e3.offset, cat.offset + 16 * 36 * 4);
  EXPECT_EQ(e3.length, 16u * 36 * 4);
  // Both expands run in one stage; the consumer of the concat waits for both.
  EXPECT_EQ(dg.dispatches[1].stage, 1u);
  EXPECT_EQ(dg.dispatches[2].stage, 1u);
  EXPECT_EQ(dg.dispatches[3].stage, 2u);
  EXPECT_EQ(dg.numStages, 3u);
}

TEST(ConcatInPlace, TheVerifierCatchesSlicesThatRaceOrAreReadTooEarly) {
  auto verifierError = [](const ir::DispatchGraph& dg) -> std::string {
    try {
      ir::verifyDispatchGraph(dg);
    } catch (const CompileError& e) {
      return e.what();
    }
    return "";
  };
  // The second expand writes over the first one's slice (both in stage 1).
  ir::DispatchGraph overlap = plan(kFire);
  overlap.dispatches[2].bindings.back().ref.offset -= 64;
  EXPECT_NE(verifierError(overlap).find("touch the same bytes in stage 1"), std::string::npos)
      << verifierError(overlap);
  // The consumer of the concat moved into the stage of the producers of its slices.
  ir::DispatchGraph early = plan(kFire);
  early.dispatches[3].stage = 1;
  for (ir::Step& step : early.steps)
    if (step.kind == ir::StepKind::Dispatch && step.dispatch == 3) step.stage = 1;
  EXPECT_NE(verifierError(early).find("in stage 1"), std::string::npos) << verifierError(early);
}

TEST(ConcatInPlace, ReaderOfOneSliceWaitsOnlyForItsProducer) {
  ir::DispatchGraph dg = plan(R"(graph @g {
  input %x : f32[1,4]
  %a = Exp(%x) : f32[1,4]
  %b1 = Neg(%x) : f32[1,4]
  %b2 = Neg(%b1) : f32[1,4]
  %b3 = Neg(%b2) : f32[1,4]
  %ra = Relu(%a) : f32[1,4]
  %cat = Concat(%a, %b3) {axis = 1} : f32[1,8]
  %y = Sigmoid(%cat) : f32[1,8]
  output "ra" = %ra
  output "y" = %y
})");
  EXPECT_EQ(countKind(dg, ir::OpKind::Concat), 0);
  uint32_t reluStage = 0, sigmoidStage = 0;
  for (const ir::Dispatch& d : dg.dispatches) {
    if (d.root->kind() == ir::OpKind::Relu) reluStage = d.stage;
    if (d.root->kind() == ir::OpKind::Sigmoid) sigmoidStage = d.stage;
  }
  EXPECT_EQ(reluStage, 1u);     // after Exp only
  EXPECT_EQ(sigmoidStage, 3u);  // after the third Neg
  EXPECT_EQ(refOf(dg, "b3").offset, refOf(dg, "a").offset + 16);
}

TEST(ConcatInPlace, ConcatResultThatIsAnOutputPlacesProducersInTheOutputBuffer) {
  ir::DispatchGraph dg = plan(R"(graph @g {
  input %x : f32[1,2,3]
  %a = Exp(%x) : f32[1,2,3]
  %b = Neg(%x) : f32[1,2,3]
  %cat = Concat(%a, %b) {axis = 1} : f32[1,4,3]
  output "cat" = %cat
})");
  ASSERT_EQ(dg.dispatches.size(), 2u);
  EXPECT_TRUE(dg.steps.size() == 2u);  // no copy
  EXPECT_EQ(refOf(dg, "a"), (ir::BufferRef{ir::Space::Output, 0, 0, 24}));
  EXPECT_EQ(refOf(dg, "b"), (ir::BufferRef{ir::Space::Output, 0, 24, 24}));
  EXPECT_EQ(dg.arenaSize, 0u);
}

TEST(ConcatInPlace, NestedConcatsChain) {
  ir::DispatchGraph dg = plan(R"(graph @g {
  input %x : f32[1,4]
  %a = Exp(%x) : f32[1,4]
  %b = Neg(%x) : f32[1,4]
  %c = Relu(%x) : f32[1,4]
  %ab = Concat(%a, %b) {axis = 1} : f32[1,8]
  %abc = Concat(%c, %ab) {axis = 1} : f32[1,12]
  %y = Sigmoid(%abc) : f32[1,12]
  output "y" = %y
})");
  EXPECT_EQ(countKind(dg, ir::OpKind::Concat), 0);
  uint64_t base = refOf(dg, "abc").offset;
  EXPECT_EQ(refOf(dg, "c").offset, base);
  EXPECT_EQ(refOf(dg, "a").offset, base + 16);
  EXPECT_EQ(refOf(dg, "b").offset, base + 32);
}

TEST(ConcatInPlace, ViewsOfAMovedProducerMoveToo) {
  ir::DispatchGraph dg = plan(R"(graph @g {
  input %x : f32[1,2,2]
  const %shape : i64[2] = [1, 4]
  %a = Exp(%x) : f32[1,2,2]
  %ra = Reshape(%a, %shape) : f32[1,4]
  %b = Neg(%ra) : f32[1,4]
  %cat = Concat(%b, %ra) {axis = 1} : f32[1,8]
  %y = Sigmoid(%cat) : f32[1,8]
  output "y" = %y
})");
  EXPECT_EQ(countKind(dg, ir::OpKind::Concat), 0);
  uint64_t base = refOf(dg, "cat").offset;
  EXPECT_EQ(refOf(dg, "a").offset, base + 16);  // Exp writes the second slice
  EXPECT_EQ(refOf(dg, "ra").offset, base + 16);  // Neg reads it there
  EXPECT_EQ(refOf(dg, "b").offset, base);
}

TEST(ConcatInPlace, InputsConstantsOutputsAndNonContiguousConcatsStayDispatches) {
  // A graph input, a constant, a producer that is also a graph output, an operand given
  // twice, and a concat whose slices are not contiguous (dim 0 is 2).
  const char* cases[] = {
      R"(graph @g {
  input %x : f32[1,4]
  %a = Exp(%x) : f32[1,4]
  %cat = Concat(%a, %x) {axis = 1} : f32[1,8]
  %y = Neg(%cat) : f32[1,8]
  output "y" = %y
})",
      R"(graph @g {
  input %x : f32[1,4]
  const %k : f32[1,4] = splat(2.0)
  %a = Exp(%x) : f32[1,4]
  %cat = Concat(%a, %k) {axis = 1} : f32[1,8]
  %y = Neg(%cat) : f32[1,8]
  output "y" = %y
})",
      R"(graph @g {
  input %x : f32[1,4]
  %a = Exp(%x) : f32[1,4]
  %b = Neg(%x) : f32[1,4]
  %cat = Concat(%a, %b) {axis = 1} : f32[1,8]
  %y = Neg(%cat) : f32[1,8]
  output "y" = %y
  output "a" = %a
})",
      R"(graph @g {
  input %x : f32[1,4]
  %a = Exp(%x) : f32[1,4]
  %cat = Concat(%a, %a) {axis = 1} : f32[1,8]
  %y = Neg(%cat) : f32[1,8]
  output "y" = %y
})",
      R"(graph @g {
  input %x : f32[2,4]
  %a = Exp(%x) : f32[2,4]
  %b = Neg(%x) : f32[2,4]
  %cat = Concat(%a, %b) {axis = 1} : f32[2,8]
  %y = Neg(%cat) : f32[2,8]
  output "y" = %y
})",
  };
  for (const char* text : cases) {
    SCOPED_TRACE(text);
    ir::DispatchGraph dg = plan(text);
    EXPECT_EQ(countKind(dg, ir::OpKind::Concat), 1);
  }
}

TEST(ConcatInPlace, AProducerUsedByTwoConcatsGoesIntoTheFirstOnly) {
  ir::DispatchGraph dg = plan(R"(graph @g {
  input %x : f32[1,4]
  %a = Exp(%x) : f32[1,4]
  %b = Neg(%x) : f32[1,4]
  %c = Relu(%x) : f32[1,4]
  %ab = Concat(%a, %b) {axis = 1} : f32[1,8]
  %ac = Concat(%a, %c) {axis = 1} : f32[1,8]
  %s = Add(%ab, %ac) : f32[1,8]
  output "s" = %s
})");
  ASSERT_EQ(countKind(dg, ir::OpKind::Concat), 1);
  for (const ir::Dispatch& d : dg.dispatches)
    if (d.root->kind() == ir::OpKind::Concat) {
      EXPECT_EQ(d.root->result()->name(), "ac");
      EXPECT_EQ(d.bindings[0].ref.offset, refOf(dg, "ab").offset);  // reads a inside ab
    }
}

TEST(SplitView, ContiguousSplitResultsAreViews) {
  ir::DispatchGraph dg = plan(R"(graph @g {
  input %x : f32[1,6,2]
  %e = Exp(%x) : f32[1,6,2]
  %p, %q = Split(%e) {axis = 1} : f32[1,3,2], f32[1,3,2]
  %r = Neg(%p) : f32[1,3,2]
  %s = Relu(%q) : f32[1,3,2]
  output "r" = %r
  output "s" = %s
})");
  EXPECT_EQ(countKind(dg, ir::OpKind::Split), 0);
  ASSERT_EQ(dg.dispatches.size(), 3u);
  uint64_t base = refOf(dg, "e").offset;
  EXPECT_EQ(refOf(dg, "p"), (ir::BufferRef{ir::Space::Arena, 0, base, 24}));
  EXPECT_EQ(refOf(dg, "q"), (ir::BufferRef{ir::Space::Arena, 0, base + 24, 24}));
  // Split of a graph input: views into the input buffer.
  ir::DispatchGraph in = plan(R"(graph @g {
  input %x : f32[6]
  %p, %q = Split(%x) {axis = 0} : f32[3], f32[3]
  %r = Add(%p, %q) : f32[3]
  output "r" = %r
})");
  ASSERT_EQ(in.dispatches.size(), 1u);
  EXPECT_EQ(in.dispatches[0].bindings[1].ref, (ir::BufferRef{ir::Space::Input, 0, 12, 12}));
}

TEST(SplitView, NonContiguousSplitStaysADispatch) {
  ir::DispatchGraph dg = plan(R"(graph @g {
  input %x : f32[2,6]
  %p, %q = Split(%x) {axis = 1} : f32[2,3], f32[2,3]
  %r = Add(%p, %q) : f32[2,3]
  output "r" = %r
})");
  EXPECT_EQ(countKind(dg, ir::OpKind::Split), 1);
}

TEST(SliceView, ContiguousSlicesAreViewsOthersStayDispatches) {
  // Rows 1..2 of a [4,3] tensor: one byte range starting at element 3.
  ir::DispatchGraph dg = plan(R"(graph @g {
  input %x : f32[4,3]
  const %st : i64[1] = [1]
  const %en : i64[1] = [3]
  const %ax : i64[1] = [0]
  %e = Exp(%x) : f32[4,3]
  %s = Slice(%e, %st, %en, %ax) : f32[2,3]
  %y = Neg(%s) : f32[2,3]
  output "y" = %y
})");
  EXPECT_EQ(countKind(dg, ir::OpKind::Slice), 0);
  EXPECT_EQ(refOf(dg, "s").offset, refOf(dg, "e").offset + 12);
  EXPECT_EQ(refOf(dg, "s").length, 24u);
  // Columns 1..2: not contiguous. Step 2: not contiguous.
  for (const char* text : {R"(graph @g {
  input %x : f32[4,3]
  const %st : i64[1] = [1]
  const %en : i64[1] = [3]
  const %ax : i64[1] = [1]
  %e = Exp(%x) : f32[4,3]
  %s = Slice(%e, %st, %en, %ax) : f32[4,2]
  %y = Neg(%s) : f32[4,2]
  output "y" = %y
})",
                           R"(graph @g {
  input %x : f32[8]
  const %st : i64[1] = [0]
  const %en : i64[1] = [8]
  const %ax : i64[1] = [0]
  const %sp : i64[1] = [2]
  %e = Exp(%x) : f32[8]
  %s = Slice(%e, %st, %en, %ax, %sp) : f32[4]
  %y = Neg(%s) : f32[4]
  output "y" = %y
})"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(countKind(plan(text), ir::OpKind::Slice), 1);
  }
}

TEST(SliceView, AnOutputThatIsAPartIsCopied) {
  ir::DispatchGraph dg = plan(R"(graph @g {
  input %x : f32[4]
  const %st : i64[1] = [2]
  const %en : i64[1] = [4]
  %e = Exp(%x) : f32[4]
  %s = Slice(%e, %st, %en) : f32[2]
  output "e" = %e
  output "s" = %s
})");
  ASSERT_EQ(dg.dispatches.size(), 1u);
  ASSERT_EQ(dg.steps.size(), 2u);
  EXPECT_EQ(dg.steps[1].kind, ir::StepKind::Copy);
  EXPECT_EQ(dg.steps[1].src, (ir::BufferRef{ir::Space::Output, 0, 8, 8}));
  EXPECT_EQ(dg.steps[1].stage, 1u);
}

TEST(SliceView, InPlaceWritesNeverGoOverAPart) {
  // Relu(%p) must not write over %e: %p is only half of it.
  ir::DispatchGraph dg = plan(R"(graph @g {
  input %x : f32[1,4,4]
  %e = Exp(%x) : f32[1,4,4]
  %p, %q = Split(%e) {axis = 1} : f32[1,2,4], f32[1,2,4]
  %r = Relu(%p) : f32[1,2,4]
  %s = Neg(%q) : f32[1,2,4]
  %t = Add(%r, %s) : f32[1,2,4]
  output "t" = %t
})");
  for (const ir::Dispatch& d : dg.dispatches)
    if (d.root->kind() == ir::OpKind::Relu || d.root->kind() == ir::OpKind::Neg)
      EXPECT_TRUE(d.aliases.empty()) << d.name;
}

TEST(ConcatInPlace, FusedReaderOfAConcatRunsAfterItsSlices) {
  // Fusion puts Add into Exp's dispatch, which comes first in the list, while the Add also
  // reads %cat, whose slices Neg and Relu write later: scheduling orders by the real
  // producers, not by the list.
  PipelineOptions options;
  ir::DispatchGraph dg = compileGraph(parseVerified(R"(graph @g {
  input %x8 : f32[1,8]
  input %x4 : f32[1,4]
  %y = Exp(%x8) : f32[1,8]
  %a = Neg(%x4) : f32[1,4]
  %b = Relu(%x4) : f32[1,4]
  %cat = Concat(%a, %b) {axis = 1} : f32[1,8]
  %s = Add(%y, %cat) : f32[1,8]
  output "s" = %s
})"), options);
  expectNoConflicts(dg);
  EXPECT_EQ(countKind(dg, ir::OpKind::Concat), 0);
  ASSERT_EQ(dg.dispatches.size(), 3u);
  EXPECT_EQ(dg.dispatches[0].stage, 0u);
  EXPECT_EQ(dg.dispatches[1].stage, 0u);
  const ir::Dispatch& last = dg.dispatches[2];
  EXPECT_EQ(last.root->kind(), ir::OpKind::Exp);
  EXPECT_EQ(last.fused.size(), 1u);  // + Add
  EXPECT_EQ(last.stage, 1u);
}

}  // namespace
}  // namespace kiln::passes
