// --fix-input in the importer: a graph input given values at compile time becomes a constant
// before shape inference (the Expand/Reshape target it feeds is then known) and is no longer an
// input; the values must match the input's element type and declared dims.
#include <gtest/gtest.h>

#include <cstring>

#include "kiln/import/onnx/onnx_import.h"
#include "kiln/ir/constant_data.h"
#include "kiln/support/diagnostics.h"
#include "onnx_test_models.h"

namespace kiln::import {
namespace {

using ir::DType;
using ir::TensorType;

FixedInput fixedInts(const std::string& name, std::vector<int64_t> values,
                     DType dtype = DType::I64) {
  FixedInput fixed;
  fixed.name = name;
  fixed.type = TensorType(dtype, {int64_t(values.size())});
  fixed.bytes = ir::makeConstantBytesInt(fixed.type, values);
  fixed.flag = "--fix-input=" + name + "=@v.npy";
  return fixed;
}

std::unique_ptr<ir::Graph> importFixed(std::string_view text, std::vector<FixedInput> fixed) {
  OnnxImportOptions options;
  options.fixedInputs = std::move(fixed);
  return importOnnxBytes(testing::modelFromText(text), options, "test.onnx");
}

std::string fixedError(std::string_view text, std::vector<FixedInput> fixed) {
  try {
    importFixed(text, std::move(fixed));
  } catch (const CompileError& e) {
    return e.what();
  }
  return "(no error)";
}

// simple/test_expand_shape_model*'s form: the Expand target is a graph input. Shape
// inference cannot know y's dims; with the input fixed it does.
constexpr const char* kExpand = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[3,1] x, int64[2] shape) => (float[?,?] y) { y = Expand(x, shape) })";

TEST(OnnxFixedInputs, ExpandTargetBecomesAConstant) {
  auto graph = importFixed(kExpand, {fixedInts("shape", {3, 4})});
  ASSERT_EQ(graph->inputs().size(), 1u);
  EXPECT_EQ(graph->inputs()[0]->name(), "x");
  const ir::Value* shape = graph->findValue("shape");
  ASSERT_NE(shape, nullptr);
  EXPECT_TRUE(shape->isConstant());
  EXPECT_EQ(ir::constantInts(shape), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(graph->outputs()[0].value->type(), TensorType(DType::F32, {3, 4}));
}

// Old models (IR version 3) list initializers among the inputs; the fixed one stays listed
// there and is a constant all the same.
TEST(OnnxFixedInputs, OldIrVersionKeepsTheInputListed) {
  auto graph = importFixed(R"(
    <ir_version: 3, opset_import: ["" : 8]>
    g (float[3,1] x, int64[2] shape) => (float[?,?] y) { y = Expand(x, shape) })",
                           {fixedInts("shape", {3, 2})});
  ASSERT_EQ(graph->inputs().size(), 1u);
  EXPECT_EQ(graph->outputs()[0].value->type(), TensorType(DType::F32, {3, 2}));
}

TEST(OnnxFixedInputs, UnknownInputName) {
  EXPECT_EQ(fixedError(kExpand, {fixedInts("shap", {3, 4})}),
            "--fix-input=shap=@v.npy: test.onnx has no input named 'shap' (its inputs: 'x', "
            "'shape')");
}

TEST(OnnxFixedInputs, ElementTypeMismatch) {
  EXPECT_EQ(fixedError(kExpand, {fixedInts("shape", {3, 4}, DType::I32)}),
            "--fix-input=shape=@v.npy: input 'shape' of test.onnx has element type int64, but "
            "the values are i32; save them with that element type");
}

TEST(OnnxFixedInputs, ShapeMismatch) {
  EXPECT_EQ(fixedError(kExpand, {fixedInts("shape", {1, 3, 4})}),
            "--fix-input=shape=@v.npy: input 'shape' of test.onnx has shape 2, but the values "
            "have shape 3");
}

TEST(OnnxFixedInputs, FixedTwice) {
  EXPECT_EQ(fixedError(kExpand, {fixedInts("shape", {3, 4}), fixedInts("shape", {3, 4})}),
            "--fix-input=shape=@v.npy: input 'shape' is fixed more than once");
}

// TopK's K and Resize's sizes as graph inputs: fixed, the output shapes are known.
TEST(OnnxFixedInputs, TopKAndResizeSizes) {
  auto graph = importFixed(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,5] x, int64[1] k) => (float[2,?] v, int64[2,?] i) {
      v, i = TopK <axis = 1> (x, k) })",
                           {fixedInts("k", {3})});
  EXPECT_EQ(graph->outputs()[0].value->type(), TensorType(DType::F32, {2, 3}));
  graph = importFixed(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,1,2,2] x, int64[4] sizes) => (float[1,1,?,?] y) {
      y = Resize <mode = "nearest"> (x, , , sizes) })",
                      {fixedInts("sizes", {1, 1, 4, 6})});
  EXPECT_EQ(graph->outputs()[0].value->type(), TensorType(DType::F32, {1, 1, 4, 6}));
}

// Symbolic dims take the values' dims; a double input can be fixed too.
TEST(OnnxFixedInputs, SymbolicDimsAndDoubles) {
  FixedInput scale;
  scale.name = "s";
  scale.type = TensorType(DType::F64, {2});
  double values[] = {0.5, 0.25};
  scale.bytes = ir::makeConstantBytes(scale.type, values);
  scale.flag = "--fix-input=s=@s.npy";
  auto graph = importFixed(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (double[2] x, double[N] s) => (double[2] y) { y = Mul(x, s) })",
                           {scale});
  ASSERT_EQ(graph->inputs().size(), 1u);
  EXPECT_EQ(ir::constantDoubles(graph->findValue("s")), (std::vector<double>{0.5, 0.25}));
}

}  // namespace
}  // namespace kiln::import
