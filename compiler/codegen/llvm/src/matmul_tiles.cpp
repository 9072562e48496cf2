// Register tiles for matrix products (see matmul_tiles.h).
#include "matmul_tiles.h"

#include <algorithm>
#include <cassert>
#include <llvm/IR/Intrinsics.h>

#include "emit_gemm_microkernel.h"
#include "kernel_builder.h"
#include "kiln/codegen/matmul_pack.h"

namespace kiln::codegen::detail {

std::optional<TilePlan> planMatMulTiles(int64_t M, int64_t N, int64_t K, int64_t aStrideM,
                                        int64_t aStrideK, int64_t bStrideK, int64_t bStrideN,
                                        unsigned lanes, unsigned registers) {
  (void)aStrideM;
  if (lanes < 4 || M < 1 || N < 1 || K < 1) return std::nullopt;
  TilePlan plan;
  plan.lanes = lanes;
  const bool few = registers < 16;  // Helium's 8
  const bool dot = aStrideK == 1 && bStrideK == 1;
  const bool broadcast = bStrideN == 1;
  if (dot && (!broadcast || N < int64_t(lanes))) {
    // MR x NR dot products of V partial sums each: 8 accumulators either way, enough to
    // cover the multiply-add latency; a batch-1 product streams 8 weight rows at once. With 8
    // registers 4 accumulators, A's vector and a weight vector.
    plan.form = TileForm::Dot;
    plan.mr = M == 1 || few ? 1 : 2;
    plan.nr = M == 1 && !few ? 8 : 4;
    return plan;
  }
  if (!broadcast) return std::nullopt;
  // MR x NV vectors of accumulators, NV vectors of B and one broadcast of A in registers:
  // 6 x 2 (15 of 16 ymm registers) for tall products, 1-2 x 4 for short ones; with 8
  // registers 2 x 2.
  plan.form = TileForm::Broadcast;
  plan.mr = few ? std::min<int64_t>(M, 2) : M <= 2 ? M : std::min<int64_t>(M, 6);
  plan.nr = (few ? 2 : M <= 2 ? 4 : 2) * int64_t(lanes);
  return plan;
}

TilePlan panelTilePlan(const KernelDesc& desc, const EmitTarget& target) {
  MatMulPanelTile tile = matMulPanelTile(desc, {target.vectorLanes, target.vectorRegisters});
  assert(tile.applies() && tile.nr == desc.bPanel && "B packed for another tile");
  TilePlan plan;
  plan.form = TileForm::Broadcast;
  plan.mr = tile.mr;
  plan.nr = tile.nr;
  plan.lanes = target.vectorLanes;
  plan.packedB = true;
  return plan;
}

int64_t tileCount(int64_t extent, int64_t tile) { return (extent + tile - 1) / tile; }

namespace {

llvm::Value* elementPointer(KernelBuilder& kb, llvm::Value* ptr, llvm::Value* index,
                            bool inBounds) {
  llvm::IRBuilder<>& b = kb.b();
  return inBounds ? b.CreateInBoundsGEP(b.getFloatTy(), ptr, index)
                  : b.CreateGEP(b.getFloatTy(), ptr, index);
}

// Accumulator slots (promoted to registers by the optimiser), zeroed.
std::vector<std::vector<llvm::Value*>> zeroSlots(KernelBuilder& kb, int64_t rows, int64_t count,
                                                 unsigned lanes) {
  llvm::IRBuilder<>& b = kb.b();
  auto* vecTy = llvm::FixedVectorType::get(b.getFloatTy(), lanes);
  std::vector<std::vector<llvm::Value*>> slots(static_cast<size_t>(rows));
  for (auto& row : slots) {
    for (int64_t j = 0; j < count; ++j) {
      llvm::Value* slot = kb.local(vecTy, "acc");
      b.CreateStore(llvm::Constant::getNullValue(vecTy), slot);
      row.push_back(slot);
    }
  }
  return slots;
}

// A one-row tile has one dependency chain per vector of columns: with fewer than ~8 the
// multiply-add latency, not the loads, sets the pace (a GEMV over 24 columns: 3 chains). So
// its K is split into `splits` interleaved sums (step k into sum k % splits), each with its
// own accumulators, added at the end: ~8 chains, at most 12 accumulators.
int64_t rowSplits(int64_t vectors, int64_t K) {
  int64_t splits = std::min((8 + vectors - 1) / vectors, 12 / std::max<int64_t>(vectors, 1));
  return std::clamp<int64_t>(splits, 1, K);
}

// The one-row tile's K loop in `splits` interleaved sums (see rowSplits), into acc[0][*].
void splitRowSums(KernelBuilder& kb, const MicroTile& tile, const Accumulators& acc, int64_t K,
                  int64_t splits, const LoadA& loadA, const LoadB& loadB) {
  llvm::IRBuilder<>& b = kb.b();
  auto* vecTy = llvm::FixedVectorType::get(b.getFloatTy(), tile.lanes);
  const size_t vectors = size_t(tile.nrVectors);
  // Sum 0 lives in acc[0]; the others in their own slots, zeroed.
  std::vector<std::vector<llvm::Value*>> slots(static_cast<size_t>(splits));
  slots[0] = acc[0];
  for (int64_t s = 1; s < splits; ++s) {
    for (size_t v = 0; v < vectors; ++v) {
      slots[size_t(s)].push_back(kb.local(vecTy, "acc.split"));
      b.CreateStore(llvm::Constant::getNullValue(vecTy), slots[size_t(s)][v]);
    }
  }
  // Steps first, first + 1, ..., first + count - 1 into sums 0 .. count - 1.
  auto run = [&](llvm::Value* first, int64_t count) {
    for (int64_t s = 0; s < count; ++s) {
      llvm::Value* k = s == 0 ? first : b.CreateAdd(first, kb.index(s), "", true, true);
      llvm::Value* a = b.CreateVectorSplat(tile.lanes, loadA(k, 0));
      for (size_t v = 0; v < vectors; ++v) {
        llvm::Value* slot = slots[size_t(s)][v];
        llvm::Value* c = b.CreateLoad(vecTy, slot);
        b.CreateStore(b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {vecTy},
                                        {a, loadB(k, int64_t(v)), c}),
                      slot);
      }
    }
  };
  const int64_t loops = K / splits;
  if (loops > 0) {
    kb.forRange(
        kb.index(0), kb.index(loops),
        [&](llvm::Value* i) { run(b.CreateMul(i, kb.index(splits), "", true, true), splits); },
        /*unroll=*/false);
  }
  if (K % splits) run(kb.index(loops * splits), K % splits);
  // Pairwise sums of the splits into acc[0].
  for (size_t v = 0; v < vectors; ++v) {
    std::vector<llvm::Value*> sums;
    for (int64_t s = 0; s < splits; ++s) sums.push_back(b.CreateLoad(vecTy, slots[size_t(s)][v]));
    while (sums.size() > 1) {
      std::vector<llvm::Value*> next;
      for (size_t i = 0; i + 1 < sums.size(); i += 2)
        next.push_back(b.CreateFAdd(sums[i], sums[i + 1]));
      if (sums.size() % 2) next.push_back(sums.back());
      sums = next;
    }
    b.CreateStore(sums[0], acc[0][v]);
  }
}

// The broadcast form is the conv's GEMM microkernel (emit_gemm_microkernel.h): A(k, m) a
// scalar of A's row, B(k, v) the v-th vector of B's row k (the last one masked at a row end).
TileRows broadcastTile(KernelBuilder& kb, const TilePlan& plan, const MatOperand& a,
                       const MatOperand& bm, llvm::Value* m0, llvm::Value* n0, int64_t rows,
                       int64_t cols, int64_t K, const KSlice* slice = nullptr) {
  llvm::IRBuilder<>& b = kb.b();
  const unsigned lanes = plan.lanes;
  auto* vecTy = llvm::FixedVectorType::get(b.getFloatTy(), lanes);
  const MicroTile tile{rows, tileCount(cols, lanes), lanes};
  auto validLanes = [&](int64_t v) {
    return unsigned(std::min<int64_t>(lanes, cols - v * int64_t(lanes)));
  };
  Accumulators acc = makeAccumulators(kb, tile);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t v = 0; v < tile.nrVectors; ++v) {
      llvm::Value* start = slice && slice->init ? slice->init(i, v)
                                                : llvm::Constant::getNullValue(vecTy);
      b.CreateStore(start, acc[size_t(i)][size_t(v)]);
    }
  }
  // A K slice moves A's columns and B's rows to its first step.
  llvm::Value* kStart = slice ? slice->start : kb.index(0);
  const int64_t kCount = slice ? slice->count : K;
  std::vector<llvm::Value*> aRows;
  for (int64_t i = 0; i < rows; ++i) {
    aRows.push_back(b.CreateAdd(
        b.CreateAdd(a.offset, b.CreateMul(b.CreateAdd(m0, kb.index(i)), kb.index(a.rowStride))),
        b.CreateMul(kStart, kb.index(a.colStride))));
  }
  // Unpacked: row k of B from column n0; packed: the panel of columns n0.., rows of `cols`.
  const int64_t bRowStride = plan.packedB ? cols : bm.rowStride;
  llvm::Value* bStart = plan.packedB ? b.CreateAdd(bm.offset, b.CreateMul(n0, kb.index(K)))
                                     : b.CreateAdd(bm.offset, n0);
  bStart = b.CreateAdd(bStart, b.CreateMul(kStart, kb.index(bRowStride)));
  auto loadA = [&](llvm::Value* k, int64_t m) -> llvm::Value* {
    llvm::Value* at = b.CreateAdd(aRows[size_t(m)], b.CreateMul(k, kb.index(a.colStride)));
    return b.CreateLoad(b.getFloatTy(), elementPointer(kb, a.ptr, at, true));
  };
  auto loadB = [&](llvm::Value* k, int64_t v) {
    llvm::Value* at = b.CreateAdd(b.CreateAdd(bStart, b.CreateMul(k, kb.index(bRowStride))),
                                  kb.index(v * lanes));
    return loadLanes(kb, bm.ptr, at, lanes, validLanes(v));
  };
  const int64_t splits = rows == 1 ? rowSplits(tile.nrVectors, kCount) : 1;
  if (splits > 1) {
    splitRowSums(kb, tile, acc, kCount, splits, loadA, loadB);
  } else {
    emitMicrokernel(kb, tile, acc, kCount, /*unroll=*/4, loadA, loadB);
  }
  TileRows result(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t v = 0; v < tile.nrVectors; ++v) {
      result[size_t(i)].push_back(
          {b.CreateLoad(vecTy, acc[size_t(i)][size_t(v)]), v * lanes, validLanes(v)});
    }
  }
  return result;
}

