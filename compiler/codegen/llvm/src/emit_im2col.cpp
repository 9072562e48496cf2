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
                    llvm::Value* panel, llvm::Value* tileBase, llvm::Value* xImage, llvm::Value* c0,
                    int64_t count, llvm::Value* p0, int64_t width) {
  llvm::IRBuilder<>& b = kb.b();
  const unsigned L = kb.target().vectorLanes;
  const Im2colRead read = im2colReadFor(s, rowTiles, L);
  const int64_t taps = s.kh * s.kw, HW = s.h * s.w;
  const int64_t nv = (width + L - 1) / L;
  llvm::Type* floatTy = b.getFloatTy();
  llvm::Type* i32 = b.getInt32Ty();
  auto* vecTy = llvm::FixedVectorType::get(floatTy, L);
  auto* intVecTy = llvm::FixedVectorType::get(i32, L);
  auto splatI32 = [&](int64_t v) { return llvm::ConstantInt::get(intVecTy, uint64_t(v), true); };

  // Strided and Segments reads load step x lanes consecutive floats and keep every step-th:
  // as `step` parts of one register each, whose masks are computed in their own lanes (lane
  // l of part r belongs to pixel (r * lanes + l) / step, and only lanes l % step == 0 are on),
  // so no mask is ever shuffled or wider than a register.
  const int64_t step = read == Im2colRead::Strided || read == Im2colRead::Segments ? s.sw : 1;
  const int64_t segments = read == Im2colRead::Segments ? segmentsPerVector(s.ow, L) : 0;
  // The parts (one float vector each) of vector v concatenated, then every step-th lane.
  auto pickEveryStep = [&](std::vector<llvm::Value*> parts) -> llvm::Value* {
    llvm::Value* all = kb.concatVectors(std::move(parts));
    return step == 1 ? all : kb.strideLanes(all, 0, step, int64_t(L));
  };

  // Per part (v, r): each lane's pixel input row and column at tap (0, 0) (i32), and
  // whether the lane is used at all (first of its step, inside the tile's width).
  const int64_t P = nv * step;  // parts
  std::vector<llvm::Value*> ohLane(P), ihBase(P), iwBase(P), laneOn(P);
  llvm::Value* p0i = b.CreateVectorSplat(L, b.CreateTrunc(p0, i32));
  for (int64_t v = 0; v < nv; ++v) {
    for (int64_t r = 0; r < step; ++r) {
      const int64_t q = v * step + r;
      std::vector<llvm::Constant*> ids, on;
      for (int64_t l = 0; l < int64_t(L); ++l) {
        const int64_t pixel = v * L + (r * L + l) / step;
        ids.push_back(b.getInt32(uint32_t(pixel)));
        on.push_back(b.getInt1((r * L + l) % step == 0 && pixel < width));
      }
      llvm::Value* p = b.CreateAdd(p0i, llvm::ConstantVector::get(ids));
      ohLane[q] = b.CreateUDiv(p, splatI32(s.ow));
      llvm::Value* ow = b.CreateSub(p, b.CreateMul(ohLane[q], splatI32(s.ow)));
      ihBase[q] = b.CreateSub(b.CreateMul(ohLane[q], splatI32(s.sh)), splatI32(s.padTop));
      iwBase[q] = b.CreateSub(b.CreateMul(ow, splatI32(s.sw)), splatI32(s.padLeft));
      laneOn[q] = llvm::ConstantVector::get(on);
    }
  }
  // Row tiles: the tile's first output pixel (row, column). Segments: per vector and
  // segment i, the lanes on output row (row of the vector's first lane) + i, and the input
  // column lane 0 would read at tap (0, 0) if that row continued to it (<= 0 for i > 0), so
  // that lane j reads column + j * stride.
  llvm::Value* oh0 = rowTiles ? b.CreateUDiv(p0, kb.index(s.ow)) : nullptr;
  llvm::Value* ow0 = rowTiles ? b.CreateSub(p0, b.CreateMul(oh0, kb.index(s.ow))) : nullptr;
  std::vector<std::vector<llvm::Value*>> onSegment(P), segRow(nv), segColumn(nv);
  for (int64_t v = 0; v < nv && read == Im2colRead::Segments; ++v) {
    llvm::Value* first = b.CreateAdd(p0, kb.index(v * L));
    llvm::Value* firstRow = b.CreateUDiv(first, kb.index(s.ow));
    for (int64_t i = 0; i < segments; ++i) {
      llvm::Value* row = b.CreateAdd(firstRow, kb.index(i));
      llvm::Value* rowSplat = b.CreateVectorSplat(L, b.CreateTrunc(row, i32));
      for (int64_t r = 0; r < step; ++r)
        onSegment[v * step + r].push_back(b.CreateICmpEQ(ohLane[v * step + r], rowSplat));
      segRow[v].push_back(row);
      segColumn[v].push_back(b.CreateSub(
          b.CreateMul(b.CreateSub(first, b.CreateMul(row, kb.index(s.ow))), kb.index(s.sw)),
          kb.index(s.padLeft)));
    }
  }

  for (int64_t kh = 0; kh < s.kh; ++kh) {
    // Lanes whose input row is inside the image for this kernel row (unsigned compare: a
    // row above the image wraps to a large value).
    std::vector<llvm::Value*> rowInside(P);
    for (int64_t q = 0; q < P; ++q)
      rowInside[q] = b.CreateAnd(
          b.CreateICmpULT(b.CreateAdd(ihBase[q], splatI32(kh * s.dh)), splatI32(s.h)), laneOn[q]);
    for (int64_t kw = 0; kw < s.kw; ++kw) {
      const int64_t tap = kh * s.kw + kw;
      // Lanes inside the image for this tap, and (gathers) each lane's input offset.
      std::vector<llvm::Value*> mask(P), offset(P);
      for (int64_t q = 0; q < P; ++q) {
        llvm::Value* iw = b.CreateAdd(iwBase[q], splatI32(kw * s.dw));
        mask[q] = b.CreateAnd(rowInside[q], b.CreateICmpULT(iw, splatI32(s.w)));
        if (read == Im2colRead::Gather)
          offset[q] = b.CreateAdd(
              b.CreateMul(b.CreateAdd(ihBase[q], splatI32(kh * s.dh)), splatI32(s.w)), iw);
      }
      // Input offset (inside the channel) of the tile's first lane for this tap.
      llvm::Value* rowOffset = nullptr;
      // Row tiles: whether every float the tap's loads span lies inside the input row, so
      // plain loads do (lanes past the tile's width read inputs the stores never keep).
      llvm::Value* interior = nullptr;
      if (rowTiles && read != Im2colRead::Gather) {
        llvm::Value* ih =
            b.CreateAdd(b.CreateMul(oh0, kb.index(s.sh)), kb.index(kh * s.dh - s.padTop));
        llvm::Value* iw =
            b.CreateAdd(b.CreateMul(ow0, kb.index(s.sw)), kb.index(kw * s.dw - s.padLeft));
        rowOffset = b.CreateAdd(b.CreateMul(ih, kb.index(s.w)), iw);
        interior = b.CreateAnd(
            b.CreateICmpULT(ih, kb.index(s.h)),
            b.CreateAnd(b.CreateICmpSGE(iw, kb.index(0)),
                        b.CreateICmpSLE(b.CreateAdd(iw, kb.index(nv * L * step)), kb.index(s.w))));
      } else if (read == Im2colRead::Contiguous) {
        rowOffset = b.CreateAdd(p0, kb.index((kh * s.dh - s.padTop) * s.w + kw * s.dw - s.padLeft));
      }
      std::vector<std::vector<llvm::Value*>> segMask(P), segOffset(nv);
      for (int64_t v = 0; v < nv && read == Im2colRead::Segments; ++v) {
        for (int64_t i = 0; i < segments; ++i) {
          for (int64_t r = 0; r < step; ++r) {
            const int64_t q = v * step + r;
            segMask[q].push_back(b.CreateAnd(mask[q], onSegment[q][i]));
          }
          llvm::Value* ih = b.CreateAdd(b.CreateMul(segRow[v][i], kb.index(s.sh)),
                                        kb.index(kh * s.dh - s.padTop));
          segOffset[v].push_back(b.CreateAdd(b.CreateMul(ih, kb.index(s.w)),
                                             b.CreateAdd(segColumn[v][i], kb.index(kw * s.dw))));
        }
      }
      // The loop over the block's channels, with plain loads (row tiles' interior taps) or
      // masked ones.
      auto packChannels = [&](bool plain) {
        kb.forRange(
            kb.index(0), kb.index(count),
            [&](llvm::Value* cl) {
              llvm::Value* channel =
                  b.CreateAdd(xImage, b.CreateMul(b.CreateAdd(c0, cl), kb.index(HW)));
              llvm::Value* row = b.CreateAdd(b.CreateMul(cl, kb.index(taps)), kb.index(tap));
              // One part: `lanes` floats from element `at` with the mask's lanes on (0 else).
              auto loadPart = [&](llvm::Value* at, llvm::Value* m) -> llvm::Value* {
                if (plain)
                  return b.CreateAlignedLoad(vecTy, kb.elementAddress(0, at), llvm::Align(4));
                return b.CreateMaskedLoad(vecTy, kb.elementAddress(0, at), llvm::Align(4), m,
                                          llvm::Constant::getNullValue(vecTy));
              };
              for (int64_t v = 0; v < nv; ++v) {
                llvm::Value* value;
                std::vector<llvm::Value*> parts;
                if (read == Im2colRead::Contiguous || read == Im2colRead::Strided) {
                  llvm::Value* at =
                      b.CreateAdd(b.CreateAdd(channel, rowOffset), kb.index(v * L * step));
                  for (int64_t r = 0; r < step; ++r)
                    parts.push_back(loadPart(b.CreateAdd(at, kb.index(r * L)), mask[v * step + r]));
                  value = pickEveryStep(parts);
                } else if (read == Im2colRead::Segments) {
                  // Masked-off lanes load +0.0 (all bits clear), so OR merges the segments.
                  for (int64_t r = 0; r < step; ++r) {
                    llvm::Value* bits = nullptr;
                    for (int64_t i = 0; i < segments; ++i) {
                      llvm::Value* at =
                          b.CreateAdd(b.CreateAdd(channel, segOffset[v][i]), kb.index(r * L));
                      llvm::Value* part =
                          b.CreateBitCast(loadPart(at, segMask[v * step + r][i]), intVecTy);
                      bits = bits ? b.CreateOr(bits, part) : part;
                    }
                    parts.push_back(b.CreateBitCast(bits, vecTy));
                  }
                  value = pickEveryStep(parts);
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
      };
      if (interior) {
        kb.ifThen(interior, [&] { packChannels(true); });
        kb.ifThen(b.CreateNot(interior), [&] { packChannels(false); });
      } else {
        packChannels(false);
      }
    }
  }
}

}  // namespace kiln::codegen::detail
