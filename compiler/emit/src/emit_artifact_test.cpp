// Tests for describeArtifact/emitArtifact on a hand-built dispatch graph: y = x + w (one
// dispatch), then a COPY of y into a second output and a FILL of a third, in a later stage.
// Checked against the command bytes and tables worked out by hand.
#include "kiln/emit/emit_artifact.h"

#include <gtest/gtest.h>

#include <cstring>

#include "kiln/ir/graph.h"

namespace kiln::emit {
namespace {

using ir::BufferRef;
using ir::DType;
using ir::Space;
using ir::TensorType;

struct Fixture {
  ir::DispatchGraph graph;
  codegen::CodegenResult kernels;
};

Fixture makeFixture() {
  Fixture f;
  auto g = std::make_unique<ir::Graph>("model");
  TensorType t(DType::F32, {4});
  ir::Value* x = g->addInput("x", t);
  std::vector<uint8_t> wBytes(16);
  float w[] = {1, 2, 3, 4};
  std::memcpy(wBytes.data(), w, 16);
  ir::Value* wv = g->addConstant("w", t, wBytes);
  ir::Op* add = g->createOp(ir::OpKind::Add, {x, wv}, {t}, {}, ir::SourceInfo{"add0", "Add"},
                            nullptr, {"y"});
  g->addOutput("y", add->result());
  g->addOutput("y_copy", add->result());
  ir::DispatchGraph& dg = f.graph;
  dg.inputs.push_back({"x", t, x});
  dg.outputs.push_back({"y", t, add->result()});
  dg.outputs.push_back({"y_copy", t, add->result()});
  dg.outputs.push_back({"zeros", TensorType(DType::I8, {2, 3}), nullptr});
  dg.constants.push_back({wv, wBytes, 0});
  dg.constants.push_back({wv, std::vector<uint8_t>(3, 9), 64});  // a second entry at 64
  dg.constantsSize = 128;
  ir::Dispatch d;
  d.id = 0;
  d.name = "add0";
  d.root = add;
  d.bindings.push_back({x, ir::kRead, BufferRef{Space::Input, 0, 0, 16}, 0, -1});
  d.bindings.push_back({wv, ir::kRead, BufferRef{Space::Constants, 1, 0, 16}, 1, -1});
  d.bindings.push_back({add->result(), ir::kWrite, BufferRef{Space::Output, 0, 0, 16}, -1, 0});
  dg.dispatches.push_back(d);
  ir::Step dispatch;
  dispatch.kind = ir::StepKind::Dispatch;
  dispatch.stage = 0;
  dg.steps.push_back(dispatch);
  ir::Step copy;
  copy.kind = ir::StepKind::Copy;
  copy.stage = 1;
  copy.src = BufferRef{Space::Output, 0, 0, 16};
  copy.dst = BufferRef{Space::Output, 1, 0, 16};
  dg.steps.push_back(copy);
  ir::Step fill;
  fill.kind = ir::StepKind::Fill;
  fill.stage = 1;
  fill.dst = BufferRef{Space::Output, 2, 0, 6};
  dg.steps.push_back(fill);
  dg.numStages = 2;
  dg.arenaSize = 0;
  dg.graph = std::move(g);

  f.kernels.bytes = {0x7f, 'E', 'L', 'F'};
  f.kernels.kernelCount = 1;
  f.kernels.kernelIndex = {0};
  f.kernels.maxWorkgroups = {4};
  f.kernels.stackBoundBytes = 48;
  f.kernels.arch = codegen::TargetArch::X86_64;
  f.kernels.requiredFeatures = {"sse4.2", "avx2", "fma", "not-a-format-bit"};
  return f;
}

TEST(EmitArtifact, DescribesTargetSignaturesAndIo) {
  Fixture f = makeFixture();
  ArtifactContents c = describeArtifact(f.graph, f.kernels, {});
  EXPECT_EQ(c.arch, KILN_ARCH_X86_64);
  EXPECT_EQ(c.abi, KILN_ABI_LP64);
  EXPECT_EQ(c.cpuFeatures, uint64_t{KILN_X86_SSE4_2 | KILN_X86_AVX2 | KILN_X86_FMA});
  EXPECT_EQ(c.stackBound, 48u);
  ASSERT_EQ(c.kernels.size(), 1u);
  ASSERT_EQ(c.kernels[0].bindings.size(), 3u);
  EXPECT_EQ(c.kernels[0].bindings[1].length, 16u);
  EXPECT_EQ(c.kernels[0].bindings[1].access, KILN_ACCESS_READ);
  EXPECT_EQ(c.kernels[0].bindings[2].access, KILN_ACCESS_WRITE);
  EXPECT_EQ(c.kernels[0].bindings[2].alignment, 4u);
  ASSERT_EQ(c.functions.size(), 1u);
  const FunctionInfo& fn = c.functions[0];
  ASSERT_EQ(fn.inputs.size(), 1u);
  ASSERT_EQ(fn.outputs.size(), 3u);
  EXPECT_EQ(fn.outputs[2].name, "zeros");
  EXPECT_EQ(fn.outputs[2].dtype, KILN_DTYPE_I8);
  EXPECT_EQ(fn.outputs[2].dims, (std::vector<uint32_t>{2, 3}));
}

TEST(EmitArtifact, CommandsWithBarrierBetweenStages) {
  Fixture f = makeFixture();
  ArtifactContents c = describeArtifact(f.graph, f.kernels, {});
  std::vector<uint8_t> expected = {
      0x01, 0, 4, 2, 0, 1, 64, 3, 0,  // dispatch k0 wg4: in0+0, constants+64 (entry 1), out0+0
      0x04,                           // barrier (stage 0 -> 1)
      0x03, 3, 0, 5, 0, 16,           // copy out0+0 -> out1+0, 16 bytes
      0x02, 7, 0, 6, 0,               // fill out2+0, 6 bytes of 0
      0x05};                          // return
  EXPECT_EQ(c.functions[0].commands.bytes(), expected);
}

TEST(EmitArtifact, ConstantsDebugAndWorkgroupCap) {
  Fixture f = makeFixture();
  ArtifactContents c = describeArtifact(f.graph, f.kernels, {});
  ASSERT_EQ(c.constants.size(), 128u);
  float w0;
  std::memcpy(&w0, c.constants.data(), 4);
  EXPECT_EQ(w0, 1.0f);
  EXPECT_EQ(c.constants[64], 9);
  EXPECT_EQ(c.constants[67], 0);
  ASSERT_EQ(c.debug.size(), 1u);
  EXPECT_EQ(c.debug[0].dispatchName, "Add");
  EXPECT_EQ(c.debug[0].nodeName, "add0 (Add)");

  EmitOptions options;
  options.strip = true;
  options.maxWorkgroups = 2;
  ArtifactContents stripped = describeArtifact(f.graph, f.kernels, options);
  EXPECT_TRUE(stripped.debug.empty());
  EXPECT_EQ(stripped.functions[0].commands.bytes()[2], 2);  // workgroups capped at 2
}

TEST(EmitArtifact, ExternalConstantsAndReproducibility) {
  Fixture f = makeFixture();
  EmitOptions options;
  options.externalConstants = true;
  EmittedArtifact a = emitArtifact(f.graph, f.kernels, options);
  EmittedArtifact b = emitArtifact(f.graph, f.kernels, options);
  EXPECT_EQ(a.artifact, b.artifact);
  ASSERT_EQ(a.externalConstants.size(), 128u);
  EmittedArtifact embedded = emitArtifact(f.graph, f.kernels, {});
  EXPECT_TRUE(embedded.externalConstants.empty());
  EXPECT_GT(embedded.artifact.size(), a.artifact.size());
}

}  // namespace
}  // namespace kiln::emit
