// `kiln run ARTIFACT --input=... [--output=@out.npy]... [--expected_output=...]...`: calls
// one entry function of an artifact on the given inputs, then writes each output to a .npy
// file or prints it, and compares outputs with expected values when asked. `--trace` prints
// every dispatch as it runs, in order, with its time.
#include <chrono>
#include <cstdio>

#include "cli_error.h"
#include "command.h"
#include "npy.h"
#include "runtime_session.h"
#include "tensor_compare.h"
#include "tensor_format.h"
#include "tensor_spec.h"

namespace kiln::cli {
namespace {

void emitOutput(const std::string& destination, const TensorSignature& signature,
                const HostTensor& tensor, size_t index) {
  if (destination == "-" || destination.empty()) {
    std::printf("output %zu '%s': %s\n%s\n", index, signature.name.c_str(),
                describeTensorType(tensor.type, tensor.shape).c_str(),
                formatTensorValues(tensor).c_str());
    return;
  }
  if (destination.front() != '@' || destination.size() < 2)
    throw CliError("--output='" + destination + "': expected @FILE.npy or - (print)");
  writeNpyFile(destination.substr(1), tensor);
}

int runRun(const ParsedArgs& args) {
  SessionOptions options;
  options.threads = static_cast<uint32_t>(args.integer("threads", 1, 1, 256));
  options.constantsPath = args.value("constants").value_or("");
  std::vector<HostTensor> inputs;
  for (const std::string& spec : args.values("input")) inputs.push_back(parseTensorSpec(spec));
  std::vector<HostTensor> expected;
  for (const std::string& spec : args.values("expected-output"))
    expected.push_back(parseTensorSpec(spec));
  Tolerance tolerance;
  if (auto text = args.value("tolerance")) tolerance = parseTolerance(*text);
  std::vector<std::string> destinations = args.values("output");

  RuntimeSession session(args.positionals[0], options);
  uint32_t function = session.findFunction(args.value("function"));
  std::vector<TensorSignature> outputs = session.outputs(function);
  if (destinations.size() > outputs.size())
    throw CliError("got " + std::to_string(destinations.size()) + " --output for " +
                   std::to_string(outputs.size()) + " output" + (outputs.size() == 1 ? "" : "s") +
                   " of '" + session.functionName(function) + "'");
  if (expected.size() > outputs.size())
    throw CliError("got " + std::to_string(expected.size()) + " --expected_output for " +
                   std::to_string(outputs.size()) + " output" + (outputs.size() == 1 ? "" : "s") +
                   " of '" + session.functionName(function) + "'");
  std::vector<AlignedBuffer> inputBuffers = session.prepareInputs(function, inputs);
  inputs = {};  // the aligned copies are what the call reads
  std::vector<AlignedBuffer> outputBuffers = session.allocateOutputs(function);

  bool trace = args.flag("trace");
  uint32_t traced = 0;
  uint64_t tracedNs = 0;
  if (trace) {
    std::fprintf(stderr, "trace: function '%s'\n", session.functionName(function).c_str());
    session.setTrace([&](uint32_t dispatch, uint32_t kernel, uint64_t ns) {
      std::string label = session.dispatchLabel(dispatch);
      std::fprintf(stderr, "trace: dispatch %4u  kernel %4u  %10.1f us%s%s\n", dispatch, kernel,
                   double(ns) / 1000.0, label.empty() ? "" : "  ", label.c_str());
      ++traced;
      tracedNs += ns;
    });
  }
  auto start = std::chrono::steady_clock::now();
  session.call(function, inputBuffers, outputBuffers);
  if (trace) {
    double total = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() -
                                                             start).count();
    std::fprintf(stderr, "trace: %u dispatches, %.1f us in kernels, %.1f us for the call\n",
                 traced, double(tracedNs) / 1000.0, total);
  }

  int mismatches = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    HostTensor tensor = session.toHostTensor(outputs[i], outputBuffers[i]);
    emitOutput(i < destinations.size() ? destinations[i] : "-", outputs[i], tensor, i);
    if (i >= expected.size()) continue;
    // The printed tensor first: with both streams in one pipe, the verdict comes after it.
    std::fflush(stdout);
    if (auto mismatch = compareTensors(tensor, expected[i], tolerance)) {
      std::fprintf(stderr, "kiln: error: output %zu ('%s') does not match the expected value: %s\n",
                   i, outputs[i].name.c_str(), mismatch->message.c_str());
      ++mismatches;
    } else {
      std::fprintf(stderr, "output %zu ('%s') matches the expected value\n", i,
                   outputs[i].name.c_str());
    }
  }
  return mismatches == 0 ? 0 : 1;
}

}  // namespace

const Command& runCommand() {
  static const Command command{
      "run",
      "run an entry function of an artifact on inputs",
      "kiln run ARTIFACT --input=TENSOR... [--output=@FILE.npy]... [--expected_output=TENSOR]...",
      "Calls an entry function (the first one, or --function=NAME) on the given inputs, one\n"
      "--input per function input, in order. A TENSOR is written as IREE's tools write it:\n"
      "  2x2xf32=1 2 3 4          shape x element type = values (one value is splatted)\n"
      "  @file.npy                a NumPy file (shape and type from the file)\n"
      "  1x1x28x28xf32=@file.npy  a NumPy or raw file, checked against the type and reshaped\n"
      "Element types: f32 f16 f64 i8 u8 i16 i32 i64 i1. Each output goes to its --output, "
      "in order\n"
      "(@FILE.npy writes a NumPy file, - prints); outputs without one are printed. With\n"
      "--expected_output the outputs are compared (floats: |got - want| <= atol + rtol*|want|,\n"
      "integers exactly) and kiln exits with status 1 on a mismatch, naming the worst element.",
      {{"function", FlagKind::Value, "NAME", "entry function to call (default: the first)"},
       {"input", FlagKind::Repeated, "TENSOR", "an input, in order (repeat per input)"},
       {"output", FlagKind::Repeated, "@FILE.npy|-", "where an output goes, in order"},
       {"expected-output", FlagKind::Repeated, "TENSOR",
        "expected value of an output, in order (also --expected_output)"},
       {"tolerance", FlagKind::Value, "RTOL[,ATOL]",
        "tolerance for float comparisons (default 1e-3,1e-5)"},
       {"trace", FlagKind::Bool, "", "print every dispatch as it runs, with its time (stderr)"},
       {"threads", FlagKind::Value, "N", "worker threads (default 1: the calling thread)"},
       {"constants", FlagKind::Value, "FILE",
        "the constants of an artifact compiled with --external-constants"}},
      1,
      runRun};
  return command;
}

}  // namespace kiln::cli
