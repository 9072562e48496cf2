// `kiln compile --fix-input` and f64 models end to end, on ONNX backend cases read in place
// (KILN_TESTDATA_DIR): a graph input that sets an Expand's target shape fixed at compile time,
// the flag's errors, and a model with double inputs compiled, described by `kiln dump` and
// run against values computed here in double precision.
#include <gtest/gtest.h>

#include <cstring>

#include "cli_runner.h"
#include "npy.h"

namespace kiln::clitest {
namespace {

std::string backendModel(const std::string& suiteCase) {
  return std::string(KILN_TESTDATA_DIR) + "/onnx-backend/" + suiteCase + "/model.onnx";
}

template <typename T>
cli::HostTensor tensor(cli::ElementType type, std::vector<int64_t> shape, std::vector<T> values) {
  cli::HostTensor t;
  t.type = type;
  t.shape = std::move(shape);
  t.data.resize(values.size() * sizeof(T));
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

class FixInput : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { dir_ = new std::string(makeTempDir("kiln-cli-fix-input-")); }
  static std::string path(const std::string& name) { return *dir_ + "/" + name; }
  static std::string* dir_;
};
std::string* FixInput::dir_ = nullptr;

// simple/test_expand_shape_model3: Y = Expand(X[1,3,1], shape) with shape an int64[3] input.
TEST_F(FixInput, ExpandTargetFromAGraphInput) {
  std::string model = backendModel("simple/test_expand_shape_model3");
  CliResult refused = runKiln({"compile", model, "-o", path("refused.kiln")});
  EXPECT_EQ(refused.exitCode, 1);
  EXPECT_NE(refused.err.find("--fix-input=shape=@VALUES.npy"), std::string::npos) << refused.err;

  cli::writeNpyFile(path("shape.npy"), tensor<int64_t>(cli::ElementType::I64, {3}, {3, 1, 3}));
  cli::writeNpyFile(path("x.npy"), tensor<float>(cli::ElementType::F32, {1, 3, 1}, {1, 2, 3}));
  std::vector<float> y;  // y[i][j][k] = x[j] (the model declares y as 3x3x3)
  for (int i = 0; i < 3; ++i)
    for (float v : {1.0f, 2.0f, 3.0f})
      for (int k = 0; k < 3; ++k) y.push_back(v);
  cli::writeNpyFile(path("y.npy"), tensor<float>(cli::ElementType::F32, {3, 3, 3}, y));

  CliResult r = runKiln(
      {"compile", model, "-o", path("expand.kiln"), "--fix-input=shape=@" + path("shape.npy")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("input 'shape' is fixed to the i64[3] values of " + path("shape.npy") +
                       "; the artifact does not take it"),
            std::string::npos)
      << r.out;
  CliResult dump = runKiln({"dump", path("expand.kiln")});
  EXPECT_NE(dump.out.find("1 inputs, 1 outputs"), std::string::npos) << dump.out;
  // The function has no 'shape' input; DEBUG's note says why.
  EXPECT_NE(dump.out.find("note: input 'shape' fixed at compile time (--fix-input=shape=@" +
                          path("shape.npy") + ", i64[3])"),
            std::string::npos)
      << dump.out;
  EXPECT_EQ(dump.out.find("input  1"), std::string::npos) << dump.out;
  CliResult run = runKiln({"run", path("expand.kiln"), "--input=@" + path("x.npy"),
                           "--expected_output=@" + path("y.npy"), "--tolerance=0,0"});
  EXPECT_EQ(run.exitCode, 0) << run.err << run.out;
}

TEST_F(FixInput, Errors) {
  std::string model = backendModel("simple/test_expand_shape_model3");
  cli::writeNpyFile(path("shape3.npy"), tensor<int64_t>(cli::ElementType::I64, {3}, {2, 1, 3}));
  cli::writeNpyFile(path("shape2.npy"), tensor<int64_t>(cli::ElementType::I64, {2}, {1, 3}));
  cli::writeNpyFile(path("shape_i32.npy"), tensor<int32_t>(cli::ElementType::I32, {3}, {2, 1, 3}));
  std::vector<uint8_t> text = {'n', 'o', 't', ' ', 'n', 'p', 'y', '\n'};
  cli::writeFileBytes(path("shape.txt"), text);
  auto error = [&](const std::string& flag) {
    CliResult r = runKiln({"compile", model, "-o", path("bad.kiln"), flag});
    EXPECT_EQ(r.exitCode, 1) << flag;
    return r.err;
  };
  std::string flag = "--fix-input=shap=@" + path("shape3.npy");
  EXPECT_EQ(error(flag), "kiln: error: " + flag + ": " + model +
                             " has no input named 'shap' (its inputs: 'X', 'shape')\n");
  flag = "--fix-input=shape=@" + path("shape_i32.npy");
  EXPECT_EQ(error(flag), "kiln: error: " + flag + ": input 'shape' of " + model +
                             " has element type int64, but the values are i32; save them with "
                             "that element type\n");
  flag = "--fix-input=shape=@" + path("shape2.npy");
  EXPECT_EQ(error(flag), "kiln: error: " + flag + ": input 'shape' of " + model +
                             " has shape 3, but the values have shape 2\n");
  flag = "--fix-input=shape=@" + path("shape.txt");
  std::string notNpy = error(flag);
  EXPECT_EQ(notNpy.rfind("kiln: error: " + flag + ": '" + path("shape.txt") + "': ", 0), 0u)
      << notNpy;
  std::string tflite = std::string(KILN_TESTDATA_DIR) + "/tflite/models/op-tests/add0.tflite";
  flag = "--fix-input=shape=@" + path("shape3.npy");
  CliResult r = runKiln({"compile", tflite, "-o", path("bad.kiln"), flag});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.err, "kiln: error: " + flag +
                       ": --fix-input is supported for ONNX models only, not "
                       "for '" +
                       tflite + "'\n");
  EXPECT_EQ(error("--fix-input=shape"),
            "kiln: error: --fix-input=shape: expected NAME=@FILE.npy, e.g. "
            "--fix-input=shape=@shape.npy\n");
}

// pytorch-operator/test_operator_add_broadcast: two double inputs, Add with an opset-6 axis
// broadcast. Values float32 cannot hold must come back exactly.
TEST_F(FixInput, DoubleModelRunsInDoublePrecision) {
  std::string model = backendModel("pytorch-operator/test_operator_add_broadcast");
  CliResult r = runKiln({"compile", model, "-o", path("add.kiln")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  CliResult dump = runKiln({"dump", path("add.kiln")});
  EXPECT_NE(dump.out.find("kiln artifact, format 1.1"), std::string::npos) << dump.out;
  EXPECT_NE(dump.out.find("2x3xf64"), std::string::npos) << dump.out;
  std::vector<double> a = {0.1, 1e-300, 1e300, -2.5, 1.0 / 3.0, 7.0};
  std::vector<double> b = {0.2, 1.0, -1e300};
  std::vector<double> sum;
  for (size_t i = 0; i < a.size(); ++i) sum.push_back(a[i] + b[i % 3]);
  cli::writeNpyFile(path("a.npy"), tensor<double>(cli::ElementType::F64, {2, 3}, a));
  cli::writeNpyFile(path("b.npy"), tensor<double>(cli::ElementType::F64, {3}, b));
  cli::writeNpyFile(path("sum.npy"), tensor<double>(cli::ElementType::F64, {2, 3}, sum));
  CliResult run = runKiln({"run", path("add.kiln"), "--input=@" + path("a.npy"),
                           "--input=@" + path("b.npy"), "--expected_output=@" + path("sum.npy"),
                           "--tolerance=0,0", "--output=@" + path("out.npy")});
  EXPECT_EQ(run.exitCode, 0) << run.err << run.out;
  cli::HostTensor out = cli::readNpyFile(path("out.npy"));
  EXPECT_EQ(out.type, cli::ElementType::F64);
  ASSERT_EQ(out.elementCount(), 6u);
  EXPECT_EQ(out.elementAsDouble(0), 0.1 + 0.2);  // 0.30000000000000004
}

}  // namespace
}  // namespace kiln::clitest
