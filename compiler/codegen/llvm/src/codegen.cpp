// generateKernels: the code generator's driver. Merges identical kernel descriptions, emits
// one LLVM function per distinct kernel into one module together with the kernel library
// table and its query function, optimises, emits the object and links the embedded ELF.
#include "kiln/codegen/codegen.h"
#include "kiln/codegen/conv_pool_plan.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <map>
#include <system_error>

#include "codegen_error.h"
#include "elf_linker.h"
#include "emitters.h"
#include "f64_support.h"
#include "kernel_builder.h"
#include "kiln/codegen/conv_gemm_plan.h"
#include "kiln/format/kernel_abi.h"
#include "object_inspect.h"
#include "pipeline.h"
#include "soft_float.h"
#include "target_machine.h"

namespace kiln::codegen {
namespace detail {
namespace {

// f32 lanes of the vector registers the tiled kernels use; 0 on microcontrollers.
unsigned vectorLanes(const TargetConfig& target) { return vectorUnitOf(target).lanes; }

// The int8 dot-product instructions of the target (emit_quantized_dot.cpp). On
// microcontrollers Helium's (Cortex-M55), the Arm DSP extension's (Cortex-M4/M7/M33), else
// scalar blocks.
EmitTarget::Int8Dot int8DotFor(const TargetConfig& target) {
  if (target.microcontroller) {
    if (target.arch != TargetArch::Arm32) return EmitTarget::Int8Dot::Scalar;
    if (targetHasFeature(target, "mve")) return EmitTarget::Int8Dot::Mve;
    return targetHasFeature(target, "dsp") ? EmitTarget::Int8Dot::ArmDsp
                                           : EmitTarget::Int8Dot::Scalar;
  }
  if (target.arch == TargetArch::AArch64)
    return targetHasFeature(target, "dotprod") ? EmitTarget::Int8Dot::Sdot : EmitTarget::Int8Dot::None;
  if (target.arch != TargetArch::X86_64 || !targetHasFeature(target, "avx2")) return EmitTarget::Int8Dot::None;
  bool vnni = targetHasFeature(target, "avxvnni") ||
              (targetHasFeature(target, "avx512vnni") && targetHasFeature(target, "avx512vl"));
  return vnni ? EmitTarget::Int8Dot::Vnni : EmitTarget::Int8Dot::Avx2;
}

uint32_t emitKernelBody(KernelBuilder& kb) {
  switch (kb.desc().kind) {
    case KernelKind::Elementwise:
      return emitElementwise(kb);
    case KernelKind::Conv: {
      uint32_t workgroups = 0;
      const VectorUnit unit{kb.target().vectorLanes, kb.target().vectorRegisters};
      // An unpooled stem whose weights were packed for the channel-vectorised kernel (a
      // caller's choice: chooseConvWeights gives stems GEMM panels) keeps that kernel.
      const bool stem = convStemDirect(kb.desc(), unit) &&
                        kb.desc().weightLayout != ConvWeights::OcVectorPanels;
      if (kb.desc().pooled() || stem) return emitConvPool(kb);
      if (kb.desc().tailB >= 0) return emitConvExpandDepthwise(kb);
      if (emitConvDepthwise(kb, workgroups)) return workgroups;
      return emitConv(kb);
    }
    case KernelKind::MatMul:
      return emitMatMul(kb);
    case KernelKind::Pool:
      return emitPool(kb);
    case KernelKind::Reduce:
      return emitReduce(kb);
    case KernelKind::Softmax:
      return emitSoftmax(kb);
    case KernelKind::Transpose:
      return emitTranspose(kb);
    case KernelKind::Concat:
      return emitConcat(kb);
    case KernelKind::Slice:
      return emitSlice(kb);
    case KernelKind::Gather:
      return emitGather(kb);
    case KernelKind::Pad:
      return emitPad(kb);
    case KernelKind::Split:
      return emitSplit(kb);
    case KernelKind::Quantized:
      return emitQuantized(kb);
    case KernelKind::Tile:
      return emitTile(kb);
    case KernelKind::ConvTranspose:
      return emitConvTranspose(kb);
    case KernelKind::LayerNorm:
      return emitLayerNorm(kb);
    case KernelKind::InstanceNorm:
      return emitInstanceNorm(kb);
    case KernelKind::Lrn:
      return emitLrn(kb);
    case KernelKind::ArgReduce:
      return emitArgReduce(kb);
    case KernelKind::TopK:
      return emitTopK(kb);
    case KernelKind::GatherElements:
      return emitGatherElements(kb);
    case KernelKind::CumSum:
      return emitCumSum(kb);
    case KernelKind::ScatterND:
      return emitScatterND(kb);
  }
  return 1;
}

// The kernel library struct (kernel_abi.h) and, for the embedded ELF, the query function.
void emitLibrary(llvm::Module& module, const std::vector<llvm::Function*>& kernels,
                 const TargetConfig& target, const CodegenOptions& options) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx);

  std::vector<llvm::Constant*> entries(kernels.begin(), kernels.end());
  auto* tableType = llvm::ArrayType::get(ptr, entries.size());
  auto* table =
      new llvm::GlobalVariable(module, tableType, true, llvm::GlobalValue::PrivateLinkage,
                               llvm::ConstantArray::get(tableType, entries), "kiln_kernel_table");
  llvm::Constant* nameData = llvm::ConstantDataArray::getString(ctx, options.libraryName);
  auto* name =
      new llvm::GlobalVariable(module, nameData->getType(), true, llvm::GlobalValue::PrivateLinkage,
                               nameData, "kiln_library_name");

