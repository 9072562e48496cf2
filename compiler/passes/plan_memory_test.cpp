// Memory planning tests: lifetimes, in-place writes, output routing, and the arena size
// against the lower bound on ResNet-like and branchy graphs written in IR text.
#include <algorithm>
#include <map>
#include <sstream>

#include "kiln/passes/passes.h"
#include "kiln/passes/pipeline.h"
#include "kiln/support/diagnostics.h"
#include "test_util.h"

namespace kiln::passes {
namespace {

using testing::expectNoConflicts;
using testing::expectWithinBound;
using testing::parseVerified;

ir::DispatchGraph plan(const std::string& text, bool inPlace = false) {
  PipelineOptions options;
  options.inPlace = inPlace;
  options.fusion = false;  // one op per dispatch: these tests are about the planner
  return compileGraph(parseVerified(text), options);
}

// A ResNet-style stem + `blocks` basic blocks (conv-bn-relu-conv-bn-add-relu), channels
// doubling with stride 2 every other block, then global pool + Gemm.
std::string resnetLike(int blocks) {
  std::ostringstream t;
  t << "graph @resnet_like {\n  input %x : f32[1,3,64,64]\n";
  t << "  const %stem_w : f32[16,3,3,3] = splat(0.1)\n";
  t << "  %h0 = Conv(%x, %stem_w) {pads = [1, 1, 1, 1], strides = [2, 2]} : f32[1,16,32,32]\n";
  t << "  %a0 = Relu(%h0) : f32[1,16,32,32]\n";
  int c = 16, hw = 32;
  std::string cur = "a0";
  for (int b = 1; b <= blocks; ++b) {
    bool down = b % 2 == 0;
    int oc = down ? c * 2 : c, ohw = down ? hw / 2 : hw, s = down ? 2 : 1;
    std::string n = std::to_string(b);
    auto type = [&](int ch, int sp) {
      return "f32[1," + std::to_string(ch) + "," + std::to_string(sp) + "," + std::to_string(sp) +
             "]";
    };
    t << "  const %w" << n << "a : f32[" << oc << "," << c << ",3,3] = splat(0.01)\n";
    t << "  const %w" << n << "b : f32[" << oc << "," << oc << ",3,3] = splat(0.01)\n";
    t << "  const %g" << n << " : f32[" << oc << "] = splat(1.0)\n";
    t << "  const %z" << n << " : f32[" << oc << "] = splat(0.0)\n";
    t << "  %c" << n << "a = Conv(%" << cur << ", %w" << n << "a) {pads = [1, 1, 1, 1], strides = ["
      << s << ", " << s << "]} : " << type(oc, ohw) << "\n";
    t << "  %n" << n << "a = BatchNormalization(%c" << n << "a, %g" << n << ", %z" << n << ", %z"
      << n << ", %g" << n << ") : " << type(oc, ohw) << "\n";
    t << "  %r" << n << "a = Relu(%n" << n << "a) : " << type(oc, ohw) << "\n";
    t << "  %c" << n << "b = Conv(%r" << n << "a, %w" << n
      << "b) {pads = [1, 1, 1, 1]} : " << type(oc, ohw) << "\n";
    std::string skip = cur;
    if (down) {
      t << "  const %wd" << n << " : f32[" << oc << "," << c << ",1,1] = splat(0.02)\n";
      t << "  %d" << n << " = Conv(%" << cur << ", %wd" << n
        << ") {strides = [2, 2]} : " << type(oc, ohw) << "\n";
      skip = "d" + n;
    }
    t << "  %s" << n << " = Add(%c" << n << "b, %" << skip << ") : " << type(oc, ohw) << "\n";
    t << "  %o" << n << " = Relu(%s" << n << ") : " << type(oc, ohw) << "\n";
    cur = "o" + n;
    c = oc;
    hw = ohw;
  }
  t << "  %p = GlobalAveragePool(%" << cur << ") : f32[1," << c << ",1,1]\n";
  t << "  const %shape : i64[2] = [1, -1]\n";
  t << "  %f = Reshape(%p, %shape) : f32[1," << c << "]\n";
  t << "  const %fc : f32[10," << c << "] = splat(0.5)\n";
  t << "  %logits = Gemm(%f, %fc) {transB = 1} : f32[1,10]\n";
  t << "  output \"logits\" = %logits\n}\n";
  return t.str();
}

TEST(PlanMemory, ResNetLikeChainsStayNearTheLowerBound) {
  for (bool inPlace : {false, true})
    for (int blocks : {2, 4, 8}) {
      ir::DispatchGraph dg = plan(resnetLike(blocks), inPlace);
      std::string label =
          "resnet-like, " + std::to_string(blocks) + " blocks" + (inPlace ? ", in place" : "");
      expectWithinBound(dg, label.c_str());
      expectNoConflicts(dg);
    }
}

// The arena tensors' byte ranges (storages only, 64-byte aligned sizes) and their sizes.
struct ArenaTensor {
  uint64_t begin, end, bytes;
};
std::vector<ArenaTensor> arenaTensors(const ir::DispatchGraph& dg) {
  std::vector<ArenaTensor> out;
  for (const auto& [value, ref] : dg.placement) {
    if (ref.space != ir::Space::Arena || dg.viewRoot.count(value)) continue;
    const uint64_t size = (value->type().byteSize() + 63) / 64 * 64;
    out.push_back({ref.offset, ref.offset + size, value->type().byteSize()});
  }
  std::sort(out.begin(), out.end(),
            [](const ArenaTensor& a, const ArenaTensor& b) { return a.begin < b.begin; });
  return out;
}

TEST(PlanMemory, ShareClassesKeepTensorsApart) {
  PipelineOptions pipeline;
  pipeline.inPlace = false;
  ir::DispatchGraph dg = compileGraph(parseVerified(resnetLike(4)), pipeline);
  const uint64_t shared = dg.arenaSize;

  // Planned again with a class of its own for every tensor: no two share bytes, the arena is
  // their sum.
  std::map<const ir::Value*, uint64_t> ids;
  MemoryPlanOptions apart;
  apart.inPlace = false;
  apart.shareClass = [&](const ir::Value* v) { return ids.emplace(v, ids.size() + 1).first->second; };
  planMemory(dg, apart);
  expectNoConflicts(dg);
  std::vector<ArenaTensor> tensors = arenaTensors(dg);
  ASSERT_GT(tensors.size(), 8u);
  uint64_t sum = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    sum += tensors[i].end - tensors[i].begin;
    if (i > 0) EXPECT_LE(tensors[i - 1].end, tensors[i].begin) << "tensors " << i - 1 << ", " << i;
  }
  EXPECT_EQ(dg.arenaSize, sum);
  EXPECT_LT(shared * 2, sum);

