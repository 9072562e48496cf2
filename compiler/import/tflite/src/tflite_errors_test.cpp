// Every user-facing error of the TFLite importer, message checked exactly, and robustness:
// truncated and byte-mutated real models end in a clean import or a CompileError, never a
// crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "kiln/import/tflite/tflite_import.h"
#include "kiln/support/diagnostics.h"
#include "tflite_test_models.h"

namespace kiln::import::tflite::testing {
namespace {

std::string errorOf(const std::string& bytes, const std::string& name = "m.tflite") {
  try {
    importTfliteBytes(bytes, {}, name);
  } catch (const CompileError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

const std::filesystem::path kKws = std::filesystem::path(KILN_TESTDATA_DIR) / "tflite" / "models" /
                                   "mlperf-tiny" / "keyword_spotting__kws_ref_model.tflite";

// x [1,4] -> op -> y [1,4]
TestModel oneOp(int32_t code, fb::TensorType type = fb::TensorType::FLOAT32,
                std::string custom = "") {
  TestModel m;
  m.tensors = {{"x", type, {1, 4}}, {"y", type, {1, 4}}};
  m.operators = {{code, {0}, {1}}};
  m.operators[0].customCode = custom;
  m.inputs = {0};
  m.outputs = {1};
  return m;
}

TEST(TfliteErrors, MissingFile) {
  try {
    importTfliteFile("/nonexistent/model.tflite");
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(),
                 "/nonexistent/model.tflite: cannot open TFLite model: No such file or directory");
  }
}

TEST(TfliteErrors, TooShort) {
  EXPECT_EQ(errorOf("abc"),
            "m.tflite: not a TFLite model: the file is 3 bytes long, too short for a flatbuffer");
}

TEST(TfliteErrors, WrongIdentifier) {
  EXPECT_EQ(errorOf(std::string("\x08\x00\x00\x00ONNX\x00\x00\x00\x00", 12)),
            "m.tflite: not a TFLite model: file identifier 'ONNX', expected 'TFL3'");
}

TEST(TfliteErrors, TruncatedModel) {
  if (!std::filesystem::exists(kKws)) GTEST_SKIP() << "no " << kKws;
  std::string bytes = readFile(kKws);
  EXPECT_EQ(errorOf(bytes.substr(0, bytes.size() / 2), "kws.tflite"),
            "kws.tflite: corrupt or truncated TFLite model: the flatbuffer failed verification");
}

TEST(TfliteErrors, UnsupportedOperator) {
  EXPECT_EQ(errorOf(buildTflite(oneOp(16))),
            "m.tflite: unsupported TFLite operator 'LSTM' (builtin code 16) at operator #0");
  // Codes above 127 live in the wide field only.
  EXPECT_EQ(errorOf(buildTflite(oneOp(150))),
            "m.tflite: unsupported TFLite operator 'GELU' (builtin code 150) at operator #0");
}

TEST(TfliteErrors, CustomOperator) {
  EXPECT_EQ(
      errorOf(buildTflite(oneOp(32, fb::TensorType::FLOAT32, "TFLite_Detection_PostProcess"))),
      "m.tflite: unsupported TFLite custom operator 'TFLite_Detection_PostProcess' at operator #0");
}

TEST(TfliteErrors, SchemaVersion) {
  TestModel m = oneOp(19);
  m.version = 2;
  EXPECT_EQ(errorOf(buildTflite(m)), "m.tflite: TFLite schema version 2; kiln reads version 3");
}

TEST(TfliteErrors, UnsupportedTensorType) {
  EXPECT_EQ(errorOf(buildTflite(oneOp(19, fb::TensorType::FLOAT64))),
            "m.tflite: tensor 'x' (#0) has type FLOAT64, which kiln does not support");
}

TEST(TfliteErrors, HugeTensor) {
  TestModel m = oneOp(19);
  m.tensors[0].shape = m.tensors[1].shape = {1 << 30, 1 << 30, 4};
  EXPECT_EQ(errorOf(buildTflite(m)),
            "m.tflite: tensor 'x' (#0) has shape [1073741824,1073741824,4], more than 2^40 "
            "elements; kiln does not support tensors that large");
}

TEST(TfliteErrors, ZeroStride) {
  TestModel m;
  m.tensors = {{"x", fb::TensorType::FLOAT32, {1, 4, 4, 1}},
               {"w", fb::TensorType::FLOAT32, {1, 1, 1, 1}, floatBytes({1})},
               {"y", fb::TensorType::FLOAT32, {1, 4, 4, 1}}};
  m.operators = {{3,
                  {0, 1, -1},
                  {2},
                  fb::BuiltinOptions::Conv2DOptions,
                  [](flatbuffers::FlatBufferBuilder& b) {
                    return fb::CreateConv2DOptions(b, fb::Padding::SAME, 0, 1).Union();
                  }}};
  m.inputs = {0};
  m.outputs = {2};
  EXPECT_EQ(errorOf(buildTflite(m)),
            "m.tflite: operator #0 (CONV_2D): strides (1, 0), dilations (1, 1) and window (1, 1) "
            "must be positive");
}

TEST(TfliteErrors, HybridFullyConnected) {
  TestModel m;
  m.tensors = {{"x", fb::TensorType::FLOAT32, {1, 2}},
               {"w", fb::TensorType::INT8, {3, 2}, int8Bytes({1, 2, 3, 4, 5, 6}), {0.5f}, {0}},
               {"y", fb::TensorType::FLOAT32, {1, 3}}};
  m.operators = {{9, {0, 1, -1}, {2}}};
  m.inputs = {0};
  m.outputs = {2};
  EXPECT_EQ(errorOf(buildTflite(m)),
            "m.tflite: operator #0 (FULLY_CONNECTED): the weights tensor has type i8; float "
            "operators need f32 (hybrid quantization is not supported)");
}

TEST(TfliteErrors, ConstantOfTheWrongSize) {
  TestModel m;
  m.tensors = {{"x", fb::TensorType::FLOAT32, {1, 2}},
               {"w", fb::TensorType::FLOAT32, {3, 2}, floatBytes({1, 2, 3})},
               {"y", fb::TensorType::FLOAT32, {1, 3}}};
  m.operators = {{9, {0, 1, -1}, {2}}};
  m.inputs = {0};
  m.outputs = {2};
  EXPECT_EQ(errorOf(buildTflite(m)),
            "m.tflite: tensor 'w' (#1) has 12 bytes of data; its type f32[3,2] needs 24");
}

TEST(TfliteErrors, TensorUsedBeforeItIsProduced) {
  TestModel m;
  m.tensors = {{"x", fb::TensorType::FLOAT32, {1, 4}},
               {"t", fb::TensorType::FLOAT32, {1, 4}},
               {"y", fb::TensorType::FLOAT32, {1, 4}}};
  m.operators = {{19, {1}, {2}}, {19, {0}, {1}}};
  m.inputs = {0};
  m.outputs = {2};
  EXPECT_EQ(errorOf(buildTflite(m)),
            "m.tflite: operator #0 (RELU): input tensor 't' (#1) is used before any operator "
            "produces it");
}

TEST(TfliteErrors, TensorIndexOutOfRange) {
  TestModel m = oneOp(19);
  m.operators[0].inputs = {7};
  EXPECT_EQ(errorOf(buildTflite(m)),
            "m.tflite: operator #0 (RELU) refers to tensor #7, which does not exist");
}

TEST(TfliteErrors, OutputShapeDisagreesWithTheOperator) {
  TestModel m = oneOp(19);
  m.tensors[1].shape = {1, 5};
  EXPECT_EQ(errorOf(buildTflite(m)),
            "m.tflite: operator #0 (RELU): output tensor 'y' is declared f32[1,5] but the "
            "operator computes f32[1,4]");
}

// Truncations and random byte mutations of a real model: a clean import or a CompileError.
TEST(TfliteErrors, MutatedModelsNeverCrash) {
  if (!std::filesystem::exists(kKws)) GTEST_SKIP() << "no " << kKws;
  std::string bytes = readFile(kKws);
  int refused = 0, imported = 0;
  auto attempt = [&](const std::string& data) {
    try {
      importTfliteBytes(data, {}, "kws.tflite");
      ++imported;
    } catch (const CompileError&) {
      ++refused;
    }
  };
  for (size_t cut = 0; cut < bytes.size(); cut += bytes.size() / 50 + 1)
    attempt(bytes.substr(0, cut));
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) {
    std::string mutated = bytes;
    int flips = 1 + int(rng() % 8);
    // Mostly the flatbuffer's tables and vectors (the start and the end of the file), some
    // anywhere.
    for (int f = 0; f < flips; ++f) {
      size_t at = rng() % 3 == 0 ? rng() % mutated.size()
                                 : (rng() % 2 ? rng() % 2048 : mutated.size() - 1 - rng() % 4096);
      mutated[at] = char(rng());
    }
    attempt(mutated);
  }
  EXPECT_GT(refused, 50);
  std::printf("mutations: %d imported, %d refused\n", imported, refused);
}

}  // namespace
}  // namespace kiln::import::tflite::testing
