// `--output-format=static-lib`: the relocatable object (kernels + artifact bytes, optionally a
// separate weights object), the C header and the footprint, for a firmware to link.
#pragma once

#include <string>

#include "kiln/codegen/target_config.h"
#include "kiln/driver/compile.h"
#include "kiln/emit/firmware_header.h"

namespace kiln::driver {

// The symbol prefix: --name (checked to be a C identifier), else the output file's stem made
// into one ("build/mnist-cnn.o" -> "mnist_cnn").
std::string symbolPrefix(const CompileOptions& options);

// The name of the static kernel library the artifact records and the object exports:
// PREFIX_kernels for static-lib output or an explicit --name, else "kiln_kernels".
std::string staticLibraryName(const CompileOptions& options);

// Refuses option combinations static-lib output cannot honour (a target whose kernels are an
// embedded ELF, a bad --name), before any work is done. Throws kiln::CompileError.
void checkOutputFormat(const CompileOptions& options, const codegen::TargetConfig& target);

// Flash and RAM of `model` on its target (measured runtime figures + this model's numbers).
emit::Footprint computeFootprint(const CompiledModel& model);

// Writes OUT.o, OUT.h (and the weights object/file for --external-constants); fills the
// summary's paths and footprint lines.
void writeStaticLibrary(const CompileOptions& options, CompiledModel& model);

}  // namespace kiln::driver
