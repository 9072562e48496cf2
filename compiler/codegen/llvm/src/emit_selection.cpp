// Index-selecting ops along one axis: ArgMax / ArgMin (first or last extreme index), TopK
// (the k largest or smallest values with their indices, sorted, ties by lower index as ONNX
// specifies), GatherElements (each output element reads data at its own coordinates with
// the axis coordinate taken from the indices) and ScatterND (slices overwritten in order). Each workgroup item is one lane (outer, inner) of
// the axis. TopK picks its k results one after another, each the best element ordered after the
// previous pick (O(k * axis), no scratch memory).
#include "emitters.h"
#include "kernel_builder.h"

namespace kiln::codegen::detail {
namespace {

// a > b (or a < b when !greater) for elements of `type`.
llvm::Value* ordered(KernelBuilder& kb, ElemType type, llvm::Value* a, llvm::Value* bValue,
                     bool greater) {
  llvm::IRBuilder<>& b = kb.b();
  if (isFloat(type)) return greater ? b.CreateFCmpOGT(a, bValue) : b.CreateFCmpOLT(a, bValue);
  bool uns = type == ElemType::U8 || type == ElemType::Bool;
  if (uns) return greater ? b.CreateICmpUGT(a, bValue) : b.CreateICmpULT(a, bValue);
  return greater ? b.CreateICmpSGT(a, bValue) : b.CreateICmpSLT(a, bValue);
}

llvm::Value* equal(KernelBuilder& kb, ElemType type, llvm::Value* a, llvm::Value* bValue) {
  return isFloat(type) ? kb.b().CreateFCmpOEQ(a, bValue) : kb.b().CreateICmpEQ(a, bValue);
}

struct Lanes {
  int64_t outer = 1, inner = 1, extent = 1;
};

Lanes lanesOf(const std::vector<int64_t>& shape, int64_t axis) {
  Lanes l;
  for (int64_t i = 0; i < axis; ++i) l.outer *= shape[i];
  for (size_t i = axis + 1; i < shape.size(); ++i) l.inner *= shape[i];
  l.extent = shape[axis];
  return l;
}

}  // namespace

uint32_t emitArgReduce(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const ElemType type = d.inputs[0].type;
  const Lanes l = lanesOf(d.inputs[0].shape, d.axis);
  llvm::Value* bestSlot = kb.local(kb.elemType(type), "best");
  llvm::Value* indexSlot = kb.local(kb.indexType(), "index");
  kb.forWorkgroupShare(l.outer * l.inner, [&](llvm::Value* lane) {
    llvm::Value* o = b.CreateUDiv(lane, kb.index(l.inner));
    llvm::Value* i = b.CreateURem(lane, kb.index(l.inner));
    llvm::Value* base = b.CreateAdd(b.CreateMul(o, kb.index(l.extent * l.inner)), i);
    b.CreateStore(kb.load(0, type, base), bestSlot);
    b.CreateStore(kb.index(0), indexSlot);
    kb.forRange(1, l.extent, [&](llvm::Value* a) {
      llvm::Value* x = kb.load(0, type, b.CreateAdd(base, b.CreateMul(a, kb.index(l.inner))));
      llvm::Value* best = b.CreateLoad(kb.elemType(type), bestSlot);
      llvm::Value* better = ordered(kb, type, x, best, d.largest);
      if (d.selectLastIndex) better = b.CreateOr(better, equal(kb, type, x, best));
      b.CreateStore(b.CreateSelect(better, x, best), bestSlot);
      b.CreateStore(b.CreateSelect(better, a, b.CreateLoad(kb.indexType(), indexSlot)), indexSlot);
    });
    llvm::Value* index =
        b.CreateSExtOrTrunc(b.CreateLoad(kb.indexType(), indexSlot), kb.elemType(ElemType::I64));
    kb.store(kb.outputBinding(), ElemType::I64, lane, index);
  });
  return workgroupsFor(l.outer * l.inner, l.extent);
}

uint32_t emitTopK(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const ElemType type = d.inputs[0].type;
  const Lanes l = lanesOf(d.inputs[0].shape, d.axis);
  const int64_t k = d.output.shape[d.axis];
  const unsigned values = kb.outputBinding(), indices = values + 1;
  llvm::Type* elem = kb.elemType(type);
  llvm::Value* bestSlot = kb.local(elem, "best");
  llvm::Value* bestIndexSlot = kb.local(kb.indexType(), "best_index");
  llvm::Value* prevSlot = kb.local(elem, "prev");
  llvm::Value* prevIndexSlot = kb.local(kb.indexType(), "prev_index");
  kb.forWorkgroupShare(l.outer * l.inner, [&](llvm::Value* lane) {
    llvm::Value* o = b.CreateUDiv(lane, kb.index(l.inner));
    llvm::Value* i = b.CreateURem(lane, kb.index(l.inner));
    llvm::Value* base = b.CreateAdd(b.CreateMul(o, kb.index(l.extent * l.inner)), i);
    llvm::Value* outBase = b.CreateAdd(b.CreateMul(o, kb.index(k * l.inner)), i);
    b.CreateStore(kb.constant(type, 0), prevSlot);
    b.CreateStore(kb.index(-1), prevIndexSlot);
    kb.forRange(0, k, [&](llvm::Value* slot) {
      b.CreateStore(kb.index(-1), bestIndexSlot);
      llvm::Value* prev = b.CreateLoad(elem, prevSlot);
      llvm::Value* prevIndex = b.CreateLoad(kb.indexType(), prevIndexSlot);
      kb.forRange(0, l.extent, [&](llvm::Value* a) {
        llvm::Value* x = kb.load(0, type, b.CreateAdd(base, b.CreateMul(a, kb.index(l.inner))));
        // Ordered after the previous pick: worse value, or the same value at a later index.
        llvm::Value* after = b.CreateOr(
            b.CreateICmpSLT(prevIndex, kb.index(0)),
            b.CreateOr(ordered(kb, type, prev, x, d.largest),
                       b.CreateAnd(equal(kb, type, x, prev), b.CreateICmpSGT(a, prevIndex))));
        llvm::Value* bestIndex = b.CreateLoad(kb.indexType(), bestIndexSlot);
        llvm::Value* best = b.CreateLoad(elem, bestSlot);
        llvm::Value* better = b.CreateOr(b.CreateICmpSLT(bestIndex, kb.index(0)),
                                         ordered(kb, type, x, best, d.largest));
        llvm::Value* take = b.CreateAnd(after, better);
        b.CreateStore(b.CreateSelect(take, x, best), bestSlot);
        b.CreateStore(b.CreateSelect(take, a, bestIndex), bestIndexSlot);
      });
      llvm::Value* best = b.CreateLoad(elem, bestSlot);
      llvm::Value* bestIndex = b.CreateLoad(kb.indexType(), bestIndexSlot);
      llvm::Value* at = b.CreateAdd(outBase, b.CreateMul(slot, kb.index(l.inner)));
      kb.store(values, type, at, best);
      kb.store(indices, ElemType::I64, at,
               b.CreateSExtOrTrunc(bestIndex, kb.elemType(ElemType::I64)));
      b.CreateStore(best, prevSlot);
      b.CreateStore(bestIndex, prevIndexSlot);
    });
  });
  return workgroupsFor(l.outer * l.inner, l.extent * (k > 0 ? k : 1));
}

uint32_t emitGatherElements(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const std::vector<int64_t>& ds = d.inputs[0].shape;
  const std::vector<int64_t>& is = d.inputs[1].shape;
  const ElemType type = d.output.type, indexType = d.inputs[1].type;
  const std::vector<int64_t> dataStrides = rowMajorStrides(ds);
  const int64_t count = d.output.elementCount();
  const int64_t extent = ds[d.axis];
  kb.forWorkgroupShare(count, [&](llvm::Value* item) {
    std::vector<llvm::Value*> coords = kb.decompose(item, is);
    // Negative indices count from the end; out-of-range ones are clamped (never read outside).
    llvm::Value* idx = b.CreateSExtOrTrunc(kb.load(1, indexType, item), kb.indexType());
    idx =
        b.CreateSelect(b.CreateICmpSLT(idx, kb.index(0)), b.CreateAdd(idx, kb.index(extent)), idx);
    coords[d.axis] = kb.minValue(kb.maxValue(idx, kb.index(0)), kb.index(extent - 1));
    kb.store(kb.outputBinding(), type, item, kb.load(0, type, kb.linearize(coords, dataStrides)));
  });
  return workgroupsFor(count, 1);
}

// One workgroup, in order (later updates of the same element win, as in ONNX's reference):
// the data is copied, then each index tuple's slice is overwritten by its updates.
uint32_t emitScatterND(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const std::vector<int64_t>& ds = d.inputs[0].shape;
  const std::vector<int64_t>& is = d.inputs[1].shape;
  const ElemType type = d.output.type, indexType = d.inputs[1].type;
  const unsigned out = kb.outputBinding();
  const size_t k = static_cast<size_t>(is.back());
  const std::vector<int64_t> strides = rowMajorStrides(ds);
  int64_t tuples = 1, slice = 1;
  for (size_t i = 0; i + 1 < is.size(); ++i) tuples *= is[i];
  for (size_t i = k; i < ds.size(); ++i) slice *= ds[i];
  kb.forWorkgroupShare(1, [&](llvm::Value*) {
    kb.forRange(0, d.output.elementCount(),
                [&](llvm::Value* i) { kb.store(out, type, i, kb.load(0, type, i)); });
    kb.forRange(0, tuples, [&](llvm::Value* t) {
      llvm::Value* base = kb.index(0);
      for (size_t j = 0; j < k; ++j) {
        llvm::Value* at = b.CreateAdd(b.CreateMul(t, kb.index(int64_t(k))), kb.index(int64_t(j)));
        llvm::Value* idx = b.CreateSExtOrTrunc(kb.load(1, indexType, at), kb.indexType());
        idx = b.CreateSelect(b.CreateICmpSLT(idx, kb.index(0)), b.CreateAdd(idx, kb.index(ds[j])),
                             idx);
        idx = kb.minValue(kb.maxValue(idx, kb.index(0)), kb.index(ds[j] - 1));
        base = b.CreateAdd(base, b.CreateMul(idx, kb.index(strides[j])));
      }
      llvm::Value* from = b.CreateMul(t, kb.index(slice));
      kb.forRange(0, slice, [&](llvm::Value* e) {
        kb.store(out, type, b.CreateAdd(base, e), kb.load(2, type, b.CreateAdd(from, e)));
      });
    });
  });
  return 1;
}

}  // namespace kiln::codegen::detail
