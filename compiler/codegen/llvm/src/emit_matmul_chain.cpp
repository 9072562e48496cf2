// Two fused matrix products (an MLP head: Gemm -> activation -> Gemm, KernelDesc::tailB): each
// workgroup item is one row m. The first product's row H[m, :] (N1 values) is accumulated in a
// stack buffer, scaled, biased and passed through the epilogue chain there, then multiplied by
// the second weights into the output row. The hidden row never reaches memory.
// On targets with vector registers both products are register tiles (matmul_tiles.h) and a
// work item is a block of rows (the first product's tile height, its hidden rows at most
// 8 KiB): the first product's tiles (reading its weights in column panels when the packer
// packed them, KernelDesc::bPanel) go into the block's buffer with the scale, bias and
// epilogue applied to the accumulators, so its weights stream once per block; then each hidden
// row is multiplied by the second weights into its output row.
#include <algorithm>

#include "emitters.h"
#include "fused_epilogue.h"
#include "kernel_builder.h"
#include "kiln/codegen/matmul_pack.h"
#include "matmul_tiles.h"

namespace kiln::codegen::detail {
namespace {

// One row of a product as batch-1 tiles: for each column tile, the tile's vectors go through
// finish(vector, valid, column) and are stored at out[outStart + column].
void emitRowProduct(
    KernelBuilder& kb, const TilePlan& plan, const MatOperand& a, const MatOperand& bm, int64_t N,
    int64_t K, llvm::Value* outPtr, llvm::Value* outStart,
    const std::function<llvm::Value*(llvm::Value*, unsigned, llvm::Value*)>& finish) {
  llvm::IRBuilder<>& b = kb.b();
  kb.forRange(0, tileCount(N, plan.nr), [&](llvm::Value* nTile) {
    forTileSizes(kb, plan, 1, N, kb.index(0), nTile,
                 [&](llvm::Value* m0, llvm::Value* n0, int64_t rows, int64_t cols) {
                   TileRows tile = accumulateTile(kb, plan, a, bm, m0, n0, rows, cols, K);
                   for (const TileVector& run : tile[0]) {
                     llvm::Value* column = b.CreateAdd(n0, kb.index(run.column));
                     llvm::Value* v = finish(run.value, run.valid, column);
                     storeLanes(kb, outPtr, b.CreateAdd(outStart, column), v, run.valid);
                   }
                 });
  });
}

}  // namespace

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
  auto hiddenAt = [&](llvm::Value* n) { return b.CreateInBoundsGEP(floatTy, hidden, n); };
  FusedEpilogue epilogue(kb);

  // A work item is a block of rows: the first product as tiles of the plan's height into a
  // buffer of the block's hidden rows (at most kMlpHiddenBlockFloats, so the stack stays small),
  // its weights streamed once per block; then each hidden row times the second weights.
  const TileUnit unit = tileUnit(kb.target());
  const unsigned lanes = unit.lanes;
  const int64_t blockCap = std::max<int64_t>(1, std::min<int64_t>(M, kMlpHiddenBlockFloats / N1));
  std::optional<TilePlan> first =
      d.bPanel > 0 ? std::optional<TilePlan>(panelTilePlan(d, kb.target()))
                   : planMatMulTiles(blockCap, N1, K, aM, aK, bK, bN, lanes, unit.registers);
  std::optional<TilePlan> second =
      planMatMulTiles(1, N2, N1, N1, 1, tK, tN, lanes, unit.registers);
  if (first && second) {
    const int64_t blockRows = first->mr, blocks = tileCount(M, blockRows);
    llvm::Value* block =
        kb.local(llvm::ArrayType::get(floatTy, uint64_t(blockRows * N1)), "hidden.block");
    const int64_t biasStep = hasBias ? biasStrides.back() : 0;
    const int64_t tailStep = d.tailBias >= 0 ? tailBiasStrides.back() : 0;
    kb.forWorkgroupShare(blocks, [&](llvm::Value* mTile) {
      MatOperand a{kb.bindingPointer(0), kb.index(0), aM, aK};
      MatOperand w{kb.bindingPointer(1), kb.index(0), bK, bN};
      kb.forRange(0, tileCount(N1, first->nr), [&](llvm::Value* nTile) {
        forTileSizes(
            kb, *first, M, N1, mTile, nTile,
            [&](llvm::Value* m0, llvm::Value* n0, int64_t rows, int64_t cols) {
              TileRows tile = accumulateTile(kb, *first, a, w, m0, n0, rows, cols, K);
              for (int64_t i = 0; i < rows; ++i) {
                llvm::Value* m = b.CreateAdd(m0, kb.index(i));
                FusedEpilogue::Row row;
                if (!epilogue.empty()) row = epilogue.row(b.CreateMul(m, kb.index(N1)));
                llvm::Value* biasRow =
                    hasBias ? kb.linearize({m, kb.index(0)}, biasStrides) : nullptr;
                for (const TileVector& run : tile[size_t(i)]) {
                  llvm::Value* column = b.CreateAdd(n0, kb.index(run.column));
                  llvm::Value* at =
                      hasBias ? b.CreateAdd(biasRow, b.CreateMul(column, kb.index(biasStep)))
                              : nullptr;
                  llvm::Value* v = scaleAndBias(kb, run.value, run.valid, d.alpha, hasBias ? 2 : -1,
                                                at, biasStep, d.beta);
                  v = epilogueVector(kb, epilogue, v, run.valid, row, column);
                  storeLanes(kb, block, b.CreateAdd(kb.index(i * N1), column), v, run.valid);
                }
              }
            });
      });
      // The second product, one hidden row of the block at a time.
      llvm::Value* firstRow = b.CreateMul(mTile, kb.index(blockRows));
      llvm::Value* rowsHere = kb.minValue(kb.index(blockRows), b.CreateSub(kb.index(M), firstRow));
      MatOperand w2{kb.bindingPointer(tailB), kb.index(0), tK, tN};
      kb.forRange(kb.index(0), rowsHere, [&](llvm::Value* i) {
        llvm::Value* m = b.CreateAdd(firstRow, i);
        MatOperand h{block, b.CreateMul(i, kb.index(N1)), N1, 1};
        llvm::Value* tailRow =
            d.tailBias >= 0 ? kb.linearize({m, kb.index(0)}, tailBiasStrides) : nullptr;
        emitRowProduct(
            kb, *second, h, w2, N2, N1, kb.bindingPointer(out), b.CreateMul(m, kb.index(N2)),
            [&](llvm::Value* v, unsigned valid, llvm::Value* column) {
              llvm::Value* at = d.tailBias >= 0
                                    ? b.CreateAdd(tailRow, b.CreateMul(column, kb.index(tailStep)))
                                    : nullptr;
              return scaleAndBias(kb, v, valid, d.tailAlpha, d.tailBias, at, tailStep, d.tailBeta);
            });
      });
    });
    return workgroupsFor(blocks, blockRows * N1 * (K + N2));
  }

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
    kb.forRange(0, N2,
                [&](llvm::Value* n) { kb.store(out, f32, b.CreateAdd(outRow, n), kb.f32(0.0f)); });
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
          llvm::Value* c =
              kb.load(unsigned(d.tailBias), f32, kb.linearize({m, n}, tailBiasStrides));
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
