// TFLite importer: one tiny in-memory model per translation rule (layouts, weights permuted
// to the IR's layouts, SAME padding, quantized ops with their activation clamps, strided
// slices, debug outputs), and every model of ../shared/testdata/tflite imported.
#include "kiln/import/tflite/tflite_import.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "kiln/ir/constant_data.h"
#include "kiln/ir/printer.h"
#include "kiln/support/diagnostics.h"
#include "tflite_test_models.h"

namespace kiln::import::tflite::testing {
namespace {

using ir::OpKind;

const ir::Op* findOp(const ir::Graph& g, OpKind kind) {
  for (const auto& op : g.ops())
    if (op->kind() == kind) return op.get();
  return nullptr;
}

size_t countOps(const ir::Graph& g, OpKind kind) {
  size_t n = 0;
  for (const auto& op : g.ops()) n += op->kind() == kind;
  return n;
}

OptionsBuilder convOptions(fb::Padding padding, int stride, fb::ActivationFunctionType act) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    return fb::CreateConv2DOptions(b, padding, stride, stride, act).Union();
  };
}

std::vector<float> iota(size_t n, float start = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + float(i);
  return v;
}

// x [1,4,4,2] -> CONV_2D (3 filters 3x3, SAME, RELU) -> y [1,4,4,3]
TestModel convModel(fb::Padding padding = fb::Padding::SAME, int stride = 1, int size = 4) {
  int out = padding == fb::Padding::SAME ? (size + stride - 1) / stride : (size - 3) / stride + 1;
  TestModel m;
  m.tensors = {{"x", fb::TensorType::FLOAT32, {1, size, size, 2}},
               {"w", fb::TensorType::FLOAT32, {3, 3, 3, 2}, floatBytes(iota(54))},
               {"b", fb::TensorType::FLOAT32, {3}, floatBytes({0.5f, 1.5f, 2.5f})},
               {"y", fb::TensorType::FLOAT32, {1, out, out, 3}}};
  m.operators = {{3,
                  {0, 1, 2},
                  {3},
                  fb::BuiltinOptions::Conv2DOptions,
                  convOptions(padding, stride, fb::ActivationFunctionType::RELU)}};
  m.inputs = {0};
  m.outputs = {3};
  return m;
}

TEST(TfliteImport, FloatConvRunsChannelsFirstWithPermutedWeights) {
  auto g = importTfliteBytes(buildTflite(convModel()), {}, "conv.tflite");
  ASSERT_EQ(g->inputs().size(), 1u);
  EXPECT_EQ(g->inputs()[0]->name(), "x");
  EXPECT_EQ(g->inputs()[0]->shape(), (ir::Shape{1, 4, 4, 2}));
  const ir::Op* conv = findOp(*g, OpKind::Conv);
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->operand(0)->shape(), (ir::Shape{1, 2, 4, 4}));
  EXPECT_EQ(conv->attrs().getInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(conv->attrs().getInt("group"), 1);
  EXPECT_EQ(conv->source().opType, "CONV_2D");
  // OHWI -> OIHW: w'[o][i][h][w] = w[o][h][w][i]; element (o=1, i=1, h=2, w=0) is
  // w[1][2][0][1] = 1*18 + 2*6 + 0*2 + 1 = 31.
  std::vector<double> w = ir::constantDoubles(conv->operand(1));
  EXPECT_EQ(conv->operand(1)->shape(), (ir::Shape{3, 2, 3, 3}));
  EXPECT_EQ(w[1 * 18 + 1 * 9 + 2 * 3 + 0], 31.0);
  EXPECT_EQ(countOps(*g, OpKind::Relu), 1u);
  // The output is NHWC again, under its TFLite name.
  ASSERT_EQ(g->outputs().size(), 1u);
  EXPECT_EQ(g->outputs()[0].name, "y");
  EXPECT_EQ(g->outputs()[0].value->shape(), (ir::Shape{1, 4, 4, 3}));
  EXPECT_EQ(countOps(*g, OpKind::Transpose), 2u);
}

