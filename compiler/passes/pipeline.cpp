// The pass pipeline, in order. Graph passes first (each may expose work for the next:
// canonicalize removes no-ops, folding turns shape sub-graphs into constants, which makes
// more Reshapes no-ops, BatchNorm folding needs constant parameters), then the dispatch
// passes. --print-ir-after-all prints the graph after every graph pass and the dispatch
// graph after the dispatch passes; debug builds verify the graph between passes and the
// dispatch graph at the end.
#include "kiln/passes/pipeline.h"

#include <iostream>

#include "kiln/ir/dispatch_verifier.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "kiln/passes/passes.h"
#include "kiln/support/diagnostics.h"

namespace kiln::passes {

const std::vector<GraphPass>& graphPasses() {
  static const std::vector<GraphPass> kPasses = {
      {"dce", eliminateDeadCode},        {"canonicalize", canonicalize},
      {"fold-constants", foldConstants}, {"canonicalize", canonicalize},
      {"fold-batchnorm", foldBatchNorm}, {"conv-transpose-as-conv", convTransposeAsConv},
      {"trim-conv-taps", trimConvTaps},  {"fold-constants", foldConstants},
      {"dce", eliminateDeadCode},
  };
  return kPasses;
}

ir::DispatchGraph compileGraph(std::unique_ptr<ir::Graph> graph, const PipelineOptions& options) {
  std::ostream& out = options.printTo ? *options.printTo : std::cerr;
  ir::PrintOptions printOptions;
  printOptions.elideConstantsOver = 256;  // keep dumps readable

  ir::verifyGraph(*graph);  // the importer's output: a failure is reported as a user error
  if (options.printIrAfterAll) {
    out << "// ----- IR before passes -----\n";
    ir::printGraph(out, *graph, printOptions);
  }
  for (const GraphPass& pass : graphPasses()) {
    pass.run(*graph);
    if (options.verifyBetweenPasses) {
      try {
        ir::verifyGraph(*graph);
      } catch (const CompileError& e) {
        KILN_UNREACHABLE("pass " + std::string(pass.name) + " broke the IR: " + e.what());
      }
    }
    if (options.printIrAfterAll) {
      out << "// ----- IR after " << pass.name << " -----\n";
      ir::printGraph(out, *graph, printOptions);
    }
  }

  ir::DispatchGraph dg = formDispatches(std::move(graph));
  if (options.fusion) {
    fuseElementwise(dg);
    fuseGemmChains(dg);
    fuseConvPools(dg);
    fuseExpandDepthwise(dg, options.threads);
  }
  scheduleDispatches(dg);
  MemoryPlanOptions memoryOptions;
  memoryOptions.inPlace = options.inPlace;
  planMemory(dg, memoryOptions);
  if (options.verifyBetweenPasses) {
    try {
      ir::verifyDispatchGraph(dg);
    } catch (const CompileError& e) {
      KILN_UNREACHABLE(std::string("the dispatch passes broke the dispatch graph: ") + e.what());
    }
  }
  if (options.printIrAfterAll) {
    out << "// ----- dispatch graph after form-dispatches, schedule, plan-memory -----\n"
        << ir::printDispatchGraph(dg);
  }
  return dg;
}

}  // namespace kiln::passes
