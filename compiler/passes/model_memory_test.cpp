// Memory planning on real models imported from ONNX: the ONNX backend test data (read in
// place from KILN_TESTDATA_DIR), the repository's example model, and the PyTorch models that
// the end-to-end fixture exports into the build tree (KILN_MODELS_DIR; skipped if absent).
// Prints naive vs planned arena sizes and checks planned <= 1.15 x the lower bound.
// This test links the ONNX importer: it sits at the driver's level of the dependency order.
#include <filesystem>

#include "kiln/import/onnx/onnx_import.h"
#include "kiln/passes/pipeline.h"
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

TEST(ModelMemory, ExampleDigits) { planModel(fs::path(KILN_SOURCE_DIR) / "examples/digits/model.onnx", "digits"); }

TEST(ModelMemory, BackendConv) {
  planModel(fs::path(KILN_TESTDATA_DIR) / "onnx-backend/pytorch-operator/test_operator_conv/model.onnx",
            "onnx-backend test_operator_conv");
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
