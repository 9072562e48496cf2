// Every user-facing error of the ONNX importer, message checked: bad files, checker
// failures, opsets, unsupported operators and types, unknown dims, --input-shape mistakes,
// and external data (path escapes, missing files).
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "kiln/import/onnx/onnx_import.h"
#include "kiln/ir/constant_data.h"
#include "kiln/support/diagnostics.h"
#include "onnx_test_models.h"

namespace kiln::import {
namespace {

namespace fs = std::filesystem;
using testing::modelFromText;
using testing::modelFromTextRawDataDims;
using testing::writeFile;

std::string importError(const std::string& bytes, OnnxImportOptions options = {}) {
  try {
    importOnnxBytes(bytes, options, "test.onnx");
  } catch (const CompileError& error) {
    return error.what();
  }
  return "no error";
}

std::string fileImportError(const fs::path& path, OnnxImportOptions options = {}) {
  try {
    importOnnxFile(path, options);
  } catch (const CompileError& error) {
    return error.what();
  }
  return "no error";
}

OnnxImportOptions withShapes(std::initializer_list<const char*> flags) {
  OnnxImportOptions options;
  for (const char* flag : flags) options.inputShapes.push_back(parseInputShape(flag));
  return options;
}

// A fresh, empty folder per test.
fs::path tempFolder(const std::string& name) {
  fs::path folder = fs::path(::testing::TempDir()) / ("kiln_onnx_" + name);
  fs::remove_all(folder);
  fs::create_directories(folder);
  return folder;
}

const char* kRelu = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[1,4] x) => (float[1,4] y) { y = Relu(x) })";

// ---- files ----

TEST(OnnxErrors, MissingFile) {
  EXPECT_EQ(fileImportError("/nonexistent/model.onnx"),
            "/nonexistent/model.onnx: cannot open ONNX model: No such file or directory");
}

TEST(OnnxErrors, PathIsDirectory) {
  fs::path folder = tempFolder("directory");
  EXPECT_EQ(fileImportError(folder),
            folder.string() + ": cannot open ONNX model: it is a directory");
}

TEST(OnnxErrors, RandomBytes) {
  std::mt19937 random(1234);
  std::string bytes(4096, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  EXPECT_EQ(importError(bytes),
            "test.onnx: not a valid ONNX model: the protobuf data is malformed or truncated");
}

TEST(OnnxErrors, TruncatedFile) {
  fs::path path = tempFolder("truncated") / "model.onnx";
  std::string bytes = modelFromText(kRelu);
  writeFile(path, bytes.substr(0, bytes.size() - 7));
  EXPECT_EQ(fileImportError(path),
            path.string() + ": not a valid ONNX model: the protobuf data is malformed or truncated");
}

TEST(OnnxErrors, EmptyFile) {
  fs::path path = tempFolder("empty") / "model.onnx";
  writeFile(path, "");
  EXPECT_EQ(fileImportError(path),
            path.string() + ": not a valid ONNX model: the protobuf data is malformed or truncated");
}

// Parses, but is not a valid model: ONNX's checker message, plus the file.
TEST(OnnxErrors, CheckerMessage) {
  EXPECT_EQ(importError(modelFromText(R"(
    <opset_import: ["" : 17]>
    g (float[1,4] x) => (float[1,4] y) { y = Relu(x) })")),
            "test.onnx: invalid ONNX model: The model does not have an ir_version set properly.");
}

TEST(OnnxErrors, CheckerMessageNamesNode) {
  std::string message = importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,4] x) => (float[1,4] y) { y = Relu <alpha = 1.0> (x) })"));
  EXPECT_EQ(message.rfind("test.onnx: invalid ONNX model: Unrecognized attribute: alpha for "
                          "operator Relu; context: Bad node spec for node. Name:  OpType: Relu",
                          0),
            0u)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

// libonnx 1.12's checker misses this one (and its version converter crashes on it).
TEST(OnnxErrors, UndefinedGraphOutput) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 3, opset_import: ["" : 6]>
    g (float[1,4] x) => (float[1,4] y, float[1,4] z) { y = Relu(x) })")),
            "test.onnx: invalid ONNX model: graph output 'z' is not produced by any node, input "
            "or initializer");
}

