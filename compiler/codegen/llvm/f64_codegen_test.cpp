// f64 kernels: small IR graphs with double tensors, one dispatch per op, compiled for the host,
// run with dlopen and compared with values computed by hand in double precision (results
// float32 could not hold, e.g. 0.1 + 0.2 = 0.30000000000000004). Also the refusals: ops
// without an f64 kernel, and 32-bit targets.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

#include "kiln/codegen/dispatch_lowering.h"
#include "kiln/ir/constant_data.h"
#include "kiln/support/diagnostics.h"
#include "test_support.h"

namespace kiln::codegen {
namespace {

// Runs the graph (one dispatch per op) on f64 inputs; returns every value's contents as doubles.
class GraphRun {
 public:
  GraphRun(const std::string& text, const std::map<std::string, std::vector<double>>& inputs)
      : g_(testing::oneDispatchPerOp(text)) {
    for (const ir::Value* in : g_.graph->inputs()) {
      const std::vector<double>& v = inputs.at(in->name());
      memory_[in] = ir::makeConstantBytes(in->type(), v);
    }
    testing::runDispatches(g_, memory_, 3);
  }
  std::vector<double> operator[](const std::string& name) const {
    const ir::Value* v = g_.graph->findValue(name);
    std::vector<double> out;
    for (int64_t i = 0; i < v->type().numElements(); ++i)
      out.push_back(ir::readElementDouble(v->dtype(), memory_.at(v).data(), i));
    return out;
  }

 private:
  ir::DispatchGraph g_;
  testing::ValueMemory memory_;
};

TEST(F64Codegen, ArithmeticWithBroadcastKeepsDoublePrecision) {
  GraphRun run(R"(graph @g {
  input %x : f64[2,3]
  input %b : f64[3]
  %add = Add(%x, %b) : f64[2,3]
  %sub = Sub(%x, %b) : f64[2,3]
  %mul = Mul(%x, %b) : f64[2,3]
  %div = Div(%x, %b) : f64[2,3]
  %max = Max(%x, %b) : f64[2,3]
  %min = Min(%x, %b) : f64[2,3]
  %neg = Neg(%x) : f64[2,3]
  %abs = Abs(%x) : f64[2,3]
  output "add" = %add
  output "sub" = %sub
  output "mul" = %mul
  output "div" = %div
  output "max" = %max
  output "min" = %min
  output "neg" = %neg
  output "abs" = %abs
})",
               {{"x", {0.1, -1e-300, 3.0, 1e300, -2.5, 1.0 / 3.0}}, {"b", {0.2, 7.0, -3.0}}});
  // 0.1 + 0.2 = 0.30000000000000004 in double (0.3 as float); 1e-300 and 1e300 overflow f32.
  EXPECT_EQ(run["add"], (std::vector<double>{0.30000000000000004, 7.0 - 1e-300, 0.0, 1e300 + 0.2,
                                             4.5, 1.0 / 3.0 - 3.0}));
  EXPECT_EQ(run["add"][0], 0.1 + 0.2);
  EXPECT_EQ(run["sub"], (std::vector<double>{0.1 - 0.2, -1e-300 - 7.0, 6.0, 1e300 - 0.2, -9.5,
                                             1.0 / 3.0 + 3.0}));
  EXPECT_EQ(run["mul"], (std::vector<double>{0.1 * 0.2, -7e-300, -9.0, 2e299, -17.5, -1.0}));
  EXPECT_EQ(run["div"], (std::vector<double>{0.5, -1e-300 / 7.0, -1.0, 1e300 / 0.2, -2.5 / 7.0,
                                             (1.0 / 3.0) / -3.0}));
  EXPECT_EQ(run["max"], (std::vector<double>{0.2, 7.0, 3.0, 1e300, 7.0, 1.0 / 3.0}));
  EXPECT_EQ(run["min"], (std::vector<double>{0.1, -1e-300, -3.0, 0.2, -2.5, -3.0}));
  EXPECT_EQ(run["neg"], (std::vector<double>{-0.1, 1e-300, -3.0, -1e300, 2.5, -1.0 / 3.0}));
  EXPECT_EQ(run["abs"], (std::vector<double>{0.1, 1e-300, 3.0, 1e300, 2.5, 1.0 / 3.0}));
}

