// Tests for serializeArtifact: the layout read back through the format structs, section
// alignment, external constants, DEBUG, and byte-for-byte reproducibility.
#include "kiln/emit/artifact_builder.h"

#include <gtest/gtest.h>

#include <cstring>

namespace kiln::emit {
namespace {

ArtifactContents sample() {
  ArtifactContents c;
  c.arch = KILN_ARCH_X86_64;
  c.abi = KILN_ABI_LP64;
  c.cpuFeatures = KILN_X86_SSE4_2 | KILN_X86_AVX2;
  c.arenaSize = 4096;
  c.stackBound = 256;
  c.kernels.push_back({{{16, KILN_ACCESS_READ, 4}, {16, KILN_ACCESS_WRITE, 4}}});
  FunctionInfo f;
  f.name = "main";
  f.inputs.push_back({"x", KILN_DTYPE_F32, {2, 2}, 64});
  f.outputs.push_back({"y", KILN_DTYPE_F32, {2, 2}, 64});
  BindingRef b[] = {{KILN_SPACE_INPUT(0), 0}, {KILN_SPACE_OUTPUT(0), 0}};
  f.commands.dispatch(0, 1, b);
  f.commands.ret();
  c.functions.push_back(std::move(f));
  c.constants.assign(100, 7);
  c.kernelElf = {0x7f, 'E', 'L', 'F', 1, 2, 3};
  c.debug.push_back({"dispatch_0_relu", "Relu_3", KILN_COST_ELEMENTS, 4});
  return c;
}

template <typename T>
T read(const std::vector<uint8_t>& bytes, size_t offset) {
  T value;
  EXPECT_LE(offset + sizeof(T), bytes.size());
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

const kiln_section* findSection(const std::vector<uint8_t>& bytes, uint32_t kind) {
  auto header = read<kiln_header>(bytes, 0);
  for (uint32_t i = 0; i < header.section_count; ++i) {
    auto* s = reinterpret_cast<const kiln_section*>(bytes.data() + header.section_table_offset +
                                                    i * sizeof(kiln_section));
    if (s->kind == kind) return s;
  }
  return nullptr;
}

TEST(ArtifactBuilder, HeaderAndSections) {
  std::vector<uint8_t> bytes = serializeArtifact(sample());
  auto header = read<kiln_header>(bytes, 0);
  EXPECT_EQ(std::memcmp(header.magic, "KILN", 4), 0);
  EXPECT_EQ(header.format_major, KILN_FORMAT_MAJOR);
  EXPECT_EQ(header.file_size, bytes.size());
  EXPECT_EQ(bytes.size() % 64, 0u);
  EXPECT_EQ(header.arch, KILN_ARCH_X86_64);
  EXPECT_EQ(header.cpu_features, uint64_t{KILN_X86_SSE4_2 | KILN_X86_AVX2});
  EXPECT_EQ(header.section_count, 5u);
  EXPECT_EQ(header.section_table_offset, 64u);
  for (uint32_t kind = KILN_SECTION_META; kind <= KILN_SECTION_DEBUG; ++kind) {
    const kiln_section* s = findSection(bytes, kind);
    ASSERT_NE(s, nullptr) << kind;
    EXPECT_EQ(s->offset % 64, 0u);
    EXPECT_LE(s->offset + s->size, bytes.size());
  }
  const kiln_section* constants = findSection(bytes, KILN_SECTION_CONSTANTS);
  EXPECT_EQ(constants->size, 100u);
  EXPECT_EQ(bytes[constants->offset + 99], 7);
  const kiln_section* kernels = findSection(bytes, KILN_SECTION_KERNELS);
  EXPECT_EQ(kernels->flags, 0u);
  EXPECT_EQ(kernels->size, 7u);
}

TEST(ArtifactBuilder, MetaTables) {
  std::vector<uint8_t> bytes = serializeArtifact(sample());
  size_t base = findSection(bytes, KILN_SECTION_META)->offset;
  auto meta = read<kiln_meta>(bytes, base);
  EXPECT_EQ(meta.arena_size, 4096u);
  EXPECT_EQ(meta.stack_bound, 256u);
  EXPECT_EQ(meta.kernel_count, 1u);
  EXPECT_EQ(meta.function_count, 1u);
  EXPECT_EQ(meta.tensor_count, 2u);
  EXPECT_EQ(meta.binding_sig_count, 2u);
  auto strings = [&](uint32_t offset) {
    return std::string(reinterpret_cast<const char*>(bytes.data()) + base + meta.strings_offset +
                       offset);
  };
  auto f = read<kiln_function>(bytes, base + meta.functions_offset);
  EXPECT_EQ(strings(f.name), "main");
  EXPECT_EQ(f.input_count, 1u);
  EXPECT_EQ(f.output_count, 1u);
  EXPECT_EQ(f.commands_offset, 0u);
  EXPECT_EQ(f.commands_size, 8u);  // dispatch 0 1 (2,0) (3,0): 7 bytes; return: 1
  EXPECT_EQ(f.dispatch_count, 1u);
  auto y = read<kiln_tensor>(bytes, base + meta.tensors_offset + sizeof(kiln_tensor));
  EXPECT_EQ(strings(y.name), "y");
  EXPECT_EQ(y.rank, 2u);
  EXPECT_EQ(y.dims[1], 2u);
  EXPECT_EQ(y.byte_size, 16u);
  EXPECT_EQ(y.alignment, 64u);
  auto sig = read<kiln_kernel_signature>(bytes, base + meta.signatures_offset);
  EXPECT_EQ(sig.binding_count, 2u);
  auto b1 = read<kiln_binding_signature>(bytes, base + meta.binding_sigs_offset + 16);
  EXPECT_EQ(b1.length, 16u);
  EXPECT_EQ(b1.access, KILN_ACCESS_WRITE);
}

TEST(ArtifactBuilder, DebugSection) {
  std::vector<uint8_t> bytes = serializeArtifact(sample());
  size_t base = findSection(bytes, KILN_SECTION_DEBUG)->offset;
  auto debug = read<kiln_debug>(bytes, base);
  EXPECT_EQ(debug.entry_count, 1u);
  auto entry = read<kiln_debug_entry>(bytes, base + debug.entries_offset);
  const char* strings = reinterpret_cast<const char*>(bytes.data()) + base + debug.strings_offset;
  EXPECT_STREQ(strings + entry.dispatch_name, "dispatch_0_relu");
  EXPECT_STREQ(strings + entry.node_name, "Relu_3");
  // The cost table: its record right after the header, the entries at 32 (1.0 readers skip
  // both), one 16-byte cost per dispatch after the entries.
  EXPECT_EQ(debug.entries_offset, 32u);
  auto costs = read<kiln_debug_costs>(bytes, base + sizeof(kiln_debug));
  EXPECT_EQ(costs.costs_offset, 40u);
  auto cost = read<kiln_debug_cost>(bytes, base + costs.costs_offset);
  EXPECT_EQ(cost.kind, uint32_t{KILN_COST_ELEMENTS});
  EXPECT_EQ(cost.count, 4u);
  EXPECT_EQ(debug.strings_offset, 56u);

  ArtifactContents stripped = sample();
  stripped.debug.clear();
  std::vector<uint8_t> small = serializeArtifact(stripped);
  EXPECT_EQ(findSection(small, KILN_SECTION_DEBUG), nullptr);
  EXPECT_LT(small.size(), bytes.size());
}

TEST(ArtifactBuilder, ExternalConstantsKeepSizeAndHash) {
  ArtifactContents c = sample();
  c.externalConstants = true;
  std::vector<uint8_t> bytes = serializeArtifact(c);
  const kiln_section* s = findSection(bytes, KILN_SECTION_CONSTANTS);
  EXPECT_EQ(s->flags, uint32_t{KILN_SECTION_FLAG_EXTERNAL});
  auto record = read<kiln_external_constants>(bytes, s->offset);
  EXPECT_EQ(record.size, 100u);
  EXPECT_EQ(record.hash, kiln_hash64(c.constants.data(), c.constants.size()));
}

TEST(ArtifactBuilder, StaticKernelLibraryName) {
  ArtifactContents c = sample();
  c.kernelElf.clear();
  c.staticLibraryName = "digits_kernels";
  std::vector<uint8_t> bytes = serializeArtifact(c);
  const kiln_section* s = findSection(bytes, KILN_SECTION_KERNELS);
  EXPECT_EQ(s->flags, uint32_t{KILN_SECTION_FLAG_STATIC});
  EXPECT_STREQ(reinterpret_cast<const char*>(bytes.data() + s->offset), "digits_kernels");
}

TEST(ArtifactBuilder, Reproducible) {
  EXPECT_EQ(serializeArtifact(sample()), serializeArtifact(sample()));
}

}  // namespace
}  // namespace kiln::emit
