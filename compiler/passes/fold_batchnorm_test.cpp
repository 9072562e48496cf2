// BatchNorm folding tests with hand-computed weights.
// Parameters used throughout: scale [4, 1], bias [1, 0], mean [0, 1], var [3, 0], epsilon 1
//   s = scale / sqrt(var + eps) = [4/2, 1/1] = [2, 1]
//   t = bias - mean * s        = [1 - 0, 0 - 1] = [1, -1]
#include "kiln/ir/constant_data.h"
#include "kiln/passes/passes.h"
#include "test_util.h"

namespace kiln::passes {
namespace {

using testing::runPass;

constexpr const char* kParams = R"(
  const %scale : f32[2] = [4.0, 1.0]
  const %bias : f32[2] = [1.0, 0.0]
  const %mean : f32[2] = [0.0, 1.0]
  const %var : f32[2] = [3.0, 0.0])";

TEST(FoldBatchNorm, IntoConvWithoutBias) {
  std::string text =
      std::string("graph @g {\n  input %x : f32[1,1,2,2]\n  const %w : f32[2,1,1,1] = [0.5, 3.0]") +
      kParams + R"(
  %c = Conv(%x, %w) : f32[1,2,2,2] loc("conv", "Conv")
  %y = BatchNormalization(%c, %scale, %bias, %mean, %var) {epsilon = 1.0} : f32[1,2,2,2]
  output "y" = %y
})";
  EXPECT_EQ(runPass(text, foldBatchNorm), R"(graph @g {
  input %x : f32[1,1,2,2]
  const %w.bn : f32[2,1,1,1] = [1.0, 3.0]
  const %c.bias : f32[2] = [1.0, -1.0]
  %c = Conv(%x, %w.bn, %c.bias) : f32[1,2,2,2] loc("conv", "Conv")
  output "y" = %c
}
)");
}

TEST(FoldBatchNorm, IntoConvWithBias) {
  std::string text =
      std::string(
          "graph @g {\n  input %x : f32[1,1,2,2]\n  const %w : f32[2,1,1,1] = [0.5, 3.0]\n"
          "  const %b : f32[2] = [10.0, 20.0]") +
      kParams + R"(
  %c = Conv(%x, %w, %b) : f32[1,2,2,2]
  %y = BatchNormalization(%c, %scale, %bias, %mean, %var) {epsilon = 1.0} : f32[1,2,2,2]
  output "y" = %y
})";
  std::string out = runPass(text, foldBatchNorm);
  // b' = b * s + t = [10 * 2 + 1, 20 * 1 - 1] = [21, 19]
  EXPECT_NE(out.find("const %c.bias : f32[2] = [21.0, 19.0]"), std::string::npos) << out;
  EXPECT_NE(out.find("%c = Conv(%x, %w.bn, %c.bias) : f32[1,2,2,2]"), std::string::npos) << out;
}

TEST(FoldBatchNorm, IntoGemmWithTransposedWeight) {
  std::string text = std::string(
                         "graph @g {\n  input %a : f32[1,3]\n"
                         "  const %w : f32[2,3] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]\n"
                         "  const %c : f32[2] = [0.5, 0.25]") +
                     kParams + R"(
  %m = Gemm(%a, %w, %c) {beta = 2.0, transB = 1} : f32[1,2]
  %y = BatchNormalization(%m, %scale, %bias, %mean, %var) {epsilon = 1.0} : f32[1,2]
  output "y" = %y
})";
  std::string out = runPass(text, foldBatchNorm);
  // Rows of the transposed weight scale by s: [2, 4, 6, 4, 5, 6];
  // C' = beta * C * s + t = [2 * 0.5 * 2 + 1, 2 * 0.25 * 1 - 1] = [3, -0.5].
  EXPECT_NE(out.find("const %w.bn : f32[2,3] = [2.0, 4.0, 6.0, 4.0, 5.0, 6.0]"), std::string::npos)
      << out;
  EXPECT_NE(out.find("const %m.bias : f32[2] = [3.0, -0.5]"), std::string::npos) << out;
  EXPECT_NE(out.find("{beta = 1.0, transB = 1}"), std::string::npos) << out;
}

TEST(FoldBatchNorm, ScaleAndShiftWhenTheConvHasAnotherUser) {
  std::string text =
      std::string("graph @g {\n  input %x : f32[1,1,2,2]\n  const %w : f32[2,1,1,1] = [0.5, 3.0]") +
      kParams + R"(
  %c = Conv(%x, %w) : f32[1,2,2,2]
  %y = BatchNormalization(%c, %scale, %bias, %mean, %var) {epsilon = 1.0} : f32[1,2,2,2] loc("bn", "BatchNormalization")
  output "y" = %y
  output "c" = %c
})";
  EXPECT_EQ(runPass(text, foldBatchNorm), R"(graph @g {
  input %x : f32[1,1,2,2]
  const %w : f32[2,1,1,1] = [0.5, 3.0]
  const %y.scale : f32[2,1,1] = [2.0, 1.0]
  const %y.shift : f32[2,1,1] = [1.0, -1.0]
  %c = Conv(%x, %w) : f32[1,2,2,2]
  %y.scaled = Mul(%c, %y.scale) : f32[1,2,2,2] loc("bn", "BatchNormalization")
  %y = Add(%y.scaled, %y.shift) : f32[1,2,2,2] loc("bn", "BatchNormalization")
  output "y" = %y
  output "c" = %c
}
)");
}

TEST(FoldBatchNorm, ScaleAndShiftAfterAGraphInput) {
  std::string text = std::string("graph @g {\n  input %x : f32[3,2]") + kParams + R"(
  %y = BatchNormalization(%x, %scale, %bias, %mean, %var) {epsilon = 1.0} : f32[3,2]
  output "y" = %y
})";
  std::string out = runPass(text, foldBatchNorm);
  EXPECT_NE(out.find("const %y.scale : f32[2] = [2.0, 1.0]"), std::string::npos) << out;
}

}  // namespace
}  // namespace kiln::passes
