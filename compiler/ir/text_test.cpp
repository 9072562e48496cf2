// Tests of the IR text form: print -> parse -> print round trips, constant encodings, and
// every parse error message (with line:column).
#include <gtest/gtest.h>

#include "kiln/ir/constant_data.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "kiln/support/diagnostics.h"

namespace kiln::ir {
namespace {

constexpr const char* kBlock = R"(graph @block {
  input %x : f32[1,2,4,4]
  const %w : f32[2,2,1,1] = [1.0, 0.5, -2.0, 0.25]
  const %b : f32[2] = splat(0.1)
  const %shape : i64[2] = [1, -1]
  const %mask : bool[3] = [true, false, true]
  const %h : f16[2] = [1.5, -0.0009765625]
  const %big : i32[17] = hex"0100000002000000030000000400000005000000060000000700000008000000090000000a0000000b0000000c0000000d0000000e0000000f0000001000000011000000"
  %c = Conv(%x, %w, %b) {dilations = [1, 1], group = 1, pads = [0, 0, 0, 0], strides = [1, 1]} : f32[1,2,4,4] loc("conv1", "Conv")
  %r = Relu(%c) : f32[1,2,4,4]
  %"odd name:1" = Reshape(%r, %shape) : f32[1,32]
  %a, %s = Split(%"odd name:1") {axis = 1} : f32[1,16], f32[1,16]
  %g = Gemm(%a, %s, none) {alpha = 0.5, transB = 1} : f32[1,1]
  output "logits" = %g
  output "features" = %r
}
)";

TEST(Text, RoundTripIsExact) {
  std::string text = kBlock;
  auto graph = parseGraph(text, "block.kir");
  verifyGraph(*graph);
  std::string printed = printGraph(*graph);
  EXPECT_EQ(printed, text);
  auto again = parseGraph(printed);
  EXPECT_EQ(printGraph(*again), printed);
}

// f64 constants print as the shortest text that parses back to the same double.
TEST(Text, F64RoundTrip) {
  std::string text = R"(graph @d {
  input %x : f64[3]
  const %c : f64[3] = [0.1, 0.30000000000000004, 1e-300]
  %y = Add(%x, %c) : f64[3]
  %z = Cast(%y) {to = 0} : f32[3]
  output "y" = %y
  output "z" = %z
}
)";
  auto graph = parseGraph(text);
  verifyGraph(*graph);
  EXPECT_EQ(printGraph(*graph), text);
  EXPECT_EQ(constantDoubles(graph->findValue("c")),
            (std::vector<double>{0.1, 0.1 + 0.2, 1e-300}));
  EXPECT_EQ(dtypeSize(DType::F64), 8u);
  EXPECT_EQ(parseDType("f64"), DType::F64);
}

TEST(Text, ConstantEncodings) {
  auto graph = parseGraph(R"(graph @c {
  const %f : f32[3] = [0.1, 1e-07, -inf]
  const %z : f32[2,2] = splat(0.0)
  const %i : i8[2] = [-128, 127]
  const %n : f32[2] = [nan, 1.0]
  const %s : i64[] = [7]
})");
  EXPECT_EQ(constantDoubles(graph->findValue("f"))[0], double(0.1f));
  EXPECT_EQ(constantDoubles(graph->findValue("f"))[1], double(1e-7f));
  EXPECT_EQ(constantInts(graph->findValue("i")), (std::vector<int64_t>{-128, 127}));
  EXPECT_EQ(constantInts(graph->findValue("s")), (std::vector<int64_t>{7}));
  std::string printed = printGraph(*graph);
  EXPECT_NE(printed.find("const %z : f32[2,2] = splat(0.0)"), std::string::npos) << printed;
  // NaN payloads only survive in hex.
  EXPECT_NE(printed.find("const %n : f32[2] = hex\"0000c07f0000803f\""), std::string::npos)
      << printed;
  EXPECT_EQ(printGraph(*parseGraph(printed)), printed);
}

TEST(Text, ElidedConstantsParseAsZeros) {
  auto graph =
      parseGraph("graph @e {\n  const %w : f32[8] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]\n}\n");
  PrintOptions options;
  options.elideConstantsOver = 16;
  std::string printed = printGraph(*graph, options);
  EXPECT_NE(printed.find("= elided(\"fnv1a64:"), std::string::npos) << printed;
  auto back = parseGraph(printed);
  EXPECT_EQ(constantDoubles(back->findValue("w")), std::vector<double>(8, 0.0));
}

TEST(Text, QuantizedTypesRoundTrip) {
  const char* text = R"(graph @q {
  input %x : i8[1,4] quant(scale=0.5, zero_point=-3)
  const %w : i8[2,4] quant(axis=0, scale=[0.25, 0.125], zero_point=[0, 0]) = splat(1)
  output "x" = %x
}
)";
  auto graph = parseGraph(text);
  verifyGraph(*graph);
  EXPECT_EQ(printGraph(*graph), text);
  ASSERT_TRUE(graph->findValue("w")->type().quant);
  EXPECT_EQ(graph->findValue("w")->type().quant->scales, (std::vector<float>{0.25f, 0.125f}));
}

