// Translation tests: tiny models written in ONNX's text syntax, imported, and checked op by
// op (kinds, operands, attributes, types, constant contents).
#include <gtest/gtest.h>

#include <cstring>

#include "kiln/import/onnx/onnx_import.h"
#include "kiln/ir/constant_data.h"
#include "kiln/support/diagnostics.h"
#include "onnx_test_models.h"

namespace kiln::import {
namespace {

using ir::DType;
using ir::OpKind;
using ir::TensorType;
using testing::modelFromText;
using testing::modelFromTextRawData;

std::unique_ptr<ir::Graph> importText(std::string_view text, OnnxImportOptions options = {}) {
  return importOnnxBytes(modelFromText(text), options, "test.onnx");
}

std::vector<OpKind> opKinds(const ir::Graph& graph) {
  std::vector<OpKind> kinds;
  for (const auto& op : graph.ops()) kinds.push_back(op->kind());
  return kinds;
}

const ir::Op* findOp(const ir::Graph& graph, OpKind kind) {
  for (const auto& op : graph.ops()) {
    if (op->kind() == kind) return op.get();
  }
  return nullptr;
}

TEST(OnnxImport, SingleRelu) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,4] x) => (float[1,4] y) { y = Relu(x) })");
  ASSERT_EQ(graph->inputs().size(), 1u);
  EXPECT_EQ(graph->inputs()[0]->name(), "x");
  EXPECT_EQ(graph->inputs()[0]->type(), TensorType(DType::F32, {1, 4}));
  EXPECT_EQ(opKinds(*graph), std::vector<OpKind>{OpKind::Relu});
  ASSERT_EQ(graph->outputs().size(), 1u);
  EXPECT_EQ(graph->outputs()[0].name, "y");
  EXPECT_EQ(graph->outputs()[0].value->type(), TensorType(DType::F32, {1, 4}));
  const ir::Op* relu = graph->outputs()[0].value->definingOp();
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->operand(0), graph->inputs()[0]);
  EXPECT_EQ(relu->source().opType, "Relu");
}

TEST(OnnxImport, NodeNameIsKeptAsSource) {
  auto graph = importOnnxBytes(testing::modelFromTextNamed(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) { y = Sigmoid(x) })", {"act1"}));
  EXPECT_EQ(graph->ops().front()->kind(), OpKind::Sigmoid);
  EXPECT_EQ(graph->ops().front()->source(), (ir::SourceInfo{"act1", "Sigmoid"}));
}

// Initializers become constants with their contents, from typed fields and from raw_data.
TEST(OnnxImport, InitializersTypedAndRaw) {
  const char* text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[2,3] y)
      <float[3] b = {0.5, -1.0, 2.0}> { y = Add(x, b) })";
  for (const std::string& bytes : {modelFromText(text), modelFromTextRawData(text)}) {
    auto graph = importOnnxBytes(bytes);
    ASSERT_EQ(graph->constants().size(), 1u);
    const ir::Value* b = graph->constants()[0];
    EXPECT_EQ(b->name(), "b");
    EXPECT_EQ(b->type(), TensorType(DType::F32, {3}));
    EXPECT_EQ(ir::constantDoubles(b), (std::vector<double>{0.5, -1.0, 2.0}));
    const ir::Op* add = findOp(*graph, OpKind::Add);
    ASSERT_NE(add, nullptr);
    EXPECT_EQ(add->operand(1), b);
    EXPECT_EQ(add->result()->type(), TensorType(DType::F32, {2, 3}));
  }
}

