// Gemm-chain fusion: a fully connected layer whose input is the (already fused) result of
// another fully connected layer joins that layer's dispatch, as in an MLP head
// (Gemm -> Relu -> Gemm). The kernel keeps one row of the first product in a small stack
// buffer, applies the first layer's elementwise chain to it and multiplies it by the second
// layer's weights: the hidden activations never reach memory and one dispatch (and barrier)
// disappears. Fused when
//  - the consumer dispatch's root is a Gemm (transA = 0) or MatMul with rank-2 operands, a
//    constant B (and bias), no fused ops of its own, and its A operand is the producer's only
//    result, used once, not a graph output and not read through a view;
//  - the producer's root is a Gemm or a rank-2 MatMul whose fused ops are all elementwise;
//  - the hidden row has at most kMaxHidden elements (the stack buffer stays small), f32.
// The consumer's B (and bias) become extra bindings (fusedOp = its index in fused); the
// consumer's rows are the producer's rows, so the workgroup split is unchanged. Runs after
// fuseElementwise.
#include "dispatch_fusion.h"
#include "kiln/passes/passes.h"
#include "kiln/support/diagnostics.h"

namespace kiln::passes {
namespace {

using ir::OpKind;

constexpr int64_t kMaxHidden = 1024;  // floats in the kernel's stack buffer (4 KiB)

bool isFullyConnected(const ir::Op& op) {
  if (op.kind() != OpKind::Gemm && op.kind() != OpKind::MatMul) return false;
  if (op.numResults() != 1 || op.result()->dtype() != ir::DType::F32) return false;
  for (size_t i = 0; i < op.numOperands(); ++i) {
    const ir::Value* v = op.operand(i);
    if (!v) continue;
    if (v->dtype() != ir::DType::F32) return false;
    if (i < 2 && v->shape().size() != 2) return false;
  }
  return true;
}

bool allElementwise(const ir::Dispatch& d) {
  for (const ir::Op* op : d.fused)
    if (!op->info().hasTrait(ir::kElementwise)) return false;
  return true;
}

}  // namespace

void fuseGemmChains(ir::DispatchGraph& dg) {
  DispatchFusion fusion(dg);

  for (size_t c = 0; c < dg.dispatches.size(); ++c) {
    ir::Dispatch& consumer = dg.dispatches[c];
    const ir::Op& op = *consumer.root;
    if (!consumer.fused.empty() || !isFullyConnected(op)) continue;
    if (op.kind() == OpKind::Gemm && op.attrs().getInt("transA", 0) != 0) continue;
    bool constantWeights = true;
    for (size_t i = 1; i < op.numOperands(); ++i)
      if (op.operand(i) && !dg.storageOf(op.operand(i))->isConstant()) constantWeights = false;
    if (!constantWeights) continue;
    const ir::Value* hidden = op.operand(0);
    std::optional<size_t> producerIndex = fusion.liveWriter(hidden);
    if (!producerIndex) continue;
    ir::Dispatch& producer = dg.dispatches[*producerIndex];
    if (!isFullyConnected(*producer.root) || !allElementwise(producer)) continue;
    if (!DispatchFusion::writesLast(producer, hidden) || !fusion.soleReader(hidden)) continue;
    if (hidden->shape()[1] > kMaxHidden) continue;

    // The consumer's B (and bias) become extra read bindings.
    std::vector<ir::Binding> extra = DispatchFusion::extraBindings(consumer, 0, producer);
    if (!DispatchFusion::fits(producer, extra)) continue;
    fusion.fuse(c, *producerIndex, producer.bindings.size() - 1, extra);
  }
  fusion.dropFused();
}

}  // namespace kiln::passes
