// More load refusals, each provoked by patching one field of a valid artifact, and checked by
// its exact message: section table, META tables, command streams, constants, DEBUG, kernels.
#include <gtest/gtest.h>

#include <cstring>

#include "runtime_fixture.h"

namespace kiln::testing {
namespace {

// A valid artifact plus helpers to patch it.
class Patch {
 public:
  explicit Patch(const ArtifactSpec& spec = standardSpec(Kernels::kStatic))
      : bytes_(writeArtifact(spec)), spans_(sectionSpans(bytes_)) {}

  uint64_t section(uint32_t kind) const {
    for (const SectionSpan& s : spans_)
      if (s.kind == kind) return s.offset;
    ADD_FAILURE() << "no section " << kind;
    return 0;
  }
  // Offset of section-table entry i.
  static uint64_t entry(uint32_t i) { return sizeof(kiln_header) + i * sizeof(kiln_section); }
  kiln_meta meta() const { return get<kiln_meta>(section(KILN_SECTION_META)); }
  uint64_t metaAt(uint64_t offset) const { return section(KILN_SECTION_META) + offset; }

  template <class T>
  T get(uint64_t at) const {
    T v;
    std::memcpy(&v, bytes_.data() + at, sizeof v);
    return v;
  }
  template <class T>
  void set(uint64_t at, T v) {
    std::memcpy(bytes_.data() + at, &v, sizeof v);
  }

