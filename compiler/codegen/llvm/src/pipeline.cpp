// Runs LLVM's optimisation pipeline over the kernel module and emits the object file.
#include "pipeline.h"

#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>

#include "codegen_error.h"

namespace kiln::codegen::detail {

void optimizeModule(llvm::Module& module, llvm::TargetMachine& machine, bool optimizeForSize) {
  llvm::LoopAnalysisManager loopAnalyses;
  llvm::FunctionAnalysisManager functionAnalyses;
  llvm::CGSCCAnalysisManager cgsccAnalyses;
  llvm::ModuleAnalysisManager moduleAnalyses;

  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  tuning.LoopUnrolling = true;
  llvm::PassBuilder builder(&machine, tuning);

  // With every library function disabled, no pass recognises or creates libc calls.
  llvm::TargetLibraryInfoImpl libraryInfo(llvm::Triple(module.getTargetTriple()));
  libraryInfo.disableAllFunctions();
  functionAnalyses.registerPass([&] { return llvm::TargetLibraryAnalysis(libraryInfo); });

  builder.registerModuleAnalyses(moduleAnalyses);
  builder.registerCGSCCAnalyses(cgsccAnalyses);
  builder.registerFunctionAnalyses(functionAnalyses);
  builder.registerLoopAnalyses(loopAnalyses);
  builder.crossRegisterProxies(loopAnalyses, functionAnalyses, cgsccAnalyses, moduleAnalyses);

  llvm::OptimizationLevel level =
      optimizeForSize ? llvm::OptimizationLevel::Os : llvm::OptimizationLevel::O2;
  llvm::ModulePassManager passes = builder.buildPerModuleDefaultPipeline(level);
  passes.run(module, moduleAnalyses);
}

std::vector<uint8_t> emitObject(llvm::Module& module, llvm::TargetMachine& machine) {
  std::string problems;
  llvm::raw_string_ostream problemStream(problems);
  if (llvm::verifyModule(module, &problemStream)) {
    problemStream.flush();
    fail("internal error: generated kernel module is invalid: " + problems);
  }
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, stream, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    fail("LLVM cannot emit object files for " + module.getTargetTriple());
  }
  passes.run(module);
  return std::vector<uint8_t>(buffer.begin(), buffer.end());
}

}  // namespace kiln::codegen::detail
