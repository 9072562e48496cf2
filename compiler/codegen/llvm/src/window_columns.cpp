// forEachWindowColumn: the bounds-free column loops of plain convolution and pooling
// (see window_columns.h).
#include "window_columns.h"

namespace kiln::codegen::detail {
namespace {

void unrolled(KernelBuilder& kb, const WindowColumns& w, const WindowColumnSetup& perColumn,
              const WindowColumnBody& body) {
  llvm::IRBuilder<>& b = kb.b();
  for (int64_t kw = 0; kw < w.kernel; ++kw) {
    int64_t shift = kw * w.dilation - w.padBegin;  // iw = ow * stride + shift
    int64_t first = shift >= 0 ? 0 : (-shift + w.stride - 1) / w.stride;
    int64_t last = (w.inWidth - 1 - shift) >= 0 ? (w.inWidth - 1 - shift) / w.stride : -1;
    if (last >= w.outWidth) last = w.outWidth - 1;
    if (first > last) continue;
    llvm::Value* columnValue = perColumn(kb.index(kw));
    kb.forRange(first, last + 1, [&](llvm::Value* ow) {
      body(ow, b.CreateAdd(b.CreateMul(ow, kb.index(w.stride)), kb.index(shift)), columnValue);
    });
  }
}

void looped(KernelBuilder& kb, const WindowColumns& w, const WindowColumnSetup& perColumn,
              const WindowColumnBody& body) {
  llvm::IRBuilder<>& b = kb.b();
  kb.forRange(0, w.kernel, [&](llvm::Value* kw) {
    llvm::Value* shift =
        b.CreateSub(b.CreateMul(kw, kb.index(w.dilation)), kb.index(w.padBegin));
    // first = shift >= 0 ? 0 : ceil(-shift / stride)
    llvm::Value* negative = b.CreateICmpSLT(shift, kb.index(0));
    llvm::Value* up = b.CreateSDiv(b.CreateSub(kb.index(w.stride - 1), shift), kb.index(w.stride));
    llvm::Value* first = b.CreateSelect(negative, up, kb.index(0));
    // end = rest >= 0 ? min(outWidth, rest / stride + 1) : 0, with rest = inWidth - 1 - shift
    llvm::Value* rest = b.CreateSub(kb.index(w.inWidth - 1), shift);
    llvm::Value* count = b.CreateAdd(b.CreateSDiv(rest, kb.index(w.stride)), kb.index(1));
    llvm::Value* clamped =
        b.CreateSelect(b.CreateICmpSLT(count, kb.index(w.outWidth)), count, kb.index(w.outWidth));
    llvm::Value* end =
        b.CreateSelect(b.CreateICmpSGE(rest, kb.index(0)), clamped, kb.index(0));
    llvm::Value* columnValue = perColumn(kw);
    kb.forRange(first, end, [&](llvm::Value* ow) {
      body(ow, b.CreateAdd(b.CreateMul(ow, kb.index(w.stride)), shift), columnValue);
    });
  });
}

}  // namespace

void forEachWindowColumn(KernelBuilder& kb, const WindowColumns& w,
                         const WindowColumnSetup& perColumn, const WindowColumnBody& body) {
  if (w.kernel <= kMaxUnrolledWindowColumns)
    unrolled(kb, w, perColumn, body);
  else
    looped(kb, w, perColumn, body);
}

}  // namespace kiln::codegen::detail
