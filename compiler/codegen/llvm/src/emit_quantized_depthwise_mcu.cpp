// Int8 depthwise convolutions (depth multiplier 1, NHWC) on microcontrollers, four channels at
// a time in registers. On the Arm DSP extension of Cortex-M4/M7/M33
// (EmitTarget::Int8Dot::ArmDsp), which packs two i16 into a 32-bit register: one 32-bit load
// of x and one of w per tap, SXTB16 (of the word, and of the word rotated by 8) sign-extends
// channels 0, 2 and 1, 3 into pairs of i16, and SMLABB / SMLATT multiply-accumulate each
// pair's bottom and top halves into the four channels' i32 accumulators: 4 products in 10
// instructions, where the plain loops of emit_quantized_conv.cpp take about 9 per product.
// With Helium (Int8Dot::Mve: Cortex-M55) the four accumulators are one vector register: per
// tap a sign-extending load of the 4 bytes of x and of w (VLDRB.S32), VMUL and VADD.
// Elsewhere (Int8Dot::Scalar: RV32) 4 byte loads of x and of w and 4 multiply-adds into the
// accumulators in registers. Every product and sum is the same i32 as in the plain loops
// (wrapping i32 addition is associative), so the bytes are identical.
//
// A work item is one output row; per block of 4 channels the start values (correction and
// bias), multipliers and shifts are read once for the row, then every output pixel runs its
// taps in rolled loops (small code: a microcontroller's flash) and is rescaled on <4 x i32>.
// The accumulators start at the lowering's correction -zx * sum(w), so a tap outside the image
// counts as x = zx (TFLite skips it: (zx - zx) * w = 0); pixels whose taps all lie inside the
// image take a loop without the border test.
#include <llvm/IR/IntrinsicsARM.h>

#include "emit_quantized.h"
#include "emitters.h"

