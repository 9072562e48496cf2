// Canonicalization tests: no-op removal and explicit pads.
#include "kiln/passes/passes.h"
#include "test_util.h"

namespace kiln::passes {
namespace {

using testing::runPass;

TEST(Canonicalize, RemovesIdentityDropoutAndNoOps) {
  std::string out = runPass(R"(graph @g {
  input %x : f32[2,3]
  const %same : i64[2] = [2, 3]
  %a = Identity(%x) : f32[2,3]
  %b = Dropout(%a) : f32[2,3]
  %c = Reshape(%b, %same) : f32[2,3]
  %d = Transpose(%c) {perm = [0, 1]} : f32[2,3]
  %e = Cast(%d) {to = 0} : f32[2,3]
  %f = Concat(%e) {axis = 0} : f32[2,3]
  %y = Relu(%f) : f32[2,3]
  output "y" = %y
})",
                            canonicalize);
  EXPECT_EQ(out, R"(graph @g {
  input %x : f32[2,3]
  %y = Relu(%x) : f32[2,3]
  output "y" = %y
}
)");
}

TEST(Canonicalize, KeepsRealDataMovement) {
  const char* text = R"(graph @g {
  input %x : f32[2,3]
  const %s : i64[2] = [3, 2]
  %a = Reshape(%x, %s) : f32[3,2]
  %b = Transpose(%x) : f32[3,2]
  %c = Cast(%x) {to = 1} : f16[2,3]
  output "a" = %a
  output "b" = %b
  output "c" = %c
}
)";
  EXPECT_EQ(runPass(text, canonicalize, false), text);
}

TEST(Canonicalize, DropoutMaskBecomesAllTrue) {
  std::string out = runPass(R"(graph @g {
  input %x : f32[2]
  %y, %mask = Dropout(%x) : f32[2], bool[2]
  output "y" = %y
  output "mask" = %mask
})",
                            canonicalize);
  EXPECT_EQ(out, R"(graph @g {
  input %x : f32[2]
  const %mask.mask : bool[2] = splat(true)
  output "y" = %x
  output "mask" = %mask.mask
}
)");
}

TEST(Canonicalize, AutoPadBecomesExplicitPads) {
  std::string out = runPass(R"(graph @g {
  input %x : f32[1,1,5,6]
  const %w : f32[1,1,3,3] = splat(1.0)
  %c = Conv(%x, %w) {auto_pad = "SAME_UPPER", strides = [2, 2]} : f32[1,1,3,3]
  %p = MaxPool(%x) {auto_pad = "SAME_LOWER", kernel_shape = [2, 2]} : f32[1,1,5,6]
  %v = AveragePool(%x) {auto_pad = "VALID", kernel_shape = [3, 3]} : f32[1,1,3,4]
  output "c" = %c
  output "p" = %p
  output "v" = %v
})",
                            canonicalize);
  // SAME_UPPER, stride 2, kernel 3: H 5 -> out 3, total pad 2 (1 + 1); W 6 -> out 3, total
  // pad 1 (0 before, 1 after). SAME_LOWER kernel 2: total 1, the extra one before.
  EXPECT_NE(out.find("%c = Conv(%x, %w) {pads = [1, 0, 1, 1], strides = [2, 2]}"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("%p = MaxPool(%x) {kernel_shape = [2, 2], pads = [1, 1, 0, 0]}"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("%v = AveragePool(%x) {kernel_shape = [3, 3], pads = [0, 0, 0, 0]}"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace kiln::passes
