// Int8 depthwise convolutions (depth multiplier 1, NHWC) vectorised over the channels, on
// every target with vector registers (microcontrollers: emit_quantized_depthwise_mcu.cpp, or
// the plain loops of emit_quantized_conv.cpp). Every product and sum is the same i32 as in the
// plain loops (TFLite's reference arithmetic; wrapping i32 addition is associative), so the
// bytes are identical.
//
// A work item is one output row. Per block of L channels (L = the target's i32 lanes, halved
// for thinner layers; where L does not divide C the last block overlaps the one before and
// stores the same bytes again) the weights of every tap are sign-extended once and stay in
// registers while every output pixel of the row accumulates its taps on <L x i32>, is
// rescaled (bias, per-channel MultiplyByQuantizedMultiplier), offset, clamped and stored as L
// bytes. With fewer channels than lanes at stride 1, a vector holds several neighbouring
// pixels of all channels instead (their taps are contiguous in x; the rescale, most of an
// output's time, then serves them all). A tap outside the image counts as x = zx: TFLite skips
// it, which is (zx - zx) * w = 0 for accumulators that subtract the zero point, and zx * w for
// accumulators that start at the lowering's correction -zx * sum(w). Pixels whose taps all lie
// inside the image take a path without the border selects (masked loads for pixel groups).
#include "emit_quantized.h"
#include "emitters.h"

