// Bookkeeping shared by the fusion passes (fuseElementwise, fuseGemmChains, fuseConvPools,
// fuseExpandDepthwise): which live
// dispatch writes each value, moving a consumer dispatch's root op into the dispatch of its
// producer (binding order as dispatch_graph.h describes), and dropping the dispatches fused
// away once a pass is done.
#pragma once

#include <cstddef>
#include <optional>
#include <unordered_map>
#include <vector>

#include "kiln/ir/dispatch_graph.h"

namespace kiln::passes {

class DispatchFusion {
 public:
  static constexpr size_t kMaxBindings = 32;  // KILN_MAX_BINDINGS

  explicit DispatchFusion(ir::DispatchGraph& dg);

  // The index of the live (not fused-away) dispatch that writes `v`, if any.
  std::optional<size_t> liveWriter(const ir::Value* v) const;

  // Whether `v` is an intermediate its one consumer alone reads: one user, not a graph
  // output, its own storage (not a view into another value).
  bool soleReader(const ir::Value* v) const;

  // Whether `v` is what the producer's last binding writes (the value its root or fused
  // chain produces), so a consumer of `v` can be fused behind it.
  static bool writesLast(const ir::Dispatch& producer, const ir::Value* v) {
    return producer.bindings.back().value == v && (producer.bindings.back().access & ir::kWrite);
  }

  // The consumer's read bindings but the one of operand `chainOperand`, as extra bindings of
  // the producer's next fused op (the consumer's other operands).
  static std::vector<ir::Binding> extraBindings(const ir::Dispatch& consumer, int chainOperand,
                                                const ir::Dispatch& producer);

  // Whether the producer stays within the binding limit with `extra` added.
  static bool fits(const ir::Dispatch& producer, const std::vector<ir::Binding>& extra) {
    return producer.bindings.size() + extra.size() <= kMaxBindings;
  }

  // Fuses dispatch `consumer` into dispatch `producer`, whose write binding `write` holds the
  // value the consumer's root reads: the extra bindings join the producer's, the write binding
  // moves to the end and now writes the consumer's result, and the consumer is fused away.
  void fuse(size_t consumer, size_t producer, size_t write, const std::vector<ir::Binding>& extra);

  // Drops the fused-away dispatches and renumbers the rest (order kept; a dispatch that took
  // in an elementwise consumer may now read a value written later in the list).
  void dropFused();

 private:
  ir::DispatchGraph& dg_;
  std::unordered_map<const ir::Value*, size_t> writer_;
  std::vector<bool> dead_;
};

}  // namespace kiln::passes