// Every IR dtype arrives from the typed field ONNX stores it in.
TEST(OnnxImport, InitializerDtypes) {
  auto graph = importOnnxBytes(testing::modelFromTextRetyped(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1] x) => (float[1] y, int8[2] a, uint8[2] b, int16[2] c, int32[2] d, int64[2] e,
                       bool[2] f, float16[1] h)
      <int8[2] a0 = {-3, 4}, uint8[2] b0 = {200, 7}, int16[2] c0 = {-300, 5},
       int32[2] d0 = {-70000, 9}, int64[2] e0 = {-5000000000, 11}, bool[2] f0 = {1, 0},
       int32[1] h0 = {15360}>
    { y = Identity(x)  a = Identity(a0)  b = Identity(b0)  c = Identity(c0)  d = Identity(d0)
      e = Identity(e0)  f = Identity(f0)  h = Identity(h0) })",
                                                              "h0", /*FLOAT16=*/10));
  auto constant = [&](const std::string& name) { return graph->findValue(name); };
  EXPECT_EQ(constant("a0")->type(), TensorType(DType::I8, {2}));
  EXPECT_EQ(ir::constantInts(constant("a0")), (std::vector<int64_t>{-3, 4}));
  EXPECT_EQ(constant("b0")->dtype(), DType::U8);
  EXPECT_EQ(ir::constantInts(constant("b0")), (std::vector<int64_t>{200, 7}));
  EXPECT_EQ(constant("c0")->dtype(), DType::I16);
  EXPECT_EQ(ir::constantInts(constant("c0")), (std::vector<int64_t>{-300, 5}));
  EXPECT_EQ(constant("d0")->dtype(), DType::I32);
  EXPECT_EQ(ir::constantInts(constant("d0")), (std::vector<int64_t>{-70000, 9}));
  EXPECT_EQ(constant("e0")->dtype(), DType::I64);
  EXPECT_EQ(ir::constantInts(constant("e0")), (std::vector<int64_t>{-5000000000, 11}));
  EXPECT_EQ(constant("f0")->dtype(), DType::Bool);
  EXPECT_EQ(constant("f0")->constantBytes(), (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(constant("h0")->dtype(), DType::F16);
  EXPECT_EQ(ir::constantDoubles(constant("h0")), (std::vector<double>{1.0}));  // 0x3c00
}

TEST(OnnxImport, ConstantNodes) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y, float[2] ys, int64[3] i, int64[3] ij, float[2] z) {
      t = Constant <value = float[2] {1.5, 2.5}> ()
      y = Add(x, t)
      s = Constant <value_float = 0.25> ()
      ys = Add(x, s)
      i = Constant <value_ints = [4, 5, 6]> ()
      j = Constant <value_int = -2> ()
      ij = Add(i, j)
      f = Constant <value_floats = [3.0, 4.0]> ()
      z = Mul(x, f) })");
  EXPECT_EQ(opKinds(*graph), (std::vector<OpKind>{OpKind::Add, OpKind::Add, OpKind::Add,
                                                  OpKind::Mul}));
  EXPECT_EQ(ir::constantDoubles(graph->findValue("t")), (std::vector<double>{1.5, 2.5}));
  EXPECT_EQ(graph->findValue("s")->type(), TensorType(DType::F32, {}));
  EXPECT_EQ(ir::constantDoubles(graph->findValue("s")), (std::vector<double>{0.25}));
  EXPECT_EQ(graph->findValue("i")->type(), TensorType(DType::I64, {3}));
  EXPECT_EQ(ir::constantInts(graph->findValue("i")), (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(graph->findValue("j")->type(), TensorType(DType::I64, {}));
  EXPECT_EQ(ir::constantInts(graph->findValue("j")), (std::vector<int64_t>{-2}));
  EXPECT_EQ(ir::constantDoubles(graph->findValue("f")), (std::vector<double>{3.0, 4.0}));
}

// Double constants (torch's old-opset shape arithmetic: 2.0 Cast to int64) are f64
// constants, initializers and Constant nodes alike; the shape they make is still known.
TEST(OnnxImport, DoubleConstantsAreF64) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,6] x) => (float[2,3,2] y) <double[1] w = {2.0}> {
      c = Constant <value = double[2] {2.0, 3.0}> ()
      a = Cast <to = 7> (c)
      b = Cast <to = 7> (w)
      s = Concat <axis = 0> (a, b)
      y = Reshape(x, s) })");
  EXPECT_EQ(graph->findValue("c")->type(), TensorType(DType::F64, {2}));
  EXPECT_EQ(ir::constantDoubles(graph->findValue("c")), (std::vector<double>{2.0, 3.0}));
  EXPECT_EQ(graph->findValue("w")->type(), TensorType(DType::F64, {1}));
  EXPECT_EQ(graph->findValue("y")->type(), TensorType(DType::F32, {2, 3, 2}));
}

