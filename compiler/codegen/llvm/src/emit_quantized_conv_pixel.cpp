// Int8 convolutions with few input channels (the first layer of most vision and audio
// models: C = 1..3, where a tap's channels are too short for the dot-product kernels of
// emit_quantized_dot.cpp) on the targets that have those kernels: vectorised over the output
// channels instead. Each workgroup first copies the weights into a stack table in
// [tap][input channel][output channel] order; then, per output pixel, every input value
// inside the image is multiplied, minus its zero point, by the contiguous weights of all
// output channels and added to a stack array of i32 accumulators (one per output channel),
// a loop LLVM turns into vector code. Taps outside the image are skipped, as in TFLite's
// reference kernel; every product and sum is the same integer as in the plain loops.
#include "emit_quantized.h"
#include "emitters.h"

namespace kiln::codegen::detail {
namespace {

constexpr int64_t kMaxAccumulators = 1024;        // output channels (4 KB of i32)
constexpr int64_t kMaxTransposedWeights = 16384;  // bytes of the weight table

}  // namespace

bool quantizedConvByPixelApplies(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  if (kb.target().int8Dot == EmitTarget::Int8Dot::None || kb.target().optimizeForSize) return false;
  if (d.quant.op != QuantOp::Conv || d.groups != 1) return false;
  if (d.inputs[0].type != ElemType::I8 || d.inputs[1].type != ElemType::I8) return false;
  const std::vector<int64_t>& ws = d.inputs[1].shape;
  return ws[0] <= kMaxAccumulators && ws[0] * ws[1] * ws[2] * ws[3] <= kMaxTransposedWeights;
}

uint32_t emitQuantizedConvByPixel(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  const QuantDesc& q = d.quant;
  llvm::IRBuilder<>& ir = kb.b();
  const QWindowShape g = qConvShape(d);
  const int64_t taps = g.KH * g.KW * g.C;  // weights per output channel
  const QRescale rescale = qMakeRescale(kb);
  llvm::Type* i8 = ir.getInt8Ty();
  llvm::Type* i32 = ir.getInt32Ty();

  // wt[t * OC + oc] = w[oc * taps + t], t = (kh * KW + kw) * C + ic.
  llvm::Value* wt = kb.local(llvm::ArrayType::get(i8, uint64_t(taps * g.OC)), "wt");
  kb.forRange(0, g.OC, [&](llvm::Value* oc) {
    kb.forRange(0, taps, [&](llvm::Value* t) {
      llvm::Value* w = kb.load(1, ElemType::I8, ir.CreateAdd(ir.CreateMul(oc, kb.index(taps)), t));
      ir.CreateStore(
          w, ir.CreateInBoundsGEP(i8, wt, ir.CreateAdd(ir.CreateMul(t, kb.index(g.OC)), oc)));
    });
  });
  llvm::Value* accs = kb.local(llvm::ArrayType::get(i32, uint64_t(g.OC)), "accs");
  auto accAt = [&](llvm::Value* oc) { return ir.CreateInBoundsGEP(i32, accs, oc); };

  const int64_t rows = g.N * g.OH;
  kb.forWorkgroupShare(rows, [&](llvm::Value* row) {
    const QOutputRow start = qOutputRow(kb, g, row);
    llvm::Value *xBatch = start.xBatch, *ihStart = start.ihStart;
    kb.forRange(0, g.OW, [&](llvm::Value* ow) {
      llvm::Value* iwStart = ir.CreateSub(ir.CreateMul(ow, kb.index(g.sw)), kb.index(g.pl));
      kb.forRange(0, g.OC, [&](llvm::Value* oc) { ir.CreateStore(qConst(kb, 0), accAt(oc)); });
      kb.forRange(0, g.KH, [&](llvm::Value* kh) {
        llvm::Value* ih = ir.CreateAdd(ihStart, ir.CreateMul(kh, kb.index(g.dh)));
        kb.ifThen(qInside(kb, ih, g.H), [&] {
          kb.forRange(0, g.KW, [&](llvm::Value* kw) {
            llvm::Value* iw = ir.CreateAdd(iwStart, ir.CreateMul(kw, kb.index(g.dw)));
            kb.ifThen(qInside(kb, iw, g.W), [&] {
              llvm::Value* xBase = ir.CreateAdd(
                  xBatch,
                  ir.CreateMul(ir.CreateAdd(ir.CreateMul(ih, kb.index(g.W)), iw), kb.index(g.C)));
              llvm::Value* tBase =
                  ir.CreateMul(ir.CreateAdd(ir.CreateMul(kh, kb.index(g.KW)), kw), kb.index(g.C));
              kb.forRange(0, g.C, [&](llvm::Value* ic) {
                llvm::Value* xv =
                    ir.CreateSub(qToI32(kb, kb.load(0, ElemType::I8, ir.CreateAdd(xBase, ic))),
                                 qConst(kb, q.inputZeroPoint));
                llvm::Value* wRow = ir.CreateMul(ir.CreateAdd(tBase, ic), kb.index(g.OC));
                kb.forRange(0, g.OC, [&](llvm::Value* oc) {
                  llvm::Value* w =
                      ir.CreateLoad(i8, ir.CreateInBoundsGEP(i8, wt, ir.CreateAdd(wRow, oc)));
                  llvm::Value* slot = accAt(oc);
                  ir.CreateStore(ir.CreateAdd(ir.CreateLoad(i32, slot),
                                              ir.CreateMul(xv, ir.CreateSExt(w, i32))),
                                 slot);
                });
              });
            });
          });
        });
      });
      llvm::Value* pixel =
          ir.CreateMul(ir.CreateAdd(ir.CreateMul(row, kb.index(g.OW)), ow), kb.index(g.OC));
      kb.forRange(0, g.OC, [&](llvm::Value* oc) {
        qStoreConvOutput(kb, rescale, ir.CreateLoad(i32, accAt(oc)), oc, ir.CreateAdd(pixel, oc),
                         false);
      });
    });
  });
  return workgroupsFor(rows, g.OW * g.OC * taps);
}

}  // namespace kiln::codegen::detail