// The lane sums of `vectors` (each of `lanes` lanes) as one vector, in order. A pairwise tree:
// each level adds the lower and upper halves of every segment of two vectors, so that after
// log2(lanes) levels every lane holds one vector's sum (8 vectors: 7 adds, 14 shuffles).
llvm::Value* horizontalSums(KernelBuilder& kb, std::vector<llvm::Value*> vectors, unsigned lanes) {
  llvm::IRBuilder<>& b = kb.b();
  const unsigned count = unsigned(vectors.size());
  llvm::Value* zero = llvm::Constant::getNullValue(vectors[0]->getType());
  for (unsigned width = lanes; width > 1; width /= 2) {
    if (vectors.size() % 2 != 0) vectors.push_back(zero);
    const unsigned segments = lanes / width;
    std::vector<llvm::Value*> next;
    for (size_t p = 0; p < vectors.size(); p += 2) {
      std::vector<int> lo, hi;
      for (unsigned source = 0; source < 2; ++source) {
        for (unsigned s = 0; s < segments; ++s) {
          for (unsigned t = 0; t < width / 2; ++t) {
            lo.push_back(int(source * lanes + s * width + t));
            hi.push_back(int(source * lanes + s * width + width / 2 + t));
          }
        }
      }
      next.push_back(b.CreateFAdd(b.CreateShuffleVector(vectors[p], vectors[p + 1], lo),
                                  b.CreateShuffleVector(vectors[p], vectors[p + 1], hi)));
    }
    vectors = next;
  }
  // Vector v holds the sums of inputs [v * lanes, (v + 1) * lanes).
  std::vector<int> first;
  for (unsigned j = 0; j < count; ++j) first.push_back(int(j));
  if (vectors.size() == 1) return b.CreateShuffleVector(vectors[0], first);
  auto* rowTy = llvm::FixedVectorType::get(b.getFloatTy(), count);
  llvm::Value* row = llvm::PoisonValue::get(rowTy);
  for (unsigned j = 0; j < count; ++j) {
    row = b.CreateInsertElement(
        row, b.CreateExtractElement(vectors[j / lanes], uint64_t(j % lanes)), uint64_t(j));
  }
  return row;
}

