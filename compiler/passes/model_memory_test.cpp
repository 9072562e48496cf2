// Memory planning on real models imported from ONNX: the ONNX backend test data (read in
// place from KILN_TESTDATA_DIR), the repository's example model, and the PyTorch models that
// the end-to-end fixture exports into the build tree (KILN_MODELS_DIR; skipped if absent).
// Prints naive vs planned arena sizes and checks planned <= 1.15 x the lower bound.
// This test links the ONNX importer: it sits at the driver's level of the dependency order.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "kiln/import/onnx/onnx_import.h"
#include "kiln/passes/pipeline.h"
#include "kiln/support/diagnostics.h"
#include "test_util.h"

namespace kiln::passes {
namespace {

namespace fs = std::filesystem;

void planModel(const fs::path& path, const char* label) {
  if (!fs::exists(path)) GTEST_SKIP() << path << " not found (exported by the e2e fixture)";
  for (bool inPlace : {false, true}) {
    PipelineOptions options;
    options.verifyBetweenPasses = true;
    options.inPlace = inPlace;
    ir::DispatchGraph dg = compileGraph(import::importOnnxFile(path), options);
    std::string name = std::string(label) + (inPlace ? ", in place" : "");
    testing::expectWithinBound(dg, name.c_str());
    testing::expectNoConflicts(dg);
  }
}

TEST(ModelMemory, ExampleDigits) {
  planModel(fs::path(KILN_SOURCE_DIR) / "examples/digits/model.onnx", "digits");
}

TEST(ModelMemory, BackendConv) {
  planModel(
      fs::path(KILN_TESTDATA_DIR) / "onnx-backend/pytorch-operator/test_operator_conv/model.onnx",
      "onnx-backend test_operator_conv");
}

// Every ONNX backend model that imports goes through the passes with both verifiers on;
// models the importer refuses (unsupported ops or dtypes) are counted, not failed.
TEST(ModelMemory, EveryImportableBackendModel) {
  fs::path root = fs::path(KILN_TESTDATA_DIR) / "onnx-backend";
  if (!fs::exists(root)) GTEST_SKIP() << root << " not found";
  std::vector<fs::path> models;
  for (const auto& suite : fs::directory_iterator(root))
    if (suite.is_directory())
      for (const auto& test : fs::directory_iterator(suite.path()))
        if (fs::exists(test.path() / "model.onnx")) models.push_back(test.path() / "model.onnx");
  std::sort(models.begin(), models.end());
  int planned = 0, refused = 0;
  for (const fs::path& path : models) {
    std::unique_ptr<ir::Graph> graph;
    try {
      graph = import::importOnnxFile(path);
    } catch (const CompileError&) {
      ++refused;
      continue;
    }
    std::string name = path.parent_path().filename().string();
    for (bool inPlace : {false, true}) {
      PipelineOptions options;
      options.verifyBetweenPasses = true;
      options.inPlace = inPlace;
      try {
        ir::DispatchGraph dg =
            compileGraph(inPlace ? import::importOnnxFile(path) : std::move(graph), options);
        EXPECT_LE(double(dg.memory.arenaBytes), 1.15 * double(dg.memory.lowerBound)) << name;
        testing::expectNoConflicts(dg);
      } catch (const CompileError& e) {
        // Only a genuinely dynamic shape may stop the passes.
        EXPECT_NE(std::string(e.what()).find("must be a compile-time constant"), std::string::npos)
            << name << ": " << e.what();
      }
    }
    ++planned;
  }
  std::printf("[ memory ] onnx-backend: %d models planned, %d refused by the importer\n", planned,
              refused);
  EXPECT_GT(planned, 50);
}

class TorchModel : public ::testing::TestWithParam<const char*> {};

TEST_P(TorchModel, PlannedArenaNearLowerBound) {
  planModel(fs::path(KILN_MODELS_DIR) / GetParam() / "model.onnx", GetParam());
}

INSTANTIATE_TEST_SUITE_P(Exported, TorchModel,
                         ::testing::Values("mnist_cnn", "mlp", "two_branch", "squeezenet1_1",
                                           "mobilenet_v2", "resnet18"));

}  // namespace
}  // namespace kiln::passes
