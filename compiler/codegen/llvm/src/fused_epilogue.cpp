// FusedEpilogue (see fused_epilogue.h).
#include "fused_epilogue.h"

#include "expr_eval.h"
#include "kernel_builder.h"

namespace kiln::codegen::detail {

FusedEpilogue::FusedEpilogue(KernelBuilder& kb) : kb_(kb) {
  const KernelDesc& d = kb.desc();
  const Epilogue& e = d.epilogue;
  empty_ = e.act == Activation::None && e.chain.nodes.empty();
  if (e.chain.nodes.empty()) return;
  const std::vector<int64_t>& shape = e.shape.empty() ? d.output.shape : e.shape;
  outerShape_.assign(shape.begin(), shape.end() - (shape.empty() ? 0 : 1));
  strides_.resize(d.inputs.size());
  rowBase_.resize(d.inputs.size(), nullptr);
  for (const ExprNode& node : e.chain.nodes)
    if (node.op == ExprOp::Input) strides_[size_t(node.input)] = broadcastStrides(d.inputs[size_t(node.input)].shape, shape);
}

void FusedEpilogue::beginRow(llvm::Value* rowStart) {
  const KernelDesc& d = kb_.desc();
  if (d.epilogue.chain.nodes.empty()) return;
  llvm::IRBuilder<>& b = kb_.b();
  int64_t rowLength = 1;
  const std::vector<int64_t>& shape = d.epilogue.shape.empty() ? d.output.shape : d.epilogue.shape;
  if (!shape.empty()) rowLength = shape.back();
  llvm::Value* row = b.CreateUDiv(rowStart, kb_.index(rowLength));
  std::vector<llvm::Value*> coords =
      outerShape_.empty() ? std::vector<llvm::Value*>{} : kb_.decompose(row, outerShape_);
  for (size_t i = 0; i < d.inputs.size(); ++i) {
    if (strides_[i].empty() && !shape.empty()) continue;  // not read by the chain
    std::vector<int64_t> outer(strides_[i].begin(), strides_[i].end() - (shape.empty() ? 0 : 1));
    rowBase_[i] = outer.empty() ? kb_.index(0) : kb_.linearize(coords, outer);
  }
}

llvm::Value* FusedEpilogue::apply(llvm::Value* value, llvm::Value* column) {
  const KernelDesc& d = kb_.desc();
  value = kb_.applyEpilogue(d.epilogue, value);
  if (d.epilogue.chain.nodes.empty()) return value;
  llvm::IRBuilder<>& b = kb_.b();
  return evalExpr(
      kb_, d.epilogue.chain.nodes,
      [&](const ExprNode& node) {
        size_t i = size_t(node.input);
        int64_t step = strides_[i].empty() ? 0 : strides_[i].back();
        llvm::Value* at = rowBase_[i];
        if (step != 0) at = b.CreateAdd(at, step == 1 ? column : b.CreateMul(column, kb_.index(step)));
        return kb_.load(unsigned(i), d.inputs[i].type, at);
      },
      value);
}

void FusedEpilogue::applyToRow(llvm::Value* rowStart, int64_t length) {
  if (empty_) return;
  beginRow(rowStart);
  const unsigned out = kb_.outputBinding();
  const ElemType type = kb_.desc().output.type;
  kb_.forRange(0, length, [&](llvm::Value* column) {
    llvm::Value* at = kb_.b().CreateAdd(rowStart, column);
    kb_.store(out, type, at, apply(kb_.load(out, type, at), column));
  });
}

}  // namespace kiln::codegen::detail
