// The convolution GEMM's im2col packing (see emit_im2col.h).
#include "emit_im2col.h"

#include <algorithm>
#include <vector>

#include "kernel_builder.h"

namespace kiln::codegen::detail {
namespace {

constexpr int64_t kMaxStep = 4;      // widest strided load: stride x lanes floats
constexpr int64_t kMaxSegments = 4;  // output rows one vector may span for Segments reads

// Output rows that `lanes` consecutive flat pixels can span.
int64_t segmentsPerVector(int64_t ow, unsigned lanes) {
  return lanes < 2 ? 1 : (int64_t(lanes) - 2) / ow + 2;
}

}  // namespace

Im2colRead im2colReadFor(const Im2colShape& s, bool rowTiles, unsigned lanes) {
  const bool sameWidth = s.sh == 1 && s.sw == 1 && s.w == s.ow;
  if ((rowTiles && s.sw == 1) || (!rowTiles && sameWidth)) return Im2colRead::Contiguous;
  if (rowTiles) return s.sw <= kMaxStep ? Im2colRead::Strided : Im2colRead::Gather;
  if (s.sw <= kMaxStep && segmentsPerVector(s.ow, lanes) <= kMaxSegments)
    return Im2colRead::Segments;
  return Im2colRead::Gather;
}

void emitIm2colTile(KernelBuilder& kb, const Im2colShape& s, bool rowTiles, int64_t nr,
                    llvm::Value* panel, llvm::Value* tileBase, llvm::Value* xImage,
                    llvm::Value* c0, int64_t count, llvm::Value* p0, int64_t width) {
  llvm::IRBuilder<>& b = kb.b();
  const unsigned L = kb.target().vectorLanes;
  const Im2colRead read = im2colReadFor(s, rowTiles, L);
  const int64_t taps = s.kh * s.kw, HW = s.h * s.w;
  const int64_t nv = (width + L - 1) / L;
  llvm::Type* floatTy = b.getFloatTy();
  llvm::Type* i32 = b.getInt32Ty();
  auto* vecTy = llvm::FixedVectorType::get(floatTy, L);
  auto* intVecTy = llvm::FixedVectorType::get(i32, L);
  auto* boolVecTy = llvm::FixedVectorType::get(b.getInt1Ty(), L);
  auto splatI32 = [&](int64_t v) { return llvm::ConstantInt::get(intVecTy, uint64_t(v), true); };

  // Strided and Segments loads read step x lanes consecutive floats and keep every step-th.
  const int64_t step =
      read == Im2colRead::Strided || read == Im2colRead::Segments ? s.sw : 1;
  auto* wideTy = llvm::FixedVectorType::get(floatTy, unsigned(L * step));
  auto* wideIntTy = llvm::FixedVectorType::get(i32, unsigned(L * step));
  std::vector<int> pick, spread;  // every step-th lane; each mask lane step times
  for (int64_t j = 0; j < int64_t(L); ++j) pick.push_back(int(j * step));
  for (int64_t j = 0; j < int64_t(L * step); ++j) spread.push_back(int(j / step));
  std::vector<llvm::Constant*> firstOfStep;
  for (int64_t j = 0; j < int64_t(L * step); ++j) firstOfStep.push_back(b.getInt1(j % step == 0));
  llvm::Value* everyStep = llvm::ConstantVector::get(firstOfStep);
  // A lane mask in the wide load's lanes.
  auto widen = [&](llvm::Value* mask) -> llvm::Value* {
    if (step == 1) return mask;
    return b.CreateAnd(b.CreateShuffleVector(mask, spread), everyStep);
  };
  const int64_t segments = read == Im2colRead::Segments ? segmentsPerVector(s.ow, L) : 0;

  // Per-lane output coordinates of the tile's pixels and their input coordinates at tap
  // (0, 0), as i32 vectors; lanes past the tile's width are off.
  std::vector<llvm::Value*> ohLane(nv), ihBase(nv), iwBase(nv), inTile(nv);
  llvm::Value* p0i = b.CreateVectorSplat(L, b.CreateTrunc(p0, i32));
  for (int64_t v = 0; v < nv; ++v) {
    std::vector<llvm::Constant*> ids, on;
    for (int64_t j = 0; j < int64_t(L); ++j) {
      ids.push_back(b.getInt32(uint32_t(v * L + j)));
      on.push_back(b.getInt1(v * L + j < width));
    }
    llvm::Value* p = b.CreateAdd(p0i, llvm::ConstantVector::get(ids));
    ohLane[v] = b.CreateUDiv(p, splatI32(s.ow));
    llvm::Value* ow = b.CreateSub(p, b.CreateMul(ohLane[v], splatI32(s.ow)));
    ihBase[v] = b.CreateSub(b.CreateMul(ohLane[v], splatI32(s.sh)), splatI32(s.padTop));
    iwBase[v] = b.CreateSub(b.CreateMul(ow, splatI32(s.sw)), splatI32(s.padLeft));
    inTile[v] = (v + 1) * L <= width ? llvm::ConstantInt::getTrue(boolVecTy)
                                     : llvm::ConstantVector::get(on);
  }
  // Row tiles: the tile's first output pixel (row, column); Segments: the output row of
  // each vector's first lane.
  llvm::Value* oh0 = rowTiles ? b.CreateUDiv(p0, kb.index(s.ow)) : nullptr;
  llvm::Value* ow0 = rowTiles ? b.CreateSub(p0, b.CreateMul(oh0, kb.index(s.ow))) : nullptr;
  std::vector<llvm::Value*> vectorRow(nv);
  if (read == Im2colRead::Segments)
    for (int64_t v = 0; v < nv; ++v)
      vectorRow[v] = b.CreateUDiv(b.CreateAdd(p0, kb.index(v * L)), kb.index(s.ow));

  for (int64_t kh = 0; kh < s.kh; ++kh) {
    for (int64_t kw = 0; kw < s.kw; ++kw) {
      const int64_t tap = kh * s.kw + kw;
      // Lanes inside the image for this tap, and each lane's input offset in its channel.
      std::vector<llvm::Value*> mask(nv), offset(nv), wideMask(nv);
      for (int64_t v = 0; v < nv; ++v) {
        llvm::Value* ih = b.CreateAdd(ihBase[v], splatI32(kh * s.dh));
        llvm::Value* iw = b.CreateAdd(iwBase[v], splatI32(kw * s.dw));
        llvm::Value* inside = b.CreateAnd(
            b.CreateAnd(b.CreateICmpSGE(ih, splatI32(0)), b.CreateICmpSLT(ih, splatI32(s.h))),
            b.CreateAnd(b.CreateICmpSGE(iw, splatI32(0)), b.CreateICmpSLT(iw, splatI32(s.w))));
        mask[v] = b.CreateAnd(inside, inTile[v]);
        if (read == Im2colRead::Gather) offset[v] = b.CreateAdd(b.CreateMul(ih, splatI32(s.w)), iw);
        if (read == Im2colRead::Strided) wideMask[v] = widen(mask[v]);
      }
      // Input offset (inside the channel) of the tile's first lane for this tap.
      llvm::Value* rowOffset = nullptr;
      if (rowTiles && read != Im2colRead::Gather) {
        llvm::Value* ih =
            b.CreateAdd(b.CreateMul(oh0, kb.index(s.sh)), kb.index(kh * s.dh - s.padTop));
        llvm::Value* iw =
            b.CreateAdd(b.CreateMul(ow0, kb.index(s.sw)), kb.index(kw * s.dw - s.padLeft));
        rowOffset = b.CreateAdd(b.CreateMul(ih, kb.index(s.w)), iw);
      } else if (read == Im2colRead::Contiguous) {
        rowOffset =
            b.CreateAdd(p0, kb.index((kh * s.dh - s.padTop) * s.w + kw * s.dw - s.padLeft));
      }
      // Segments: per vector and segment (output row vectorRow + i), the lanes on that row
      // (wide) and the input offset that lane 0 would read if that row continued to it, so
      // that lane j reads offset + j * stride.
      std::vector<std::vector<llvm::Value*>> segMask(nv), segOffset(nv);
      for (int64_t v = 0; v < nv && read == Im2colRead::Segments; ++v) {
        llvm::Value* first = b.CreateAdd(p0, kb.index(v * L));
        for (int64_t i = 0; i < segments; ++i) {
          llvm::Value* row = b.CreateAdd(vectorRow[v], kb.index(i));
          llvm::Value* onRow = b.CreateICmpEQ(
              ohLane[v], b.CreateVectorSplat(L, b.CreateTrunc(row, i32)));
          segMask[v].push_back(widen(b.CreateAnd(mask[v], onRow)));
          llvm::Value* ih =
              b.CreateAdd(b.CreateMul(row, kb.index(s.sh)), kb.index(kh * s.dh - s.padTop));
          llvm::Value* col = b.CreateSub(first, b.CreateMul(row, kb.index(s.ow)));  // <= 0 for i > 0
          llvm::Value* iw =
              b.CreateAdd(b.CreateMul(col, kb.index(s.sw)), kb.index(kw * s.dw - s.padLeft));
          segOffset[v].push_back(b.CreateAdd(b.CreateMul(ih, kb.index(s.w)), iw));
        }
      }
      kb.forRange(
          kb.index(0), kb.index(count),
          [&](llvm::Value* cl) {
            llvm::Value* channel =
                b.CreateAdd(xImage, b.CreateMul(b.CreateAdd(c0, cl), kb.index(HW)));
            llvm::Value* row = b.CreateAdd(b.CreateMul(cl, kb.index(taps)), kb.index(tap));
            for (int64_t v = 0; v < nv; ++v) {
              llvm::Value* value;
              if (read == Im2colRead::Contiguous) {
                llvm::Value* at = b.CreateAdd(b.CreateAdd(channel, rowOffset), kb.index(v * L));
                value = b.CreateMaskedLoad(vecTy, kb.elementAddress(0, at), llvm::Align(4),
                                           mask[v], llvm::Constant::getNullValue(vecTy));
              } else if (read == Im2colRead::Strided) {
                llvm::Value* at =
                    b.CreateAdd(b.CreateAdd(channel, rowOffset), kb.index(v * L * step));
                value = b.CreateMaskedLoad(wideTy, kb.elementAddress(0, at), llvm::Align(4),
                                           wideMask[v], llvm::Constant::getNullValue(wideTy));
                value = b.CreateShuffleVector(value, pick);
              } else if (read == Im2colRead::Segments) {
                // Masked-off lanes load +0.0 (all bits clear), so OR merges the segments.
                llvm::Value* bits = nullptr;
                for (int64_t i = 0; i < segments; ++i) {
                  llvm::Value* at = b.CreateAdd(channel, segOffset[v][i]);
                  llvm::Value* part =
                      b.CreateMaskedLoad(wideTy, kb.elementAddress(0, at), llvm::Align(4),
                                         segMask[v][i], llvm::Constant::getNullValue(wideTy));
                  part = b.CreateBitCast(part, wideIntTy);
                  bits = bits ? b.CreateOr(bits, part) : part;
                }
                value = b.CreateBitCast(bits, wideTy);
                if (step > 1) value = b.CreateShuffleVector(value, pick);
              } else {
                llvm::Value* pointers =
                    b.CreateGEP(floatTy, kb.elementAddress(0, channel), offset[v]);
                value = b.CreateMaskedGather(vecTy, pointers, llvm::Align(4), mask[v],
                                             llvm::Constant::getNullValue(vecTy));
              }
              llvm::Value* slot = b.CreateAdd(
                  tileBase, b.CreateAdd(b.CreateMul(row, kb.index(nr)), kb.index(v * L)));
              b.CreateAlignedStore(value, b.CreateGEP(floatTy, panel, slot), llvm::Align(32));
            }
          },
          /*unroll=*/false);
    }
  }
}

}  // namespace kiln::codegen::detail
