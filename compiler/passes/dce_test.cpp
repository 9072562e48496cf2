// Dead-code elimination tests.
#include "kiln/passes/passes.h"
#include "test_util.h"

namespace kiln::passes {
namespace {

using testing::runPass;

TEST(DeadCode, RemovesDeadChainsAndUnusedConstants) {
  std::string out = runPass(R"(graph @g {
  input %x : f32[4]
  input %unused : f32[4]
  const %c : f32[4] = splat(1.0)
  const %dead : f32[4] = splat(2.0)
  %a = Add(%x, %c) : f32[4]
  %b = Mul(%x, %dead) : f32[4]
  %d = Exp(%b) : f32[4]
  output "a" = %a
})",
                            eliminateDeadCode);
  EXPECT_EQ(out, R"(graph @g {
  input %x : f32[4]
  input %unused : f32[4]
  const %c : f32[4] = splat(1.0)
  %a = Add(%x, %c) : f32[4]
  output "a" = %a
}
)");
}

TEST(DeadCode, KeepsMultiResultOpsWithOneLiveResult) {
  const char* text = R"(graph @g {
  input %x : f32[4]
  %a, %b = Split(%x) : f32[2], f32[2]
  output "b" = %b
}
)";
  EXPECT_EQ(runPass(text, eliminateDeadCode, false), text);
}

}  // namespace
}  // namespace kiln::passes
