// Tests of the quantized ops' rules (NHWC shapes, dtypes, quantization parameters), their
// error messages, and the text form of a quantized graph (print -> parse -> print).
#include <gtest/gtest.h>

#include "kiln/ir/graph.h"
#include "kiln/ir/op_rules.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/quant_math.h"
#include "kiln/support/diagnostics.h"

namespace kiln::ir {
namespace {

using Ints = std::vector<int64_t>;

class QuantRules : public ::testing::Test {
 protected:
  Value* tensor(Shape shape, DType dtype, std::optional<QuantParams> q) {
    TensorType t(dtype, std::move(shape));
    t.quant = std::move(q);
    return graph_.addInput("", t);
  }
  static QuantParams perTensor(float scale, int64_t zp) { return QuantParams{-1, {scale}, {zp}}; }
  Value* act(Shape shape, DType dtype = DType::I8) { return tensor(std::move(shape), dtype, perTensor(0.5f, -3)); }
  Value* weights(Shape shape, int64_t axis = -1, size_t channels = 1) {
    QuantParams q{axis, std::vector<float>(channels, 0.01f), std::vector<int64_t>(channels, 0)};
    return tensor(std::move(shape), DType::I8, q);
  }
  RuleResult infer(OpKind kind, std::vector<Value*> operands, AttributeMap attrs = {}) {
    return inferResultTypes(RuleInput{kind, operands, attrs, 1});
  }
  TensorType typeOf(OpKind kind, std::vector<Value*> operands, AttributeMap attrs = {}) {
    return *infer(kind, std::move(operands), std::move(attrs)).types[0];
  }
  std::string error(OpKind kind, std::vector<Value*> operands, AttributeMap attrs = {}) {
    try {
      infer(kind, std::move(operands), std::move(attrs));
    } catch (const CompileError& e) {
      return e.what();
    }
    return "(no error)";
  }
  static AttributeMap attrs(std::initializer_list<std::pair<const char*, Attribute>> list) {
    AttributeMap a;
    for (const auto& [k, v] : list) a.set(k, v);
    return a;
  }
  Graph graph_;
};

TEST_F(QuantRules, ConvShapesNhwc) {
  // 3x3 stride 2 pads 1: (9 + 2 - 3) / 2 + 1 = 5, (10 + 2 - 3) / 2 + 1 = 5.
  TensorType t = typeOf(OpKind::QConv2D, {act({1, 9, 10, 4}), weights({8, 3, 3, 4}, 0, 8), tensor({8}, DType::I32, {})},
                        attrs({{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}));
  EXPECT_EQ(t.dtype, DType::I8);
  EXPECT_EQ(t.shape, (Shape{1, 5, 5, 8}));
  // Depthwise, multiplier 2.
  EXPECT_EQ(typeOf(OpKind::QDepthwiseConv2D, {act({1, 6, 6, 3}), weights({1, 3, 3, 6}, 3, 6)}).shape,
            (Shape{1, 4, 4, 6}));
  // Transposed: (2 - 1) * 2 + 3 - 1 - 0 = 4 rows, (5 - 1) * 1 + 4 - 1 - 1 = 6 columns.
  EXPECT_EQ(typeOf(OpKind::QTransposeConv2D, {act({1, 2, 5, 4}, DType::I16), weights({3, 3, 4, 4}),
                                              tensor({3}, DType::I64, {})},
                   attrs({{"strides", Ints{2, 1}}, {"pads", Ints{1, 1, 0, 1}}}))
                .shape,
            (Shape{1, 4, 6, 3}));
  EXPECT_EQ(typeOf(OpKind::QFullyConnected, {act({2, 7}), weights({5, 7})}).shape, (Shape{2, 5}));
  EXPECT_EQ(typeOf(OpKind::QAdd, {act({2, 3, 4}), act({4})}).shape, (Shape{2, 3, 4}));
  EXPECT_EQ(typeOf(OpKind::QAveragePool2D, {act({1, 5, 5, 2})},
                   attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}))
                .shape,
            (Shape{1, 2, 2, 2}));
  EXPECT_EQ(typeOf(OpKind::Quantize, {tensor({3}, DType::F32, {})}, attrs({{"to", int64_t(DType::I16)}})).dtype,
            DType::I16);
  EXPECT_EQ(typeOf(OpKind::Dequantize, {act({3})}).dtype, DType::F32);
  EXPECT_EQ(typeOf(OpKind::QMean, {act({1, 5, 6, 3})}, attrs({{"axes", Ints{1, -2}}})).shape, (Shape{1, 1, 1, 3}));
  EXPECT_EQ(typeOf(OpKind::QMean, {act({1, 5, 6, 3})}, attrs({{"axes", Ints{2}}, {"keepdims", int64_t(0)}})).shape,
            (Shape{1, 5, 3}));
  EXPECT_EQ(typeOf(OpKind::Requantize, {tensor({3}, DType::I32, perTensor(1e-7f, 0))},
                   attrs({{"to", int64_t(DType::I16)}}))
                .dtype,
            DType::I16);
}

TEST_F(QuantRules, Errors) {
  EXPECT_EQ(error(OpKind::QConv2D, {tensor({1, 4, 4, 2}, DType::F32, {}), weights({2, 1, 1, 2})}),
            "operand 0 has dtype f32, expected i8 or i16");
  EXPECT_EQ(error(OpKind::QConv2D, {tensor({1, 4, 4, 2}, DType::I8, {}), weights({2, 1, 1, 2})}),
            "operand 0 has no quantization parameters");
  EXPECT_EQ(error(OpKind::QConv2D, {act({1, 4, 4, 2}), weights({2, 1, 1, 3})}),
            "weight has 3 input channels per group, input has 2 channels in 1 group(s)");
  EXPECT_EQ(error(OpKind::QConv2D, {act({1, 4, 4, 2}), weights({2, 1, 1, 2}, 0, 3)}),
            "operand 1 (weights) is quantized per channel along axis 0 with 3 scales, expected axis 0 with 2");
  Value* wzp = tensor({2, 1, 1, 2}, DType::I8, perTensor(0.1f, 4));
  EXPECT_EQ(error(OpKind::QConv2D, {act({1, 4, 4, 2}), wzp}), "operand 1 (weights) has a non-zero zero point");
  EXPECT_EQ(error(OpKind::QConv2D, {act({1, 4, 4, 2}), weights({2, 1, 1, 2}), tensor({2}, DType::I64, {})}),
            "bias has dtype i64, expected i32");
  EXPECT_EQ(error(OpKind::QConv2D, {act({1, 4, 4, 2}), weights({2, 1, 1, 2})}, attrs({{"act_min", int64_t(-200)}})),
            "activation range [-200, 127] is not inside i8's range");
  EXPECT_EQ(error(OpKind::QDepthwiseConv2D, {act({1, 4, 4, 3}), weights({1, 3, 3, 4})}),
            "weight has shape [1,3,3,4], expected [1, KH, KW, a multiple of 3]");
  EXPECT_EQ(error(OpKind::QFullyConnected, {act({2, 7}), weights({5, 6})}), "weight has shape [5,6], expected [N, 7]");
  EXPECT_EQ(error(OpKind::QAdd, {act({3}), act({3}, DType::I16)}), "operand 1 has dtype i16, expected i8 like operand 0");
  EXPECT_EQ(error(OpKind::QAveragePool2D, {act({1, 4, 4, 1})}, attrs({{"kernel_shape", Ints{2}}})),
            "kernel_shape must have 2 values [KH, KW]");
  EXPECT_EQ(error(OpKind::QSoftmax, {tensor({4}, DType::I8, QuantParams{0, {0.1f}, {0}})}),
            "operand 0 must be quantized per tensor");
  EXPECT_EQ(error(OpKind::Quantize, {act({3})}, attrs({{"to", int64_t(DType::I8)}})),
            "operand 0 has dtype i8, expected f32");
  EXPECT_EQ(error(OpKind::Quantize, {tensor({3}, DType::F32, {})}, attrs({{"to", int64_t(DType::F32)}})),
            "attribute 'to' is f32, expected i8 or i16");
  EXPECT_EQ(error(OpKind::Requantize, {tensor({3}, DType::I32, {})}, attrs({{"to", int64_t(DType::I8)}})),
            "operand 0 must be quantized per tensor");
  EXPECT_EQ(error(OpKind::QMean, {act({2, 3})}, attrs({{"axes", Ints{1, -1}}})), "axes repeat axis -1");
  EXPECT_EQ(error(OpKind::Dequantize, {tensor({3}, DType::F32, {})}), "operand 0 has dtype f32, expected i8, i16 or i32");
}

TEST_F(QuantRules, TextFormRoundTrips) {
  const char* text = R"(graph @q {
  input %x : i8[1,4,4,2] quant(scale=0.5, zero_point=-3)
  const %w : i8[3,1,1,2] quant(axis=0, scale=[0.25, 0.125, 0.0625], zero_point=[0, 0, 0]) = [1, -2, 3, -4, 5, -6]
  const %b : i32[3] = [7, -8, 9]
  %y = QConv2D(%x, %w, %b) {act_max = 100, act_min = -128} : i8[1,4,4,3] quant(scale=0.75, zero_point=5)
  %z = Dequantize(%y) : f32[1,4,4,3]
  output "z" = %z
}
)";
  std::unique_ptr<Graph> g = parseGraph(text);
  std::string printed = printGraph(*g);
  EXPECT_EQ(printGraph(*parseGraph(printed)), printed);
  EXPECT_NE(printed.find("QConv2D(%x, %w, %b) {act_max = 100, act_min = -128} : i8[1,4,4,3] quant(scale=0.75, zero_point=5)"),
            std::string::npos)
      << printed;
}

}  // namespace
}  // namespace kiln::ir
