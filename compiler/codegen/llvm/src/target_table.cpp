// The table of friendly target names and the resolution of a TargetRequest (friendly name
// plus raw --target-triple/--target-cpu/--target-features overrides) into a TargetConfig.
#include <string_view>

#include "codegen_error.h"
#include "kiln/codegen/target_config.h"
#include "target_llvm.h"

namespace kiln::codegen {
namespace {

struct FriendlyTarget {
  const char* name;
  const char* triple;
  const char* cpu;
  const char* features;
  FloatAbi floatAbi;
  const char* abiName;
};

// Settings checked against LLVM 19 (see ../shared/notes/toolchain.md).
const FriendlyTarget kTargets[] = {
    {"x86_64", "x86_64-unknown-linux-gnu", "x86-64-v2", "", FloatAbi::Hard, ""},
    {"x86_64-v3", "x86_64-unknown-linux-gnu", "x86-64-v3", "", FloatAbi::Hard, ""},
    {"x86_64-v4", "x86_64-unknown-linux-gnu", "x86-64-v4", "", FloatAbi::Hard, ""},
    {"aarch64", "aarch64-unknown-linux-gnu", "generic", "+neon,+fp-armv8", FloatAbi::Hard, ""},
    // Armv8.2-A dot product (sdot): Neoverse N1 and later, Cortex-A55/A76 and later, Apple M1.
    {"aarch64-dotprod", "aarch64-unknown-linux-gnu", "generic", "+neon,+fp-armv8,+dotprod",
     FloatAbi::Hard, ""},
    {"riscv64", "riscv64-unknown-linux-gnu", "generic-rv64", "+m,+a,+f,+d,+c", FloatAbi::Hard,
     "lp64d"},
    {"cortex-m4", "thumbv7em-none-eabi", "cortex-m4", "+soft-float,-fpregs", FloatAbi::Soft, ""},
    {"cortex-m33", "thumbv8m.main-none-eabihf", "cortex-m33", "", FloatAbi::Hard, ""},
    {"cortex-m7", "thumbv7em-none-eabihf", "cortex-m7", "", FloatAbi::Hard, ""},
    // Armv8.1-M with the M-profile vector extension (Helium: integer and f32) and the
    // double-precision FPU; LLVM's cortex-m55 implies them all.
    {"cortex-m55", "thumbv8.1m.main-none-eabihf", "cortex-m55", "", FloatAbi::Hard, ""},
    {"rv32imac", "riscv32-unknown-elf", "generic-rv32", "+m,+a,+c", FloatAbi::Soft, "ilp32"},
    {"rv32imafc", "riscv32-unknown-elf", "generic-rv32", "+m,+a,+f,+c,+zicsr", FloatAbi::Hard,
     "ilp32f"},
};

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Architecture, pointer width and output kind follow from the triple alone.
void classifyTriple(TargetConfig& config) {
  std::string_view triple = config.triple;
  std::string_view archPart = triple.substr(0, triple.find('-'));
  if (archPart == "x86_64") {
    config.arch = TargetArch::X86_64;
  } else if (archPart == "aarch64" || archPart == "arm64") {
    config.arch = TargetArch::AArch64;
  } else if (archPart == "riscv64") {
    config.arch = TargetArch::RiscV64;
  } else if (archPart == "riscv32") {
    config.arch = TargetArch::RiscV32;
  } else if (startsWith(archPart, "thumb") || startsWith(archPart, "arm")) {
    config.arch = TargetArch::Arm32;
  } else {
    fail("unsupported --target-triple '" + config.triple +
         "': kiln generates code for x86_64, aarch64, riscv64, riscv32 and arm/thumb");
  }
  bool is32 = config.arch == TargetArch::Arm32 || config.arch == TargetArch::RiscV32;
  config.pointerBits = is32 ? 32 : 64;
  bool linux = triple.find("-linux") != std::string_view::npos;
  config.output = linux ? KernelOutput::SharedElf : KernelOutput::RelocatableObject;
  config.microcontroller = !linux && is32;
  if (config.arch == TargetArch::Arm32 && triple.find("eabihf") == std::string_view::npos &&
      config.floatAbi == FloatAbi::Hard && !linux) {
    config.floatAbi = FloatAbi::Soft;  // a bare "-eabi" triple passes floats in integer registers
  }
}

std::string validNames() {
  std::string list = "host";
  for (const FriendlyTarget& t : kTargets) list += std::string(", ") + t.name;
  return list;
}

}  // namespace

const std::vector<std::string>& targetNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v{"host"};
    for (const FriendlyTarget& t : kTargets) v.push_back(t.name);
    return v;
  }();
  return names;
}

const char* archName(TargetArch arch) {
  switch (arch) {
    case TargetArch::X86_64:
      return "x86_64";
    case TargetArch::AArch64:
      return "aarch64";
    case TargetArch::RiscV64:
      return "riscv64";
    case TargetArch::Arm32:
      return "arm";
    case TargetArch::RiscV32:
      return "riscv32";
  }
  return "?";
}

TargetConfig resolveTarget(const TargetRequest& request) {
  TargetConfig config;
  std::string name = request.name;
  if (name.empty()) name = request.triple.empty() ? "host" : "custom";

  if (name == "host") {
    config = detail::detectHostTarget();
  } else if (name != "custom") {
    const FriendlyTarget* found = nullptr;
    for (const FriendlyTarget& t : kTargets) {
      if (name == t.name) found = &t;
    }
    if (!found) fail("unknown --target '" + name + "'; valid targets: " + validNames());
    config.triple = found->triple;
    config.cpu = found->cpu;
    config.features = found->features;
    config.floatAbi = found->floatAbi;
    config.abiName = found->abiName;
  } else {
    config.cpu = "generic";
  }
  config.name = name;

  // Raw overrides win over the friendly name's settings.
  if (!request.triple.empty()) {
    if (request.triple != config.triple) config.name = "custom";
    config.triple = request.triple;
  }
  if (!request.cpu.empty()) config.cpu = request.cpu;
  if (!request.features.empty()) {
    config.features =
        config.features.empty() ? request.features : config.features + "," + request.features;
  }
  if (config.triple.empty()) fail("--target=custom needs --target-triple");

  classifyTriple(config);
  if (config.arch == TargetArch::RiscV32 && config.abiName.empty()) {
    bool hasF = config.features.find("+f") != std::string::npos;
    config.abiName = hasF ? "ilp32f" : "ilp32";
    if (!hasF) config.floatAbi = FloatAbi::Soft;
  }
  if (config.arch == TargetArch::RiscV64 && config.abiName.empty()) config.abiName = "lp64d";
  if (config.features.find("+soft-float") != std::string::npos) config.floatAbi = FloatAbi::Soft;

  detail::validateWithLlvm(config);
  return config;
}

}  // namespace kiln::codegen
