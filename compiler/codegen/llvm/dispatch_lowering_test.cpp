// Dispatch lowering: small graphs in the IR text form become one dispatch per op (as the
// dispatch-formation pass makes them), are compiled for the host, run in order with dlopen,
// and compared with C++ references. Also the user-facing errors for unsupported ops/dtypes.
#include "kiln/codegen/dispatch_lowering.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

#include "kiln/ir/constant_data.h"
#include "kiln/support/diagnostics.h"
#include "test_support.h"

namespace kiln::codegen {
namespace {

// Compiles and runs the graph, one dispatch per op; returns the f32 contents of output `name`.
std::vector<float> run(const std::string& text,
                       const std::map<std::string, std::vector<float>>& inputs,
                       const std::string& output) {
  ir::DispatchGraph g = testing::oneDispatchPerOp(text);
  testing::ValueMemory memory;
  for (const ir::Value* in : g.graph->inputs()) {
    const std::vector<float>& v = inputs.at(in->name());
    memory[in].resize(v.size() * 4);
    std::memcpy(memory[in].data(), v.data(), v.size() * 4);
  }
  testing::runDispatches(g, memory, 3);
  const ir::Value* out = g.graph->findValue(output);
  std::vector<float> result(out->type().numElements());
  std::memcpy(result.data(), memory.at(out).data(), result.size() * 4);
  return result;
}

void expectClose(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol + tol * std::fabs(want[i])) << "element " << i;
  }
}

TEST(DispatchLowering, Conv1dThenMaxPoolWithCeilMode) {
  // x[1,1,7] * w[2,1,3] (pads 1, stride 2) -> [1,2,4]; MaxPool k=3 s=2 ceil -> [1,2,2]
  std::string text = R"(graph @g {
  input %x : f32[1,1,7]
  const %w : f32[2,1,3] = [1.0, 2.0, 3.0, -1.0, 0.0, 1.0]
  %c = Conv(%x, %w) {pads = [1, 1], strides = [2]} : f32[1,2,4]
  %p = MaxPool(%c) {ceil_mode = 1, kernel_shape = [3], strides = [2]} : f32[1,2,2]
  output "y" = %p
})";
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7};
  // Conv windows over input positions -1..1, 1..3, 3..5, 5..7 (position -1 and 7 are padding)
  std::vector<float> c0 = {0 * 1 + 1 * 2 + 2 * 3, 2 * 1 + 3 * 2 + 4 * 3, 4 * 1 + 5 * 2 + 6 * 3,
                           6 * 1 + 7 * 2 + 0 * 3};
  std::vector<float> c1 = {-0 + 2, -2 + 4, -4 + 6, -6 + 0};
  expectClose(run(text, {{"x", x}}, "c"), {c0[0], c0[1], c0[2], c0[3], c1[0], c1[1], c1[2], c1[3]});
  // Pool windows {0, 1, 2} and {2, 3} (the ceil-mode window is clipped at the end)
  expectClose(run(text, {{"x", x}}, "p"), {32, 32, 2, 2});
}

TEST(DispatchLowering, ActivationsComposeCorrectly) {
  std::string text = R"(graph @g {
  input %x : f32[6]
  const %lo : f32[] = [-0.5]
  %hs = HardSwish(%x) : f32[6]
  %ge = Gelu(%x) : f32[6]
  %cl = Clip(%x, %lo) : f32[6]
  %el = Elu(%x) {alpha = 0.5} : f32[6]
  %sp = Softplus(%x) : f32[6]
  output "hs" = %hs
  output "ge" = %ge
  output "cl" = %cl
  output "el" = %el
  output "sp" = %sp
})";
  std::vector<float> x = {-4, -1, -0.25f, 0, 1.5f, 30};
  std::vector<float> hs, ge, cl, el, sp;
  for (float v : x) {
    hs.push_back(v * std::min(1.0f, std::max(0.0f, v / 6 + 0.5f)));
    ge.push_back(static_cast<float>(0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))));
    cl.push_back(std::max(v, -0.5f));
    el.push_back(v < 0 ? 0.5f * (std::exp(v) - 1) : v);
    sp.push_back(static_cast<float>(std::log1p(std::exp(double(v)))));
  }
  expectClose(run(text, {{"x", x}}, "hs"), hs);
  expectClose(run(text, {{"x", x}}, "ge"), ge);
  expectClose(run(text, {{"x", x}}, "cl"), cl);
  expectClose(run(text, {{"x", x}}, "el"), el);
  expectClose(run(text, {{"x", x}}, "sp"), sp);
}

