// Max and average pooling over NCHW or NCDHW (kernel, strides, dilations, pads; ceil mode is
// already in the output shape). Same shape as the plain convolution: each workgroup item is
// one output row, combined in place tap by tap over the columns whose input is inside the
// image; the average divides by the number of taps counted (padding included or not).
#include "emitters.h"
#include "fused_epilogue.h"
#include "kernel_builder.h"
#include "window_columns.h"

namespace kiln::codegen::detail {
namespace {

// Number of taps k in [0, kernel) with position start + k * dilation in [lo, hi).
llvm::Value* tapCount(KernelBuilder& kb, llvm::Value* start, int64_t kernel, int64_t dilation,
                      int64_t lo, int64_t hi) {
  llvm::IRBuilder<>& b = kb.b();
  llvm::Value* count = kb.index(0);
  for (int64_t k = 0; k < kernel; ++k) {
    llvm::Value* pos = b.CreateAdd(start, kb.index(k * dilation));
    llvm::Value* inside =
        b.CreateAnd(b.CreateICmpSGE(pos, kb.index(lo)), b.CreateICmpSLT(pos, kb.index(hi)));
    count = b.CreateAdd(count, b.CreateZExt(inside, kb.indexType()));
  }
  return count;
}

}  // namespace

uint32_t emitPool(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const ElemType f32 = ElemType::F32;
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  const std::vector<int64_t>& ys = d.output.shape;
  const bool volume = xs.size() == 5;
  const size_t r = xs.size();
  const int64_t D = volume ? xs[2] : 1, H = xs[r - 2], W = xs[r - 1];
  const int64_t OD = volume ? ys[2] : 1, OH = ys[r - 2], OW = ys[r - 1];
  const int64_t KD = volume ? d.depthKernel : 1, KH = d.kernelShape[0], KW = d.kernelShape[1];
  const int64_t sh = d.strides[0], sw = d.strides[1], dh = d.dilations[0], dw = d.dilations[1];
  const int64_t sd = d.depthStride, dd = d.depthDilation;
  const int64_t padTop = d.pads[0], padLeft = d.pads[1];
  const int64_t padBottom = d.pads[2], padRight = d.pads[3];
  const int64_t padFront = d.depthPadBegin, padBack = d.depthPadEnd;
  const bool isMax = d.poolKind == PoolKind::Max;
  const unsigned out = kb.outputBinding();

  const int64_t rows = ys[0] * ys[1] * OD * OH;
  FusedEpilogue epilogue(kb);
  kb.forWorkgroupShare(rows, [&](llvm::Value* row) {
    std::vector<llvm::Value*> c = kb.decompose(row, {ys[0] * ys[1], OD, OH});
    llvm::Value *plane = c[0], *od = c[1], *oh = c[2];  // plane = n * C + c
    llvm::Value* inPlane = b.CreateMul(plane, kb.index(D * H * W));
    llvm::Value* rowBase = b.CreateMul(row, kb.index(OW));
    llvm::Value* init = kb.f32(isMax ? -__builtin_inff() : 0.0f);
    kb.forRange(0, OW,
                [&](llvm::Value* ow) { kb.store(out, f32, b.CreateAdd(rowBase, ow), init); });
    llvm::Value* idStart = b.CreateSub(b.CreateMul(od, kb.index(sd)), kb.index(padFront));
    llvm::Value* ihStart = b.CreateSub(b.CreateMul(oh, kb.index(sh)), kb.index(padTop));
    kb.forRange(0, KD * KH, [&](llvm::Value* tap) {
      llvm::Value* kd = b.CreateUDiv(tap, kb.index(KH));
      llvm::Value* kh = b.CreateURem(tap, kb.index(KH));
      llvm::Value* id = b.CreateAdd(idStart, b.CreateMul(kd, kb.index(dd)));
      llvm::Value* ih = b.CreateAdd(ihStart, b.CreateMul(kh, kb.index(dh)));
      llvm::Value* inside = b.CreateAnd(
          b.CreateAnd(b.CreateICmpSGE(id, kb.index(0)), b.CreateICmpSLT(id, kb.index(D))),
          b.CreateAnd(b.CreateICmpSGE(ih, kb.index(0)), b.CreateICmpSLT(ih, kb.index(H))));
      kb.ifThen(inside, [&] {
        llvm::Value* inRow = b.CreateAdd(
            inPlane, b.CreateMul(b.CreateAdd(b.CreateMul(id, kb.index(H)), ih), kb.index(W)));
        WindowColumns columns{KW, sw, dw, padLeft, W, OW};
        forEachWindowColumn(
            kb, columns, [](llvm::Value*) -> llvm::Value* { return nullptr; },
            [&](llvm::Value* ow, llvm::Value* iw, llvm::Value*) {
              llvm::Value* x = kb.load(0, f32, b.CreateAdd(inRow, iw));
              llvm::Value* at = b.CreateAdd(rowBase, ow);
              llvm::Value* acc = kb.load(out, f32, at);
              kb.store(out, f32, at, isMax ? kb.maxValue(x, acc) : b.CreateFAdd(acc, x));
            });
      });
    });
    if (!isMax) {
      // Divisor: taps inside the image, or inside the padded image with count_include_pad.
      bool all = d.countIncludePad;
      llvm::Value* planesCounted =
          tapCount(kb, idStart, KD, dd, all ? -padFront : 0, all ? D + padBack : D);
      llvm::Value* rowsCounted = b.CreateMul(
          planesCounted, tapCount(kb, ihStart, KH, dh, all ? -padTop : 0, all ? H + padBottom : H));
      kb.forRange(0, OW, [&](llvm::Value* ow) {
        llvm::Value* iwStart = b.CreateSub(b.CreateMul(ow, kb.index(sw)), kb.index(padLeft));
        llvm::Value* taps = b.CreateMul(
            rowsCounted, tapCount(kb, iwStart, KW, dw, all ? -padLeft : 0, all ? W + padRight : W));
        llvm::Value* divisor = b.CreateSIToFP(
            b.CreateSelect(b.CreateICmpEQ(taps, kb.index(0)), kb.index(1), taps), b.getFloatTy());
        llvm::Value* at = b.CreateAdd(rowBase, ow);
        kb.store(out, f32, at, b.CreateFDiv(kb.load(out, f32, at), divisor));
      });
    }
    epilogue.applyToRow(rowBase, OW);
  });
  return workgroupsFor(rows, OW * KD * KH * KW);
}

}  // namespace kiln::codegen::detail
