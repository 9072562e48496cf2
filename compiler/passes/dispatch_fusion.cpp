// Fusion bookkeeping shared by the fusion passes (see dispatch_fusion.h).
#include "dispatch_fusion.h"

#include <utility>

namespace kiln::passes {

DispatchFusion::DispatchFusion(ir::DispatchGraph& dg)
    : dg_(dg), dead_(dg.dispatches.size(), false) {
  for (size_t i = 0; i < dg.dispatches.size(); ++i)
    for (const ir::Binding& b : dg.dispatches[i].bindings)
      if (b.access & ir::kWrite) writer_[b.value] = i;
}

std::optional<size_t> DispatchFusion::liveWriter(const ir::Value* v) const {
  auto it = writer_.find(v);
  if (it == writer_.end() || dead_[it->second]) return std::nullopt;
  return it->second;
}

bool DispatchFusion::soleReader(const ir::Value* v) const {
  return v->users().size() == 1 && !dg_.graph->isOutput(v) && dg_.storageOf(v) == v;
}

std::vector<ir::Binding> DispatchFusion::extraBindings(const ir::Dispatch& consumer,
                                                       int chainOperand,
                                                       const ir::Dispatch& producer) {
  std::vector<ir::Binding> extra;
  for (const ir::Binding& b : consumer.bindings) {
    if (!(b.access & ir::kRead) || b.operandIndex == chainOperand) continue;
    ir::Binding e = b;
    e.operandIndex = -1;
    e.fusedOp = int(producer.fused.size());
    extra.push_back(e);
  }
  return extra;
}

void DispatchFusion::fuse(size_t consumer, size_t producer, size_t write,
                          const std::vector<ir::Binding>& extra) {
  ir::Dispatch& p = dg_.dispatches[producer];
  const ir::Op& op = *dg_.dispatches[consumer].root;
  const ir::Value* chain = p.bindings[write].value;
  ir::Binding result = p.bindings[write];
  result.value = op.result();
  p.bindings.erase(p.bindings.begin() + std::ptrdiff_t(write));
  p.bindings.insert(p.bindings.end(), extra.begin(), extra.end());
  p.bindings.push_back(result);
  p.fused.push_back(&op);
  writer_.erase(chain);
  writer_[op.result()] = producer;
  dead_[consumer] = true;
}

void DispatchFusion::dropFused() {
  std::vector<ir::Dispatch> kept;
  for (size_t i = 0; i < dg_.dispatches.size(); ++i) {
    if (dead_[i]) continue;
    kept.push_back(std::move(dg_.dispatches[i]));
    kept.back().id = uint32_t(kept.size() - 1);
  }
  dg_.dispatches = std::move(kept);
}

}  // namespace kiln::passes
