// Tests of the Graph API: building, use lists, rewriting, naming and inferred creation.
#include "kiln/ir/graph.h"

#include <gtest/gtest.h>

#include "kiln/ir/constant_data.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "kiln/support/diagnostics.h"

namespace kiln::ir {
namespace {

TEST(Graph, BuildUseListsAndPrint) {
  Graph g("m");
  Value* x = g.addInput("x", TensorType(DType::F32, {2, 2}));
  std::vector<double> ones = {1.0};
  Value* c = g.addConstant("c", TensorType(DType::F32, {2}),
                           makeConstantBytes(TensorType(DType::F32, {2}), ones));
  Op* add = g.createOpInferred(OpKind::Add, {x, c}, {}, SourceInfo{"add0", "Add"});
  Op* mul = g.createOp(OpKind::Mul, {add->result(), add->result()},
                       {TensorType(DType::F32, {2, 2})}, {}, {}, nullptr, {"sq"});
  g.addOutput("y", mul->result());
  verifyGraph(g);
  EXPECT_EQ(x->users(), std::vector<Op*>{add});
  EXPECT_EQ(add->result()->users().size(), 2u);  // one entry per operand slot
  EXPECT_EQ(add->result()->definingOp(), add);
  EXPECT_EQ(add->describe(), "node 'add0' (Add)");
  EXPECT_EQ(mul->describe(), "op %sq (Mul)");
  EXPECT_EQ(printGraph(g), R"(graph @m {
  input %x : f32[2,2]
  const %c : f32[2] = splat(1.0)
  %0 = Add(%x, %c) : f32[2,2] loc("add0", "Add")
  %sq = Mul(%0, %0) : f32[2,2]
  output "y" = %sq
}
)");
}

TEST(Graph, ReplaceAllUsesEraseAndRename) {
  Graph g;
  Value* x = g.addInput("x", TensorType(DType::F32, {4}));
  Op* a = g.createOpInferred(OpKind::Relu, {x});
  Op* b = g.createOpInferred(OpKind::Exp, {a->result()});
  g.addOutput("a", a->result());
  g.addOutput("b", b->result());
  Op* n = g.createOpInferred(OpKind::Neg, {x}, {}, {}, a);  // inserted before a
  EXPECT_EQ(g.opList().front(), n);
  g.replaceAllUsesWith(a->result(), n->result());
  EXPECT_FALSE(a->result()->hasUsers());
  EXPECT_EQ(g.outputs()[0].value, n->result());
  EXPECT_EQ(b->operand(0), n->result());
  g.eraseOp(a);
  g.renameValue(n->result(), "neg");
  EXPECT_EQ(g.findValue("neg"), n->result());
  verifyGraph(g);
  EXPECT_EQ(g.numOps(), 2u);
}

TEST(Graph, NamesAreMadeUnique) {
  Graph g;
  Value* x = g.addInput("x", TensorType(DType::F32, {1}));
  Op* a = g.createOp(OpKind::Relu, {x}, {x->type()}, {}, {}, nullptr, {"x"});
  EXPECT_EQ(a->result()->name(), "x.1");
  EXPECT_THROW(g.addInput("x", TensorType(DType::F32, {1})), CompileError);
  try {
    g.addInput("x", TensorType(DType::F32, {1}));
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(), "graph input name 'x' is used twice");
  }
}

TEST(Graph, CreateOpInferredRejectsBadOperands) {
  Graph g;
  Value* x = g.addInput("x", TensorType(DType::F32, {2, 3}));
  Value* y = g.addInput("y", TensorType(DType::F32, {4, 3}));
  try {
    g.createOpInferred(OpKind::Add, {x, y});
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(), "shapes [2,3] and [4,3] do not broadcast");
  }
  Value* shape = g.addInput("s", TensorType(DType::I64, {1}));
  try {
    g.createOpInferred(OpKind::Reshape, {x, shape});
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(),
                 "cannot infer the result type of Reshape: a static operand is not a constant");
  }
}

TEST(Graph, EraseUnusedConstantsKeepsOutputs) {
  Graph g;
  std::vector<double> zero = {0.0};
  TensorType t(DType::F32, {1});
  g.addConstant("dead", t, makeConstantBytes(t, zero));
  Value* kept = g.addConstant("kept", t, makeConstantBytes(t, zero));
  g.addOutput("k", kept);
  EXPECT_EQ(g.eraseUnusedConstants(), 1u);
  EXPECT_EQ(g.constants(), std::vector<Value*>{kept});
  EXPECT_EQ(g.findValue("dead"), nullptr);
}

TEST(OpKinds, NamesAndTraits) {
  EXPECT_EQ(opName(OpKind::Conv), "Conv");
  EXPECT_EQ(parseOpKind("BatchNormalization"), OpKind::BatchNormalization);
  EXPECT_FALSE(parseOpKind("Nope").has_value());
  EXPECT_TRUE(opInfo(OpKind::Add).hasTrait(kElementwise));
  EXPECT_TRUE(opInfo(OpKind::Reshape).hasTrait(kView));
  EXPECT_TRUE(opInfo(OpKind::Reshape).isStaticOperand(1));
  EXPECT_FALSE(opInfo(OpKind::Reshape).isStaticOperand(0));
  EXPECT_FALSE(opInfo(OpKind::Gather).isStaticOperand(1));  // indices are data
}

TEST(ConstantData, ElementConversions) {
  TensorType t(DType::I8, {3});
  std::vector<double> values = {-1.9, 127.0, 2.5};
  std::vector<uint8_t> bytes = makeConstantBytes(t, values);
  EXPECT_EQ(bytes, (std::vector<uint8_t>{0xff, 0x7f, 0x02}));  // truncation toward zero
  EXPECT_EQ(readElementInt(DType::I8, bytes.data(), 0), -1);
  TensorType h(DType::F16, {2});
  std::vector<double> halves = {1.0, -2.0};
  std::vector<uint8_t> hb = makeConstantBytes(h, halves);
  EXPECT_EQ(hb, (std::vector<uint8_t>{0x00, 0x3c, 0x00, 0xc0}));
  EXPECT_EQ(readElementDouble(DType::F16, hb.data(), 1), -2.0);
  TensorType b(DType::Bool, {2});
  std::vector<int64_t> flags = {0, 5};
  EXPECT_EQ(makeConstantBytesInt(b, flags), (std::vector<uint8_t>{0, 1}));
}

}  // namespace
}  // namespace kiln::ir
