// Convolution with a fused MaxPool (KernelDesc::pooled; the plan and the work split are in
// conv_pool_plan.h). Per work item (image, group of output channels, band of pooled rows),
// for each pooled row of the band, top to bottom:
//  1. the convolution rows of its window not computed yet, every output channel of the
//     group, into a ring of KH_pool row buffers on the stack: on vector targets by the GEMM
//     microkernel (emit_gemm_microkernel.h), MR output channels x NR pixels a tile, weights
//     packed in GemmPanels (or OIHW). Few-channel convolutions (the stems: C * KH input rows
//     split into stride-phase planes fit L1) read B straight from those planes
//     (emit_input_planes.h), built once per convolution row, the taps of a few kernel
//     rows unrolled per K step; others from
//     im2col row tiles (emit_im2col.h) in K blocks of whole channels with the partial sums
//     in the buffer. Targets without vector registers take plain loops. The activation and
//     the fused chain apply before the store. The buffers hold -inf left and right of the
//     row, so the pool's padding and ceil-mode windows need no tests;
//  2. per output channel and vector of pooled columns, in registers: the max over the
//     window's rows of the few row vectors its taps read (stride + 1 or so), each tap's
//     stride x lanes consecutive floats as lane rotations of two of them, the max over the
//     taps, then every stride-th lane (no gathers), stored once to the output.
// A window in the padding only (ceil mode, large pads) gives -inf, as the plain pool does.
// Only the pooled tensor is written to memory.
#include <llvm/IR/Constants.h>

#include <algorithm>
#include <cassert>

#include "emit_gemm_microkernel.h"
#include "emit_im2col.h"
#include "emit_input_planes.h"
#include "emitters.h"
#include "fused_epilogue.h"
#include "kernel_builder.h"
#include "kiln/codegen/conv_pool_plan.h"

