// Two fused matrix products (an MLP head: Gemm -> activation -> Gemm, KernelDesc::tailB): each
// workgroup item is one row m. The first product's row H[m, :] (N1 values) is accumulated in a
// stack buffer, scaled, biased and passed through the epilogue chain there, then multiplied by
// the second weights into the output row. The hidden row never reaches memory.
#include "emitters.h"
#include "fused_epilogue.h"
#include "kernel_builder.h"

namespace kiln::codegen::detail {

uint32_t emitMatMulChain(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const ElemType f32 = ElemType::F32;
  const std::vector<int64_t>& as = d.inputs[0].shape;  // [M, K] (or [K, M] with transA)
  const std::vector<int64_t>& bs = d.inputs[1].shape;  // [K, N1] (or [N1, K] with transB)
  const int64_t M = d.transA ? as[1] : as[0], K = d.transA ? as[0] : as[1];
  const int64_t N1 = d.transB ? bs[0] : bs[1];
  const int64_t N2 = d.output.shape.back();
  const bool hasBias = d.inputs.size() - d.epilogue.inputCount > 2;
  const unsigned out = kb.outputBinding();
  const unsigned tailB = unsigned(d.tailB);
  const std::vector<int64_t> hiddenShape = {M, N1}, outShape = {M, N2};
  std::vector<int64_t> biasStrides, tailBiasStrides;
  if (hasBias) biasStrides = broadcastStrides(d.inputs[2].shape, hiddenShape);
  if (d.tailBias >= 0) tailBiasStrides = broadcastStrides(d.inputs[d.tailBias].shape, outShape);
  const int64_t aM = d.transA ? 1 : K, aK = d.transA ? M : 1;
  const int64_t bK = d.transB ? 1 : N1, bN = d.transB ? K : 1;
  const int64_t tK = d.tailTransB ? 1 : N2, tN = d.tailTransB ? N1 : 1;

  llvm::Type* floatTy = b.getFloatTy();
  llvm::Value* hidden = kb.local(llvm::ArrayType::get(floatTy, uint64_t(N1)), "hidden");
  auto hiddenAt = [&](llvm::Value* n) {
    return b.CreateInBoundsGEP(floatTy, hidden, n);
  };
  FusedEpilogue epilogue(kb);

  kb.forWorkgroupShare(M, [&](llvm::Value* m) {
    kb.forRange(0, N1, [&](llvm::Value* n) { b.CreateStore(kb.f32(0.0f), hiddenAt(n)); });
    llvm::Value* aRow = b.CreateMul(m, kb.index(aM));
    kb.forRange(0, K, [&](llvm::Value* k) {
      llvm::Value* a = kb.load(0, f32, b.CreateAdd(aRow, b.CreateMul(k, kb.index(aK))));
      llvm::Value* bRow = b.CreateMul(k, kb.index(bK));
      kb.forRange(0, N1, [&](llvm::Value* n) {
        llvm::Value* w = kb.load(1, f32, b.CreateAdd(bRow, b.CreateMul(n, kb.index(bN))));
        llvm::Value* at = hiddenAt(n);
        b.CreateStore(b.CreateFAdd(b.CreateLoad(floatTy, at), b.CreateFMul(a, w)), at);
      });
    });
    // The first layer's scale, bias and epilogue chain, in the buffer.
    epilogue.beginRow(b.CreateMul(m, kb.index(N1)));
    kb.forRange(0, N1, [&](llvm::Value* n) {
      llvm::Value* at = hiddenAt(n);
      llvm::Value* v = b.CreateLoad(floatTy, at);
      if (d.alpha != 1.0f) v = b.CreateFMul(v, kb.f32(d.alpha));
      if (hasBias) {
        llvm::Value* c = kb.load(2, f32, kb.linearize({m, n}, biasStrides));
        if (d.beta != 1.0f) c = b.CreateFMul(c, kb.f32(d.beta));
        v = b.CreateFAdd(v, c);
      }
      b.CreateStore(epilogue.apply(v, n), at);
    });
    // The second product into the output row.
    llvm::Value* outRow = b.CreateMul(m, kb.index(N2));
    kb.forRange(0, N2, [&](llvm::Value* n) {
      kb.store(out, f32, b.CreateAdd(outRow, n), kb.f32(0.0f));
    });
    kb.forRange(0, N1, [&](llvm::Value* k) {
      llvm::Value* h = b.CreateLoad(floatTy, hiddenAt(k));
      llvm::Value* wRow = b.CreateMul(k, kb.index(tK));
      kb.forRange(0, N2, [&](llvm::Value* n) {
        llvm::Value* w = kb.load(tailB, f32, b.CreateAdd(wRow, b.CreateMul(n, kb.index(tN))));
        llvm::Value* at = b.CreateAdd(outRow, n);
        kb.store(out, f32, at, b.CreateFAdd(kb.load(out, f32, at), b.CreateFMul(h, w)));
      });
    });
    if (d.tailAlpha != 1.0f || d.tailBias >= 0) {
      kb.forRange(0, N2, [&](llvm::Value* n) {
        llvm::Value* at = b.CreateAdd(outRow, n);
        llvm::Value* v = kb.load(out, f32, at);
        if (d.tailAlpha != 1.0f) v = b.CreateFMul(v, kb.f32(d.tailAlpha));
        if (d.tailBias >= 0) {
          llvm::Value* c = kb.load(unsigned(d.tailBias), f32, kb.linearize({m, n}, tailBiasStrides));
          if (d.tailBeta != 1.0f) c = b.CreateFMul(c, kb.f32(d.tailBeta));
          v = b.CreateFAdd(v, c);
        }
        kb.store(out, f32, at, v);
      });
    }
  });
  return workgroupsFor(M, N1 * (K + N2));
}

}  // namespace kiln::codegen::detail
