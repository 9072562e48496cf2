// 2-D convolution (NCHW, weights OIHW, groups incl. depthwise, strides, dilations, pads) with
// optional bias and a fused activation. Plain form: each workgroup item is one output row
// (n, oc, oh); the row is accumulated in place, one (ic, kh, kw) tap at a time, over the
// range of output columns whose input column is inside the image. That inner loop has no
// bounds checks and vectorises. A tiled, weight-packed kernel replaces this later.
#include "emitters.h"
#include "kernel_builder.h"

namespace kiln::codegen::detail {

uint32_t emitConv(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const std::vector<int64_t>& xs = d.inputs[0].shape;  // N C H W
  const std::vector<int64_t>& ws = d.inputs[1].shape;  // OC C/g KH KW
  const std::vector<int64_t>& ys = d.output.shape;     // N OC OH OW
  const int64_t C = xs[1], H = xs[2], W = xs[3];
  const int64_t OC = ws[0], CG = ws[1], KH = ws[2], KW = ws[3];
  const int64_t OH = ys[2], OW = ys[3];
  const int64_t OCG = OC / d.groups;
  const int64_t sh = d.strides[0], sw = d.strides[1], dh = d.dilations[0], dw = d.dilations[1];
  const int64_t padTop = d.pads[0], padLeft = d.pads[1];
  const bool hasBias = d.inputs.size() > 2;
  const unsigned out = kb.outputBinding();
  const ElemType f32 = ElemType::F32;

  const int64_t rows = ys[0] * OC * OH;
  kb.forWorkgroupShare(rows, [&](llvm::Value* row) {
    std::vector<llvm::Value*> c = kb.decompose(row, {ys[0], OC, OH});
    llvm::Value *n = c[0], *oc = c[1], *oh = c[2];
    llvm::Value* group = b.CreateUDiv(oc, kb.index(OCG));
    llvm::Value* rowBase = b.CreateMul(row, kb.index(OW));
    llvm::Value* init = hasBias ? kb.load(2, f32, oc) : kb.f32(0.0f);
    kb.forRange(0, OW, [&](llvm::Value* ow) {
      kb.store(out, f32, b.CreateAdd(rowBase, ow), init);
    });
    // Input channel block of this group, and this output channel's filter.
    llvm::Value* xBatch = b.CreateMul(n, kb.index(C * H * W));
    llvm::Value* firstChannel = b.CreateMul(group, kb.index(CG));
    llvm::Value* filter = b.CreateMul(oc, kb.index(CG * KH * KW));
    kb.forRange(0, CG, [&](llvm::Value* ic) {
      llvm::Value* plane = b.CreateAdd(
          xBatch, b.CreateMul(b.CreateAdd(firstChannel, ic), kb.index(H * W)));
      llvm::Value* filterChannel = b.CreateAdd(filter, b.CreateMul(ic, kb.index(KH * KW)));
      kb.forRange(0, KH, [&](llvm::Value* kh) {
        llvm::Value* ih = b.CreateAdd(b.CreateSub(b.CreateMul(oh, kb.index(sh)), kb.index(padTop)),
                                      b.CreateMul(kh, kb.index(dh)));
        llvm::Value* inside =
            b.CreateAnd(b.CreateICmpSGE(ih, kb.index(0)), b.CreateICmpSLT(ih, kb.index(H)));
        kb.ifThen(inside, [&] {
          llvm::Value* inRow = b.CreateAdd(plane, b.CreateMul(ih, kb.index(W)));
          llvm::Value* tapRow = b.CreateAdd(filterChannel, b.CreateMul(kh, kb.index(KW)));
          // Columns are unrolled at compile time: each tap's valid range is a constant.
          for (int64_t kw = 0; kw < KW; ++kw) {
            int64_t shift = kw * dw - padLeft;  // iw = ow * sw + shift
            int64_t first = shift >= 0 ? 0 : (-shift + sw - 1) / sw;
            int64_t last = (W - 1 - shift) >= 0 ? (W - 1 - shift) / sw : -1;  // inclusive
            if (last >= OW) last = OW - 1;
            if (first > last) continue;
            llvm::Value* weight = kb.load(1, f32, b.CreateAdd(tapRow, kb.index(kw)));
            kb.forRange(first, last + 1, [&](llvm::Value* ow) {
              llvm::Value* iw = b.CreateAdd(b.CreateMul(ow, kb.index(sw)), kb.index(shift));
              llvm::Value* x = kb.load(0, f32, b.CreateAdd(inRow, iw));
              llvm::Value* at = b.CreateAdd(rowBase, ow);
              llvm::Value* sum = b.CreateFAdd(kb.load(out, f32, at), b.CreateFMul(x, weight));
              kb.store(out, f32, at, sum);
            });
          }
        });
      });
    });
    if (d.epilogue.act != Activation::None) {
      kb.forRange(0, OW, [&](llvm::Value* ow) {
        llvm::Value* at = b.CreateAdd(rowBase, ow);
        kb.store(out, f32, at, kb.applyEpilogue(d.epilogue, kb.load(out, f32, at)));
      });
    }
  });
  return workgroupsFor(rows, OW * CG * KH * KW);
}

}  // namespace kiln::codegen::detail