TEST(TfliteImport, SamePaddingPutsTheOddPixelAtTheEnd) {
  // 6x6, 3x3, stride 2, SAME: out 3, total padding (3-1)*2 + 3 - 6 = 1 -> [0, 0, 1, 1].
  auto g = importTfliteBytes(buildTflite(convModel(fb::Padding::SAME, 2, 6)), {}, "conv.tflite");
  EXPECT_EQ(findOp(*g, OpKind::Conv)->attrs().getInts("pads"), (std::vector<int64_t>{0, 0, 1, 1}));
  auto v = importTfliteBytes(buildTflite(convModel(fb::Padding::VALID, 1, 5)), {}, "conv.tflite");
  EXPECT_EQ(findOp(*v, OpKind::Conv)->attrs().getInts("pads"), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(v->outputs()[0].value->shape(), (ir::Shape{1, 3, 3, 3}));
}

TEST(TfliteImport, DepthwiseBecomesAGroupedConvolution) {
  TestModel m;
  m.tensors = {{"x", fb::TensorType::FLOAT32, {1, 3, 3, 2}},
               {"w", fb::TensorType::FLOAT32, {1, 2, 2, 4}, floatBytes(iota(16))},
               {"y", fb::TensorType::FLOAT32, {1, 2, 2, 4}}};
  m.operators = {{4,
                  {0, 1, -1},
                  {2},
                  fb::BuiltinOptions::DepthwiseConv2DOptions,
                  [](flatbuffers::FlatBufferBuilder& b) {
                    return fb::CreateDepthwiseConv2DOptions(b, fb::Padding::VALID, 1, 1, 2).Union();
                  }}};
  m.inputs = {0};
  m.outputs = {2};
  auto g = importTfliteBytes(buildTflite(m), {}, "dw.tflite");
  const ir::Op* conv = findOp(*g, OpKind::Conv);
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->attrs().getInt("group"), 2);
  EXPECT_EQ(conv->numOperands(), 2u);  // no bias
  // [1,KH,KW,C*M] -> [C*M,1,KH,KW]: w'[c][0][h][w] = w[0][h][w][c]; (c=3, h=1, w=0) -> 1*8+3 = 11.
  EXPECT_EQ(conv->operand(1)->shape(), (ir::Shape{4, 1, 2, 2}));
  EXPECT_EQ(ir::constantDoubles(conv->operand(1))[3 * 4 + 1 * 2 + 0], 11.0);
}

TEST(TfliteImport, ChannelsFirstFlowsThroughElementwiseOpsAndPools) {
  // CONV -> ADD (with a [3] constant) -> AVERAGE_POOL -> RESHAPE [1,3]: one Transpose at the
  // input; the pool's [1,3,1,1] result reaches NHWC [1,1,1,3] with a free Reshape.
  TestModel m = convModel();
  m.tensors.push_back({"c", fb::TensorType::FLOAT32, {3}, floatBytes({1, 2, 3})});
  m.tensors.push_back({"sum", fb::TensorType::FLOAT32, {1, 4, 4, 3}});
  m.tensors.push_back({"pool", fb::TensorType::FLOAT32, {1, 1, 1, 3}});
  m.tensors.push_back({"flat", fb::TensorType::FLOAT32, {1, 3}});
  m.operators.push_back({0, {3, 4}, {5}});
  m.operators.push_back(
      {1, {5}, {6}, fb::BuiltinOptions::Pool2DOptions, [](flatbuffers::FlatBufferBuilder& b) {
         return fb::CreatePool2DOptions(b, fb::Padding::VALID, 4, 4, 4, 4).Union();
       }});
  m.operators.push_back({22, {6}, {7}});
  m.outputs = {7};
  auto g = importTfliteBytes(buildTflite(m), {}, "cnn.tflite");
  EXPECT_EQ(countOps(*g, OpKind::Transpose), 1u);
  const ir::Op* add = findOp(*g, OpKind::Add);
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->result()->shape(), (ir::Shape{1, 3, 4, 4}));
  EXPECT_EQ(g->outputs()[0].value->shape(), (ir::Shape{1, 3}));
  EXPECT_EQ(g->outputs()[0].name, "flat");
}

