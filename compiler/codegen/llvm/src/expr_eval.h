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
// epilogues; nullptr elsewhere).
llvm::Value* evalExpr(KernelBuilder& kb, const std::vector<ExprNode>& nodes,
                      const std::function<llvm::Value*(const ExprNode&)>& inputValue,
                      llvm::Value* result = nullptr);

}  // namespace kiln::codegen::detail