  // Classes by byte size: tensors that share bytes have one size; the arena lies between.
  MemoryPlanOptions bySize;
  bySize.inPlace = false;
  bySize.shareClass = [](const ir::Value* v) { return v->type().byteSize(); };
  planMemory(dg, bySize);
  expectNoConflicts(dg);
  tensors = arenaTensors(dg);
  for (size_t i = 0; i < tensors.size(); ++i)
    for (size_t k = i + 1; k < tensors.size() && tensors[k].begin < tensors[i].end; ++k)
      EXPECT_EQ(tensors[i].bytes, tensors[k].bytes) << "tensors " << i << " and " << k;
  EXPECT_GE(dg.arenaSize, shared);
  EXPECT_LT(dg.arenaSize, sum);
  // Planned once more the same way: the same arena (a replan starts from scratch).
  const uint64_t once = dg.arenaSize;
  planMemory(dg, bySize);
  EXPECT_EQ(dg.arenaSize, once);
}

TEST(PlanMemory, ReluWritesInPlaceOverTheDyingConvOutput) {
  ir::DispatchGraph dg = plan(R"(graph @g {
  input %x : f32[1,4,8,8]
  const %w : f32[4,4,1,1] = splat(1.0)
  %c = Conv(%x, %w) : f32[1,4,8,8]
  %r = Relu(%c) : f32[1,4,8,8]
  %e = Exp(%r) : f32[1,4,8,8]
  output "y" = %e
})",
                              true);
  ASSERT_EQ(dg.dispatches.size(), 3u);
  const ir::Dispatch& relu = dg.dispatches[1];
  EXPECT_EQ(relu.root->kind(), ir::OpKind::Relu);
  ASSERT_EQ(relu.aliases.size(), 1u);
  EXPECT_EQ(relu.aliases[0], (std::pair<uint32_t, uint32_t>(0, 1)));
  EXPECT_EQ(relu.bindings[0].ref, relu.bindings[1].ref);
  // Exp writes straight into the caller's output buffer: no in place, no copy.
  const ir::Dispatch& exp = dg.dispatches[2];
  EXPECT_TRUE(exp.aliases.empty());
  EXPECT_EQ(exp.bindings[1].ref.space, ir::Space::Output);
  EXPECT_EQ(dg.arenaSize, 1024u);  // one 1 KiB tensor, reused in place
  EXPECT_EQ(dg.memory.naiveBytes, 2048u);
}