TEST(TfliteImport, QuantizedConvKeepsNhwcAndClampsTheFusedRelu6) {
  TestModel m;
  m.tensors = {
      {"x", fb::TensorType::INT8, {1, 3, 3, 2}, {}, {0.5f}, {1}},
      {"w",
       fb::TensorType::INT8,
       {2, 1, 1, 2},
       int8Bytes({1, -2, 3, 4}),
       {0.25f, 0.125f},
       {0, 0},
       0},
      {"b", fb::TensorType::INT32, {2}, int32Bytes({10, -10}), {0.125f, 0.0625f}, {0, 0}, 0},
      {"y", fb::TensorType::INT8, {1, 3, 3, 2}, {}, {0.05f}, {-10}}};
  m.operators = {{3,
                  {0, 1, 2},
                  {3},
                  fb::BuiltinOptions::Conv2DOptions,
                  convOptions(fb::Padding::SAME, 1, fb::ActivationFunctionType::RELU6)}};
  m.inputs = {0};
  m.outputs = {3};
  auto g = importTfliteBytes(buildTflite(m), {}, "qconv.tflite");
  const ir::Op* conv = findOp(*g, OpKind::QConv2D);
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(countOps(*g, OpKind::Transpose), 0u);
  EXPECT_EQ(conv->operand(0)->name(), "x");
  EXPECT_EQ(conv->operand(1)->shape(), (ir::Shape{2, 1, 1, 2}));  // OHWI kept
  ASSERT_TRUE(conv->operand(1)->type().quant);
  EXPECT_EQ(conv->operand(1)->type().quant->axis, 0);
  // RELU6 on scale 0.05, zero point -10: [max(-128, -10), min(127, -10 + round(6 / 0.05))].
  EXPECT_EQ(conv->attrs().getInt("act_min"), -10);
  EXPECT_EQ(conv->attrs().getInt("act_max"), 110);
  ASSERT_TRUE(conv->result()->type().quant);
  EXPECT_EQ(conv->result()->type().quant->zeroPoints, (std::vector<int64_t>{-10}));
  EXPECT_FLOAT_EQ(conv->result()->type().quant->scales[0], 0.05f);
}