TEST(Text, AttributeKinds) {
  const char* text = R"(graph @a {
  input %x : f32[2,3]
  %y = Transpose(%x) {a = 3, b = 1.5, c = [1, 2], d = [0.5, 2.0], e = floats[], f = [], g = "SAME_UPPER", perm = [1, 0]} : f32[3,2]
  output "y" = %y
}
)";
  auto graph = parseGraph(text);
  const Op& op = *graph->ops().front();
  EXPECT_EQ(op.attrs().getInt("a"), 3);
  EXPECT_EQ(op.attrs().getFloat("b"), 1.5f);
  EXPECT_EQ(op.attrs().getInts("c"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(op.attrs().getFloats("d"), (std::vector<float>{0.5f, 2.0f}));
  EXPECT_TRUE(op.attrs().getFloats("e").empty());
  EXPECT_TRUE(op.attrs().getInts("f").empty());
  EXPECT_EQ(op.attrs().getString("g"), "SAME_UPPER");
  EXPECT_EQ(printGraph(*graph), text);
}

std::string parseError(const std::string& text) {
  try {
    parseGraph(text, "t.kir");
  } catch (const CompileError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TextErrors, MessagesNameTheLineAndColumn) {
  EXPECT_EQ(parseError("graph @g {\n  %y = Relu(%x) : f32[1]\n}"),
            "t.kir:2:13: use of undefined value %x");
  EXPECT_EQ(parseError("graph @g {\n  input %x : f32[1]\n  input %x : f32[1]\n}"),
            "t.kir:3:9: redefinition of %x");
  EXPECT_EQ(parseError("graph @g {\n  input %x : f33[1]\n}"),
            "t.kir:2:14: unknown dtype 'f33' (expected f32, f16, i8, u8, i16, i32, i64 or bool)");
  EXPECT_EQ(parseError("graph @g {\n  input %x : f32[1]\n  %y = Frobnicate(%x) : f32[1]\n}"),
            "t.kir:3:8: unknown op 'Frobnicate'");
  EXPECT_EQ(parseError("graph @g {\n  const %c : f32[3] = [1.0, 2.0]\n}"),
            "t.kir:2:23: constant has 2 elements, type f32[3] needs 3");
  EXPECT_EQ(parseError("graph @g {\n  const %c : f32[1] = [1.0, 2.0]\n}"),
            "t.kir:2:23: constant has more than the 1 elements of f32[1]");
  EXPECT_EQ(parseError("graph @g {\n  const %c : i32[1] = hex\"0000\"\n}"),
            "t.kir:2:26: hex constant has 2 bytes, type i32[1] needs 4");
  EXPECT_EQ(parseError("graph @g {\n  const %c : i8[1] = hex\"zz\"\n}"),
            "t.kir:2:25: invalid hex digit in constant");
  EXPECT_EQ(parseError("graph @g {\n  const %c : i8[1] = [1.5]\n}"),
            "t.kir:2:23: expected an integer element for i8, got '1.5'");
  EXPECT_EQ(parseError("graph @g {\n  input %x : f32[-1]\n}"),
            "t.kir:2:18: dimension -1 is negative");
  EXPECT_EQ(parseError("graph @g {\n  output \"y\" = %nope\n}"),
            "t.kir:2:16: use of undefined value %nope");
  EXPECT_EQ(parseError("graph @g {\n  input %x : f32[1] ?\n}"),
            "t.kir:2:21: unexpected character '?'");
  EXPECT_EQ(parseError("graph @g {\n  output \"y\n}"), "t.kir:2:10: unterminated string");
  EXPECT_EQ(parseError("graph @g {\n  input %x : f32[1]\n"),
            "t.kir:3:1: expected '}' to close the graph, got end of input");
  EXPECT_EQ(parseError("graf @g {}"), "t.kir:1:1: expected 'graph', got 'graf'");
  EXPECT_EQ(
      parseError("graph @g {\n  blah\n}"),
      "t.kir:2:3: expected 'input', 'const', 'output' or an op like %y = Relu(%x), got 'blah'");
  EXPECT_EQ(parseError("graph @g {\n  input %x : f32[2]\n  %a, %b = Relu(%x) : f32[2]\n}"),
            "t.kir:3:12: 2 result names but 1 result types");
  EXPECT_EQ(
      parseError("graph @g {\n  input %x : f32[2]\n  %a = Relu(%x) {k = 1, k = 2} : f32[2]\n}"),
      "t.kir:3:25: attribute 'k' is given twice");
  EXPECT_EQ(parseError("graph @g {\n  input %x : i8[2] quant(bias=1)\n}"),
            "t.kir:2:26: unknown quantization parameter 'bias'");
  EXPECT_EQ(parseError("graph @g {\n  const %c : f32[1] = 1.0\n}"),
            "t.kir:2:23: expected constant contents ([...], splat(v), hex\"...\" or "
            "elided(\"...\")), got '1.0'");
  EXPECT_EQ(parseError("graph @g {\n  input %x : f32[99999999999999999999]\n}"),
            "t.kir:2:18: integer 99999999999999999999 is out of range");
  EXPECT_EQ(parseError("graph @g {\n  input %x : f32[1]\n} extra"),
            "t.kir:3:3: unexpected 'extra' after the graph");
}

}  // namespace
}  // namespace kiln::ir
