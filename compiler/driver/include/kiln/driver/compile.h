// The compiler driver: one call that runs the whole pipeline, model file in, artifact out.
// `kiln compile` is a thin main over it; tests and tools call it directly.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "kiln/codegen/target_config.h"
#include "kiln/import/onnx/onnx_import.h"

namespace kiln::driver {

enum class OutputFormat { Artifact, StaticLib };
// "artifact" or "static-lib" (the --output-format values); anything else is a CompileError.
OutputFormat parseOutputFormat(const std::string& text);

struct CompileOptions {
  std::filesystem::path modelPath;
  std::filesystem::path outputPath;  // the artifact (.kiln)
  // --input-shape values, "NAME:1x3x224x224", applied before shape inference.
  std::vector<std::string> inputShapes;
  // --fix-input=NAME=@FILE.npy (ONNX): graph inputs made constants with these values before
  // shape inference; they are no longer inputs of the artifact.
  std::vector<import::FixedInput> fixedInputs;
  codegen::TargetRequest target;  // --target / --target-triple / --target-cpu / --target-features
  bool strip = false;             // --strip: no DEBUG section
  // --external-constants=FILE: the constants go to this file, the artifact keeps size + hash.
  std::filesystem::path externalConstantsPath;
  // Microcontroller targets (static kernels): where the relocatable kernel object goes, for the
  // firmware to link. Empty: next to the artifact, OUT.kiln -> OUT.kernels.o.
  std::filesystem::path kernelObjectPath;
  // --output-format: Artifact (OUT.kiln; static-kernel targets also get OUT.kernels.o), or
  // StaticLib (microcontrollers: OUT.o with kernels + artifact bytes, OUT.h, footprint).
  OutputFormat outputFormat = OutputFormat::Artifact;
  // --name: C identifier that prefixes the static library's symbols (PREFIX_kernels,
  // PREFIX_artifact, ...). Empty: derived from the output file name.
  std::string name;
  // --fusion=none: one op per dispatch (no elementwise fusion), for debugging.
  bool fusion = true;
  // --optimize=size: no kernel whose packed weights are larger than the model's (Winograd
  // convolutions), so the constants stay the model's size; speed (default) takes them.
  bool optimizeForSize = false;
  // --threads: how many threads will run the artifact. From 2 on, Winograd convolutions whose
  // rows divide into equal runs give each thread one run, the activations between them are
  // laid out in row groups (kiln/codegen/row_groups.h), and arena bytes pass only between
  // tensors of one layout (a larger arena), so that little but the halo rows passes between the threads' cores; and
  // fuseExpandDepthwise fuses smaller expanded tensors (PipelineOptions::threads). Any thread
  // count runs any artifact.
  uint32_t threads = 1;
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
  // --threads >= 2: dispatches split into one run of rows per thread, and the tensors laid
  // out in row groups (kiln/codegen/row_groups.h).
  uint32_t rowSplitDispatches = 0;
  uint32_t rowGroupTensors = 0;
  // Dispatches that run a 1x1 expand convolution and the depthwise convolution after it
  // (fuseExpandDepthwise: from smaller expanded tensors on with --threads >= 2).
  uint32_t expandDepthwiseDispatches = 0;
  std::filesystem::path kernelObjectPath;  // written for static-kernel targets, else empty
  std::string libraryName;                 // the static kernel library's name
  // --output-format=static-lib: the files written and the footprint lines (flash, RAM).
  std::filesystem::path headerPath;
  std::string footprint;
};

// Facts a firmware build needs beyond the artifact (static-lib output, footprint).
struct FirmwareFacts {
  uint32_t kernelStackBytes = 0;     // codegen's bound on any kernel call chain
  uint32_t maxStageDispatches = 0;   // largest stage of the command stream, as the runtime
  uint32_t maxStageBindings = 0;     // sizes its context
  std::vector<std::pair<std::string, uint64_t>> inputs, outputs;  // name, bytes
};

// The artifact's bytes (and the external constants, when requested) without writing files.
struct CompiledModel {
  std::vector<uint8_t> artifact;
  std::vector<uint8_t> externalConstants;
  std::vector<uint8_t> kernelObject;  // static-kernel targets: the relocatable object
  codegen::TargetConfig target;
  FirmwareFacts firmware;
  CompileSummary summary;
};
CompiledModel compileModel(const CompileOptions& options);

// compileModel, then writes the artifact (and the constants file). User errors are thrown as
// kiln::CompileError with a one-line message naming the file, node, op type or flag.
CompileSummary compile(const CompileOptions& options);

}  // namespace kiln::driver