// Cast's `to` is an ONNX DataType number; the IR wants a kiln DType number.
TEST(OnnxImport, CastTargetDtype) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[3] x) => (int64[3] y, float16[3] h) { y = Cast <to = 7> (x)  h = Cast <to = 10> (x) })");
  auto ops = graph->opList();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0]->attrs().getInt("to"), static_cast<int64_t>(DType::I64));
  EXPECT_EQ(ops[0]->result()->type(), TensorType(DType::I64, {3}));
  EXPECT_EQ(ops[1]->attrs().getInt("to"), static_cast<int64_t>(DType::F16));
}

TEST(OnnxImport, ConstantOfShapeValue) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (int64[2,3] y, float[4] z) {
      s = Constant <value = int64[2] {2, 3}> ()
      y = ConstantOfShape <value = int64[1] {7}> (s)
      s2 = Constant <value = int64[1] {4}> ()
      z = ConstantOfShape (s2) })");
  auto ops = graph->opList();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0]->kind(), OpKind::ConstantOfShape);
  EXPECT_EQ(ops[0]->attrs().getInt("dtype"), static_cast<int64_t>(DType::I64));
  EXPECT_EQ(ops[0]->attrs().getInt("value"), 7);
  EXPECT_EQ(ops[0]->result()->type(), TensorType(DType::I64, {2, 3}));
  EXPECT_EQ(ops[1]->attrs().getInt("dtype"), static_cast<int64_t>(DType::F32));
  EXPECT_EQ(ops[1]->attrs().getFloat("value"), 0.0f);
  EXPECT_EQ(ops[1]->result()->type(), TensorType(DType::F32, {4}));
}

// Clip in its opset-6 attribute form: the version converter makes min/max inputs.
TEST(OnnxImport, ClipAttributeFormBecomesInputs) {
  auto graph = importText(R"(
    <ir_version: 3, opset_import: ["" : 6]>
    g (float[2,2] x) => (float[2,2] y) { y = Clip <min = -1.0, max = 6.0> (x) })");
  const ir::Op* clip = findOp(*graph, OpKind::Clip);
  ASSERT_NE(clip, nullptr);
  ASSERT_EQ(clip->numOperands(), 3u);
  ASSERT_TRUE(ir::isConstantValue(clip->operand(1)));
  ASSERT_TRUE(ir::isConstantValue(clip->operand(2)));
  EXPECT_EQ(ir::constantDoubles(clip->operand(1)), (std::vector<double>{-1.0}));
  EXPECT_EQ(ir::constantDoubles(clip->operand(2)), (std::vector<double>{6.0}));
}

TEST(OnnxImport, ClipInputFormWithOnlyMax) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[3] x) => (float[3] y) <float hi = {6.0}> { y = Clip(x, , hi) })");
  const ir::Op* clip = findOp(*graph, OpKind::Clip);
  ASSERT_NE(clip, nullptr);
  EXPECT_EQ(clip->operand(1), nullptr);
  EXPECT_EQ(clip->operand(2), graph->findValue("hi"));
}

// Softmax from opset 11 (coerce to 2-D at `axis`) is converted to opset-13 semantics.
TEST(OnnxImport, SoftmaxOldOpsetConverted) {
  auto graph = importText(R"(
    <ir_version: 7, opset_import: ["" : 11]>
    g (float[2,3,4] x) => (float[2,3,4] y) { y = Softmax <axis = 1> (x) })");
  const ir::Op* softmax = findOp(*graph, OpKind::Softmax);
  ASSERT_NE(softmax, nullptr);
  EXPECT_EQ(graph->outputs()[0].value->type(), TensorType(DType::F32, {2, 3, 4}));
  // Opset 11 normalizes over dims 1.. together: the converter flattens to [2, 12] first.
  EXPECT_EQ(softmax->operand(0)->type().shape, (ir::Shape{2, 12}));
}

