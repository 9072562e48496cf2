// The pass pipeline: the ordered list of passes from a verified, imported ir::Graph to a
// planned and scheduled ir::DispatchGraph. Reading graphPasses() and compileGraph() tells the
// whole middle of the compiler.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string_view>
#include <vector>

#include "kiln/ir/dispatch_graph.h"
#include "kiln/ir/graph.h"

namespace kiln::passes {

struct PipelineOptions {
  // --print-ir-after-all: print the IR (and then the dispatch graph) after every pass.
  bool printIrAfterAll = false;
  std::ostream* printTo = nullptr;  // nullptr: std::cerr
  // In-place elementwise writes (see MemoryPlanOptions::inPlace in passes.h).
  bool inPlace = true;
  // Elementwise fusion (fuseElementwise); off = one op per dispatch (--fusion=none).
  bool fusion = true;
  // The threads that will run the artifact (--threads): from 2 on, fuseExpandDepthwise fuses
  // smaller expanded tensors too.
  uint32_t threads = 1;
  // Run the IR verifier after every graph pass. On by default in debug builds (!NDEBUG).
#ifdef NDEBUG
  bool verifyBetweenPasses = false;
#else
  bool verifyBetweenPasses = true;
#endif
};

struct GraphPass {
  std::string_view name;  // as printed by --print-ir-after-all
  bool (*run)(ir::Graph&);
};

// The graph passes in the order compileGraph runs them.
const std::vector<GraphPass>& graphPasses();

// Verifies the input graph, runs the graph passes, then formDispatches, scheduleDispatches
// and planMemory. Throws CompileError for user errors (including a verifier failure of the
// input graph); a verifier failure after a pass is a compiler bug and aborts.
ir::DispatchGraph compileGraph(std::unique_ptr<ir::Graph> graph,
                               const PipelineOptions& options = {});

}  // namespace kiln::passes
