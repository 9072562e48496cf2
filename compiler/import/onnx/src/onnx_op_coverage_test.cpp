// One tiny model per operator of the ONNX op table: each must import (ONNX's checker, shape
// inference, the IR's rule and verifier all agreeing) into the expected IR op with the
// hand-computed result type. Guards the table against ONNX/IR semantic drift.
#include <gtest/gtest.h>

#include "kiln/import/onnx/onnx_import.h"
#include "onnx_test_models.h"

namespace kiln::import {
namespace {

struct OpCase {
  const char* op;         // the IR op expected in the graph
  const char* signature;  // graph inputs => outputs
  const char* body;       // node(s)
  const char* result;     // expected type of output 'y', as TensorType::toString()
};

void PrintTo(const OpCase& c, std::ostream* out) { *out << c.op; }

class OnnxOpCoverage : public ::testing::TestWithParam<OpCase> {};

TEST_P(OnnxOpCoverage, ImportsWithExpectedType) {
  const OpCase& c = GetParam();
  std::string text = std::string(R"(<ir_version: 8, opset_import: ["" : 17]> g )") + c.signature +
                     " { " + c.body + " }";
  std::unique_ptr<ir::Graph> graph = importOnnxBytes(testing::modelFromText(text));
  bool found = false;
  for (const auto& op : graph->ops()) found = found || op->kindName() == c.op;
  EXPECT_TRUE(found) << "no " << c.op << " op in the imported graph";
  ir::Value* y = graph->findValue("y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->type().toString(), c.result);
}

// In the 1.12 text syntax `float x` is a scalar and `float[] x` a tensor of unknown rank.
#define UNARY(Op, Attrs) \
  OpCase{#Op, "(float[2,3] x) => (float[2,3] y)", "y = " #Op " " Attrs " (x)", "f32[2,3]"}

INSTANTIATE_TEST_SUITE_P(
    Unary, OnnxOpCoverage,
    ::testing::Values(UNARY(Abs, ""), UNARY(Neg, ""), UNARY(Exp, ""), UNARY(Log, ""),
                      UNARY(Sqrt, ""), UNARY(Reciprocal, ""), UNARY(Relu, ""), UNARY(Sigmoid, ""),
                      UNARY(Tanh, ""), UNARY(Erf, ""), UNARY(Floor, ""), UNARY(Ceil, ""),
                      UNARY(Round, ""), UNARY(Sign, ""), UNARY(Sin, ""), UNARY(Cos, ""),
                      UNARY(LeakyRelu, "<alpha = 0.1>"), UNARY(Elu, "<alpha = 0.5>"),
                      UNARY(Selu, ""), UNARY(HardSigmoid, "<alpha = 0.3, beta = 0.4>"),
                      UNARY(HardSwish, ""), UNARY(Softplus, ""), UNARY(Softsign, ""),
                      UNARY(Identity, ""), UNARY(Softmax, "<axis = 0>"),
                      UNARY(LogSoftmax, "<axis = 1>")),
    [](const auto& info) { return std::string(info.param.op); });

INSTANTIATE_TEST_SUITE_P(
    Binary, OnnxOpCoverage,
    ::testing::Values(
        OpCase{"Add", "(float[2,3] a, float[3] b) => (float[2,3] y)", "y = Add(a, b)", "f32[2,3]"},
        OpCase{"Sub", "(float[2,3] a, float[1] b) => (float[2,3] y)", "y = Sub(a, b)", "f32[2,3]"},
        OpCase{"Mul", "(float[2,1] a, float[3] b) => (float[2,3] y)", "y = Mul(a, b)", "f32[2,3]"},
        OpCase{"Div", "(float[2,3] a, float[2,3] b) => (float[2,3] y)", "y = Div(a, b)",
               "f32[2,3]"},
        OpCase{"Pow", "(float[2,3] a, float b) => (float[2,3] y)", "y = Pow(a, b)", "f32[2,3]"},
        OpCase{"Mod", "(int32[4] a, int32[4] b) => (int32[4] y)", "y = Mod(a, b)", "i32[4]"},
        OpCase{"Max", "(float[2,3] a, float[3] b, float[1] c) => (float[2,3] y)",
               "y = Max(a, b, c)", "f32[2,3]"},
        OpCase{"Min", "(float[2,3] a, float[3] b) => (float[2,3] y)", "y = Min(a, b)",
               "f32[2,3]"},
        OpCase{"Sum", "(float[2,3] a, float[3] b) => (float[2,3] y)", "y = Sum(a, b)",
               "f32[2,3]"},
        OpCase{"Mean", "(float[2,3] a, float[3] b) => (float[2,3] y)", "y = Mean(a, b)",
               "f32[2,3]"},
        OpCase{"And", "(bool[2,3] a, bool[3] b) => (bool[2,3] y)", "y = And(a, b)", "bool[2,3]"},
        OpCase{"Or", "(bool[2,3] a, bool[3] b) => (bool[2,3] y)", "y = Or(a, b)", "bool[2,3]"},
        OpCase{"Xor", "(bool[2,3] a, bool[3] b) => (bool[2,3] y)", "y = Xor(a, b)", "bool[2,3]"},
        OpCase{"Not", "(bool[2,3] a) => (bool[2,3] y)", "y = Not(a)", "bool[2,3]"},
        OpCase{"Equal", "(float[2,3] a, float[3] b) => (bool[2,3] y)", "y = Equal(a, b)",
               "bool[2,3]"},
        OpCase{"Less", "(float[2,3] a, float[3] b) => (bool[2,3] y)", "y = Less(a, b)",
               "bool[2,3]"},
        OpCase{"LessOrEqual", "(float[2,3] a, float[3] b) => (bool[2,3] y)",
               "y = LessOrEqual(a, b)", "bool[2,3]"},
        OpCase{"Greater", "(int64[2,3] a, int64[3] b) => (bool[2,3] y)", "y = Greater(a, b)",
               "bool[2,3]"},
        OpCase{"GreaterOrEqual", "(float[2,3] a, float[3] b) => (bool[2,3] y)",
               "y = GreaterOrEqual(a, b)", "bool[2,3]"},
        OpCase{"Where", "(bool[2,1] c, float[2,3] a, float[3] b) => (float[2,3] y)",
               "y = Where(c, a, b)", "f32[2,3]"},
        OpCase{"PRelu", "(float[2,3] a, float[3] b) => (float[2,3] y)", "y = PRelu(a, b)",
               "f32[2,3]"}),
    [](const auto& info) { return std::string(info.param.op); });

INSTANTIATE_TEST_SUITE_P(
    NeuralNetwork, OnnxOpCoverage,
    ::testing::Values(
        OpCase{"Conv", "(float[1,2,5,5] x, float[4,1,3,3] w) => (float[1,4,3,3] y)",
               "y = Conv <group = 2, strides = [2, 2], pads = [1, 1, 1, 1]> (x, w)",
               "f32[1,4,3,3]"},
        OpCase{"MatMul", "(float[5,2,3] a, float[3,4] b) => (float[5,2,4] y)",
               "y = MatMul(a, b)", "f32[5,2,4]"},
        OpCase{"Gemm", "(float[3,2] a, float[3,4] b, float[4] c) => (float[2,4] y)",
               "y = Gemm <transA = 1, alpha = 2.0> (a, b, c)", "f32[2,4]"},
        OpCase{"MaxPool", "(float[1,1,5,5] x) => (float[1,1,3,3] y)",
               "y = MaxPool <kernel_shape = [2, 2], strides = [2, 2], ceil_mode = 1> (x)",
               "f32[1,1,3,3]"},
        OpCase{"AveragePool", "(float[1,1,6] x) => (float[1,1,3] y)",
               "y = AveragePool <kernel_shape = [3], strides = [2], pads = [1, 1], "
               "count_include_pad = 1> (x)",
               "f32[1,1,3]"},
        OpCase{"GlobalAveragePool", "(float[1,3,4,4] x) => (float[1,3,1,1] y)",
               "y = GlobalAveragePool(x)", "f32[1,3,1,1]"},
        OpCase{"GlobalMaxPool", "(float[1,3,4,4] x) => (float[1,3,1,1] y)",
               "y = GlobalMaxPool(x)", "f32[1,3,1,1]"},
        OpCase{"BatchNormalization",
               "(float[1,2,3] x, float[2] s, float[2] b, float[2] m, float[2] v) => "
               "(float[1,2,3] y)",
               "y = BatchNormalization(x, s, b, m, v)", "f32[1,2,3]"},
        OpCase{"LayerNormalization", "(float[2,3,4] x, float[4] s, float[4] b) => (float[2,3,4] y)",
               "y = LayerNormalization <epsilon = 0.001> (x, s, b)", "f32[2,3,4]"},
        OpCase{"Dropout", "(float[2,3] x) => (float[2,3] y)", "y = Dropout(x)", "f32[2,3]"},
        OpCase{"Clip", "(float[2,3] x, float lo, float hi) => (float[2,3] y)",
               "y = Clip(x, lo, hi)", "f32[2,3]"},
        OpCase{"Cast", "(float[2,3] x) => (int32[2,3] y)", "y = Cast <to = 6> (x)", "i32[2,3]"}),
    [](const auto& info) { return std::string(info.param.op); });

INSTANTIATE_TEST_SUITE_P(
    Reductions, OnnxOpCoverage,
    ::testing::Values(
        OpCase{"ReduceSum", "(float[2,3,4] x) => (float[2,1,4] y)",
               "axes = Constant <value = int64[1] {1}> () y = ReduceSum(x, axes)", "f32[2,1,4]"},
        OpCase{"ReduceMean", "(float[2,3,4] x) => (float[2,4] y)",
               "y = ReduceMean <axes = [1], keepdims = 0> (x)", "f32[2,4]"},
        OpCase{"ReduceMax", "(float[2,3,4] x) => (float[1,1,1] y)", "y = ReduceMax(x)",
               "f32[1,1,1]"},
        OpCase{"ReduceMin", "(float[2,3,4] x) => (float[2,3,1] y)",
               "y = ReduceMin <axes = [-1]> (x)", "f32[2,3,1]"},
        OpCase{"ReduceProd", "(float[2,3,4] x) => (float[3] y)",
               "y = ReduceProd <axes = [0, 2], keepdims = 0> (x)", "f32[3]"},
        OpCase{"ReduceL2", "(float[2,3,4] x) => (float[2,1,1] y)",
               "y = ReduceL2 <axes = [1, 2]> (x)", "f32[2,1,1]"},
        OpCase{"ArgMax", "(float[2,3,4] x) => (int64[2,4] y)",
               "y = ArgMax <axis = 1, keepdims = 0> (x)", "i64[2,4]"},
        OpCase{"ArgMin", "(float[2,3,4] x) => (int64[2,3,1] y)", "y = ArgMin <axis = -1> (x)",
               "i64[2,3,1]"}),
    [](const auto& info) { return std::string(info.param.op); });

INSTANTIATE_TEST_SUITE_P(
    DataMovement, OnnxOpCoverage,
    ::testing::Values(
        OpCase{"Reshape", "(float[2,3,4] x) => (float[8,3] y)",
               "s = Constant <value = int64[2] {-1, 0}> () y = Reshape(x, s)", "f32[8,3]"},
        OpCase{"Flatten", "(float[2,3,4] x) => (float[6,4] y)", "y = Flatten <axis = 2> (x)",
               "f32[6,4]"},
        OpCase{"Squeeze", "(float[2,1,4,1] x) => (float[2,4] y)", "y = Squeeze(x)", "f32[2,4]"},
        OpCase{"Unsqueeze", "(float[2,4] x) => (float[2,1,4,1] y)",
               "a = Constant <value = int64[2] {1, -1}> () y = Unsqueeze(x, a)", "f32[2,1,4,1]"},
        OpCase{"Transpose", "(float[2,3,4] x) => (float[4,2,3] y)",
               "y = Transpose <perm = [2, 0, 1]> (x)", "f32[4,2,3]"},
        OpCase{"Concat", "(float[2,3] a, float[2,5] b) => (float[2,8] y)",
               "y = Concat <axis = -1> (a, b)", "f32[2,8]"},
        OpCase{"Split", "(float[2,6] x) => (float[2,2] y, float[2,4] z)",
               "s = Constant <value = int64[2] {2, 4}> () y, z = Split <axis = 1> (x, s)",
               "f32[2,2]"},
        OpCase{"Slice", "(float[5,6] x) => (float[2,3] y)",
               "st = Constant <value = int64[2] {4, 0}> () "
               "en = Constant <value = int64[2] {0, 6}> () "
               "ax = Constant <value = int64[2] {0, 1}> () "
               "sp = Constant <value = int64[2] {-2, 2}> () y = Slice(x, st, en, ax, sp)",
               "f32[2,3]"},
        OpCase{"Gather", "(float[5,6] x, int64[2,2] i) => (float[5,2,2] y)",
               "y = Gather <axis = 1> (x, i)", "f32[5,2,2]"},
        OpCase{"Pad", "(float[2,3] x) => (float[3,7] y)",
               "p = Constant <value = int64[4] {1, 2, 0, 2}> () "
               "y = Pad <mode = \"reflect\"> (x, p)",
               "f32[3,7]"},
        OpCase{"Expand", "(float[3,1] x) => (float[2,3,4] y)",
               "s = Constant <value = int64[3] {2, 1, 4}> () y = Expand(x, s)", "f32[2,3,4]"},
        OpCase{"Tile", "(float[2,3] x) => (float[4,9] y)",
               "r = Constant <value = int64[2] {2, 3}> () y = Tile(x, r)", "f32[4,9]"},
        OpCase{"Shape", "(float[2,3,4] x) => (int64[2] y)", "y = Shape <start = -2> (x)",
               "i64[2]"},
        OpCase{"Size", "(float[2,3,4] x) => (int64 y)", "y = Size(x)", "i64[]"},
        OpCase{"Range", "(float[1] x) => (float[4] y)",
               "a = Constant <value_float = 1.0> () b = Constant <value_float = 3.0> () "
               "d = Constant <value_float = 0.5> () y = Range(a, b, d)",
               "f32[4]"},
        OpCase{"ConstantOfShape", "(float[1] x) => (float[2,3] y)",
               "s = Constant <value = int64[2] {2, 3}> () "
               "y = ConstantOfShape <value = float[1] {1.5}> (s)",
               "f32[2,3]"}),
    [](const auto& info) { return std::string(info.param.op); });

// Ops added for the coverage issue; decomposed ones name the IR op they become.
INSTANTIATE_TEST_SUITE_P(
    Coverage, OnnxOpCoverage,
    ::testing::Values(
        UNARY(Shrink, "<lambd = 0.3, bias = 0.1>"), UNARY(Celu, "<alpha = 2.0>"),
        UNARY(ThresholdedRelu, "<alpha = 0.5>"),
        OpCase{"CumSum", "(int64[2,5] x) => (int64[2,5] y)",
               "a = Constant <value = int64 {-1}> () y = CumSum <reverse = 1> (x, a)",
               "i64[2,5]"},
        OpCase{"Equal", "(int64[2,3] i) => (float[2,4,3] y)",
               "d = Constant <value = int64 {4}> () "
               "v = Constant <value = float[2] {0.0, 1.0}> () y = OneHot <axis = 1> (i, d, v)",
               "f32[2,4,3]"},
        OpCase{"ScatterND", "(float[4,3] x, int64[2,1] i, float[2,3] u) => (float[4,3] y)",
               "y = ScatterND(x, i, u)", "f32[4,3]"},
        OpCase{"GatherElements", "(float[3,5] x, int64[3,2] i) => (float[3,2] y)",
               "y = GatherElements <axis = 1> (x, i)", "f32[3,2]"},
        OpCase{"MatMul", "(float[2,3,4,5] a, float[2,3,6,5] b) => (float[2,4,3,6] y)",
               "y = Einsum <equation = \"bhid,bhjd->bihj\"> (a, b)", "f32[2,4,3,6]"},
        OpCase{"ReduceSum", "(float[2,3,4] x) => (float[4,2] y)",
               "y = Einsum <equation = \"bij->jb\"> (x)", "f32[4,2]"},
        OpCase{"Where", "(float[2,3,4] x) => (float[2,3,4] y)",
               "k = Constant <value = int64 {-1}> () y = Trilu <upper = 0> (x, k)", "f32[2,3,4]"},
        OpCase{"ConvTranspose", "(float[1,4,5,6] x, float[4,3,3,3] w) => (float[1,6,10,12] y)",
               "y = ConvTranspose <group = 2, strides = [2, 2], pads = [1, 1, 1, 1], "
               "output_padding = [1, 1]> (x, w)",
               "f32[1,6,10,12]"},
        OpCase{"ConvTranspose", "(float[1,2,5] x, float[2,3,4] w, float[3] b) => (float[1,3,11] y)",
               "y = ConvTranspose <strides = [2], output_shape = [11]> (x, w, b)", "f32[1,3,11]"},
        OpCase{"ConvTranspose", "(float[1,2,3,3] x, float[2,1,3,3] w) => (float[1,1,6,6] y)",
               "y = ConvTranspose <strides = [2, 2], auto_pad = \"SAME_UPPER\"> (x, w)",
               "f32[1,1,6,6]"},
        OpCase{"InstanceNormalization",
               "(float[2,3,4,5] x, float[3] s, float[3] b) => (float[2,3,4,5] y)",
               "y = InstanceNormalization <epsilon = 0.001> (x, s, b)", "f32[2,3,4,5]"},
        OpCase{"LRN", "(float[1,5,4,4] x) => (float[1,5,4,4] y)", "y = LRN <size = 3> (x)",
               "f32[1,5,4,4]"},
        OpCase{"ReduceL1", "(float[2,3,4] x) => (float[2,1,4] y)",
               "y = ReduceL1 <axes = [1]> (x)", "f32[2,1,4]"},
        OpCase{"ReduceSumSquare", "(float[2,3,4] x) => (float[2,3] y)",
               "y = ReduceSumSquare <axes = [-1], keepdims = 0> (x)", "f32[2,3]"},
        OpCase{"ReduceLogSum", "(float[2,3,4] x) => (float[1,1,1] y)", "y = ReduceLogSum(x)",
               "f32[1,1,1]"},
        OpCase{"ReduceLogSumExp", "(float[2,3,4] x) => (float[3,4] y)",
               "y = ReduceLogSumExp <axes = [0], keepdims = 0> (x)", "f32[3,4]"},
        OpCase{"TopK", "(float[3,7] x) => (float[3,2] y, int64[3,2] i)",
               "k = Constant <value = int64[1] {2}> () y, i = TopK <axis = 1> (x, k)",
               "f32[3,2]"},
        OpCase{"Transpose", "(float[1,8,2,3] x) => (float[1,2,4,6] y)",
               "y = DepthToSpace <blocksize = 2, mode = \"CRD\"> (x)", "f32[1,2,4,6]"},
        OpCase{"Transpose", "(float[1,2,4,6] x) => (float[1,8,2,3] y)",
               "y = SpaceToDepth <blocksize = 2> (x)", "f32[1,8,2,3]"},
        OpCase{"Gather", "(float[1,2,3,4] x) => (float[1,2,6,8] y)",
               "s = Constant <value = float[4] {1.0, 1.0, 2.0, 2.0}> () "
               "y = Resize <mode = \"linear\"> (x, , s)",
               "f32[1,2,6,8]"},
        OpCase{"Gather", "(float[1,2,3,4] x) => (float[1,2,5,2] y)",
               "z = Constant <value = int64[4] {1, 2, 5, 2}> () "
               "y = Resize <mode = \"nearest\", coordinate_transformation_mode = "
               "\"asymmetric\", nearest_mode = \"floor\"> (x, , , z)",
               "f32[1,2,5,2]"}),
    [](const auto& info) {
      return std::string(info.param.op) + "_" + std::to_string(info.index);
    });

}  // namespace
}  // namespace kiln::import