// Opset-6 broadcasting at an explicit axis: b (3) aligned at dim 1 of x becomes (3, 1) under
// numpy broadcasting (libonnx's own 6 -> 7 adapter gets this wrong and refuses the model).
// Operands already aligned with the trailing dims stay as they are.
TEST(OnnxImport, LegacyBroadcastAxis) {
  auto graph = importText(R"(
    <ir_version: 3, opset_import: ["" : 6]>
    g (float[2,3,4] x, float[3] b, float[4] c, float[3,4] d)
      => (float[2,3,4] y, float[2,3,4] z, float[2,3,4] w) {
      y = Add <broadcast = 1, axis = 1> (x, b)
      z = Mul <broadcast = 1, axis = 2> (x, c)
      w = Sub <broadcast = 1, axis = 1> (x, d) })");
  const ir::Op* add = findOp(*graph, OpKind::Add);
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->operand(1)->type(), TensorType(DType::F32, {3, 1}));
  const ir::Op* unsqueeze = add->operand(1)->definingOp();
  ASSERT_NE(unsqueeze, nullptr);
  EXPECT_EQ(unsqueeze->kind(), OpKind::Unsqueeze);
  EXPECT_EQ(unsqueeze->operand(0), graph->findValue("b"));
  EXPECT_EQ(findOp(*graph, OpKind::Mul)->operand(1), graph->findValue("c"));
  EXPECT_EQ(findOp(*graph, OpKind::Sub)->operand(1), graph->findValue("d"));
  for (const auto& output : graph->outputs()) {
    EXPECT_EQ(output.value->type(), TensorType(DType::F32, {2, 3, 4})) << output.name;
  }
}

TEST(OnnxImport, BatchNormFromOpset9) {
  auto graph = importText(R"(
    <ir_version: 4, opset_import: ["" : 9]>
    g (float[1,2,3,3] x) => (float[1,2,3,3] y)
      <float[2] s = {1.0, 2.0}, float[2] b = {0.0, 1.0}, float[2] m = {0.5, 0.5},
       float[2] v = {1.0, 4.0}>
    { y = BatchNormalization <epsilon = 0.001> (x, s, b, m, v) })");
  const ir::Op* bn = findOp(*graph, OpKind::BatchNormalization);
  ASSERT_NE(bn, nullptr);
  EXPECT_EQ(bn->numOperands(), 5u);
  EXPECT_FLOAT_EQ(bn->attrs().getFloat("epsilon"), 0.001f);
  EXPECT_FALSE(bn->attrs().has("momentum"));
  EXPECT_EQ(bn->result()->type(), TensorType(DType::F32, {1, 2, 3, 3}));
}

// torch's shape sub-graph: Shape -> Gather -> Unsqueeze -> Concat -> Reshape. With a
// symbolic batch fixed by --input-shape, data propagation makes the Reshape static.
TEST(OnnxImport, ShapeSubgraphWithInputShapeOverride) {
  OnnxImportOptions options;
  options.inputShapes.push_back(parseInputShape("x:2x3x4"));
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3,4] x) => (float[N,12] y) {
      shape = Shape(x)
      zero = Constant <value = int64[1] {0}> ()
      batch = Gather <axis = 0> (shape, zero)
      axes = Constant <value = int64[1] {1}> ()
      batch2 = Unsqueeze(batch, axes)
      batch1 = Squeeze(batch2, axes)
      minus1 = Constant <value = int64[1] {-1}> ()
      newShape = Concat <axis = 0> (batch1, minus1)
      y = Reshape(x, newShape) })", options);
  EXPECT_EQ(opKinds(*graph), (std::vector<OpKind>{OpKind::Shape, OpKind::Gather,
                                                  OpKind::Unsqueeze, OpKind::Squeeze,
                                                  OpKind::Concat, OpKind::Reshape}));
  EXPECT_EQ(graph->inputs()[0]->type(), TensorType(DType::F32, {2, 3, 4}));
  EXPECT_EQ(findOp(*graph, OpKind::Shape)->result()->type(), TensorType(DType::I64, {3}));
  EXPECT_EQ(findOp(*graph, OpKind::Gather)->result()->type(), TensorType(DType::I64, {1}));
  EXPECT_EQ(findOp(*graph, OpKind::Concat)->result()->type(), TensorType(DType::I64, {2}));
  EXPECT_EQ(graph->outputs()[0].value->type(), TensorType(DType::F32, {2, 12}));
}

