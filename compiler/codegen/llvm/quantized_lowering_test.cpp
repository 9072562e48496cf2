// Lowering of the quantized IR ops: the multipliers derived from the tensors' scales with
// TFLM's float/double arithmetic (hand-checked values), a whole int8 graph compiled and run
// from its IR text, and the user-facing errors naming the node.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

#include "kiln/codegen/dispatch_lowering.h"
#include "kiln/ir/quant_math.h"
#include "kiln/support/diagnostics.h"
#include "test_support.h"

namespace kiln::codegen {
namespace {

std::vector<KernelDesc> lower(const std::string& text) {
  return lowerDispatches(testing::oneDispatchPerOp(text));
}

std::string lowerError(const std::string& text) {
  try {
    lower(text);
  } catch (const kiln::CompileError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(QuantizedLowering, ConvMultipliersPerChannelInDouble) {
  std::vector<KernelDesc> k = lower(R"(graph @g {
  input %x : i8[1,3,3,2] quant(scale=0.5, zero_point=-1)
  const %w : i8[2,1,1,2] quant(axis=0, scale=[0.25, 0.0078125], zero_point=[0, 0]) = [1, 2, 3, 4]
  %y = QConv2D(%x, %w) {act_min = -100} : i8[1,3,3,2] quant(scale=0.125, zero_point=7) loc("c", "CONV_2D")
  output "y" = %y
})");
  ASSERT_EQ(k.size(), 1u);
  const QuantDesc& q = k[0].quant;
  EXPECT_EQ(k[0].kind, KernelKind::Quantized);
  // 0.5 * 0.25 / 0.125 = 1.0 -> (2^30, 1); 0.5 * 2^-7 / 0.125 = 2^-5 -> (2^30, -4).
  EXPECT_EQ(q.multipliers, (std::vector<int32_t>{1 << 30, 1 << 30}));
  EXPECT_EQ(q.shifts, (std::vector<int32_t>{1, -4}));
  EXPECT_EQ(q.inputZeroPoint, -1);
  EXPECT_EQ(q.outputZeroPoint, 7);
  EXPECT_EQ(q.actMin, -100);
  EXPECT_EQ(q.actMax, 127);
}

TEST(QuantizedLowering, SubRatiosInFloatAddRatiosInDouble) {
  const char* text = R"(graph @g {
  input %a : i16[4] quant(scale=0.0136183938, zero_point=0)
  input %b : i16[4] quant(scale=8.11698101e-06, zero_point=0)
  %y = OP(%a, %b) : i16[4] quant(scale=0.0106169796, zero_point=0)
  output "y" = %y
})";
  auto withOp = [&](const char* op) {
    std::string s = text;
    s.replace(s.find("OP"), 2, op);
    return lower(s)[0].quant;
  };
  const float sa = 0.0136183938f, sb = 8.11698101e-06f, sy = 0.0106169796f;
  const float twiceMaxF = 2 * std::max(sa, sb);
  const double twiceMaxD = 2 * double(std::max(sa, sb));
  QuantDesc sub = withOp("QSub"), add = withOp("QAdd");
  EXPECT_EQ(sub.leftShift, 15);
  EXPECT_EQ(sub.input2Multiplier, ir::quantizeMultiplier(double(sb / twiceMaxF)).multiplier);
  EXPECT_EQ(sub.multipliers[0], ir::quantizeMultiplier(double(twiceMaxF / (32768.0f * sy))).multiplier);
  EXPECT_EQ(add.input2Multiplier, ir::quantizeMultiplier(double(sb) / twiceMaxD).multiplier);
  EXPECT_EQ(add.multipliers[0], ir::quantizeMultiplier(twiceMaxD / (32768.0 * double(sy))).multiplier);
  // With these scales (TFLM's sub3 op test) the two arithmetics really differ.
  EXPECT_TRUE(sub.input1Multiplier != add.input1Multiplier || sub.input2Multiplier != add.input2Multiplier ||
              sub.multipliers[0] != add.multipliers[0]);
}

TEST(QuantizedLowering, Int8GraphRunsEndToEnd) {
  // Quantize -> FullyConnected (per-tensor weights, bias) -> Softmax, checked by hand:
  // x = [1.0, -0.5] at scale 0.5 -> [2, -1]; acc = 2*3 + (-1)*(-2) + 4 = 12 and 2*1 + (-1)*1 - 4
  // = -3; rescale float(0.5 * 0.25) / 0.0625 = 2 -> [24, -6]. Softmax of [24, -6] / 16:
  // exp(-30/16) = 0.153 -> probabilities 0.867, 0.133 -> 222 - 128 = 94 and 34 - 128 = -94.
  const char* text = R"(graph @g {
  input %x : f32[1,2]
  const %w : i8[2,2] quant(scale=0.25, zero_point=0) = [3, -2, 1, 1]
  const %b : i32[2] = [4, -4]
  %q = Quantize(%x) {to = 2} : i8[1,2] quant(scale=0.5, zero_point=0)
  %f = QFullyConnected(%q, %w, %b) : i8[1,2] quant(scale=0.0625, zero_point=0)
  %s = QSoftmax(%f) : i8[1,2] quant(scale=0.00390625, zero_point=-128)
  output "f" = %f
  output "s" = %s
})";
  ir::DispatchGraph g = testing::oneDispatchPerOp(text);
  testing::ValueMemory memory;
  std::vector<float> x = {1.0f, -0.5f};
  memory[g.graph->inputs()[0]].resize(8);
  std::memcpy(memory[g.graph->inputs()[0]].data(), x.data(), 8);
  testing::runDispatches(g, memory, 1);
  auto bytesOf = [&](const char* name) { return memory.at(g.graph->findValue(name)); };
  EXPECT_EQ(bytesOf("q"), (std::vector<uint8_t>{2, uint8_t(-1)}));
  EXPECT_EQ(bytesOf("f"), (std::vector<uint8_t>{24, uint8_t(-6)}));
  EXPECT_EQ(bytesOf("s"), (std::vector<uint8_t>{94, uint8_t(-94)}));
}

