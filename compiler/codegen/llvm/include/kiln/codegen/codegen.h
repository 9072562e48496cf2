// Public entry point of the LLVM code generator: kernels in, machine code out. LLVM-free, so
// the artifact writer and the CLI include it without seeing LLVM types.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/codegen/kernel_desc.h"
#include "kiln/codegen/target_config.h"

namespace kiln::codegen {

struct CodegenResult {
  // An embedded ELF shared object (target.output == SharedElf) exporting only the kernel
  // ABI's query symbol, or a relocatable object defining it (RelocatableObject).
  std::vector<uint8_t> bytes;
  KernelOutput output = KernelOutput::SharedElf;
  // Distinct kernels in the library, after identical kernels were merged.
  uint32_t kernelCount = 0;
  // For each input kernel description (each dispatch): its index in the library.
  std::vector<uint32_t> kernelIndex;
  // For each input kernel description: how many independent workgroups its iteration space
  // splits into at most (a larger workgroup_count leaves the extra workgroups idle).
  std::vector<uint32_t> maxWorkgroups;
  // Bound on the stack any kernel uses, in bytes: its frame as the LLVM back end measured it
  // (.stack_sizes) plus, on soft-float targets, every soft-float routine's frame (the only
  // functions kernels call; they never recurse).
  uint32_t stackBoundBytes = 0;
  // Copied from the target for the artifact header.
  TargetArch arch = TargetArch::X86_64;
  FloatAbi floatAbi = FloatAbi::Hard;
  std::vector<std::string> requiredFeatures;
};

struct CodegenOptions {
  // Name recorded in the kernel library struct (the static-library flow names it).
  std::string libraryName = "kiln_kernels";
  // Write the optimised LLVM IR here when non-empty (debugging aid).
  std::string dumpIrPath;
  // `kiln compile --optimize=size`: on microcontrollers the int8 kernels keep the plain loops
  // rather than the DSP extension's, and f32 convolutions rather than the FPU's register
  // tiles (fewer bytes of flash, 2-4x the instructions; docs/mcu.md).
  bool smallestCode = false;
};

// Generates one kernel library for `kernels` (one entry per dispatch). Throws
// kiln::CompileError for kernels or targets the generator cannot handle.
CodegenResult generateKernels(const std::vector<KernelDesc>& kernels, const TargetConfig& target,
                              const CodegenOptions& options = {});

}  // namespace kiln::codegen
