// Conv + MaxPool fusion: a MaxPool whose input is the (already fused) result of a
// convolution joins that convolution's dispatch. The kernel (emit_conv_pool.cpp) computes
// the convolution a band of rows at a time into a stack buffer and pools it there, so only
// the pooled tensor reaches memory (SqueezeNet's and ResNet's stems: a 3 MB map becomes a
// 0.8 MB one) and one dispatch (and barrier) disappears. Fused when
//  - the consumer dispatch's root is a 2-D MaxPool (one result, no Indices, dilations 1,
//    storage_order 0) with no fused ops of its own; any kernel, strides, pads, auto_pad and
//    ceil_mode (the geometry is resolved when the dispatch is lowered);
//  - its input is the producer's only result, used once, not a graph output and not read
//    through a view;
//  - the producer's root is a 2-D convolution (group 1, f32) whose fused ops are all
//    elementwise and read no other tensor (Relu, Clip...: they apply before the pool);
//  - the convolution's result has at least kMinMapBytes: where it fits in L2 there is no
//    memory traffic to save, and the kernel's row tiles lose to the plain GEMM kernel's
//    tiles over the whole map (mnist_cnn's 16x28x28 conv1: 16.4 us fused against 10.0 +
//    1.6 us apart, 1 thread; its 32x14x14 conv2 72 against 69 + 1.5).
// The pool adds no binding: the producer's write binding becomes the pool's result. Runs
// after fuseElementwise.
#include "dispatch_fusion.h"
#include "kiln/passes/passes.h"

namespace kiln::passes {
namespace {

using ir::OpKind;

constexpr int64_t kMinMapBytes = int64_t{1} << 20;  // SqueezeNet's and ResNet's stems: 3.2 MB

bool isPlainConv2d(const ir::Op& op) {
  if (op.kind() != OpKind::Conv || op.numResults() != 1) return false;
  if (op.attrs().getInt("group", 1) != 1) return false;
  if (op.result()->dtype() != ir::DType::F32 || op.result()->shape().size() != 4) return false;
  for (size_t i = 0; i < op.numOperands(); ++i) {
    const ir::Value* v = op.operand(i);
    if (v && v->dtype() != ir::DType::F32) return false;
  }
  return true;
}

bool isFusableMaxPool(const ir::Op& op) {
  if (op.kind() != OpKind::MaxPool || op.numResults() != 1) return false;
  if (op.result()->dtype() != ir::DType::F32 || op.operand(0)->shape().size() != 4) return false;
  if (op.attrs().getInt("storage_order", 0) != 0) return false;
  for (int64_t d : op.attrs().getInts("dilations", {}))
    if (d != 1) return false;
  return true;
}

// The producer's fused ops are elementwise and read nothing but the chain value.
bool onlyUnaryChain(const ir::Dispatch& d) {
  for (const ir::Op* op : d.fused)
    if (!op->info().hasTrait(ir::kElementwise)) return false;
  for (const ir::Binding& b : d.bindings)
    if (b.fusedOp >= 0) return false;
  return true;
}

}  // namespace

void fuseConvPools(ir::DispatchGraph& dg) {
  DispatchFusion fusion(dg);

  for (size_t c = 0; c < dg.dispatches.size(); ++c) {
    const ir::Dispatch& consumer = dg.dispatches[c];
    const ir::Op& pool = *consumer.root;
    if (!consumer.fused.empty() || !isFusableMaxPool(pool)) continue;
    const ir::Value* map = pool.operand(0);
    std::optional<size_t> producerIndex = fusion.liveWriter(map);
    if (!producerIndex) continue;
    const ir::Dispatch& producer = dg.dispatches[*producerIndex];
    if (!isPlainConv2d(*producer.root) || !onlyUnaryChain(producer)) continue;
    if (!DispatchFusion::writesLast(producer, map) || !fusion.soleReader(map)) continue;
    int64_t bytes = 4;
    for (int64_t d : map->shape()) bytes *= d;
    if (bytes < kMinMapBytes) continue;
    fusion.fuse(c, *producerIndex, producer.bindings.size() - 1, {});
  }
  fusion.dropFused();
}

}  // namespace kiln::passes
