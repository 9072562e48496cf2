// Constant folding tests: torch's shape sub-graphs and hand-computed numerics.
#include "kiln/ir/constant_data.h"
#include "kiln/passes/passes.h"
#include "kiln/support/diagnostics.h"
#include "test_util.h"

namespace kiln::passes {
namespace {

using testing::parseVerified;
using testing::runPass;

TEST(FoldConstants, TorchShapeSubgraphFeedingReshape) {
  // x.view(x.size(0), -1) as torch exports it.
  std::string out = runPass(R"(graph @g {
  input %x : f32[2,3,4,5]
  const %zero : i64[] = [0]
  const %axes : i64[1] = [0]
  const %minus1 : i64[1] = [-1]
  %shape = Shape(%x) : i64[4]
  %n = Gather(%shape, %zero) : i64[]
  %n1 = Unsqueeze(%n, %axes) : i64[1]
  %target = Concat(%n1, %minus1) {axis = 0} : i64[2]
  %y = Reshape(%x, %target) : f32[2,60]
  output "y" = %y
})",
                            foldConstants);
  EXPECT_EQ(out, R"(graph @g {
  input %x : f32[2,3,4,5]
  const %target : i64[2] = [2, -1]
  %y = Reshape(%x, %target) : f32[2,60]
  output "y" = %y
}
)");
}

// f64 folds in double: results float32 could not hold stay exact, and a double shape value
// (torch's old-opset 2.0 Cast to int64) becomes the integer.
TEST(FoldConstants, F64InDoublePrecision) {
  auto graph = parseVerified(R"(graph @g {
  const %a : f64[2] = [0.1, 1e-300]
  const %b : f64[2] = [0.2, 3.0]
  const %two : f64[] = [2.0]
  %s = Add(%a, %b) : f64[2]
  %d = Div(%a, %b) : f64[2]
  %r = ReduceSum(%s) {keepdims = 0} : f64[]
  %i = Cast(%two) {to = 6} : i64[]
  %f = Cast(%s) {to = 0} : f32[2]
  output "s" = %s
  output "d" = %d
  output "r" = %r
  output "i" = %i
  output "f" = %f
})");
  EXPECT_TRUE(foldConstants(*graph));
  ir::verifyGraph(*graph);
  EXPECT_EQ(graph->numOps(), 0u);
  auto doubles = [&](const char* name) { return ir::constantDoubles(graph->findValue(name)); };
  EXPECT_EQ(doubles("s"), (std::vector<double>{0.1 + 0.2, 1e-300 + 3.0}));
  EXPECT_EQ(doubles("d"), (std::vector<double>{0.1 / 0.2, 1e-300 / 3.0}));
  EXPECT_EQ(doubles("r"), (std::vector<double>{(0.1 + 0.2) + 3.0}));
  EXPECT_EQ(ir::constantInts(graph->findValue("i")), (std::vector<int64_t>{2}));
  EXPECT_EQ(graph->findValue("f")->dtype(), ir::DType::F32);
  EXPECT_EQ(doubles("f"), (std::vector<double>{double(float(0.1 + 0.2)), 3.0}));
}

TEST(FoldConstants, ConstantOfShapeRangeAndIntegerArithmetic) {
  auto graph = parseVerified(R"(graph @g {
  const %s : i64[2] = [2, 3]
  const %start : i64[] = [1]
  const %limit : i64[] = [11]
  const %delta : i64[] = [3]
  const %a : i64[4] = [-7, 7, -7, 9]
  const %b : i64[4] = [2, -2, 3, 3]
  %fill = ConstantOfShape(%s) {dtype = 5, value = 7} : i32[2,3]
  %r = Range(%start, %limit, %delta) : i64[4]
  %q = Div(%a, %b) : i64[4]
  %m = Mod(%a, %b) : i64[4]
  %p = Mul(%r, %q) : i64[4]
  output "fill" = %fill
  output "r" = %r
  output "q" = %q
  output "m" = %m
  output "p" = %p
})");
  EXPECT_TRUE(foldConstants(*graph));
  ir::verifyGraph(*graph);
  EXPECT_EQ(graph->numOps(), 0u);
  auto ints = [&](const char* name) { return ir::constantInts(graph->findValue(name)); };
  EXPECT_EQ(ints("fill"), std::vector<int64_t>(6, 7));
  EXPECT_EQ(ints("r"), (std::vector<int64_t>{1, 4, 7, 10}));
  EXPECT_EQ(ints("q"), (std::vector<int64_t>{-3, -3, -2, 3}));  // truncation toward zero
  EXPECT_EQ(ints("m"), (std::vector<int64_t>{1, -1, 2, 0}));    // sign of the divisor (fmod=0)
  EXPECT_EQ(ints("p"), (std::vector<int64_t>{-3, -12, -14, 30}));
}