TEST(PlanMemory, NoInPlaceWhenTheOperandIsStillNeeded) {
  ir::DispatchGraph dg = plan(R"(graph @g {
  input %x : f32[64]
  %a = Exp(%x) : f32[64]
  %b = Relu(%a) : f32[64]
  %c = Sigmoid(%a) : f32[64]
  %d = Add(%b, %c) : f32[64]
  output "y" = %d
})",
                              true);
  // Relu and Sigmoid both read %a in stage 1: neither may overwrite it.
  for (const ir::Dispatch& d : dg.dispatches)
    if (d.stage == 1) EXPECT_TRUE(d.aliases.empty()) << d.name;
  expectNoConflicts(dg);
}

TEST(PlanMemory, OutputsAreWrittenDirectlyOrCopied) {
  ir::DispatchGraph dg = plan(R"(graph @g {
  input %x : f32[2,3]
  const %k : f32[2] = [1.0, 2.0]
  const %zeros : f32[4] = splat(0.0)
  const %shape : i64[1] = [6]
  %r = Relu(%x) : f32[2,3]
  %v = Reshape(%r, %shape) : f32[6]
  output "relu" = %r
  output "flat" = %v
  output "same_input" = %x
  output "k" = %k
  output "zeros" = %zeros
})");
  ASSERT_EQ(dg.dispatches.size(), 1u);
  EXPECT_EQ(dg.dispatches[0].bindings[1].ref, (ir::BufferRef{ir::Space::Output, 0, 0, 24}));
  EXPECT_EQ(dg.arenaSize, 0u);
  std::string listing = ir::printDispatchGraph(dg);
  EXPECT_EQ(listing,
            "dispatch graph: 1 dispatches, 2 stages, arena 0 bytes, constants 64 bytes\n"
            "stage 0:\n"
            "  dispatch 0 Relu \"Relu_0\" in %x=input#0[0+24] out %r=output#0[0+24]\n"
            "  copy input#0[0+24] -> output#2[0+24]\n"
            "  copy const#0[0+8] -> output#3[0+8]\n"
            "  fill output#4[0+16] = 0\n"
            "stage 1:\n"
            "  copy output#0[0+24] -> output#1[0+24]\n");
}

TEST(PlanMemory, ViewsShareStorage) {
  ir::DispatchGraph dg = plan(R"(graph @g {
  input %x : f32[2,8]
  const %s : i64[2] = [4, 4]
  %a = Exp(%x) : f32[2,8]
  %v = Reshape(%a, %s) : f32[4,4]
  %t = Transpose(%v) : f32[4,4]
  output "t" = %t
})");
  ASSERT_EQ(dg.dispatches.size(), 2u);
  EXPECT_EQ(dg.dispatches[0].bindings[1].ref.space, ir::Space::Arena);
  EXPECT_EQ(dg.dispatches[1].bindings[0].ref, dg.dispatches[0].bindings[1].ref);
  EXPECT_EQ(dg.dispatches[1].bindings[0].value->shape(), (ir::Shape{4, 4}));
}

}  // namespace
}  // namespace kiln::passes

