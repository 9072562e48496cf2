// Scheduling: a deterministic topological order grouped into stages. A dispatch goes in the
// stage right after the latest stage among the producers of what it reads (stage 0 if it
// reads only inputs and constants); dispatches of one stage are mutually independent and a
// barrier separates consecutive stages. COPY steps go right after their source's producer,
// FILL steps in stage 0. Within a stage the dispatches go cheapest first (ir::dispatchCost;
// ties keep list order): the thread pool takes a stage's dispatches last to first, so its
// threads start on the largest workgroups and the small ones fill in at the end, where one
// thread would otherwise wait for the other's last large workgroup (ResNet-18's downsample
// convs beside the 3x3 convs of their block). Dispatches are renumbered in that order, which is
// the order of the steps and of the kernels; the incoming list order need not be topological.
// A storage may have several producers, each writing its own byte range (the operands of an
// in-place Concat); a read waits for the producers whose ranges it overlaps.
// Memory reuse is kept consistent with this by planMemory, which computes lifetimes in stages.
#include <algorithm>
#include <functional>

#include "kiln/ir/dispatch_cost.h"
#include "kiln/passes/passes.h"
#include "kiln/support/diagnostics.h"

namespace kiln::passes {
namespace {

// The dispatches writing each storage, with the byte range each writes.
class Producers {
 public:
  explicit Producers(const ir::DispatchGraph& dg) : dg_(dg) {
    for (size_t i = 0; i < dg.dispatches.size(); ++i)
      for (const ir::Binding& b : dg.dispatches[i].bindings)
        if (b.access & ir::kWrite)
          writes_[dg.storageOf(b.value)].push_back(
              {dg.viewOffsetOf(b.value), b.value->type().byteSize(), i});
  }

  // Calls f(dispatch index) for every producer of bytes that reading `value` touches (every
  // producer of its storage when either range is empty).
  template <typename F>
  void forEach(const ir::Value* value, F f) const {
    auto it = writes_.find(dg_.storageOf(value));
    if (it == writes_.end()) return;
    uint64_t begin = dg_.viewOffsetOf(value), end = begin + value->type().byteSize();
    for (const Write& w : it->second)
      if (begin == end || w.length == 0 || (w.offset < end && begin < w.offset + w.length))
        f(w.dispatch);
  }

 private:
  struct Write {
    uint64_t offset, length;
    size_t dispatch;
  };
  const ir::DispatchGraph& dg_;
  std::unordered_map<const ir::Value*, std::vector<Write>> writes_;
};

}  // namespace

void scheduleDispatches(ir::DispatchGraph& dg) {
  Producers producers(dg);

  // Stages by longest path over the producers of what each dispatch reads. The list is
  // usually topological already, but need not be: a fused dispatch keeps its producer's place
  // while a fused operand (e.g. a slice of an in-place Concat) may be written later. The
  // dependencies themselves never form a cycle (they follow the graph's SSA edges).
  constexpr uint32_t kUnset = UINT32_MAX, kVisiting = UINT32_MAX - 1;
  std::vector<uint32_t> stages(dg.dispatches.size(), kUnset);
  std::function<uint32_t(size_t)> stageOf = [&](size_t i) -> uint32_t {
    KILN_ASSERT(stages[i] != kVisiting, "the dispatches' dependencies form a cycle");
    if (stages[i] != kUnset) return stages[i];
    stages[i] = kVisiting;
    uint32_t stage = 0;
    for (const ir::Binding& b : dg.dispatches[i].bindings)
      if (b.access & ir::kRead)
        producers.forEach(b.value, [&](size_t p) {
          if (p != i) stage = std::max(stage, stageOf(p) + 1);
        });
    return stages[i] = stage;
  };
  for (size_t i = 0; i < dg.dispatches.size(); ++i) stageOf(i);

  // Reorder dispatches by (stage, cost, original order) and renumber.
  std::vector<uint64_t> costs;
  for (const ir::Dispatch& d : dg.dispatches) costs.push_back(ir::dispatchCost(d).count);
  std::vector<size_t> order(dg.dispatches.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (stages[a] != stages[b]) return stages[a] < stages[b];
    return costs[a] != costs[b] ? costs[a] < costs[b] : a < b;
  });
  std::vector<ir::Dispatch> sorted;
  for (size_t i : order) {
    sorted.push_back(std::move(dg.dispatches[i]));
    sorted.back().stage = stages[i];
    sorted.back().id = uint32_t(sorted.size() - 1);
  }
  dg.dispatches = std::move(sorted);

  // Copy and fill steps (from formDispatches) get their stages. A copy runs in the stage
  // after its source's producers (stage 0 for inputs and constants).
  std::vector<ir::Step> extra;
  for (const ir::Step& s : dg.steps) {
    if (s.kind == ir::StepKind::Dispatch) continue;
    ir::Step step = s;
    step.stage = 0;
    if (step.kind == ir::StepKind::Copy)
      producers.forEach(step.srcValue,
                        [&](size_t p) { step.stage = std::max(step.stage, stages[p] + 1); });
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
