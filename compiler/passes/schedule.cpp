// Scheduling: a deterministic topological order grouped into stages. A dispatch goes in the
// stage right after the latest stage among the producers of what it reads (stage 0 if it
// reads only inputs and constants); dispatches of one stage are mutually independent and a
// barrier separates consecutive stages. COPY steps go right after their source's producer,
// FILL steps in stage 0. Dispatches are renumbered in (stage, graph order) order, which is
// the order of the steps and of the kernels.
// Memory reuse is kept consistent with this by planMemory, which computes lifetimes in stages.
#include <algorithm>

#include "kiln/passes/passes.h"
#include "kiln/support/diagnostics.h"

namespace kiln::passes {

void scheduleDispatches(ir::DispatchGraph& dg) {
  // Which dispatch writes each storage.
  std::unordered_map<const ir::Value*, size_t> producer;
  for (size_t i = 0; i < dg.dispatches.size(); ++i)
    for (const ir::Binding& b : dg.dispatches[i].bindings)
      if (b.access & ir::kWrite) producer[dg.storageOf(b.value)] = i;

  auto readyStage = [&](const ir::Value* read, const std::vector<uint32_t>& stages) -> uint32_t {
    auto it = producer.find(dg.storageOf(read));
    return it == producer.end() ? 0 : stages[it->second] + 1;
  };

  // Dispatches are in graph (topological) order, so producers come first.
  std::vector<uint32_t> stages(dg.dispatches.size(), 0);
  for (size_t i = 0; i < dg.dispatches.size(); ++i) {
    uint32_t stage = 0;
    for (const ir::Binding& b : dg.dispatches[i].bindings)
      if (b.access & ir::kRead) {
        auto it = producer.find(dg.storageOf(b.value));
        KILN_ASSERT(it == producer.end() || it->second < i,
                    "dispatches are not in topological order");
        stage = std::max(stage, readyStage(b.value, stages));
      }
    stages[i] = stage;
  }

  // Reorder dispatches by (stage, original order) and renumber.
  std::vector<size_t> order(dg.dispatches.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return stages[a] != stages[b] ? stages[a] < stages[b] : a < b;
  });
  std::vector<ir::Dispatch> sorted;
  for (size_t i : order) {
    sorted.push_back(std::move(dg.dispatches[i]));
    sorted.back().stage = stages[i];
    sorted.back().id = uint32_t(sorted.size() - 1);
  }
  dg.dispatches = std::move(sorted);

  // Copy and fill steps (from formDispatches) get their stages. A copy runs in the stage
  // after its source's producer (stage 0 for inputs and constants).
  std::unordered_map<const ir::Value*, uint32_t> producerStage;
  for (const ir::Dispatch& d : dg.dispatches)
    for (const ir::Binding& b : d.bindings)
      if (b.access & ir::kWrite) producerStage[dg.storageOf(b.value)] = d.stage;
  std::vector<ir::Step> extra;
  for (const ir::Step& s : dg.steps) {
    if (s.kind == ir::StepKind::Dispatch) continue;
    ir::Step step = s;
    step.stage = 0;
    if (step.kind == ir::StepKind::Copy) {
      auto it = producerStage.find(dg.storageOf(step.srcValue));
      if (it != producerStage.end()) step.stage = it->second + 1;
    }
    extra.push_back(step);
  }

  dg.steps.clear();
  uint32_t numStages = 0;
  for (const ir::Dispatch& d : dg.dispatches) numStages = std::max(numStages, d.stage + 1);
  for (const ir::Step& s : extra) numStages = std::max(numStages, s.stage + 1);
  for (uint32_t stage = 0; stage < numStages; ++stage) {
    for (const ir::Dispatch& d : dg.dispatches)
      if (d.stage == stage) {
        ir::Step step;
        step.kind = ir::StepKind::Dispatch;
        step.stage = stage;
        step.dispatch = d.id;
        dg.steps.push_back(step);
      }
    for (const ir::Step& s : extra)
      if (s.stage == stage) dg.steps.push_back(s);
  }
  dg.numStages = numStages;
}

}  // namespace kiln::passes