TEST(DispatchLowering, SlicePadGatherFromStaticOperands) {
  std::string text = R"(graph @g {
  input %x : f32[3,4]
  const %starts : i64[2] = [-1, 0]
  const %ends : i64[2] = [-100, 4]
  const %axes : i64[2] = [0, 1]
  const %steps : i64[2] = [-2, 3]
  %s = Slice(%x, %starts, %ends, %axes, %steps) : f32[2,2]
  const %pads : i64[2] = [1, 2]
  const %padaxes : i64[1] = [1]
  %p = Pad(%s, %pads, none, %padaxes) {mode = "reflect"} : f32[2,5]
  const %idx : i64[2] = [-1, 0]
  %g = Gather(%x, %idx) {axis = 1} : f32[3,2]
  output "s" = %s
  output "p" = %p
  output "g" = %g
})";
  std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  expectClose(run(text, {{"x", x}}, "s"), {8, 11, 0, 3});
  // Reflect [8, 11] by 1 before and 2 after, periodically as numpy does: 11 | 8 11 | 8 11
  expectClose(run(text, {{"x", x}}, "p"), {11, 8, 11, 8, 11, 3, 0, 3, 0, 3});
  expectClose(run(text, {{"x", x}}, "g"), {3, 0, 7, 4, 11, 8});
}

TEST(DispatchLowering, MatMulWithVectorAndGemm) {
  std::string text = R"(graph @g {
  input %a : f32[2,3]
  const %v : f32[3] = [1.0, 0.5, -1.0]
  %m = MatMul(%a, %v) : f32[2]
  const %b : f32[2,3] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
  const %c : f32[2] = [0.5, -0.5]
  %g = Gemm(%a, %b, %c) {alpha = 2.0, transB = 1} : f32[2,2]
  output "m" = %m
  output "g" = %g
})";
  std::vector<float> a = {1, 2, 3, 4, 5, 6};
  expectClose(run(text, {{"a", a}}, "m"), {1 + 1 - 3, 4 + 2.5f - 6});
  expectClose(run(text, {{"a", a}}, "g"),
              {2 * 14 + 0.5f, 2 * 32 - 0.5f, 2 * 32 + 0.5f, 2 * 77 - 0.5f});
}

TEST(DispatchLowering, GlobalAveragePoolAndSoftmax) {
  std::string text = R"(graph @g {
  input %x : f32[1,2,2,2]
  %p = GlobalAveragePool(%x) : f32[1,2,1,1]
  %s = Softmax(%x) {axis = 1} : f32[1,2,2,2]
  output "p" = %p
  output "s" = %s
})";
  std::vector<float> x = {1, 2, 3, 4, 0, 0, 0, 8};
  expectClose(run(text, {{"x", x}}, "p"), {2.5f, 2});
  std::vector<float> s(8);
  for (int i = 0; i < 4; ++i) {
    float a = x[i], b = x[4 + i];
    float m = std::max(a, b);
    s[i] = std::exp(a - m) / (std::exp(a - m) + std::exp(b - m));
    s[4 + i] = 1 - s[i];
  }
  expectClose(run(text, {{"x", x}}, "s"), s);
}

TEST(DispatchLowering, SplitAndTile) {
  std::string text = R"(graph @g {
  input %x : f32[2,5]
  const %sizes : i64[2] = [2, 3]
  %a, %b = Split(%x, %sizes) {axis = 1} : f32[2,2], f32[2,3]
  const %reps : i64[2] = [2, 2]
  %t = Tile(%a, %reps) : f32[4,4]
  output "b" = %b
  output "t" = %t
})";
  std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  expectClose(run(text, {{"x", x}}, "a"), {0, 1, 5, 6});
  expectClose(run(text, {{"x", x}}, "b"), {2, 3, 4, 7, 8, 9});
  expectClose(run(text, {{"x", x}}, "t"), {0, 1, 0, 1, 5, 6, 5, 6, 0, 1, 0, 1, 5, 6, 5, 6});
}

