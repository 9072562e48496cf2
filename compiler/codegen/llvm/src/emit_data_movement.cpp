// Data movement kernels: Transpose, Concat, Split, Slice, Gather, Pad and Tile. Transpose,
// Concat, Split and Slice are strided copies: the output is walked row by row (the innermost
// axis is a loop, the outer axes are split over workgroups) and each element is read at an
// affine input offset.
// Any dtype: elements are copied as integers of their size.
#include "codegen_error.h"
#include "emitters.h"
#include "fused_epilogue.h"
#include "kernel_builder.h"

namespace kiln::codegen::detail {
namespace {

// Copy of `extents` elements: dst[dstBase + sum c_i dstStrides_i] = src[srcBase + sum c_i
// srcStrides_i]. Outer axes are split over workgroups.
struct StridedCopy {
  unsigned src = 0;
  int dst = -1;  // binding written; -1 = the kernel's output
  int64_t srcBase = 0, dstBase = 0;
  std::vector<int64_t> extents, srcStrides, dstStrides;
};

int64_t outerCount(const StridedCopy& copy) {
  int64_t outer = 1;
  for (size_t i = 0; i + 1 < copy.extents.size(); ++i) outer *= copy.extents[i];
  return outer;
}

void emitCopyRow(KernelBuilder& kb, const StridedCopy& copy, ElemType type, llvm::Value* o) {
  llvm::IRBuilder<>& b = kb.b();
  size_t rank = copy.extents.size();
  std::vector<int64_t> outerExtents(copy.extents.begin(), copy.extents.end() - 1);
  std::vector<llvm::Value*> coords =
      outerExtents.empty() ? std::vector<llvm::Value*>{} : kb.decompose(o, outerExtents);
  llvm::Value* src = b.CreateAdd(
      kb.index(copy.srcBase),
      kb.linearize(coords,
                   std::vector<int64_t>(copy.srcStrides.begin(), copy.srcStrides.end() - 1)));
  llvm::Value* dst = b.CreateAdd(
      kb.index(copy.dstBase),
      kb.linearize(coords,
                   std::vector<int64_t>(copy.dstStrides.begin(), copy.dstStrides.end() - 1)));
  int64_t srcStep = copy.srcStrides[rank - 1], dstStep = copy.dstStrides[rank - 1];
  kb.forRange(0, copy.extents[rank - 1], [&](llvm::Value* j) {
    llvm::Value* value =
        kb.load(copy.src, type, b.CreateAdd(src, b.CreateMul(j, kb.index(srcStep))));
    unsigned target = copy.dst < 0 ? kb.outputBinding() : static_cast<unsigned>(copy.dst);
    kb.store(target, type, b.CreateAdd(dst, b.CreateMul(j, kb.index(dstStep))), value);
  });
}

uint32_t emitCopies(KernelBuilder& kb, const std::vector<StridedCopy>& copies) {
  int64_t maxOuter = 1;
  for (const StridedCopy& copy : copies) {
    int64_t outer = outerCount(copy);
    maxOuter = std::max(maxOuter, outer);
    kb.forWorkgroupShare(outer,
                         [&](llvm::Value* o) { emitCopyRow(kb, copy, kb.desc().output.type, o); });
  }
  return workgroupsFor(maxOuter, copies.empty() ? 1 : copies[0].extents.back());
}

// A rank-0 copy becomes a copy of one element.
void ensureRank(StridedCopy& copy) {
  if (!copy.extents.empty()) return;
  copy.extents = {1};
  copy.srcStrides = {0};
  copy.dstStrides = {0};
}

}  // namespace

uint32_t emitTranspose(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  std::vector<int64_t> inStrides = rowMajorStrides(d.inputs[0].shape);
  StridedCopy copy;
  copy.extents = d.output.shape;
  copy.dstStrides = rowMajorStrides(d.output.shape);
  for (int64_t axis : d.perm) copy.srcStrides.push_back(inStrides[axis]);
  ensureRank(copy);
  return emitCopies(kb, {copy});
}

uint32_t emitSlice(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  std::vector<int64_t> inStrides = rowMajorStrides(d.inputs[0].shape);
  StridedCopy copy;
  copy.extents = d.output.shape;
  copy.dstStrides = rowMajorStrides(d.output.shape);
  for (size_t i = 0; i < inStrides.size(); ++i) {
    copy.srcBase += d.starts[i] * inStrides[i];
    copy.srcStrides.push_back(d.steps[i] * inStrides[i]);
  }
  ensureRank(copy);
  return emitCopies(kb, {copy});
}

uint32_t emitConcat(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  std::vector<int64_t> outStrides = rowMajorStrides(d.output.shape);
  std::vector<StridedCopy> copies;
  int64_t offset = 0;
  for (size_t i = 0; i < d.inputs.size(); ++i) {
    const std::vector<int64_t>& shape = d.inputs[i].shape;
    if (shape[d.axis] > 0) {
      StridedCopy copy;
      copy.src = static_cast<unsigned>(i);
      copy.extents = shape;
      copy.srcStrides = rowMajorStrides(shape);
      copy.dstStrides = outStrides;
      copy.dstBase = offset * outStrides[d.axis];
      copies.push_back(copy);
    }
    offset += shape[d.axis];
  }
  return emitCopies(kb, copies);
}

uint32_t emitSplit(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  std::vector<int64_t> inStrides = rowMajorStrides(d.inputs[0].shape);
  std::vector<StridedCopy> copies;
  int64_t offset = 0;
  for (size_t i = 0; i <= d.extraOutputs.size(); ++i) {
    const BufferDesc& out = i == 0 ? d.output : d.extraOutputs[i - 1];
    if (out.shape[d.axis] > 0) {
      StridedCopy copy;
      copy.dst = static_cast<int>(kb.outputBinding() + i);
      copy.extents = out.shape;
      copy.srcStrides = inStrides;
      copy.dstStrides = rowMajorStrides(out.shape);
      copy.srcBase = offset * inStrides[d.axis];
      copies.push_back(copy);
    }
    offset += out.shape[d.axis];
  }
  return emitCopies(kb, copies);
}

uint32_t emitTile(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  const std::vector<int64_t>& ys = d.output.shape;
  const ElemType type = d.output.type;
  std::vector<int64_t> xStrides = rowMajorStrides(xs);
  if (ys.empty()) {
    kb.forWorkgroupShare(1, [&](llvm::Value*) {
      kb.store(kb.outputBinding(), type, kb.index(0), kb.load(0, type, kb.index(0)));
    });
    return 1;
  }
  size_t rank = ys.size();
  std::vector<int64_t> outerExtents(ys.begin(), ys.end() - 1);
  int64_t outer = 1;
  for (int64_t e : outerExtents) outer *= e;
  kb.forWorkgroupShare(outer, [&](llvm::Value* o) {
    std::vector<llvm::Value*> coords =
        outerExtents.empty() ? std::vector<llvm::Value*>{} : kb.decompose(o, outerExtents);
    llvm::Value* src = kb.index(0);
    for (size_t axis = 0; axis + 1 < rank; ++axis) {
      llvm::Value* i = b.CreateURem(coords[axis], kb.index(xs[axis]));
      src = b.CreateAdd(src, b.CreateMul(i, kb.index(xStrides[axis])));
    }
    llvm::Value* dst = b.CreateMul(o, kb.index(ys[rank - 1]));
    kb.forRange(0, ys[rank - 1], [&](llvm::Value* j) {
      llvm::Value* i = b.CreateURem(j, kb.index(xs[rank - 1]));
      kb.store(kb.outputBinding(), type, b.CreateAdd(dst, j),
               kb.load(0, type, b.CreateAdd(src, i)));
    });
  });
  return workgroupsFor(outer, ys[rank - 1]);
}

// Gathers of runs shorter than this walk each outer row's indices in one item.
constexpr int64_t kMinGatherRun = 8;

uint32_t emitGather(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const std::vector<int64_t>& ds = d.inputs[0].shape;
  const ElemType indexType = d.inputs[1].type;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d.axis; ++i) outer *= ds[i];
  for (size_t i = d.axis + 1; i < ds.size(); ++i) inner *= ds[i];
  const int64_t A = ds[d.axis];
  const int64_t count = d.inputs[1].elementCount();
  const ElemType type = d.output.type;
  // A fused chain (Resize: the tap's weight, the other tap's term) over the rows just written:
  // every run of a gather is whole rows of the output's last axis.
  FusedEpilogue epilogue(kb);
  const int64_t lastDim = d.output.shape.empty() ? 1 : d.output.shape.back();
  auto applyRows = [&](llvm::Value* start, int64_t elements) {
    if (epilogue.empty()) return;
    for (int64_t r = 0; r < elements / lastDim; ++r)
      epilogue.applyToRow(b.CreateAdd(start, kb.index(r * lastDim)), lastDim);
  };
  // Negative indices count from the end; out-of-range ones are clamped (never read outside).
  auto indexAt = [&](llvm::Value* k) {
    llvm::Value* idx = b.CreateSExtOrTrunc(kb.load(1, indexType, k), kb.indexType());
    idx = b.CreateSelect(b.CreateICmpSLT(idx, kb.index(0)), b.CreateAdd(idx, kb.index(A)), idx);
    return kb.minValue(kb.maxValue(idx, kb.index(0)), kb.index(A - 1));
  };
  // Runs of a few elements (a gather along the last axes: Resize's per-axis gathers, 16K
  // elements of a segmentation net in 24 us with a division per element): one item per
  // outer row, every index of it in a loop.
  if (inner < kMinGatherRun) {
    kb.forWorkgroupShare(outer, [&](llvm::Value* o) {
      llvm::Value* rowIn = b.CreateMul(o, kb.index(A * inner));
      llvm::Value* rowOut = b.CreateMul(o, kb.index(count * inner));
      kb.forRange(0, count, [&](llvm::Value* k) {
        llvm::Value* src = b.CreateAdd(rowIn, b.CreateMul(indexAt(k), kb.index(inner)));
        llvm::Value* dst = b.CreateAdd(rowOut, b.CreateMul(k, kb.index(inner)));
        for (int64_t j = 0; j < inner; ++j)
          kb.store(kb.outputBinding(), type, b.CreateAdd(dst, kb.index(j)),
                   kb.load(0, type, b.CreateAdd(src, kb.index(j))));
      });
      applyRows(rowOut, count * inner);
    });
    return workgroupsFor(outer, count * inner);
  }
  kb.forWorkgroupShare(outer * count, [&](llvm::Value* item) {
    llvm::Value* o = b.CreateUDiv(item, kb.index(count));
    llvm::Value* k = b.CreateURem(item, kb.index(count));
    llvm::Value* src =
        b.CreateMul(b.CreateAdd(b.CreateMul(o, kb.index(A)), indexAt(k)), kb.index(inner));
    llvm::Value* dst = b.CreateMul(item, kb.index(inner));
    kb.forRange(0, inner, [&](llvm::Value* j) {
      kb.store(kb.outputBinding(), type, b.CreateAdd(dst, j),
               kb.load(0, type, b.CreateAdd(src, j)));
    });
    applyRows(dst, inner);
  });
  return workgroupsFor(outer * count, inner);
}

