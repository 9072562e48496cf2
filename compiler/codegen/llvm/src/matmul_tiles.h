// Register tiles for matrix products on targets with vector registers (emit_matmul.cpp,
// emit_matmul_chain.cpp). A tile is MR rows x NR columns of the result, accumulated in
// registers over the whole reduction K and handed back as vectors for the caller's epilogue
// and store. Two forms, chosen by which operand is contiguous along what:
//  - Broadcast: B's rows are contiguous along N (MatMul, Gemm transB=0). Per k, NV vectors
//    of B are loaded and each of the MR values of A is broadcast against them (MR x NV
//    accumulators of V lanes; the last vector of a row end is masked): the conv's GEMM
//    microkernel (emit_gemm_microkernel.h) reading both operands in place.
//  - Dot: A and B are both contiguous along K (Gemm transB=1 with weights [N][K], torch's
//    Linear; MatMul by a column). Each of the MR x NR outputs is a dot product over K kept as
//    V partial sums (vector loads of both operands, the K tail masked), reduced once at the end.
// Batch-1 products (GEMV) use MR = 1 and several columns, so the weights stream once.
#pragma once

#include <llvm/IR/Value.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "fused_epilogue.h"
#include "kernel_builder.h"

namespace kiln::codegen::detail {

class KernelBuilder;

// A matrix operand in memory: element (r, c) is ptr[offset + r * rowStride + c * colStride]
// (A: r = m, c = k; B: r = k, c = n). `ptr` points to f32 elements.
struct MatOperand {
  llvm::Value* ptr = nullptr;
  llvm::Value* offset = nullptr;
  int64_t rowStride = 0, colStride = 0;
};

enum class TileForm { Broadcast, Dot };

struct TilePlan {
  TileForm form = TileForm::Broadcast;
  int64_t mr = 1, nr = 1;  // tile rows and columns (the edge tiles are smaller)
  unsigned lanes = 8;
  // Broadcast only: B is in column panels of nr (matmul_pack.h), the tile at column n0 reads
  // B(k, j) at offset + n0 * K + k * cols + j (cols: the tile's columns); B's strides unused.
  bool packedB = false;
};

// The tile plan for an M x N x K product whose operands have the given strides (A over (m, k),
// B over (k, n)), or nothing if neither form applies (the caller keeps its plain loops).
// `registers`: the target's vector registers (tileUnit); with 8 (Helium) the tiles are
// smaller.
std::optional<TilePlan> planMatMulTiles(int64_t M, int64_t N, int64_t K, int64_t aStrideM,
                                        int64_t aStrideK, int64_t bStrideK, int64_t bStrideN,
                                        unsigned lanes, unsigned registers = 16);


// The plan of a product whose B the packer put in column panels (desc.bPanel > 0): broadcast
// tiles of matMulPanelTile's size, reading the panels.
TilePlan panelTilePlan(const KernelDesc& desc, const EmitTarget& target);

// A run of consecutive result columns of one tile row: `value` is a vector whose first
// `valid` lanes are columns [column, column + valid) relative to the tile's first column.
struct TileVector {
  llvm::Value* value = nullptr;
  int64_t column = 0;
  unsigned valid = 0;
};
using TileRows = std::vector<std::vector<TileVector>>;  // [row of the tile][run]

// Emits the accumulation of the rows*cols tile at (m0, n0) of the product A x B over K
// (rows <= plan.mr, cols <= plan.nr, compile-time) and returns its result vectors.
TileRows accumulateTile(KernelBuilder& kb, const TilePlan& plan, const MatOperand& a,
                        const MatOperand& b, llvm::Value* m0, llvm::Value* n0, int64_t rows,
                        int64_t cols, int64_t K);

// One slice of the reduction for K-blocked products: steps [start, start + count) of the
// K-deep product (A's columns and the panel's rows from `start`), the accumulators starting
// from init(row, vector) (null: zero), vector v covering the tile's columns [v*lanes, ...).
// Broadcast tiles on packed B only.
struct KSlice {
  llvm::Value* start = nullptr;
  int64_t count = 0;
  std::function<llvm::Value*(int64_t row, int64_t vector)> init;
};
TileRows accumulateTileSlice(KernelBuilder& kb, const TilePlan& plan, const MatOperand& a,
                             const MatOperand& b, llvm::Value* m0, llvm::Value* n0, int64_t rows,
                             int64_t cols, int64_t K, const KSlice& slice);

// Calls body(mTile, nTile, rows, cols) with the tile's compile-time size: full tiles, and the
// smaller ones at the bottom (M % mr rows) and right (N % nr columns) edges.
using TileBody = std::function<void(llvm::Value* m0, llvm::Value* n0, int64_t rows, int64_t cols)>;
void forTileSizes(KernelBuilder& kb, const TilePlan& plan, int64_t M, int64_t N, llvm::Value* mTile,
                  llvm::Value* nTile, const TileBody& body);
int64_t tileCount(int64_t extent, int64_t tile);

// ---- Vector helpers for the epilogue and the stores --------------------------------------
// The mask of the first `valid` of `lanes` lanes.
llvm::Value* laneMask(KernelBuilder& kb, unsigned lanes, unsigned valid);
// Loads `lanes` f32 at ptr[index...], of which only the first `valid` are read (rest zero).
llvm::Value* loadLanes(KernelBuilder& kb, llvm::Value* ptr, llvm::Value* index, unsigned lanes,
                       unsigned valid);
// Stores the first `valid` lanes of `vector` at ptr[index...].
void storeLanes(KernelBuilder& kb, llvm::Value* ptr, llvm::Value* index, llvm::Value* vector,
                unsigned valid);

// Gemm's scale and bias on a result vector: alpha * v + beta * C, where C's element for the
// vector's first lane is at `biasIndex` of binding `biasBinding` and `biasStep` (0 or 1) is
// C's stride along the columns. biasBinding < 0: no bias.
llvm::Value* scaleAndBias(KernelBuilder& kb, llvm::Value* v, unsigned valid, float alpha,
                          int biasBinding, llvm::Value* biasIndex, int64_t biasStep, float beta);

// The kernel's fused epilogue (activation, chain) on a result vector whose first lane is
// `column` of the output row described by `row`: on vectors where possible, else lane by lane.
llvm::Value* epilogueVector(KernelBuilder& kb, FusedEpilogue& epilogue, llvm::Value* v,
                            unsigned valid, const FusedEpilogue::Row& row, llvm::Value* column);

}  // namespace kiln::codegen::detail
