// Matrix products: ONNX MatMul (batched, numpy broadcasting of the batch axes) and Gemm
// (transposes, alpha, beta, a bias C broadcast to the result), with a fused activation.
// Targets with vector registers: register tiles (matmul_tiles.h), reading B in the column
// panels the packer put a constant B in (KernelDesc::bPanel) or in place. A work item is one tile
// (batch, column block, row block; the row blocks innermost, so consecutive items reuse one
// block of B); scale, bias and the fused epilogue are applied to the accumulators before their
// only store. Packed products with a long K run in K blocks instead (a work item: one column
// panel over a group of row tiles, partial sums through the output; see kBlocked).
// Products neither tile form covers (Gemm with transA and transB, B unpacked) and targets
// without vectors (microcontrollers: code size) keep the plain form: each workgroup item is
// one output row, accumulated in place as row += A[m, k] * B[k, :] (with an FPU: 4 columns at
// a time in registers over K).
#include <algorithm>

#include "emitters.h"
#include "fused_epilogue.h"
#include "kernel_builder.h"
#include "matmul_tiles.h"

namespace kiln::codegen::detail {
namespace {

// A product's geometry as the tiled path sees it: the batch axes with A's and B's stride per
// batch axis (0: broadcast), the bias C's strides over (batch..., m, n), and the strides of A
// over (m, k) and of B over (k, n).
struct ProductShape {
  int64_t M = 0, N = 0, K = 0;
  std::vector<int64_t> batchShape, aBatch, bBatch, cStrides;
  int64_t aM = 0, aK = 0, bK = 0, bN = 0;
};

// Batch axes along which B is broadcast and A is dense become rows ([b, M, K] x [K, N] is one
// (b*M) x K x N product: taller tiles, fewer edges), if the bias does not vary along them.
void foldBatchIntoRows(ProductShape& p) {
  if (p.batchShape.empty() || p.aK != 1) return;
  for (int64_t s : p.bBatch) {
    if (s != 0) return;
  }
  int64_t expect = p.M * p.K, batches = 1;
  for (size_t i = p.batchShape.size(); i-- > 0;) {
    if (p.batchShape[i] == 1) continue;
    if (p.aBatch[i] != expect) return;
    expect *= p.batchShape[i];
    batches *= p.batchShape[i];
  }
  for (size_t i = 0; i + 1 < p.cStrides.size(); ++i) {
    if (p.cStrides[i] != 0) return;
  }
  p.M *= batches;
  p.batchShape.clear();
  p.aBatch.clear();
  p.bBatch.clear();
  if (!p.cStrides.empty()) p.cStrides = {0, p.cStrides.back()};
}

// K-blocked products (packed B): blocks of this many steps, so a block of a panel (16 x 256
// floats, 16 KiB on AVX2) stays in L1 while every row tile runs over it.
constexpr int64_t kKBlock = 256;

// Output columns the plain form keeps in registers on microcontrollers with an FPU.
constexpr int64_t kFpuColumns = 4;

// Whether a product runs in K blocks: packed B, several row tiles to share each block, a K of
// several blocks, and no operand sharing the output's bytes (partial sums go through it).
bool kBlocked(const TilePlan& plan, const KernelDesc& d, int64_t M, int64_t K) {
  return plan.packedB && !d.bindingsMayAlias && M > plan.mr && K >= 3 * kKBlock;
}

}  // namespace

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
  // A microcontroller with an FPU but no vector registers: the plain form keeps kFpuColumns
  // output columns in registers over K (one load of A serves them all) instead of adding
  // every product to the output in memory. (Helium takes the register tiles: tileUnit.)
  const TileUnit unit = tileUnit(kb.target());
  const bool scalarFpu = unit.lanes == 0 && !kb.target().softFloat && !kb.target().smallestCode;
  std::vector<llvm::Value*> acc;
  if (scalarFpu)
    for (int64_t j = 0; j < kFpuColumns; ++j) acc.push_back(kb.local(b.getFloatTy(), "acc"));

