// Expand-depthwise fusion: in a MobileNet inverted-residual block, the depthwise convolution
// that reads the result of the (already fused) 1x1 "expand" convolution joins that dispatch,
// its own fused elementwise ops (Clip) included. The kernel (emit_conv_expand_dw.cpp) computes
// the expanded rows a few at a time into a stack buffer and runs the depthwise convolution
// over them there: the expanded tensor, the largest activation of the block, never reaches
// memory. Fused when
//  - the consumer's root is a 2-D depthwise Conv (group = channels = output channels, one
//    filter per channel) with a square kernel of at most 5 taps a side, strides 1-2 (at most
//    the kernel), dilation 1, pads smaller than the kernel, constant weights and bias, and
//    fused ops that are Relu, Clip (constant bounds) or LeakyRelu;
//  - the producer's root is a 2-D Conv with a 1x1 kernel, stride 1, no padding, group 1,
//    constant weights and bias, fused ops as above, all f32;
//  - the expanded tensor is used once (not an output, not a view) and at least
//    kMinHiddenBytes per image (kMinHiddenBytesThreads for an artifact that several threads
//    will run): smaller ones stay in the caches between the two kernels, whose separate loops
//    are faster than the fused one's on one thread; KH of its rows (all channels) fit
//    kMaxWindowRowsBytes (the kernel's stack buffer).
// The depthwise weights and bias become extra bindings of the producer (fusedOp = the
// depthwise op's index in `fused`). Runs after fuseElementwise.
#include "dispatch_fusion.h"
#include "kiln/ir/window_geometry.h"
#include "kiln/passes/passes.h"

