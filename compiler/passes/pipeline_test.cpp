// Pipeline tests: the pass order, --print-ir-after-all output, input verification, and a
// whole torch-style graph from IR text to a planned dispatch graph.
#include "kiln/passes/pipeline.h"

#include <sstream>

#include "kiln/support/diagnostics.h"
#include "test_util.h"

namespace kiln::passes {
namespace {

constexpr const char* kTorchStyle = R"(graph @torch_style {
  input %x : f32[1,1,4,4]
  const %w : f32[2,1,3,3] = splat(0.5)
  const %scale : f32[2] = [1.0, 2.0]
  const %bias : f32[2] = [0.0, 1.0]
  const %mean : f32[2] = [0.0, 0.0]
  const %var : f32[2] = [1.0, 1.0]
  const %zero : i64[] = [0]
  const %axes : i64[1] = [0]
  const %minus1 : i64[1] = [-1]
  const %fc : f32[3,32] = splat(0.25)
  %c = Conv(%x, %w) {auto_pad = "SAME_UPPER"} : f32[1,2,4,4] loc("/conv/Conv", "Conv")
  %bn = BatchNormalization(%c, %scale, %bias, %mean, %var) {epsilon = 0.0} : f32[1,2,4,4] loc("/bn/BatchNormalization", "BatchNormalization")
  %r = Relu(%bn) : f32[1,2,4,4] loc("/relu/Relu", "Relu")
  %d = Dropout(%r) : f32[1,2,4,4]
  %shape = Shape(%d) : i64[4]
  %n = Gather(%shape, %zero) : i64[]
  %n1 = Unsqueeze(%n, %axes) : i64[1]
  %target = Concat(%n1, %minus1) {axis = 0} : i64[2]
  %flat = Reshape(%d, %target) : f32[1,32]
  %logits = Gemm(%flat, %fc) {transB = 1} : f32[1,3] loc("/fc/Gemm", "Gemm")
  output "logits" = %logits
})";

TEST(Pipeline, PassOrder) {
  std::vector<std::string> names;
  for (const GraphPass& p : graphPasses()) names.emplace_back(p.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"dce", "canonicalize", "fold-constants", "canonicalize",
                                      "fold-batchnorm", "conv-transpose-as-conv",
                                      "trim-conv-taps", "fold-constants", "dce"}));
}

TEST(Pipeline, TorchStyleGraphBecomesThreeDispatches) {
  PipelineOptions options;
  options.verifyBetweenPasses = true;
  options.inPlace = true;
  options.fusion = false;  // one op per dispatch (fuse_elementwise_test covers fusion)
  ir::DispatchGraph dg = compileGraph(testing::parseVerified(kTorchStyle), options);
  // BatchNorm (epsilon 0, var 1) scales channel 0 by 1 and channel 1 by 2: weights 0.5 and
  // 1.0 (0x3f000000, 0x3f800000), bias = BN bias.
  EXPECT_EQ(ir::printGraph(*dg.graph, {.maxLiteralElements = 4}),
            R"(graph @torch_style {
  input %x : f32[1,1,4,4]
  const %fc : f32[3,32] = splat(0.25)
  const %target : i64[2] = [1, -1]
  const %w.bn : f32[2,1,3,3] = hex"0000003f0000003f0000003f0000003f0000003f0000003f0000003f0000003f0000003f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f"
  const %c.bias : f32[2] = [0.0, 1.0]
  %c = Conv(%x, %w.bn, %c.bias) {pads = [1, 1, 1, 1]} : f32[1,2,4,4] loc("/conv/Conv", "Conv")
  %r = Relu(%c) : f32[1,2,4,4] loc("/relu/Relu", "Relu")
  %flat = Reshape(%r, %target) : f32[1,32]
  %logits = Gemm(%flat, %fc) {transB = 1} : f32[1,3] loc("/fc/Gemm", "Gemm")
  output "logits" = %logits
}
)");
  ASSERT_EQ(dg.dispatches.size(), 3u);
  EXPECT_EQ(dg.numStages, 3u);
  EXPECT_EQ(dg.dispatches[1].aliases.size(), 1u);  // Relu in place over the conv output
  EXPECT_EQ(dg.dispatches[2].bindings.back().ref.space, ir::Space::Output);
  EXPECT_EQ(dg.arenaSize, 128u);
}

TEST(Pipeline, InPlaceByDefaultAndOptional) {
  // Default: the Relu writes over the conv output, which dies there (one 128-byte buffer).
  PipelineOptions unfused;
  unfused.fusion = false;  // the Relu in its own dispatch
  ir::DispatchGraph inPlace = compileGraph(testing::parseVerified(kTorchStyle), unfused);
  ASSERT_EQ(inPlace.dispatches.size(), 3u);
  EXPECT_EQ(inPlace.dispatches[1].aliases.size(), 1u);
  EXPECT_EQ(inPlace.arenaSize, 128u);
  // Off: conv and relu outputs (128 bytes each) side by side, no aliasing anywhere.
  PipelineOptions options = unfused;
  options.inPlace = false;
  ir::DispatchGraph separate = compileGraph(testing::parseVerified(kTorchStyle), options);
  for (const ir::Dispatch& d : separate.dispatches) EXPECT_TRUE(d.aliases.empty()) << d.name;
  EXPECT_EQ(separate.arenaSize, 256u);
}

TEST(Pipeline, PrintIrAfterAll) {
  std::ostringstream out;
  PipelineOptions options;
  options.printIrAfterAll = true;
  options.printTo = &out;
  options.fusion = false;
  compileGraph(testing::parseVerified(kTorchStyle), options);
  std::string text = out.str();
  size_t pos = 0;
  for (const char* header :
       {"// ----- IR before passes -----", "// ----- IR after dce -----",
        "// ----- IR after canonicalize -----", "// ----- IR after fold-constants -----",
        "// ----- IR after canonicalize -----", "// ----- IR after fold-batchnorm -----",
        "// ----- IR after fold-constants -----", "// ----- IR after dce -----",
        "// ----- dispatch graph after form-dispatches, schedule, plan-memory -----"}) {
    size_t found = text.find(header, pos);
    ASSERT_NE(found, std::string::npos) << header;
    pos = found + 1;
  }
  EXPECT_NE(text.find("dispatch graph: 3 dispatches, 3 stages"), std::string::npos);
}

TEST(Pipeline, InvalidInputGraphIsAUserError) {
  auto graph = ir::parseGraph(R"(graph @g {
  input %x : f32[2,3]
  %y = Relu(%x) : f32[3,2] loc("relu1", "Relu")
  output "y" = %y
})");
  try {
    compileGraph(std::move(graph));
    FAIL() << "expected an error";
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(),
                 "IR verifier: result %y in node 'relu1' (Relu) has type f32[3,2], the op produces "
                 "f32[2,3]");
  }
}

}  // namespace
}  // namespace kiln::passes
