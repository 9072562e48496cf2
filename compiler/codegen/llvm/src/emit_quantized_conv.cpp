// Quantized convolutions (regular, grouped, depthwise, transposed) and fully connected layers
// in NHWC with TFLite's reference integer semantics: taps outside the image are skipped,
// products accumulate in i32 (i8 activations) or i64 (i16 activations), then bias, the
// per-channel MultiplyByQuantizedMultiplier, the output zero point and the activation clamp.
// Plain loops: a work item is one output row (n, oh); the innermost loop runs over the input
// channels of a tap, contiguous in both x and w (four per iteration), so fast variants can
// tile it later (targets with int8 dot products: emit_quantized_dot.cpp; int8 depthwise on
// vector targets: emit_quantized_depthwise.cpp). With constant i8 weights the input zero
// point leaves the inner loop: the accumulator starts at -zx * sum(w) and border taps add
// zx * w back (exact in wrapping i32).
#include <functional>

#include "emit_quantized.h"
#include "emitters.h"

namespace kiln::codegen::detail {
namespace {

QWindowShape nhwcShape(const KernelDesc& d, int64_t KH, int64_t KW) {
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  const std::vector<int64_t>& ys = d.output.shape;
  QWindowShape g;
  g.N = xs[0];
  g.H = xs[1];
  g.W = xs[2];
  g.C = xs[3];
  g.OH = ys[1];
  g.OW = ys[2];
  g.OC = ys[3];
  g.KH = KH;
  g.KW = KW;
  g.sh = d.strides[0];
  g.sw = d.strides[1];
  g.dh = d.dilations[0];
  g.dw = d.dilations[1];
  g.pt = d.pads[0];
  g.pl = d.pads[1];
  return g;
}

}  // namespace

QWindowShape qConvShape(const KernelDesc& d) {
  return nhwcShape(d, d.inputs[1].shape[1], d.inputs[1].shape[2]);
}

QWindowShape qPoolShape(const KernelDesc& d) {
  return nhwcShape(d, d.kernelShape[0], d.kernelShape[1]);
}

QOutputRow qOutputRow(KernelBuilder& kb, const QWindowShape& g, llvm::Value* row) {
  llvm::IRBuilder<>& ir = kb.b();
  std::vector<llvm::Value*> c = kb.decompose(row, {g.N, g.OH});
  QOutputRow r;
  r.xBatch = ir.CreateMul(c[0], kb.index(g.H * g.W * g.C));
  r.ihStart = ir.CreateSub(ir.CreateMul(c[1], kb.index(g.sh)), kb.index(g.pt));
  return r;
}

QRescale qMakeRescale(KernelBuilder& kb) {
  const QuantDesc& q = kb.desc().quant;
  QRescale r;
  if (q.multipliers.size() > 1) {
    r.multipliers = qTable(kb, q.multipliers, "qmult");
    r.shifts = qShiftTable(kb, q.shifts);
  }
  return r;
}

void qStoreConvOutput(KernelBuilder& kb, const QRescale& r, llvm::Value* acc, llvm::Value* channel,
                 llvm::Value* at, bool wide) {
  const KernelDesc& d = kb.desc();
  const QuantDesc& q = d.quant;
  llvm::IRBuilder<>& ir = kb.b();
  if (d.inputs.size() == 3) {
    llvm::Value* bias = kb.load(2, d.inputs[2].type, channel);
    acc = ir.CreateAdd(acc, ir.CreateSExtOrTrunc(bias, acc->getType()));
  }
  llvm::Value* m = r.multipliers ? qTableLoad(kb, r.multipliers, channel) : qConst(kb, q.multipliers[0]);
  llvm::Value* s = r.shifts ? qShiftLoad(kb, r.shifts, channel) : qConst(kb, q.shifts[0]);
  llvm::Value* scaled = wide ? qMultiply64(kb, acc, m, s) : qMultiply(kb, acc, m, s);
  llvm::Value* y = qClamp(kb, ir.CreateAdd(scaled, qConst(kb, q.outputZeroPoint)), q.actMin, q.actMax);
  kb.store(kb.outputBinding(), d.output.type, at, ir.CreateTrunc(y, kb.elemType(d.output.type)));
}

namespace {

// acc += w * (x - zx), in the accumulator's width.
void accumulate(KernelBuilder& kb, llvm::Value* acc, llvm::Value* x, llvm::Value* w,
                int32_t inputZeroPoint, int32_t weightZeroPoint) {
  llvm::IRBuilder<>& ir = kb.b();
  llvm::Value* xv = ir.CreateSub(qToI32(kb, x), qConst(kb, inputZeroPoint));
  llvm::Value* wv = ir.CreateSub(qToI32(kb, w), qConst(kb, weightZeroPoint));
  llvm::Value* product = ir.CreateMul(xv, wv);  // |i16 * i8| < 2^23: exact in i32
  llvm::Type* t = llvm::cast<llvm::AllocaInst>(acc)->getAllocatedType();
  llvm::Value* sum = ir.CreateAdd(ir.CreateLoad(t, acc), ir.CreateSExt(product, t));
  ir.CreateStore(sum, acc);
}

// for (c = 0; c < count; ++c) body(c), four channels per iteration when count allows (the
// loop overhead dominates a one-MAC body on microcontrollers).
void forChannels(KernelBuilder& kb, int64_t count, const std::function<void(llvm::Value*)>& body) {
  llvm::IRBuilder<>& ir = kb.b();
  if (count % 4 != 0 || count < 8 || kb.target().optimizeForSize) {
    kb.forRange(0, count, body);
    return;
  }
  kb.forRange(0, count / 4, [&](llvm::Value* j) {
    llvm::Value* base = ir.CreateMul(j, kb.index(4));
    for (int64_t u = 0; u < 4; ++u) body(ir.CreateAdd(base, kb.index(u)));
  });
}

// Whether to start the accumulators at the zero-point correction (saves an instruction per
// MAC) — not when optimising for size: the tables and border paths cost more flash than the
// instructions they save on a microcontroller.
bool useCorrections(KernelBuilder& kb) {
  const QuantDesc& q = kb.desc().quant;
  return !q.zeroPointCorrection.empty() && (!kb.target().optimizeForSize || q.correctionInBias);
}

// What the plain convolution and fully connected kernels set up before their loops.
struct Accumulation {
  ElemType xt = ElemType::I8;  // the activations' type
  bool wide = false;           // i16 activations: i64 accumulators and the 64-bit rescale
  llvm::Type* type = nullptr;  // i32 or i64
  QRescale rescale;
  // With a zero-point correction (its table, or already in the bias) the accumulators start
  // at -zx * sum(w) and the inner loops accumulate w * x only: inputZeroPoint, what they
  // subtract from x, is 0, and the taps outside the image add zx * w back (`corrected`).
  llvm::Value* corrections = nullptr;
  bool corrected = false;
  int32_t inputZeroPoint = 0;
};

Accumulation setUpAccumulation(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  Accumulation a;
  a.xt = d.inputs[0].type;
  a.wide = a.xt == ElemType::I16;
  a.type = a.wide ? kb.b().getInt64Ty() : kb.b().getInt32Ty();
  a.rescale = qMakeRescale(kb);
  a.corrected = useCorrections(kb);
  if (a.corrected && !d.quant.correctionInBias)
    a.corrections = qTable(kb, d.quant.zeroPointCorrection, "qzpc");
  a.inputZeroPoint = a.corrected ? 0 : d.quant.inputZeroPoint;
  return a;
}

// The accumulator's start: the per-channel zero-point correction, or 0.
llvm::Value* startAccumulator(KernelBuilder& kb, const Accumulation& a, llvm::Value* channel) {
  if (!a.corrections) return llvm::ConstantInt::get(a.type, 0);
  return kb.b().CreateSExt(qTableLoad(kb, a.corrections, channel), a.type);
}

// Visits the taps of the window whose top left input is (ihStart, iwStart) in image xBatch:
// tap(t, xBase) with t = kh * KW + kw and xBase the input pixel's first element for the taps
// inside the image; if `outside` (corrected accumulators, which add w * zx back for those),
// also tap(t, nullptr) for the taps outside it.
void forEachTap(KernelBuilder& kb, const QWindowShape& g, llvm::Value* xBatch, llvm::Value* ihStart,
                llvm::Value* iwStart, bool outside,
                const std::function<void(llvm::Value* t, llvm::Value* xBase)>& tap) {
  llvm::IRBuilder<>& ir = kb.b();
  kb.forRange(0, g.KH, [&](llvm::Value* kh) {
    llvm::Value* ih = ir.CreateAdd(ihStart, ir.CreateMul(kh, kb.index(g.dh)));
    llvm::Value* rowInside = qInside(kb, ih, g.H);
    kb.ifThen(rowInside, [&] {
      kb.forRange(0, g.KW, [&](llvm::Value* kw) {
        llvm::Value* iw = ir.CreateAdd(iwStart, ir.CreateMul(kw, kb.index(g.dw)));
        llvm::Value* colInside = qInside(kb, iw, g.W);
        llvm::Value* t = ir.CreateAdd(ir.CreateMul(kh, kb.index(g.KW)), kw);
        kb.ifThen(colInside, [&] {
          tap(t,
              ir.CreateAdd(xBatch, ir.CreateMul(ir.CreateAdd(ir.CreateMul(ih, kb.index(g.W)), iw),
                                                kb.index(g.C))));
        });
        if (outside) kb.ifThen(ir.CreateNot(colInside), [&] { tap(t, nullptr); });
      });
    });
    if (outside) {
      kb.ifThen(ir.CreateNot(rowInside), [&] {
        kb.forRange(0, g.KW, [&](llvm::Value* kw) {
          tap(ir.CreateAdd(ir.CreateMul(kh, kb.index(g.KW)), kw), nullptr);
        });
      });
    }
  });
}

// Depthwise convolutions accumulate all channels of one output pixel at once (a stack array
// of accumulators), so the image-border tests run once per tap instead of once per channel
// and the channel loop is contiguous in x and w. Up to this many accumulator bytes.
constexpr int64_t kMaxDepthwiseAccumulatorBytes = 2048;

uint32_t emitDepthwiseByPixel(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  const QuantDesc& q = d.quant;
  llvm::IRBuilder<>& ir = kb.b();
  const QWindowShape g = qConvShape(d);
  const int64_t depthMultiplier = g.OC / g.C;
  const Accumulation a = setUpAccumulation(kb);
  llvm::Value* accs = kb.local(llvm::ArrayType::get(a.type, uint64_t(g.OC)), "accs");
  auto accAt = [&](llvm::Value* oc) { return ir.CreateInBoundsGEP(a.type, accs, oc); };
  // acc[oc] += w[tap, oc] * (x[oc / M] - zx), or w * zx for a skipped tap (xBase null).
  auto tap = [&](llvm::Value* t, llvm::Value* xBase) {
    llvm::Value* wBase = ir.CreateMul(t, kb.index(g.OC));
    forChannels(kb, g.OC, [&](llvm::Value* oc) {
      llvm::Value* wv = qToI32(kb, kb.load(1, ElemType::I8, ir.CreateAdd(wBase, oc)));
      llvm::Value* xv = qConst(kb, q.inputZeroPoint);
      if (xBase) {
        llvm::Value* ic = depthMultiplier == 1 ? oc : ir.CreateUDiv(oc, kb.index(depthMultiplier));
        xv = ir.CreateSub(qToI32(kb, kb.load(0, a.xt, ir.CreateAdd(xBase, ic))),
                          qConst(kb, a.inputZeroPoint));
      }
      llvm::Value* p = accAt(oc);
      llvm::Value* product = ir.CreateSExt(ir.CreateMul(xv, wv), a.type);
      ir.CreateStore(ir.CreateAdd(ir.CreateLoad(a.type, p), product), p);
    });
  };
  const int64_t rows = g.N * g.OH;
  kb.forWorkgroupShare(rows, [&](llvm::Value* row) {
    const QOutputRow start = qOutputRow(kb, g, row);
    llvm::Value *xBatch = start.xBatch, *ihStart = start.ihStart;
    kb.forRange(0, g.OW, [&](llvm::Value* ow) {
      llvm::Value* iwStart = ir.CreateSub(ir.CreateMul(ow, kb.index(g.sw)), kb.index(g.pl));
      forChannels(kb, g.OC,
                  [&](llvm::Value* oc) { ir.CreateStore(startAccumulator(kb, a, oc), accAt(oc)); });
      forEachTap(kb, g, xBatch, ihStart, iwStart, a.corrected, tap);
      llvm::Value* pixel =
          ir.CreateMul(ir.CreateAdd(ir.CreateMul(row, kb.index(g.OW)), ow), kb.index(g.OC));
      kb.forRange(0, g.OC, [&](llvm::Value* oc) {
        qStoreConvOutput(kb, a.rescale, ir.CreateLoad(a.type, accAt(oc)), oc,
                         ir.CreateAdd(pixel, oc), a.wide);
      });
    });
  });
  return workgroupsFor(rows, g.OW * g.OC * g.KH * g.KW);
}

}  // namespace

uint32_t emitQuantizedConv(KernelBuilder& kb) {
  const ConvWeights layout = kb.desc().weightLayout;
  if (layout == ConvWeights::Int8OcBlocks || layout == ConvWeights::Int8OcRowBlocks)
    return emitQuantizedConvOc(kb);
  if (quantizedDotApplies(kb)) return emitQuantizedConvDot(kb);
  if (quantizedConvByPixelApplies(kb)) return emitQuantizedConvByPixel(kb);
  if (quantizedDepthwiseByChannelsApplies(kb)) return emitQuantizedDepthwiseByChannels(kb);
  if (quantizedDepthwiseMcuApplies(kb)) return emitQuantizedDepthwiseMcu(kb);
  const KernelDesc& d = kb.desc();
  const QuantDesc& q = d.quant;
  llvm::IRBuilder<>& ir = kb.b();
  const QWindowShape g = qConvShape(d);
  const int64_t accumulatorBytes = d.inputs[0].type == ElemType::I16 ? 8 : 4;
  if (q.op == QuantOp::DepthwiseConv && g.OC * accumulatorBytes <= kMaxDepthwiseAccumulatorBytes)
    return emitDepthwiseByPixel(kb);
  const Accumulation a = setUpAccumulation(kb);
  const int64_t ocPerGroup = g.OC / d.groups, icPerGroup = d.inputs[1].shape[3];
  const int64_t depthMultiplier = q.op == QuantOp::DepthwiseConv ? g.OC / g.C : 1;

  const int64_t rows = g.N * g.OH;
  kb.forWorkgroupShare(rows, [&](llvm::Value* row) {
    std::vector<llvm::Value*> c = kb.decompose(row, {g.N, g.OH});
    llvm::Value *n = c[0], *oh = c[1];
    llvm::Value* xBatch = ir.CreateMul(n, kb.index(g.H * g.W * g.C));
    kb.forRange(0, g.OW, [&](llvm::Value* ow) {
      kb.forRange(0, g.OC, [&](llvm::Value* oc) {
        llvm::Value* acc = kb.local(a.type, "acc");
        ir.CreateStore(startAccumulator(kb, a, oc), acc);
        if (q.op == QuantOp::TransposeConv) {
          // Output (oh, ow) gathers input (ih, iw) with ih * sh + kh - pt == oh.
          kb.forRange(0, g.KH, [&](llvm::Value* kh) {
            llvm::Value* t = ir.CreateSub(ir.CreateAdd(oh, kb.index(g.pt)), kh);
            kb.ifThen(ir.CreateICmpSGE(t, kb.index(0)), [&] {
              llvm::Value* ih = ir.CreateUDiv(t, kb.index(g.sh));
              llvm::Value* ok =
                  ir.CreateAnd(ir.CreateICmpEQ(ir.CreateURem(t, kb.index(g.sh)), kb.index(0)),
                               ir.CreateICmpSLT(ih, kb.index(g.H)));
              kb.ifThen(ok, [&] {
                kb.forRange(0, g.KW, [&](llvm::Value* kw) {
                  llvm::Value* u = ir.CreateSub(ir.CreateAdd(ow, kb.index(g.pl)), kw);
                  kb.ifThen(ir.CreateICmpSGE(u, kb.index(0)), [&] {
                    llvm::Value* iw = ir.CreateUDiv(u, kb.index(g.sw));
                    llvm::Value* ok2 =
                        ir.CreateAnd(ir.CreateICmpEQ(ir.CreateURem(u, kb.index(g.sw)), kb.index(0)),
                                     ir.CreateICmpSLT(iw, kb.index(g.W)));
                    kb.ifThen(ok2, [&] {
                      llvm::Value* xBase = ir.CreateAdd(
                          xBatch, ir.CreateMul(ir.CreateAdd(ir.CreateMul(ih, kb.index(g.W)), iw),
                                               kb.index(g.C)));
                      llvm::Value* wBase = ir.CreateMul(
                          ir.CreateAdd(
                              ir.CreateMul(ir.CreateAdd(ir.CreateMul(oc, kb.index(g.KH)), kh),
                                           kb.index(g.KW)),
                              kw),
                          kb.index(g.C));
                      kb.forRange(0, g.C, [&](llvm::Value* ic) {
                        llvm::Value* xv = kb.load(0, a.xt, ir.CreateAdd(xBase, ic));
                        llvm::Value* wv = kb.load(1, ElemType::I8, ir.CreateAdd(wBase, ic));
                        accumulate(kb, acc, xv, wv, q.inputZeroPoint, 0);
                      });
                    });
                  });
                });
              });
            });
          });
        } else {
          llvm::Value* ihStart = ir.CreateSub(ir.CreateMul(oh, kb.index(g.sh)), kb.index(g.pt));
          llvm::Value* iwStart = ir.CreateSub(ir.CreateMul(ow, kb.index(g.sw)), kb.index(g.pl));
          const bool depthwise = q.op == QuantOp::DepthwiseConv;
          // The weights of tap (kh, kw) for this output channel: w * x over them, or, for a
          // tap outside the image with a corrected accumulator, w * zx added back.
          auto tapWeights = [&](llvm::Value* tap, llvm::Value* xBase) {
            if (depthwise) {
              llvm::Value* wv =
                  kb.load(1, ElemType::I8, ir.CreateAdd(ir.CreateMul(tap, kb.index(g.OC)), oc));
              llvm::Value* xv =
                  xBase ? kb.load(0, a.xt,
                                  ir.CreateAdd(xBase, ir.CreateUDiv(oc, kb.index(depthMultiplier))))
                        : qConst(kb, q.inputZeroPoint);
              accumulate(kb, acc, xv, wv, xBase ? a.inputZeroPoint : 0, 0);
              return;
            }
            llvm::Value* wBase = ir.CreateMul(
                ir.CreateAdd(ir.CreateMul(oc, kb.index(g.KH * g.KW)), tap), kb.index(icPerGroup));
            llvm::Value* xRow = xBase ? ir.CreateAdd(xBase, ir.CreateMul(ir.CreateUDiv(oc, kb.index(ocPerGroup)),
                                                                         kb.index(icPerGroup)))
                                      : nullptr;
            forChannels(kb, icPerGroup, [&](llvm::Value* ic) {
              llvm::Value* wv = kb.load(1, ElemType::I8, ir.CreateAdd(wBase, ic));
              llvm::Value* xv =
                  xRow ? kb.load(0, a.xt, ir.CreateAdd(xRow, ic)) : qConst(kb, q.inputZeroPoint);
              accumulate(kb, acc, xv, wv, xRow ? a.inputZeroPoint : 0, 0);
            });
          };
          forEachTap(kb, g, xBatch, ihStart, iwStart, a.corrected, tapWeights);
        }
        llvm::Value* at = ir.CreateAdd(
            ir.CreateMul(ir.CreateAdd(ir.CreateMul(row, kb.index(g.OW)), ow), kb.index(g.OC)), oc);
        qStoreConvOutput(kb, a.rescale, ir.CreateLoad(a.type, acc), oc, at, a.wide);
      });
    });
  });
  int64_t taps = q.op == QuantOp::DepthwiseConv ? g.KH * g.KW : g.KH * g.KW * icPerGroup;
  return workgroupsFor(rows, g.OW * g.OC * taps);
}

uint32_t emitQuantizedFullyConnected(KernelBuilder& kb) {
  if (quantizedDotApplies(kb)) return emitQuantizedFullyConnectedDot(kb);
  const KernelDesc& d = kb.desc();
  const QuantDesc& q = d.quant;
  llvm::IRBuilder<>& ir = kb.b();
  const int64_t B = d.inputs[0].shape[0], K = d.inputs[0].shape[1], N = d.inputs[1].shape[0];
  const Accumulation a = setUpAccumulation(kb);
  kb.forWorkgroupShare(B * N, [&](llvm::Value* item) {
    llvm::Value* b = ir.CreateUDiv(item, kb.index(N));
    llvm::Value* n = ir.CreateURem(item, kb.index(N));
    llvm::Value* acc = kb.local(a.type, "acc");
    ir.CreateStore(startAccumulator(kb, a, n), acc);
    llvm::Value* xRow = ir.CreateMul(b, kb.index(K));
    llvm::Value* wRow = ir.CreateMul(n, kb.index(K));
    forChannels(kb, K, [&](llvm::Value* k) {
      llvm::Value* xv = kb.load(0, a.xt, ir.CreateAdd(xRow, k));
      llvm::Value* wv = kb.load(1, ElemType::I8, ir.CreateAdd(wRow, k));
      accumulate(kb, acc, xv, wv, a.inputZeroPoint, q.weightZeroPoint);
    });
    qStoreConvOutput(kb, a.rescale, ir.CreateLoad(a.type, acc), n, item, a.wide);
  });
  return workgroupsFor(B * N, K);
}

}  // namespace kiln::codegen::detail