uint32_t emitPad(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  const std::vector<int64_t>& ys = d.output.shape;
  const ElemType type = d.output.type;
  std::vector<int64_t> xStrides = rowMajorStrides(xs);
  size_t rank = ys.size();
  std::vector<int64_t> outerExtents(ys.begin(), ys.end() - 1);
  int64_t outer = 1;
  for (int64_t e : outerExtents) outer *= e;

  // Input coordinate of output coordinate c on an axis (c - before), mapped into [0, n) by
  // the mode; `inside` tells whether it was there already (constant mode needs it).
  auto mapAxis = [&](llvm::Value* c, size_t axis, llvm::Value*& inside) {
    int64_t n = xs[axis];
    llvm::Value* i = b.CreateSub(c, kb.index(d.starts[axis]));
    inside = b.CreateAnd(b.CreateICmpSGE(i, kb.index(0)), b.CreateICmpSLT(i, kb.index(n)));
    if (d.padMode == PadMode::Edge || d.padMode == PadMode::Constant) {
      return kb.minValue(kb.maxValue(i, kb.index(0)), kb.index(n - 1));
    }
    // Reflect, periodic like numpy for pads longer than the axis: fold into [0, 2(n-1)).
    if (n == 1) return kb.index(0);
    llvm::Value* period = kb.index(2 * (n - 1));
    i = b.CreateSRem(i, period);
    i = b.CreateSelect(b.CreateICmpSLT(i, kb.index(0)), b.CreateAdd(i, period), i);
    return b.CreateSelect(b.CreateICmpSGE(i, kb.index(n)), b.CreateSub(period, i), i);
  };

  kb.forWorkgroupShare(outer, [&](llvm::Value* o) {
    std::vector<llvm::Value*> coords =
        outerExtents.empty() ? std::vector<llvm::Value*>{} : kb.decompose(o, outerExtents);
    llvm::Value* rowInside = b.getTrue();
    llvm::Value* src = kb.index(0);
    for (size_t axis = 0; axis + 1 < rank; ++axis) {
      llvm::Value* inside;
      llvm::Value* i = mapAxis(coords[axis], axis, inside);
      rowInside = b.CreateAnd(rowInside, inside);
      src = b.CreateAdd(src, b.CreateMul(i, kb.index(xStrides[axis])));
    }
    llvm::Value* dst = b.CreateMul(o, kb.index(ys[rank - 1]));
    kb.forRange(0, ys[rank - 1], [&](llvm::Value* j) {
      llvm::Value* inside;
      llvm::Value* i = mapAxis(j, rank - 1, inside);
      llvm::Value* value = kb.load(0, type, b.CreateAdd(src, i));
      if (d.padMode == PadMode::Constant) {
        value =
            b.CreateSelect(b.CreateAnd(rowInside, inside), value, kb.constant(type, d.padValue));
      }
      kb.store(kb.outputBinding(), type, b.CreateAdd(dst, j), value);
    });
  });
  return workgroupsFor(outer, ys[rank - 1]);
}

}  // namespace kiln::codegen::detail