TEST(TfliteImport, StridedSliceFollowsTflitesMasks) {
  // x [4, 6]: begin [1, -1], end [0, 0], strides [1, -2]; end_mask on dim 0 (-> 4),
  // begin from -1 (5) down to 0 exclusive with stride -2: 5, 3, 1; shrink nothing.
  TestModel m;
  m.tensors = {{"x", fb::TensorType::FLOAT32, {4, 6}},
               {"begin", fb::TensorType::INT32, {2}, int32Bytes({1, -1})},
               {"end", fb::TensorType::INT32, {2}, int32Bytes({0, 0})},
               {"strides", fb::TensorType::INT32, {2}, int32Bytes({1, -2})},
               {"y", fb::TensorType::FLOAT32, {3, 3}}};
  m.operators = {{45,
                  {0, 1, 2, 3},
                  {4},
                  fb::BuiltinOptions::StridedSliceOptions,
                  [](flatbuffers::FlatBufferBuilder& b) {
                    return fb::CreateStridedSliceOptions(b, 0, /*end_mask=*/1).Union();
                  }}};
  m.inputs = {0};
  m.outputs = {4};
  auto g = importTfliteBytes(buildTflite(m), {}, "slice.tflite");
  const ir::Op* slice = findOp(*g, OpKind::Slice);
  ASSERT_NE(slice, nullptr);
  EXPECT_EQ(ir::constantInts(slice->operand(1)), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(ir::constantInts(slice->operand(2)), (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(ir::constantInts(slice->operand(4)), (std::vector<int64_t>{1, -2}));
  EXPECT_EQ(g->outputs()[0].value->shape(), (ir::Shape{3, 3}));
}

TEST(TfliteImport, DebugOutputsExposeEveryOperatorsResult) {
  TestModel m = convModel();
  m.tensors.push_back({"z", fb::TensorType::FLOAT32, {1, 4, 4, 3}});
  m.operators.push_back({14, {3}, {4}});  // LOGISTIC
  m.outputs = {4};
  TfliteImportOptions options;
  options.debugOutputs = true;
  auto g = importTfliteBytes(buildTflite(m), options, "debug.tflite");
  ASSERT_EQ(g->outputs().size(), 2u);
  EXPECT_EQ(g->outputs()[0].name, "z");
  EXPECT_EQ(g->outputs()[1].name, "y");
  EXPECT_EQ(g->outputs()[1].value->shape(), (ir::Shape{1, 4, 4, 3}));
  EXPECT_EQ(importTfliteBytes(buildTflite(m), {}, "debug.tflite")->outputs().size(), 1u);
}

TEST(TfliteImport, SupportedOperatorsAreNamed) {
  std::vector<std::string> ops = supportedTfliteOperators();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "DEPTHWISE_CONV_2D"), ops.end());
  EXPECT_NE(std::find(ops.begin(), ops.end(), "HARD_SWISH"), ops.end());
  EXPECT_EQ(tfliteBuiltinName(16), "LSTM");
  EXPECT_EQ(tfliteBuiltinName(9999), "");
}

// The layout decision, on real models: int8 models keep NHWC throughout (no Transpose at all);
// float CNNs transpose only their input image, their heads' pool -> reshape being free views.
TEST(TfliteImport, RuntimeTransposesInTheMlperfModels) {
  std::filesystem::path dir =
      std::filesystem::path(KILN_TESTDATA_DIR) / "tflite" / "models" / "mlperf-tiny";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no " << dir;
  std::map<std::string, size_t> expected = {{"visual_wake_words__vww_96_int8", 0},
                                            {"keyword_spotting__kws_ref_model", 0},
                                            {"image_classification__pretrainedResnet_quant", 0},
                                            {"streaming_wakeword__str_ww_ref_model", 0},
                                            {"visual_wake_words__vww_96_float", 1},
                                            {"image_classification__pretrainedResnet", 1}};
  for (const auto& [name, transposes] : expected) {
    auto g = importTfliteFile(dir / (name + ".tflite"));
    EXPECT_EQ(countOps(*g, OpKind::Transpose), transposes) << name;
  }
}

// Every model of the shared test data imports and passes the IR verifier, except those
// TFLM also rejects (hybrid float/int8 weights), which are refused with a CompileError.
TEST(TfliteImport, EveryTestdataModel) {
  std::filesystem::path root = std::filesystem::path(KILN_TESTDATA_DIR) / "tflite" / "models";
  if (!std::filesystem::exists(root)) GTEST_SKIP() << "no " << root;
  std::map<std::string, std::string> refused;
  int imported = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".tflite") continue;
    try {
      auto g = importTfliteFile(entry.path());
      ASSERT_FALSE(g->outputs().empty());
      ++imported;
    } catch (const CompileError& e) {
      refused[entry.path().stem().string()] = e.what();
    }
  }
  for (const auto& [name, message] : refused)
    std::printf("refused %s: %s\n", name.c_str(), message.c_str());
  EXPECT_EQ(refused.size(), 2u);
  EXPECT_TRUE(refused.count("anomaly_detection__ToyCar__baseline_tf23__model__model_ToyCar_quant"));
  EXPECT_TRUE(refused.count("keyword_spotting__kws_ref_model_float32"));
  EXPECT_EQ(imported, 141);
}

}  // namespace
}  // namespace kiln::import::tflite::testing
