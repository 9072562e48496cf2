// Dispatch formation tests: bindings order, views, static operands, constants list.
#include "kiln/passes/passes.h"
#include "kiln/support/diagnostics.h"
#include "test_util.h"

namespace kiln::passes {
namespace {

using testing::parseVerified;

TEST(FormDispatches, BindingsSkipAbsentAndStaticOperands) {
  ir::DispatchGraph dg = formDispatches(parseVerified(R"(graph @g {
  input %x : f32[1,2,4,4]
  const %w : f32[3,2,1,1] = splat(1.0)
  const %pads : i64[8] = [0, 0, 1, 1, 0, 0, 1, 1]
  const %lo : f32[] = [0.0]
  %c = Conv(%x, %w) : f32[1,3,4,4] loc("conv0", "Conv")
  %p = Pad(%c, %pads) : f32[1,3,6,6]
  %k = Clip(%p, %lo) : f32[1,3,6,6]
  output "y" = %k
})"));
  ASSERT_EQ(dg.dispatches.size(), 3u);
  const ir::Dispatch& conv = dg.dispatches[0];
  EXPECT_EQ(conv.name, "conv0");
  ASSERT_EQ(conv.bindings.size(), 3u);
  EXPECT_EQ(conv.bindings[0].value->name(), "x");
  EXPECT_EQ(conv.bindings[1].value->name(), "w");
  EXPECT_EQ(conv.bindings[2].value->name(), "c");
  EXPECT_EQ(conv.bindings[2].access, ir::kWrite);
  EXPECT_EQ(conv.bindings[2].resultIndex, 0);
  // Pad's pads and Clip's min are static: read by codegen from the IR, not bound.
  ASSERT_EQ(dg.dispatches[1].bindings.size(), 2u);
  ASSERT_EQ(dg.dispatches[2].bindings.size(), 2u);
  EXPECT_EQ(dg.dispatches[2].name, "Clip_2");
  // Only the weight is in the constants list.
  ASSERT_EQ(dg.constants.size(), 1u);
  EXPECT_EQ(dg.constants[0].value->name(), "w");
  EXPECT_EQ(dg.constants[0].bytes.size(), 24u);
}

// An unnamed model node is named by the model's op type and the dispatch's index, also after
// a pass rewrote it into another op (an unnamed ConvTranspose run as a Conv: "kiln dump" then
// says where it came from); ops with no model node by their own kind.
TEST(FormDispatches, UnnamedNodesByTheirModelOpType) {
  ir::DispatchGraph dg = formDispatches(parseVerified(R"(graph @g {
  input %x : f32[1,2,4,4]
  const %w : f32[3,2,1,1] = splat(1.0)
  %c = Conv(%x, %w) : f32[1,3,4,4] loc("", "ConvTranspose")
  %r = Relu(%c) : f32[1,3,4,4]
  %e = Exp(%r) : f32[1,3,4,4] loc("", "Exp")
  output "y" = %e
})"));
  ASSERT_EQ(dg.dispatches.size(), 3u);
  EXPECT_EQ(dg.dispatches[0].name, "ConvTranspose_0");
  EXPECT_EQ(dg.dispatches[1].name, "Relu_1");
  EXPECT_EQ(dg.dispatches[2].name, "Exp_2");
}

TEST(FormDispatches, ViewChainsResolveToTheirStorage) {
  ir::DispatchGraph dg = formDispatches(parseVerified(R"(graph @g {
  input %x : f32[2,3]
  const %a : i64[1] = [0]
  %e = Exp(%x) : f32[2,3]
  %f = Flatten(%e) {axis = 0} : f32[1,6]
  %u = Unsqueeze(%f, %a) : f32[1,1,6]
  %s = Squeeze(%u) : f32[6]
  %n = Neg(%s) : f32[6]
  output "n" = %n
})"));
  ASSERT_EQ(dg.dispatches.size(), 2u);
  const ir::Value* s = dg.dispatches[1].bindings[0].value;
  EXPECT_EQ(s->name(), "s");
  EXPECT_EQ(dg.storageOf(s)->name(), "e");
}

std::string formError(const std::string& text) {
  try {
    formDispatches(parseVerified(text));
  } catch (const CompileError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(FormDispatches, NonConstantStaticOperandIsAUserError) {
  EXPECT_EQ(
      formError(R"(graph @g {
  input %x : f32[6]
  input %shape : i64[2]
  %y = Reshape(%x, %shape) : f32[2,3] loc("/model/Reshape", "Reshape")
  output "y" = %y
})"),
      "node '/model/Reshape' (Reshape): operand 1 (%shape) must be a compile-time constant, but it "
      "is the "
      "graph input 'shape', whose contents are known only at run time; kiln needs static shapes: "
      "make it a constant in the model "
      "(export with fixed shapes), or give its values when compiling: "
      "--fix-input=shape=@VALUES.npy");
  EXPECT_EQ(formError(R"(graph @g {
  input %x : f32[6]
  input %s : f32[2]
  %shape = Cast(%s) {to = 6} : i64[2]
  %y = Reshape(%x, %shape) : f32[2,3] loc("/model/Reshape", "Reshape")
  output "y" = %y
})"),
            "node '/model/Reshape' (Reshape): operand 1 (%shape) must be a compile-time constant, "
            "but it is computed "
            "at run time; kiln needs static shapes (fix the input shapes with --input-shape)");
}

}  // namespace
}  // namespace kiln::passes
