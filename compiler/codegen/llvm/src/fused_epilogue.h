// The fused epilogue of conv, matmul and pool kernels: the KernelDesc's activation and fused
// elementwise chain (bias/scale, activations, residual Add...) applied to output values while
// the row that holds them is being finished, so the intermediate tensors never exist.
// One helper for every emitter: it walks one output row (a run along the output's last axis)
// and evaluates the chain per element with each extra input read at the broadcast position.
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

  // Prepares a row: `rowStart` is the linear index of the row's first output element, a
  // multiple of the output's last dimension. Computes each chain input's offset there.
  void beginRow(llvm::Value* rowStart);
  // The epilogue applied to `value`, the result at column `column` of the current row.
  llvm::Value* apply(llvm::Value* value, llvm::Value* column);
  // beginRow + load, apply and store in place every element of the row [0, length).
  void applyToRow(llvm::Value* rowStart, int64_t length);

 private:
  KernelBuilder& kb_;
  bool empty_ = true;
  std::vector<int64_t> outerShape_;               // the chain's output shape without the last axis
  std::vector<std::vector<int64_t>> strides_;     // per kernel input: broadcast strides
  std::vector<llvm::Value*> rowBase_;             // per kernel input: offset at the row start
};

}  // namespace kiln::codegen::detail