  ProductShape p{M, N, K, batchShape, aBatch, bBatch, cStrides, aM, aK, bK, bN};
  foldBatchIntoRows(p);
  std::optional<TilePlan> plan =
      d.bPanel > 0 ? std::optional<TilePlan>(panelTilePlan(d, kb.target()))
                   : planMatMulTiles(p.M, N, K, aM, aK, bK, bN, unit.lanes, unit.registers);
  if (plan) {
    int64_t tileBatches = 1;
    for (int64_t e : p.batchShape) tileBatches *= e;
    const int64_t mTiles = tileCount(p.M, plan->mr), nTiles = tileCount(N, plan->nr);
    const int64_t items = tileBatches * nTiles * mTiles;
    const int64_t biasStep = hasBias ? cStrides.back() : 0;
    // Scale, bias and epilogue on a finished tile, stored to the output.
    auto finishTile = [&](const TileRows& tile, llvm::Value* m0, llvm::Value* n0,
                          int64_t tileRows, llvm::Value* batch,
                          const std::vector<llvm::Value*>& batchCoords) {
      for (int64_t i = 0; i < tileRows; ++i) {
        llvm::Value* m = b.CreateAdd(m0, kb.index(i));
        llvm::Value* rowStart =
            b.CreateMul(b.CreateAdd(b.CreateMul(batch, kb.index(p.M)), m), kb.index(N));
        llvm::Value* biasRow = nullptr;
        if (hasBias) {
          std::vector<llvm::Value*> coords = batchCoords;
          coords.push_back(m);
          coords.push_back(kb.index(0));
          biasRow = kb.linearize(coords, p.cStrides);
        }
        FusedEpilogue::Row epilogueRow;
        if (!epilogue.empty()) epilogueRow = epilogue.row(rowStart);
        for (const TileVector& run : tile[size_t(i)]) {
          llvm::Value* column = b.CreateAdd(n0, kb.index(run.column));
          llvm::Value* v = run.value;
          llvm::Value* biasAt =
              hasBias ? b.CreateAdd(biasRow, b.CreateMul(column, kb.index(biasStep))) : nullptr;
          v = scaleAndBias(kb, v, run.valid, d.alpha, hasBias ? 2 : -1, biasAt, biasStep, d.beta);
          v = epilogueVector(kb, epilogue, v, run.valid, epilogueRow, column);
          storeLanes(kb, kb.bindingPointer(out), b.CreateAdd(rowStart, column), v, run.valid);
        }
      }
    };
    if (kBlocked(*plan, d, p.M, K)) {
      // K in blocks of kKBlock: a work item is one column panel (of one batch) over a group
      // of row tiles (all of them, unless there are too few panels to share among threads);
      // per K block every row tile of the group runs over the block's panel rows, which stay
      // in L1, its partial sums going through the output (the first block starts from zero,
      // the last applies the scale, bias and epilogue).
      const int64_t panels = tileBatches * nTiles;
      const int64_t perGroup = tileCount(mTiles, std::min(mTiles, tileCount(16, panels)));
      const int64_t groups = tileCount(mTiles, perGroup), items = panels * groups;
      const int64_t blocks = tileCount(K, kKBlock), lastCount = K - (blocks - 1) * kKBlock;
      kb.forWorkgroupShare(items, [&](llvm::Value* item) {
        llvm::Value* group = b.CreateURem(item, kb.index(groups));
        llvm::Value* panel = b.CreateUDiv(item, kb.index(groups));
        llvm::Value* nTile = b.CreateURem(panel, kb.index(nTiles));
        llvm::Value* batch = b.CreateUDiv(panel, kb.index(nTiles));
        llvm::Value* mBegin = b.CreateMul(group, kb.index(perGroup));
        llvm::Value* mEnd = kb.minValue(b.CreateAdd(mBegin, kb.index(perGroup)), kb.index(mTiles));
        std::vector<llvm::Value*> batchCoords =
            p.batchShape.empty() ? std::vector<llvm::Value*>{} : kb.decompose(batch, p.batchShape);
        MatOperand a{kb.bindingPointer(0), kb.linearize(batchCoords, p.aBatch), aM, aK};
        MatOperand bm{kb.bindingPointer(1), kb.index(0), bK, bN};
        llvm::Value* outPtr = kb.bindingPointer(out);
        // One K block over every row tile: `first` starts from zero, `last` finishes.
        auto block = [&](llvm::Value* kStart, int64_t count, bool first, bool last) {
          kb.forRange(mBegin, mEnd, [&](llvm::Value* mTile) {
            forTileSizes(kb, *plan, p.M, N, mTile, nTile,
                         [&](llvm::Value* m0, llvm::Value* n0, int64_t tileRows, int64_t tileCols) {
              auto at = [&](int64_t i, int64_t v) {
                llvm::Value* m = b.CreateAdd(b.CreateMul(batch, kb.index(p.M)),
                                             b.CreateAdd(m0, kb.index(i)));
                return b.CreateAdd(b.CreateMul(m, kb.index(N)),
                                   b.CreateAdd(n0, kb.index(v * plan->lanes)));
              };
              auto valid = [&](int64_t v) {
                return unsigned(std::min<int64_t>(plan->lanes, tileCols - v * plan->lanes));
              };
              KSlice slice{kStart, count, nullptr};
              if (!first) {
                slice.init = [&](int64_t i, int64_t v) {
                  return loadLanes(kb, outPtr, at(i, v), plan->lanes, valid(v));
                };
              }
              TileRows tile =
                  accumulateTileSlice(kb, *plan, a, bm, m0, n0, tileRows, tileCols, K, slice);
              if (last) return finishTile(tile, m0, n0, tileRows, batch, batchCoords);
              for (int64_t i = 0; i < tileRows; ++i)
                for (size_t v = 0; v < tile[size_t(i)].size(); ++v)
                  storeLanes(kb, outPtr, at(i, int64_t(v)), tile[size_t(i)][v].value,
                             tile[size_t(i)][v].valid);
            });
          }, /*unroll=*/false);
        };
        block(kb.index(0), kKBlock, true, false);
        if (blocks > 2) {
          kb.forRange(kb.index(1), kb.index(blocks - 1), [&](llvm::Value* k) {
            block(b.CreateMul(k, kb.index(kKBlock)), kKBlock, false, false);
          }, /*unroll=*/false);
        }
        block(kb.index((blocks - 1) * kKBlock), lastCount, false, true);
      });
      return workgroupsFor(items, perGroup * plan->mr * plan->nr * K);
    }
    kb.forWorkgroupShare(items, [&](llvm::Value* item) {
      llvm::Value* mTile = b.CreateURem(item, kb.index(mTiles));
      llvm::Value* rest = b.CreateUDiv(item, kb.index(mTiles));
      llvm::Value* nTile = b.CreateURem(rest, kb.index(nTiles));
      llvm::Value* batch = b.CreateUDiv(rest, kb.index(nTiles));
      std::vector<llvm::Value*> batchCoords =
          p.batchShape.empty() ? std::vector<llvm::Value*>{} : kb.decompose(batch, p.batchShape);
      MatOperand a{kb.bindingPointer(0), kb.linearize(batchCoords, p.aBatch), aM, aK};
      MatOperand bm{kb.bindingPointer(1), kb.linearize(batchCoords, p.bBatch), bK, bN};
      forTileSizes(
          kb, *plan, p.M, N, mTile, nTile,
          [&](llvm::Value* m0, llvm::Value* n0, int64_t tileRows, int64_t tileCols) {
            TileRows tile = accumulateTile(kb, *plan, a, bm, m0, n0, tileRows, tileCols, K);
            finishTile(tile, m0, n0, tileRows, batch, batchCoords);
          });
    });
    return workgroupsFor(items, plan->mr * plan->nr * K);
  }
  kb.forWorkgroupShare(rows, [&](llvm::Value* row) {
    llvm::Value* batch = b.CreateUDiv(row, kb.index(M));
    llvm::Value* m = b.CreateURem(row, kb.index(M));
    std::vector<llvm::Value*> batchCoords =
        batchShape.empty() ? std::vector<llvm::Value*>{} : kb.decompose(batch, batchShape);
    llvm::Value* aBase =
        b.CreateAdd(kb.linearize(batchCoords, aBatch), b.CreateMul(m, kb.index(aM)));
    llvm::Value* bBase = kb.linearize(batchCoords, bBatch);
    llvm::Value* rowBase = b.CreateMul(row, kb.index(N));
    if (scalarFpu) {
      // Columns [n0, n0 + width) in registers over the whole of K, then stored.
      auto columns = [&](llvm::Value* n0, int64_t width) {
        for (int64_t j = 0; j < width; ++j) b.CreateStore(kb.f32(0.0f), acc[size_t(j)]);
        llvm::Value* bColumns = b.CreateAdd(bBase, b.CreateMul(n0, kb.index(bN)));
        kb.forRange(0, K, [&](llvm::Value* k) {
          llvm::Value* a = kb.load(0, f32, b.CreateAdd(aBase, b.CreateMul(k, kb.index(aK))));
          llvm::Value* bAt = b.CreateAdd(bColumns, b.CreateMul(k, kb.index(bK)));
          for (int64_t j = 0; j < width; ++j) {
            llvm::Value* bValue = kb.load(1, f32, b.CreateAdd(bAt, kb.index(j * bN)));
            llvm::Value* slot = acc[size_t(j)];
            // fmuladd: fused where LLVM finds it faster (Cortex-M7's VFMA, RV32F's fmadd.s).
            b.CreateStore(b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {b.getFloatTy()},
                                            {a, bValue, b.CreateLoad(b.getFloatTy(), slot)}),
                          slot);
          }
        });
        for (int64_t j = 0; j < width; ++j) {
          kb.store(out, f32, b.CreateAdd(rowBase, b.CreateAdd(n0, kb.index(j))),
                   b.CreateLoad(b.getFloatTy(), acc[size_t(j)]));
        }
      };
      kb.forRange(0, N / kFpuColumns, [&](llvm::Value* block) {
        columns(b.CreateMul(block, kb.index(kFpuColumns)), kFpuColumns);
      });
      kb.forRange(N / kFpuColumns * kFpuColumns, N, [&](llvm::Value* n) { columns(n, 1); });
    } else {
      kb.forRange(
          0, N, [&](llvm::Value* n) { kb.store(out, f32, b.CreateAdd(rowBase, n), kb.f32(0.0f)); });
      kb.forRange(0, K, [&](llvm::Value* k) {
        llvm::Value* a = kb.load(0, f32, b.CreateAdd(aBase, b.CreateMul(k, kb.index(aK))));
        llvm::Value* bRow = b.CreateAdd(bBase, b.CreateMul(k, kb.index(bK)));
        kb.forRange(0, N, [&](llvm::Value* n) {
          llvm::Value* bValue = kb.load(1, f32, b.CreateAdd(bRow, b.CreateMul(n, kb.index(bN))));
          llvm::Value* at = b.CreateAdd(rowBase, n);
          kb.store(out, f32, at, b.CreateFAdd(kb.load(out, f32, at), b.CreateFMul(a, bValue)));
        });
      });
    }
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