TEST(OnnxErrors, ShapeInferenceFailure) {
  std::string message = importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x, float[4] b) => (float[2,3] y) { y = Add(x, b) })"));
  EXPECT_EQ(message.rfind("test.onnx: shape inference failed: ", 0), 0u) << message;
  EXPECT_NE(message.find("Add"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(OnnxErrors, InitializerValueCountMismatch) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[3] x) => (float[3] y) <float[3] w = {1.0, 2.0}> { y = Add(x, w) })")),
            "test.onnx: tensor 'w' holds 2 values; its type f32[3] needs 3");
}

// Corrupt dims must not make the importer allocate terabytes.
TEST(OnnxErrors, InitializerTooLarge) {
  EXPECT_EQ(importError(modelFromTextRawDataDims(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[3] x) => (float[3] y) <float[3] w = {1.0, 2.0, 3.0}> { y = Identity(x) })",
                                                 "w", {1 << 30, 1 << 30, 4})),
            "test.onnx: tensor 'w' is too large");
  EXPECT_EQ(importError(modelFromTextRawDataDims(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[3] x) => (float[3] y) <float[3] w = {1.0, 2.0, 3.0}> { y = Identity(x) })",
                                                 "w", {1 << 20, 1 << 10})),
            "test.onnx: tensor 'w' has 12 bytes of raw data; its type f32[1048576,1024] needs "
            "4294967296");
}

TEST(OnnxErrors, InputTooLarge) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1048576,1048576,2] x) => (float[1048576,1048576,2] y) { y = Relu(x) })")),
            "test.onnx: input 'x' has shape 1048576x1048576x2: over 2^40 elements");
}

TEST(OnnxErrors, StringConstant) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1] x) => (float[1] y) {
      s = Constant <value_string = "hello"> ()
      y = Identity(x) })")),
            "test.onnx: node #0 (Constant): output 's' has element type string, which kiln does "
            "not support");
}

// Before opset 7 a (C) PRelu slope applied per channel; kiln reshapes it only when constant.
TEST(OnnxErrors, OldOpsetPReluSlopeNotConstant) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 3, opset_import: ["" : 6]>
    g (float[1,3,2,2] x, float[3] slope) => (float[1,3,2,2] y) { y = PRelu(x, slope) })")),
            "test.onnx: node #0 (PRelu): an opset-6 per-channel slope must be a constant");
}

TEST(OnnxErrors, OpsetAboveTarget) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[1,4] x) => (float[1,4] y) { y = Relu(x) })")),
            "test.onnx: the model uses opset 18 of domain 'ai.onnx'; kiln supports ai.onnx "
            "opsets up to 17");
}

// ---- operators and types ----

TEST(OnnxErrors, UnsupportedOperator) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3] x) => (float[1,2,3] y) { y = Hardmax <axis = 1> (x) })")),
            "test.onnx: unsupported operator 'Hardmax' (domain 'ai.onnx', opset 17) at node #0");
}

TEST(OnnxErrors, UnsupportedOperatorNamedNode) {
  std::string bytes = testing::modelFromTextNamed(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,4] x) => (float[1,4] y) {
      a = Relu(x)
      y = Hardmax(a) })", {"relu_0", "hardmax_1"});
  EXPECT_EQ(importError(bytes), "test.onnx: unsupported operator 'Hardmax' (domain 'ai.onnx', "
                                "opset 17) at node 'hardmax_1'");
}

TEST(OnnxErrors, UnsupportedOperatorOldOpset) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 3, opset_import: ["" : 6]>
    g (float[2,3] x) => (float[2,3] y) { y = Hardmax(x) })")),
            "test.onnx: unsupported operator 'Hardmax' (domain 'ai.onnx', opset 6) at node #0");
}

TEST(OnnxErrors, CustomDomainOperator) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17, "com.example" : 1]>
    g (float[2] x) => (float[2] y) { y = com.example.Frobnicate(x) })")),
            "test.onnx: unsupported operator 'Frobnicate' (domain 'com.example', opset 1) at "
            "node #0");
}

