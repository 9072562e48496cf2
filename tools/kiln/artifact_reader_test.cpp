// Tests for the artifact reader behind `kiln dump`: it reads what the artifact writer
// (compiler/emit) writes, and on thousands of corrupted copies it either reads them or throws
// a CliError — never crashes or reads out of bounds.
#include "artifact_reader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "cli_error.h"
#include "kiln/emit/artifact_builder.h"

namespace kiln::cli {
namespace {

emit::ArtifactContents sampleContents() {
  emit::ArtifactContents c;
  c.arch = KILN_ARCH_AARCH64;
  c.abi = KILN_ABI_LP64;
  c.cpuFeatures = KILN_AARCH64_NEON | KILN_AARCH64_DOTPROD;
  c.arenaSize = 1024;
  c.stackBound = 96;
  c.kernels.push_back({{{64, KILN_ACCESS_READ, 4}, {64, KILN_ACCESS_WRITE, 4}}});
  c.kernels.push_back({{{64, KILN_ACCESS_READ | KILN_ACCESS_WRITE, 4}}});
  emit::FunctionInfo f;
  f.name = "main";
  f.inputs.push_back({"x", KILN_DTYPE_F32, {1, 16}, 64});
  f.outputs.push_back({"y", KILN_DTYPE_F32, {16}, 64});
  emit::BindingRef first[] = {{KILN_SPACE_INPUT(0), 0}, {KILN_SPACE_ARENA, 0}};
  f.commands.dispatch(0, 4, first);
  f.commands.barrier();
  emit::BindingRef second[] = {{KILN_SPACE_ARENA, 0}};
  f.commands.dispatch(1, 1, second);
  f.commands.barrier();
  f.commands.copy(KILN_SPACE_ARENA, 0, KILN_SPACE_OUTPUT(0), 0, 64);
  f.commands.ret();
  c.functions.push_back(std::move(f));
  c.constants.assign(128, 1);
  c.kernelElf.assign(300, 0x90);
  c.debug = {{"Add", "add0 (Add)", KILN_COST_ELEMENTS, 16},
             {"Relu", "relu0 (Relu)", KILN_COST_FLOPS, 1234567}};
  return c;
}

std::vector<uint8_t> sampleArtifact() { return emit::serializeArtifact(sampleContents()); }

TEST(ArtifactReader, ReadsWhatTheWriterWrites) {
  std::vector<uint8_t> bytes = sampleArtifact();
  ArtifactSummary a = readArtifact(bytes, "a.kiln");
  EXPECT_EQ(a.header.arch, KILN_ARCH_AARCH64);
  EXPECT_EQ(cpuFeatureNames(a.header.arch, a.header.cpu_features),
            (std::vector<std::string>{"neon", "dotprod"}));
  EXPECT_EQ(a.sections.size(), 5u);
  EXPECT_EQ(a.meta.arena_size, 1024u);
  ASSERT_EQ(a.functions.size(), 1u);
  const ArtifactFunction& f = a.functions[0];
  EXPECT_EQ(f.inputs[0].dims, (std::vector<uint32_t>{1, 16}));
  ASSERT_EQ(f.commands.size(), 6u);
  EXPECT_EQ(f.commands[0].opcode, KILN_OP_DISPATCH);
  EXPECT_EQ(f.commands[0].stage, 0u);
  EXPECT_EQ(f.commands[2].opcode, KILN_OP_DISPATCH);
  EXPECT_EQ(f.commands[2].stage, 1u);
  EXPECT_EQ(f.commands[2].dispatchIndex, 1u);
  EXPECT_EQ(f.commands[2].bindings[0].access, uint32_t{KILN_ACCESS_READ | KILN_ACCESS_WRITE});
  EXPECT_EQ(f.commands[4].opcode, KILN_OP_COPY);
  EXPECT_EQ(f.commands[4].stage, 2u);
  ASSERT_EQ(a.debug.size(), 2u);
  EXPECT_EQ(a.debug[1].nodeName, "relu0 (Relu)");
  EXPECT_TRUE(a.debugHasCosts);
  EXPECT_EQ(a.debug[0].costKind, KILN_COST_ELEMENTS);
  EXPECT_EQ(a.debug[0].cost, 16u);
  EXPECT_EQ(a.debug[1].costKind, KILN_COST_FLOPS);
  EXPECT_EQ(a.debug[1].cost, 1234567u);
  EXPECT_EQ(spaceName(KILN_SPACE_OUTPUT(2)), "output 2");
}

// Offset of the DEBUG section in `bytes`.
uint64_t debugOffset(const std::vector<uint8_t>& bytes) {
  for (const kiln_section& s : readArtifact(bytes, "a.kiln").sections)
    if (s.kind == KILN_SECTION_DEBUG) return s.offset;
  ADD_FAILURE() << "no DEBUG section";
  return 0;
}

std::string readError(const std::vector<uint8_t>& bytes) {
  try {
    readArtifact(bytes, "c.kiln");
  } catch (const CliError& e) {
    return e.what();
  }
  return "";
}

TEST(ArtifactReader, CostTableErrors) {
  std::vector<uint8_t> bytes = sampleArtifact();
  uint64_t debug = debugOffset(bytes);
  kiln_debug_costs costs;
  std::memcpy(&costs, bytes.data() + debug + sizeof(kiln_debug), sizeof costs);

  std::vector<uint8_t> outside = bytes;
  uint32_t far = 1u << 20;
  std::memcpy(outside.data() + debug + sizeof(kiln_debug), &far, 4);
  EXPECT_NE(readError(outside).find("the DEBUG cost table lies outside DEBUG"), std::string::npos)
      << readError(outside);

  std::vector<uint8_t> badKind = bytes;
  uint32_t kind = 9;
  std::memcpy(badKind.data() + debug + costs.costs_offset + sizeof(kiln_debug_cost) + 8, &kind, 4);
  EXPECT_NE(readError(badKind).find("DEBUG cost 1 has unknown kind 9"), std::string::npos)
      << readError(badKind);

  // costs_offset 0: a cost record without a table, read as "no costs".
  std::vector<uint8_t> none = bytes;
  uint32_t zero = 0;
  std::memcpy(none.data() + debug + sizeof(kiln_debug), &zero, 4);
  ArtifactSummary a = readArtifact(none, "n.kiln");
  EXPECT_FALSE(a.debugHasCosts);
  EXPECT_EQ(a.debug[1].costKind, KILN_COST_NONE);
  EXPECT_EQ(a.debug[1].nodeName, "relu0 (Relu)");
}

// DEBUG's note on the build (kiln compile --fix-input) is read back; a wrong size is refused.
TEST(ArtifactReader, DebugNote) {
  std::vector<uint8_t> plain = sampleArtifact();
  EXPECT_EQ(readArtifact(plain, "a.kiln").debugNote, "");
  emit::ArtifactContents c = sampleContents();
  c.debugNote = "input 'shape' fixed at compile time";
  std::vector<uint8_t> bytes = emit::serializeArtifact(c);
  EXPECT_EQ(readArtifact(bytes, "a.kiln").debugNote, "input 'shape' fixed at compile time");
  uint64_t debug = debugOffset(bytes);
  uint32_t size = 5;
  std::memcpy(bytes.data() + debug + sizeof(kiln_debug) + 8, &size, 4);
  EXPECT_NE(readError(bytes).find("the DEBUG note has the wrong size"), std::string::npos)
      << readError(bytes);
}

TEST(ArtifactReader, CorruptCopiesNeverCrash) {
  std::vector<uint8_t> original = sampleArtifact();
  std::mt19937 random(12345);
  int read = 0, refused = 0;
  for (int trial = 0; trial < 5000; ++trial) {
    std::vector<uint8_t> bytes = original;
    int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = random() % bytes.size();
      bytes[at] = static_cast<uint8_t>(random());
    }
    if (trial % 10 == 0) bytes.resize(random() % bytes.size());
    try {
      readArtifact(bytes, "c.kiln");
      ++read;
    } catch (const CliError&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(read, 0);
}

}  // namespace
}  // namespace kiln::cli
