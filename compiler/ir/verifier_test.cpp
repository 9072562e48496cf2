// Tests of every IR verifier error message.
#include "kiln/ir/verifier.h"

#include <gtest/gtest.h>

#include "kiln/ir/constant_data.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/parser.h"
#include "kiln/support/diagnostics.h"

namespace kiln::ir {
namespace {

std::string verifyError(const Graph& graph) {
  try {
    verifyGraph(graph);
  } catch (const CompileError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string verifyText(const char* text) { return verifyError(*parseGraph(text)); }

TEST(Verifier, AcceptsAValidGraph) {
  EXPECT_EQ(verifyText(R"(graph @g {
  input %x : f32[2]
  %y = Relu(%x) : f32[2]
  output "y" = %y
})"),
            "(no error)");
}

TEST(Verifier, WrongResultType) {
  EXPECT_EQ(
      verifyText(R"(graph @g {
  input %x : f32[2,3]
  %y = Relu(%x) : f16[2,3] loc("r", "Relu")
  output "y" = %y
})"),
      "IR verifier: result %y in node 'r' (Relu) has type f16[2,3], the op produces f32[2,3]");
}

TEST(Verifier, RuleFailureNamesTheOp) {
  EXPECT_EQ(verifyText(R"(graph @g {
  input %x : f32[2,3]
  input %w : f32[4,3]
  %y = MatMul(%x, %w) : f32[2,3] loc("/fc/MatMul", "MatMul")
  output "y" = %y
})"),
            "IR verifier: MatMul in node '/fc/MatMul' (MatMul): inner dims differ: [2,3] x [4,3]");
  EXPECT_EQ(verifyText(R"(graph @g {
  input %x : f32[2,3]
  %y = Relu(%x, %x) : f32[2,3]
  output "y" = %y
})"),
            "IR verifier: Relu in op %y (Relu): has 2 operands, expected 1");
}

TEST(Verifier, UseBeforeDefinition) {
  Graph g;
  Value* x = g.addInput("x", TensorType(DType::F32, {2}));
  Op* a = g.createOpInferred(OpKind::Relu, {x});
  Op* b = g.createOpInferred(OpKind::Exp, {a->result()});
  g.renameValue(a->result(), "a");
  g.moveOpBefore(b, a);
  g.addOutput("y", b->result());
  EXPECT_EQ(verifyError(g),
            "IR verifier: operand 0 %a in op %1 (Exp) is not defined before its use");
}

TEST(Verifier, OutputsAndQuantization) {
  EXPECT_EQ(verifyText(R"(graph @g {
  input %x : f32[2]
  output "y" = %x
  output "y" = %x
})"),
            "IR verifier: output name \"y\" is used twice");
  EXPECT_EQ(verifyText(R"(graph @g {
  input %x : i8[2,3] quant(axis=1, scale=[0.5, 0.5], zero_point=[0, 0])
})"),
            "IR verifier: %x has 2 scales and 2 zero points, expected 3");
  EXPECT_EQ(verifyText(R"(graph @g {
  input %x : i8[2,3] quant(axis=2, scale=[0.5], zero_point=[0])
})"),
            "IR verifier: quantization axis of %x is out of range");
}

TEST(Verifier, OutputOfAnErasedOp) {
  // An output pointing at a value from another graph (a bug in a pass) is caught too.
  Graph other;
  Value* foreign = other.addInput("f", TensorType(DType::F32, {1}));
  Graph g;
  g.addInput("x", TensorType(DType::F32, {1}));
  g.addOutput("y", foreign);
  EXPECT_EQ(verifyError(g),
            "IR verifier: output \"y\" refers to %f, which is not defined in the graph");
}

}  // namespace
}  // namespace kiln::ir