namespace kiln::passes {
namespace {

// Inception-style: four parallel branches of different sizes joined by Concat, repeated.
std::string inceptionLike(int modules) {
  std::ostringstream t;
  t << "graph @inception_like {\n  input %x : f32[1,32,28,28]\n";
  std::string cur = "x";
  for (int m = 0; m < modules; ++m) {
    std::string n = std::to_string(m);
    t << "  const %w1_" << n << " : f32[16,32,1,1] = splat(0.1)\n";
    t << "  const %w3_" << n << " : f32[8,32,3,3] = splat(0.1)\n";
    t << "  const %w5_" << n << " : f32[4,32,5,5] = splat(0.1)\n";
    t << "  const %wp_" << n << " : f32[4,32,1,1] = splat(0.1)\n";
    t << "  %b1_" << n << " = Conv(%" << cur << ", %w1_" << n << ") : f32[1,16,28,28]\n";
    t << "  %b3_" << n << " = Conv(%" << cur << ", %w3_" << n
      << ") {pads = [1, 1, 1, 1]} : f32[1,8,28,28]\n";
    t << "  %b5_" << n << " = Conv(%" << cur << ", %w5_" << n
      << ") {pads = [2, 2, 2, 2]} : f32[1,4,28,28]\n";
    t << "  %mp_" << n << " = MaxPool(%" << cur
      << ") {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : f32[1,32,28,28]\n";
    t << "  %bp_" << n << " = Conv(%mp_" << n << ", %wp_" << n << ") : f32[1,4,28,28]\n";
    t << "  %r1_" << n << " = Relu(%b1_" << n << ") : f32[1,16,28,28]\n";
    t << "  %r3_" << n << " = Relu(%b3_" << n << ") : f32[1,8,28,28]\n";
    t << "  %cat_" << n << " = Concat(%r1_" << n << ", %r3_" << n << ", %b5_" << n << ", %bp_" << n
      << ") {axis = 1} : f32[1,32,28,28]\n";
    cur = "cat_" + n;
  }
  t << "  output \"y\" = %" << cur << "\n}\n";
  return t.str();
}

TEST(PlanMemory, BranchyGraphsStayNearTheLowerBound) {
  for (int modules : {1, 3, 6}) {
    ir::DispatchGraph dg = plan(inceptionLike(modules), modules == 3);
    std::string label = "inception-like, " + std::to_string(modules) + " modules" +
                        (modules == 3 ? ", in place" : "");
    expectWithinBound(dg, label.c_str());
    expectNoConflicts(dg);
    // Branches of one module run in one stage.
    EXPECT_EQ(dg.dispatches[0].stage, 0u);
    EXPECT_EQ(dg.dispatches[3].stage, 0u);  // three convs and the pool read %x
  }
}

TEST(PlanMemory, ResNetLikeUsesInPlaceWrites) {
  ir::DispatchGraph dg = plan(resnetLike(2), true);
  size_t inPlace = 0;
  for (const ir::Dispatch& d : dg.dispatches) inPlace += d.aliases.size();
  EXPECT_GE(inPlace, 4u);  // the Relus and the residual Adds
}

}  // namespace
}  // namespace kiln::passes

namespace kiln::passes {
namespace {

ir::DispatchGraph planText(const std::string& text, bool inPlace = true) {
  PipelineOptions options;
  options.inPlace = inPlace;
  options.fusion = false;  // one op per dispatch: these tests are about the planner
  return compileGraph(testing::parseVerified(text), options);
}

TEST(PlanMemoryEdges, InPlaceOverAnOperandUsedTwice) {
  ir::DispatchGraph dg = planText(R"(graph @g {
  input %x : f32[16]
  %e = Exp(%x) : f32[16]
  %s = Add(%e, %e) : f32[16]
  %n = Neg(%s) : f32[16]
  output "n" = %n
})");
  const ir::Dispatch& add = dg.dispatches[1];
  EXPECT_EQ(add.aliases, (std::vector<std::pair<uint32_t, uint32_t>>{{0, 2}, {1, 2}}));
  EXPECT_EQ(dg.arenaSize, 64u);
}

TEST(PlanMemoryEdges, UnusedResultsStillGetBytesAndViewsOfOutputsAreRead) {
  ir::DispatchGraph dg = planText(R"(graph @g {
  input %x : f32[4,4]
  const %s : i64[1] = [16]
  %a, %b = Split(%x) {axis = 1} : f32[4,2], f32[4,2]
  %r = Relu(%a) : f32[4,2]
  %v = Reshape(%x, %s) : f32[16]
  %flat = Exp(%v) : f32[16]
  output "r" = %r
  output "flat" = %flat
})");
  // Split writes %b although nobody reads it: it must not overlap %a while both are written.
  // (Along axis 1 its results are not contiguous parts of %x, so it is a real dispatch.)
  const ir::Dispatch& split = dg.dispatches[0];
  ASSERT_EQ(split.bindings.size(), 3u);
  const ir::BufferRef& a = split.bindings[1].ref;
  const ir::BufferRef& b = split.bindings[2].ref;
  EXPECT_TRUE(a.offset + a.length <= b.offset || b.offset + b.length <= a.offset);
  // Exp reads a view of the input straight from the caller's buffer.
  const ir::Dispatch& exp = dg.dispatches[1];
  EXPECT_EQ(exp.root->kind(), ir::OpKind::Exp);
  EXPECT_EQ(exp.bindings[0].ref, (ir::BufferRef{ir::Space::Input, 0, 0, 64}));
}