TileRows dotTile(KernelBuilder& kb, const TilePlan& plan, const MatOperand& a, const MatOperand& bm,
                 llvm::Value* m0, llvm::Value* n0, int64_t rows, int64_t cols, int64_t K) {
  llvm::IRBuilder<>& b = kb.b();
  const unsigned lanes = plan.lanes;
  auto* vecTy = llvm::FixedVectorType::get(b.getFloatTy(), lanes);
  auto slots = zeroSlots(kb, rows, cols, lanes);
  std::vector<llvm::Value*> aRows, bRows;
  for (int64_t i = 0; i < rows; ++i) {
    aRows.push_back(
        b.CreateAdd(a.offset, b.CreateMul(b.CreateAdd(m0, kb.index(i)), kb.index(a.rowStride))));
  }
  for (int64_t j = 0; j < cols; ++j) {
    bRows.push_back(
        b.CreateAdd(bm.offset, b.CreateMul(b.CreateAdd(n0, kb.index(j)), kb.index(bm.colStride))));
  }
  // One step over `valid` consecutive k from `k`: MR + NR vector loads, MR x NR multiply-adds.
  auto step = [&](llvm::Value* k, unsigned valid) {
    std::vector<llvm::Value*> av, bv;
    for (llvm::Value* row : aRows)
      av.push_back(loadLanes(kb, a.ptr, b.CreateAdd(row, k), lanes, valid));
    for (llvm::Value* row : bRows)
      bv.push_back(loadLanes(kb, bm.ptr, b.CreateAdd(row, k), lanes, valid));
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        llvm::Value* slot = slots[size_t(i)][size_t(j)];
        llvm::Value* acc = b.CreateLoad(vecTy, slot);
        b.CreateStore(b.CreateFAdd(acc, b.CreateFMul(av[size_t(i)], bv[size_t(j)])), slot);
      }
    }
  };
  const int64_t full = K / lanes, tail = K % lanes;
  if (full > 0) {
    kb.forRange(0, full, [&](llvm::Value* kk) { step(b.CreateMul(kk, kb.index(lanes)), lanes); });
  }
  if (tail > 0) step(kb.index(full * lanes), unsigned(tail));
  TileRows result(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) {
    std::vector<llvm::Value*> sums;
    for (llvm::Value* slot : slots[size_t(i)]) sums.push_back(b.CreateLoad(vecTy, slot));
    result[size_t(i)].push_back({horizontalSums(kb, sums, lanes), 0, unsigned(cols)});
  }
  return result;
}

}  // namespace

