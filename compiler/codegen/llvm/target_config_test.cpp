// Target table: every friendly name resolves to the documented triple/CPU/features and
// float ABI; raw overrides win; bad names, triples, CPUs and features give clear errors.
#include "kiln/codegen/target_config.h"

#include <gtest/gtest.h>

#include "kiln/support/diagnostics.h"

namespace kiln::codegen {
namespace {

TargetConfig resolve(const std::string& name) {
  TargetRequest request;
  request.name = name;
  return resolveTarget(request);
}

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

struct Expected {
  const char* name;
  const char* triple;
  const char* cpu;
  TargetArch arch;
  FloatAbi floatAbi;
  KernelOutput output;
  const char* abiName;
};

TEST(TargetConfig, FriendlyNamesResolve) {
  const Expected table[] = {
      {"x86_64", "x86_64-unknown-linux-gnu", "x86-64-v2", TargetArch::X86_64, FloatAbi::Hard,
       KernelOutput::SharedElf, ""},
      {"x86_64-v3", "x86_64-unknown-linux-gnu", "x86-64-v3", TargetArch::X86_64, FloatAbi::Hard,
       KernelOutput::SharedElf, ""},
      {"x86_64-v4", "x86_64-unknown-linux-gnu", "x86-64-v4", TargetArch::X86_64, FloatAbi::Hard,
       KernelOutput::SharedElf, ""},
      {"aarch64", "aarch64-unknown-linux-gnu", "generic", TargetArch::AArch64, FloatAbi::Hard,
       KernelOutput::SharedElf, ""},
      {"aarch64-dotprod", "aarch64-unknown-linux-gnu", "generic", TargetArch::AArch64,
       FloatAbi::Hard, KernelOutput::SharedElf, ""},
      {"riscv64", "riscv64-unknown-linux-gnu", "generic-rv64", TargetArch::RiscV64, FloatAbi::Hard,
       KernelOutput::SharedElf, "lp64d"},
      {"cortex-m4", "thumbv7em-none-eabi", "cortex-m4", TargetArch::Arm32, FloatAbi::Soft,
       KernelOutput::RelocatableObject, ""},
      {"cortex-m33", "thumbv8m.main-none-eabihf", "cortex-m33", TargetArch::Arm32, FloatAbi::Hard,
       KernelOutput::RelocatableObject, ""},
      {"cortex-m7", "thumbv7em-none-eabihf", "cortex-m7", TargetArch::Arm32, FloatAbi::Hard,
       KernelOutput::RelocatableObject, ""},
      {"cortex-m55", "thumbv8.1m.main-none-eabihf", "cortex-m55", TargetArch::Arm32, FloatAbi::Hard,
       KernelOutput::RelocatableObject, ""},
      {"rv32imac", "riscv32-unknown-elf", "generic-rv32", TargetArch::RiscV32, FloatAbi::Soft,
       KernelOutput::RelocatableObject, "ilp32"},
      {"rv32imafc", "riscv32-unknown-elf", "generic-rv32", TargetArch::RiscV32, FloatAbi::Hard,
       KernelOutput::RelocatableObject, "ilp32f"},
  };
  for (const Expected& e : table) {
    SCOPED_TRACE(e.name);
    TargetConfig t = resolve(e.name);
    EXPECT_EQ(t.name, e.name);
    EXPECT_EQ(t.triple, e.triple);
    EXPECT_EQ(t.cpu, e.cpu);
    EXPECT_EQ(t.arch, e.arch);
    EXPECT_EQ(t.floatAbi, e.floatAbi);
    EXPECT_EQ(t.output, e.output);
    EXPECT_EQ(t.abiName, e.abiName);
    EXPECT_EQ(t.microcontroller, e.output == KernelOutput::RelocatableObject);
  }
  EXPECT_EQ(targetNames().size(), 13u);
}

TEST(TargetConfig, RequiredFeaturesFollowTheCpu) {
  TargetConfig v2 = resolve("x86_64");
  EXPECT_TRUE(has(v2.requiredFeatures, "sse4.2"));
  EXPECT_FALSE(has(v2.requiredFeatures, "avx2"));
  TargetConfig v3 = resolve("x86_64-v3");
  EXPECT_TRUE(has(v3.requiredFeatures, "avx2"));
  EXPECT_TRUE(has(v3.requiredFeatures, "fma"));
  EXPECT_FALSE(has(v3.requiredFeatures, "avx512f"));
  TargetConfig v4 = resolve("x86_64-v4");
  EXPECT_TRUE(has(v4.requiredFeatures, "avx512f"));
  EXPECT_TRUE(has(resolve("aarch64").requiredFeatures, "neon"));
  EXPECT_FALSE(has(resolve("aarch64").requiredFeatures, "dotprod"));
  EXPECT_TRUE(has(resolve("aarch64-dotprod").requiredFeatures, "dotprod"));
  TargetConfig rv = resolve("rv32imafc");
  EXPECT_TRUE(has(rv.requiredFeatures, "f"));
  EXPECT_FALSE(has(resolve("rv32imac").requiredFeatures, "f"));
  EXPECT_TRUE(has(resolve("cortex-m33").requiredFeatures, "dsp"));
  EXPECT_FALSE(has(resolve("cortex-m33").requiredFeatures, "mve"));
  // Cortex-M55: Helium (MVE) and the DSP extension.
  EXPECT_TRUE(has(resolve("cortex-m55").requiredFeatures, "mve"));
  EXPECT_TRUE(has(resolve("cortex-m55").requiredFeatures, "dsp"));
  EXPECT_TRUE(has(resolve("cortex-m33").requiredFeatures, "fpv5-sp"));
  EXPECT_FALSE(has(resolve("cortex-m4").requiredFeatures, "fpv5-sp"));
}

TEST(TargetConfig, HostUsesTheCompilingMachine) {
  TargetConfig host = resolve("host");
  EXPECT_EQ(host.name, "host");
  EXPECT_EQ(host.output, KernelOutput::SharedElf);
  EXPECT_FALSE(host.cpu.empty());
#if defined(__x86_64__)
  EXPECT_EQ(host.arch, TargetArch::X86_64);
  EXPECT_NE(host.features.find("+sse2"), std::string::npos);
#endif
}

TEST(TargetConfig, RawOverridesWin) {
  TargetRequest request;
  request.name = "x86_64";
  request.cpu = "x86-64-v3";
  request.features = "-fma";
  TargetConfig t = resolveTarget(request);
  EXPECT_EQ(t.cpu, "x86-64-v3");
  EXPECT_TRUE(has(t.requiredFeatures, "avx2"));
  EXPECT_FALSE(has(t.requiredFeatures, "fma"));

  TargetRequest raw;
  raw.name = "";
  raw.triple = "riscv32-unknown-elf";
  raw.features = "+m,+f";
  TargetConfig r = resolveTarget(raw);
  EXPECT_EQ(r.name, "custom");
  EXPECT_EQ(r.arch, TargetArch::RiscV32);
  EXPECT_EQ(r.abiName, "ilp32f");
  EXPECT_EQ(r.output, KernelOutput::RelocatableObject);
}

void expectError(const TargetRequest& request, const std::string& message) {
  try {
    resolveTarget(request);
    FAIL() << "expected an error containing: " << message;
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(TargetConfig, ErrorsNameTheFlag) {
  TargetRequest bad;
  bad.name = "pentium";
  expectError(bad, "unknown --target 'pentium'; valid targets: host, x86_64, x86_64-v3");
  expectError(bad, "rv32imafc");

  TargetRequest triple;
  triple.name = "";
  triple.triple = "mips-unknown-linux-gnu";
  expectError(triple, "unsupported --target-triple 'mips-unknown-linux-gnu'");

  TargetRequest cpu;
  cpu.name = "aarch64";
  cpu.cpu = "cortex-z99";
  expectError(cpu, "unknown --target-cpu 'cortex-z99' for triple aarch64-unknown-linux-gnu");

  TargetRequest feature;
  feature.name = "x86_64";
  feature.features = "+avx9";
  expectError(feature, "unknown --target-features entry '+avx9'");

  TargetRequest malformed;
  malformed.name = "x86_64";
  malformed.features = "avx2";
  expectError(malformed, "malformed --target-features entry 'avx2'");

  // Armv6-M and Armv8-M Baseline have no hardware divide / long multiply: refused by name
  // (the kernels would need library routines the object cannot call).
  for (const char* cpu : {"cortex-m0", "cortex-m0plus", "cortex-m23"}) {
    TargetRequest small;
    small.name = "";
    small.triple =
        std::string(cpu) == "cortex-m23" ? "thumbv8m.base-none-eabi" : "thumbv6m-none-eabi";
    small.cpu = cpu;
    expectError(small, "--target-cpu '" + std::string(cpu) + "' (" + small.triple +
                           ") is not supported: kiln's kernels need Thumb-2 with hardware divide");
  }
}

}  // namespace
}  // namespace kiln::codegen