TEST(F64Codegen, CastsComparisonsAndWhere) {
  GraphRun run(R"(graph @g {
  input %x : f64[4]
  input %f : f32[4]
  const %c : f64[] = [0.5]
  const %two : f64[] = [2.0]
  %wide = Cast(%f) {to = 8} : f64[4]
  %narrow = Cast(%x) {to = 0} : f32[4]
  %int = Cast(%x) {to = 6} : i64[4]
  %less = Less(%x, %c) : bool[4]
  %eq = Equal(%x, %wide) : bool[4]
  %sel = Where(%less, %x, %c) : f64[4]
  %sq = Pow(%x, %two) : f64[4]
  output "wide" = %wide
  output "narrow" = %narrow
  output "int" = %int
  output "less" = %less
  output "eq" = %eq
  output "sel" = %sel
  output "sq" = %sq
})",
               {{"x", {0.1, -2.75, 1e10 + 0.5, 0.5}}, {"f", {0.1, -2.75, 3.0, 0.5}}});
  EXPECT_EQ(run["wide"], (std::vector<double>{double(0.1f), -2.75, 3.0, 0.5}));
  EXPECT_EQ(run["narrow"],
            (std::vector<double>{double(0.1f), -2.75, double(float(1e10 + 0.5)), 0.5}));
  EXPECT_EQ(run["int"], (std::vector<double>{0, -2, 1e10, 0}));
  EXPECT_EQ(run["less"], (std::vector<double>{1, 1, 0, 0}));
  EXPECT_EQ(run["eq"], (std::vector<double>{0, 1, 0, 1}));  // 0.1 != double(0.1f)
  EXPECT_EQ(run["sel"], (std::vector<double>{0.1, -2.75, 0.5, 0.5}));
  EXPECT_EQ(run["sq"],
            (std::vector<double>{0.1 * 0.1, 2.75 * 2.75, (1e10 + 0.5) * (1e10 + 0.5), 0.25}));
}

TEST(F64Codegen, DataMovementAndReductions) {
  GraphRun run(R"(graph @g {
  input %x : f64[2,3]
  const %axes : i64[1] = [1]
  %t = Transpose(%x) {perm = [1, 0]} : f64[3,2]
  %cat = Concat(%x, %x) {axis = 0} : f64[4,3]
  %sum = ReduceSum(%x, %axes) {keepdims = 0} : f64[2]
  %mean = ReduceMean(%x) {axes = [1], keepdims = 0} : f64[2]
  %max = ReduceMax(%x) {axes = [0], keepdims = 0} : f64[3]
  %min = ReduceMin(%x) {axes = [1], keepdims = 0} : f64[2]
  %prod = ReduceProd(%x) {axes = [1], keepdims = 0} : f64[2]
  %l1 = ReduceL1(%x) {axes = [1], keepdims = 0} : f64[2]
  %ss = ReduceSumSquare(%x) {axes = [0], keepdims = 0} : f64[3]
  output "min" = %min
  output "prod" = %prod
  output "l1" = %l1
  output "ss" = %ss
  output "t" = %t
  output "cat" = %cat
  output "sum" = %sum
  output "mean" = %mean
  output "max" = %max
})",
               {{"x", {0.1, 0.2, 0.3, -1e-310, 1e308, -4.0}}});
  EXPECT_EQ(run["t"], (std::vector<double>{0.1, -1e-310, 0.2, 1e308, 0.3, -4.0}));
  EXPECT_EQ(run["cat"], (std::vector<double>{0.1, 0.2, 0.3, -1e-310, 1e308, -4.0, 0.1, 0.2, 0.3,
                                             -1e-310, 1e308, -4.0}));
  EXPECT_EQ(run["sum"], (std::vector<double>{(0.1 + 0.2) + 0.3, (-1e-310 + 1e308) - 4.0}));
  EXPECT_EQ(run["mean"], (std::vector<double>{((0.1 + 0.2) + 0.3) / 3.0, (1e308 - 4.0) / 3.0}));
  EXPECT_EQ(run["max"], (std::vector<double>{0.1, 1e308, 0.3}));
  EXPECT_EQ(run["min"], (std::vector<double>{0.1, -4.0}));
  EXPECT_EQ(run["prod"], (std::vector<double>{(0.1 * 0.2) * 0.3, (-1e-310 * 1e308) * -4.0}));
  EXPECT_EQ(run["l1"], (std::vector<double>{(0.1 + 0.2) + 0.3, (1e-310 + 1e308) + 4.0}));
  EXPECT_EQ(run["ss"], (std::vector<double>{0.1 * 0.1 + 1e-310 * 1e-310, 0.2 * 0.2 + 1e308 * 1e308,
                                            0.3 * 0.3 + 16.0}));
}

// The byte-moving kernels with 8-byte doubles: every value comes back bit for bit.
TEST(F64Codegen, SlicePadGatherSplitTile) {
  std::vector<double> x;
  for (int i = 0; i < 12; ++i) x.push_back(i + 0.1);  // x[i] = i.1, not a float32
  GraphRun run(R"(graph @g {
  input %x : f64[3,4]
  const %starts : i64[2] = [-1, 0]
  const %ends : i64[2] = [-100, 4]
  const %axes : i64[2] = [0, 1]
  const %steps : i64[2] = [-2, 3]
  %s = Slice(%x, %starts, %ends, %axes, %steps) : f64[2,2]
  const %pads : i64[2] = [1, 2]
  const %padaxes : i64[1] = [1]
  %p = Pad(%s, %pads, none, %padaxes) {mode = "reflect"} : f64[2,5]
  const %idx : i64[2] = [-1, 0]
  %g = Gather(%x, %idx) {axis = 1} : f64[3,2]
  const %gi : i64[1,2] = [2, 0]
  %ge = GatherElements(%x, %gi) {axis = 0} : f64[1,2]
  const %sizes : i64[2] = [1, 3]
  %a, %b = Split(%x, %sizes) {axis = 1} : f64[3,1], f64[3,3]
  const %reps : i64[2] = [1, 2]
  %t = Tile(%a, %reps) : f64[3,2]
  output "s" = %s
  output "p" = %p
  output "g" = %g
  output "ge" = %ge
  output "b" = %b
  output "t" = %t
})",
               {{"x", x}});
  auto at = [&](std::initializer_list<int> indices) {
    std::vector<double> v;
    for (int i : indices) v.push_back(x[size_t(i)]);
    return v;
  };
  EXPECT_EQ(run["s"], at({8, 11, 0, 3}));
  EXPECT_EQ(run["p"], at({11, 8, 11, 8, 11, 3, 0, 3, 0, 3}));
  EXPECT_EQ(run["g"], at({3, 0, 7, 4, 11, 8}));
  EXPECT_EQ(run["ge"], at({8, 1}));
  EXPECT_EQ(run["b"], at({1, 2, 3, 5, 6, 7, 9, 10, 11}));
  EXPECT_EQ(run["t"], at({0, 0, 4, 4, 8, 8}));
}