namespace kiln::codegen::detail {
namespace {

constexpr int64_t kPanelFloats = 49152;  // one row's B panels: 192 KB (L2) at most
constexpr int64_t kMaxPlaneSteps = 9;    // taps unrolled per K loop iteration

}  // namespace

uint32_t emitConvPool(KernelBuilder& kb) {
  // A convolution without a pool (convStemDirect) runs as if pooled by 1x1 windows, its
  // rows stored straight to the output.
  const KernelDesc view = pooledView(kb.desc());
  const KernelDesc& d = view;
  const bool direct = !kb.desc().pooled();
  const VectorUnit unit{kb.target().vectorLanes, kb.target().vectorRegisters};
  const bool vector = convPoolVectorised(d, unit);
  assert(!direct || vector);
  assert(vector || d.weightLayout == ConvWeights::Oihw);
  // The tile the weights were packed for: the convolution's own (kb.desc(), not the view).
  ConvGemmTile tile = vector ? convGemmTile(kb.desc(), unit) : ConvGemmTile{};
  assert(d.weightLayout == ConvWeights::Oihw ||
         (d.weightLayout == ConvWeights::GemmPanels && d.weightPanel == tile.mr));
  llvm::IRBuilder<>& b = kb.b();
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  const std::vector<int64_t>& ws = d.inputs[1].shape;
  const std::vector<int64_t>& ys = d.output.shape;
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  const int64_t OC = ws[0], KH = ws[2], KW = ws[3];
  const int64_t OH = d.convOutput[2], OW = d.convOutput[3], PH = ys[2], PW = ys[3];
  const int64_t sh = d.strides[0], sw = d.strides[1], dh = d.dilations[0], dw = d.dilations[1];
  const int64_t padTop = d.pads[0], padLeft = d.pads[1];
  const int64_t pkh = d.poolKernel[0], pkw = d.poolKernel[1];
  const int64_t psh = d.poolStrides[0], psw = d.poolStrides[1];
  const int64_t ppt = d.poolPads[0];
  const int64_t taps = KH * KW, K = C * taps;
  const int64_t L = vector ? tile.lanes : 1, MR = vector ? tile.mr : 1;
  const int64_t NRV = vector ? tile.nrVectors : 1, NR = vector ? tile.nr() : 1;
  const ConvPoolPlan plan = convPoolPlan(d, MR, L, NR);
  const bool packedA = d.weightLayout == ConvWeights::GemmPanels;
  const bool hasBias = d.inputs.size() - d.epilogue.inputCount > 2;
  const bool chain = !d.epilogue.chain.nodes.empty();
  const unsigned out = kb.outputBinding();
  const int64_t rowLen = plan.rowLen, G = plan.ocPerGroup, slotFloats = G * rowLen;

  llvm::Type* floatTy = b.getFloatTy();
  auto* vecTy = llvm::FixedVectorType::get(floatTy, unsigned(L));
  const float negInf = -__builtin_inff();
  auto stackArray = [&](int64_t floats, const char* name) {
    auto* a = llvm::cast<llvm::AllocaInst>(
        kb.local(llvm::ArrayType::get(floatTy, uint64_t(floats)), name));
    // Vector loads want whole lines; plain targets keep the natural alignment (a 64-byte
    // alloca on a Cortex-M realigns the stack beyond what .stack_sizes reports).
    a->setAlignment(llvm::Align(vector ? 64 : 4));
    return a;
  };
  // The ring (row r in r % pkh); a direct convolution stores its rows to the output.
  llvm::Value* rows = direct ? nullptr : stackArray(pkh * slotFloats, "conv_rows");
  auto at = [&](llvm::Value* buffer, llvm::Value* i) { return b.CreateGEP(floatTy, buffer, i); };
  // Lanes inside a run of `width` floats, for vector v if the run ends inside it.
  auto laneMask = [&](int64_t width, int64_t v) -> llvm::Value* {
    if ((v + 1) * L <= width) return nullptr;
    std::vector<llvm::Constant*> on;
    for (int64_t j = 0; j < L; ++j) on.push_back(b.getInt1(v * L + j < width));
    return llvm::ConstantVector::get(on);
  };
  auto loadVec = [&](llvm::Value* ptr, llvm::Value* mask) -> llvm::Value* {
    if (!mask) return b.CreateAlignedLoad(vecTy, ptr, llvm::Align(4));
    return b.CreateMaskedLoad(vecTy, ptr, llvm::Align(4), mask, llvm::ConstantFP::get(vecTy, 0.0));
  };
  auto storeVec = [&](llvm::Value* value, llvm::Value* ptr, llvm::Value* mask) {
    if (mask) {
      b.CreateMaskedStore(value, ptr, llvm::Align(4), mask);
    } else {
      b.CreateAlignedStore(value, ptr, llvm::Align(4));
    }
  };
  FusedEpilogue epilogue(kb);
  FusedEpilogue::Row noRow = epilogue.row(kb.index(0));  // the chain reads no other tensor

  // Vector-path state: the im2col panels of one row and the microkernel's accumulators.
  const int64_t tiles = (OW + NR - 1) / NR, fullTiles = OW / NR, tailWidth = OW % NR;
  const int64_t blockC = vector ? std::clamp<int64_t>(kPanelFloats / (tiles * taps * NR), 1, C) : C;
  const int64_t blocks = (C + blockC - 1) / blockC;
  const int64_t evenC = (C + blocks - 1) / blocks;  // channels per block, evenly split
  const int64_t fullBlocks = C / evenC, lastC = C % evenC;
  const int64_t tileFloats = evenC * taps * NR;
  const int64_t unroll = taps >= 4 && taps <= 9 ? taps : 4;
  const int64_t panels = (OC + MR - 1) / MR, fullPanels = OC / MR, remRows = OC % MR;
  // Few-channel convolutions (the stems) read B from input planes instead of im2col panels:
  // per convolution row, each input row it reads (channel c, kernel row kh) split once into
  // sw phase planes, plane p holding columns sw * j + p - padLeft (zeros outside the image),
  // so tap kw of pixel ow is plane kw % sw at ow + kw / sw: a plain vector load. The K loop
  // runs per channel, its taps unrolled.
  const bool planes = vector && convPoolPlanes(d, tile);
  const int64_t planeLen = planes ? convPlaneLength(d, tile) : 0;
  assert(!direct || planes);
  llvm::Value* planeBuf = planes ? stackArray(C * KH * sw * planeLen, "input_planes") : nullptr;
  // Kernel rows per K loop iteration: the most that divide C * KH with at most
  // kMaxPlaneSteps taps (SqueezeNet's 3x3: 3 rows, 9 steps; ResNet's 7x7: 1 row, 7 steps).
  int64_t planeRows = 1;
  for (int64_t rows = 1; rows * KW <= kMaxPlaneSteps; ++rows)
    if ((C * KH) % rows == 0) planeRows = rows;
  llvm::Value* bPanel = vector && !planes ? stackArray(tiles * tileFloats, "im2col") : nullptr;
  Accumulators acc = vector ? makeAccumulators(kb, {MR, NRV, unsigned(L)}) : Accumulators{};
  const Im2colShape im2col{C, H, W, KH, KW, sh, sw, dh, dw, padTop, padLeft, OH, OW};

  // -inf in the ring's padding, once per call: every row's floats before rowLeft and from
  // rowLeft + OW on (the convolution writes exactly [rowLeft, rowLeft + OW) of a row).
  if (!direct) {
    const int64_t leftVectors = plan.rowLeft / L, rightFirst = (plan.rowLeft + OW) / L;
    kb.forRange(kb.index(0), kb.index(pkh * G), [&](llvm::Value* row) {
      llvm::Value* start = b.CreateMul(row, kb.index(rowLen));
      auto fill = [&](int64_t v) {
        llvm::Value* p = at(rows, b.CreateAdd(start, kb.index(v * L)));
        if (L == 1) {
          b.CreateStore(kb.f32(negInf), p);
        } else {
          b.CreateAlignedStore(llvm::ConstantFP::get(vecTy, negInf), p, llvm::Align(4));
        }
      };
      for (int64_t v = 0; v < leftVectors; ++v) fill(v);
      for (int64_t v = rightFirst; v < rowLen / L; ++v) fill(v);
    });
  }
  const int64_t items = plan.items(N);
  kb.forWorkgroupShare(items, [&](llvm::Value* item) {
    std::vector<llvm::Value*> co = kb.decompose(item, {N, plan.ocGroups, plan.bands});
    llvm::Value *n = co[0], *group = co[1], *band = co[2];
    llvm::Value* ocStart = b.CreateMul(group, kb.index(G));
    llvm::Value* ocCount = kb.minValue(kb.index(G), b.CreateSub(kb.index(OC), ocStart));
    llvm::Value* xImage = b.CreateMul(n, kb.index(C * H * W));
    llvm::Value* ph0 = b.CreateMul(band, kb.index(plan.bandRows));
    llvm::Value* ph1 = kb.minValue(b.CreateAdd(ph0, kb.index(plan.bandRows)), kb.index(PH));
    // The pooled row ph of output channel oc (group-local) starts at this output element.
    // (Dense or in row groups: the output's layout, row_groups.h.)
    auto outRow = [&](llvm::Value* ocLocal, llvm::Value* ph) {
      return kb.rowAddress(d.output, n, b.CreateAdd(ocStart, ocLocal), ph);
    };

    // ---- 1. Convolution row r into its ring slot (channel ocl at ocl * rowLen + padLeft) --
    const int64_t bufLeft = plan.rowLeft;
    auto convRowVector = [&](llvm::Value* r, llvm::Value* slot) {
      llvm::Value* rowPixel = b.CreateMul(r, kb.index(OW));
      llvm::Value* panelLo = b.CreateUDiv(ocStart, kb.index(MR));
      llvm::Value* panelHi = kb.minValue(b.CreateAdd(panelLo, kb.index(G / MR)), kb.index(panels));
      llvm::Value* fullHi = kb.minValue(panelHi, kb.index(fullPanels));
      // One MR x NR tile (rows output channels from `panel`, tile t of `width` pixels) over
      // K range [k0, k0 + kCount).
      auto tileProduct = [&](llvm::Value* panel, int64_t rowsHere, llvm::Value* t, int64_t width,
                             llvm::Value* k0, int64_t kCount, llvm::Value* first,
                             llvm::Value* last) {
        const int64_t nv = (width + L - 1) / L;
        llvm::Value* oc0 = b.CreateMul(panel, kb.index(MR));
        llvm::Value* column0 = b.CreateMul(t, kb.index(NR));
        std::vector<llvm::Value*> bufRow(static_cast<size_t>(rowsHere));
        for (int64_t m = 0; m < rowsHere; ++m) {
          llvm::Value* oc = b.CreateAdd(oc0, kb.index(m));
          llvm::Value* local = b.CreateSub(oc, ocStart);
          bufRow[m] = b.CreateAdd(b.CreateAdd(slot, b.CreateMul(local, kb.index(rowLen))),
                                  b.CreateAdd(column0, kb.index(bufLeft)));
          llvm::Value* start = hasBias
                                   ? b.CreateVectorSplat(unsigned(L), kb.load(2, ElemType::F32, oc))
                                   : llvm::ConstantFP::get(vecTy, 0.0);
          for (int64_t v = 0; v < nv; ++v) {
            llvm::Value* value = start;
            if (first != b.getTrue()) {
              llvm::Value* partial =
                  loadVec(at(rows, b.CreateAdd(bufRow[m], kb.index(v * L))), nullptr);
              value = b.CreateSelect(first, start, partial);
            }
            b.CreateStore(value, acc[m][v]);
          }
        }
        const int64_t stride = std::min(rowsHere, MR);
        llvm::Value* aBase = packedA ? b.CreateAdd(b.CreateMul(panel, kb.index(K * MR)),
                                                   b.CreateMul(k0, kb.index(stride)))
                                     : b.CreateAdd(b.CreateMul(oc0, kb.index(K)), k0);
        LoadA loadA = [&](llvm::Value* k, int64_t m) {
          llvm::Value* off = packedA ? b.CreateAdd(b.CreateMul(k, kb.index(stride)), kb.index(m))
                                     : b.CreateAdd(k, kb.index(m * K));
          return kb.load(1, ElemType::F32, b.CreateAdd(aBase, off));
        };
        llvm::Value* tileBase = b.CreateMul(t, kb.index(tileFloats));
        LoadB loadB = [&](llvm::Value* k, int64_t v) -> llvm::Value* {
          llvm::Value* slot =
              b.CreateAdd(tileBase, b.CreateAdd(b.CreateMul(k, kb.index(NR)), kb.index(v * L)));
          return b.CreateAlignedLoad(vecTy, at(bPanel, slot), llvm::Align(32));
        };
        if (planes) {
          // Per planeRows kernel rows (channel, kh), their taps unrolled (k a constant):
          // A at row g * planeRows * KW + k, B from the rows' planes.
          llvm::Value* tileColumn = b.CreateMul(t, kb.index(NR));
          kb.forRange(
              kb.index(0), kb.index(C * KH / planeRows),
              [&](llvm::Value* g) {
                llvm::Value* aRow = b.CreateMul(g, kb.index(planeRows * KW));
                llvm::Value* bBase =
                    b.CreateAdd(b.CreateMul(g, kb.index(planeRows * sw * planeLen)), tileColumn);
                LoadA loadTapA = [&](llvm::Value* k, int64_t m) {
                  return loadA(b.CreateAdd(aRow, k), m);
                };
                LoadB loadTapB = [&](llvm::Value* k, int64_t v) -> llvm::Value* {
                  const int64_t step = llvm::cast<llvm::ConstantInt>(k)->getSExtValue();
                  const int64_t j = step / KW, kw = step % KW;
                  const int64_t plane = j * sw + kw % sw;
                  llvm::Value* offset =
                      b.CreateAdd(bBase, kb.index(plane * planeLen + v * L + kw / sw));
                  return b.CreateAlignedLoad(vecTy, at(planeBuf, offset), llvm::Align(4));
                };
                emitMicrokernel(kb, {rowsHere, nv, unsigned(L)}, acc, planeRows * KW,
                                planeRows * KW, loadTapA, loadTapB);
              },
              /*unroll=*/false);
        } else {
          emitMicrokernel(kb, {rowsHere, nv, unsigned(L)}, acc, kCount, unroll, loadA, loadB);
        }
        for (int64_t m = 0; m < rowsHere; ++m) {
          for (int64_t v = 0; v < nv; ++v) {
            llvm::Value* value = b.CreateLoad(vecTy, acc[m][v]);
            llvm::Value* mask = laneMask(width, v);
            if (last != b.getFalse()) {
              llvm::Value* done = kb.applyEpilogue(d.epilogue, value);
              if (chain)
                done =
                    epilogue.applyVector(done, noRow, b.CreateAdd(column0, kb.index(v * L)), mask);
              value = last == b.getTrue() ? done : b.CreateSelect(last, done, value);
            }
            if (direct) {
              // Output row r of channel oc0 + m (the view's pooled shape is the output's).
              llvm::Value* o =
                  b.CreateAdd(outRow(b.CreateSub(b.CreateAdd(oc0, kb.index(m)), ocStart), r),
                              b.CreateAdd(column0, kb.index(v * L)));
              storeVec(value, kb.elementAddress(out, o), mask);
            } else {
              storeVec(value, at(rows, b.CreateAdd(bufRow[m], kb.index(v * L))), mask);
            }
          }
        }
      };
      // One K block: the row's tiles packed, then every panel of the group times every tile.
      auto block = [&](llvm::Value* c0, int64_t count, llvm::Value* first, llvm::Value* last) {
        auto pack = [&](llvm::Value* t, int64_t width) {
          llvm::Value* p0 = b.CreateAdd(rowPixel, b.CreateMul(t, kb.index(NR)));
          emitIm2colTile(kb, im2col, /*rowTiles=*/true, NR, bPanel,
                         b.CreateMul(t, kb.index(tileFloats)), xImage, c0, count, p0, width);
        };
        if (!planes) {
          kb.forRange(0, fullTiles, [&](llvm::Value* t) { pack(t, NR); });
          if (tailWidth > 0) pack(kb.index(fullTiles), tailWidth);
        }
        llvm::Value* k0 = b.CreateMul(c0, kb.index(taps));
        auto panelRow = [&](llvm::Value* panel, int64_t rowsHere) {
          kb.forRange(kb.index(0), kb.index(fullTiles), [&](llvm::Value* t) {
            tileProduct(panel, rowsHere, t, NR, k0, count * taps, first, last);
          });
          if (tailWidth > 0)
            tileProduct(panel, rowsHere, kb.index(fullTiles), tailWidth, k0, count * taps, first,
                        last);
        };
        kb.forRange(panelLo, fullHi, [&](llvm::Value* panel) { panelRow(panel, MR); });
        if (remRows > 0)
          kb.ifThen(b.CreateICmpEQ(panelHi, kb.index(panels)),
                    [&] { panelRow(kb.index(fullPanels), remRows); });
      };
      if (planes) {
        const PlaneShape shape{C, H, W, KH, sw, padLeft, planeLen};
        llvm::Value* top = b.CreateSub(b.CreateMul(r, kb.index(sh)), kb.index(padTop));
        emitInputPlanes(kb, shape, planeBuf, xImage, top);
        emitPrefetchInputRows(kb, shape, xImage, b.CreateAdd(top, kb.index(sh)),
                              std::max<int64_t>(KH - sh, 0));
        block(kb.index(0), C, b.getTrue(), b.getTrue());
      } else if (fullBlocks == 1 && lastC == 0) {
        block(kb.index(0), evenC, b.getTrue(), b.getTrue());
      } else {
        kb.forRange(0, fullBlocks, [&](llvm::Value* k) {
          llvm::Value* first = b.CreateICmpEQ(k, kb.index(0));
          llvm::Value* last =
              lastC > 0 ? b.getFalse() : b.CreateICmpEQ(k, kb.index(fullBlocks - 1));
          block(b.CreateMul(k, kb.index(evenC)), evenC, first, last);
        });
        if (lastC > 0) block(kb.index(fullBlocks * evenC), lastC, b.getFalse(), b.getTrue());
      }
    };
    auto convRowPlain = [&](llvm::Value* r, llvm::Value* slot) {
      llvm::Value* sum = kb.local(floatTy, "sum");
      llvm::Value* ihStart = b.CreateSub(b.CreateMul(r, kb.index(sh)), kb.index(padTop));
      kb.forRange(kb.index(0), ocCount, [&](llvm::Value* ocl) {
        llvm::Value* oc = b.CreateAdd(ocStart, ocl);
        llvm::Value* filter = b.CreateMul(oc, kb.index(K));
        llvm::Value* bufRow =
            b.CreateAdd(slot, b.CreateAdd(b.CreateMul(ocl, kb.index(rowLen)), kb.index(bufLeft)));
        kb.forRange(0, OW, [&](llvm::Value* ow) {
          b.CreateStore(hasBias ? kb.load(2, ElemType::F32, oc) : kb.f32(0.0f), sum);
          llvm::Value* iwStart = b.CreateSub(b.CreateMul(ow, kb.index(sw)), kb.index(padLeft));
          kb.forRange(0, C, [&](llvm::Value* c) {
            llvm::Value* channel = b.CreateAdd(xImage, b.CreateMul(c, kb.index(H * W)));
            kb.forRange(0, KH, [&](llvm::Value* kh) {
              llvm::Value* ih = b.CreateAdd(ihStart, b.CreateMul(kh, kb.index(dh)));
              kb.ifThen(b.CreateICmpULT(ih, kb.index(H)), [&] {
                kb.forRange(0, KW, [&](llvm::Value* kw) {
                  llvm::Value* iw = b.CreateAdd(iwStart, b.CreateMul(kw, kb.index(dw)));
                  kb.ifThen(b.CreateICmpULT(iw, kb.index(W)), [&] {
                    llvm::Value* x = kb.load(
                        0, ElemType::F32,
                        b.CreateAdd(channel, b.CreateAdd(b.CreateMul(ih, kb.index(W)), iw)));
                    llvm::Value* tap = b.CreateAdd(
                        filter, b.CreateAdd(b.CreateMul(c, kb.index(taps)),
                                            b.CreateAdd(b.CreateMul(kh, kb.index(KW)), kw)));
                    llvm::Value* w = kb.load(1, ElemType::F32, tap);
                    b.CreateStore(b.CreateFAdd(b.CreateLoad(floatTy, sum), b.CreateFMul(x, w)),
                                  sum);
                  });
                });
              });
            });
          });
          llvm::Value* value = epilogue.apply(b.CreateLoad(floatTy, sum), noRow, ow);
          b.CreateStore(value, at(rows, b.CreateAdd(bufRow, ow)));
        });
      });
    };

    // ---- 2. Pooled row ph from its window's rows [first, end) in the ring ------------------
    // Straight from the ring's rows, in registers: no row of window maxima is stored and read
    // back (the width taps' shifted loads from just-stored vectors missed store-to-load
    // forwarding: 23 % of SqueezeNet's stem in the width pass on Zen 5 AVX-512).
    auto poolRow = [&](llvm::Value* ph, llvm::Value* first, llvm::Value* end) {
      // A window wholly in the padding (ceil mode, large pads): -inf, as the plain pool gives.
      llvm::Type* ty = L == 1 ? floatTy : static_cast<llvm::Type*>(vecTy);
      llvm::Value* empty = b.CreateICmpSLE(end, first);
      kb.ifThen(empty, [&] {
        kb.forRange(kb.index(0), ocCount, [&](llvm::Value* ocl) {
          llvm::Value* dst = outRow(ocl, ph);
          llvm::Value* none = llvm::ConstantFP::get(ty, double(negInf));
          auto fill = [&](llvm::Value* v, llvm::Value* mask) {
            llvm::Value* o = b.CreateAdd(dst, b.CreateMul(v, kb.index(L)));
            if (L == 1) return kb.store(out, ElemType::F32, o, none);
            storeVec(none, kb.elementAddress(out, o), mask);
          };
          kb.forRange(0, PW / L, [&](llvm::Value* v) { fill(v, nullptr); });
          if (PW % L) fill(kb.index(PW / L), laneMask(PW % L, 0));
        });
      });
      kb.ifThen(b.CreateNot(empty), [&] {
        // The window's rows: first + min(j, count - 1) (a row twice changes no maximum).
        llvm::Value* lastRow = b.CreateSub(end, kb.index(1));
        kb.forRange(kb.index(0), ocCount, [&](llvm::Value* ocl) {
          llvm::Value* channel = b.CreateMul(ocl, kb.index(rowLen));
          std::vector<llvm::Value*> rowPtr;
          for (int64_t j = 0; j < pkh; ++j) {
            llvm::Value* r = kb.minValue(b.CreateAdd(first, kb.index(j)), lastRow);
            llvm::Value* slot = b.CreateMul(b.CreateURem(r, kb.index(pkh)), kb.index(slotFloats));
            rowPtr.push_back(at(rows, b.CreateAdd(slot, channel)));
          }
          // The max over the window's rows of vector `i` (an index value) of the row.
          auto windowMax = [&](llvm::Value* i) {
            llvm::Value* offset = b.CreateMul(i, kb.index(L));
            llvm::Value* m = nullptr;
            for (llvm::Value* row : rowPtr) {
              llvm::Value* x = b.CreateAlignedLoad(ty, at(row, offset), llvm::Align(4 * L));
              m = m ? kb.maxValue(m, x) : x;
            }
            return m;
          };
          // Along the width, into the output row: pooled column pw's window starts at column
          // pw * psw - padLeft, at pw * psw + skip in the row.
          llvm::Value* dst = outRow(ocl, ph);
          const int64_t skip = plan.rowLeft - d.poolPads[1];
          if (L == 1) {
            kb.forRange(0, PW, [&](llvm::Value* pw) {
              llvm::Value* base = b.CreateAdd(b.CreateMul(pw, kb.index(psw)), kb.index(skip));
              llvm::Value* m = kb.f32(negInf);
              for (int64_t q = 0; q < pkw; ++q)
                m = kb.maxValue(m, windowMax(b.CreateAdd(base, kb.index(q))));
              kb.store(out, ElemType::F32, b.CreateAdd(dst, pw), m);
            });
            return;
          }
          // Vector v of pooled columns: lane l's tap q reads float (v * L + l) * psw + skip + q
          // of the row. The window maxima from vector v * psw on, deinterleaved by psw (phase
          // p: floats p, p + psw, ...), give every tap as one phase shifted by whole lanes:
          // tap q is phase (skip + q) % psw from lane (skip + q) / psw, the lanes past the
          // vector from the next deinterleaved block (a lane rotation of two registers).
          // SqueezeNet's 3x3 s2: 3 shuffles, 1 rotation, 2 maxima per vector. Only the row
          // vectors the `used` lanes read are loaded (the last vector of 55 pooled columns:
          // 7 lanes, 1 row vector of 3).
          auto pooledVector = [&](llvm::Value* v, int64_t used) {
            llvm::Value* mask = laneMask(used, 0);
            llvm::Value* first = b.CreateMul(v, kb.index(psw));
            std::vector<llvm::Value*> maxima;  // window maxima of vectors first + c
            auto maximum = [&](int64_t c) {
              while (int64_t(maxima.size()) <= c)
                maxima.push_back(windowMax(b.CreateAdd(first, kb.index(int64_t(maxima.size())))));
              return maxima[size_t(c)];
            };
            // Phase p of deinterleaved block `block` (psw vectors from first + block * psw),
            // its first `lanes` lanes (the vectors the others need are not read).
            llvm::Value* poison = llvm::PoisonValue::get(vecTy);
            auto phase = [&](int64_t block, int64_t p, int64_t lanes) -> llvm::Value* {
              if (lanes <= 0) return poison;
              const int64_t vectors = (p + psw * (lanes - 1)) / L + 1;
              std::vector<llvm::Value*> parts;
              for (int64_t i = 0; i < psw; ++i)
                parts.push_back(i < vectors ? maximum(block * psw + i) : poison);
              if (psw == 1) return parts[0];
              return kb.strideLanes(kb.concatVectors(std::move(parts)), p, psw, L);
            };
            llvm::Value* m = nullptr;
            for (int64_t q = 0; q < pkw; ++q) {
              const int64_t p = (skip + q) % psw, lane = (skip + q) / psw;
              const int64_t block = lane / L, shift = lane % L;
              // Stream lanes shift .. shift + used - 1 of block, then of the next one.
              llvm::Value* x = phase(block, p, std::min(L, shift + used));
              if (shift != 0) {
                std::vector<int> lanes;
                for (int64_t l = 0; l < L; ++l) lanes.push_back(int(shift + l));
                x = b.CreateShuffleVector(x, phase(block + 1, p, shift + used - L), lanes);
              }
              m = m ? kb.maxValue(m, x) : x;
            }
            storeVec(m, kb.elementAddress(out, b.CreateAdd(dst, b.CreateMul(v, kb.index(L)))),
                     mask);
          };
          kb.forRange(0, PW / L, [&](llvm::Value* v) { pooledVector(v, L); });
          if (PW % L) pooledVector(kb.index(PW / L), PW % L);
        });
      });
    };

    // Each pooled row: the rows of its window not computed yet (rows between windows, when
    // the stride exceeds the kernel, are skipped), then the pool.
    llvm::Value* next = kb.local(kb.indexType(), "next_row");
    b.CreateStore(kb.index(0), next);
    kb.forRange(ph0, ph1, [&](llvm::Value* ph) {
      llvm::Value* start = b.CreateSub(b.CreateMul(ph, kb.index(psh)), kb.index(ppt));
      llvm::Value* first = kb.maxValue(start, kb.index(0));
      llvm::Value* end =
          kb.maxValue(kb.minValue(b.CreateAdd(start, kb.index(pkh)), kb.index(OH)), first);
      llvm::Value* from = kb.maxValue(first, b.CreateLoad(kb.indexType(), next));
      kb.forRange(from, end, [&](llvm::Value* r) {
        llvm::Value* slot = b.CreateMul(b.CreateURem(r, kb.index(pkh)), kb.index(slotFloats));
        if (vector) {
          convRowVector(r, slot);
        } else {
          convRowPlain(r, slot);
        }
      });
      b.CreateStore(kb.maxValue(end, b.CreateLoad(kb.indexType(), next)), next);
      if (!direct) poolRow(ph, first, end);
    });
  });
  const int64_t rowsPerBand = std::min(OH, (plan.bandRows - 1) * psh + pkh);
  return workgroupsFor(items, G * K * OW * rowsPerBand);
}

}  // namespace kiln::codegen::detail
