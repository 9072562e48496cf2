// Transposed convolution over NCHW or NCDHW (weights C x OC/g x (KD) x KH x KW; groups,
// strides, dilations, pads, output_padding already in the output shape) with optional bias.
// Gather form, so that workgroups never write the same element: each workgroup item is one
// output row (n, oc, od, oh). Input row ih feeds output row oh through kernel row kh when
// ih * stride = oh + padTop - kh * dilation; for each such (ic, kd, kh, kw) the input row is
// scattered into the output row at ow = iw * sw + kw * dw - padLeft (within the row only).
#include "emitters.h"
#include "kernel_builder.h"

namespace kiln::codegen::detail {
namespace {

// Input position feeding output position `o` through kernel tap `k`: (o + pad - k * dil) /
// stride when that is a whole number in [0, size); `valid` says whether it is.
llvm::Value* sourcePosition(KernelBuilder& kb, llvm::Value* o, llvm::Value* k, int64_t pad,
                            int64_t dilation, int64_t stride, int64_t size, llvm::Value*& valid) {
  llvm::IRBuilder<>& b = kb.b();
  llvm::Value* num = b.CreateSub(b.CreateAdd(o, kb.index(pad)), b.CreateMul(k, kb.index(dilation)));
  llvm::Value* nonNegative = b.CreateICmpSGE(num, kb.index(0));
  // Clamp before dividing so that the unsigned division below never sees a negative value.
  llvm::Value* safe = b.CreateSelect(nonNegative, num, kb.index(0));
  llvm::Value* pos = b.CreateUDiv(safe, kb.index(stride));
  llvm::Value* whole = b.CreateICmpEQ(b.CreateURem(safe, kb.index(stride)), kb.index(0));
  valid = b.CreateAnd(b.CreateAnd(nonNegative, whole), b.CreateICmpULT(pos, kb.index(size)));
  return pos;
}

}  // namespace

uint32_t emitConvTranspose(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const std::vector<int64_t>& xs = d.inputs[0].shape;  // N C (D) H W
  const std::vector<int64_t>& ws = d.inputs[1].shape;  // C OC/g (KD) KH KW
  const std::vector<int64_t>& ys = d.output.shape;     // N OC (OD) OH OW
  const bool volume = xs.size() == 5;
  const size_t r = xs.size();
  const int64_t C = xs[1], D = volume ? xs[2] : 1, H = xs[r - 2], W = xs[r - 1];
  const int64_t OCG = ws[1], KD = volume ? ws[2] : 1, KH = ws[r - 2], KW = ws[r - 1];
  const int64_t OC = ys[1], OD = volume ? ys[2] : 1, OH = ys[r - 2], OW = ys[r - 1];
  const int64_t CG = C / d.groups;
  const int64_t sh = d.strides[0], sw = d.strides[1], dh = d.dilations[0], dw = d.dilations[1];
  const int64_t padTop = d.pads[0], padLeft = d.pads[1];
  const int64_t sd = d.depthStride, dd = d.depthDilation, padFront = d.depthPadBegin;
  const bool hasBias = d.inputs.size() > 2;
  const unsigned out = kb.outputBinding();
  const ElemType f32 = ElemType::F32;

  const int64_t rows = ys[0] * OC * OD * OH;
  kb.forWorkgroupShare(rows, [&](llvm::Value* row) {
    std::vector<llvm::Value*> c = kb.decompose(row, {ys[0], OC, OD, OH});
    llvm::Value *n = c[0], *oc = c[1], *od = c[2], *oh = c[3];
    llvm::Value* group = b.CreateUDiv(oc, kb.index(OCG));
    llvm::Value* ocInGroup = b.CreateURem(oc, kb.index(OCG));
    llvm::Value* rowBase = b.CreateMul(row, kb.index(OW));
    llvm::Value* init = hasBias ? kb.load(2, f32, oc) : kb.f32(0.0f);
    kb.forRange(0, OW,
                [&](llvm::Value* ow) { kb.store(out, f32, b.CreateAdd(rowBase, ow), init); });
    llvm::Value* firstChannel =
        b.CreateAdd(b.CreateMul(n, kb.index(C)), b.CreateMul(group, kb.index(CG)));
    kb.forRange(0, KD * KH, [&](llvm::Value* tap) {
      llvm::Value* kd = b.CreateUDiv(tap, kb.index(KH));
      llvm::Value* kh = b.CreateURem(tap, kb.index(KH));
      llvm::Value *depthValid, *rowValid;
      llvm::Value* id = sourcePosition(kb, od, kd, padFront, dd, sd, D, depthValid);
      llvm::Value* ih = sourcePosition(kb, oh, kh, padTop, dh, sh, H, rowValid);
      kb.ifThen(b.CreateAnd(depthValid, rowValid), [&] {
        llvm::Value* planeRow = b.CreateAdd(b.CreateMul(id, kb.index(H)), ih);
        kb.forRange(0, CG, [&](llvm::Value* ic) {
          llvm::Value* channel = b.CreateAdd(firstChannel, ic);  // n * C + g * CG + ic
          llvm::Value* inRow = b.CreateMul(
              b.CreateAdd(b.CreateMul(channel, kb.index(D * H)), planeRow), kb.index(W));
          // Weight [g * CG + ic, ocInGroup, kd, kh, :].
          llvm::Value* wChannel = b.CreateAdd(b.CreateMul(group, kb.index(CG)), ic);
          llvm::Value* filter = b.CreateMul(
              b.CreateAdd(b.CreateMul(wChannel, kb.index(OCG)), ocInGroup), kb.index(KD * KH * KW));
          llvm::Value* tapRow = b.CreateAdd(filter, b.CreateMul(tap, kb.index(KW)));
          kb.forRange(0, KW, [&](llvm::Value* kw) {
            llvm::Value* weight = kb.load(1, f32, b.CreateAdd(tapRow, kw));
            llvm::Value* shift = b.CreateSub(b.CreateMul(kw, kb.index(dw)), kb.index(padLeft));
            kb.forRange(0, W, [&](llvm::Value* iw) {
              llvm::Value* ow = b.CreateAdd(b.CreateMul(iw, kb.index(sw)), shift);
              llvm::Value* inside =
                  b.CreateAnd(b.CreateICmpSGE(ow, kb.index(0)), b.CreateICmpSLT(ow, kb.index(OW)));
              kb.ifThen(inside, [&] {
                llvm::Value* x = kb.load(0, f32, b.CreateAdd(inRow, iw));
                llvm::Value* at = b.CreateAdd(rowBase, ow);
                kb.store(out, f32, at,
                         b.CreateFAdd(kb.load(out, f32, at), b.CreateFMul(x, weight)));
              });
            });
          });
        });
      });
    });
  });
  return workgroupsFor(rows, OW * CG * KD * KH * KW);
}

}  // namespace kiln::codegen::detail