TEST(OnnxErrors, SequenceOutput) {
  EXPECT_EQ(importError(testing::modelFromTextSequenceOutput(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] s) { s = SequenceConstruct(x) })", "s")),
            "test.onnx: output 's' is a sequence; kiln supports tensors only: export the model "
            "with a fixed number of tensor inputs and outputs instead");
}

TEST(OnnxErrors, SequenceOperator) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) <int64 i = {0}> {
      s = SequenceConstruct(x)
      y = SequenceAt(s, i) })")),
            "test.onnx: unsupported operator 'SequenceConstruct' (domain 'ai.onnx', opset 17) at "
            "node #0; sequence and optional values are not supported, kiln compiles tensors only: "
            "export the model with a fixed number of tensor inputs and outputs instead of lists");
}

TEST(OnnxErrors, DataDependentOperator) {
  EXPECT_EQ(importError(testing::modelFromTextNamed(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) {
      n = NonZero(x)
      y = Identity(x) })", {"nz"})),
            "test.onnx: unsupported operator 'NonZero' (domain 'ai.onnx', opset 17) at node "
            "'nz'; its output shape depends on the input data and kiln needs static shapes: do "
            "this step outside the model (e.g. in post-processing) or use a fixed-size form");
}

TEST(OnnxErrors, DynamicTopK) {
  EXPECT_EQ(importError(testing::modelFromTextNamed(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,5] x, int64[1] k) => (float[2,?] v, int64[2,?] i) {
      v, i = TopK <axis = 1> (x, k) })", {"top"})),
            "test.onnx: node 'top' (TopK): K ('k') is known only at run time, so the output shape "
            "depends on the data; kiln needs static shapes: make K a constant (an initializer) in "
            "the model, or give its value when compiling: --fix-input=k=@VALUES.npy");
}

TEST(OnnxErrors, ResizeRuntimeSizes) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,1,2,2] x, int64[4] sizes) => (float[1,1,?,?] y) {
      y = Resize <mode = "nearest"> (x, , , sizes) })")),
            "test.onnx: node #0 (Resize): sizes ('sizes') is known only at run time; kiln needs "
            "static shapes: make it a constant in the model, or give its values when compiling: "
            "--fix-input=sizes=@VALUES.npy");
}

TEST(OnnxErrors, ResizeUnsupportedMode) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,1,2,2] x) => (float[1,1,4,4] y) <float[4] s = {1.0, 1.0, 2.0, 2.0}> {
      y = Resize <coordinate_transformation_mode = "tf_crop_and_resize"> (x, , s) })")),
            "test.onnx: node #0 (Resize): coordinate_transformation_mode 'tf_crop_and_resize' is "
            "not supported (half_pixel, pytorch_half_pixel, align_corners, asymmetric)");
}

TEST(OnnxErrors, ShapeFromGraphInput) {
  EXPECT_EQ(importError(testing::modelFromTextNamed(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[3,1] x, int64[2] shape) => (float[?,?] y) { y = Expand(x, shape) })", {"grow"})),
            "test.onnx: node 'grow' (Expand): input 1 is the graph input 'shape', known only at "
            "run time, but kiln needs static shapes: make it a constant (an initializer) in the "
            "model, export the model with fixed shapes, or give its values when compiling: "
            "--fix-input=shape=@VALUES.npy");
}

TEST(OnnxErrors, EinsumDiagonal) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[3,3] x) => (float[3] y) { y = Einsum <equation = "ii->i"> (x) })")),
            "test.onnx: node #0 (Einsum): letter 'i' repeats within operand 0 (a diagonal), which "
            "is not supported");
}

TEST(OnnxErrors, ControlFlow) {
  std::string message = importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, float[2] x) => (float[2] y) {
      y = If (c) <then_branch = t () => (float[2] a) { a = Identity(x) },
                  else_branch = e () => (float[2] b) { b = Neg(x) }> })"));
  EXPECT_EQ(message, "test.onnx: unsupported operator 'If' (domain 'ai.onnx', opset 17) at node "
                     "#0; control flow is not supported: export the model traced for one fixed "
                     "input shape, without data-dependent branches or loops");
}

