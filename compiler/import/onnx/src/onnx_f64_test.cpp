// Double (f64) tensors through the ONNX importer: inputs, outputs, initializers (typed and raw),
// Constant nodes and Cast to and from double become IR f64 values with the exact contents.
#include <gtest/gtest.h>

#include "kiln/import/onnx/onnx_import.h"
#include "kiln/ir/constant_data.h"
#include "kiln/support/diagnostics.h"
#include "onnx_test_models.h"

namespace kiln::import {
namespace {

using ir::DType;
using ir::OpKind;
using ir::TensorType;

std::unique_ptr<ir::Graph> importText(std::string_view text) {
  return importOnnxBytes(testing::modelFromText(text), {}, "test.onnx");
}

// pytorch-operator/test_operator_add_broadcast's form: two double inputs, broadcast Add.
TEST(OnnxF64, DoubleInputsAndOutput) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (double[2,3] x, double[3] b) => (double[2,3] y) { y = Add(x, b) })");
  ASSERT_EQ(graph->inputs().size(), 2u);
  EXPECT_EQ(graph->inputs()[0]->type(), TensorType(DType::F64, {2, 3}));
  EXPECT_EQ(graph->inputs()[1]->type(), TensorType(DType::F64, {3}));
  EXPECT_EQ(graph->outputs()[0].value->type(), TensorType(DType::F64, {2, 3}));
}

// Values float32 cannot hold (0.1, 1/3) keep every bit of their double.
TEST(OnnxF64, InitializerKeepsDoublePrecision) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (double[2] x) => (double[2] y) <double[2] w = {0.1, 0.3333333333333333}> {
      y = Mul(x, w) })");
  const ir::Value* w = graph->findValue("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->type(), TensorType(DType::F64, {2}));
  std::vector<double> values = ir::constantDoubles(w);
  EXPECT_EQ(values[0], 0.1);
  EXPECT_EQ(values[1], 0.3333333333333333);
}

TEST(OnnxF64, RawDataInitializer) {
  auto graph = importOnnxBytes(testing::modelFromTextRawData(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (double[3] x) => (double[3] y) <double[3] w = {-1.5, 1e-300, 2.5}> { y = Sub(x, w) })"),
                               {}, "test.onnx");
  const ir::Value* w = graph->findValue("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype(), DType::F64);
  EXPECT_EQ(ir::constantDoubles(w), (std::vector<double>{-1.5, 1e-300, 2.5}));
}

// A Constant node with a double value (the addconstant case adds one to a double input).
TEST(OnnxF64, ConstantNode) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (double[2] x) => (double[2] y) {
      c = Constant <value = double[1] {0.1}> ()
      y = Add(x, c) })");
  const ir::Value* c = graph->findValue("c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->type(), TensorType(DType::F64, {1}));
  EXPECT_EQ(ir::constantDoubles(c), (std::vector<double>{0.1}));
}

// Cast's `to` = 11 (ONNX DOUBLE) becomes kiln's DType number 8, both ways.
TEST(OnnxF64, CastToAndFromDouble) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) {
      d = Cast <to = 11> (x)
      e = Add(d, d)
      y = Cast <to = 1> (e) })");
  EXPECT_EQ(graph->findValue("d")->type(), TensorType(DType::F64, {2}));
  EXPECT_EQ(graph->findValue("e")->type(), TensorType(DType::F64, {2}));
  int casts = 0;
  for (const auto& op : graph->ops()) {
    if (op->kind() != OpKind::Cast) continue;
    ++casts;
    DType to = op->result(0)->dtype();
    EXPECT_EQ(op->attrs().getInt("to"), int64_t(to));
  }
  EXPECT_EQ(casts, 2);
}

// ConstantOfShape carries its fill value as a float attribute: exact values work, others are
// refused rather than rounded.
TEST(OnnxF64, ConstantOfShapeFill) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (double[2] x) => (double[2] y) {
      s = Constant <value = int64[1] {2}> ()
      c = ConstantOfShape <value = double[1] {0.5}> (s)
      y = Add(x, c) })");
  EXPECT_EQ(graph->findValue("c")->type(), TensorType(DType::F64, {2}));
  std::string message;
  try {
    importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (double[2] x) => (double[2] y) {
      s = Constant <value = int64[1] {2}> ()
      c = ConstantOfShape <value = double[1] {0.1}> (s)
      y = Add(x, c) })");
  } catch (const CompileError& e) {
    message = e.what();
  }
  EXPECT_EQ(message,
            "test.onnx: node #1 (ConstantOfShape): an f64 fill value that float32 cannot hold "
            "exactly is not supported");
}

}  // namespace
}  // namespace kiln::import