namespace kiln::passes {
namespace {

using ir::OpKind;

// Expanded tensors from this size on (per image) are fused. Measured on MobileNetV2 (Zen 3,
// 512 KiB L2, 1 thread, per-dispatch minimums, docs/codegen.md "Fusion"): the 4.8 MB one of
// features.2 gains ~15 %; the 1.8 MB (56x56) and 0.6 MB (28x28) ones are 5-15 % slower fused
// (the separate kernels run near peak and the tensors stay in L3 between them).
constexpr int64_t kMinHiddenBytes = 2 * 1024 * 1024;
// With two threads the fused kernel also keeps each thread on its own rows of the expanded
// tensor: split apart, the expand convolution writes each channel plane in pixel halves, one
// thread each, and the depthwise one reads whole planes, half of them from the other core
// (docs/benchmarks.md, "MobileNetV2 at two threads"). Measured on MobileNetV2 (Zen 4, 1 MB L2,
// `kiln compare` of --threads=2 artifacts at 2 threads, 5 s runs, both core placements):
// fusing from 512 KiB on (features.3-7, down to the 28x28 blocks' 602 KB) 0.940-0.962 against
// 2 MiB; from 1 MiB 1.000; from 400 KB (the 14x14 blocks' 451 KB too) 0.974-1.064; from
// 250 KB 0.981-0.991. At 1 thread the 512 KiB rule was 1.015 (slower), so 1 thread keeps 2 MiB.
constexpr int64_t kMinHiddenBytesThreads = 512 * 1024;
// The kernel keeps KH expanded rows of every channel on the stack (256 KiB at most there).
constexpr int64_t kMaxWindowRowsBytes = 256 * 1024;

bool isF32Rank4(const ir::Value* v) {
  return v && v->dtype() == ir::DType::F32 && v->shape().size() == 4;
}

// Constant operands 1 and 2 (weights, optional bias), f32.
bool constantWeights(const ir::DispatchGraph& dg, const ir::Op& op) {
  for (size_t i = 1; i < op.numOperands(); ++i) {
    const ir::Value* v = op.operand(i);
    if (!v) continue;
    if (v->dtype() != ir::DType::F32 || !dg.storageOf(v)->isConstant()) return false;
  }
  return true;
}

// The dispatch's fused ops are activations the kernel applies on vectors (Relu, Clip,
// LeakyRelu) and read only the chain value (no extra bindings).
bool plainChain(const ir::Dispatch& d) {
  for (const ir::Op* op : d.fused) {
    const OpKind k = op->kind();
    if (k != OpKind::Relu && k != OpKind::Clip && k != OpKind::LeakyRelu) return false;
    if (op->result()->dtype() != ir::DType::F32) return false;
  }
  for (const ir::Binding& b : d.bindings)
    if (b.fusedOp >= 0) return false;
  return true;
}

ir::WindowGeometry convGeometry(const ir::Op& op) {
  const std::vector<int64_t>& xs = op.operand(0)->shape();
  const std::vector<int64_t>& ws = op.operand(1)->shape();
  return ir::computeWindowGeometry(ir::Shape(xs.begin() + 2, xs.end()),
                                   std::vector<int64_t>(ws.begin() + 2, ws.end()), op.attrs(),
                                   false);
}

bool isPointwise(const ir::DispatchGraph& dg, const ir::Dispatch& d) {
  const ir::Op& op = *d.root;
  if (op.kind() != OpKind::Conv || op.numResults() != 1) return false;
  if (!isF32Rank4(op.operand(0)) || !isF32Rank4(op.operand(1)) || !isF32Rank4(op.result()))
    return false;
  if (op.attrs().getInt("group", 1) != 1 || !constantWeights(dg, op) || !plainChain(d))
    return false;
  const std::vector<int64_t>& ws = op.operand(1)->shape();
  if (ws[2] != 1 || ws[3] != 1) return false;
  ir::WindowGeometry g = convGeometry(op);
  for (int64_t s : g.strides)
    if (s != 1) return false;
  for (int64_t p : g.pads)
    if (p != 0) return false;
  return true;
}

bool isDepthwise(const ir::DispatchGraph& dg, const ir::Dispatch& d) {
  const ir::Op& op = *d.root;
  if (op.kind() != OpKind::Conv || op.numResults() != 1) return false;
  if (!isF32Rank4(op.operand(0)) || !isF32Rank4(op.operand(1)) || !isF32Rank4(op.result()))
    return false;
  const std::vector<int64_t>& xs = op.operand(0)->shape();
  const std::vector<int64_t>& ws = op.operand(1)->shape();
  const int64_t c = xs[1];
  if (op.attrs().getInt("group", 1) != c || ws[0] != c || ws[1] != 1) return false;
  if (ws[2] != ws[3] || ws[2] > 5 || !constantWeights(dg, op) || !plainChain(d)) return false;
  ir::WindowGeometry g = convGeometry(op);
  for (int64_t s : g.strides)
    if (s < 1 || s > 2 || s > ws[2]) return false;
  for (int64_t dl : g.dilations)
    if (dl != 1) return false;
  for (int64_t p : g.pads)
    if (p < 0 || p >= ws[2]) return false;
  return g.strides[0] == g.strides[1];
}

}  // namespace

void fuseExpandDepthwise(ir::DispatchGraph& dg, uint32_t threads) {
  DispatchFusion fusion(dg);
  const int64_t minHiddenBytes = threads >= 2 ? kMinHiddenBytesThreads : kMinHiddenBytes;

  for (size_t c = 0; c < dg.dispatches.size(); ++c) {
    ir::Dispatch& consumer = dg.dispatches[c];
    if (!isDepthwise(dg, consumer)) continue;
    const ir::Value* hidden = consumer.root->operand(0);
    std::optional<size_t> producerIndex = fusion.liveWriter(hidden);
    if (!producerIndex) continue;
    ir::Dispatch& producer = dg.dispatches[*producerIndex];
    if (!isPointwise(dg, producer)) continue;
    if (!DispatchFusion::writesLast(producer, hidden) || !fusion.soleReader(hidden)) continue;
    const std::vector<int64_t>& hs = hidden->shape();
    const int64_t kh = consumer.root->operand(1)->shape()[2];
    if (hs[1] * hs[2] * hs[3] * 4 < minHiddenBytes || hs[1] * kh * hs[3] * 4 > kMaxWindowRowsBytes)
      continue;
    // The consumer's result after its own chain: what the fused dispatch writes.
    const ir::Binding& written = consumer.bindings.back();
    if (!(written.access & ir::kWrite) || written.resultIndex != 0) continue;
    const ir::Value* result = written.value;
    const std::vector<const ir::Op*> tail = consumer.fused;

    // The depthwise weights (and bias) become extra read bindings.
    std::vector<ir::Binding> extra = DispatchFusion::extraBindings(consumer, 0, producer);
    if (!DispatchFusion::fits(producer, extra)) continue;
    fusion.fuse(c, *producerIndex, producer.bindings.size() - 1, extra);
    // fuse() moved the depthwise root; its chain follows it (no bindings of its own).
    producer.fused.insert(producer.fused.end(), tail.begin(), tail.end());
    producer.bindings.back().value = result;
  }
  fusion.dropFused();
}

}  // namespace kiln::passes
