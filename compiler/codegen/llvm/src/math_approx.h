// Transcendental functions as inline f32 polynomial code: kernels never call libm. Each takes
// and returns an f32 llvm::Value, a scalar (the vectoriser widens loops of them) or a vector
// (the register-tiled kernels' epilogues, on their accumulators).
#pragma once

#include <llvm/IR/Value.h>

namespace kiln::codegen::detail {

class KernelBuilder;

llvm::Value* emitExp(KernelBuilder& kb, llvm::Value* x);      // rel. error ~2 ulp
llvm::Value* emitLog(KernelBuilder& kb, llvm::Value* x);      // natural log, x > 0
llvm::Value* emitSigmoid(KernelBuilder& kb, llvm::Value* x);  // 1 / (1 + exp(-x))
llvm::Value* emitTanh(KernelBuilder& kb, llvm::Value* x);
llvm::Value* emitErf(KernelBuilder& kb, llvm::Value* x);    // abs. error < 2e-7
llvm::Value* emitFloor(KernelBuilder& kb, llvm::Value* x);  // exact
llvm::Value* emitSqrt(KernelBuilder& kb, llvm::Value* x);   // instruction or Newton steps

}  // namespace kiln::codegen::detail
