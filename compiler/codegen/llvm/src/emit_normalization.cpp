// Normalisations computed per group of elements: LayerNormalization (every trailing block
// from `axis` on, scale and bias broadcast over that block), InstanceNormalization (every
// (n, c) plane, per-channel scale and bias) and LRN (across `lrnSize` neighbouring channels at
// each position). Each workgroup item is one block / plane; mean and variance are two passes
// over it (the variance from the centred values, as ONNX's reference computes it).
#include "emitters.h"
#include "kernel_builder.h"
#include "math_approx.h"

namespace kiln::codegen::detail {
namespace {

// y = (x - mean) / sqrt(var + epsilon) * scale + bias over one block of `count` consecutive
// elements starting at `base`; scaleAt / biasAt give the scale and bias of element j.
void normalizeBlock(KernelBuilder& kb, llvm::Value* base, int64_t count, float epsilon,
                    const std::function<llvm::Value*(llvm::Value*)>& scaleAt,
                    const std::function<llvm::Value*(llvm::Value*)>& biasAt) {
  llvm::IRBuilder<>& b = kb.b();
  const ElemType f32 = ElemType::F32;
  const unsigned out = kb.outputBinding();
  llvm::Type* floatTy = b.getFloatTy();
  llvm::Value* sumSlot = kb.local(floatTy, "sum");
  b.CreateStore(kb.f32(0.0f), sumSlot);
  kb.forRange(0, count, [&](llvm::Value* j) {
    llvm::Value* x = kb.load(0, f32, b.CreateAdd(base, j));
    b.CreateStore(b.CreateFAdd(b.CreateLoad(floatTy, sumSlot), x), sumSlot);
  });
  llvm::Value* mean =
      b.CreateFDiv(b.CreateLoad(floatTy, sumSlot), kb.f32(static_cast<float>(count)));
  b.CreateStore(kb.f32(0.0f), sumSlot);
  kb.forRange(0, count, [&](llvm::Value* j) {
    llvm::Value* centred = b.CreateFSub(kb.load(0, f32, b.CreateAdd(base, j)), mean);
    b.CreateStore(b.CreateFAdd(b.CreateLoad(floatTy, sumSlot), b.CreateFMul(centred, centred)),
                  sumSlot);
  });
  llvm::Value* variance =
      b.CreateFDiv(b.CreateLoad(floatTy, sumSlot), kb.f32(static_cast<float>(count)));
  llvm::Value* inverse =
      b.CreateFDiv(kb.f32(1.0f), emitSqrt(kb, b.CreateFAdd(variance, kb.f32(epsilon))));
  kb.forRange(0, count, [&](llvm::Value* j) {
    llvm::Value* at = b.CreateAdd(base, j);
    llvm::Value* y = b.CreateFMul(b.CreateFSub(kb.load(0, f32, at), mean), inverse);
    y = b.CreateFMul(y, scaleAt(j));
    if (llvm::Value* bias = biasAt(j)) y = b.CreateFAdd(y, bias);
    kb.store(out, f32, at, y);
  });
}

}  // namespace

uint32_t emitLayerNorm(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  std::vector<int64_t> block(xs.begin() + d.axis, xs.end());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d.axis; ++i) outer *= xs[i];
  for (int64_t e : block) inner *= e;
  // Index of element j of the block in a scale/bias operand broadcast to the block.
  auto operandAt = [&](unsigned binding) {
    return [&kb, &d, block, inner, binding](llvm::Value* j) -> llvm::Value* {
      if (binding >= d.inputs.size()) return nullptr;
      const BufferDesc& operand = d.inputs[binding];
      llvm::Value* index = j;
      if (operand.elementCount() != inner) {
        std::vector<int64_t> strides = broadcastStrides(operand.shape, block);
        index = kb.linearize(kb.decompose(j, block), strides);
      }
      return kb.load(binding, ElemType::F32, index);
    };
  };
  auto scaleAt = operandAt(1);
  auto biasAt = operandAt(2);
  kb.forWorkgroupShare(outer, [&](llvm::Value* o) {
    normalizeBlock(kb, b.CreateMul(o, kb.index(inner)), inner, d.epsilon, scaleAt, biasAt);
  });
  return workgroupsFor(outer, inner * 3);
}

uint32_t emitInstanceNorm(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  const int64_t C = xs[1];
  int64_t planes = xs[0] * C, count = 1;
  for (size_t i = 2; i < xs.size(); ++i) count *= xs[i];
  kb.forWorkgroupShare(planes, [&](llvm::Value* plane) {
    llvm::Value* channel = b.CreateURem(plane, kb.index(C));
    llvm::Value* scale = kb.load(1, ElemType::F32, channel);
    llvm::Value* bias = kb.load(2, ElemType::F32, channel);
    normalizeBlock(
        kb, b.CreateMul(plane, kb.index(count)), count, d.epsilon,
        [&](llvm::Value*) { return scale; }, [&](llvm::Value*) { return bias; });
  });
  return workgroupsFor(planes, count * 3);
}

uint32_t emitLrn(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const ElemType f32 = ElemType::F32;
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  const int64_t C = xs[1];
  int64_t count = 1;
  for (size_t i = 2; i < xs.size(); ++i) count *= xs[i];
  // Channels c - before .. c + after (clipped to [0, C)), as ONNX defines the window.
  const int64_t before = (d.lrnSize - 1) / 2, after = d.lrnSize - 1 - before;
  const float scale = d.alpha / static_cast<float>(d.lrnSize);
  llvm::Type* floatTy = b.getFloatTy();
  llvm::Value* sumSlot = kb.local(floatTy, "sum");
  kb.forWorkgroupShare(xs[0] * C, [&](llvm::Value* plane) {
    llvm::Value* c = b.CreateURem(plane, kb.index(C));
    llvm::Value* batchBase = b.CreateMul(b.CreateSub(plane, c), kb.index(count));
    llvm::Value* lo = kb.maxValue(b.CreateSub(c, kb.index(before)), kb.index(0));
    llvm::Value* hi = kb.minValue(b.CreateAdd(c, kb.index(after + 1)), kb.index(C));
    llvm::Value* planeBase = b.CreateMul(plane, kb.index(count));
    kb.forRange(0, count, [&](llvm::Value* p) {
      b.CreateStore(kb.f32(0.0f), sumSlot);
      kb.forRange(lo, hi, [&](llvm::Value* k) {
        llvm::Value* x = kb.load(
            0, f32, b.CreateAdd(batchBase, b.CreateAdd(b.CreateMul(k, kb.index(count)), p)));
        b.CreateStore(b.CreateFAdd(b.CreateLoad(floatTy, sumSlot), b.CreateFMul(x, x)), sumSlot);
      });
      llvm::Value* base = b.CreateFAdd(kb.f32(d.lrnBias),
                                       b.CreateFMul(kb.f32(scale), b.CreateLoad(floatTy, sumSlot)));
      // base ** beta = exp(beta * log(base)); base >= bias > 0.
      llvm::Value* denominator = emitExp(kb, b.CreateFMul(kb.f32(d.beta), emitLog(kb, base)));
      llvm::Value* at = b.CreateAdd(planeBase, p);
      kb.store(kb.outputBinding(), f32, at, b.CreateFDiv(kb.load(0, f32, at), denominator));
    });
  });
  return workgroupsFor(xs[0] * C, count * d.lrnSize);
}

}  // namespace kiln::codegen::detail
