// Code-generation targets: friendly names (`host`, `x86_64`, `cortex-m33`, ...) and raw
// triple/CPU/feature overrides resolved into one TargetConfig. LLVM-free: the rest of the
// compiler (CLI, artifact writer) reads it without seeing LLVM.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::codegen {

// Instruction-set family of the generated code (mirrors the artifact's architecture field).
enum class TargetArch : uint8_t { X86_64, AArch64, RiscV64, Arm32, RiscV32 };

// How floating point values are passed and computed.
enum class FloatAbi : uint8_t { Hard, Soft };

// What the code generator hands back: an embedded ELF shared object (hosts running Linux) or
// a relocatable object for a firmware to link (microcontrollers, bare metal).
enum class KernelOutput : uint8_t { SharedElf, RelocatableObject };

// What the user asked for on the command line. Empty fields mean "not given".
struct TargetRequest {
  std::string name = "host";  // friendly name; may be empty when a raw triple is given
  std::string triple;         // --target-triple: overrides the friendly name's triple
  std::string cpu;            // --target-cpu
  std::string features;       // --target-features, LLVM syntax: "+avx2,-fma"
};

// A fully resolved target: everything the code generator and the artifact writer need.
struct TargetConfig {
  std::string name;      // friendly name, or "custom" for a raw triple
  std::string triple;    // LLVM target triple
  std::string cpu;       // LLVM CPU name
  std::string features;  // LLVM feature string, comma separated
  TargetArch arch = TargetArch::X86_64;
  FloatAbi floatAbi = FloatAbi::Hard;
  std::string abiName;  // RISC-V ABI (ilp32, ilp32f, lp64d); empty elsewhere
  KernelOutput output = KernelOutput::SharedElf;
  uint32_t pointerBits = 64;
  bool microcontroller = false;  // optimise for size (Os) and static relocation model
  // CPU features the generated code needs, named as the artifact format names its feature
  // bits (kiln_cpu_feature_name: "avx2", "fma", "avx512f", "neon", "fp16", "f", "dsp",
  // "fpv5-sp", ...).
  std::vector<std::string> requiredFeatures;
};

// The friendly target names, in the order help texts list them.
const std::vector<std::string>& targetNames();

// Resolves a request into a target. Throws kiln::CompileError for an unknown friendly name
// (listing the valid ones), an unknown triple, CPU, or a malformed feature string.
TargetConfig resolveTarget(const TargetRequest& request);

// Architecture names as printed in diagnostics and `kiln dump`.
const char* archName(TargetArch arch);

}  // namespace kiln::codegen
