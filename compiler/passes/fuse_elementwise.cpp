// Elementwise fusion: puts elementwise consumers into the dispatch of their producer.
// A dispatch C whose root is a fusable elementwise op (activations, Clip, arithmetic with a
// constant or a second tensor such as a residual Add/Sum, per-channel Mul/Add left by
// BatchNorm folding...) joins the dispatch P producing one of its operands when
//  - that operand is P's only result, is used once (by C's root, in one operand slot), is not a
//    graph output and not read through a view: its value then never needs memory;
//  - P's root is a fusable producer (Conv, Gemm, MatMul, MaxPool, AveragePool, a Gather of f32
//    data, or an f32 elementwise op; P may already carry a fused chain), and every tensor is
//    f32 (but a Gather's indices);
//  - C's result has the chain value's shape (the kernel's iteration space does not grow) and
//    the fused dispatch stays within the binding limit.
// Where several of C's operands have producers that qualify, the chain goes through the one
// with the longest chain of dispatches behind it (ties: the latest in the list), so that the
// others, which P then reads, can run in earlier stages beside P's own producers: in a
// ResNet block with a projection shortcut, Add(conv2, downsample) fuses into conv2 and the
// downsample convolution runs in conv1's stage, one stage fewer per such block. (The
// fused dispatch keeps P's place in the list, which may then come before a producer of an
// extra operand; scheduleDispatches orders by dependencies, not by the list.)
// The fused op's other operands become extra read bindings of P (order in dispatch_graph.h),
// P's write binding becomes C's result and C disappears. A chain of elementwise ops over an
// elementwise producer is one loop kernel. Runs between formDispatches and
// scheduleDispatches; planMemory then sees the fused dispatch's real reads and writes only.
#include <algorithm>
#include <functional>

#include "dispatch_fusion.h"
#include "kiln/passes/passes.h"
#include "kiln/support/diagnostics.h"

namespace kiln::passes {
namespace {

using ir::OpKind;

bool allF32(const ir::Op& op) {
  for (size_t i = 0; i < op.numOperands(); ++i) {
    const ir::Value* v = op.operand(i);
    if (v && !op.info().isStaticOperand(i) && v->dtype() != ir::DType::F32) return false;
  }
  for (size_t i = 0; i < op.numResults(); ++i)
    if (op.result(i)->dtype() != ir::DType::F32) return false;
  return true;
}

// Elementwise ops that may be fused as consumers (the code generator evaluates them per
// element in f32).
bool isFusableConsumer(const ir::Op& op) {
  switch (op.kind()) {
    case OpKind::Relu:
    case OpKind::Clip:
    case OpKind::LeakyRelu:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::HardSwish:
    case OpKind::HardSigmoid:
    case OpKind::Gelu:
    case OpKind::Erf:
    case OpKind::Elu:
    case OpKind::Selu:
    case OpKind::Softplus:
    case OpKind::Softsign:
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Sqrt:
    case OpKind::Reciprocal:
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Sum:
    case OpKind::Mean:
    case OpKind::PRelu:
    case OpKind::Pow:
      return op.numResults() == 1 && allF32(op);
    default:
      return false;
  }
}

bool isFusableProducer(const ir::Op& op) {
  // A Gather of f32 data (its indices are integers): Resize's per-axis gathers, each followed
  // by a Mul by its weights and an Add of the other tap's term.
  if (op.kind() == OpKind::Gather)
    return op.numResults() == 1 && op.operand(0)->dtype() == ir::DType::F32 &&
           op.result()->dtype() == ir::DType::F32;
  if (op.numResults() != 1 || !allF32(op)) return false;
  switch (op.kind()) {
    case OpKind::Conv:
    case OpKind::Gemm:
    case OpKind::MatMul:
    case OpKind::MaxPool:
    case OpKind::AveragePool:
      return true;
    default:
      return isFusableConsumer(op);  // an elementwise root: the chain extends its expression
  }
}

// The write binding of a dispatch with one result, or -1.
int singleWrite(const ir::Dispatch& d) {
  int found = -1;
  for (size_t i = 0; i < d.bindings.size(); ++i) {
    if (!(d.bindings[i].access & ir::kWrite)) continue;
    if (found >= 0) return -1;
    found = int(i);
  }
  return found;
}

}  // namespace

void fuseElementwise(ir::DispatchGraph& dg) {
  DispatchFusion fusion(dg);
  // Each dispatch's depth before this pass: the longest chain of dispatches that ends at it,
  // following what it reads. (Fusing elementwise ops shortens chains, not their order.)
  std::vector<uint32_t> depths(dg.dispatches.size(), 0);
  std::function<uint32_t(size_t)> depthOf = [&](size_t d) -> uint32_t {
    if (depths[d] != 0) return depths[d];
    uint32_t depth = 1;
    for (const ir::Binding& b : dg.dispatches[d].bindings) {
      if (!(b.access & ir::kRead)) continue;
      std::optional<size_t> w = fusion.liveWriter(b.value);
      if (w && *w != d) depth = std::max(depth, depthOf(*w) + 1);
    }
    return depths[d] = depth;
  };
  for (size_t d = 0; d < dg.dispatches.size(); ++d) depthOf(d);

  struct Candidate {
    int operand;
    size_t producer;
    uint32_t depth;
  };
  for (size_t c = 0; c < dg.dispatches.size(); ++c) {
    ir::Dispatch& consumer = dg.dispatches[c];
    const ir::Op& op = *consumer.root;
    if (!consumer.fused.empty() || !isFusableConsumer(op)) continue;
    // The operands with a live producer, the deepest (then the latest) first.
    std::vector<Candidate> candidates;
    for (size_t i = 0; i < op.numOperands(); ++i) {
      const ir::Value* v = op.operand(i);
      if (!v || op.info().isStaticOperand(i)) continue;
      if (std::optional<size_t> w = fusion.liveWriter(v))
        candidates.push_back({int(i), *w, depths[*w]});
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) {
                       return a.depth != b.depth ? a.depth > b.depth : a.producer > b.producer;
                     });
    for (const Candidate& candidate : candidates) {
      const ir::Value* chain = op.operand(size_t(candidate.operand));
      ir::Dispatch& producer = dg.dispatches[candidate.producer];
      int write = singleWrite(producer);
      if (write < 0 || producer.bindings[size_t(write)].value != chain) continue;
      if (!isFusableProducer(*producer.root)) continue;
      if (!fusion.soleReader(chain)) continue;
      if (op.result()->shape() != chain->shape()) continue;
      // The consumer's other operands become extra read bindings (its bindings minus the
      // chain).
      std::vector<ir::Binding> extra =
          DispatchFusion::extraBindings(consumer, candidate.operand, producer);
      if (!DispatchFusion::fits(producer, extra)) continue;
      fusion.fuse(c, candidate.producer, size_t(write), extra);
      break;
    }
  }
  fusion.dropFused();
}

}  // namespace kiln::passes
