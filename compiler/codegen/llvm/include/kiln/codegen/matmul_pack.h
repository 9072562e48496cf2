// Compile-time packing of a matrix product's constant B operand (Gemm/MatMul weights) into the
// order the broadcast register tiles read it (matmul_tiles.h), and the policy that decides
// which products get it and with which tile. The packer (packMatMulWeights, called by the
// driver on the dispatch graph before code generation) and the emitters both ask
// matMulPanelTile, so they always agree. LLVM-free.
//
// op(B) is K x N: B itself ([K][N], MatMul and Gemm transB=0) or its transpose (Gemm transB=1,
// torch's Linear with weights [N][K]). Packed ("column panels"), panel p holds the columns
// [p*NR, p*NR + NR) of op(B) row by row: op(B)[k][p*NR + j] at p*K*NR + k*NR + j; the last
// panel, if N % NR = r != 0, holds its r columns as p*K*NR + k*r + j. Same byte count as the
// model's layout (no padding), so buffer sizes never change. A tile of NR columns then reads
// one contiguous stream of K*NR floats, whatever the model's layout, and each k step of it is
// NR/lanes vector loads of B and one broadcast per row of A (no horizontal sums).
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/codegen/conv_gemm_plan.h"
#include "kiln/codegen/kernel_desc.h"
#include "kiln/codegen/target_config.h"

namespace kiln::ir {
struct DispatchGraph;
}

namespace kiln::codegen {

// A fused MLP head (emit_matmul_chain.cpp) works on blocks of rows whose hidden rows (the
// first product's) take at most this many floats of stack.
constexpr int64_t kMlpHiddenBlockFloats = 2048;  // 8 KiB

struct MatMulPanelTile {
  int64_t mr = 0;  // rows of the register tile (0: B is not packed for this product)
  int64_t nr = 0;  // columns of the tile = columns per panel (a multiple of the lanes)
  bool applies() const { return mr > 0; }
};

// The panel tile for a MatMul kernel description on `unit` if its B operand, when it is a
// constant, is worth packing (f32, B without batch axes, at least a vector of columns, a
// vector unit, not a batch-1 product with transposed weights); else mr = 0. For a fused MLP head (tailB >= 0) this is the first product's
// tile. Ignores desc.bPanel.
MatMulPanelTile matMulPanelTile(const KernelDesc& desc, VectorUnit unit);

// op(B) (K x N; `b` holds B as the model stores it: [K][N], or [N][K] when transB) in column
// panels of `nr` (see above).
std::vector<float> packMatMulPanels(const std::vector<float>& b, int64_t k, int64_t n,
                                    bool transB, int64_t nr);

// For every MatMul dispatch whose tile applies and whose B is a constant read by no other
// dispatch or copy: repacks the constant's bytes in place (same size) and sets the kernel's
// bPanel. `kernels` are graph's dispatches lowered (lowerDispatches), in order. Returns how
// many constants were packed.
int packMatMulWeights(ir::DispatchGraph& graph, std::vector<KernelDesc>& kernels,
                      const TargetConfig& target);

}  // namespace kiln::codegen
