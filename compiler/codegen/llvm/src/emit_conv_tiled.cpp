// Register-tiled convolution for targets with vector registers (width stride 1 or 2), and for
// microcontrollers with a hardware FPU but no vector registers (Cortex-M4F/M7/M33, RV32F),
// where a "vector" of 4 columns is 4 scalar registers: 2 output channels x 4 columns of
// accumulators, 4 input and 2 weight registers fit the FPU's 32 single-precision registers,
// each input feeding 2 multiply-adds and each weight 4, against the plain loop's load,
// multiply-add and store of the output per product.
// A work item is one output row (n, oh[, od]) of a block of OCB output channels. The row's
// interior columns, whose taps all lie inside the image, are covered by tiles of U vectors of
// V columns: the OCB x U accumulators stay in registers over the whole reduction (input
// channels, kernel rows, kernel columns), each input vector feeds OCB multiply-adds and each
// weight broadcast U of them. Kernel rows outside the image are skipped by clamping the
// kernel-row range per output row; the edge columns (padding) and the columns left over by
// the tiles get single-vector tiles whose loads and stores are masked by constant lane masks
// (known per tap at compile time). Bias is the accumulators' start, the activation is applied
// when the row is done. A fused epilogue chain (fused_epilogue.h) is applied to the accumulator
// vectors before their store when it evaluates on vectors, else to the finished rows.
#include <algorithm>

#include "emitters.h"
#include "fused_epilogue.h"
#include "kernel_builder.h"

