// The whole compiler pipeline, in order, in one place:
//
//   1. import     model file -> ir::Graph            (by extension: import/onnx — checker,
//                                                      --input-shape, shape inference, opset
//                                                      conversion; import/tflite — verified
//                                                      flatbuffer, float and quantized ops)
//   2. passes     ir::Graph -> ir::DispatchGraph     (passes/pipeline: canonicalize, fold,
//                                                      form dispatches and views, fuse unless
//                                                      --fusion=none, schedule, plan memory)
//   3. codegen    dispatches -> kernel library       (codegen/llvm: one kernel per dispatch,
//                                                      identical kernels merged, in-process lld)
//   4. emit       everything -> artifact bytes       (emit: META, COMMANDS, CONSTANTS,
//                                                      KERNELS, DEBUG)
//   5. write      the .kiln file and the external constants file; with
//                 --output-format=static-lib instead OUT.o (kernels + artifact bytes) and
//                 OUT.h (symbols, footprint, stack bound) for a firmware
#include "kiln/driver/compile.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>

#include "kiln/codegen/codegen.h"
#include "kiln/codegen/conv_gemm_plan.h"
#include "kiln/codegen/dispatch_lowering.h"
#include "kiln/codegen/fold_corrections.h"
#include "kiln/codegen/matmul_pack.h"
#include "kiln/codegen/row_groups.h"
#include "kiln/codegen/work_queue.h"
#include "kiln/emit/emit_artifact.h"
#include "kiln/import/onnx/onnx_import.h"
#include "kiln/import/tflite/tflite_import.h"
#include "kiln/passes/passes.h"
#include "kiln/passes/pipeline.h"
#include "kiln/support/diagnostics.h"
#include "static_library.h"

namespace kiln::driver {
namespace {

// 1. Import: the model format follows the file extension.
std::unique_ptr<ir::Graph> importModel(const CompileOptions& options) {
  const std::filesystem::path& path = options.modelPath;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw CompileError("cannot open '" + path.string() + "': No such file or directory");
  if (std::filesystem::is_directory(path, ec))
    throw CompileError("'" + path.string() + "' is a directory, not a model file");
  std::string extension = path.extension().string();
  if (extension == ".tflite") {
    if (!options.fixedInputs.empty())
      throw CompileError(options.fixedInputs[0].flag + ": --fix-input is supported for ONNX "
                         "models only, not for '" + path.string() + "'");
    import::TfliteImportOptions tfliteOptions;
    tfliteOptions.debugOutputs = options.debugOutputs;
    return import::importTfliteFile(path, tfliteOptions);
  }
  import::OnnxImportOptions importOptions;
  for (const std::string& flag : options.inputShapes)
    importOptions.inputShapes.push_back(import::parseInputShape(flag));
  importOptions.fixedInputs = options.fixedInputs;
  return import::importOnnxFile(path, importOptions);
}

void writeFile(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  // Write next to the destination, then rename: a failed compile never leaves half a file.
  std::filesystem::path temporary = path;
  temporary += ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out)
      throw CompileError("cannot write '" + path.string() + "': " + std::strerror(errno));
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) throw CompileError("cannot write '" + path.string() + "'");
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    throw CompileError("cannot write '" + path.string() + "': " + ec.message());
  }
}

// The largest stage (dispatches and their bindings between two barriers) sizes the runtime's
// context; the kernels' stack bound and the entry's tensors complete what a firmware needs.
FirmwareFacts firmwareFacts(const ir::DispatchGraph& graph, const codegen::CodegenResult& kernels) {
  FirmwareFacts facts;
  facts.kernelStackBytes = kernels.stackBoundBytes;
  uint32_t dispatches = 0, bindings = 0, stage = graph.steps.empty() ? 0 : graph.steps[0].stage;
  for (const ir::Step& step : graph.steps) {
    if (step.stage != stage) dispatches = bindings = 0;
    stage = step.stage;
    if (step.kind != ir::StepKind::Dispatch) continue;
    ++dispatches;
    bindings += static_cast<uint32_t>(graph.dispatches[step.dispatch].bindings.size());
    facts.maxStageDispatches = std::max(facts.maxStageDispatches, dispatches);
    facts.maxStageBindings = std::max(facts.maxStageBindings, bindings);
  }
  for (const ir::IoTensor& io : graph.inputs) facts.inputs.push_back({io.name, io.type.byteSize()});
  for (const ir::IoTensor& io : graph.outputs)
    facts.outputs.push_back({io.name, io.type.byteSize()});
  return facts;
}

}  // namespace