TEST(PlanMemoryEdges, InputCopiedToOutputAndZeroSizedTensors) {
  ir::DispatchGraph dg = planText(R"(graph @g {
  input %x : f32[3]
  input %empty : f32[0,4]
  %e = Exp(%empty) : f32[0,4]
  %n = Neg(%e) : f32[0,4]
  output "x" = %x
  output "n" = %n
})");
  EXPECT_EQ(dg.arenaSize, 0u);
  EXPECT_EQ(ir::printDispatchGraph(dg),
            "dispatch graph: 2 dispatches, 2 stages, arena 0 bytes, constants 0 bytes\n"
            "stage 0:\n"
            "  dispatch 0 Exp \"Exp_0\" in %empty=input#1[0+0] out %e=arena[0+0]\n"
            "  copy input#0[0+12] -> output#0[0+12]\n"
            "stage 1:\n"
            "  dispatch 1 Neg \"Neg_1\" in %e=arena[0+0] out %n=output#1[0+0]\n");
}

}  // namespace
}  // namespace kiln::passes

namespace kiln::passes {
namespace {

std::string dispatchVerifierError(const ir::DispatchGraph& dg) {
  try {
    ir::verifyDispatchGraph(dg);
  } catch (const CompileError& e) {
    return e.what();
  }
  return "(no error)";
}

constexpr const char* kChain = R"(graph @g {
  input %x : f32[16]
  %a = Exp(%x) : f32[16]
  %b = Sigmoid(%x) : f32[16]
  %c = Add(%a, %b) : f32[16]
  output "c" = %c
})";

TEST(DispatchVerifier, AcceptsPlannedGraphs) {
  EXPECT_EQ(dispatchVerifierError(planText(kChain)), "(no error)");
  EXPECT_EQ(dispatchVerifierError(planText(resnetLike(4))), "(no error)");
  EXPECT_EQ(dispatchVerifierError(planText(inceptionLike(2))), "(no error)");
}

TEST(DispatchVerifier, CatchesRacesAndBadRefs) {
  {
    ir::DispatchGraph dg = planText(kChain);
    dg.dispatches[1].bindings[1].ref = dg.dispatches[0].bindings[1].ref;  // %b over %a
    EXPECT_EQ(dispatchVerifierError(dg),
              "dispatch graph verifier: dispatch 0 (Exp_0) binding 1 and dispatch 1 (Sigmoid_1) "
              "binding 1 touch "
              "the same bytes in stage 0");
  }
  {
    ir::DispatchGraph dg = planText(kChain);
    dg.dispatches[0].bindings[1].ref.offset = 4096;
    EXPECT_EQ(dispatchVerifierError(dg),
              "dispatch graph verifier: dispatch 0 (Exp_0) binding 1 %a arena[4096+64] ends past "
              "its space (128 bytes)");
  }
  {
    ir::DispatchGraph dg = planText(kChain);
    dg.dispatches[2].bindings[0].ref.length = 8;
    EXPECT_EQ(
        dispatchVerifierError(dg),
        "dispatch graph verifier: dispatch 2 (Add_2) binding 0 %a has length 8, its tensor has 64");
  }
  {
    ir::DispatchGraph dg = planText(kChain);
    dg.dispatches[2].stage = 0;
    EXPECT_EQ(dispatchVerifierError(dg),
              "dispatch graph verifier: dispatch 2 is stepped in the wrong stage");
  }
}

}  // namespace
}  // namespace kiln::passes