// The same chain with a scalar Gather index, as torch exports it: ONNX 1.12's data
// propagation stops at the scalar, so the importer tracks the shape values itself and gives
// Reshape a constant shape operand.
TEST(OnnxImport, TorchShapeChainWithScalarGather) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3,4] x) => (float[N,2] y) <float[12,2] w = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                                          1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}> {
      shape = Shape(x)
      zero = Constant <value_int = 0> ()
      batch = Gather <axis = 0> (shape, zero)
      axes = Constant <value = int64[1] {0}> ()
      batch1 = Unsqueeze(batch, axes)
      minus1 = Constant <value = int64[1] {-1}> ()
      newShape = Concat <axis = 0> (batch1, minus1)
      flat = Reshape(x, newShape)
      y = MatMul(flat, w) })", OnnxImportOptions{{parseInputShape("x:5x3x4")}, {}});
  const ir::Op* reshape = findOp(*graph, OpKind::Reshape);
  ASSERT_NE(reshape, nullptr);
  ASSERT_TRUE(ir::isConstantValue(reshape->operand(1)));
  EXPECT_EQ(ir::constantInts(reshape->operand(1)), (std::vector<int64_t>{5, -1}));
  EXPECT_EQ(reshape->result()->type(), TensorType(DType::F32, {5, 12}));
  EXPECT_EQ(graph->outputs()[0].value->type(), TensorType(DType::F32, {5, 2}));
}

// torch's `x.view(x.size(0), x.size(1) * x.size(2))`: scalar Gathers multiplied.
TEST(OnnxImport, TorchShapeArithmetic) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3,4] x) => (float[N,12] y) {
      s = Shape(x)
      i0 = Constant <value_int = 0> ()
      i1 = Constant <value_int = 1> ()
      i2 = Constant <value_int = 2> ()
      d0 = Gather(s, i0)
      d1 = Gather(s, i1)
      d2 = Gather(s, i2)
      d12 = Mul(d1, d2)
      axes = Constant <value = int64[1] {0}> ()
      u0 = Unsqueeze(d0, axes)
      u12 = Unsqueeze(d12, axes)
      shape = Concat <axis = 0> (u0, u12)
      y = Reshape(x, shape) })", OnnxImportOptions{{parseInputShape("x:7x3x4")}, {}});
  const ir::Op* reshape = findOp(*graph, OpKind::Reshape);
  ASSERT_NE(reshape, nullptr);
  EXPECT_EQ(reshape->result()->type(), TensorType(DType::F32, {7, 12}));
}

