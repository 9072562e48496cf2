// --output-format=static-lib: for a microcontroller target, one relocatable object OUT.o
// holding the kernels (executed in place), the kernel library struct PREFIX_kernels and the
// artifact bytes PREFIX_artifact (read in place, 64-byte aligned), plus OUT.h declaring them
// with the sizes a firmware needs. --external-constants=FILE.o puts the weights in their own
// object, section .kiln_weights (symbol PREFIX_constants), for the linker script to place;
// any other FILE gets the raw bytes.
#include "static_library.h"

#include <algorithm>
#include <cctype>
#include <fstream>

#include "kiln/codegen/static_object.h"
#include "kiln/support/diagnostics.h"
#include "runtime_figures.h"

namespace kiln::driver {
namespace {

constexpr uint64_t kAlignment = 64;  // KILN_ALIGNMENT

bool isIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// OUT.o -> OUT; anything else is kept whole ("build/model" -> "build/model").
std::filesystem::path outputBase(const std::filesystem::path& output) {
  std::filesystem::path base = output;
  if (base.extension() == ".o" || base.extension() == ".h") base.replace_extension();
  return base;
}

std::filesystem::path withSuffix(const std::filesystem::path& base, const char* suffix) {
  std::filesystem::path path = base;
  path += suffix;
  return path;
}

void writeText(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::path temporary = withSuffix(path, ".tmp");
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw CompileError("cannot write '" + path.string() + "'");
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) throw CompileError("cannot write '" + path.string() + "': " + ec.message());
}

void writeBytes(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  writeText(path, std::string(bytes.begin(), bytes.end()));
}

}  // namespace

OutputFormat parseOutputFormat(const std::string& text) {
  if (text == "artifact") return OutputFormat::Artifact;
  if (text == "static-lib") return OutputFormat::StaticLib;
  throw CompileError("unknown --output-format '" + text + "' (expected artifact or static-lib)");
}

std::string symbolPrefix(const CompileOptions& options) {
  if (!options.name.empty()) {
    if (!isIdentifier(options.name))
      throw CompileError("--name '" + options.name +
                         "' is not a C identifier (letters, digits and '_', not starting with a "
                         "digit)");
    return options.name;
  }
  std::string stem = outputBase(options.outputPath).filename().string();
  std::string prefix;
  for (char c : stem) prefix += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (prefix.empty() || std::isdigit(static_cast<unsigned char>(prefix[0]))) prefix = "m_" + prefix;
  return prefix;
}

std::string staticLibraryName(const CompileOptions& options) {
  if (options.outputFormat == OutputFormat::Artifact && options.name.empty()) return "kiln_kernels";
  return symbolPrefix(options) + "_kernels";
}

void checkOutputFormat(const CompileOptions& options, const codegen::TargetConfig& target) {
  if (options.outputFormat != OutputFormat::StaticLib) {
    if (!options.name.empty()) symbolPrefix(options);  // still a C identifier
    return;
  }
  if (target.output != codegen::KernelOutput::RelocatableObject)
    throw CompileError(
        "--output-format=static-lib needs a microcontroller target (cortex-m4, "
        "cortex-m33, cortex-m7, cortex-m55, rv32imac, rv32imafc); target '" +
        target.name + "' (" + target.triple + ") builds an embedded ELF");
  if (!options.kernelObjectPath.empty())
    throw CompileError("--output-format=static-lib writes the kernels into its own object; "
                       "a separate kernel object path cannot be given");
  symbolPrefix(options);
}

emit::Footprint computeFootprint(const CompiledModel& model) {
  RuntimeFigures runtime = runtimeFigures(model.target);
  codegen::ObjectSizes kernels = codegen::measureObject(model.kernelObject);
  emit::Footprint f;
  f.runtimeCode = runtime.codeBytes;
  f.kernelCode = kernels.code;
  f.kernelTables = kernels.readOnly + kernels.data;
  f.constants = model.summary.constantsBytes;
  f.commands = model.artifact.size() - (model.externalConstants.empty() ? f.constants : 0);
  f.arena = model.summary.arenaBytes;
  f.moduleState = runtime.moduleBytes;
  uint64_t head = runtime.contextBytes +
                  uint64_t{model.firmware.maxStageDispatches} * runtime.dispatchBytes +
                  uint64_t{model.firmware.maxStageBindings} * runtime.bindingBytes;
  f.contextState = (head + kAlignment - 1) / kAlignment * kAlignment;
  f.kernelStack = model.firmware.kernelStackBytes;
  f.runtimeStack = runtime.callStackBytes;
  f.loadStack = runtime.loadStackBytes;
  f.runtimeMeasured = runtime.measured;
  return f;
}

void writeStaticLibrary(const CompileOptions& options, CompiledModel& model) {
  const std::string prefix = symbolPrefix(options);
  const std::filesystem::path base = outputBase(options.outputPath);
  const std::filesystem::path objectPath = withSuffix(base, ".o");
  const std::filesystem::path headerPath = withSuffix(base, ".h");
  const std::filesystem::path& weightsPath = options.externalConstantsPath;
  const bool weightsObject = !weightsPath.empty() && weightsPath.extension() == ".o";
  if (!weightsPath.empty() && (weightsPath == objectPath || weightsPath == headerPath))
    throw CompileError("--external-constants '" + weightsPath.string() +
                       "' would overwrite the static library's own output");

  // The artifact as read-only data next to the kernels: one object for the firmware to link.
  codegen::DataSymbol artifact{prefix + "_artifact", ".rodata." + prefix + "_artifact", 64,
                               model.artifact};
  std::vector<uint8_t> object = codegen::mergeObjects(
      {model.kernelObject, codegen::emitDataObject(model.target, {artifact})});

  emit::FirmwareHeaderInfo info;
  info.prefix = prefix;
  info.modelFile = options.modelPath.filename().string();
  info.targetName = model.target.name;
  info.triple = model.target.triple;
  info.artifactBytes = model.artifact.size();
  info.constantsBytes = model.summary.constantsBytes;
  info.constantsExternal = !weightsPath.empty();
  info.constantsSymbol = weightsObject;
  for (const auto& [name, bytes] : model.firmware.inputs) info.inputs.push_back({name, bytes});
  for (const auto& [name, bytes] : model.firmware.outputs) info.outputs.push_back({name, bytes});
  info.footprint = computeFootprint(model);

  if (!weightsPath.empty()) {
    if (weightsObject) {
      codegen::DataSymbol weights{prefix + "_constants", ".kiln_weights", 64,
                                  model.externalConstants};
      writeBytes(weightsPath, codegen::emitDataObject(model.target, {weights}));
    } else {
      writeBytes(weightsPath, model.externalConstants);
    }
  }
  writeBytes(objectPath, object);
  writeText(headerPath, emit::firmwareHeader(info));
  model.summary.kernelObjectPath = objectPath;
  model.summary.headerPath = headerPath;
  model.summary.footprint = emit::footprintSummary(info.footprint);
}

}  // namespace kiln::driver
