// Convolution over NCHW or NCDHW (weights OIHW / OIDHW; groups incl. depthwise, strides,
// dilations, pads) with optional bias and a fused activation. Plain form: each workgroup item
// is one output row (n, oc, od, oh); the row is accumulated in place, one (ic, kd, kh, kw) tap
// at a time, over the range of output columns whose input column is inside the image. That
// inner loop has no bounds checks and vectorises. A tiled, weight-packed kernel replaces this
// later.
#include "emitters.h"
#include "fused_epilogue.h"
#include "kernel_builder.h"
#include "window_columns.h"

namespace kiln::codegen::detail {

uint32_t emitConv(KernelBuilder& kb) {
  if (kb.desc().weightLayout == ConvWeights::Winograd ||
      kb.desc().weightLayout == ConvWeights::WinogradPanels)
    return emitConvWinograd(kb);
  uint32_t tiledWorkgroups = 0;
  if (emitConvGemmOc(kb, tiledWorkgroups)) return tiledWorkgroups;
  if (emitConvGemm(kb, tiledWorkgroups)) return tiledWorkgroups;
  if (emitConvTiled(kb, tiledWorkgroups)) return tiledWorkgroups;
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const std::vector<int64_t>& xs = d.inputs[0].shape;  // N C (D) H W
  const std::vector<int64_t>& ws = d.inputs[1].shape;  // OC C/g (KD) KH KW
  const std::vector<int64_t>& ys = d.output.shape;     // N OC (OD) OH OW
  const bool volume = xs.size() == 5;
  const size_t r = xs.size();
  const int64_t C = xs[1], D = volume ? xs[2] : 1, H = xs[r - 2], W = xs[r - 1];
  const int64_t OC = ws[0], CG = ws[1], KD = volume ? ws[2] : 1, KH = ws[r - 2], KW = ws[r - 1];
  const int64_t OD = volume ? ys[2] : 1, OH = ys[r - 2], OW = ys[r - 1];
  const int64_t OCG = OC / d.groups;
  const int64_t sh = d.strides[0], sw = d.strides[1], dh = d.dilations[0], dw = d.dilations[1];
  const int64_t padTop = d.pads[0], padLeft = d.pads[1];
  const int64_t sd = d.depthStride, dd = d.depthDilation, padFront = d.depthPadBegin;
  const bool hasBias = d.inputs.size() - d.epilogue.inputCount > 2;
  const unsigned out = kb.outputBinding();
  const ElemType f32 = ElemType::F32;

  const int64_t rows = ys[0] * OC * OD * OH;
  FusedEpilogue epilogue(kb);
  kb.forWorkgroupShare(rows, [&](llvm::Value* row) {
    std::vector<llvm::Value*> c = kb.decompose(row, {ys[0], OC, OD, OH});
    llvm::Value *n = c[0], *oc = c[1], *od = c[2], *oh = c[3];
    llvm::Value* group = b.CreateUDiv(oc, kb.index(OCG));
    llvm::Value* rowBase = b.CreateMul(row, kb.index(OW));
    llvm::Value* init = hasBias ? kb.load(2, f32, oc) : kb.f32(0.0f);
    kb.forRange(0, OW,
                [&](llvm::Value* ow) { kb.store(out, f32, b.CreateAdd(rowBase, ow), init); });
    // Input channel block of this group, and this output channel's filter.
    llvm::Value* xBatch = b.CreateMul(n, kb.index(C * D * H * W));
    llvm::Value* firstChannel = b.CreateMul(group, kb.index(CG));
    llvm::Value* filter = b.CreateMul(oc, kb.index(CG * KD * KH * KW));
    llvm::Value* idStart = b.CreateSub(b.CreateMul(od, kb.index(sd)), kb.index(padFront));
    llvm::Value* ihStart = b.CreateSub(b.CreateMul(oh, kb.index(sh)), kb.index(padTop));
    kb.forRange(0, CG, [&](llvm::Value* ic) {
      llvm::Value* volumeBase =
          b.CreateAdd(xBatch, b.CreateMul(b.CreateAdd(firstChannel, ic), kb.index(D * H * W)));
      llvm::Value* filterChannel = b.CreateAdd(filter, b.CreateMul(ic, kb.index(KD * KH * KW)));
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
              volumeBase, b.CreateMul(b.CreateAdd(b.CreateMul(id, kb.index(H)), ih), kb.index(W)));
          llvm::Value* tapRow = b.CreateAdd(filterChannel, b.CreateMul(tap, kb.index(KW)));
          WindowColumns columns{KW, sw, dw, padLeft, W, OW};
          forEachWindowColumn(
              kb, columns,
              [&](llvm::Value* kw) { return kb.load(1, f32, b.CreateAdd(tapRow, kw)); },
              [&](llvm::Value* ow, llvm::Value* iw, llvm::Value* weight) {
                llvm::Value* x = kb.load(0, f32, b.CreateAdd(inRow, iw));
                llvm::Value* at = b.CreateAdd(rowBase, ow);
                llvm::Value* sum = b.CreateFAdd(kb.load(out, f32, at), b.CreateFMul(x, weight));
                kb.store(out, f32, at, sum);
              });
        });
      });
    });
    epilogue.applyToRow(rowBase, OW);
  });
  return workgroupsFor(rows, OW * CG * KD * KH * KW);
}

}  // namespace kiln::codegen::detail
