// Matrix products: ONNX MatMul (batched, numpy broadcasting of the batch axes) and Gemm
// (transposes, alpha, beta, a bias C broadcast to the result), with a fused activation.
// Plain form: each workgroup item is one output row; the row is accumulated in place as
// row += A[m, k] * B[k, :], which vectorises over the columns. Tiling comes later.
#include "emitters.h"
#include "fused_epilogue.h"
#include "kernel_builder.h"

namespace kiln::codegen::detail {

uint32_t emitMatMul(KernelBuilder& kb) {
  if (kb.desc().tailB >= 0) return emitMatMulChain(kb);
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const ElemType f32 = ElemType::F32;
  const std::vector<int64_t>& as = d.inputs[0].shape;
  const std::vector<int64_t>& bs = d.inputs[1].shape;
  const std::vector<int64_t>& ys = d.output.shape;
  const size_t rank = ys.size();
  const int64_t M = ys[rank - 2], N = ys[rank - 1];
  const int64_t K = d.transA ? as[as.size() - 2] : as.back();
  const bool hasBias = d.inputs.size() - d.epilogue.inputCount > 2;
  const unsigned out = kb.outputBinding();

  // Batch axes of the output, and each operand's stride per batch axis (0 = broadcast).
  std::vector<int64_t> batchShape(ys.begin(), ys.end() - 2);
  auto batchStrides = [&](const std::vector<int64_t>& shape) {
    std::vector<int64_t> batch(shape.begin(), shape.end() - 2);
    std::vector<int64_t> strides = broadcastStrides(batch, batchShape);
    for (int64_t& s : strides) s *= shape[shape.size() - 2] * shape.back();
    return strides;
  };
  std::vector<int64_t> aBatch = batchStrides(as), bBatch = batchStrides(bs);
  // Strides of A over (m, k) and of B over (k, n).
  const int64_t aM = d.transA ? 1 : K, aK = d.transA ? M : 1;
  const int64_t bK = d.transB ? 1 : N, bN = d.transB ? K : 1;
  // The bias, broadcast to the full output shape.
  std::vector<int64_t> cStrides;
  if (hasBias) cStrides = broadcastStrides(d.inputs[2].shape, ys);

  int64_t batches = 1;
  for (int64_t e : batchShape) batches *= e;
  const int64_t rows = batches * M;
  FusedEpilogue epilogue(kb);
  kb.forWorkgroupShare(rows, [&](llvm::Value* row) {
    llvm::Value* batch = b.CreateUDiv(row, kb.index(M));
    llvm::Value* m = b.CreateURem(row, kb.index(M));
    std::vector<llvm::Value*> batchCoords =
        batchShape.empty() ? std::vector<llvm::Value*>{} : kb.decompose(batch, batchShape);
    llvm::Value* aBase =
        b.CreateAdd(kb.linearize(batchCoords, aBatch), b.CreateMul(m, kb.index(aM)));
    llvm::Value* bBase = kb.linearize(batchCoords, bBatch);
    llvm::Value* rowBase = b.CreateMul(row, kb.index(N));
    kb.forRange(0, N,
                [&](llvm::Value* n) { kb.store(out, f32, b.CreateAdd(rowBase, n), kb.f32(0.0f)); });
    kb.forRange(0, K, [&](llvm::Value* k) {
      llvm::Value* a = kb.load(0, f32, b.CreateAdd(aBase, b.CreateMul(k, kb.index(aK))));
      llvm::Value* bRow = b.CreateAdd(bBase, b.CreateMul(k, kb.index(bK)));
      kb.forRange(0, N, [&](llvm::Value* n) {
        llvm::Value* bValue = kb.load(1, f32, b.CreateAdd(bRow, b.CreateMul(n, kb.index(bN))));
        llvm::Value* at = b.CreateAdd(rowBase, n);
        kb.store(out, f32, at, b.CreateFAdd(kb.load(out, f32, at), b.CreateFMul(a, bValue)));
      });
    });
    bool scaled = d.alpha != 1.0f;
    if (scaled || hasBias || !epilogue.empty()) {
      epilogue.beginRow(rowBase);
      std::vector<llvm::Value*> coords = batchCoords;
      coords.push_back(m);
      kb.forRange(0, N, [&](llvm::Value* n) {
        llvm::Value* at = b.CreateAdd(rowBase, n);
        llvm::Value* v = kb.load(out, f32, at);
        if (scaled) v = b.CreateFMul(v, kb.f32(d.alpha));
        if (hasBias) {
          std::vector<llvm::Value*> full = coords;
          full.push_back(n);
          llvm::Value* c = kb.load(2, f32, kb.linearize(full, cStrides));
          if (d.beta != 1.0f) c = b.CreateFMul(c, kb.f32(d.beta));
          v = b.CreateFAdd(v, c);
        }
        kb.store(out, f32, at, epilogue.apply(v, n));
      });
    }
  });
  return workgroupsFor(rows, N * K);
}

}  // namespace kiln::codegen::detail