TileRows accumulateTile(KernelBuilder& kb, const TilePlan& plan, const MatOperand& a,
                        const MatOperand& b, llvm::Value* m0, llvm::Value* n0, int64_t rows,
                        int64_t cols, int64_t K) {
  if (plan.form == TileForm::Dot) return dotTile(kb, plan, a, b, m0, n0, rows, cols, K);
  return broadcastTile(kb, plan, a, b, m0, n0, rows, cols, K);
}

TileRows accumulateTileSlice(KernelBuilder& kb, const TilePlan& plan, const MatOperand& a,
                             const MatOperand& b, llvm::Value* m0, llvm::Value* n0, int64_t rows,
                             int64_t cols, int64_t K, const KSlice& slice) {
  assert(plan.form == TileForm::Broadcast && plan.packedB);
  return broadcastTile(kb, plan, a, b, m0, n0, rows, cols, K, &slice);
}

void forTileSizes(KernelBuilder& kb, const TilePlan& plan, int64_t M, int64_t N, llvm::Value* mTile,
                  llvm::Value* nTile, const TileBody& body) {
  llvm::IRBuilder<>& b = kb.b();
  llvm::Value* m0 = b.CreateMul(mTile, kb.index(plan.mr));
  llvm::Value* n0 = b.CreateMul(nTile, kb.index(plan.nr));
  // Runs sized(full) for tiles before `fullCount`, sized(rest) for the edge tile.
  auto split = [&](llvm::Value* tile, int64_t extent, int64_t size,
                   const std::function<void(int64_t)>& sized) {
    const int64_t fullCount = extent / size, rest = extent % size;
    if (rest == 0) return sized(size);
    if (fullCount == 0) return sized(rest);
    llvm::Value* isFull = b.CreateICmpULT(tile, kb.index(fullCount));
    kb.ifThen(isFull, [&] { sized(size); });
    kb.ifThen(b.CreateNot(isFull), [&] { sized(rest); });
  };
  split(mTile, M, plan.mr, [&](int64_t rows) {
    split(nTile, N, plan.nr, [&](int64_t cols) { body(m0, n0, rows, cols); });
  });
}

