// The fused epilogue of conv, matmul and pool kernels: the KernelDesc's activation and fused
// elementwise chain (bias/scale, activations, residual Add...) applied to output values before
// they are stored for good, so the intermediate tensors never exist. One helper for every
// emitter. Output values are addressed by row (a run along the output's last axis) and
// column; each extra input of the chain is read at its broadcast position, its offset
// computed once per row.
//  - applyToRow: load, apply and store every element of a finished row (plain conv, pools;
//    the row is still in L1 and the loop vectorises);
//  - apply: one value in a register (Gemm's bias pass);
//  - applyVector: a vector of consecutive columns in registers (the tiled conv's accumulators,
//    before their only store), for chains that evaluate on vectors (vectorizable()).
#pragma once

#include <llvm/IR/Value.h>

#include <cstdint>
#include <vector>

namespace kiln::codegen::detail {

class KernelBuilder;

class FusedEpilogue {
 public:
  explicit FusedEpilogue(KernelBuilder& kb);

  // True if there is nothing to apply (no activation, no chain).
  bool empty() const { return empty_; }
  // True if applyVector may be used: no activation field, the chain's ops evaluate on
  // vectors and every input is contiguous or broadcast along the output's last axis.
  bool vectorizable() const { return vectorizable_; }

  // Per-row offsets of the chain's inputs. `rowStart` is the linear index of the row's first
  // output element, a multiple of the output's last dimension.
  struct Row {
    std::vector<llvm::Value*> base;  // per kernel input (nullptr: not read by the chain)
  };
  Row row(llvm::Value* rowStart);

  // The epilogue applied to `value`, the result at `column` of `row`.
  llvm::Value* apply(llvm::Value* value, const Row& row, llvm::Value* column);
  // The first lane's output element as coordinates (n, c, h, w) of a 4-D output, which
  // kernels that take chain inputs in row groups (row_groups.h; of the output's shape) pass.
  struct Position {
    llvm::Value *n, *c, *h, *w;
  };
  // The same for a vector of consecutive columns starting at `column`; `mask` (or nullptr)
  // switches off the lanes past the row's end (their inputs are not read). Chain inputs in
  // row groups are read at `at`.
  llvm::Value* applyVector(llvm::Value* vector, const Row& row, llvm::Value* column,
                           llvm::Value* mask, const Position* at = nullptr);
  // Loads, applies and stores every element [0, length) of the row in place.
  void applyToRow(llvm::Value* rowStart, int64_t length);

  // apply() on the row set by beginRow (for emitters that handle one row at a time).
  void beginRow(llvm::Value* rowStart) { current_ = row(rowStart); }
  llvm::Value* apply(llvm::Value* value, llvm::Value* column) {
    return apply(value, current_, column);
  }

 private:
  llvm::Value* inputAt(const Row& row, size_t input, llvm::Value* column);

  KernelBuilder& kb_;
  bool empty_ = true;
  bool vectorizable_ = false;
  std::vector<int64_t> shape_;                  // the chain's view of the output shape
  std::vector<std::vector<int64_t>> strides_;  // per kernel input read by the chain
  std::vector<bool> grouped_;                   // per kernel input: in row groups
  Row current_;
};

}  // namespace kiln::codegen::detail