// Shape -> Slice -> Concat -> Expand, and Div/Sub on the tracked values.
TEST(OnnxImport, TrackedShapeFeedsExpand) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,6] x, float[1,3] v) => (float[N,3] y, float[?,?] z) {
      s = Shape(x)
      starts = Constant <value = int64[1] {0}> ()
      ends = Constant <value = int64[1] {1}> ()
      n = Slice(s, starts, ends)
      three = Constant <value = int64[1] {3}> ()
      target = Concat <axis = 0> (n, three)
      y = Expand(v, target)
      two = Constant <value = int64[1] {2}> ()
      one = Constant <value = int64[1] {1}> ()
      six = Slice(s, ends, two)
      half = Div(six, three)
      cols = Sub(half, one)
      minus1 = Constant <value = int64[1] {-1}> ()
      flat = Concat <axis = 0> (minus1, cols)
      z = Reshape(x, flat) })", OnnxImportOptions{{parseInputShape("x:4x6")}, {}});
  EXPECT_EQ(graph->findValue("y")->type(), TensorType(DType::F32, {4, 3}));
  // cols = 6 / 3 - 1 = 1: x (4x6) reshaped to (24, 1).
  EXPECT_EQ(graph->findValue("z")->type(), TensorType(DType::F32, {24, 1}));
}

// torch's `m.expand(b, 4, s, s)` writes the target as Where(Equal(shape, ones * -1), ones,
// shape) with ones = ConstantOfShape(...): ONNX 1.12 leaves the result's dims unknown.
TEST(OnnxImport, TorchExpandChainWithWhereAndConstantOfShape) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (bool[1,1,1,3] m) => (bool[?,?,?,?] y) {
      shape = Constant <value = int64[4] {1, 4, 3, 3}> ()
      four = Constant <value = int64[1] {4}> ()
      ones = ConstantOfShape <value = int64[1] {1}> (four)
      minus = Constant <value = int64 {-1}> ()
      neg = Mul(ones, minus)
      unchanged = Equal(shape, neg)
      target = Where(unchanged, ones, shape)
      y = Expand(m, target) })");
  EXPECT_EQ(graph->findValue("y")->type(), TensorType(DType::Bool, {1, 4, 3, 3}));
}

// torch at opsets 7/8 (ShuffleNet v2's channel shuffle; Constant had float types only): shape
// dims as double Constants, Cast to int64, then Unsqueeze -> Concat -> Reshape, which ONNX 1.12
// leaves with an unknown rank. (Opset 9 here so that the int64 parts can be Constants too.)
TEST(OnnxImport, TorchDoubleConstantsCastIntoAShape) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 9]>
    g (float[1,4,3,3] x) => (float[?,?,?,?,?] y) {
      two = Constant <value = double {2.0}> ()
      d = Cast <to = 7> (two)
      u = Unsqueeze <axes = [0]> (d)
      head = Constant <value = int64[1] {1}> ()
      tail = Constant <value = int64[3] {2, 3, 3}> ()
      shape = Concat <axis = 0> (head, u, tail)
      y = Reshape(x, shape) })");
  EXPECT_EQ(graph->findValue("y")->type(), TensorType(DType::F32, {1, 2, 2, 3, 3}));
}

TEST(OnnxImport, DropoutAndIdentity) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y, bool[4] mask) {
      d, mask = Dropout(x)
      y = Identity(d) })");
  const ir::Op* dropout = findOp(*graph, OpKind::Dropout);
  ASSERT_NE(dropout, nullptr);
  EXPECT_EQ(dropout->numResults(), 2u);
  EXPECT_EQ(dropout->result(1)->type(), TensorType(DType::Bool, {4}));
  EXPECT_NE(findOp(*graph, OpKind::Identity), nullptr);
}

// PRelu before opset 7 applied a (C) slope per channel; the converter keeps the (C) shape,
// so the importer reshapes it to (C, 1, 1).
TEST(OnnxImport, OldOpsetPReluSlopeBecomesPerChannel) {
  auto graph = importText(R"(
    <ir_version: 3, opset_import: ["" : 6]>
    g (float[1,3,2,2] x, float[3] slope) => (float[1,3,2,2] y)
      <float[3] slope = {0.1, 0.2, 0.3}>
    { y = PRelu(x, slope) })");
  const ir::Op* prelu = findOp(*graph, OpKind::PRelu);
  ASSERT_NE(prelu, nullptr);
  EXPECT_EQ(prelu->operand(1)->type(), TensorType(DType::F32, {3, 1, 1}));
  EXPECT_EQ(ir::constantDoubles(prelu->operand(1)).size(), 3u);
}

