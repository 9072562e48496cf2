// `kiln compile MODEL -o OUT.kiln [--target=...] [--input-shape=NAME:DIMS]...
// [--fix-input=NAME=@FILE.npy]... [--strip] [--external-constants=FILE] [--fusion=MODE]
// [--optimize=speed|size] [--threads=N]
// [--print-ir-after-all]`: a thin main over kiln::driver.
#include <cstdio>
#include <iostream>

#include "cli_error.h"
#include "command.h"
#include "kiln/codegen/target_config.h"
#include "kiln/driver/compile.h"
#include "npy.h"

namespace kiln::cli {
namespace {

ir::DType irDType(ElementType type) {
  switch (type) {
    case ElementType::F32: return ir::DType::F32;
    case ElementType::F16: return ir::DType::F16;
    case ElementType::I8: return ir::DType::I8;
    case ElementType::U8: return ir::DType::U8;
    case ElementType::I16: return ir::DType::I16;
    case ElementType::I32: return ir::DType::I32;
    case ElementType::I64: return ir::DType::I64;
    case ElementType::Bool: return ir::DType::Bool;
    case ElementType::F64: return ir::DType::F64;
  }
  throw CliError("unknown element type");
}

// "--fix-input=NAME=@FILE.npy": the input's values from a .npy file (the last "=@" splits, so
// names may contain '=').
import::FixedInput parseFixedInput(const std::string& value) {
  std::string flag = "--fix-input=" + value;
  size_t split = value.rfind("=@");
  if (split == std::string::npos || split == 0 || split + 2 == value.size())
    throw CliError(flag + ": expected NAME=@FILE.npy, e.g. --fix-input=shape=@shape.npy");
  import::FixedInput fixed;
  fixed.name = value.substr(0, split);
  fixed.flag = flag;
  HostTensor tensor;
  try {
    tensor = readNpyFile(value.substr(split + 2));
  } catch (const CliError& error) {
    throw CliError(flag + ": " + error.what());
  }
  fixed.type.dtype = irDType(tensor.type);
  fixed.type.shape = tensor.shape;
  fixed.bytes = std::move(tensor.data);
  return fixed;
}

int runCompile(const ParsedArgs& args) {
  driver::CompileOptions options;
  options.modelPath = args.positionals[0];
  auto output = args.value("output");
  if (!output) throw CliError("'kiln compile' needs an output file: -o OUT.kiln");
  options.outputPath = *output;
  options.inputShapes = args.values("input-shape");
  for (const std::string& value : args.values("fix-input"))
    options.fixedInputs.push_back(parseFixedInput(value));
  options.target.name = args.value("target").value_or(args.has("target-triple") ? "" : "host");
  options.target.triple = args.value("target-triple").value_or("");
  options.target.cpu = args.value("target-cpu").value_or("");
  options.target.features = args.value("target-features").value_or("");
  options.strip = args.flag("strip");
  options.externalConstantsPath = args.value("external-constants").value_or("");
  if (!options.externalConstantsPath.empty() &&
      options.externalConstantsPath == options.outputPath)
    throw CliError("--external-constants must name a different file than -o");
  options.outputFormat =
      driver::parseOutputFormat(args.value("output-format").value_or("artifact"));
  options.name = args.value("name").value_or("");
  std::string fusion = args.value("fusion").value_or("elementwise");
  if (fusion != "elementwise" && fusion != "none")
    throw CliError("unknown --fusion '" + fusion + "' (expected elementwise or none)");
  options.fusion = fusion == "elementwise";
  std::string optimize = args.value("optimize").value_or("speed");
  if (optimize != "speed" && optimize != "size")
    throw CliError("unknown --optimize '" + optimize + "' (expected speed or size)");
  options.optimizeForSize = optimize == "size";
  options.threads = static_cast<uint32_t>(args.integer("threads", 1, 1, 256));
  options.printIrAfterAll = args.flag("print-ir-after-all");
  options.debugOutputs = args.flag("debug-outputs");
  options.irStream = &std::cerr;
  driver::CompileSummary summary = driver::compile(options);
  for (const import::FixedInput& fixed : options.fixedInputs)
    std::printf("%s: input '%s' is fixed to the %s values of %s; the artifact does not take it\n",
                options.outputPath.c_str(), fixed.name.c_str(), fixed.type.toString().c_str(),
                fixed.flag.substr(fixed.flag.rfind("=@") + 2).c_str());
  if (args.flag("verbose"))
    std::printf("%s: %llu bytes for %s (%s): %u dispatches, %u kernels, arena %llu bytes, "
                "constants %llu bytes%s\n",
                options.outputPath.c_str(), static_cast<unsigned long long>(summary.artifactBytes),
                summary.targetName.c_str(), summary.triple.c_str(), summary.dispatchCount,
                summary.kernelCount, static_cast<unsigned long long>(summary.arenaBytes),
                static_cast<unsigned long long>(summary.constantsBytes),
                options.externalConstantsPath.empty() ? "" : " (external)");
  if (args.flag("verbose") && options.threads >= 2)
    std::printf("%s: for %u threads: %u dispatches split into one run of rows per thread, %u "
                "tensors in row groups, %u dispatches of an expand and a depthwise convolution\n",
                options.outputPath.c_str(), options.threads, summary.rowSplitDispatches,
                summary.rowGroupTensors, summary.expandDepthwiseDispatches);
  if (options.outputFormat == driver::OutputFormat::StaticLib) {
    std::printf("%s, %s: static library for %s\n%s", summary.kernelObjectPath.c_str(),
                summary.headerPath.c_str(), summary.targetName.c_str(), summary.footprint.c_str());
  } else if (!summary.kernelObjectPath.empty())
    std::printf("%s: kernel object for the firmware to link (library '%s')\n",
                summary.kernelObjectPath.c_str(), summary.libraryName.c_str());
  return 0;
}

std::string targetList() {
  std::string text;
  for (const std::string& name : codegen::targetNames()) text += (text.empty() ? "" : ", ") + name;
  return text;
}

}  // namespace

const Command& compileCommand() {
  static const Command command{
      "compile",
      "compile a model (ONNX or TFLite) into an artifact",
      "kiln compile MODEL -o OUT.kiln [--target=NAME] [--input-shape=NAME:DIMS]... [flags]",
      "Compiles MODEL (an .onnx or .tflite file) ahead of time: imports it, optimises the graph, plans\n"
      "memory and the schedule, generates one kernel per dispatch for the target and writes\n"
      "one artifact. Targets: " + targetList() + ".\n"
      "Unknown or symbolic input dimensions are fixed with --input-shape=NAME:1x3x224x224.",
      {{"output", FlagKind::Value, "OUT.kiln", "the artifact to write", 'o'},
       {"target", FlagKind::Value, "NAME", "target by friendly name (default: host)"},
       {"target-triple", FlagKind::Value, "TRIPLE", "LLVM target triple (overrides --target's)"},
       {"target-cpu", FlagKind::Value, "CPU", "LLVM CPU name"},
       {"target-features", FlagKind::Value, "FEATURES", "LLVM feature string, e.g. +avx2,-fma"},
       {"input-shape", FlagKind::Repeated, "NAME:DIMS",
        "static shape of a model input, e.g. input:1x3x224x224"},
       {"fix-input", FlagKind::Repeated, "NAME=@FILE.npy",
        "ONNX: make input NAME a constant with these values (e.g. an Expand or Reshape target "
        "the model takes as an input); the artifact no longer has that input"},
       {"strip", FlagKind::Bool, "", "leave out DEBUG (dispatch and source node names)"},
       {"external-constants", FlagKind::Value, "FILE",
        "write the constants to FILE; the artifact keeps their size and hash"},
       {"output-format", FlagKind::Value, "FORMAT",
        "artifact (default), or static-lib: OUT.o + OUT.h for a microcontroller firmware"},
       {"name", FlagKind::Value, "NAME", "symbol prefix of a static library (default: from -o)"},
       {"fusion", FlagKind::Value, "MODE",
        "elementwise (default): fuse elementwise ops into their producer; none: one op per "
        "dispatch"},
       {"optimize", FlagKind::Value, "GOAL",
        "speed (default): the fastest kernels, even where their packed weights are larger "
        "than the model's (Winograd 3x3 convolutions: 1.8-4x those weights); size: constants "
        "stay the model's size"},
       {"threads", FlagKind::Value, "N",
        "threads that will run the artifact (default 1); from 2 on, Winograd convolutions give "
        "each thread one run of rows and the activations between them lie in row groups, so "
        "the threads' cores exchange little but halo rows, and MobileNet blocks fuse their "
        "expand and depthwise convolutions from 512 KiB expanded tensors on (2 MiB for 1)"},
       {"print-ir-after-all", FlagKind::Bool, "", "print the IR after every pass (stderr)"},
       {"debug-outputs", FlagKind::Bool, "",
        "TFLite: every operator's output tensor also becomes an output (layer-by-layer checks)"},
       {"verbose", FlagKind::Bool, "", "print a summary of what was written"}},
      1,
      runCompile};
  return command;
}

}  // namespace kiln::cli
