// Links the build-time compiled soft-float IR into a kernel module: the routines become
// internal functions with the target's attributes, listed in llvm.compiler.used so the
// optimiser keeps them until instruction selection emits the calls that use them.
#include "soft_float.h"

#include <llvm/AsmParser/Parser.h>
#include <llvm/CodeGen/TargetLowering.h>
#include <llvm/CodeGen/TargetSubtargetInfo.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include <set>
#include <string>
#include <vector>

#include "codegen_error.h"

namespace kiln::codegen::detail {
namespace {

const char kSoftFloatIr[] =
#include "soft_float_ir.inc"
    ;

// The f32 operations kernels may leave to the soft-float library.
const llvm::RTLIB::Libcall kFloatCalls[] = {
    llvm::RTLIB::ADD_F32,          llvm::RTLIB::SUB_F32,          llvm::RTLIB::MUL_F32,
    llvm::RTLIB::DIV_F32,          llvm::RTLIB::OEQ_F32,          llvm::RTLIB::UNE_F32,
    llvm::RTLIB::OGE_F32,          llvm::RTLIB::OLT_F32,          llvm::RTLIB::OLE_F32,
    llvm::RTLIB::OGT_F32,          llvm::RTLIB::UO_F32,           llvm::RTLIB::FPTOSINT_F32_I32,
    llvm::RTLIB::FPTOUINT_F32_I32, llvm::RTLIB::SINTTOFP_I32_F32, llvm::RTLIB::UINTTOFP_I32_F32,
};

// Names the back end of `machine` gives those calls (they differ between ARM triples).
std::set<std::string> libcallNames(llvm::TargetMachine& machine,
                                   const llvm::Function& anyFunction) {
  const llvm::TargetLowering* lowering = machine.getSubtargetImpl(anyFunction)->getTargetLowering();
  std::set<std::string> names;
  for (llvm::RTLIB::Libcall call : kFloatCalls) {
    if (const char* name = lowering->getLibcallName(call)) names.insert(name);
  }
  return names;
}

}  // namespace

void linkSoftFloatRoutines(llvm::Module& module, llvm::TargetMachine& machine,
                           const TargetConfig& target) {
  const llvm::Function* anyFunction = nullptr;
  for (const llvm::Function& fn : module) {
    if (!fn.isDeclaration()) anyFunction = &fn;
  }
  if (!anyFunction) return;
  std::set<std::string> wanted = libcallNames(machine, *anyFunction);

  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> routines =
      llvm::parseAssemblyString(kSoftFloatIr, error, module.getContext());
  if (!routines) fail("internal error: soft-float IR does not parse: " + error.getMessage().str());
  routines->setTargetTriple(module.getTargetTriple());
  routines->setDataLayout(module.getDataLayout());
  if (llvm::NamedMDNode* flags = routines->getModuleFlagsMetadata())
    routines->eraseNamedMetadata(flags);
  if (llvm::NamedMDNode* ident = routines->getNamedMetadata("llvm.ident")) {
    routines->eraseNamedMetadata(ident);
  }

  // Keep the routines the target's back end calls, under the names it calls them.
  std::vector<llvm::Function*> unused;
  for (llvm::Function& fn : *routines) {
    if (fn.isDeclaration()) continue;
    // Attributes of the build-time compile (riscv32) replaced by the target's.
    fn.removeFnAttr("target-cpu");
    fn.removeFnAttr("target-features");
    fn.removeFnAttr("tune-cpu");
    fn.addFnAttr("target-cpu", target.cpu);
    if (!target.features.empty()) fn.addFnAttr("target-features", target.features);
    fn.addFnAttr("use-soft-float", "true");
    fn.addFnAttr("no-builtins");
    if (fn.hasLocalLinkage()) continue;
    if (!wanted.count(fn.getName().str())) unused.push_back(&fn);
  }
  for (llvm::Function* fn : unused) fn->eraseFromParent();

  std::vector<std::string> names;
  for (llvm::Function& fn : *routines) {
    if (!fn.isDeclaration() && !fn.hasLocalLinkage()) names.push_back(fn.getName().str());
  }
  if (llvm::Linker::linkModules(module, std::move(routines))) {
    fail("internal error: linking the soft-float routines failed");
  }
  std::vector<llvm::GlobalValue*> keep;
  for (const std::string& name : names) {
    llvm::Function* fn = module.getFunction(name);
    fn->setLinkage(llvm::GlobalValue::InternalLinkage);
    keep.push_back(fn);
  }
  llvm::appendToCompilerUsed(module, keep);
}

}  // namespace kiln::codegen::detail