TEST(FoldConstants, FloatMathBroadcastCastAndDataMovement) {
  auto graph = parseVerified(R"(graph @g {
  const %a : f32[2,3] = [1.0, 4.0, 9.0, 16.0, 25.0, 36.0]
  const %b : f32[3] = [1.0, 0.5, -1.0]
  const %c : f32[2] = [-1.75, 2.5]
  const %starts : i64[1] = [2]
  const %ends : i64[1] = [-100]
  const %axes : i64[1] = [1]
  const %steps : i64[1] = [-1]
  %sq = Sqrt(%a) : f32[2,3]
  %m = Mul(%sq, %b) : f32[2,3]
  %t = Transpose(%m) {perm = [1, 0]} : f32[3,2]
  %ci = Cast(%c) {to = 5} : i32[2]
  %sl = Slice(%a, %starts, %ends, %axes, %steps) : f32[2,3]
  %h = Cast(%b) {to = 1} : f16[3]
  %mx = ReduceMax(%a) {axes = [1], keepdims = 0} : f32[2]
  output "t" = %t
  output "ci" = %ci
  output "sl" = %sl
  output "h" = %h
  output "mx" = %mx
})");
  EXPECT_TRUE(foldConstants(*graph));
  ir::verifyGraph(*graph);
  auto doubles = [&](const char* name) { return ir::constantDoubles(graph->findValue(name)); };
  // sqrt(a) * b = [[1, 1, -3], [4, 2.5, -6]], transposed.
  EXPECT_EQ(doubles("t"), (std::vector<double>{1, 4, 1, 2.5, -3, -6}));
  EXPECT_EQ(ir::constantInts(graph->findValue("ci")), (std::vector<int64_t>{-1, 2}));
  EXPECT_EQ(doubles("sl"), (std::vector<double>{9, 4, 1, 36, 25, 16}));  // reversed rows
  EXPECT_EQ(doubles("h"), (std::vector<double>{1.0, 0.5, -1.0}));
  EXPECT_EQ(doubles("mx"), (std::vector<double>{9, 36}));
}

TEST(FoldConstants, GatherWithNegativeIndicesAndSplit) {
  auto graph = parseVerified(R"(graph @g {
  const %d : i64[2,3] = [1, 2, 3, 4, 5, 6]
  const %i : i64[2] = [-1, 0]
  const %sizes : i64[2] = [1, 2]
  %g = Gather(%d, %i) {axis = 1} : i64[2,2]
  %s0, %s1 = Split(%d, %sizes) {axis = 1} : i64[2,1], i64[2,2]
  output "g" = %g
  output "s0" = %s0
  output "s1" = %s1
})");
  EXPECT_TRUE(foldConstants(*graph));
  EXPECT_EQ(ir::constantInts(graph->findValue("g")), (std::vector<int64_t>{3, 1, 6, 4}));
  EXPECT_EQ(ir::constantInts(graph->findValue("s0")), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(ir::constantInts(graph->findValue("s1")), (std::vector<int64_t>{2, 3, 5, 6}));
}

TEST(FoldConstants, LeavesRuntimeOpsAlone) {
  const char* text = R"(graph @g {
  input %x : f32[4]
  const %c : f32[4] = splat(2.0)
  %y = Mul(%x, %c) : f32[4]
  output "y" = %y
}
)";
  EXPECT_EQ(runPass(text, foldConstants, false), text);
}

TEST(FoldConstants, GatherIndexOutOfRangeIsAUserError) {
  auto graph = parseVerified(R"(graph @g {
  const %d : i64[3] = [1, 2, 3]
  const %i : i64[] = [5]
  %g = Gather(%d, %i) : i64[]
  output "g" = %g
})");
  try {
    foldConstants(*graph);
    FAIL() << "expected an error";
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(), "op %g (Gather): Gather index 5 is out of range for axis size 3");
  }
}

}  // namespace
}  // namespace kiln::passes