TEST(OnnxErrors, StringInput) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (string[2] x) => (string[2] y) { y = Identity(x) })")),
            "test.onnx: input 'x' is a string tensor; kiln supports numeric tensors only");
}

// Doubles are f64 (onnx_f64_test.cpp); the unsigned types wider than 8 bits have no dtype.
TEST(OnnxErrors, UInt32Input) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (uint32[2] x) => (uint32[2] y) { y = Identity(x) })")),
            "test.onnx: input 'x' has element type uint32, which kiln does not support");
}

TEST(OnnxErrors, UInt64Initializer) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) <uint64[2] w = {1, 2}> {
      c = Cast <to = 1> (w)
      y = Add(x, c) })")),
            "test.onnx: tensor 'w' has element type uint64, which kiln does not support");
}

TEST(OnnxErrors, CastToUnsupportedType) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) {
      d = Cast <to = 12> (x)
      y = Cast <to = 1> (d) })")),
            "test.onnx: node #0 (Cast): output 'd' has element type uint32, which kiln does not "
            "support");
}

TEST(OnnxErrors, MaxPoolIndicesOutput) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,1,4,4] x) => (float[1,1,2,2] y, int64[1,1,2,2] i) {
      y, i = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (x) })")),
            "test.onnx: node #0 (MaxPool): output 1 ('i') is not supported");
}

TEST(OnnxErrors, BatchNormTrainingMode) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,2,2] x) => (float[1,2,2,2] y, float[2] rm, float[2] rv)
      <float[2] s = {1.0, 1.0}, float[2] b = {0.0, 0.0}, float[2] m = {0.0, 0.0},
       float[2] v = {1.0, 1.0}> {
      y, rm, rv = BatchNormalization <training_mode = 1> (x, s, b, m, v) })")),
            "test.onnx: node #0 (BatchNormalization): training mode (training_mode = 1) is not "
            "supported");
}

// A shape only known at run time (NonZero is not supported, so use a data-dependent
// Reshape: the shape is computed from an input's values).
TEST(OnnxErrors, DataDependentShape) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[6] x, float[2] f) => (float[?,?] y) {
      s = Cast <to = 7> (f)
      y = Reshape(x, s) })")),
            "test.onnx: node #1 (Reshape): output 'y' has shape ?x? after shape inference; kiln "
            "needs every dim known (a data-dependent shape?)");
}

// ---- unknown dims and --input-shape ----

const char* kSymbolic = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[N,3,H,224] image) => (float[N,3,H,224] y) { y = Relu(image) })";

TEST(OnnxErrors, UnknownDimsWithoutInputShape) {
  EXPECT_EQ(importError(modelFromText(kSymbolic)),
            "test.onnx: input 'image' has unknown dims (dim 0 'N', dim 2 'H' in shape "
            "Nx3xHx224); fix them with --input-shape=image:DIMS, for example "
            "--input-shape=image:1x3x1x224");
}

TEST(OnnxErrors, UnknownDimWithoutName) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[?,4] x) => (float[?,4] y) { y = Relu(x) })")),
            "test.onnx: input 'x' has unknown dims (dim 0 '?' in shape ?x4); fix them with "
            "--input-shape=x:DIMS, for example --input-shape=x:1x4");
}

// In the 1.12 text syntax `float[]` is a tensor without a shape: an unknown rank.
TEST(OnnxErrors, UnknownRankWithoutInputShape) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[] x) => (float[] y) { y = Relu(x) })")),
            "test.onnx: input 'x' has an unknown rank; give its shape with --input-shape=x:DIMS, "
            "e.g. --input-shape=x:1x3x224x224");
  auto graph = importOnnxBytes(modelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[] x) => (float[2,5] y) { y = Relu(x) })"), withShapes({"x:2x5"}));
  EXPECT_EQ(graph->outputs()[0].value->shape(), (ir::Shape{2, 5}));
}

