// Robustness: corrupted models (seeded byte mutations of real backend models and truncations)
// must end in a CompileError or a clean import — never a crash, a hang or another exception.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "kiln/import/onnx/onnx_import.h"
#include "kiln/support/diagnostics.h"

namespace kiln::import {
namespace {

namespace fs = std::filesystem;

const fs::path kBackendDir = fs::path(KILN_TESTDATA_DIR) / "onnx-backend";

std::string readBytes(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

// Imports `bytes`; returns "ok", "error" or fails the test on any other exception.
std::string tryImport(const std::string& bytes, const std::string& what) {
  try {
    importOnnxBytes(bytes, {}, "mutant.onnx");
    return "ok";
  } catch (const CompileError&) {
    return "error";
  } catch (const std::exception& error) {
    ADD_FAILURE() << what << ": non-CompileError exception: " << error.what();
    return "exception";
  }
}

class OnnxRobustness : public ::testing::TestWithParam<const char*> {};

TEST_P(OnnxRobustness, MutatedModelsNeverCrash) {
  std::string original = readBytes(kBackendDir / GetParam() / "model.onnx");
  ASSERT_FALSE(original.empty());
  std::mt19937 random(20261130);
  int errors = 0;
  for (int round = 0; round < 200; ++round) {
    std::string mutant = original;
    int flips = 1 + static_cast<int>(random() % 4);
    for (int i = 0; i < flips; ++i) {
      mutant[random() % mutant.size()] = static_cast<char>(random());
    }
    errors += tryImport(mutant, "mutation round " + std::to_string(round)) == "error";
  }
  for (size_t cut = 1; cut < original.size(); cut += 1 + original.size() / 50) {
    errors += tryImport(original.substr(0, cut), "truncated at " + std::to_string(cut)) == "error";
  }
  EXPECT_GT(errors, 0);
}

INSTANTIATE_TEST_SUITE_P(Backend, OnnxRobustness,
                         ::testing::Values("pytorch-converted/test_Conv2d",
                                           "pytorch-converted/test_BatchNorm2d_eval",
                                           "pytorch-converted/test_Softmax",
                                           "pytorch-operator/test_operator_view",
                                           "pytorch-operator/test_operator_chunk",
                                           "simple/test_expand_shape_model1"));

}  // namespace
}  // namespace kiln::import