CompiledModel compileModel(const CompileOptions& options) {
  // The target first: a bad --target is reported before any work is done.
  codegen::TargetConfig target = codegen::resolveTarget(options.target);
  checkOutputFormat(options, target);

  // 1. import
  std::unique_ptr<ir::Graph> graph = importModel(options);

  // 2. passes
  passes::PipelineOptions pipelineOptions;
  pipelineOptions.printIrAfterAll = options.printIrAfterAll;
  pipelineOptions.fusion = options.fusion;
  pipelineOptions.threads = options.threads;
  pipelineOptions.printTo = options.irStream;
  ir::DispatchGraph dispatchGraph = passes::compileGraph(std::move(graph), pipelineOptions);

  // 3. codegen
  // (lowerDispatches: each dispatch -> a KernelDesc; then one LLVM module, linked by lld)
  codegen::CodegenOptions codegenOptions;
  codegenOptions.libraryName = staticLibraryName(options);
  codegenOptions.smallestCode = options.optimizeForSize;
  std::vector<codegen::KernelDesc> kernelDescs = codegen::lowerDispatches(dispatchGraph);
  // Weights in the order of the kernel that reads them (panels, Winograd transforms).
  codegen::packConvWeights(dispatchGraph, kernelDescs, target, !options.optimizeForSize);
  codegen::packMatMulWeights(dispatchGraph, kernelDescs, target);  // B in column panels
  // Microcontrollers: zero-point corrections in the bias constants (one table less).
  if (!options.optimizeForSize)
    codegen::foldZeroPointCorrections(dispatchGraph, kernelDescs, target);
  // For several threads: each thread's rows, the activations' layout that keeps them apart,
  // and a memory plan in which bytes pass only between tensors of one layout (whose rows the
  // same threads own).
  codegen::splitForThreads(kernelDescs, target, options.threads);
  const std::map<const ir::Value*, std::vector<int64_t>> rowGroups =
      codegen::placeRowGroups(dispatchGraph, kernelDescs, target, options.threads);
  if (!rowGroups.empty()) {
    std::map<std::string, uint64_t> layouts;  // shape and row groups -> share class
    passes::MemoryPlanOptions memory;
    memory.shareClass = [&](const ir::Value* value) -> uint64_t {
      const auto found = rowGroups.find(value);
      if (found == rowGroups.end()) return 0;
      std::string key;
      for (int64_t dim : value->shape()) key += std::to_string(dim) + "x";
      for (int64_t row : found->second) key += "," + std::to_string(row);
      return layouts.emplace(key, layouts.size() + 1).first->second;
    };
    passes::planMemory(dispatchGraph, memory);
  }
  codegen::placeWorkQueues(dispatchGraph, kernelDescs);  // the queues the chosen kernels share
  codegen::CodegenResult kernels = codegen::generateKernels(kernelDescs, target, codegenOptions);

  // 4. emit
  emit::EmitOptions emitOptions;
  emitOptions.strip = options.strip;
  emitOptions.externalConstants = !options.externalConstantsPath.empty();
  emitOptions.staticLibraryName = codegenOptions.libraryName;
  for (const import::FixedInput& fixed : options.fixedInputs) {
    emitOptions.debugNote += (emitOptions.debugNote.empty() ? "" : "; ") + std::string("input '") +
                             fixed.name + "' fixed at compile time (" + fixed.flag + ", " +
                             fixed.type.toString() + ")";
  }
  emit::EmittedArtifact emitted = emit::emitArtifact(dispatchGraph, kernels, emitOptions);

  CompiledModel model;
  model.summary.targetName = target.name;
  model.summary.triple = target.triple;
  model.summary.artifactBytes = emitted.artifact.size();
  model.summary.constantsBytes = dispatchGraph.constantsSize;
  model.summary.arenaBytes = dispatchGraph.arenaSize;
  model.summary.dispatchCount = static_cast<uint32_t>(dispatchGraph.dispatches.size());
  model.summary.rowGroupTensors = static_cast<uint32_t>(rowGroups.size());
  for (const codegen::KernelDesc& d : kernelDescs) {
    model.summary.rowSplitDispatches += d.threadSplit > 0 ? 1 : 0;
    model.summary.expandDepthwiseDispatches += d.tailB >= 0 ? 1 : 0;
  }
  model.summary.kernelCount = kernels.kernelCount;
  if (kernels.output == codegen::KernelOutput::RelocatableObject) model.kernelObject = kernels.bytes;
  model.artifact = std::move(emitted.artifact);
  model.externalConstants = std::move(emitted.externalConstants);
  model.target = target;
  model.summary.libraryName = codegenOptions.libraryName;
  model.firmware = firmwareFacts(dispatchGraph, kernels);
  return model;
}

namespace {

// True if `a` and `b` name the same existing file.
bool sameFile(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code ec;
  return !a.empty() && !b.empty() && std::filesystem::equivalent(a, b, ec);
}

}  // namespace

CompileSummary compile(const CompileOptions& options) {
  if (options.outputPath.empty()) throw CompileError("no output file given (-o OUT.kiln)");
  if (sameFile(options.outputPath, options.modelPath) ||
      sameFile(options.externalConstantsPath, options.modelPath))
    throw CompileError("the output would overwrite the model '" + options.modelPath.string() + "'");
  CompiledModel model = compileModel(options);
  // 5. write
  if (options.outputFormat == OutputFormat::StaticLib) {
    writeStaticLibrary(options, model);
    return model.summary;
  }
  if (!options.externalConstantsPath.empty())
    writeFile(options.externalConstantsPath, model.externalConstants);
  if (!model.kernelObject.empty()) {
    std::filesystem::path object = options.kernelObjectPath;
    if (object.empty()) {
      object = options.outputPath;
      object.replace_extension(".kernels.o");
    }
    writeFile(object, model.kernelObject);
    model.summary.kernelObjectPath = object;
  }
  writeFile(options.outputPath, model.artifact);
  return model.summary;
}

}  // namespace kiln::driver