  std::string error(kiln_status_t want = KILN_ERROR_MALFORMED) const {
    Loaded loaded(bytes_);
    EXPECT_EQ(loaded.status(), want) << loaded.error();
    return loaded.error();
  }
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
  std::vector<SectionSpan> spans_;
};

// Section order written by the test writer: META, COMMANDS, CONSTANTS, KERNELS, DEBUG.
constexpr uint32_t kMetaEntry = 0, kCommandsEntry = 1, kKernelsEntry = 3;

TEST(SectionMessages, ReservedHeaderBytes) {
  Patch p;
  p.set<uint8_t>(offsetof(kiln_header, reserved) + 3, 1);
  EXPECT_EQ(p.error(), "header: reserved fields are not zero");
}

TEST(SectionMessages, TableOutsideTheFile) {
  Patch p;
  p.set<uint32_t>(offsetof(kiln_header, section_count), 1000);
  EXPECT_EQ(p.error(),
            "section table (offset 64, 1000 entries) lies outside the artifact or is misaligned");
}

TEST(SectionMessages, UnknownKind) {
  Patch p;
  p.set<uint32_t>(Patch::entry(kCommandsEntry), 9);
  EXPECT_EQ(p.error(), "section 1: unknown kind 9");
}

TEST(SectionMessages, DuplicateKind) {
  Patch p;
  p.set<uint32_t>(Patch::entry(kCommandsEntry), KILN_SECTION_META);
  EXPECT_EQ(p.error(), "section 1: second META section");
}

TEST(SectionMessages, InvalidFlags) {
  Patch p;
  p.set<uint32_t>(Patch::entry(kMetaEntry) + 4, KILN_SECTION_FLAG_STATIC);
  EXPECT_EQ(p.error(), "META section: invalid flags or reserved field");
}

TEST(SectionMessages, MisalignedSection) {
  Patch p;
  uint64_t at = p.get<uint64_t>(Patch::entry(kCommandsEntry) + 8);
  p.set<uint64_t>(Patch::entry(kCommandsEntry) + 8, at + 8);
  uint64_t size = p.get<uint64_t>(Patch::entry(kCommandsEntry) + 16);
  EXPECT_EQ(p.error(), "COMMANDS section (offset " + std::to_string(at + 8) + ", " +
                           std::to_string(size) +
                           " bytes) is misaligned or lies outside the artifact");
}

TEST(SectionMessages, OverlappingSections) {
  Patch p;
  p.set<uint64_t>(Patch::entry(kCommandsEntry) + 8, p.get<uint64_t>(Patch::entry(kMetaEntry) + 8));
  EXPECT_EQ(p.error(), "COMMANDS section overlaps META section");
}

TEST(SectionMessages, MissingKernels) {
  Patch p;
  p.set<uint32_t>(offsetof(kiln_header, section_count), 3);  // META, COMMANDS, CONSTANTS
  EXPECT_EQ(p.error(), "artifact has no KERNELS section");
}

TEST(MetaMessages, ArenaAlignment) {
  Patch p;
  p.set<uint32_t>(p.metaAt(offsetof(kiln_meta, arena_alignment)), 16);
  EXPECT_EQ(p.error(), "META: arena alignment is not 64 or reserved fields are set");
}

TEST(MetaMessages, TableOutsideTheSection) {
  Patch p;
  p.set<uint32_t>(p.metaAt(offsetof(kiln_meta, tensor_count)), 100000);
  EXPECT_EQ(p.error(), "META: a table lies outside the section or is misaligned");
}

TEST(MetaMessages, StringTableWithoutNul) {
  Patch p;
  kiln_meta m = p.meta();
  p.set<uint8_t>(p.metaAt(m.strings_offset + m.strings_size - 1), 'x');
  EXPECT_EQ(p.error(), "META: string table does not end with a NUL byte");
}

TEST(MetaMessages, KernelSignatureRange) {
  Patch p;
  kiln_meta m = p.meta();
  p.set<uint32_t>(p.metaAt(m.signatures_offset + 8 * 2), m.binding_sig_count);  // kernel 2
  EXPECT_EQ(p.error(), "META: kernel 2 has an invalid binding signature range");
}

TEST(MetaMessages, BindingSignatureAccess) {
  Patch p;
  kiln_meta m = p.meta();
  p.set<uint8_t>(p.metaAt(m.binding_sigs_offset + 16 * 4 + 8), 0);  // binding 4: no access
  EXPECT_EQ(p.error(), "META: binding signature 4 has invalid access flags or alignment");
}

TEST(MetaMessages, TensorRank) {
  Patch p;
  kiln_meta m = p.meta();
  p.set<uint8_t>(p.metaAt(m.tensors_offset + 48 * 1 + 5), KILN_MAX_RANK + 1);
  EXPECT_EQ(p.error(), "META: tensor 1 has an invalid name, rank or alignment");
}

TEST(MetaMessages, TensorDtype) {
  Patch p;
  kiln_meta m = p.meta();
  p.set<uint8_t>(p.metaAt(m.tensors_offset + 48 * 1 + 4), 42);
  EXPECT_EQ(p.error(), "META: tensor 'y' has unknown dtype code 42");
}

// The first code after f64 (format 1.1's last dtype) is unknown: refused, not sized as 0 bytes.
TEST(MetaMessages, TensorDtypeAfterF64) {
  Patch p;
  kiln_meta m = p.meta();
  p.set<uint8_t>(p.metaAt(m.tensors_offset + 48 * 1 + 4), KILN_DTYPE_COUNT);
  EXPECT_EQ(p.error(), "META: tensor 'y' has unknown dtype code 9");
}

// Format 1.1's f64 tensors load and are described as such.
TEST(MetaMessages, F64TensorsLoad) {
  ArtifactSpec spec = standardSpec(Kernels::kStatic);
  spec.formatMinor = 1;
  spec.functions[1].inputs = {{"x", KILN_DTYPE_F64, {8}}};  // the same 64 bytes as f32[16]
  spec.functions[1].outputs = {{"y", KILN_DTYPE_F64, {8}}};
  Loaded loaded(writeArtifact(spec));
  ASSERT_EQ(loaded.status(), KILN_OK) << loaded.error();
  kiln_tensor_info info;
  ASSERT_EQ(kiln_module_input_info(loaded.module(), 1, 0, &info), KILN_OK);
  EXPECT_EQ(info.dtype, uint32_t{KILN_DTYPE_F64});
  EXPECT_EQ(info.byte_size, 64u);
  EXPECT_STREQ(kiln_dtype_name(info.dtype), "f64");
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_F64), 8u);
}

// f64 is 8 bytes per element: a tensor relabelled f64 without doubling its size is refused.
TEST(MetaMessages, TensorF64ByteSize) {
  Patch p;
  kiln_meta m = p.meta();
  p.set<uint8_t>(p.metaAt(m.tensors_offset + 48 * 1 + 4), KILN_DTYPE_F64);
  EXPECT_NE(p.error().find("does not match its shape and dtype"), std::string::npos);
}

