// ConvTranspose as Conv + depth-to-space (conv_transpose_as_conv.cpp), on hand-derived
// weights. The numbers against ONNX's reference outputs are the e2e tests' (ONNX backend
// ConvTranspose cases, the segmentation net of the model families).
#include "kiln/ir/constant_data.h"
#include "kiln/passes/passes.h"
#include "test_util.h"

namespace kiln::passes {
namespace {

using testing::runPass;

// The values of constant `name` after the pass has run on `text`, and the printed graph.
std::vector<double> constantAfter(const std::string& text, const std::string& name,
                                  std::string* printed) {
  auto graph = testing::parseVerified(text);
  EXPECT_TRUE(convTransposeAsConv(*graph));
  ir::verifyGraph(*graph);
  *printed = ir::printGraph(*graph);
  for (const ir::Value* c : graph->constants())
    if (c->name() == name) return ir::constantDoubles(c);
  ADD_FAILURE() << "no constant " << name << " in\n" << *printed;
  return {};
}

TEST(ConvTransposeAsConv, KernelOfTheStrideIsAPointwiseConv) {
  // 2x2 stride 2, no pads: each output phase (rh, rw) is tap (rh, rw) alone, a 1x1 conv into
  // 4 channels per output channel (channel oc * 4 + rh * 2 + rw), then the phases
  // interleaved.
  const char* text = R"(graph @g {
  input %x : f32[1,1,3,3]
  const %w : f32[1,1,2,2] = [1.0, 2.0, 3.0, 4.0]
  const %b : f32[1] = [0.5]
  %y = ConvTranspose(%x, %w, %b) {strides = [2, 2]} : f32[1,1,6,6]
  output "y" = %y
})";
  std::string out;
  EXPECT_EQ(constantAfter(text, "y.phase_weights", &out), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(constantAfter(text, "y.phase_bias", &out),
            (std::vector<double>{0.5, 0.5, 0.5, 0.5}));
  EXPECT_NE(out.find("Conv(%x, %y.phase_weights, %y.phase_bias) {dilations = [1, 1], group = 1, "
                     "kernel_shape = [1, 1], pads = [0, 0, 0, 0], strides = [1, 1]} : "
                     "f32[1,4,3,3]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("Reshape(%y.phases, %y.phase_shape) : f32[1,1,2,2,3,3]"), std::string::npos)
      << out;
  EXPECT_NE(out.find("{perm = [0, 1, 4, 2, 5, 3]} : f32[1,1,3,2,3,2]"), std::string::npos) << out;
  EXPECT_NE(out.find("%y = Reshape("), std::string::npos) << out;
  EXPECT_EQ(out.find("ConvTranspose"), std::string::npos) << out;
}

TEST(ConvTransposeAsConv, FourByFourStrideTwoPadOne) {
  // Per axis, o = 2i - 1 + k: out[2q] = x[q] w1 + x[q-1] w3 and out[2q+1] = x[q+1] w0 +
  // x[q] w2, so over the window x[q-1], x[q], x[q+1] (3 taps, pad 1) phase 0 reads
  // [w3, w1, 0] and phase 1 [0, w2, w0]. With w[kh][kw] = 4 kh + kw, phase (0, 0) is
  // [[15, 13, 0], [7, 5, 0], [0, 0, 0]], phase (0, 1) [[0, 14, 12], [0, 6, 4], [0, 0, 0]],
  // phase (1, 0) [[0, 0, 0], [11, 9, 0], [3, 1, 0]], phase (1, 1) [[0, 0, 0], [0, 10, 8],
  // [0, 2, 0]].
  const char* text = R"(graph @g {
  input %x : f32[1,1,4,4]
  const %w : f32[1,1,4,4] = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0]
  %y = ConvTranspose(%x, %w) {pads = [1, 1, 1, 1], strides = [2, 2]} : f32[1,1,8,8]
  output "y" = %y
})";
  std::string out;
  EXPECT_EQ(constantAfter(text, "y.phase_weights", &out),
            (std::vector<double>{15, 13, 0, 7, 5, 0, 0, 0, 0, 0, 14, 12, 0, 6, 4, 0, 0, 0,
                                 0, 0, 0, 11, 9, 0, 3, 1, 0, 0, 0, 0, 0, 10, 8, 0, 2, 0}));
  EXPECT_NE(out.find("kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [1, 1]} : "
                     "f32[1,4,4,4]"),
            std::string::npos)
      << out;
}

TEST(ConvTransposeAsConv, StrideOneIsAConvWithFlippedTaps) {
  // Stride 1, pad 1, 3 taps: out[o] = sum x[i] w[o + 1 - i], a correlation over x[o-1..o+1]
  // with the taps reversed, and no depth-to-space.
  const char* text = R"(graph @g {
  input %x : f32[1,1,4,4]
  const %w : f32[1,1,3,3] = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
  %y = ConvTranspose(%x, %w) {pads = [1, 1, 1, 1]} : f32[1,1,4,4]
  output "y" = %y
})";
  std::string out;
  EXPECT_EQ(constantAfter(text, "y.phase_weights", &out),
            (std::vector<double>{8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_NE(out.find("%y = Conv(%x, %y.phase_weights) {dilations = [1, 1], group = 1, "
                     "kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [1, 1]} : "
                     "f32[1,1,4,4]"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("Transpose"), std::string::npos) << out;
}

TEST(ConvTransposeAsConv, LeavesWhatItCannotRewrite) {
  // A kernel that is not a multiple of the stride (3x3 stride 2), groups, dilations and
  // weights that are not constants stay ConvTransposes.
  runPass(R"(graph @g {
  input %x : f32[1,2,3,3]
  input %v : f32[2,1,2,2]
  const %w : f32[2,1,3,3] = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
  const %g : f32[2,1,2,2] = [1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0]
  %a = ConvTranspose(%x, %w) {strides = [2, 2]} : f32[1,1,7,7]
  %b = ConvTranspose(%x, %g) {group = 2, strides = [2, 2]} : f32[1,2,6,6]
  %c = ConvTranspose(%x, %g) {dilations = [2, 2], strides = [2, 2]} : f32[1,1,7,7]
  %d = ConvTranspose(%x, %v) {strides = [2, 2]} : f32[1,1,6,6]
  output "a" = %a
  output "b" = %b
  output "c" = %c
  output "d" = %d
})",
          convTransposeAsConv, /*expectChange=*/false);
}

}  // namespace
}  // namespace kiln::passes
