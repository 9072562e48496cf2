// Every user-facing load error: a hand-made artifact with one thing wrong, and the exact
// one-line message naming the thing at fault.
#include <gtest/gtest.h>

#include <cstring>

#include "runtime_fixture.h"

namespace kiln::testing {
namespace {

ArtifactSpec base() { return standardSpec(Kernels::kStatic); }

std::string loadError(const std::vector<uint8_t>& bytes, kiln_status_t want,
                      const Loaded::Options& options = Loaded::Options()) {
  Loaded loaded(bytes, options);
  EXPECT_EQ(loaded.status(), want) << loaded.error();
  return loaded.error();
}

std::string loadError(const ArtifactSpec& spec, kiln_status_t want) {
  return loadError(writeArtifact(spec), want);
}

TEST(Validation, StandardArtifactLoads) {
  Loaded loaded(writeArtifact(base()));
  EXPECT_EQ(loaded.status(), KILN_OK) << loaded.error();
}

TEST(Validation, NewerMinorVersionNamesBoth) {
  ArtifactSpec spec = base();
  spec.formatMinor = KILN_FORMAT_MINOR + 1;
  EXPECT_EQ(loadError(spec, KILN_ERROR_VERSION),
            "artifact format 1.2 is not supported by this runtime (format 1.1)");
}

TEST(Validation, OtherMajorVersionNamesBoth) {
  ArtifactSpec spec = base();
  spec.formatMajor = 2;
  EXPECT_EQ(loadError(spec, KILN_ERROR_VERSION),
            "artifact format 2.0 is not supported by this runtime (format 1.1)");
}

TEST(Validation, WrongArchitecture) {
  ArtifactSpec spec = base();
  spec.arch = KILN_ARCH_ARM;
  spec.abi = KILN_ABI_EABI_HARD;
  EXPECT_EQ(loadError(spec, KILN_ERROR_UNSUPPORTED),
            "artifact targets arm (eabi-hard) but this runtime runs x86_64 (lp64)");
}

TEST(Validation, MissingCpuFeaturesAreNamed) {
  ArtifactSpec spec = base();
  spec.cpuFeatures = KILN_X86_AVX512F | KILN_X86_AVX512BW | (uint64_t{1} << 40);
  Loaded::Options options;
  options.elfLoader = false;  // no detected features: only the compiled-in ones count
  EXPECT_EQ(loadError(writeArtifact(spec), KILN_ERROR_UNSUPPORTED, options),
            "artifact needs CPU features this processor lacks: avx512f avx512bw bit40");
}

// Kernels using vpdpbusd (int8 dot products) need VNNI, which an AVX-512 processor may lack.
TEST(Validation, MissingVnniIsNamed) {
  ArtifactSpec spec = base();
  spec.cpuFeatures = KILN_X86_AVX2 | KILN_X86_AVX512VNNI | KILN_X86_AVXVNNI;
  Loaded::Options options;
  options.elfLoader = false;
  EXPECT_EQ(loadError(writeArtifact(spec), KILN_ERROR_UNSUPPORTED, options),
            "artifact needs CPU features this processor lacks: avx2 avx512vnni avxvnni");
}

TEST(Validation, DetectedFeaturesAreAccepted) {
  ArtifactSpec spec = base();
  spec.cpuFeatures = kiln_host_cpu_features();
  Loaded loaded(writeArtifact(spec));
  EXPECT_EQ(loaded.status(), KILN_OK) << loaded.error();
}

TEST(Validation, ElfArtifactWithoutElfLoader) {
  Loaded::Options options;
  options.elfLoader = false;
  EXPECT_EQ(loadError(writeArtifact(standardSpec(Kernels::kElf)), KILN_ERROR_UNSUPPORTED, options),
            "artifact embeds ELF kernels but this runtime has no ELF loader (compile the model as "
            "a static kernel library, or use the host runtime's kiln_host_load_options_init)");
}

TEST(Validation, ExternalConstantsMissing) {
  EXPECT_EQ(loadError(writeArtifact(standardSpec(Kernels::kStatic, Constants::kExternal)),
                      KILN_ERROR_CONSTANTS),
            "artifact needs its external constants (128 bytes) but none were given");
}

TEST(Validation, ExternalConstantsWrongSize) {
  AlignedBuffer constants(standardConstants());
  Loaded::Options options;
  options.externalConstants = constants.data();
  options.externalConstantsSize = 64;
  EXPECT_EQ(loadError(writeArtifact(standardSpec(Kernels::kStatic, Constants::kExternal)),
                      KILN_ERROR_CONSTANTS, options),
            "external constants are 64 bytes, the artifact expects 128");
}

TEST(Validation, ExternalConstantsWrongHash) {
  std::vector<uint8_t> bytes = standardConstants();
  bytes[5] ^= 1;
  AlignedBuffer constants(bytes);
  Loaded::Options options;
  options.externalConstants = constants.data();
  options.externalConstantsSize = constants.size();
  std::string error = loadError(writeArtifact(standardSpec(Kernels::kStatic, Constants::kExternal)),
                                KILN_ERROR_CONSTANTS, options);
  EXPECT_EQ(error.rfind("external constants hash 0x", 0), 0u) << error;
  EXPECT_NE(error.find("(wrong or stale constants file)"), std::string::npos) << error;
}

TEST(Validation, StaticLibraryNotGiven) {
  Loaded::Options options;
  options.libraries = {};
  EXPECT_EQ(loadError(writeArtifact(base()), KILN_ERROR_KERNELS, options),
            "artifact needs the static kernel library 'kiln_test_kernels', which the application "
            "did not pass in kiln_load_options.kernel_libraries");
}

TEST(Validation, StaticLibraryAbiVersionMismatch) {
  kiln_kernel_library other = *kiln_test_kernels_static();
  other.abi_version = 7;
  Loaded::Options options;
  options.libraries = {&other};
  EXPECT_EQ(loadError(writeArtifact(base()), KILN_ERROR_KERNELS, options),
            "static kernel library has kernel ABI version 7, this runtime implements version 1");
}

TEST(Validation, StaticLibraryKernelCountMismatch) {
  ArtifactSpec spec = base();
  spec.kernels.push_back({{4, KILN_ACCESS_READ}});
  EXPECT_EQ(loadError(spec, KILN_ERROR_KERNELS),
            "static kernel library provides 4 kernels, the artifact needs 5");
}

TEST(Validation, UnalignedArtifactBuffer) {
  std::vector<uint8_t> bytes = writeArtifact(base());
  AlignedBuffer buffer(bytes.size() + 8);
  std::memcpy(buffer.data() + 8, bytes.data(), bytes.size());
  AlignedBuffer memory(kiln_module_memory_size());
  char error[128];
  kiln_load_options options;
  kiln_load_options_init(&options);
  options.error = error;
  options.error_capacity = sizeof error;
  kiln_module* module = nullptr;
  EXPECT_EQ(kiln_module_load(buffer.data() + 8, bytes.size(), &options, memory.data(),
                             memory.size(), &module),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(error, "artifact buffer is not 64-byte aligned");
}

TEST(Validation, BadMagic) {
  std::vector<uint8_t> bytes = writeArtifact(base());
  bytes[0] = 'X';
  EXPECT_EQ(loadError(bytes, KILN_ERROR_MALFORMED), "not a kiln artifact (bad magic)");
}

TEST(Validation, Truncated) {
  std::vector<uint8_t> bytes = writeArtifact(base());
  size_t full = bytes.size();
  bytes.resize(full - 1);
  EXPECT_EQ(loadError(bytes, KILN_ERROR_MALFORMED),
            "artifact is truncated: header says " + std::to_string(full) + " bytes, buffer has " +
                std::to_string(full - 1));
}

TEST(Validation, BindingOutsideItsSpace) {
  ArtifactSpec spec = base();
  spec.functions[1].commands = CommandBuilder();
  spec.functions[1].commands.dispatch(kRelu, 1, {{KILN_SPACE_ARENA, 160}}).ret();
  EXPECT_EQ(loadError(spec, KILN_ERROR_MALFORMED),
            "function 'relu', command at byte 0: range 160+64 exceeds space 0 (192 bytes)");
}

TEST(Validation, WriteToConstants) {
  ArtifactSpec spec = base();
  spec.functions[1].commands = CommandBuilder();
  spec.functions[1].commands.fill(KILN_SPACE_CONSTANTS, 0, 4, 0).ret();
  EXPECT_EQ(loadError(spec, KILN_ERROR_MALFORMED),
            "function 'relu', command at byte 0: writes to read-only memory space 1");
}

TEST(Validation, MisalignedBinding) {
  ArtifactSpec spec = base();
  spec.functions[1].commands = CommandBuilder();
  spec.functions[1].commands.dispatch(kRelu, 1, {{KILN_SPACE_ARENA, 2}}).ret();
  EXPECT_EQ(loadError(spec, KILN_ERROR_MALFORMED),
            "function 'relu', command at byte 0: offset 2 in space 0 is not 4-byte aligned");
}

TEST(Validation, NoSuchSpace) {
  ArtifactSpec spec = base();
  spec.functions[1].commands = CommandBuilder();
  spec.functions[1].commands.dispatch(kRelu, 1, {{KILN_SPACE_OUTPUT(1), 0}}).ret();
  EXPECT_EQ(loadError(spec, KILN_ERROR_MALFORMED),
            "function 'relu', command at byte 0: memory space 5 does not exist in this function");
}

TEST(Validation, NoSuchKernel) {
  ArtifactSpec spec = base();
  spec.functions[1].commands = CommandBuilder();
  spec.functions[1].commands.dispatch(9, 1, {}).ret();
  EXPECT_EQ(loadError(spec, KILN_ERROR_MALFORMED),
            "function 'relu', command at byte 0: kernel 9 does not exist (4 kernels)");
}

TEST(Validation, ConflictingCommandsInOneStage) {
  ArtifactSpec spec = base();
  spec.functions[1].commands = CommandBuilder();
  spec.functions[1]
      .commands.copy(KILN_SPACE_INPUT(0), 0, KILN_SPACE_OUTPUT(0), 0, 64)
      .dispatch(kRelu, 1, {{KILN_SPACE_OUTPUT(0), 0}})
      .ret();
  EXPECT_EQ(loadError(spec, KILN_ERROR_MALFORMED),
            "function 'relu', command at byte 6: conflicts with the command at byte "
            "0 in the same stage (both touch space 3, one writes)");
}

TEST(Validation, MissingReturn) {
  ArtifactSpec spec = base();
  spec.functions[1].commands = CommandBuilder();
  spec.functions[1].commands.barrier();
  std::string error = loadError(spec, KILN_ERROR_MALFORMED);
  EXPECT_NE(error.find("stream does not end with RETURN"), std::string::npos) << error;
}

TEST(Validation, ZeroWorkgroups) {
  ArtifactSpec spec = base();
  spec.functions[1].commands = CommandBuilder();
  spec.functions[1].commands.dispatch(kRelu, 0, {{KILN_SPACE_ARENA, 0}}).ret();
  EXPECT_EQ(loadError(spec, KILN_ERROR_MALFORMED),
            "function 'relu', command at byte 0: workgroup count 0 is outside 1..65536");
}

TEST(Validation, TensorSizeMustMatchShape) {
  std::vector<uint8_t> bytes = writeArtifact(base());
  // First tensor entry of META: patch its byte_size.
  kiln_header h;
  std::memcpy(&h, bytes.data(), sizeof h);
  SectionSpan meta = sectionSpans(bytes)[0];
  kiln_meta m;
  std::memcpy(&m, bytes.data() + meta.offset, sizeof m);
  uint64_t wrong = 65;
  std::memcpy(bytes.data() + meta.offset + m.tensors_offset + offsetof(kiln_tensor, byte_size),
              &wrong, 8);
  EXPECT_EQ(loadError(bytes, KILN_ERROR_MALFORMED),
            "META: tensor 'x' byte size 65 does not match its shape and dtype");
}

}  // namespace
}  // namespace kiln::testing