namespace kiln::codegen::detail {
namespace {

constexpr int64_t kChannels = 4;  // channels per block: the bytes of one 32-bit register
// The work of one output's rescale for the workgroup policy, in multiply-accumulates.
constexpr int64_t kRescaleWork = 16;

}  // namespace

bool quantizedDepthwiseMcuApplies(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  const QuantDesc& q = d.quant;
  const EmitTarget::Int8Dot kind = kb.target().int8Dot;
  if (kind != EmitTarget::Int8Dot::ArmDsp && kind != EmitTarget::Int8Dot::Scalar &&
      kind != EmitTarget::Int8Dot::Mve)
    return false;
  if (q.op != QuantOp::DepthwiseConv) return false;
  if (d.inputs[0].type != ElemType::I8 || d.inputs[1].type != ElemType::I8 ||
      d.output.type != ElemType::I8)
    return false;
  if (d.inputs.size() == 3 && d.inputs[2].type != ElemType::I32) return false;
  // Outside taps count as zx: the accumulators must start at the correction (or zx be 0).
  if (q.zeroPointCorrection.empty() && q.inputZeroPoint != 0) return false;
  const QWindowShape g = qConvShape(d);
  return g.OC == g.C && g.C % kChannels == 0;
}

uint32_t emitQuantizedDepthwiseMcu(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  const QuantDesc& q = d.quant;
  llvm::IRBuilder<>& ir = kb.b();
  const QWindowShape g = qConvShape(d);
  llvm::Type* i32 = ir.getInt32Ty();
  auto* v32 = llvm::FixedVectorType::get(i32, unsigned(kChannels));
  auto* v8 = llvm::FixedVectorType::get(ir.getInt8Ty(), unsigned(kChannels));
  auto splat = [&](int32_t value) {
    return llvm::ConstantInt::get(v32, uint64_t(uint32_t(value)));
  };
  // The 4 bytes of a binding from `index` as one i32 (Cortex-M4/M7/M33 load words from any
  // address).
  auto loadWord = [&](unsigned binding, llvm::Value* index) {
    llvm::Value* address = ir.CreateInBoundsGEP(ir.getInt8Ty(), kb.bindingPointer(binding), index);
    return ir.CreateAlignedLoad(i32, address, llvm::Align(1));
  };
  // 4 consecutive entries of an i32 table (or binding) from `index`.
  auto loadWords = [&](llvm::Value* base, llvm::Value* index) -> llvm::Value* {
    return ir.CreateAlignedLoad(v32, ir.CreateInBoundsGEP(i32, base, index), llvm::Align(4));
  };
  const bool dsp = kb.target().int8Dot == EmitTarget::Int8Dot::ArmDsp;
  const bool mve = kb.target().int8Dot == EmitTarget::Int8Dot::Mve;
  // The 4 bytes from `index` as <4 x i32>, sign-extended (Helium: one VLDRB.S32).
  auto loadLanes = [&](unsigned binding, llvm::Value* index) {
    llvm::Value* address = ir.CreateInBoundsGEP(ir.getInt8Ty(), kb.bindingPointer(binding), index);
    return ir.CreateSExt(ir.CreateAlignedLoad(v8, address, llvm::Align(1)), v32);
  };
  // The 4 bytes from `index` as sign-extended i32 (4 byte loads).
  auto loadBytesAt = [&](llvm::Value* from) {
    std::vector<llvm::Value*> bytes;
    for (int64_t j = 0; j < kChannels; ++j) {
      llvm::Value* at = ir.CreateConstInBoundsGEP1_64(ir.getInt8Ty(), from, uint64_t(j));
      bytes.push_back(ir.CreateSExt(ir.CreateLoad(ir.getInt8Ty(), at), i32));
    }
    return bytes;
  };
  auto loadBytes = [&](unsigned binding, llvm::Value* index) {
    return loadBytesAt(ir.CreateInBoundsGEP(ir.getInt8Ty(), kb.bindingPointer(binding), index));
  };
  // Channels 0, 2 and channels 1, 3 of a word as pairs of i16.
  auto pairs = [&](llvm::Value* word) -> std::pair<llvm::Value*, llvm::Value*> {
    llvm::Value* rotated =
        ir.CreateIntrinsic(llvm::Intrinsic::fshr, {i32}, {word, word, ir.getInt32(8)});
    return {ir.CreateIntrinsic(llvm::Intrinsic::arm_sxtb16, {}, {word}),
            ir.CreateIntrinsic(llvm::Intrinsic::arm_sxtb16, {}, {rotated})};
  };

  const QRescale rescale = qMakeRescale(kb);
  const QRescaleRange range = qRescaleRange(q);
  llvm::Value* corrections = q.zeroPointCorrection.empty() || q.correctionInBias
                                 ? nullptr
                                 : qTable(kb, q.zeroPointCorrection, "qzpc");
  // x = zx in all four bytes: what a tap outside the image reads.
  const uint32_t zxByte = uint8_t(int8_t(q.inputZeroPoint));
  llvm::Value* zxWord = ir.getInt32(zxByte * 0x01010101u);
  std::vector<llvm::Value*> acc;
  for (int64_t j = 0; j < kChannels; ++j) acc.push_back(kb.local(i32, "acc"));
  llvm::Value* accLanes = kb.local(v32, "acc");  // Helium's: the four in one vector
  // Helium and RV32: x of a tap outside the image, zx in each of the four bytes.
  llvm::Value* zxBytes = nullptr;
  if (!dsp) {
    zxBytes = kb.local(v8, "zx");
    ir.CreateStore(llvm::ConstantInt::get(v8, uint64_t(uint8_t(int8_t(q.inputZeroPoint)))),
                   zxBytes);
  }
  // The taps of a kernel row: a rolled loop, or with Helium (4 instructions a tap, against a
  // loop's 2 or 3 of overhead) unrolled for windows of up to 5 x 5. (Unrolling the rows too
  // took more flash for more instructions: VWW 41.9 KB and 6.38 M against 36.2 KB and 6.35 M.)
  const bool unrolled = mve && g.KH * g.KW <= 25;
  auto eachTap = [&](int64_t count, const std::function<void(llvm::Value*)>& body) {
    if (!unrolled) {
      kb.forRange(0, count, body);
      return;
    }
    for (int64_t i = 0; i < count; ++i) body(kb.index(i));
  };

  // Columns whose taps all lie inside the image: iwStart = ow * sw - pl >= 0 and
  // iwStart + (KW - 1) * dw < W.
  const int64_t interiorBegin = std::min(g.OW, (g.pl + g.sw - 1) / g.sw);
  const int64_t lastStart = g.W - 1 - (g.KW - 1) * g.dw + g.pl;  // largest ow * sw inside
  const int64_t interiorEnd =
      std::max(interiorBegin, lastStart < 0 ? 0 : std::min(g.OW, lastStart / g.sw + 1));

  const int64_t rows = g.N * g.OH;
  kb.forWorkgroupShare(rows, [&](llvm::Value* row) {
    const QOutputRow start = qOutputRow(kb, g, row);
    llvm::Value *xBatch = start.xBatch, *ihStart = start.ihStart;
    llvm::Value* rowInterior =
        ir.CreateAnd(ir.CreateICmpSGE(ihStart, kb.index(0)),
                     ir.CreateICmpSLT(ihStart, kb.index(g.H - (g.KH - 1) * g.dh)));
    kb.forRange(0, g.C / kChannels, [&](llvm::Value* block) {
      llvm::Value* first = ir.CreateMul(block, kb.index(kChannels));
      // The accumulators' start: the correction and the bias (i32 addition commutes).
      llvm::Value* startValues = corrections ? loadWords(corrections, first) : splat(0);
      if (d.inputs.size() == 3)
        startValues = ir.CreateAdd(startValues, loadWords(kb.bindingPointer(2), first));
      llvm::Value* m =
          rescale.multipliers ? loadWords(rescale.multipliers, first) : splat(q.multipliers[0]);
      llvm::Value* s = rescale.shifts ? qShiftLoad(kb, rescale.shifts, first, unsigned(kChannels))
                                      : splat(q.shifts[0]);

      // One output pixel: its taps all inside the image, some perhaps outside, or tested.
      enum class Taps { Inside, Border, Tested };
      auto pixel = [&](llvm::Value* ow, Taps where) {
        llvm::Value* iwStart = ir.CreateSub(ir.CreateMul(ow, kb.index(g.sw)), kb.index(g.pl));
        if (mve) ir.CreateStore(startValues, accLanes);
        for (int64_t j = 0; j < kChannels && !mve; ++j)
          ir.CreateStore(ir.CreateExtractElement(startValues, uint64_t(j)), acc[size_t(j)]);
        // Every tap; `border`: some may lie outside the image (then x = zx).
        auto taps = [&](bool border) {
          kb.forRange(0, g.KH, [&](llvm::Value* kh) {
            llvm::Value* ih = ir.CreateAdd(ihStart, ir.CreateMul(kh, kb.index(g.dh)));
            llvm::Value* rowInside = border ? qInside(kb, ih, g.H) : nullptr;
            eachTap(g.KW, [&](llvm::Value* kw) {
              llvm::Value* iw = ir.CreateAdd(iwStart, ir.CreateMul(kw, kb.index(g.dw)));
              llvm::Value* at = ir.CreateAdd(
                  xBatch,
                  ir.CreateAdd(ir.CreateMul(ir.CreateAdd(ir.CreateMul(ih, kb.index(g.W)), iw),
                                            kb.index(g.C)),
                               first));
              llvm::Value* inside =
                  border ? ir.CreateAnd(rowInside, qInside(kb, iw, g.W)) : nullptr;
              llvm::Value* tap = ir.CreateAdd(ir.CreateMul(kh, kb.index(g.KW)), kw);
              llvm::Value* wAt = ir.CreateAdd(ir.CreateMul(tap, kb.index(g.C)), first);
              // Helium and RV32: where x comes from, the image or (outside it) four bytes of
              // zx: a border tap selects an address, not values (for Helium LLVM made a
              // vector select a branch per tap).
              llvm::Value* xFrom = nullptr;
              if (!dsp) {
                xFrom = ir.CreateInBoundsGEP(ir.getInt8Ty(), kb.bindingPointer(0), at);
                if (border) xFrom = ir.CreateSelect(inside, xFrom, zxBytes);
              }
              if (mve) {
                llvm::Value* x = ir.CreateSExt(ir.CreateAlignedLoad(v8, xFrom, llvm::Align(1)), v32);
                llvm::Value* products = ir.CreateMul(x, loadLanes(1, wAt));
                ir.CreateStore(ir.CreateAdd(ir.CreateLoad(v32, accLanes), products), accLanes);
                return;
              }
              if (!dsp) {
                std::vector<llvm::Value*> x = loadBytesAt(xFrom), w = loadBytes(1, wAt);
                for (int64_t j = 0; j < kChannels; ++j) {
                  llvm::Value* xj = x[size_t(j)];
                  llvm::Value* slot = acc[size_t(j)];
                  ir.CreateStore(
                      ir.CreateAdd(ir.CreateLoad(i32, slot), ir.CreateMul(xj, w[size_t(j)])), slot);
                }
                return;
              }
              // The DSP extension: outside, read the block's channels of pixel 0 (always
              // there) and use zx.
              llvm::Value* x =
                  loadWord(0, border ? ir.CreateSelect(inside, at, ir.CreateAdd(xBatch, first)) : at);
              if (border) x = ir.CreateSelect(inside, x, zxWord);
              llvm::Value* w = loadWord(1, wAt);
              const auto [x02, x13] = pairs(x);
              const auto [w02, w13] = pairs(w);
              // Channel 0: bottom halves of (0, 2); channel 2: top halves; 1 and 3 likewise.
              const struct {
                llvm::Intrinsic::ID op;
                llvm::Value *x, *w;
              } products[kChannels] = {{llvm::Intrinsic::arm_smlabb, x02, w02},
                                       {llvm::Intrinsic::arm_smlabb, x13, w13},
                                       {llvm::Intrinsic::arm_smlatt, x02, w02},
                                       {llvm::Intrinsic::arm_smlatt, x13, w13}};
              for (int64_t j = 0; j < kChannels; ++j) {
                llvm::Value* slot = acc[size_t(j)];
                ir.CreateStore(
                    ir.CreateIntrinsic(products[j].op, {},
                                       {products[j].x, products[j].w, ir.CreateLoad(i32, slot)}),
                    slot);
              }
            });
          });
        };
        if (where != Taps::Tested) {
          taps(where == Taps::Border);
        } else {
          llvm::Value* columnsInside =
              ir.CreateAnd(ir.CreateICmpSGE(iwStart, kb.index(0)),
                           ir.CreateICmpSLT(iwStart, kb.index(g.W - (g.KW - 1) * g.dw)));
          llvm::Value* interior = ir.CreateAnd(rowInterior, columnsInside);
          kb.ifThen(interior, [&] { taps(false); });
          kb.ifThen(ir.CreateNot(interior), [&] { taps(true); });
        }

        llvm::Value* sums = mve ? static_cast<llvm::Value*>(ir.CreateLoad(v32, accLanes))
                                : llvm::PoisonValue::get(v32);
        for (int64_t j = 0; j < kChannels && !mve; ++j)
          sums = ir.CreateInsertElement(sums, ir.CreateLoad(i32, acc[size_t(j)]), uint64_t(j));
        llvm::Value* y =
            ir.CreateAdd(qMultiplyLanes(kb, sums, m, s, range), splat(q.outputZeroPoint));
        y = qClampLanes(kb, y, q.actMin, q.actMax);
        llvm::Value* out = ir.CreateAdd(
            ir.CreateMul(ir.CreateAdd(ir.CreateMul(row, kb.index(g.OW)), ow), kb.index(g.C)),
            first);
        ir.CreateAlignedStore(
            ir.CreateTrunc(y, v8),
            ir.CreateInBoundsGEP(ir.getInt8Ty(), kb.bindingPointer(kb.outputBinding()), out),
            llvm::Align(1));
      };
      if (!mve) {
        // One loop, each pixel tested (the pixel's code once: flash).
        kb.forRange(0, g.OW, [&](llvm::Value* ow) { pixel(ow, Taps::Tested); });
        return;
      }
      // Helium: in a row whose taps lie inside the image vertically, the columns
      // [interiorBegin, interiorEnd) have all their taps inside: a loop without the border
      // tests; the other columns (all of them in the other rows) one loop with them (VWW
      // 5.07 -> 4.83 M instructions for 1.7 KB of flash; on the DSP extension 2-3 % fewer
      // for 6-7 % more flash, not taken).
      llvm::Value* begin = ir.CreateSelect(rowInterior, kb.index(interiorBegin), kb.index(g.OW));
      llvm::Value* end = ir.CreateSelect(rowInterior, kb.index(interiorEnd), kb.index(g.OW));
      kb.forRange(kb.index(0), ir.CreateAdd(begin, ir.CreateSub(kb.index(g.OW), end)),
                  [&](llvm::Value* i) {
                    llvm::Value* past = ir.CreateICmpUGE(i, begin);
                    pixel(ir.CreateSelect(past, ir.CreateAdd(ir.CreateSub(i, begin), end), i),
                          Taps::Border);
                  });
      kb.forRange(begin, end, [&](llvm::Value* ow) { pixel(ow, Taps::Inside); });
    });
  });
  return workgroupsFor(rows, g.OW * g.C * (g.KH * g.KW + kRescaleWork));
}

}  // namespace kiln::codegen::detail
