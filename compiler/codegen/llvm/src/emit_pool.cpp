// Max and average pooling over NCHW or NCDHW (kernel, strides, dilations, pads; ceil mode is
// already in the output shape). On targets with vector registers, 2-D pools with dilation 1
// and width stride 1 or 2 are vectorised along the output columns (window_tiles.h: groups of
// output rows share each input vector; padding reads -inf for max, 0 for average, from lane
// masks and a pad row); the average divides each lane by its own tap count, a constant per
// lane in the edge tiles. Otherwise (microcontrollers, 3-D, dilated) each workgroup item is
// one output row, combined in place tap by tap over the columns whose input is inside the
// image, like the plain convolution.
#include <algorithm>

#include "emitters.h"
#include "fused_epilogue.h"
#include "kernel_builder.h"
#include "window_columns.h"
#include "window_tiles.h"

namespace kiln::codegen::detail {
namespace {

// Number of taps k in [0, kernel) with position start + k * dilation in [lo, hi).
llvm::Value* tapCount(KernelBuilder& kb, llvm::Value* start, int64_t kernel, int64_t dilation,
                      int64_t lo, int64_t hi) {
  llvm::IRBuilder<>& b = kb.b();
  llvm::Value* count = kb.index(0);
  for (int64_t k = 0; k < kernel; ++k) {
    llvm::Value* pos = b.CreateAdd(start, kb.index(k * dilation));
    llvm::Value* inside =
        b.CreateAnd(b.CreateICmpSGE(pos, kb.index(lo)), b.CreateICmpSLT(pos, kb.index(hi)));
    count = b.CreateAdd(count, b.CreateZExt(inside, kb.indexType()));
  }
  return count;
}

// Taps k in [0, kernel) with start + k inside [lo, hi) (compile-time form of tapCount).
int64_t tapCountOf(int64_t start, int64_t kernel, int64_t lo, int64_t hi) {
  int64_t count = 0;
  for (int64_t k = 0; k < kernel; ++k) count += start + k >= lo && start + k < hi;
  return count;
}

// The vectorised 2-D pool (dilation 1, width stride 1 or 2), if it applies.
bool emitPoolVector(KernelBuilder& kb, uint32_t& workgroups) {
  const KernelDesc& d = kb.desc();
  const unsigned lanes = kb.target().vectorLanes;
  const std::vector<int64_t>& ys = d.output.shape;
  if (!windowRowsApply(d, lanes) || d.inputs[0].type != ElemType::F32) return false;
  llvm::IRBuilder<>& b = kb.b();
  const WindowGeometry g = windowGeometry(d, d.kernelShape[0], d.kernelShape[1]);
  const bool isMax = d.poolKind == PoolKind::Max;
  const bool all = d.countIncludePad;
  // Rows and columns counted by the average: inside the image, or the padded image.
  const int64_t rowLo = all ? -d.pads[0] : 0, rowHi = all ? g.H + d.pads[2] : g.H;
  const int64_t colLo = all ? -d.pads[1] : 0, colHi = all ? g.W + d.pads[3] : g.W;
  const float padValue = isMax ? -__builtin_inff() : 0.0f;
  const std::vector<ColumnTile> tiles = planColumnTiles(g, lanes);
  if (!windowTilesFit(g, tiles)) return false;
  const unsigned tileLanes = tiles.front().lanes;
  WindowOutput output(kb);
  llvm::Value* padRow = windowNeedsPadRow(g) ? makePadRow(kb, g, padValue) : nullptr;

  std::vector<llvm::Value*> rowTaps;  // per output row of the group: rows the average counts
  llvm::Value* initial = b.CreateVectorSplat(tileLanes, kb.f32(padValue));
  WindowOps ops;
  ops.padValue = padValue;
  ops.init = [&](unsigned) { return initial; };
  ops.combine = [&](llvm::Value* acc, llvm::Value* x, int64_t, int64_t) {
    return isMax ? kb.maxValue(x, acc) : b.CreateFAdd(acc, x);
  };
  ops.finish = [&](int64_t r, const ColumnTile& tile, llvm::Value* column, llvm::Value* acc,
                   llvm::Constant* storeMask) {
    if (!isMax) {
      // Columns counted per lane: all KW for interior tiles, a constant per lane at the edges.
      std::vector<llvm::Constant*> counts;
      for (unsigned j = 0; j < tile.lanes; ++j) {
        int64_t start = (tile.start + j) * g.sw - g.padLeft;
        int64_t c = tile.loop ? g.KW : tapCountOf(start, g.KW, colLo, colHi);
        counts.push_back(llvm::ConstantFP::get(b.getFloatTy(), float(std::max<int64_t>(c, 1))));
      }
      llvm::Value* divisor = b.CreateFMul(b.CreateVectorSplat(tile.lanes, rowTaps[size_t(r)]),
                                          llvm::ConstantVector::get(counts));
      acc = b.CreateFDiv(acc, divisor);
    }
    output.store(r, column, acc, storeMask);
  };

  const int64_t planes = ys[0] * ys[1];
  forEachWindowGroup(kb, g, planes, [&](llvm::Value* plane, llvm::Value* oh0, int64_t rows) {
    llvm::Value* inPlane = b.CreateMul(plane, kb.index(g.H * g.W));
    rowTaps.assign(size_t(rows), nullptr);
    output.startGroup(g, plane, oh0, rows, [&](int64_t r, llvm::Value* oh) {
      if (isMax) return;
      llvm::Value* ihStart = b.CreateSub(b.CreateMul(oh, kb.index(g.sh)), kb.index(g.padTop));
      llvm::Value* rowsCounted = tapCount(kb, ihStart, g.KH, 1, rowLo, rowHi);
      rowsCounted = b.CreateSelect(b.CreateICmpEQ(rowsCounted, kb.index(0)), kb.index(1),
                                   rowsCounted);  // an all-padding window averages to 0
      rowTaps[size_t(r)] = b.CreateSIToFP(rowsCounted, b.getFloatTy());
    });
    emitWindowRows(kb, g, tiles, inPlane, oh0, rows, padRow, ops);
    output.finishGroup(g, rows);
  });
  workgroups = workgroupsFor(windowGroupCount(g, planes, kb.target().vectorRegisters),
                            windowGroupRows(g, kb.target().vectorRegisters) * g.OW * g.KH * g.KW);
  return true;
}

}  // namespace

uint32_t emitPool(KernelBuilder& kb) {
  uint32_t vectorWorkgroups = 0;
  if (emitPoolVector(kb, vectorWorkgroups)) return vectorWorkgroups;
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const ElemType f32 = ElemType::F32;
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  const std::vector<int64_t>& ys = d.output.shape;
  const bool volume = xs.size() == 5;
  const size_t r = xs.size();
  const int64_t D = volume ? xs[2] : 1, H = xs[r - 2], W = xs[r - 1];
  const int64_t OD = volume ? ys[2] : 1, OH = ys[r - 2], OW = ys[r - 1];
  const int64_t KD = volume ? d.depthKernel : 1, KH = d.kernelShape[0], KW = d.kernelShape[1];
  const int64_t sh = d.strides[0], sw = d.strides[1], dh = d.dilations[0], dw = d.dilations[1];
  const int64_t sd = d.depthStride, dd = d.depthDilation;
  const int64_t padTop = d.pads[0], padLeft = d.pads[1];
  const int64_t padBottom = d.pads[2], padRight = d.pads[3];
  const int64_t padFront = d.depthPadBegin, padBack = d.depthPadEnd;
  const bool isMax = d.poolKind == PoolKind::Max;
  const unsigned out = kb.outputBinding();

  const int64_t rows = ys[0] * ys[1] * OD * OH;
  FusedEpilogue epilogue(kb);
  kb.forWorkgroupShare(rows, [&](llvm::Value* row) {
    std::vector<llvm::Value*> c = kb.decompose(row, {ys[0] * ys[1], OD, OH});
    llvm::Value *plane = c[0], *od = c[1], *oh = c[2];  // plane = n * C + c
    llvm::Value* inPlane = b.CreateMul(plane, kb.index(D * H * W));
    llvm::Value* rowBase = b.CreateMul(row, kb.index(OW));
    llvm::Value* init = kb.f32(isMax ? -__builtin_inff() : 0.0f);
    kb.forRange(0, OW,
                [&](llvm::Value* ow) { kb.store(out, f32, b.CreateAdd(rowBase, ow), init); });
    llvm::Value* idStart = b.CreateSub(b.CreateMul(od, kb.index(sd)), kb.index(padFront));
    llvm::Value* ihStart = b.CreateSub(b.CreateMul(oh, kb.index(sh)), kb.index(padTop));
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
            inPlane, b.CreateMul(b.CreateAdd(b.CreateMul(id, kb.index(H)), ih), kb.index(W)));
        WindowColumns columns{KW, sw, dw, padLeft, W, OW};
        forEachWindowColumn(
            kb, columns, [](llvm::Value*) -> llvm::Value* { return nullptr; },
            [&](llvm::Value* ow, llvm::Value* iw, llvm::Value*) {
              llvm::Value* x = kb.load(0, f32, b.CreateAdd(inRow, iw));
              llvm::Value* at = b.CreateAdd(rowBase, ow);
              llvm::Value* acc = kb.load(out, f32, at);
              kb.store(out, f32, at, isMax ? kb.maxValue(x, acc) : b.CreateFAdd(acc, x));
            });
      });
    });
    if (!isMax) {
      // Divisor: taps inside the image, or inside the padded image with count_include_pad.
      bool all = d.countIncludePad;
      llvm::Value* planesCounted =
          tapCount(kb, idStart, KD, dd, all ? -padFront : 0, all ? D + padBack : D);
      llvm::Value* rowsCounted = b.CreateMul(
          planesCounted, tapCount(kb, ihStart, KH, dh, all ? -padTop : 0, all ? H + padBottom : H));
      kb.forRange(0, OW, [&](llvm::Value* ow) {
        llvm::Value* iwStart = b.CreateSub(b.CreateMul(ow, kb.index(sw)), kb.index(padLeft));
        llvm::Value* taps = b.CreateMul(
            rowsCounted, tapCount(kb, iwStart, KW, dw, all ? -padLeft : 0, all ? W + padRight : W));
        llvm::Value* divisor = b.CreateSIToFP(
            b.CreateSelect(b.CreateICmpEQ(taps, kb.index(0)), kb.index(1), taps), b.getFloatTy());
        llvm::Value* at = b.CreateAdd(rowBase, ow);
        kb.store(out, f32, at, b.CreateFDiv(kb.load(out, f32, at), divisor));
      });
    }
    epilogue.applyToRow(rowBase, OW);
  });
  return workgroupsFor(rows, OW * KD * KH * KW);
}

}  // namespace kiln::codegen::detail