TEST(MetaMessages, FunctionTensorsOutsideTable) {
  Patch p;
  kiln_meta m = p.meta();
  p.set<uint32_t>(p.metaAt(m.functions_offset + 32 * 1 + 8), 9);  // relu: 9 outputs
  EXPECT_EQ(p.error(), "META: function 'relu' has inputs or outputs outside the tensor table");
}

TEST(MetaMessages, FunctionCommandsOverlap) {
  Patch p;
  kiln_meta m = p.meta();
  p.set<uint32_t>(p.metaAt(m.functions_offset + 32 * 1 + 16), 0);  // relu starts at 0
  EXPECT_EQ(p.error(),
            "META: function 'relu' command range lies outside COMMANDS or overlaps the previous "
            "function");
}

TEST(MetaMessages, DuplicateFunctionNames) {
  Patch p;
  kiln_meta m = p.meta();
  uint32_t mainName = p.get<uint32_t>(p.metaAt(m.functions_offset));
  p.set<uint32_t>(p.metaAt(m.functions_offset + 32), mainName);
  EXPECT_EQ(p.error(), "META: two functions are named 'main'");
}

TEST(MetaMessages, DispatchCountsMustMatch) {
  Patch p;
  kiln_meta m = p.meta();
  p.set<uint32_t>(p.metaAt(m.functions_offset + 32 + 28), 2);  // relu has 1 dispatch
  EXPECT_EQ(p.error(),
            "function 'relu', command at byte 13: META gives the function dispatches 5+2, the "
            "streams have 5+1");
}

// A one-function artifact whose stream is given raw.
Patch rawStream(const std::vector<uint8_t>& stream) {
  ArtifactSpec spec = standardSpec(Kernels::kStatic, Constants::kEmbedded, false);
  spec.functions.resize(1);
  Patch p(spec);
  // Replace main's stream by `stream` (same length or shorter; the rest becomes RETURNs).
  kiln_meta m = p.meta();
  uint64_t commands = p.section(KILN_SECTION_COMMANDS);
  uint32_t size = p.get<uint32_t>(p.metaAt(m.functions_offset + 20));
  EXPECT_LE(stream.size(), size);
  std::memcpy(p.bytes().data() + commands, stream.data(), stream.size());
  p.set<uint32_t>(p.metaAt(m.functions_offset + 20), static_cast<uint32_t>(stream.size()));
  p.set<uint32_t>(p.metaAt(m.functions_offset + 28), 0);
  return p;
}

TEST(CommandMessages, UnknownOpcode) {
  EXPECT_EQ(rawStream({0x09}).error(), "function 'main', command at byte 0: unknown opcode 9");
}

TEST(CommandMessages, Truncated) {
  EXPECT_EQ(rawStream({KILN_OP_FILL, 0x00, 0x80}).error(),
            "function 'main', command at byte 0: truncated");
}

TEST(CommandMessages, OverlongVarint) {
  EXPECT_EQ(rawStream({KILN_OP_FILL, 0x80, 0x00, 0x00, 0x01, 0x00, KILN_OP_RETURN}).error(),
            "function 'main', command at byte 0: malformed varint operand");
}

TEST(CommandMessages, CommandAfterReturn) {
  EXPECT_EQ(rawStream({KILN_OP_RETURN, KILN_OP_BARRIER}).error(),
            "function 'main', command at byte 1: command after RETURN");
}

TEST(CommandMessages, WriteToAnInput) {
  EXPECT_EQ(rawStream({KILN_OP_FILL, 2, 0, 4, 0, KILN_OP_RETURN}).error(),
            "function 'main', command at byte 0: writes to read-only memory space 2");
}

TEST(CommandMessages, OverlappingCopy) {
  EXPECT_EQ(rawStream({KILN_OP_COPY, 0, 0, 0, 8, 16, KILN_OP_RETURN}).error(),
            "function 'main', command at byte 0: two of its ranges overlap in space 0 and one is "
            "written");
}

TEST(CommandMessages, AliasedDispatchBindings) {
  // add(a = arena+0, b = arena+0, out = arena+32): out overlaps a and b.
  EXPECT_EQ(rawStream({KILN_OP_DISPATCH, 0, 1, 0, 0, 0, 0, 0, 32, KILN_OP_RETURN}).error(),
            "function 'main', command at byte 0: two of its ranges overlap in space 0 and one is "
            "written");
}

