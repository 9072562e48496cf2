// Constant folding leaves the quantized integer ops alone, even with all-constant operands
// (they are evaluated by the generated kernels only), and folds what feeds them.
#include "kiln/passes/passes.h"
#include "test_util.h"

namespace kiln::passes {
namespace {

using testing::runPass;

TEST(FoldQuantized, QuantizedOpsWithConstantOperandsStay) {
  const std::string text = R"(graph @g {
  const %a : i8[2] quant(scale=0.5, zero_point=1) = [3, -4]
  const %b : i8[2] quant(scale=0.25, zero_point=0) = [5, 6]
  const %f : f32[2] = [1.5, -2.0]
  %s = QAdd(%a, %b) : i8[2] quant(scale=0.5, zero_point=0)
  %q = Quantize(%f) {to = 2} : i8[2] quant(scale=0.5, zero_point=0)
  %r = Requantize(%q) {to = 4} : i16[2] quant(scale=0.01, zero_point=0)
  %d = Dequantize(%s) : f32[2]
  output "d" = %d
  output "r" = %r
}
)";
  std::string out = runPass(text, foldConstants, /*expectChange=*/false);
  for (const char* op : {"QAdd(", "Quantize(", "Requantize(", "Dequantize("})
    EXPECT_NE(out.find(op), std::string::npos) << op << " was folded:\n" << out;
}

}  // namespace
}  // namespace kiln::passes
