// Elementwise kernels: an expression over broadcast inputs, evaluated per output element.
// Output axes whose access pattern is contiguous for every input are merged first, so a
// same-shape operation is one flat loop and a per-channel one is [outer, inner].
#include <llvm/IR/CFG.h>
#include <llvm/IR/Metadata.h>

#include <algorithm>
#include <set>

#include "codegen_error.h"
#include "emitters.h"
#include "expr_eval.h"
#include "kernel_builder.h"

namespace kiln::codegen::detail {
namespace {

// Merges output axes i and i+1 wherever every operand walks them as one contiguous axis.
// Axes of extent 1 go first: they iterate nothing, and their broadcast stride (0) would keep
// a leading batch axis of 1 apart, leaving it the only axis to split over workgroups.
void mergeAxes(std::vector<int64_t>& extents, std::vector<std::vector<int64_t>>& strides) {
  for (size_t i = extents.size(); i-- > 0 && extents.size() > 1;) {
    if (extents[i] != 1) continue;
    extents.erase(extents.begin() + static_cast<long>(i));
    for (auto& s : strides) s.erase(s.begin() + static_cast<long>(i));
  }
  for (size_t i = extents.size(); i-- > 1;) {
    bool mergeable = std::all_of(strides.begin(), strides.end(),
                                 [&](const auto& s) { return s[i - 1] == s[i] * extents[i]; });
    if (!mergeable) continue;
    extents[i - 1] *= extents[i];
    extents.erase(extents.begin() + static_cast<long>(i));
    for (auto& s : strides) {
      s[i - 1] = s[i];
      s.erase(s.begin() + static_cast<long>(i));
    }
  }
}

// Marks the memory accesses of the blocks created since `before` (one loop) as free of
// loop-carried dependences (llvm.loop.parallel_accesses). For an in-place operation (the
// output over an operand with the same layout) element j is read before it is written and
// nothing else touches it; without this the vectoriser's runtime overlap check sees the
// operand and the output overlap and takes the scalar loop.
void markParallelLoop(llvm::Function* fn, const std::set<llvm::BasicBlock*>& before) {
  llvm::LLVMContext& ctx = fn->getContext();
  llvm::MDNode* group = llvm::MDNode::getDistinct(ctx, {});
  llvm::BasicBlock* header = nullptr;
  for (llvm::BasicBlock& block : *fn) {
    if (before.count(&block)) continue;
    if (!header) header = &block;  // forRange creates the header first
    for (llvm::Instruction& inst : block)
      if (inst.mayReadOrWriteMemory()) inst.setMetadata(llvm::LLVMContext::MD_access_group, group);
  }
  if (!header) return;
  for (llvm::BasicBlock* pred : llvm::predecessors(header)) {
    if (before.count(pred)) continue;  // the preheader
    llvm::MDNode* parallel =
        llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.parallel_accesses"), group});
    llvm::MDNode* loopId = llvm::MDNode::getDistinct(ctx, {nullptr, parallel});
    loopId->replaceOperandWith(0, loopId);
    pred->getTerminator()->setMetadata(llvm::LLVMContext::MD_loop, loopId);
  }
}

}  // namespace

uint32_t emitElementwise(KernelBuilder& kb) {
  const KernelDesc& desc = kb.desc();
  const std::vector<int64_t>& outShape = desc.output.shape;
  // Strides of every input and of the output over the output's axes.
  std::vector<int64_t> extents = outShape;
  std::vector<std::vector<int64_t>> strides;
  for (const BufferDesc& in : desc.inputs) strides.push_back(broadcastStrides(in.shape, outShape));
  strides.push_back(rowMajorStrides(outShape));
  if (extents.empty()) {
    extents.push_back(1);
    for (auto& s : strides) s.push_back(0);
  }
  mergeAxes(extents, strides);

  // Split all axes but the innermost over workgroups; a single axis is split in chunks.
  std::vector<int64_t> outerExtents(extents.begin(), extents.end() - 1);
  int64_t inner = extents.back();
  int64_t outer = 1;
  for (int64_t e : outerExtents) outer *= e;
  int64_t chunk = inner;
  if (outerExtents.empty()) {
    chunk = std::min<int64_t>(inner, kMinElementsPerWorkgroup);
    outer = (inner + chunk - 1) / chunk;
  }

  const std::vector<ExprNode>& nodes = desc.expr.nodes;
  // In place: every operand the output may overlap (same byte size) is walked like the output.
  bool sameLayoutInPlace = desc.bindingsMayAlias;
  for (size_t k = 0; k < desc.inputs.size(); ++k) {
    bool sameBytes = desc.inputs[k].elementCount() * elemSize(desc.inputs[k].type) ==
                     desc.output.elementCount() * elemSize(desc.output.type);
    if (sameBytes && (strides[k] != strides.back() ||
                      elemSize(desc.inputs[k].type) != elemSize(desc.output.type)))
      sameLayoutInPlace = false;
  }
  kb.forWorkgroupShare(outer, [&](llvm::Value* o) {
    llvm::IRBuilder<>& b = kb.b();
    std::vector<llvm::Value*> bases;
    llvm::Value* begin = kb.index(0);
    llvm::Value* end = kb.index(inner);
    if (outerExtents.empty()) {
      begin = b.CreateMul(o, kb.index(chunk));
      llvm::Value* chunkEnd = b.CreateAdd(begin, kb.index(chunk));
      end = b.CreateSelect(b.CreateICmpSLT(chunkEnd, end), chunkEnd, end);
      for (size_t k = 0; k < strides.size(); ++k) bases.push_back(kb.index(0));
    } else {
      std::vector<llvm::Value*> coords = kb.decompose(o, outerExtents);
      for (const auto& s : strides) {
        bases.push_back(kb.linearize(coords, std::vector<int64_t>(s.begin(), s.end() - 1)));
      }
    }
    llvm::Function* fn = b.GetInsertBlock()->getParent();
    std::set<llvm::BasicBlock*> before;
    for (llvm::BasicBlock& block : *fn) before.insert(&block);
    kb.forRange(begin, end, [&](llvm::Value* j) {
      auto offset = [&](size_t operand) {
        int64_t step = strides[operand].back();
        if (step == 0) return bases[operand];
        llvm::Value* scaled = step == 1 ? j : b.CreateMul(j, kb.index(step));
        return b.CreateAdd(bases[operand], scaled);
      };
      llvm::Value* value = evalExpr(kb, nodes, [&](const ExprNode& node) {
        return kb.load(node.input, desc.inputs[node.input].type, offset(node.input));
      });
      kb.store(kb.outputBinding(), desc.output.type, offset(strides.size() - 1), value);
    });
    if (sameLayoutInPlace) markParallelLoop(fn, before);
  });
  return workgroupsFor(outer, chunk);
}

}  // namespace kiln::codegen::detail