TEST(OnnxImport, ModernPReluSlopeUnchanged) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,3,2,2] x) => (float[1,3,2,2] y) <float[3,1,1] slope = {0.1, 0.2, 0.3}>
    { y = PRelu(x, slope) })");
  EXPECT_EQ(findOp(*graph, OpKind::PRelu)->operand(1), graph->findValue("slope"));
}

// A small CNN + MLP head touching most of the ops torch exports.
TEST(OnnxImport, CnnOps) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,1,4,4] x) => (float[1,3] y)
      <float[2,1,3,3] w = {1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9},
       float[2] wb = {0.5, -0.5},
       float[3,8] fc = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8},
       float[3] fcb = {0, 1, 2}> {
      c = Conv <pads = [1, 1, 1, 1], kernel_shape = [3, 3]> (x, w, wb)
      r = Relu(c)
      p = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (r)
      a = AveragePool <kernel_shape = [1, 1]> (p)
      f = Flatten <axis = 1> (a)
      g1 = Gemm <transB = 1> (f, fc, fcb)
      l = LeakyRelu <alpha = 0.2> (g1)
      t = Tanh(l)
      y = Softmax(t) })");
  EXPECT_EQ(opKinds(*graph),
            (std::vector<OpKind>{OpKind::Conv, OpKind::Relu, OpKind::MaxPool,
                                 OpKind::AveragePool, OpKind::Flatten, OpKind::Gemm,
                                 OpKind::LeakyRelu, OpKind::Tanh, OpKind::Softmax}));
  const ir::Op* conv = findOp(*graph, OpKind::Conv);
  EXPECT_EQ(conv->attrs().getInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(conv->result()->type(), TensorType(DType::F32, {1, 2, 4, 4}));
  EXPECT_EQ(findOp(*graph, OpKind::MaxPool)->result()->type(), TensorType(DType::F32, {1, 2, 2, 2}));
  EXPECT_EQ(findOp(*graph, OpKind::Flatten)->result()->type(), TensorType(DType::F32, {1, 8}));
  EXPECT_EQ(findOp(*graph, OpKind::Gemm)->attrs().getInt("transB"), 1);
  EXPECT_FLOAT_EQ(findOp(*graph, OpKind::LeakyRelu)->attrs().getFloat("alpha"), 0.2f);
  EXPECT_EQ(graph->outputs()[0].value->type(), TensorType(DType::F32, {1, 3}));
}

TEST(OnnxImport, DataMovementOps) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x, float[3,4] m) => (float[4,2] y, float[1,2] s, float[2,5] pd, float[2,8] cc,
                                      float[1,2,1] gp)
      <int64[1] ax0 = {0}, int64[2] starts = {0, 1}, int64[2] ends = {1, 3},
       int64[4] pads = {0, 1, 0, 1}> {
      mm = MatMul(x, m)
      y = Transpose <perm = [1, 0]> (mm)
      u = Unsqueeze(x, ax0)
      sq = Squeeze(u, ax0)
      s = Slice(sq, starts, ends)
      pd = Pad(sq, pads)
      cc = Concat <axis = 1> (mm, mm)
      gp = GlobalAveragePool(u) })");
  EXPECT_EQ(findOp(*graph, OpKind::MatMul)->result()->type(), TensorType(DType::F32, {2, 4}));
  EXPECT_EQ(findOp(*graph, OpKind::Transpose)->attrs().getInts("perm"),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(graph->findValue("y")->type(), TensorType(DType::F32, {4, 2}));
  EXPECT_EQ(graph->findValue("u")->type(), TensorType(DType::F32, {1, 2, 3}));
  EXPECT_EQ(graph->findValue("sq")->type(), TensorType(DType::F32, {2, 3}));
  EXPECT_EQ(graph->findValue("s")->type(), TensorType(DType::F32, {1, 2}));
  EXPECT_EQ(graph->findValue("pd")->type(), TensorType(DType::F32, {2, 5}));
  EXPECT_EQ(graph->findValue("cc")->type(), TensorType(DType::F32, {2, 8}));
  EXPECT_EQ(graph->findValue("gp")->type(), TensorType(DType::F32, {1, 2, 1}));
}

