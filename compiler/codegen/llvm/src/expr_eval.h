// Evaluation of an elementwise expression (ExprNode list) for one element, as LLVM IR.
#pragma once

#include <llvm/IR/Value.h>

#include <functional>
#include <vector>

#include "kiln/codegen/kernel_desc.h"

namespace kiln::codegen::detail {

class KernelBuilder;

// Emits the nodes in order and returns the last node's value. inputValue(node) supplies each
// Input node's value (the caller loads it); `result` is the value of Result nodes (fused
// epilogues; nullptr elsewhere). With lanes > 0 every value is a vector of that many lanes
// (constants are splatted); only the ops of evaluatesOnVectors() (kernel_desc.h) may appear then.
llvm::Value* evalExpr(KernelBuilder& kb, const std::vector<ExprNode>& nodes,
                      const std::function<llvm::Value*(const ExprNode&)>& inputValue,
                      llvm::Value* result = nullptr, unsigned lanes = 0);

}  // namespace kiln::codegen::detail
