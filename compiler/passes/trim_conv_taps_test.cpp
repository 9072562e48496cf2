// Trimming convolution taps that read only padding (trim_conv_taps.cpp), on hand-worked
// cases. The numbers against PyTorch are the e2e tests' (Inception v3 at 80x80, whose
// Mixed_7 convolutions run on 1x1 maps, and the single-op cases).
#include "kiln/ir/constant_data.h"
#include "kiln/passes/passes.h"
#include "test_util.h"

namespace kiln::passes {
namespace {

using testing::runPass;

// Runs the pass on `text` (it must change the graph); returns the printed graph and the
// values of constant `name`.
std::string trimmed(const std::string& text, const std::string& name, std::vector<double>* values) {
  auto graph = testing::parseVerified(text);
  EXPECT_TRUE(trimConvTaps(*graph));
  ir::verifyGraph(*graph);
  for (const ir::Value* c : graph->constants())
    if (c->name() == name) *values = ir::constantDoubles(c);
  return ir::printGraph(*graph);
}

TEST(TrimConvTaps, OneByOneMapKeepsTheCentreTap) {
  // 3x3 pad 1 on a 1x1 map: only tap (1, 1) reads the pixel; 2 output channels x 1 input
  // channel, taps numbered 0-8 and 10-18.
  std::vector<double> w;
  std::string out = trimmed(R"(graph @g {
  input %x : f32[1,1,1,1]
  const %w : f32[2,1,3,3] = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0]
  %y = Conv(%x, %w) {pads = [1, 1, 1, 1]} : f32[1,2,1,1]
  output "y" = %y
})",
                            "w.trimmed", &w);
  EXPECT_EQ(w, (std::vector<double>{4, 14}));
  EXPECT_NE(out.find("%y = Conv(%x, %w.trimmed) {dilations = [1, 1], kernel_shape = [1, 1], pads = [0, 0, 0, 0]"),
            std::string::npos)
      << out;
}

TEST(TrimConvTaps, OneAxisOnly) {
  // 1x3 pad (0, 1) on a 2x1 map: the columns keep the middle tap, the rows (1 tap) stay; with
  // stride 1 the output keeps its 2x1 shape.
  std::vector<double> w;
  std::string out = trimmed(R"(graph @g {
  input %x : f32[1,1,2,1]
  const %w : f32[1,1,1,3] = [1.0, 2.0, 3.0]
  const %b : f32[1] = [0.5]
  %y = Conv(%x, %w, %b) {pads = [0, 1, 0, 1]} : f32[1,1,2,1]
  output "y" = %y
})",
                            "w.trimmed", &w);
  EXPECT_EQ(w, (std::vector<double>{2}));
  EXPECT_NE(out.find("Conv(%x, %w.trimmed, %b) {dilations = [1, 1], kernel_shape = [1, 1], pads = [0, 0, 0, 0]"),
            std::string::npos)
      << out;
}

TEST(TrimConvTaps, TwoByTwoMapKeepsEveryTap) {
  // 3x3 pad 1 on 2x2: output (0, 0) reads taps 1-2 of each axis, (1, 1) taps 0-1: all used.
  // A 3x3 stride 2 pad 1 on 3x3 (outputs 0 and 1 read rows -1..1 and 1..3): all used too.
  runPass(R"(graph @g {
  input %x : f32[1,1,2,2]
  input %z : f32[1,1,3,3]
  const %w : f32[1,1,3,3] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
  %y = Conv(%x, %w) {pads = [1, 1, 1, 1]} : f32[1,1,2,2]
  %s = Conv(%z, %w) {pads = [1, 1, 1, 1], strides = [2, 2]} : f32[1,1,2,2]
  output "y" = %y
  output "s" = %s
})",
          trimConvTaps, /*expectChange=*/false);
}

}  // namespace
}  // namespace kiln::passes