// Sqrt is the hardware instruction; floor and ceil are exact over the whole double range.
TEST(F64Codegen, SqrtFloorCeil) {
  std::vector<double> x = {
      2.0, 0.5, -0.5, -2.5, 2.5, 1e300, -0.0, 4503599627370497.0, -4503599627370495.5, 0.1};
  GraphRun run(R"(graph @g {
  input %x : f64[10]
  %a = Abs(%x) : f64[10]
  %s = Sqrt(%a) : f64[10]
  %f = Floor(%x) : f64[10]
  %c = Ceil(%x) : f64[10]
  output "s" = %s
  output "f" = %f
  output "c" = %c
})",
               {{"x", x}});
  std::vector<double> s = run["s"], f = run["f"], c = run["c"];
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(s[i], std::sqrt(std::fabs(x[i]))) << x[i];
    EXPECT_EQ(f[i], std::floor(x[i])) << x[i];
    EXPECT_EQ(c[i], std::ceil(x[i])) << x[i];
    EXPECT_EQ(std::signbit(f[i]), std::signbit(std::floor(x[i]))) << x[i];
    EXPECT_EQ(std::signbit(c[i]), std::signbit(std::ceil(x[i]))) << x[i];
  }
}

std::string compileError(const std::string& text, const std::string& target = "host") {
  ir::DispatchGraph g = testing::oneDispatchPerOp(text);
  try {
    TargetRequest request;
    request.name = target;
    generateKernels(g, resolveTarget(request));
  } catch (const CompileError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(F64Codegen, OpsWithoutF64KernelsAreRefusedByName) {
  EXPECT_EQ(compileError(R"(graph @g {
  input %x : f64[4]
  %e = Exp(%x) : f64[4] loc("exp_node", "Exp")
  output "e" = %e
})"),
            "node 'exp_node' (Exp): f64 is not supported for op Exp (kiln has no double-precision "
            "kernel for it); export the model in float32");
  EXPECT_EQ(compileError(R"(graph @g {
  input %x : f64[1,1,4,4]
  const %w : f64[1,1,3,3] = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
  %y = Conv(%x, %w) : f64[1,1,2,2]
  output "y" = %y
})"),
            "op %y (Conv): f64 is not supported for op Conv (kiln has no double-precision "
            "kernel for it); export the model in float32");
}

// A Cast to f64 fused behind a MatMul would run in the f32 epilogue: refused, with the way out.
TEST(F64Codegen, F64EpilogueFusedIntoMatMulIsRefused) {
  ir::DispatchGraph g = testing::oneDispatchPerOp(R"(graph @g {
  input %a : f32[2,3]
  input %b : f32[3,4]
  %m = MatMul(%a, %b) : f32[2,4] loc("mm", "MatMul")
  %d = Cast(%m) {to = 8} : f64[2,4] loc("to_double", "Cast")
  output "d" = %d
})");
  // One dispatch: the MatMul with the Cast fused (as fuseElementwise would make it).
  ir::Dispatch& matmul = g.dispatches[0];
  matmul.fused.push_back(g.dispatches[1].root);
  matmul.bindings.back().value = g.dispatches[1].root->result();
  g.dispatches.pop_back();
  std::string message;
  try {
    lowerDispatches(g);
  } catch (const CompileError& e) {
    message = e.what();
  }
  EXPECT_EQ(message,
            "node 'to_double' (Cast): f64 is not supported in an epilogue fused into node 'mm' "
            "(MatMul); compile with --fusion=none");
}

TEST(F64Codegen, MicrocontrollerTargetsRefuseF64) {
  EXPECT_EQ(compileError(R"(graph @g {
  input %x : f64[4]
  %y = Add(%x, %x) : f64[4] loc("add", "Add")
  output "y" = %y
})",
                         "cortex-m33"),
            "kernel 'add' computes in f64, which kiln does not support on target 'cortex-m33' "
            "(no double-precision arithmetic on microcontrollers); export the model in float32");
}

}  // namespace
}  // namespace kiln::codegen
