// Reading an artifact's structure for `kiln dump`: header, sections, META tables, the
// decoded command stream of every function (with stage numbers) and the DEBUG names and
// dispatch costs.
// Independent of the runtime so that it also describes artifacts for other targets
// (a Cortex-M artifact on an x86-64 host); every offset is bounds-checked and a malformed
// artifact is a CliError, never a crash.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kiln/format/artifact.h"
#include "kiln/format/commands.h"
#include "kiln/format/kernel_abi.h"

namespace kiln::cli {

struct ArtifactTensor {
  std::string name;
  uint32_t dtype = 0;
  std::vector<uint32_t> dims;
  uint64_t byteSize = 0;
  uint32_t alignment = 0;
};

struct ArtifactBinding {
  uint64_t space = 0;
  uint64_t offset = 0;
  uint64_t length = 0;  // from the kernel signature
  uint32_t access = 0;
  uint32_t alignment = 0;
};

struct ArtifactCommand {
  uint32_t opcode = 0;
  uint64_t operands[KILN_MAX_OPERANDS] = {};
  std::vector<ArtifactBinding> bindings;  // DISPATCH only
  uint32_t stage = 0;                     // stages are separated by BARRIER
  uint32_t dispatchIndex = 0;             // DISPATCH only: global index
  uint64_t offset = 0;                    // within COMMANDS
};

struct ArtifactFunction {
  std::string name;
  std::vector<ArtifactTensor> inputs;
  std::vector<ArtifactTensor> outputs;
  uint32_t firstDispatch = 0;
  uint32_t dispatchCount = 0;
  uint32_t commandsSize = 0;
  std::vector<ArtifactCommand> commands;
};

struct ArtifactDebugEntry {
  std::string dispatchName;
  std::string nodeName;
  kiln_cost_kind costKind = KILN_COST_NONE;  // from DEBUG's cost table, if it has one
  uint64_t cost = 0;
  uint32_t workQueues = 0;  // tasks the workgroups share at run time (0: fixed shares)
};

struct ArtifactSummary {
  kiln_header header{};
  std::vector<kiln_section> sections;
  kiln_meta meta{};
  std::vector<std::vector<kiln_binding_signature>> kernels;
  std::vector<ArtifactFunction> functions;
  std::vector<ArtifactDebugEntry> debug;  // empty when stripped
  bool debugHasCosts = false;             // DEBUG carries the compiler's cost table
  std::string debugNote;                  // DEBUG's note on the build (e.g. fixed inputs)
  bool constantsExternal = false;
  kiln_external_constants external{};
  bool kernelsStatic = false;
  std::string staticLibraryName;
};

// `name` is used in error messages ("'model.kiln': malformed artifact: ...").
ArtifactSummary readArtifact(std::span<const uint8_t> bytes, const std::string& name);

std::string archName(uint32_t arch);
std::string abiName(uint32_t abi);
std::string sectionName(uint32_t kind);
// "input 0", "output 1", "arena", "constants".
std::string spaceName(uint64_t space);
// Names of the set feature bits of `arch`, e.g. {"sse4.2", "avx2"}.
std::vector<std::string> cpuFeatureNames(uint32_t arch, uint64_t features);

}  // namespace kiln::cli
