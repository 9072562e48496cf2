// FusedEpilogue (see fused_epilogue.h).
#include "fused_epilogue.h"

#include "expr_eval.h"
#include "kernel_builder.h"

#include <algorithm>
#include <cassert>

namespace kiln::codegen::detail {

FusedEpilogue::FusedEpilogue(KernelBuilder& kb) : kb_(kb) {
  const KernelDesc& d = kb.desc();
  const Epilogue& e = d.epilogue;
  empty_ = e.act == Activation::None && e.chain.nodes.empty();
  shape_ = e.shape.empty() ? d.output.shape : e.shape;
  if (shape_.empty()) shape_ = {1};
  strides_.resize(d.inputs.size());
  grouped_.resize(d.inputs.size(), false);
  bool contiguous = true;
  for (const ExprNode& node : e.chain.nodes) {
    if (node.op != ExprOp::Input) continue;
    const BufferDesc& input = d.inputs[size_t(node.input)];
    if (!input.rowGroups.empty()) {
      assert(input.shape == d.output.shape && "a chain input in row groups has the output's shape");
      grouped_[size_t(node.input)] = true;
    }
    std::vector<int64_t>& s = strides_[size_t(node.input)];
    s = broadcastStrides(d.inputs[size_t(node.input)].shape, shape_);
    contiguous &= s.back() == 0 || s.back() == 1;
  }
  vectorizable_ = !empty_ && e.act == Activation::None && contiguous &&
                  evaluatesOnVectors(e.chain.nodes);
}

FusedEpilogue::Row FusedEpilogue::row(llvm::Value* rowStart) {
  const KernelDesc& d = kb_.desc();
  Row r;
  r.base.resize(d.inputs.size(), nullptr);
  bool any = false;
  for (const std::vector<int64_t>& s : strides_) any |= !s.empty();
  if (!any) return r;
  llvm::IRBuilder<>& b = kb_.b();
  std::vector<int64_t> outer(shape_.begin(), shape_.end() - 1);
  llvm::Value* rowIndex = b.CreateUDiv(rowStart, kb_.index(shape_.back()));
  std::vector<llvm::Value*> coords =
      outer.empty() ? std::vector<llvm::Value*>{} : kb_.decompose(rowIndex, outer);
  for (size_t i = 0; i < strides_.size(); ++i) {
    if (strides_[i].empty()) continue;
    std::vector<int64_t> outerStrides(strides_[i].begin(), strides_[i].end() - 1);
    r.base[i] = outer.empty() ? kb_.index(0) : kb_.linearize(coords, outerStrides);
  }
  return r;
}

llvm::Value* FusedEpilogue::inputAt(const Row& row, size_t input, llvm::Value* column) {
  int64_t step = strides_[input].back();
  if (step == 0) return row.base[input];
  llvm::IRBuilder<>& b = kb_.b();
  return b.CreateAdd(row.base[input], step == 1 ? column : b.CreateMul(column, kb_.index(step)));
}

llvm::Value* FusedEpilogue::apply(llvm::Value* value, const Row& row, llvm::Value* column) {
  const KernelDesc& d = kb_.desc();
  assert(std::find(grouped_.begin(), grouped_.end(), true) == grouped_.end() &&
         "chain inputs in row groups are read by applyVector only");
  value = kb_.applyEpilogue(d.epilogue, value);
  if (d.epilogue.chain.nodes.empty()) return value;
  return evalExpr(
      kb_, d.epilogue.chain.nodes,
      [&](const ExprNode& node) {
        size_t i = size_t(node.input);
        return kb_.load(unsigned(i), d.inputs[i].type, inputAt(row, i, column));
      },
      value);
}

llvm::Value* FusedEpilogue::applyVector(llvm::Value* vector, const Row& row, llvm::Value* column,
                                        llvm::Value* mask, const Position* position) {
  const KernelDesc& d = kb_.desc();
  llvm::IRBuilder<>& b = kb_.b();
  auto* type = llvm::cast<llvm::FixedVectorType>(vector->getType());
  unsigned lanes = type->getNumElements();
  return evalExpr(
      kb_, d.epilogue.chain.nodes,
      [&](const ExprNode& node) -> llvm::Value* {
        size_t i = size_t(node.input);
        if (strides_[i].back() == 0)  // broadcast along the row: one value for all lanes
          return b.CreateVectorSplat(lanes, kb_.load(unsigned(i), ElemType::F32, row.base[i]));
        assert((!grouped_[i] || position) && "a chain input in row groups needs the position");
        llvm::Value* at =
            grouped_[i] ? b.CreateAdd(kb_.rowAddress(d.inputs[i], position->n, position->c,
                                                     position->h),
                                      position->w)
                        : inputAt(row, i, column);
        if (!mask) return kb_.loadVector(unsigned(i), at, lanes);
        return b.CreateMaskedLoad(type, kb_.elementAddress(unsigned(i), at), llvm::Align(4), mask,
                                  llvm::Constant::getNullValue(type));
      },
      vector, lanes);
}

void FusedEpilogue::applyToRow(llvm::Value* rowStart, int64_t length) {
  if (empty_) return;
  Row r = row(rowStart);
  const unsigned out = kb_.outputBinding();
  const ElemType type = kb_.desc().output.type;
  kb_.forRange(0, length, [&](llvm::Value* column) {
    llvm::Value* at = kb_.b().CreateAdd(rowStart, column);
    kb_.store(out, type, at, apply(kb_.load(out, type, at), r, column));
  });
}

}  // namespace kiln::codegen::detail
