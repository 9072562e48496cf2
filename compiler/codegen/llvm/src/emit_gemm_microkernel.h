// The register-blocked GEMM microkernel: an MR x NR tile of C accumulated over a K range,
//   acc[m][v] += A(k, m) * B(k, v)   for k in [0, kCount),
// with A(k, m) a scalar broadcast to every lane and B(k, v) the v-th vector of NR consecutive
// columns. The MR x NR/lanes accumulators are allocas that mem2reg keeps in vector registers
// over the whole loop; each k step is NR/lanes vector loads of B, MR broadcasts of A and
// MR * NR/lanes fused multiply-adds, unrolled a few steps per loop iteration. The caller
// decides where A and B live (packed panels, an im2col buffer, the input itself) and what
// happens to the tile before and after (bias, partial sums, epilogue, masked stores).
// Convolution uses it (emit_conv_gemm.cpp); a matrix product can use it as it is.
#pragma once

#include <llvm/IR/Value.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace kiln::codegen::detail {

class KernelBuilder;

struct MicroTile {
  int64_t mr = 0;         // rows (broadcast A values)
  int64_t nrVectors = 0;  // vectors of B per k step
  unsigned lanes = 0;     // f32 lanes per vector
};

// mr x nrVectors accumulator slots (<lanes x float> allocas in the entry block); a smaller
// tile may use the leading slots.
using Accumulators = std::vector<std::vector<llvm::Value*>>;
Accumulators makeAccumulators(KernelBuilder& kb, const MicroTile& tile);

// A(k, m): the f32 scalar of row m at step k; B(k, v): vector v at step k (k an index value).
using LoadA = std::function<llvm::Value*(llvm::Value* k, int64_t m)>;
using LoadB = std::function<llvm::Value*(llvm::Value* k, int64_t v)>;

// Emitted once per loop iteration of `unroll` k steps (not for the remainder), given the
// iteration's index: e.g. software prefetches spread over the K loop.
using PerIteration = std::function<void(llvm::Value* iteration)>;

// A PerIteration that prefetches (for reading, into all cache levels) `lines` 64-byte lines
// of binding `binding` per iteration: iteration i's lines start at element
// `first + i * lines * 16`. Spreads a weights block's prefetch over the K loop.
PerIteration prefetchLinesPerIteration(KernelBuilder& kb, unsigned binding, llvm::Value* first,
                                       int64_t lines);

// Emits the K loop over `tile` (tile.mr x tile.nrVectors of `acc`, already initialised):
// kCount steps, `unroll` of them per loop iteration, the remainder after the loop.
void emitMicrokernel(KernelBuilder& kb, const MicroTile& tile, const Accumulators& acc,
                     int64_t kCount, int64_t unroll, const LoadA& loadA, const LoadB& loadB,
                     const PerIteration& perIteration = nullptr);

}  // namespace kiln::codegen::detail
