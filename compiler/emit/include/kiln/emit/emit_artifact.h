// The artifact writer's entry point: turns the scheduled, memory-planned dispatch graph and
// the generated kernel library into artifact bytes (format v1). Constants go to CONSTANTS in
// the planned 64-byte aligned layout (or, with externalConstants, to a separate blob whose
// size and hash the artifact records); DEBUG carries dispatch and source node names unless
// stripped. Deterministic: the same graph, kernels and options give the same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/codegen/codegen.h"
#include "kiln/emit/artifact_builder.h"
#include "kiln/ir/dispatch_graph.h"

namespace kiln::emit {

struct EmitOptions {
  bool strip = false;              // no DEBUG section
  bool externalConstants = false;  // constants outside the artifact
  // Upper bound on a dispatch's workgroup count (each dispatch also stays within what its
  // kernel can split into): enough to spread a dispatch over a host's threads without
  // making the per-workgroup work tiny.
  uint32_t maxWorkgroups = 64;
  // Static-library kernels (codegen's RelocatableObject): the library name the artifact
  // records; the firmware links the library and hands it to the runtime under this name.
  std::string staticLibraryName = "kiln_kernels";
  // DEBUG's note on the build (e.g. "input 'shape' fixed at compile time ..."); not written
  // when stripped.
  std::string debugNote;
};

struct EmittedArtifact {
  std::vector<uint8_t> artifact;
  std::vector<uint8_t> externalConstants;  // the blob to store separately, if requested
};

// The artifact's description (kept separate so tests can inspect it).
ArtifactContents describeArtifact(const ir::DispatchGraph& graph,
                                  const codegen::CodegenResult& kernels,
                                  const EmitOptions& options);

EmittedArtifact emitArtifact(const ir::DispatchGraph& graph,
                             const codegen::CodegenResult& kernels, const EmitOptions& options);

}  // namespace kiln::emit
