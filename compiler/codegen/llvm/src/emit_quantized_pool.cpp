// Quantized pooling (NHWC average and max, TFLite reference semantics: only taps inside the
// image count, the average rounds half away from zero with a truncating i32 division) and
// the int8 softmax (TFLite's gemmlowp fixed-point path: exp from a compile-time table of the
// same integer function, Q12.19 sum, Newton-Raphson reciprocal at run time), and TFLM's
// integer MEAN (an i32 sum, then a truncating division or TFLM's float rescale).
#include <algorithm>

#include "emit_quantized.h"
#include "emitters.h"

namespace kiln::codegen::detail {

uint32_t emitQuantizedPool(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  const QuantDesc& q = d.quant;
  llvm::IRBuilder<>& ir = kb.b();
  const QWindowShape g = qPoolShape(d);
  const bool isMax = q.op == QuantOp::MaxPool;
  const ElemType t = d.inputs[0].type;
  llvm::Type* i32 = ir.getInt32Ty();
  const int32_t lowest = t == ElemType::I8 ? -128 : -32768;

  const int64_t rows = g.N * g.OH;
  kb.forWorkgroupShare(rows, [&](llvm::Value* row) {
    std::vector<llvm::Value*> c = kb.decompose(row, {g.N, g.OH});
    llvm::Value *n = c[0], *oh = c[1];
    llvm::Value* ihStart = ir.CreateSub(ir.CreateMul(oh, kb.index(g.sh)), kb.index(g.pt));
    kb.forRange(0, g.OW, [&](llvm::Value* ow) {
      llvm::Value* iwStart = ir.CreateSub(ir.CreateMul(ow, kb.index(g.sw)), kb.index(g.pl));
      kb.forRange(0, g.C, [&](llvm::Value* ch) {
        llvm::Value* acc = kb.local(i32, "acc");
        llvm::Value* count = kb.local(i32, "count");
        ir.CreateStore(qConst(kb, isMax ? lowest : 0), acc);
        ir.CreateStore(qConst(kb, 0), count);
        kb.forRange(0, g.KH, [&](llvm::Value* kh) {
          llvm::Value* ih = ir.CreateAdd(ihStart, kh);
          kb.ifThen(qInside(kb, ih, g.H), [&] {
            kb.forRange(0, g.KW, [&](llvm::Value* kw) {
              llvm::Value* iw = ir.CreateAdd(iwStart, kw);
              kb.ifThen(qInside(kb, iw, g.W), [&] {
                llvm::Value* at = ir.CreateAdd(
                    ir.CreateMul(
                        ir.CreateAdd(ir.CreateMul(ir.CreateAdd(ir.CreateMul(n, kb.index(g.H)), ih),
                                                  kb.index(g.W)),
                                     iw),
                        kb.index(g.C)),
                    ch);
                llvm::Value* x = qToI32(kb, kb.load(0, t, at));
                llvm::Value* a = ir.CreateLoad(i32, acc);
                ir.CreateStore(isMax ? ir.CreateSelect(ir.CreateICmpSGT(x, a), x, a) : ir.CreateAdd(a, x), acc);
                ir.CreateStore(ir.CreateAdd(ir.CreateLoad(i32, count), qConst(kb, 1)), count);
              });
            });
          });
        });
        llvm::Value* result = ir.CreateLoad(i32, acc);
        if (!isMax) {
          llvm::Value* n32 = ir.CreateLoad(i32, count);
          n32 = ir.CreateSelect(ir.CreateICmpEQ(n32, qConst(kb, 0)), qConst(kb, 1), n32);
          llvm::Value* half = ir.CreateSDiv(n32, qConst(kb, 2));
          llvm::Value* positive = ir.CreateICmpSGT(result, qConst(kb, 0));
          llvm::Value* numerator =
              ir.CreateSelect(positive, ir.CreateAdd(result, half), ir.CreateSub(result, half));
          result = ir.CreateSDiv(numerator, n32);
        }
        result = qClamp(kb, result, q.actMin, q.actMax);
        llvm::Value* out = ir.CreateAdd(
            ir.CreateMul(ir.CreateAdd(ir.CreateMul(row, kb.index(g.OW)), ow), kb.index(g.C)), ch);
        kb.store(kb.outputBinding(), t, out, ir.CreateTrunc(result, kb.elemType(t)));
      });
    });
  });
  return workgroupsFor(rows, g.OW * g.C * g.KH * g.KW);
}

uint32_t emitQuantizedSoftmax(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  const QuantDesc& q = d.quant;
  llvm::IRBuilder<>& ir = kb.b();
  const int64_t depth = d.inputs[0].shape.back();
  const int64_t outer = d.inputs[0].elementCount() / std::max<int64_t>(depth, 1);
  llvm::Type* i32 = ir.getInt32Ty();
  llvm::Value* table = qTable(kb, q.table, "qexp");
  kb.forWorkgroupShare(outer, [&](llvm::Value* row) {
    llvm::Value* base = ir.CreateMul(row, kb.index(depth));
    llvm::Value* maxSlot = kb.local(i32, "max");
    ir.CreateStore(qConst(kb, -128), maxSlot);
    kb.forRange(0, depth, [&](llvm::Value* i) {
      llvm::Value* x = qToI32(kb, kb.load(0, ElemType::I8, ir.CreateAdd(base, i)));
      llvm::Value* m = ir.CreateLoad(i32, maxSlot);
      ir.CreateStore(ir.CreateSelect(ir.CreateICmpSGT(x, m), x, m), maxSlot);
    });
    llvm::Value* maxValue = ir.CreateLoad(i32, maxSlot);
    // exp of (x - max) from the table: entry -(x - max) in [0, 255].
    auto expOf = [&](llvm::Value* i) {
      llvm::Value* x = qToI32(kb, kb.load(0, ElemType::I8, ir.CreateAdd(base, i)));
      llvm::Value* negDiff = ir.CreateSub(maxValue, x);
      return qTableLoad(kb, table, ir.CreateZExtOrTrunc(negDiff, kb.indexType()));
    };
    llvm::Value* sumSlot = kb.local(i32, "sum");
    ir.CreateStore(qConst(kb, 0), sumSlot);
    kb.forRange(0, depth, [&](llvm::Value* i) {
      llvm::Value* e = qRoundingDivideByPOT(kb, expOf(i), qConst(kb, 12));  // Rescale to Q12.19
      ir.CreateStore(ir.CreateAdd(ir.CreateLoad(i32, sumSlot), e), sumSlot);
    });
    llvm::Value* sum = ir.CreateLoad(i32, sumSlot);
    // GetReciprocal(sum, 12): headroom, shifted sum minus one, 1 / (1 + x).
    llvm::Function* ctlz = llvm::Intrinsic::getDeclaration(ir.GetInsertBlock()->getModule(),
                                                           llvm::Intrinsic::ctlz, {i32});
    llvm::Value* headroom = ir.CreateCall(ctlz, {sum, ir.getFalse()});
    llvm::Value* shiftedMinusOne = ir.CreateSub(ir.CreateShl(sum, headroom), qConst(kb, INT32_MIN));
    llvm::Value* scale = qOneOverOnePlusX(kb, shiftedMinusOne);
    llvm::Value* exponent = ir.CreateAdd(ir.CreateSub(qConst(kb, 12), headroom), qConst(kb, 31 - 8));
    kb.forRange(0, depth, [&](llvm::Value* i) {
      llvm::Value* unsat = qRoundingDivideByPOT(kb, qSrdhm(kb, scale, expOf(i)), exponent);
      llvm::Value* y = qClamp(kb, ir.CreateAdd(unsat, qConst(kb, -128)), -128, 127);
      kb.store(kb.outputBinding(), ElemType::I8, ir.CreateAdd(base, i), ir.CreateTrunc(y, ir.getInt8Ty()));
    });
  });
  return workgroupsFor(outer, depth * 3);
}

uint32_t emitQuantizedMean(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  const QuantDesc& q = d.quant;
  llvm::IRBuilder<>& ir = kb.b();
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  const std::vector<int64_t> strides = rowMajorStrides(xs);
  std::vector<int64_t> keptExtents, keptStrides, reducedExtents, reducedStrides;
  for (size_t i = 0; i < xs.size(); ++i) {
    bool reduced = std::find(d.axes.begin(), d.axes.end(), int64_t(i)) != d.axes.end();
    (reduced ? reducedExtents : keptExtents).push_back(xs[i]);
    (reduced ? reducedStrides : keptStrides).push_back(strides[i]);
  }
  int64_t count = 1;
  for (int64_t e : reducedExtents) count *= e;
  const int64_t outputs = d.output.elementCount();
  const ElemType t = d.inputs[0].type;
  llvm::Type* i32 = ir.getInt32Ty();
  kb.forWorkgroupShare(outputs, [&](llvm::Value* o) {
    llvm::Value* base = keptExtents.empty() ? kb.index(0) : kb.linearize(kb.decompose(o, keptExtents), keptStrides);
    llvm::Value* sum = kb.local(i32, "sum");
    ir.CreateStore(qConst(kb, 0), sum);
    kb.forRange(0, count, [&](llvm::Value* r) {
      llvm::Value* at = ir.CreateAdd(base, kb.linearize(kb.decompose(r, reducedExtents), reducedStrides));
      ir.CreateStore(ir.CreateAdd(ir.CreateLoad(i32, sum), qToI32(kb, kb.load(0, t, at))), sum);
    });
    llvm::Value* total = ir.CreateLoad(i32, sum);
    llvm::Value* y;
    if (q.sameParameters) {
      // TFLM's reference Mean: the raw sum divided by the count, truncating.
      y = ir.CreateSDiv(total, qConst(kb, int32_t(count)));
    } else {
      // TFLM's QuantizedMeanOrSum: float mean, float rescale, round half away, + zero point.
      llvm::IRBuilder<>::FastMathFlagGuard guard(ir);
      ir.clearFastMathFlags();  // no contraction: TFLM rounds the product and the sum apart
      llvm::Value* mean = ir.CreateFDiv(ir.CreateSIToFP(total, ir.getFloatTy()), kb.f32(float(count)));
      const float bias = float(-q.inputZeroPoint) * q.scale;
      llvm::Value* r = ir.CreateFAdd(ir.CreateFMul(mean, kb.f32(q.scale)), kb.f32(bias));
      y = ir.CreateAdd(qRoundToInt(kb, r), qConst(kb, q.outputZeroPoint));
    }
    y = qClamp(kb, y, q.actMin, q.actMax);
    kb.store(kb.outputBinding(), t, o, ir.CreateTrunc(y, kb.elemType(t)));
  });
  return workgroupsFor(outputs, count);
}

}  // namespace kiln::codegen::detail