TEST(OnnxErrors, InputShapeFixesUnknownDims) {
  auto graph = importOnnxBytes(modelFromText(kSymbolic), withShapes({"image:2x3x16x224"}));
  EXPECT_EQ(graph->inputs()[0]->shape(), (ir::Shape{2, 3, 16, 224}));
  EXPECT_EQ(graph->outputs()[0].value->shape(), (ir::Shape{2, 3, 16, 224}));
}

// Two symbolic inputs: fixing one still names the other.
TEST(OnnxErrors, SecondInputStillUnknown) {
  const char* text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,4] a, float[M,4] b) => (float[P,4] y) { y = Concat <axis = 0> (a, b) })";
  EXPECT_EQ(importError(modelFromText(text), withShapes({"a:2x4"})),
            "test.onnx: input 'b' has unknown dims (dim 0 'M' in shape Mx4); fix them with "
            "--input-shape=b:DIMS, for example --input-shape=b:1x4");
  auto graph = importOnnxBytes(modelFromText(text), withShapes({"a:2x4", "b:3x4"}));
  EXPECT_EQ(graph->outputs()[0].value->shape(), (ir::Shape{5, 4}));
}

TEST(OnnxErrors, InputShapeNamesMissingInput) {
  EXPECT_EQ(importError(modelFromText(kSymbolic), withShapes({"input:1x3x224x224"})),
            "--input-shape=input:1x3x224x224: test.onnx has no input named 'input' (its "
            "inputs: 'image')");
}

TEST(OnnxErrors, InputShapeNamesInitializer) {
  EXPECT_EQ(importError(modelFromText(R"(
    <ir_version: 3, opset_import: ["" : 6]>
    g (float[2] x, float[2] w) => (float[2] y) <float[2] w = {1.0, 2.0}> { y = Add(x, w) })"),
                        withShapes({"w:2"})),
            "--input-shape=w:2: test.onnx has no input named 'w' (its inputs: 'x')");
}

TEST(OnnxErrors, InputShapeWrongRank) {
  EXPECT_EQ(importError(modelFromText(kSymbolic), withShapes({"image:1x3"})),
            "--input-shape=image:1x3: input 'image' has rank 4 (shape Nx3xHx224), the flag "
            "gives 2 dims");
}

TEST(OnnxErrors, InputShapeContradictsStaticDim) {
  EXPECT_EQ(importError(modelFromText(kSymbolic), withShapes({"image:1x4x8x224"})),
            "--input-shape=image:1x4x8x224: dim 1 of input 'image' is 3 in the model, the flag "
            "gives 4");
}

TEST(OnnxErrors, InputShapeGivenTwice) {
  EXPECT_EQ(importError(modelFromText(kSymbolic),
                        withShapes({"image:1x3x8x224", "image:2x3x8x224"})),
            "--input-shape=image:2x3x8x224: input 'image' is given more than once");
}

TEST(OnnxErrors, BadInputShapeSyntax) {
  try {
    parseInputShape("image=1x3x224x224");
    FAIL() << "no error";
  } catch (const CompileError& error) {
    EXPECT_STREQ(error.what(),
                 "--input-shape=image=1x3x224x224: missing ':' between name and dims (expected "
                 "NAME:DIMS, e.g. --input-shape=input:1x3x224x224)");
  }
}

// ---- external data ----

const char* kExternal = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[4] x) => (float[4] y) <float[4] w = {1.0, 2.0, 3.0, 4.0}> { y = Add(x, w) })";

TEST(OnnxErrors, ExternalDataLoads) {
  fs::path folder = tempFolder("external_ok");
  std::string weights;
  std::string model = testing::modelFromTextExternal(kExternal, "w", "weights/w.bin", 8, &weights);
  writeFile(folder / "model.onnx", model);
  writeFile(folder / "weights" / "w.bin", std::string(8, 'x') + weights);
  auto graph = importOnnxFile(folder / "model.onnx");
  ASSERT_EQ(graph->constants().size(), 1u);
  EXPECT_EQ(ir::constantDoubles(graph->constants()[0]), (std::vector<double>{1, 2, 3, 4}));
}

