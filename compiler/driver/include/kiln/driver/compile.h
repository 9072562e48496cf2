// The compiler driver: one call that runs the whole pipeline, model file in, artifact out.
// `kiln compile` is a thin main over it; tests and tools call it directly.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "kiln/codegen/target_config.h"

namespace kiln::driver {

struct CompileOptions {
  std::filesystem::path modelPath;
  std::filesystem::path outputPath;  // the artifact (.kiln)
  // --input-shape values, "NAME:1x3x224x224", applied before shape inference.
  std::vector<std::string> inputShapes;
  codegen::TargetRequest target;  // --target / --target-triple / --target-cpu / --target-features
  bool strip = false;             // --strip: no DEBUG section
  // --external-constants=FILE: the constants go to this file, the artifact keeps size + hash.
  std::filesystem::path externalConstantsPath;
  // Microcontroller targets (static kernels): where the relocatable kernel object goes, for the
  // firmware to link. Empty: next to the artifact, OUT.kiln -> OUT.kernels.o.
  std::filesystem::path kernelObjectPath;
  // --debug-outputs (TFLite): every operator's output tensor is also a graph output, named
  // after the TFLite tensor, to compare intermediate results layer by layer.
  bool debugOutputs = false;
  bool printIrAfterAll = false;   // --print-ir-after-all
  std::ostream* irStream = nullptr;  // where that IR goes (nullptr: std::cerr)
};

// What was produced, for the CLI's one-line summary.
struct CompileSummary {
  std::string targetName;
  std::string triple;
  uint64_t artifactBytes = 0;
  uint64_t constantsBytes = 0;  // in the artifact or in the external file
  uint64_t arenaBytes = 0;
  uint32_t dispatchCount = 0;
  uint32_t kernelCount = 0;
  std::filesystem::path kernelObjectPath;  // written for static-kernel targets, else empty
};

// The artifact's bytes (and the external constants, when requested) without writing files.
struct CompiledModel {
  std::vector<uint8_t> artifact;
  std::vector<uint8_t> externalConstants;
  std::vector<uint8_t> kernelObject;  // static-kernel targets: the relocatable object
  CompileSummary summary;
};
CompiledModel compileModel(const CompileOptions& options);

// compileModel, then writes the artifact (and the constants file). User errors are thrown as
// kiln::CompileError with a one-line message naming the file, node, op type or flag.
CompileSummary compile(const CompileOptions& options);

}  // namespace kiln::driver
