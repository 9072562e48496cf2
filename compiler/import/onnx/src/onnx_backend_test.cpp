// Import tests on ONNX's own backend test models (../shared/testdata/onnx-backend, read in
// place through KILN_TESTDATA_DIR). The sweep imports every model: each one must either
// import cleanly — with inputs and outputs matching the dtypes and dims of the reference
// tensors in test_data_set_0 — or fail with a CompileError naming the file. It never crashes.
// A few models are then checked in detail.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "kiln/import/onnx/onnx_import.h"
#include "kiln/ir/constant_data.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "kiln/support/diagnostics.h"
#include "onnx_test_models.h"

namespace kiln::import {
namespace {

namespace fs = std::filesystem;
using ir::DType;
using ir::OpKind;
using ir::TensorType;

const fs::path kBackendDir = fs::path(KILN_TESTDATA_DIR) / "onnx-backend";

// The IR dtype of an ONNX DataType number, written out independently of the importer.
std::optional<DType> referenceDType(int32_t onnxType) {
  static const std::map<int32_t, DType> kTypes = {
      {1, DType::F32}, {2, DType::U8},  {3, DType::I8},   {5, DType::I16},
      {6, DType::I32}, {7, DType::I64}, {9, DType::Bool}, {10, DType::F16},
      {11, DType::F64}};
  auto found = kTypes.find(onnxType);
  return found == kTypes.end() ? std::nullopt : std::optional<DType>(found->second);
}

std::vector<fs::path> backendModels() {
  std::vector<fs::path> models;
  for (const char* suite : {"pytorch-converted", "pytorch-operator", "simple"}) {
    fs::path dir = kBackendDir / suite;
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (fs::exists(entry.path() / "model.onnx")) models.push_back(entry.path());
    }
  }
  std::sort(models.begin(), models.end());
  return models;
}

// Compares the graph's inputs (or outputs) with test_data_set_0/<prefix>_N.pb.
void expectMatchesReference(const fs::path& testDir, const std::string& prefix,
                            const std::vector<const ir::Value*>& values) {
  fs::path dataDir = testDir / "test_data_set_0";
  size_t count = 0;
  while (fs::exists(dataDir / (prefix + "_" + std::to_string(count) + ".pb"))) ++count;
  ASSERT_EQ(values.size(), count) << testDir << ": " << prefix << " count";
  for (size_t i = 0; i < count; ++i) {
    auto info = testing::readTensorFileInfo(dataDir / (prefix + "_" + std::to_string(i) + ".pb"));
    std::optional<DType> dtype = referenceDType(info.onnxType);
    ASSERT_TRUE(dtype) << testDir << ": reference " << prefix << " " << i << " type";
    EXPECT_EQ(values[i]->type(), TensorType(*dtype, info.dims))
        << testDir << ": " << prefix << " " << i;
  }
}

std::string errorCategory(const std::string& message) {
  size_t at = message.find("unsupported operator '");
  if (at != std::string::npos) {
    size_t end = message.find('\'', at + 22);
    return "unsupported operator " + message.substr(at + 22, end - at - 22);
  }
  size_t colon = message.find(": ");
  return colon == std::string::npos ? message : message.substr(colon + 2);
}

TEST(OnnxBackend, SweepImportsOrRefusesEveryModel) {
  std::vector<fs::path> models = backendModels();
  ASSERT_GE(models.size(), 100u) << "backend test data missing under " << kBackendDir;
  size_t imported = 0;
  std::map<std::string, std::vector<std::string>> refused;  // category -> models
  for (const fs::path& testDir : models) {
    fs::path modelPath = testDir / "model.onnx";
    std::string name = testDir.parent_path().filename().string() + "/" +
                       testDir.filename().string();
    try {
      std::unique_ptr<ir::Graph> graph = importOnnxFile(modelPath);
      ++imported;
      std::vector<const ir::Value*> inputs(graph->inputs().begin(), graph->inputs().end());
      std::vector<const ir::Value*> outputs;
      for (const auto& output : graph->outputs()) outputs.push_back(output.value);
      expectMatchesReference(testDir, "input", inputs);
      expectMatchesReference(testDir, "output", outputs);
      // The imported graph prints in the IR text form and reads back identically.
      std::string text = ir::printGraph(*graph);
      std::unique_ptr<ir::Graph> reparsed = ir::parseGraph(text, name);
      ir::verifyGraph(*reparsed);
      EXPECT_EQ(ir::printGraph(*reparsed), text) << name;
    } catch (const CompileError& error) {
      std::string message = error.what();
      EXPECT_EQ(message.rfind(modelPath.string() + ": ", 0), 0u)
          << "error does not name the file: " << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      refused[errorCategory(message)].push_back(name);
    } catch (const std::exception& error) {
      ADD_FAILURE() << name << ": escaped as a non-CompileError exception: " << error.what();
    }
  }
  std::printf("[ sweep    ] %zu of %zu backend models import cleanly\n", imported, models.size());
  for (const auto& [category, names] : refused) {
    std::printf("[ refused  ] %3zu x %s (e.g. %s)\n", names.size(), category.c_str(),
                names.front().c_str());
  }
  // Regression guard: raise it when coverage grows.
  EXPECT_GE(imported, 95u);
}

std::unique_ptr<ir::Graph> importBackend(const std::string& relative) {
  return importOnnxFile(kBackendDir / relative / "model.onnx");
}

const ir::Op* onlyOp(const ir::Graph& graph, OpKind kind) {
  const ir::Op* found = nullptr;
  for (const auto& op : graph.ops()) {
    if (op->kind() == kind) {
      EXPECT_EQ(found, nullptr) << "more than one " << ir::opName(kind);
      found = op.get();
    }
  }
  return found;
}

TEST(OnnxBackend, SingleRelu) {
  auto graph = importBackend("simple/test_single_relu_model");
  ASSERT_EQ(graph->numOps(), 1u);
  EXPECT_EQ(graph->ops().front()->kind(), OpKind::Relu);
  EXPECT_EQ(graph->inputs()[0]->type(), graph->outputs()[0].value->type());
}

TEST(OnnxBackend, Conv2dWeightsAndAttributes) {
  auto graph = importBackend("pytorch-converted/test_Conv2d");
  const ir::Op* conv = onlyOp(*graph, OpKind::Conv);
  ASSERT_NE(conv, nullptr);
  ASSERT_TRUE(ir::isConstantValue(conv->operand(1)));
  // torch.nn.Conv2d(3, 4, (3, 2)) over a 2x3x7x5 input: 7-3+1 = 5 rows, 5-2+1 = 4 columns.
  EXPECT_EQ(conv->operand(1)->type(), TensorType(DType::F32, {4, 3, 3, 2}));
  EXPECT_EQ(conv->operand(0)->type(), TensorType(DType::F32, {2, 3, 7, 5}));
  EXPECT_EQ(conv->result()->type(), TensorType(DType::F32, {2, 4, 5, 4}));
  EXPECT_EQ(conv->attrs().getInts("kernel_shape"), (std::vector<int64_t>{3, 2}));
}

TEST(OnnxBackend, PReluMultiparamSlopeIsPerChannel) {
  auto graph = importBackend("pytorch-converted/test_PReLU_2d_multiparam");
  const ir::Op* prelu = onlyOp(*graph, OpKind::PRelu);
  ASSERT_NE(prelu, nullptr);
  const ir::Shape& x = prelu->operand(0)->shape();
  ASSERT_EQ(x.size(), 4u);
  EXPECT_EQ(prelu->operand(1)->shape(), (ir::Shape{x[1], 1, 1}));
}

TEST(OnnxBackend, BatchNormEval) {
  auto graph = importBackend("pytorch-converted/test_BatchNorm2d_eval");
  const ir::Op* bn = onlyOp(*graph, OpKind::BatchNormalization);
  ASSERT_NE(bn, nullptr);
  for (size_t i = 1; i < 5; ++i) EXPECT_TRUE(ir::isConstantValue(bn->operand(i)));
  EXPECT_EQ(bn->result()->type(), bn->operand(0)->type());
}

TEST(OnnxBackend, LinearBecomesGemm) {
  auto graph = importBackend("pytorch-converted/test_Linear");
  const ir::Op* gemm = onlyOp(*graph, OpKind::Gemm);
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->attrs().getInt("transB", 0), 1);
}

TEST(OnnxBackend, SequenceModelRefused) {
  fs::path path = kBackendDir / "simple/test_sequence_model1/model.onnx";
  try {
    importOnnxFile(path);
    FAIL() << "imported a sequence model";
  } catch (const CompileError& error) {
    EXPECT_NE(std::string(error.what()).find("unsupported operator 'Sequence"), std::string::npos)
        << error.what();
  }
}

TEST(OnnxBackend, GradientRefused) {
  fs::path path = kBackendDir / "simple/test_gradient_of_add/model.onnx";
  try {
    importOnnxFile(path);
    FAIL() << "imported a gradient model";
  } catch (const CompileError& error) {
    EXPECT_EQ(std::string(error.what()),
              path.string() + ": unsupported operator 'Gradient' (domain "
                              "'ai.onnx.preview.training', opset 1) at node 'my_gradient'; it "
                              "is a training op and kiln compiles inference graphs only: export "
                              "the model for inference (e.g. torch.onnx.export of model.eval()) "
                              "without gradient or optimizer nodes");
  }
}

}  // namespace
}  // namespace kiln::import
