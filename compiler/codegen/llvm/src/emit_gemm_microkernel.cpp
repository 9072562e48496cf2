// The register-blocked GEMM microkernel (see emit_gemm_microkernel.h).
#include "emit_gemm_microkernel.h"

#include <llvm/IR/Intrinsics.h>

#include "kernel_builder.h"

namespace kiln::codegen::detail {

PerIteration prefetchLinesPerIteration(KernelBuilder& kb, unsigned binding, llvm::Value* first,
                                       int64_t lines) {
  constexpr int64_t kLineFloats = 16;  // a 64-byte cache line
  return [&kb, binding, first, lines](llvm::Value* i) {
    llvm::IRBuilder<>& b = kb.b();
    llvm::Value* line0 = b.CreateAdd(first, b.CreateMul(i, kb.index(lines * kLineFloats)));
    for (int64_t l = 0; l < lines; ++l) {
      llvm::Value* address =
          kb.elementAddress(binding, b.CreateAdd(line0, kb.index(l * kLineFloats)));
      b.CreateIntrinsic(llvm::Intrinsic::prefetch, {address->getType()},
                        {address, b.getInt32(0), b.getInt32(3), b.getInt32(1)});
    }
  };
}

Accumulators makeAccumulators(KernelBuilder& kb, const MicroTile& tile) {
  auto* vecTy = llvm::FixedVectorType::get(kb.b().getFloatTy(), tile.lanes);
  Accumulators acc(size_t(tile.mr));
  for (auto& row : acc)
    for (int64_t v = 0; v < tile.nrVectors; ++v) row.push_back(kb.local(vecTy, "acc"));
  return acc;
}

void emitMicrokernel(KernelBuilder& kb, const MicroTile& tile, const Accumulators& acc,
                     int64_t kCount, int64_t unroll, const LoadA& loadA, const LoadB& loadB,
                     const PerIteration& perIteration) {
  if (kCount <= 0) return;
  llvm::IRBuilder<>& b = kb.b();
  auto* vecTy = llvm::FixedVectorType::get(b.getFloatTy(), tile.lanes);
  unroll = std::max<int64_t>(1, std::min(unroll, kCount));
  // `steps` k steps starting at index `first`, the tile loaded from and stored to its slots.
  auto run = [&](llvm::Value* first, int64_t steps) {
    std::vector<std::vector<llvm::Value*>> c(size_t(tile.mr));
    for (int64_t m = 0; m < tile.mr; ++m)
      for (int64_t v = 0; v < tile.nrVectors; ++v) c[m].push_back(b.CreateLoad(vecTy, acc[m][v]));
    for (int64_t s = 0; s < steps; ++s) {
      llvm::Value* k = s == 0 ? first : b.CreateAdd(first, kb.index(s), "", true, true);
      std::vector<llvm::Value*> bv;
      for (int64_t v = 0; v < tile.nrVectors; ++v) bv.push_back(loadB(k, v));
      for (int64_t m = 0; m < tile.mr; ++m) {
        llvm::Value* a = b.CreateVectorSplat(tile.lanes, loadA(k, m));
        for (int64_t v = 0; v < tile.nrVectors; ++v)
          c[m][v] = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {vecTy}, {a, bv[v], c[m][v]});
      }
    }
    for (int64_t m = 0; m < tile.mr; ++m)
      for (int64_t v = 0; v < tile.nrVectors; ++v) b.CreateStore(c[m][v], acc[m][v]);
  };
  int64_t loops = kCount / unroll;
  if (loops == 1) {
    if (perIteration) perIteration(kb.index(0));
    run(kb.index(0), unroll);
  } else if (loops > 1) {
    kb.forRange(
        kb.index(0), kb.index(loops),
        [&](llvm::Value* i) {
          if (perIteration) perIteration(i);
          run(b.CreateMul(i, kb.index(unroll), "", true, true), unroll);
        },
        /*unroll=*/false);
  }
  if (kCount % unroll) run(kb.index(loops * unroll), kCount % unroll);
}

}  // namespace kiln::codegen::detail