TEST(OnnxImport, ArithmeticAndRange) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y, int64[5] r, float[2] gx)
      <float[1] two = {2.0}, int64[2] idx = {3, 0}> {
      start = Constant <value_int = 1> ()
      limit = Constant <value_int = 11> ()
      delta = Constant <value_int = 2> ()
      a = Sub(x, two)
      b = Div(a, two)
      y = Mul(b, x)
      r = Range(start, limit, delta)
      gx = Gather <axis = 0> (x, idx) })");
  EXPECT_EQ(opKinds(*graph), (std::vector<OpKind>{OpKind::Sub, OpKind::Div, OpKind::Mul,
                                                  OpKind::Range, OpKind::Gather}));
  EXPECT_EQ(graph->findValue("r")->type(), TensorType(DType::I64, {5}));
  EXPECT_EQ(graph->findValue("gx")->type(), TensorType(DType::F32, {2}));
}

// An output that is directly a graph input or an initializer.
TEST(OnnxImport, OutputsMayBeInputsOrConstants) {
  auto graph = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] x, float[1] c) <float[1] c = {3.0}> { })");
  ASSERT_EQ(graph->outputs().size(), 2u);
  EXPECT_EQ(graph->outputs()[0].value, graph->inputs()[0]);
  EXPECT_EQ(graph->outputs()[1].value, graph->constants()[0]);
}

// IR version 3 models list their initializers among the inputs: those are constants.
TEST(OnnxImport, InitializersListedAsInputsAreConstants) {
  auto graph = importText(R"(
    <ir_version: 3, opset_import: ["" : 6]>
    g (float[2] x, float[2] w) => (float[2] y) <float[2] w = {1.0, 2.0}> { y = Add(x, w) })");
  ASSERT_EQ(graph->inputs().size(), 1u);
  EXPECT_EQ(graph->inputs()[0]->name(), "x");
  EXPECT_TRUE(graph->findValue("w")->isConstant());
}

// Large weights are set aside while the version converter runs: they must come back intact.
TEST(OnnxImport, LargeWeightsSurviveVersionConversion) {
  std::string values;
  for (int i = 0; i < 2048; ++i) values += (i ? ", " : "") + std::to_string(i % 97) + ".5";
  std::string text = R"(
    <ir_version: 7, opset_import: ["" : 11]>
    g (float[2048] x) => (float[2048] y) <float[2048] w = {)" + values + R"(}>
    { y = Add(x, w) })";
  for (const std::string& bytes : {modelFromText(text), modelFromTextRawData(text)}) {
    auto graph = importOnnxBytes(bytes);
    std::vector<double> w = ir::constantDoubles(graph->findValue("w"));
    ASSERT_EQ(w.size(), 2048u);
    for (int i = 0; i < 2048; ++i) ASSERT_EQ(w[i], i % 97 + 0.5) << i;
  }
}

TEST(OnnxImport, SupportedOperatorList) {
  std::vector<std::string> ops = supportedOnnxOperators();
  for (const char* op : {"Conv", "Gemm", "MatMul", "Relu", "Clip", "Add", "Sub", "Mul", "Div",
                         "BatchNormalization", "MaxPool", "AveragePool", "GlobalAveragePool",
                         "Flatten", "Reshape", "Concat", "Transpose", "Softmax", "Constant",
                         "Shape", "Gather", "Unsqueeze", "Squeeze", "Identity", "Dropout", "Cast",
                         "Sigmoid", "Tanh", "LeakyRelu", "ConstantOfShape", "Range", "Slice",
                         "Pad"}) {
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
  }
}

}  // namespace
}  // namespace kiln::import