namespace kiln::codegen::detail {
namespace {

struct ConvShape {
  int64_t N, C, D, H, W, OC, CG, KD, KH, KW, OD, OH, OW, OCG;
  int64_t sd, sh, dd, dh, dw, padFront, padTop, padLeft;
};

// [lo, hi) of kernel taps k with start + k * dilation inside [0, size), as index values.
std::pair<llvm::Value*, llvm::Value*> tapRange(KernelBuilder& kb, llvm::Value* start,
                                               int64_t kernel, int64_t dilation, int64_t size) {
  llvm::IRBuilder<>& b = kb.b();
  // lo = ceil(-start / dilation) if start < 0; hi = floor((size - 1 - start) / dilation) + 1.
  llvm::Value* negStart = b.CreateSub(kb.index(0), start);
  llvm::Value* lo = b.CreateSelect(
      b.CreateICmpSLT(start, kb.index(0)),
      b.CreateUDiv(b.CreateAdd(negStart, kb.index(dilation - 1)), kb.index(dilation)), kb.index(0));
  llvm::Value* room = b.CreateSub(kb.index(size - 1), start);
  llvm::Value* hi =
      b.CreateSelect(b.CreateICmpSLT(room, kb.index(0)), kb.index(0),
                     b.CreateAdd(b.CreateUDiv(room, kb.index(dilation)), kb.index(1)));
  hi = kb.minValue(hi, kb.index(kernel));
  lo = kb.minValue(lo, hi);
  return {lo, hi};
}

}  // namespace

bool emitConvTiled(KernelBuilder& kb, uint32_t& workgroups) {
  const KernelDesc& d = kb.desc();
  // The target's tile unit (Helium: real 4-lane vectors), or on another microcontroller with an
  // FPU 4-column "vectors" of scalars.
  const TileUnit unit = tileUnit(kb.target());
  const bool scalarFpu =
      unit.lanes == 0 && !kb.target().softFloat && !kb.target().smallestCode;
  const unsigned lanes = scalarFpu ? 4 : unit.lanes;
  const int64_t sw = d.strides[1];
  if (lanes < 4 || (sw != 1 && sw != 2)) return false;
  llvm::IRBuilder<>& b = kb.b();
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  const std::vector<int64_t>& ws = d.inputs[1].shape;
  const std::vector<int64_t>& ys = d.output.shape;
  const bool volume = xs.size() == 5;
  const size_t r = xs.size();
  ConvShape s{xs[0],
              xs[1],
              volume ? xs[2] : 1,
              xs[r - 2],
              xs[r - 1],
              ws[0],
              ws[1],
              volume ? ws[2] : 1,
              ws[r - 2],
              ws[r - 1],
              volume ? ys[2] : 1,
              ys[r - 2],
              ys[r - 1],
              ws[0] / d.groups,
              d.depthStride,
              d.strides[0],
              d.depthDilation,
              d.dilations[0],
              d.dilations[1],
              d.depthPadBegin,
              d.pads[0],
              d.pads[1]};
  // A scalar FPU's tile is 2 channels x 1 vector of 4 columns (its "vectors" are 4 scalars:
  // 8 accumulators). Vector targets, Helium's 8 q registers included, take 4 channels x 2
  // vectors (on Cortex-M55 the MNIST CNN and the float ResNet-8 in 3.13 and 10.3 M
  // instructions against 3.70 and 14.2 M with the scalar FPU's 2 x 1; 4 x 1: 3.18 / 10.4;
  // 4 x 3, 4 x 4 and 8 x 1 no better).
  const int64_t OCB = scalarFpu        ? (s.OCG % 2 == 0 ? 2 : 1)
                      : s.OCG % 4 == 0 ? 4
                      : s.OCG % 2 == 0 ? 2
                                       : 1;
  const int64_t U = scalarFpu ? 1 : OCB == 1 ? 4 : 2;
  // Interior columns: every kw tap inside [0, W).
  // With stride 2 a vector of V columns is read as 2V consecutive inputs (the odd ones are
  // dropped), so the last tap's load must end inside the row as well.
  const int64_t owLo = std::min<int64_t>(s.OW, (s.padLeft + sw - 1) / sw);
  const int64_t lastStart = s.W - sw + s.padLeft - (s.KW - 1) * s.dw;  // of ow * sw
  const int64_t owHi =
      lastStart < 0 ? owLo : std::max<int64_t>(owLo, std::min<int64_t>(s.OW, lastStart / sw + 1));
  // Tile plan along the row: masked single vectors over the left edge, then (interior) as
  // many tiles of U vectors as fit, single vectors of V and V/2 lanes, and masked single
  // vectors over the rest. A masked tile's lanes that read outside the image or write past
  // the row are switched off by constant masks.
  struct Tile {
    int64_t start;    // first column
    int64_t repeats;  // tiles of this shape side by side (a runtime loop)
    int64_t vectors;
    unsigned lanes;
    bool masked;
  };
  std::vector<Tile> tiles;
  int64_t ow = 0;
  while (ow < owLo) {
    tiles.push_back({ow, 1, 1, lanes, true});
    ow += lanes;
  }
  int64_t wide = ow < owHi ? (owHi - ow) / (U * lanes) : 0;
  if (wide > 0) tiles.push_back({ow, wide, U, lanes, false});
  ow += wide * U * lanes;
  for (unsigned v = lanes; v >= 4; v /= 2) {
    if (ow + v <= owHi) {
      tiles.push_back({ow, 1, 1, v, false});
      ow += v;
    }
  }
  while (ow < s.OW) {
    tiles.push_back({ow, 1, 1, lanes, true});
    ow += lanes;
  }

  const bool hasBias = d.inputs.size() - d.epilogue.inputCount > 2;
  const unsigned out = kb.outputBinding();
  const ElemType f32 = ElemType::F32;
  const int64_t filterSize = s.CG * s.KD * s.KH * s.KW;
  const int64_t blocks = s.OC / OCB;
  const int64_t rows = s.N * blocks * s.OD * s.OH;
  llvm::Type* floatTy = b.getFloatTy();
  FusedEpilogue epilogue(kb);

  // Accumulator slots (promoted to registers): OCB x maxU vectors of the widest tile.
  std::vector<std::vector<llvm::Value*>> slots(OCB);
  for (int64_t o = 0; o < OCB; ++o) {
    for (int64_t u = 0; u < U; ++u) {
      slots[o].push_back(kb.local(llvm::FixedVectorType::get(floatTy, lanes), "acc"));
    }
  }

  kb.forWorkgroupShare(rows, [&](llvm::Value* row) {
    std::vector<llvm::Value*> c = kb.decompose(row, {s.N, blocks, s.OD, s.OH});
    llvm::Value *n = c[0], *block = c[1], *od = c[2], *oh = c[3];
    llvm::Value* ocBase = b.CreateMul(block, kb.index(OCB));
    llvm::Value* group = b.CreateUDiv(ocBase, kb.index(s.OCG));
    llvm::Value* xGroup = b.CreateAdd(b.CreateMul(n, kb.index(s.C * s.D * s.H * s.W)),
                                      b.CreateMul(group, kb.index(s.CG * s.D * s.H * s.W)));
    llvm::Value* filterBase = b.CreateMul(ocBase, kb.index(filterSize));
    llvm::Value* idStart = b.CreateSub(b.CreateMul(od, kb.index(s.sd)), kb.index(s.padFront));
    llvm::Value* ihStart = b.CreateSub(b.CreateMul(oh, kb.index(s.sh)), kb.index(s.padTop));
    auto [kdLo, kdHi] = tapRange(kb, idStart, s.KD, s.dd, s.D);
    auto [khLo, khHi] = tapRange(kb, ihStart, s.KH, s.dh, s.H);
    // Output row o of the block: ((n * OC + oc) * OD + od) * OH + oh.
    auto outRow = [&](int64_t o) {
      llvm::Value* oc = b.CreateAdd(ocBase, kb.index(o));
      llvm::Value* plane = b.CreateAdd(b.CreateMul(n, kb.index(s.OC)), oc);
      llvm::Value* rowIndex = b.CreateAdd(
          b.CreateMul(b.CreateAdd(b.CreateMul(plane, kb.index(s.OD)), od), kb.index(s.OH)), oh);
      return b.CreateMul(rowIndex, kb.index(s.OW));
    };
    std::vector<llvm::Value*> bias(OCB), rowBase(OCB);
    std::vector<FusedEpilogue::Row> epilogueRows(OCB);
    for (int64_t o = 0; o < OCB; ++o) {
      bias[o] = hasBias ? kb.load(2, f32, b.CreateAdd(ocBase, kb.index(o))) : kb.f32(0.0f);
      rowBase[o] = outRow(o);
      if (epilogue.vectorizable()) epilogueRows[o] = epilogue.row(rowBase[o]);
    }
    // Calls tap(inRow, filterRow) for every in-image (ic, kd, kh): inRow is the input row's
    // start, filterRow the index of W[ocBase, ic, kd, kh, 0].
    auto forTaps = [&](const std::function<void(llvm::Value*, llvm::Value*)>& tap) {
      kb.forRange(kb.index(0), kb.index(s.CG), [&](llvm::Value* ic) {
        llvm::Value* channel = b.CreateAdd(xGroup, b.CreateMul(ic, kb.index(s.D * s.H * s.W)));
        llvm::Value* filterChannel =
            b.CreateAdd(filterBase, b.CreateMul(ic, kb.index(s.KD * s.KH * s.KW)));
        kb.forRange(kdLo, kdHi, [&](llvm::Value* kd) {
          llvm::Value* id = b.CreateAdd(idStart, b.CreateMul(kd, kb.index(s.dd)));
          kb.forRange(khLo, khHi, [&](llvm::Value* kh) {
            llvm::Value* ih = b.CreateAdd(ihStart, b.CreateMul(kh, kb.index(s.dh)));
            llvm::Value* inRow = b.CreateAdd(
                channel,
                b.CreateMul(b.CreateAdd(b.CreateMul(id, kb.index(s.H)), ih), kb.index(s.W)));
            llvm::Value* filterRow = b.CreateAdd(
                filterChannel,
                b.CreateMul(b.CreateAdd(b.CreateMul(kd, kb.index(s.KH)), kh), kb.index(s.KW)));
            tap(inRow, filterRow);
          });
        });
      });
    };

    // Interior tiles.
    for (const Tile& t : tiles) {
      kb.forRange(0, t.repeats, [&](llvm::Value* repeat) {
        llvm::Value* tileStart =
            b.CreateAdd(kb.index(t.start), b.CreateMul(repeat, kb.index(t.vectors * t.lanes)));
        auto* vecTy = llvm::FixedVectorType::get(floatTy, t.lanes);
        std::vector<std::vector<llvm::Value*>> accSlots(OCB);
        for (int64_t o = 0; o < OCB; ++o) {
          for (int64_t u = 0; u < t.vectors; ++u) {
            // Narrower tiles reuse the first lanes of a slot through their own slot type.
            llvm::Value* slot = t.lanes == lanes ? slots[o][u] : kb.local(vecTy, "acc.narrow");
            b.CreateStore(b.CreateVectorSplat(t.lanes, bias[o]), slot);
            accSlots[o].push_back(slot);
          }
        }
        forTaps([&](llvm::Value* inRow, llvm::Value* filterRow) {
          std::vector<std::vector<llvm::Value*>> acc(OCB);
          for (int64_t o = 0; o < OCB; ++o) {
            for (int64_t u = 0; u < t.vectors; ++u)
              acc[o].push_back(b.CreateLoad(vecTy, accSlots[o][u]));
          }
          for (int64_t kw = 0; kw < s.KW; ++kw) {
            std::vector<llvm::Value*> xv;
            if (t.masked) {
              // Lane j of the (sw * V)-wide load reads column start * sw + offset + j.
              int64_t offset = kw * s.dw - s.padLeft;
              std::vector<llvm::Constant*> lanesOn;
              int64_t on = 0;
              for (int64_t j = 0; j < int64_t(t.lanes) * sw; ++j) {
                int64_t iw = t.start * sw + offset + j;
                bool use = j % sw == 0 && j / sw + t.start < s.OW && iw >= 0 && iw < s.W;
                on += use;
                lanesOn.push_back(b.getInt1(use));
              }
              if (on == 0) continue;  // this tap only meets padding
              auto* wideTy = llvm::FixedVectorType::get(floatTy, t.lanes * sw);
              llvm::Value* at =
                  kb.elementAddress(0, b.CreateAdd(inRow, kb.index(t.start * sw + offset)));
              llvm::Value* loaded =
                  b.CreateMaskedLoad(wideTy, at, llvm::Align(4), llvm::ConstantVector::get(lanesOn),
                                     llvm::Constant::getNullValue(wideTy));
              if (sw != 1) {
                std::vector<int> even;
                for (unsigned lane = 0; lane < t.lanes; ++lane) even.push_back(int(lane * 2));
                loaded = b.CreateShuffleVector(loaded, even);
              }
              xv.push_back(loaded);
            }
            for (int64_t u = 0; u < t.vectors && !t.masked; ++u) {
              int64_t column = u * t.lanes * sw + kw * s.dw - s.padLeft;
              llvm::Value* at = b.CreateAdd(
                  b.CreateAdd(inRow, b.CreateMul(tileStart, kb.index(sw))), kb.index(column));
              if (sw == 1) {
                xv.push_back(kb.loadVector(0, at, t.lanes));
              } else {
                llvm::Value* pairs = kb.loadVector(0, at, t.lanes * 2);
                std::vector<int> even;
                for (unsigned lane = 0; lane < t.lanes; ++lane) even.push_back(int(lane * 2));
                xv.push_back(b.CreateShuffleVector(pairs, even));
              }
            }
            for (int64_t o = 0; o < OCB; ++o) {
              llvm::Value* w =
                  kb.load(1, f32, b.CreateAdd(filterRow, kb.index(o * filterSize + kw)));
              llvm::Value* wv = b.CreateVectorSplat(t.lanes, w);
              for (int64_t u = 0; u < t.vectors; ++u) {
                // On a scalar FPU fused where LLVM finds it faster (Cortex-M7, RV32F; on
                // M4F/M33 VFMA is no faster than VMUL + VADD).
                acc[o][u] = scalarFpu
                                ? b.CreateIntrinsic(llvm::Intrinsic::fmuladd,
                                                    {acc[o][u]->getType()}, {xv[u], wv, acc[o][u]})
                                : b.CreateFAdd(acc[o][u], b.CreateFMul(xv[u], wv));
              }
            }
          }
          for (int64_t o = 0; o < OCB; ++o) {
            for (int64_t u = 0; u < t.vectors; ++u) b.CreateStore(acc[o][u], accSlots[o][u]);
          }
        });
        for (int64_t o = 0; o < OCB; ++o) {
          for (int64_t u = 0; u < t.vectors; ++u) {
            llvm::Value* at =
                b.CreateAdd(b.CreateAdd(rowBase[o], tileStart), kb.index(u * t.lanes));
            llvm::Value* result = b.CreateLoad(vecTy, accSlots[o][u]);
            llvm::Constant* mask = nullptr;  // lanes inside the row, if some are not
            if (t.masked && t.start + int64_t(t.lanes) > s.OW) {
              std::vector<llvm::Constant*> inRowLanes;
              for (int64_t j = 0; j < int64_t(t.lanes); ++j) {
                inRowLanes.push_back(b.getInt1(t.start + j < s.OW));
              }
              mask = llvm::ConstantVector::get(inRowLanes);
            }
            // A vectorizable fused epilogue runs on the accumulators, before their store.
            if (epilogue.vectorizable()) {
              llvm::Value* column = b.CreateAdd(tileStart, kb.index(u * t.lanes));
              result = epilogue.applyVector(result, epilogueRows[o], column, mask);
            }
            if (mask) {
              b.CreateMaskedStore(result, kb.elementAddress(out, at), llvm::Align(4), mask);
            } else {
              kb.storeVector(out, at, result);
            }
          }
        }
      });
    }

    // Other epilogues (activation field, polynomial functions such as Sigmoid, strided
    // inputs) run over each finished row while it is still in L1 (a loop the vectoriser
    // widens).
    if (!epilogue.vectorizable())
      for (int64_t o = 0; o < OCB; ++o) epilogue.applyToRow(rowBase[o], s.OW);
  });
  workgroups = workgroupsFor(rows, OCB * s.OW * filterSize);
  return true;
}

}  // namespace kiln::codegen::detail