TEST(DispatchLowering, ThreeDimensionalConvAndPool) {
  // x[1,1,3,3,3] = 0..26; w = ones[1,1,2,2,2] with pads 0: sums of 2x2x2 cubes.
  std::string text = R"(graph @g {
  input %x : f32[1,1,3,3,3]
  const %w : f32[1,1,2,2,2] = splat(1.0)
  %c = Conv(%x, %w) : f32[1,1,2,2,2]
  %m = MaxPool(%x) {kernel_shape = [2, 2, 2], strides = [2, 2, 2], pads = [0, 0, 0, 1, 1, 1]} : f32[1,1,2,2,2]
  %a = AveragePool(%x) {kernel_shape = [3, 1, 1], pads = [1, 0, 0, 1, 0, 0]} : f32[1,1,3,3,3]
  output "c" = %c
  output "m" = %m
  output "a" = %a
})";
  std::vector<float> x(27);
  for (int i = 0; i < 27; ++i) x[i] = static_cast<float>(i);
  auto at = [&](int d, int h, int w) { return x[(d * 3 + h) * 3 + w]; };
  std::vector<float> c, m, a;
  for (int d = 0; d < 2; ++d)
    for (int h = 0; h < 2; ++h)
      for (int w = 0; w < 2; ++w) {
        float sum = 0, best = -1e30f;
        for (int i = 0; i < 2; ++i)
          for (int j = 0; j < 2; ++j)
            for (int k = 0; k < 2; ++k) {
              sum += at(d + i, h + j, w + k);
              int pd = 2 * d + i, ph = 2 * h + j, pw = 2 * w + k;
              if (pd < 3 && ph < 3 && pw < 3) best = std::max(best, at(pd, ph, pw));
            }
        c.push_back(sum);
        m.push_back(best);
      }
  for (int d = 0; d < 3; ++d)
    for (int h = 0; h < 3; ++h)
      for (int w = 0; w < 3; ++w) {
        float sum = 0;
        int count = 0;
        for (int i = d - 1; i <= d + 1; ++i) {
          if (i < 0 || i >= 3) continue;
          sum += at(i, h, w);
          ++count;
        }
        a.push_back(sum / count);
      }
  expectClose(run(text, {{"x", x}}, "c"), c);
  expectClose(run(text, {{"x", x}}, "m"), m);
  expectClose(run(text, {{"x", x}}, "a"), a);
}

TEST(DispatchLowering, PowFollowsCForNegativeBasesAndZero) {
  std::string text = R"(graph @g {
  input %x : f32[8]
  input %y : f32[8]
  %p = Pow(%x, %y) : f32[8]
  output "p" = %p
})";
  std::vector<float> x = {2, -2, -2, -2, 0, 0, 0, 1.5f}, y = {0.5f, 2, 3, 0.5f, 2, 0, -1, -2};
  std::vector<float> got = run(text, {{"x", x}, {"y", y}}, "p");
  for (size_t i = 0; i < x.size(); ++i) {
    float want = std::pow(x[i], y[i]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
    } else if (std::isinf(want)) {
      EXPECT_EQ(got[i], want) << i;
    } else {
      EXPECT_NEAR(got[i], want, 1e-5f * (1 + std::fabs(want))) << i;
    }
  }
}

void expectCompileError(const std::string& text, const std::string& message) {
  ir::DispatchGraph g = testing::oneDispatchPerOp(text);
  try {
    lowerDispatches(g);
    FAIL() << "expected: " << message;
  } catch (const CompileError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(DispatchLowering, UnsupportedOpsAndDtypesAreNamed) {
  expectCompileError(R"(graph @g {
  input %x : f32[2,3]
  %t = Mod(%x, %x) : f32[2,3] loc("mod1", "Mod")
  output "t" = %t
})",
                     "node 'mod1' (Mod): not supported by the code generator yet");
  expectCompileError(
      R"(graph @g {
  input %x : f16[4]
  %r = Relu(%x) : f16[4] loc("relu7", "Relu")
  output "r" = %r
})",
      "node 'relu7' (Relu): f16 tensors are not supported by the code generator yet");
}

}  // namespace
}  // namespace kiln::codegen