TEST(OnnxErrors, ExternalDataEscapingWithDotDot) {
  fs::path folder = tempFolder("external_dotdot");
  std::string weights;
  writeFile(folder / "model" / "model.onnx",
            testing::modelFromTextExternal(kExternal, "w", "../w.bin", 0, &weights));
  writeFile(folder / "w.bin", weights);  // exists, yet must not be read
  EXPECT_EQ(fileImportError(folder / "model" / "model.onnx"),
            (folder / "model" / "model.onnx").string() +
                ": external data of tensor 'w': location '../w.bin' contains '..'; it must stay "
                "inside the model's folder");
}

TEST(OnnxErrors, ExternalDataAbsolutePath) {
  fs::path folder = tempFolder("external_absolute");
  std::string weights;
  writeFile(folder / "model.onnx",
            testing::modelFromTextExternal(kExternal, "w", "/etc/passwd", 0, &weights));
  EXPECT_EQ(fileImportError(folder / "model.onnx"),
            (folder / "model.onnx").string() +
                ": external data of tensor 'w': location '/etc/passwd' is an absolute path; it "
                "must be relative to the model's folder");
}

TEST(OnnxErrors, ExternalDataSymlinkOutOfFolder) {
  fs::path folder = tempFolder("external_symlink");
  std::string weights;
  writeFile(folder / "model" / "model.onnx",
            testing::modelFromTextExternal(kExternal, "w", "w.bin", 0, &weights));
  writeFile(folder / "outside.bin", weights);
  fs::create_symlink(folder / "outside.bin", folder / "model" / "w.bin");
  EXPECT_EQ(fileImportError(folder / "model" / "model.onnx"),
            (folder / "model" / "model.onnx").string() +
                ": external data of tensor 'w': location 'w.bin' resolves outside the model's "
                "folder");
}

TEST(OnnxErrors, ExternalDataMissingFile) {
  fs::path folder = tempFolder("external_missing");
  std::string weights;
  writeFile(folder / "model.onnx",
            testing::modelFromTextExternal(kExternal, "w", "w.bin", 0, &weights));
  EXPECT_EQ(fileImportError(folder / "model.onnx"),
            (folder / "model.onnx").string() + ": external data of tensor 'w': file '" +
                (folder / "w.bin").string() + "' does not exist or is not a file");
}

TEST(OnnxErrors, ExternalDataTooShort) {
  fs::path folder = tempFolder("external_short");
  std::string weights;
  writeFile(folder / "model.onnx",
            testing::modelFromTextExternal(kExternal, "w", "w.bin", 4, &weights));
  writeFile(folder / "w.bin", weights);  // 16 bytes, but the tensor starts at offset 4
  EXPECT_EQ(fileImportError(folder / "model.onnx"),
            (folder / "model.onnx").string() + ": external data of tensor 'w': offset 4 + length "
                "16 exceeds the 16 bytes of '" + (folder / "w.bin").string() + "'");
}

TEST(OnnxErrors, ExternalDataWithoutLocation) {
  fs::path folder = tempFolder("external_nolocation");
  writeFile(folder / "model.onnx",
            testing::modelFromTextExternalEntries(kExternal, "w", {{"offset", "0"}}));
  EXPECT_EQ(fileImportError(folder / "model.onnx"),
            (folder / "model.onnx").string() + ": external data of tensor 'w': no 'location' given");
}

TEST(OnnxErrors, ExternalDataBadOffset) {
  fs::path folder = tempFolder("external_badoffset");
  writeFile(folder / "model.onnx",
            testing::modelFromTextExternalEntries(kExternal, "w",
                                                  {{"location", "w.bin"}, {"offset", "12abc"}}));
  EXPECT_EQ(fileImportError(folder / "model.onnx"),
            (folder / "model.onnx").string() +
                ": external data of tensor 'w': 'offset' is not a non-negative integer: '12abc'");
}

TEST(OnnxErrors, ExternalDataFromBytesWithoutFolder) {
  std::string weights;
  EXPECT_EQ(importError(testing::modelFromTextExternal(kExternal, "w", "w.bin", 0, &weights)),
            "test.onnx: external data of tensor 'w': a model given as bytes cannot reference "
            "external file 'w.bin'");
}

}  // namespace
}  // namespace kiln::import