// ---- Vector helpers ------------------------------------------------------------------------

llvm::Value* laneMask(KernelBuilder& kb, unsigned lanes, unsigned valid) {
  std::vector<llvm::Constant*> on;
  for (unsigned j = 0; j < lanes; ++j) on.push_back(kb.b().getInt1(j < valid));
  return llvm::ConstantVector::get(on);
}

llvm::Value* loadLanes(KernelBuilder& kb, llvm::Value* ptr, llvm::Value* index, unsigned lanes,
                       unsigned valid) {
  llvm::IRBuilder<>& b = kb.b();
  auto* type = llvm::FixedVectorType::get(b.getFloatTy(), lanes);
  if (valid >= lanes)
    return b.CreateAlignedLoad(type, elementPointer(kb, ptr, index, true), llvm::Align(4));
  return b.CreateMaskedLoad(type, elementPointer(kb, ptr, index, false), llvm::Align(4),
                            laneMask(kb, lanes, valid), llvm::Constant::getNullValue(type));
}

void storeLanes(KernelBuilder& kb, llvm::Value* ptr, llvm::Value* index, llvm::Value* vector,
                unsigned valid) {
  llvm::IRBuilder<>& b = kb.b();
  unsigned lanes = llvm::cast<llvm::FixedVectorType>(vector->getType())->getNumElements();
  if (valid >= lanes) {
    b.CreateAlignedStore(vector, elementPointer(kb, ptr, index, true), llvm::Align(4));
    return;
  }
  b.CreateMaskedStore(vector, elementPointer(kb, ptr, index, false), llvm::Align(4),
                      laneMask(kb, lanes, valid));
}

llvm::Value* scaleAndBias(KernelBuilder& kb, llvm::Value* v, unsigned valid, float alpha,
                          int biasBinding, llvm::Value* biasIndex, int64_t biasStep, float beta) {
  llvm::IRBuilder<>& b = kb.b();
  unsigned lanes = llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements();
  if (alpha != 1.0f) v = b.CreateFMul(v, b.CreateVectorSplat(lanes, kb.f32(alpha)));
  if (biasBinding < 0) return v;
  llvm::Value* bias = kb.bindingPointer(unsigned(biasBinding));
  llvm::Value* c =
      biasStep == 0
          ? b.CreateVectorSplat(
                lanes, b.CreateLoad(b.getFloatTy(), elementPointer(kb, bias, biasIndex, true)))
          : loadLanes(kb, bias, biasIndex, lanes, valid);
  if (beta != 1.0f) c = b.CreateFMul(c, b.CreateVectorSplat(lanes, kb.f32(beta)));
  return b.CreateFAdd(v, c);
}

llvm::Value* epilogueVector(KernelBuilder& kb, FusedEpilogue& epilogue, llvm::Value* v,
                            unsigned valid, const FusedEpilogue::Row& row, llvm::Value* column) {
  if (epilogue.empty()) return v;
  llvm::IRBuilder<>& b = kb.b();
  const Epilogue& e = kb.desc().epilogue;
  unsigned lanes = llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements();
  if (epilogue.vectorizable()) {
    return epilogue.applyVector(v, row, column,
                                valid < lanes ? laneMask(kb, lanes, valid) : nullptr);
  }
  if (e.chain.nodes.empty() && (e.act == Activation::Relu || e.act == Activation::Clip ||
                                 e.act == Activation::LeakyRelu))
    return kb.applyEpilogue(e, v);
  // Lane by lane (polynomial activations, chains with strided inputs).
  for (unsigned j = 0; j < valid; ++j) {
    llvm::Value* x = b.CreateExtractElement(v, uint64_t(j));
    x = epilogue.apply(x, row, b.CreateAdd(column, kb.index(j)));
    v = b.CreateInsertElement(v, x, uint64_t(j));
  }
  return v;
}

}  // namespace kiln::codegen::detail