TEST(QuantizedLowering, ErrorsNameTheNode) {
  EXPECT_EQ(lowerError(R"(graph @g {
  input %x : i8[1,4] quant(scale=0.1, zero_point=0)
  %y = QSoftmax(%x) : i8[1,4] quant(scale=0.1, zero_point=0) loc("sm", "SOFTMAX")
  output "y" = %y
})"),
            "node 'sm' (SOFTMAX): int8 softmax needs result scale 1/256 and zero point -128");
  EXPECT_EQ(lowerError(R"(graph @g {
  input %x : i16[1,2,2,1] quant(scale=0.1, zero_point=3)
  const %w : i8[1,1,1,1] quant(scale=0.5, zero_point=0) = [1]
  %y = QConv2D(%x, %w) : i16[1,2,2,1] quant(scale=0.1, zero_point=0) loc("c", "CONV_2D")
  output "y" = %y
})"),
            "node 'c' (CONV_2D): 16-bit input 'x' must have zero point 0");
  EXPECT_EQ(lowerError(R"(graph @g {
  input %x : i8[1,4,4,1] quant(scale=0.1, zero_point=0)
  %y = QAveragePool2D(%x) {kernel_shape = [2, 2], strides = [2, 2]} : i8[1,2,2,1] quant(scale=0.2, zero_point=0) loc("p", "AVERAGE_POOL_2D")
  output "y" = %y
})"),
            "node 'p' (AVERAGE_POOL_2D): pooling needs equal input and result quantization parameters");
  EXPECT_EQ(lowerError(R"(graph @g {
  input %x : i8[4] quant(scale=0.1, zero_point=0)
  %y = QLogistic(%x) : i8[4] quant(scale=0.00390625, zero_point=0) loc("l", "LOGISTIC")
  output "y" = %y
})"),
            "node 'l' (LOGISTIC): int8 logistic needs result zero point -128");
  EXPECT_EQ(lowerError(R"(graph @g {
  input %x : i16[4] quant(scale=0.1, zero_point=0)
  %y = QTanh(%x) : i16[4] quant(scale=0.1, zero_point=0) loc("t", "TANH")
  output "y" = %y
})"),
            "node 't' (TANH): only int8 is supported for this operator");
  EXPECT_EQ(lowerError(R"(graph @g {
  input %a : i16[4] quant(scale=0.1, zero_point=0)
  %y = QMul(%a, %a) : i16[4] quant(scale=0.1, zero_point=0) loc("m", "MUL")
  output "y" = %y
})"),
            "node 'm' (MUL): only int8 multiplication is supported (TFLM's int16 MUL uses another path)");
  EXPECT_EQ(lowerError(R"(graph @g {
  input %x : i8[4]
  %y = Dequantize(%x) : f32[4] loc("d", "DEQUANTIZE")
  output "y" = %y
})"),
            "node 'd' (DEQUANTIZE): input 'x' has no quantization parameters");
}

}  // namespace
}  // namespace kiln::codegen