namespace kiln::codegen::detail {
namespace {

// Taps the kernel unrolls (every tap's weights are one vector value).
constexpr int64_t kMaxTaps = 64;
// The work of one output's rescale for the workgroup policy, in the multiply-accumulates it
// counts: with 9 taps the rescale is most of an output's time (a 6x6x128 layer took 2.3 us
// on one thread, 1.5 us since the shorter rescale). 40 split more layers: 5 % faster at 2
// threads, 2 % slower at 1; 16 kept.
constexpr int64_t kRescaleWork = 16;

// How a vector covers the output: `pixels` neighbouring output pixels x `channels` channels.
struct VectorShape {
  int64_t pixels = 1, channels = 4;
  int64_t lanes() const { return pixels * channels; }
};

// Fewer channels than the target's i32 lanes: at stride 1 along the row (the pixels' taps then
// lie next to each other in x) the lanes take several pixels of all channels when the channel
// count divides them (VWW's 8 channels: 2 pixels on AVX-512, half the rescales); otherwise the
// lanes are halved (not below 4) while the channels are fewer.
VectorShape vectorShape(const EmitTarget& target, const QWindowShape& g) {
  const int64_t lanes = target.vectorLanes;
  if (g.C < lanes && lanes % g.C == 0 && g.sw == 1 && g.OW >= lanes / g.C)
    return {lanes / g.C, g.C};
  int64_t channels = lanes;
  while (channels > 4 && channels > g.C) channels /= 2;
  return {1, channels};
}

}  // namespace

bool quantizedDepthwiseByChannelsApplies(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  if (d.quant.op != QuantOp::DepthwiseConv) return false;
  if (kb.target().vectorLanes < 4 || kb.target().optimizeForSize) return false;
  if (d.inputs[0].type != ElemType::I8 || d.inputs[1].type != ElemType::I8 ||
      d.output.type != ElemType::I8)
    return false;
  if (d.inputs.size() == 3 && d.inputs[2].type != ElemType::I32) return false;
  const QWindowShape g = qConvShape(d);
  return g.OC == g.C && g.C >= 4 && g.KH * g.KW <= kMaxTaps;
}

uint32_t emitQuantizedDepthwiseByChannels(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  const QuantDesc& q = d.quant;
  llvm::IRBuilder<>& ir = kb.b();
  const QWindowShape g = qConvShape(d);
  const VectorShape shape = vectorShape(kb.target(), g);
  const int64_t L = shape.lanes(), P = shape.pixels, CB = shape.channels;
  const int64_t taps = g.KH * g.KW;
  llvm::Type* i8 = ir.getInt8Ty();
  llvm::Type* i32 = ir.getInt32Ty();
  auto* v8 = llvm::FixedVectorType::get(i8, unsigned(L));
  auto* v32 = llvm::FixedVectorType::get(i32, unsigned(L));
  auto splat = [&](int32_t value) { return llvm::ConstantInt::get(v32, uint64_t(uint32_t(value))); };
  // L consecutive elements of a binding or of an i32 table, from `index`.
  auto loadBytes = [&](unsigned binding, llvm::Value* index) {
    llvm::Value* address = ir.CreateInBoundsGEP(i8, kb.bindingPointer(binding), index);
    return ir.CreateSExt(ir.CreateAlignedLoad(v8, address, llvm::Align(1)), v32);
  };
  // A per-channel vector of CB channels (weights, tables) repeated for each of the P pixels.
  auto perChannel = [&](llvm::Type* element, llvm::Value* base, llvm::Value* index,
                        unsigned align) -> llvm::Value* {
    auto* type = llvm::FixedVectorType::get(element, unsigned(CB));
    llvm::Value* v = ir.CreateAlignedLoad(type, ir.CreateInBoundsGEP(element, base, index),
                                          llvm::Align(align));
    if (P > 1) {
      llvm::SmallVector<int, 64> repeat;
      for (int64_t i = 0; i < L; ++i) repeat.push_back(int(i % CB));
      v = ir.CreateShuffleVector(v, repeat);
    }
    return v;
  };
  auto loadWeights = [&](llvm::Value* index) {
    return ir.CreateSExt(perChannel(i8, kb.bindingPointer(1), index, 1), v32);
  };
  auto loadWords = [&](llvm::Value* base, llvm::Value* index) {
    return perChannel(i32, base, index, 4);
  };

  const QRescale rescale = qMakeRescale(kb);
  const QRescaleRange range = qRescaleRange(q);
  assert(!q.correctionInBias && "foldZeroPointCorrections runs for microcontrollers only");
  llvm::Value* corrections =
      q.zeroPointCorrection.empty() ? nullptr : qTable(kb, q.zeroPointCorrection, "qzpc");
  // What the taps subtract from x: the zero point, unless the correction took it out.
  const int32_t subtracted = corrections ? 0 : q.inputZeroPoint;
  const int64_t blocks = (g.C + CB - 1) / CB;
  // Output pixel groups per row (the last one ends at OW, overlapping the one before).
  const int64_t groups = (g.OW + P - 1) / P;

  const int64_t rows = g.N * g.OH;
  kb.forWorkgroupShare(rows, [&](llvm::Value* row) {
    const QOutputRow start = qOutputRow(kb, g, row);
    llvm::Value *xBatch = start.xBatch, *ihStart = start.ihStart;
    // Which kernel rows lie inside the image for this output row.
    std::vector<llvm::Value*> ih, rowInside;
    llvm::Value* rowInterior = ir.getTrue();
    for (int64_t kh = 0; kh < g.KH; ++kh) {
      ih.push_back(ir.CreateAdd(ihStart, kb.index(kh * g.dh)));
      rowInside.push_back(qInside(kb, ih.back(), g.H));
      rowInterior = ir.CreateAnd(rowInterior, rowInside.back());
    }
    kb.forRange(0, blocks, [&](llvm::Value* block) {
      // The block's first channel; the last block ends at C.
      llvm::Value* first = ir.CreateMul(block, kb.index(CB));
      first = ir.CreateSelect(ir.CreateICmpULT(first, kb.index(g.C - CB)), first, kb.index(g.C - CB));
      std::vector<llvm::Value*> w;
      for (int64_t t = 0; t < taps; ++t) w.push_back(loadWeights(ir.CreateAdd(kb.index(t * g.C), first)));
      // The accumulators' start: the correction and the bias (i32 addition commutes).
      llvm::Value* start = corrections ? loadWords(corrections, first) : splat(0);
      if (d.inputs.size() == 3) start = ir.CreateAdd(start, loadWords(kb.bindingPointer(2), first));
      llvm::Value* m = rescale.multipliers ? loadWords(rescale.multipliers, first)
                                           : splat(q.multipliers[0]);
      llvm::Value* s =
          rescale.shifts ? qShiftLoad(kb, rescale.shifts, first, unsigned(CB)) : splat(q.shifts[0]);
      if (P > 1 && rescale.shifts) {
        llvm::SmallVector<int, 64> repeat;
        for (int64_t i = 0; i < L; ++i) repeat.push_back(int(i % CB));
        s = ir.CreateShuffleVector(s, repeat);
      }

      kb.forRange(0, groups, [&](llvm::Value* group) {
        // The group's first pixel (the vector's lanes: pixels ow .. ow + P - 1, each CB channels).
        llvm::Value* ow = ir.CreateMul(group, kb.index(P));
        if (g.OW % P != 0)
          ow = ir.CreateSelect(ir.CreateICmpULT(ow, kb.index(g.OW - P)), ow, kb.index(g.OW - P));
        llvm::Value* iwStart = ir.CreateSub(ir.CreateMul(ow, kb.index(g.sw)), kb.index(g.pl));
        // One output pixel; `border`: some taps may lie outside the image.
        auto pixel = [&](bool border) {
          llvm::Value* acc = start;
          for (int64_t kh = 0; kh < g.KH; ++kh) {
            for (int64_t kw = 0; kw < g.KW; ++kw) {
              llvm::Value* iw = ir.CreateAdd(iwStart, kb.index(kw * g.dw));
              llvm::Value* at = ir.CreateAdd(
                  ir.CreateAdd(xBatch, ir.CreateMul(ir.CreateAdd(ir.CreateMul(ih[size_t(kh)],
                                                                              kb.index(g.W)),
                                                                 iw),
                                                    kb.index(g.C))),
                  first);
              llvm::Value* x;
              if (border && P > 1) {
                // Pixel j's lanes read its tap where it lies inside the image, zx elsewhere: a
                // masked load (the lanes left out are not read).
                llvm::Value* pixelsInside = llvm::PoisonValue::get(
                    llvm::FixedVectorType::get(ir.getInt1Ty(), unsigned(P)));
                for (int64_t j = 0; j < P; ++j) {
                  llvm::Value* in = ir.CreateAnd(rowInside[size_t(kh)],
                                                 qInside(kb, ir.CreateAdd(iw, kb.index(j * g.sw)), g.W));
                  pixelsInside = ir.CreateInsertElement(pixelsInside, in, uint64_t(j));
                }
                llvm::SmallVector<int, 64> byPixel;
                for (int64_t i = 0; i < L; ++i) byPixel.push_back(int(i / CB));
                llvm::Value* mask = ir.CreateShuffleVector(pixelsInside, byPixel);
                llvm::Value* zx = llvm::ConstantInt::get(v8, uint64_t(uint8_t(q.inputZeroPoint)));
                // Not `inbounds`: the lanes left out may lie before or past the input.
                llvm::Value* address = ir.CreateGEP(i8, kb.bindingPointer(0), at);
                x = ir.CreateSExt(ir.CreateMaskedLoad(v8, address, llvm::Align(1), mask, zx), v32);
              } else if (border) {
                llvm::Value* inside = ir.CreateAnd(rowInside[size_t(kh)], qInside(kb, iw, g.W));
                // Outside: read the block's channels of pixel 0 (always there), use zx.
                x = loadBytes(0, ir.CreateSelect(inside, at, ir.CreateAdd(xBatch, first)));
                x = ir.CreateSelect(inside, x, splat(q.inputZeroPoint));
              } else {
                x = loadBytes(0, at);
              }
              if (subtracted != 0) x = ir.CreateSub(x, splat(subtracted));
              acc = ir.CreateAdd(acc, ir.CreateMul(x, w[size_t(kh * g.KW + kw)]));
            }
          }
          llvm::Value* y = ir.CreateAdd(qMultiplyLanes(kb, acc, m, s, range), splat(q.outputZeroPoint));
          y = qClampLanes(kb, y, q.actMin, q.actMax);
          llvm::Value* out = ir.CreateAdd(
              ir.CreateMul(ir.CreateAdd(ir.CreateMul(row, kb.index(g.OW)), ow), kb.index(g.C)),
              first);
          ir.CreateAlignedStore(ir.CreateTrunc(y, v8),
                                ir.CreateInBoundsGEP(i8, kb.bindingPointer(kb.outputBinding()), out),
                                llvm::Align(1));
        };
        llvm::Value* columnsInside = ir.CreateAnd(
            ir.CreateICmpSGE(iwStart, kb.index(0)),
            ir.CreateICmpSLT(iwStart, kb.index(g.W - (g.KW - 1) * g.dw - (P - 1) * g.sw)));
        llvm::Value* interior = ir.CreateAnd(rowInterior, columnsInside);
        kb.ifThen(interior, [&] { pixel(false); });
        kb.ifThen(ir.CreateNot(interior), [&] { pixel(true); });
      });
    });
  });
  return workgroupsFor(rows, g.OW * g.C * (taps + kRescaleWork / P));
}

}  // namespace kiln::codegen::detail