TEST(CommandMessages, ShiftedInPlaceIsRefused) {
  // add(a = arena+0, b = arena+64, out = arena+4): out overlaps a, shifted by one element.
  EXPECT_EQ(rawStream({KILN_OP_DISPATCH, 0, 1, 0, 0, 0, 64, 0, 4, KILN_OP_RETURN}).error(),
            "function 'main', command at byte 0: two of its ranges overlap in space 0 and one is "
            "written");
}

TEST(ConstantsMessages, ExternalRecordReserved) {
  Patch p(standardSpec(Kernels::kStatic, Constants::kExternal));
  p.set<uint8_t>(p.section(KILN_SECTION_CONSTANTS) + 20, 1);
  EXPECT_EQ(p.error(), "CONSTANTS: reserved bytes are not zero");
}

TEST(DebugMessages, EntryCountMustMatch) {
  Patch p;
  p.set<uint32_t>(p.section(KILN_SECTION_DEBUG), 5);
  EXPECT_EQ(p.error(), "DEBUG: tables lie outside the section or do not match the dispatch count");
}

TEST(DebugMessages, NameOutsideTable) {
  Patch p;
  uint64_t debug = p.section(KILN_SECTION_DEBUG);
  kiln_debug d = p.get<kiln_debug>(debug);
  p.set<uint32_t>(debug + d.entries_offset + 8 * 3 + 4, d.strings_size);
  EXPECT_EQ(p.error(), "DEBUG: entry 3 names a string outside the table");
}

TEST(KernelMessages, StaticNameNotTerminated) {
  Patch p;
  uint64_t at = p.section(KILN_SECTION_KERNELS);
  uint64_t size = p.get<uint64_t>(Patch::entry(kKernelsEntry) + 16);
  p.set<uint8_t>(at + size - 1, 'x');
  EXPECT_EQ(p.error(), "KERNELS: static library name is not a NUL-terminated string");
}

TEST(ApiMessages, ModuleMemoryTooSmall) {
  std::vector<uint8_t> bytes = writeArtifact(standardSpec(Kernels::kStatic));
  AlignedBuffer artifact(bytes);
  AlignedBuffer memory(kiln_module_memory_size());
  char error[160];
  kiln_load_options options;
  kiln_load_options_init(&options);
  options.error = error;
  options.error_capacity = sizeof error;
  kiln_module* module = nullptr;
  EXPECT_EQ(kiln_module_load(artifact.data(), artifact.size(), &options, memory.data(), 8, &module),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(error), "module memory must be " +
                                    std::to_string(kiln_module_memory_size()) +
                                    " bytes aligned to " + std::to_string(alignof(void*)));
  EXPECT_EQ(kiln_module_load(nullptr, 0, &options, memory.data(), memory.size(), &module),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(error, "kiln_module_load: NULL artifact, memory or out_module");
}

TEST(ApiMessages, LibraryCountWithoutLibraries) {
  AlignedBuffer artifact(writeArtifact(standardSpec(Kernels::kStatic)));
  AlignedBuffer memory(kiln_module_memory_size());
  char error[160];
  kiln_load_options options;
  kiln_load_options_init(&options);
  options.kernel_library_count = 2;
  options.error = error;
  options.error_capacity = sizeof error;
  kiln_module* module = nullptr;
  EXPECT_EQ(kiln_module_load(artifact.data(), artifact.size(), &options, memory.data(),
                             memory.size(), &module),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(error, "kiln_load_options: kernel_library_count is 2 but kernel_libraries is NULL");
}

TEST(ApiMessages, ErrorBufferIsTruncatedSafely) {
  std::vector<uint8_t> bytes = writeArtifact(standardSpec(Kernels::kStatic));
  bytes[0] = 'X';
  AlignedBuffer artifact(bytes);
  AlignedBuffer memory(kiln_module_memory_size());
  char error[8];
  std::memset(error, '#', sizeof error);
  kiln_load_options options;
  kiln_load_options_init(&options);
  options.error = error;
  options.error_capacity = 6;
  kiln_module* module = nullptr;
  EXPECT_EQ(kiln_module_load(artifact.data(), artifact.size(), &options, memory.data(),
                             memory.size(), &module),
            KILN_ERROR_MALFORMED);
  EXPECT_STREQ(error, "not a");
  EXPECT_EQ(error[6], '#');
}

}  // namespace
}  // namespace kiln::testing
