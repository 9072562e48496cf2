// Serializing an artifact (format v1) from a plain description of its contents: target,
// entry functions with their tensors and command streams, kernel signatures, constants,
// the kernel library and the optional DEBUG table. The bytes depend only on the description
// (no time stamps, no addresses, no hash-map order), so the same model and flags give the
// same artifact.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/emit/command_stream.h"
#include "kiln/format/artifact.h"

namespace kiln::emit {

struct TensorInfo {
  std::string name;
  kiln_dtype dtype = KILN_DTYPE_F32;
  std::vector<uint32_t> dims;  // rank <= KILN_MAX_RANK
  uint16_t alignment = 64;     // what the caller's buffer must satisfy
};

struct FunctionInfo {
  std::string name;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  CommandStream commands;  // must end with RETURN
};

struct BindingSignature {
  uint64_t length = 0;     // bytes the kernel accesses from the binding's start
  uint8_t access = 0;      // KILN_ACCESS_*
  uint16_t alignment = 4;  // power of two <= 64
};

struct KernelSignature {
  std::vector<BindingSignature> bindings;
};

struct DebugEntry {
  std::string dispatchName;
  std::string nodeName;
  kiln_cost_kind costKind = KILN_COST_NONE;  // DEBUG's cost table (see dispatch_cost.h)
  uint64_t cost = 0;
  uint32_t workQueues = 0;  // tasks shared through work queues (kiln_debug_cost.work_queues)
};

struct ArtifactContents {
  kiln_arch arch = KILN_ARCH_NONE;
  kiln_abi abi = KILN_ABI_NONE;
  uint64_t cpuFeatures = 0;
  uint64_t arenaSize = 0;
  uint32_t stackBound = 0;
  std::vector<KernelSignature> kernels;  // indexed by DISPATCH's kernel operand
  std::vector<FunctionInfo> functions;
  std::vector<uint8_t> constants;  // space 1, already packed for the kernels
  bool externalConstants = false;  // keep only size + hash in the artifact
  std::vector<uint8_t> kernelElf;  // embedded ELF shared object, or
  std::string staticLibraryName;   // (non-empty) the name of a statically linked library
  std::vector<DebugEntry> debug;   // one per DISPATCH in global order; empty = no DEBUG section
  std::string debugNote;           // DEBUG's note on the build (kiln_debug_costs.note), or empty
};

// The artifact bytes. Asserts that the description is consistent (it is built by the
// compiler, so an inconsistency is a compiler bug).
std::vector<uint8_t> serializeArtifact(const ArtifactContents& contents);

}  // namespace kiln::emit