  auto* libraryType = llvm::StructType::get(ctx, {i32, i32, ptr, ptr});
  llvm::Constant* library = llvm::ConstantStruct::get(
      libraryType, {llvm::ConstantInt::get(i32, KILN_KERNEL_ABI_VERSION),
                    llvm::ConstantInt::get(i32, kernels.size()), table, name});
  bool shared = target.output == KernelOutput::SharedElf;
  // A static library exports the struct under its name; the ELF keeps it private and exports
  // the query function instead.
  auto* libraryVar = new llvm::GlobalVariable(
      module, libraryType, true,
      shared ? llvm::GlobalValue::PrivateLinkage : llvm::GlobalValue::ExternalLinkage, library,
      shared ? "kiln_library" : options.libraryName);
  if (!shared) return;

  auto* queryType = llvm::FunctionType::get(ptr, false);
  auto* query = llvm::Function::Create(queryType, llvm::GlobalValue::ExternalLinkage,
                                       KILN_KERNEL_QUERY_SYMBOL, module);
  query->addFnAttr(llvm::Attribute::NoUnwind);
  query->addFnAttr("target-cpu", target.cpu);
  if (!target.features.empty()) query->addFnAttr("target-features", target.features);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", query));
  b.CreateRet(libraryVar);
}

}  // namespace
}  // namespace detail

CodegenResult generateKernels(const std::vector<KernelDesc>& kernels, const TargetConfig& target,
                              const CodegenOptions& options) {
  using namespace detail;
  for (const KernelDesc& desc : kernels) verifyKernel(desc);
  checkF64Target(kernels, target);

  std::unique_ptr<llvm::TargetMachine> machine = createTargetMachine(target);
  llvm::LLVMContext context;
  llvm::Module module("kiln_kernels", context);
  module.setTargetTriple(target.triple);
  module.setDataLayout(machine->createDataLayout());
  if (!target.abiName.empty()) {
    module.addModuleFlag(llvm::Module::Error, "target-abi",
                         llvm::MDString::get(context, target.abiName));
  }

  EmitTarget emitTarget;
  emitTarget.softFloat = target.floatAbi == FloatAbi::Soft;
  emitTarget.pointerBits = target.pointerBits;
  emitTarget.optimizeForSize = target.microcontroller;
  emitTarget.vectorLanes = vectorLanes(target);
  emitTarget.vectorRegisters = vectorUnitOf(target).registers;
  emitTarget.cpu = target.cpu;
  emitTarget.features = target.features;
  emitTarget.smallestCode = options.smallestCode && target.microcontroller;
  emitTarget.int8Dot = emitTarget.smallestCode ? EmitTarget::Int8Dot::None : int8DotFor(target);
  emitTarget.helium =
      target.microcontroller && target.arch == TargetArch::Arm32 && targetHasFeature(target, "mve");
  emitTarget.maskedStores = target.arch == TargetArch::X86_64 && !target.microcontroller &&
                            targetHasFeature(target, "avx512f") &&
                            targetHasFeature(target, "avx512vl");

  CodegenResult result;
  result.output = target.output;
  result.arch = target.arch;
  result.floatAbi = target.floatAbi;
  result.requiredFeatures = target.requiredFeatures;

  // Identical descriptions share one kernel.
  std::map<std::string, uint32_t> byKey;
  std::vector<llvm::Function*> functions;
  std::vector<uint32_t> workgroups;
  for (const KernelDesc& desc : kernels) {
    std::string key = desc.key();
    auto found = byKey.find(key);
    if (found == byKey.end()) {
      uint32_t id = static_cast<uint32_t>(functions.size());
      KernelBuilder kb(module, "kiln_kernel_" + std::to_string(id), desc, emitTarget);
      workgroups.push_back(emitKernelBody(kb));
      functions.push_back(kb.finish());
      found = byKey.emplace(key, id).first;
    }
    result.kernelIndex.push_back(found->second);
    result.maxWorkgroups.push_back(workgroups[found->second]);
  }
  result.kernelCount = static_cast<uint32_t>(functions.size());
  emitLibrary(module, functions, target, options);
  if (target.floatAbi == FloatAbi::Soft) linkSoftFloatRoutines(module, *machine, target);

  optimizeModule(module, *machine, target.microcontroller);
  if (!options.dumpIrPath.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(options.dumpIrPath, ec, llvm::sys::fs::OF_Text);
    if (ec) fail("cannot write --dump-ir file '" + options.dumpIrPath + "': " + ec.message());
    module.print(os, nullptr);
  }
  std::vector<uint8_t> object = emitObject(module, *machine);

  ObjectFacts facts = inspectObject(object);
  if (!facts.undefinedSymbols.empty()) {
    std::string names;
    for (const std::string& s : facts.undefinedSymbols) names += (names.empty() ? "" : ", ") + s;
    fail("internal error: generated kernels for " + target.triple +
         " call library functions: " + names);
  }
  // Kernels call nothing but the soft-float routines (which call only each other, never
  // recursively): the largest kernel frame plus every other function's frame bounds any
  // call chain.
  uint32_t largestKernel = 0, others = 0;
  for (const auto& [name, frame] : facts.frames) {
    if (name.rfind("kiln_kernel_", 0) == 0 && name != "kiln_kernel_library_query") {
      largestKernel = std::max(largestKernel, frame);
    } else {
      others += frame;
    }
  }
  result.stackBoundBytes = largestKernel + others;
  result.bytes = target.output == KernelOutput::SharedElf
                     ? linkSharedElf(object, KILN_KERNEL_QUERY_SYMBOL)
                     : std::move(object);
  return result;
}

}  // namespace kiln::codegen
