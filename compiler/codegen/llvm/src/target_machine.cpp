// LLVM side of the target layer: host CPU detection, validation of triple/CPU/features
// against LLVM's registry, the features recorded in the artifact, and TargetMachine creation.
#include "target_machine.h"

#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "codegen_error.h"
#include "target_llvm.h"

namespace kiln::codegen::detail {
namespace {

// Features worth recording in the artifact, per architecture: the runtime refuses to run
// code whose features the CPU lacks. Pairs of (LLVM feature, name recorded in the artifact,
// as format/include/kiln/format/artifact.h spells it).
struct RecordedFeature {
  const char* llvmName;
  const char* recordedName;
};

std::vector<RecordedFeature> interestingFeatures(TargetArch arch) {
  switch (arch) {
    case TargetArch::X86_64:
      return {{"sse4.2", "sse4.2"},     {"avx", "avx"},           {"avx2", "avx2"},
              {"fma", "fma"},           {"f16c", "f16c"},         {"avx512f", "avx512f"},
              {"avx512bw", "avx512bw"}, {"avx512dq", "avx512dq"}, {"avx512vl", "avx512vl"},
              {"avx512vnni", "avx512vnni"}, {"avxvnni", "avxvnni"}};
    case TargetArch::AArch64:
      return {{"neon", "neon"}, {"dotprod", "dotprod"}, {"fullfp16", "fp16"}};
    case TargetArch::RiscV64:
    case TargetArch::RiscV32:
      return {{"m", "m"}, {"a", "a"}, {"f", "f"}, {"d", "d"}, {"c", "c"}, {"v", "v"}};
    case TargetArch::Arm32:
      return {{"dsp", "dsp"}, {"fp-armv8d16sp", "fpv5-sp"}, {"mve", "mve"}};
  }
  return {};
}

const llvm::Target* lookupTarget(const std::string& triple) {
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) fail("unsupported --target-triple '" + triple + "': " + error);
  return target;
}

}  // namespace

void initializeLlvmTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });
}

namespace {

// No MVE gathers or scatters (Helium, Cortex-M55): under QEMU 7.2, the only Cortex-M55 here,
// a MaxPool that LLVM vectorised into gathers with write-back computed wrong values
// (docs/mcu.md, "Helium"); without them every model runs exact there, so the code that
// reaches a device is code that was checked. The switch is LLVM's process-wide option, which
// only the Arm backend reads; lld resets every option when it links (in this process, for the
// embedded ELF), so it is set again before each Arm target machine is made.
void keepMveGathersOff() {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  llvm::StringMap<llvm::cl::Option*>& options = llvm::cl::getRegisteredOptions();
  auto found = options.find("enable-arm-maskedgatscat");
  if (found != options.end() && found->second->getNumOccurrences() == 0)
    found->second->addOccurrence(0, "enable-arm-maskedgatscat", "false");
}

}  // namespace

TargetConfig detectHostTarget() {
  TargetConfig config;
  llvm::Triple triple(llvm::sys::getProcessTriple());
  triple.setVendor(llvm::Triple::UnknownVendor);
  config.triple = triple.str();
  config.cpu = llvm::sys::getHostCPUName().str();
  std::vector<std::string> enabled;
  for (const auto& entry : llvm::sys::getHostCPUFeatures()) {
    if (entry.second) enabled.push_back("+" + entry.getKey().str());
  }
  std::sort(enabled.begin(), enabled.end());  // StringMap order is not deterministic
  for (const std::string& f : enabled) {
    if (!config.features.empty()) config.features += ",";
    config.features += f;
  }
  return config;
}

void validateWithLlvm(TargetConfig& config) {
  initializeLlvmTargets();
  const llvm::Target* target = lookupTarget(config.triple);
  // Created for the default CPU: LLVM warns on stderr about an unknown CPU it is given.
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(config.triple, "", ""));
  if (!sti || !sti->isCPUStringValid(config.cpu)) {
    fail("unknown --target-cpu '" + config.cpu + "' for triple " + config.triple);
  }
  // Every feature must be one LLVM knows (LLVM itself only prints a warning and ignores it).
  llvm::ArrayRef<llvm::SubtargetFeatureKV> known = sti->getAllProcessorFeatures();
  std::string features = config.features;
  size_t pos = 0;
  while (pos < features.size()) {
    size_t end = features.find(',', pos);
    if (end == std::string::npos) end = features.size();
    std::string item = features.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    if (item[0] != '+' && item[0] != '-') {
      fail("malformed --target-features entry '" + item + "': expected +name or -name");
    }
    std::string name = item.substr(1);
    bool found = std::any_of(known.begin(), known.end(),
                             [&](const llvm::SubtargetFeatureKV& kv) { return name == kv.Key; });
    if (!found) fail("unknown --target-features entry '" + item + "' for triple " + config.triple);
  }

  std::unique_ptr<llvm::MCSubtargetInfo> full(
      target->createMCSubtargetInfo(config.triple, config.cpu, config.features));
  // 32-bit Arm: the kernels divide (index arithmetic) and multiply into 64 bits (the int8
  // rescale), which Armv6-M (Cortex-M0/M0+/M1) and Armv8-M Baseline (M23) do only through
  // library routines that a kernel object cannot call.
  if (config.arch == TargetArch::Arm32 &&
      (!full->checkFeatures("+thumb2") || !full->checkFeatures("+hwdiv"))) {
    fail("--target-cpu '" + config.cpu + "' (" + config.triple +
         ") is not supported: kiln's kernels need Thumb-2 with hardware divide (Armv7-M or "
         "Armv8-M Mainline: cortex-m3, cortex-m4, cortex-m7, cortex-m33, cortex-m55, ...)");
  }
  config.requiredFeatures.clear();
  for (const RecordedFeature& feature : interestingFeatures(config.arch)) {
    if (full->checkFeatures(std::string("+") + feature.llvmName)) {
      config.requiredFeatures.push_back(feature.recordedName);
    }
  }
}

bool targetHasFeature(const TargetConfig& config, const char* llvmName) {
  initializeLlvmTargets();
  const llvm::Target* target = lookupTarget(config.triple);
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      target->createMCSubtargetInfo(config.triple, config.cpu, config.features));
  return sti && sti->checkFeatures(std::string("+") + llvmName);
}

std::unique_ptr<llvm::TargetMachine> createTargetMachine(const TargetConfig& config) {
  initializeLlvmTargets();
  if (config.arch == TargetArch::Arm32) keepMveGathersOff();
  const llvm::Target* target = lookupTarget(config.triple);
  llvm::TargetOptions options;
  options.FloatABIType =
      config.floatAbi == FloatAbi::Soft ? llvm::FloatABI::Soft : llvm::FloatABI::Hard;
  options.MCOptions.ABIName = config.abiName;
  options.EmitStackSizeSection = true;
  options.FunctionSections = true;
  options.DataSections = true;
  llvm::Reloc::Model reloc =
      config.output == KernelOutput::SharedElf ? llvm::Reloc::PIC_ : llvm::Reloc::Static;
  llvm::CodeGenOptLevel level =
      config.microcontroller ? llvm::CodeGenOptLevel::Default : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      config.triple, config.cpu, config.features, options, reloc, std::nullopt, level));
  if (!machine) fail("LLVM cannot create a target machine for " + config.triple);
  return machine;
}

}  // namespace kiln::codegen::detail
