// Convolution as implicit GEMM vectorised over OUTPUT CHANNELS, for small maps (policy in
// conv_gemm_oc_plan.cpp). Per image, Y[pixels][OC] = B[pixels][K] x A[K][OC], computed in
// register tiles of MR pixels x NR output channels by the GEMM microkernel
// (emit_gemm_microkernel.h) with the roles swapped: each k step broadcasts MR input values and
// loads NR/lanes weight vectors, so a 7x7 map (49 pixels) wastes no lanes.
//  - Weights: packed at compile time in panels of NR output channels ([OC/NR][K][NR], the last
//    panel [K][OC % NR]; packConvWeightPanels), a k step's NR weights consecutive.
//  - Pixel tiles of MR along the flattened map; the last one is shifted back to end on the
//    map's end (it recomputes a few pixels instead of running a narrow tile).
//  - Pixels (the broadcast operand), packed per K block (whole channels, <= kMaxBlockK rows so
//    a panel's weights block stays in L1 across the tiles): a 1x1 convolution without padding
//    packs each tile's MR input values per channel contiguously ([tiles][block][MR]: one
//    sequential stream per tile instead of a cache line per channel); any other packs the
//    block's im2col rows (the map's pixels per (channel, tap), zeros in the padding; output
//    rows as masked vector loads, strided ones shuffled). Partial sums of the item's tiles stay in
//    a stack buffer between K blocks.
//  - The weights (0.5-5 MB in MobileNetV2's and ResNet-18's 7x7 layers: L3 or DRAM) are
//    prefetched one block ahead: every tile of a panel's block prefetches its share of the
//    next block's cache lines (at its start; on AVX-512 spread over its microkernel
//    iterations), so only the very first block waits for memory.
//  - Each finished tile gets the bias (a vector of channels) and the activation on its
//    accumulators, is transposed in registers into vectors of consecutive pixels and stored
//    into a stack buffer of the panel's channel rows; when a panel's pixels are all done, its
//    rows go to the NCHW output in vectors of pixels, through the fused epilogue chain.
//  - Work items: (image, group of channel panels), split evenly over the workgroups.
#include <llvm/IR/Intrinsics.h>

#include <algorithm>
#include <cassert>

#include "emit_gemm_microkernel.h"
#include "emitters.h"
#include "fused_epilogue.h"
#include "kernel_builder.h"
#include "kiln/codegen/conv_gemm_plan.h"

namespace kiln::codegen::detail {
namespace {

// An item's partial sums (with several K blocks) fit this many floats: 128 KB.
constexpr int64_t kPartialFloats = 32768;
constexpr int64_t kMaxBlockK = 256;        // a panel's weights block: 16 KB for NR = 16
// The im2col path's blocks are shorter: a tile's broadcasts walk the block's rows (a cache
// line each), which then stay in L1 with the weights block (7x7 maps: 108 rows of 56 floats,
// 24 KB). ResNet-18's layer4.0 conv1 (256 x 3x3 -> 512 into 7x7) in blocks of 252 rows:
// 1548-1827 us by min, 1 thread; of 108: 1337-1499; of 72: 1334-1524; of 36: 1439-1461.
constexpr int64_t kMaxIm2colBlockK = 108;
constexpr int64_t kPackFloats = 65536;  // a K block of every tile's pixels: 256 KB at most
constexpr int64_t kLineFloats = 16;     // a 64-byte cache line
constexpr int64_t kMaxPrefetches = 32;  // per tile (more only on maps of a few tiles)

int64_t roundUp(int64_t value, int64_t step) { return (value + step - 1) / step * step; }

// Transposes up to `lanes` row vectors of `lanes` floats (missing rows are poison): column j
// has rows[i][j] in lane i. log2(lanes) stages, each interleaving row i with row i + lanes/2.
std::vector<llvm::Value*> transpose(llvm::IRBuilder<>& b, std::vector<llvm::Value*> rows,
                                    unsigned lanes) {
  auto* vecTy = llvm::FixedVectorType::get(b.getFloatTy(), lanes);
  rows.resize(lanes, llvm::PoisonValue::get(vecTy));
  std::vector<int> low, high;
  for (unsigned j = 0; j < lanes / 2; ++j) {
    low.insert(low.end(), {int(j), int(j + lanes)});
    high.insert(high.end(), {int(j + lanes / 2), int(j + lanes / 2 + lanes)});
  }
  for (unsigned stage = 1; stage < lanes; stage *= 2) {
    std::vector<llvm::Value*> next(lanes);
    for (unsigned i = 0; i < lanes / 2; ++i) {
      next[2 * i] = b.CreateShuffleVector(rows[i], rows[i + lanes / 2], low);
      next[2 * i + 1] = b.CreateShuffleVector(rows[i], rows[i + lanes / 2], high);
    }
    rows = std::move(next);
  }
  return rows;
}

}  // namespace

bool emitConvGemmOc(KernelBuilder& kb, uint32_t& workgroups) {
  // A grouped convolution runs as groups 1 over N x groups images (groupedView), each image's
  // weights and bias those of its group.
  const KernelDesc view = groupedView(kb.desc());
  const KernelDesc& d = view;
  const int64_t groups = kb.desc().groups;
  if (d.weightLayout != ConvWeights::OcVectorPanels) return false;
  const OcVectorTile plan = ocVectorTile(d, {kb.target().vectorLanes, kb.target().vectorRegisters});
  assert(plan.applies() && d.weightPanel == plan.oc() &&
         "weights packed for the channel-vectorised kernel need its tile");
  llvm::IRBuilder<>& b = kb.b();
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  const std::vector<int64_t>& ws = d.inputs[1].shape;
  const std::vector<int64_t>& ys = d.output.shape;
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  const int64_t OC = ws[0], KH = ws[2], KW = ws[3], OH = ys[2], OW = ys[3];
  const int64_t sh = d.strides[0], sw = d.strides[1], dh = d.dilations[0], dw = d.dilations[1];
  const int64_t padTop = d.pads[0], padLeft = d.pads[1];
  const int64_t taps = KH * KW, K = C * taps, HW = H * W, P = OH * OW;
  const unsigned L = unsigned(plan.lanes);
  const int64_t MR = plan.pixels, NR = plan.oc();
  const bool hasBias = d.inputs.size() - d.epilogue.inputCount > 2;
  const bool chain = !d.epilogue.chain.nodes.empty();
  const unsigned out = kb.outputBinding();
  // A 1x1 convolution without padding reads pixel p of input channel k at k*H*W + offset(p);
  // with stride 1 the map keeps its shape and the offset is p itself.
  const bool inPlace =
      KH == 1 && KW == 1 && padTop == 0 && padLeft == 0 && d.pads[2] == 0 && d.pads[3] == 0;
  const bool contiguous = inPlace && sh == 1 && sw == 1 && OW == W;
  // Pixel tiles: the last one starts at P - MR. A tile stores vectors of L pixels from
  // p0 + m0 (m0 = 0, L, ... < MR), so channel rows of the buffer reach P - MR + lastChunk + L.
  const int64_t tiles = (P + MR - 1) / MR;
  const int64_t lastChunk = (MR - 1) / int64_t(L) * int64_t(L);
  const int64_t cRow = roundUp(std::max(P, P - MR + lastChunk + int64_t(L)), L);
  // im2col: floats between its rows. Stride-1 rows are packed in whole vectors per output
  // row, the last one reaching P - OW + roundUp(OW, L).
  const int64_t aRow = roundUp(std::max(P, P - OW + roundUp(OW, L)), L);
  // K blocks of whole channels, of nearly equal size: at most kMaxBlockK rows (the weights
  // block of a panel stays in L1 across the tiles; kMaxIm2colBlockK for the im2col, whose rows
  // stay there too) and the block's packed pixels (every tile's
  // MR values per channel in place, the im2col rows otherwise) within kPackFloats.
  const int64_t channelFloats = inPlace ? tiles * MR : taps * aRow;
  const int64_t maxChannels = std::max<int64_t>(
      1, std::min((inPlace ? kMaxBlockK : kMaxIm2colBlockK) / taps, kPackFloats / channelFloats));
  const int64_t blocks = (C + maxChannels - 1) / maxChannels;
  const int64_t blockC = (C + blocks - 1) / blocks, blockK = blockC * taps;
  const int64_t fullBlocks = C / blockC, lastK = C % blockC * taps;
  const int64_t fullPanels = OC / NR, remOc = OC % NR, panels = fullPanels + (remOc > 0);
  const int64_t partialPerPanel = blocks > 1 ? tiles * MR * NR : 0;
  // Groups of panels (the partial sums of a group within kPartialFloats) and of tiles (in
  // place; on the im2col path where its rows, P floats per k, outweigh the weights, OC per k):
  // as many as two threads share best (ocVectorItems).
  int64_t minOcGroups = 1;
  while (minOcGroups < panels &&
         ((panels + minOcGroups - 1) / minOcGroups) * partialPerPanel > kPartialFloats)
    ++minOcGroups;
  const OcVectorItems split =
      ocVectorItems(N, panels, remOc > 0 ? remOc : NR, NR, tiles, MR,
                    inPlace    ? PixelSplit::Allowed
                    : P > OC   ? PixelSplit::Preferred
                               : PixelSplit::None,
                    minOcGroups);
  const int64_t ocGroups = split.ocGroups, tileGroups = split.pixelGroups;
  // Group g: panels [g * panels / G, (g + 1) * panels / G), sizes within one of each other;
  // tile group h: tiles [h * tiles / TG, (h + 1) * tiles / TG), likewise.
  const int64_t panelsPerGroup = (panels + ocGroups - 1) / ocGroups;  // the largest group
  const int64_t tilesPerGroup = (tiles + tileGroups - 1) / tileGroups;
  const int64_t items = N * ocGroups * tileGroups;
  // K steps per microkernel loop iteration: a channel's taps when that is a few, else 4.
  const int64_t unroll = taps >= 4 && taps <= 9 ? taps : 4;

  llvm::Type* floatTy = b.getFloatTy();
  auto* vecTy = llvm::FixedVectorType::get(floatTy, L);
  auto splatF = [&](float v) { return llvm::ConstantFP::get(vecTy, v); };
  // Lanes [0, count) of a vector on.
  auto lanesOn = [&](int64_t count) -> llvm::Value* {
    std::vector<llvm::Constant*> on;
    for (int64_t j = 0; j < int64_t(L); ++j) on.push_back(b.getInt1(j < count));
    return llvm::ConstantVector::get(on);
  };
  auto loadVec = [&](unsigned binding, llvm::Value* at, llvm::Value* mask) -> llvm::Value* {
    if (!mask) return kb.loadVector(binding, at, L);
    return b.CreateMaskedLoad(vecTy, kb.elementAddress(binding, at), llvm::Align(4), mask,
                              llvm::Constant::getNullValue(vecTy));
  };
  // The activation field on a vector of channels (Sigmoid and Tanh too: math_approx.h takes
  // vectors).
  auto activate = [&](llvm::Value* v) { return kb.applyEpilogue(d.epilogue, v); };

  FusedEpilogue epilogue(kb);
  Accumulators acc = makeAccumulators(kb, {MR, plan.ocVectors, L});
  auto stackArray = [&](int64_t floats, const char* name) -> llvm::Value* {
    auto* array = llvm::cast<llvm::AllocaInst>(
        kb.local(llvm::ArrayType::get(floatTy, uint64_t(floats)), name));
    array->setAlignment(llvm::Align(64));
    return array;
  };
  llvm::Value* rowsBuffer = stackArray(NR * cRow, "channel_rows");
  // In place: [tiles][blockK][MR] (+ one vector of slack: packing stores whole vectors).
  llvm::Value* pixels = inPlace ? stackArray(tiles * blockK * MR + L, "pixel_tiles")
                                : stackArray(blockK * aRow, "im2col");
  llvm::Value* partial =
      blocks > 1 ? stackArray(panelsPerGroup * partialPerPanel, "partial_sums") : nullptr;
  auto at = [&](llvm::Value* base, llvm::Value* index) {
    return b.CreateGEP(floatTy, base, index);
  };
  auto tileStart = [&](llvm::Value* t) {
    return kb.minValue(b.CreateMul(t, kb.index(MR)), kb.index(P - MR));
  };

  kb.forWorkgroupShare(items, [&](llvm::Value* item) {
    std::vector<llvm::Value*> co = kb.decompose(item, {N, ocGroups, tileGroups});
    llvm::Value *n = co[0], *ocGroup = co[1], *tileGroup = co[2];
    // The item's tiles [tLo, tHi) and the pixels [pLo, pHi) it stores (the last tile, shifted
    // back, overlaps the one before: each pixel is stored by one item only).
    llvm::Value* tLo = b.CreateUDiv(b.CreateMul(tileGroup, kb.index(tiles)), kb.index(tileGroups));
    llvm::Value* tHi = b.CreateUDiv(
        b.CreateMul(b.CreateAdd(tileGroup, kb.index(1)), kb.index(tiles)), kb.index(tileGroups));
    llvm::Value* pLo = b.CreateMul(tLo, kb.index(MR));
    llvm::Value* pHi = b.CreateSelect(b.CreateICmpEQ(tHi, kb.index(tiles)), kb.index(P),
                                      b.CreateMul(tHi, kb.index(MR)));
    // The output rows the item's tiles read (the last tile starts at P - MR): the im2col packs
    // only those.
    llvm::Value* ohLo = b.CreateUDiv(tileStart(tLo), kb.index(OW));
    llvm::Value* ohHi = b.CreateAdd(
        b.CreateUDiv(b.CreateAdd(tileStart(b.CreateSub(tHi, kb.index(1))), kb.index(MR - 1)),
                     kb.index(OW)),
        kb.index(1));
    llvm::Value* panelLo = b.CreateUDiv(b.CreateMul(ocGroup, kb.index(panels)), kb.index(ocGroups));
    llvm::Value* panelHi = b.CreateUDiv(
        b.CreateMul(b.CreateAdd(ocGroup, kb.index(1)), kb.index(panels)), kb.index(ocGroups));
    llvm::Value* fullHi = kb.minValue(panelHi, kb.index(fullPanels));
    llvm::Value* xImage = b.CreateMul(n, kb.index(C * HW));
    llvm::Value* outImage = b.CreateMul(n, kb.index(OC * P));
    // A grouped convolution's image n is group n % groups: its weights and bias.
    llvm::Value* group = groups > 1 ? b.CreateURem(n, kb.index(groups)) : kb.index(0);
    llvm::Value* groupWeights = b.CreateMul(group, kb.index(OC * K));
    llvm::Value* groupBias = b.CreateMul(group, kb.index(OC));

    // im2col of channels [c0, c0 + count): row (c - c0, kh, kw) holds, per output pixel, its
    // tap's input (0 in the padding). Per output row, L columns at a time: one masked load of
    // stride x L inputs (which lanes are inside is known per kw at compile time) and, with a
    // stride, a shuffle; strides over 4 per column. Rows outside the image are read clamped
    // and zeroed by a select.
    auto packIm2col = [&](llvm::Value* c0, int64_t count) {
      kb.forRange(
          kb.index(0), kb.index(count),
          [&](llvm::Value* c) {
            llvm::Value* channel =
                b.CreateAdd(xImage, b.CreateMul(b.CreateAdd(c0, c), kb.index(HW)));
            kb.forRange(
                ohLo, ohHi,
                [&](llvm::Value* oh) {
                  for (int64_t kh = 0; kh < KH; ++kh) {
                    llvm::Value* ih =
                        b.CreateAdd(b.CreateMul(oh, kb.index(sh)), kb.index(kh * dh - padTop));
                    llvm::Value* rowInside = b.CreateAnd(b.CreateICmpSGE(ih, kb.index(0)),
                                                         b.CreateICmpSLT(ih, kb.index(H)));
                    llvm::Value* inRow = b.CreateAdd(
                        channel,
                        b.CreateMul(b.CreateSelect(rowInside, ih, kb.index(0)), kb.index(W)));
                    for (int64_t kw = 0; kw < KW; ++kw) {
                      llvm::Value* row = b.CreateAdd(b.CreateMul(c, kb.index(taps * aRow)),
                                                     b.CreateAdd(kb.index((kh * KW + kw) * aRow),
                                                                 b.CreateMul(oh, kb.index(OW))));
                      const int64_t shift = kw * dw - padLeft;  // iw = ow * sw + shift
                      if (sw <= 4) {
                        // L columns per load: sw * L consecutive inputs, lane j * sw of them
                        // on where column ow0 + j is inside, then every sw-th lane.
                        auto* wideTy = llvm::FixedVectorType::get(floatTy, unsigned(L * sw));
                        std::vector<int> pick;
                        for (int64_t j = 0; j < int64_t(L); ++j) pick.push_back(int(j * sw));
                        for (int64_t ow0 = 0; ow0 < OW; ow0 += L) {
                          std::vector<llvm::Constant*> on;
                          bool any = false;
                          for (int64_t j = 0; j < int64_t(L * sw); ++j) {
                            const int64_t ow = ow0 + j / sw, iw = ow * sw + shift;
                            const bool inside = j % sw == 0 && ow < OW && iw >= 0 && iw < W;
                            any |= inside;
                            on.push_back(b.getInt1(inside));
                          }
                          llvm::Value* value = splatF(0.0f);
                          if (any) {
                            llvm::Value* from = b.CreateAdd(inRow, kb.index(ow0 * sw + shift));
                            value =
                                b.CreateMaskedLoad(wideTy, kb.elementAddress(0, from),
                                                   llvm::Align(4), llvm::ConstantVector::get(on),
                                                   llvm::Constant::getNullValue(wideTy));
                            if (sw > 1) value = b.CreateShuffleVector(value, pick);
                            value = b.CreateSelect(rowInside, value, splatF(0.0f));
                          }
                          llvm::Value* dest = at(pixels, b.CreateAdd(row, kb.index(ow0)));
                          // Lanes past the row's end land on the next row (written after)
                          // or the row padding.
                          b.CreateAlignedStore(value, dest, llvm::Align(4));
                        }
                      } else {
                        for (int64_t ow = 0; ow < OW; ++ow) {
                          const int64_t iw = ow * sw + shift;
                          llvm::Value* value = kb.f32(0.0f);
                          if (iw >= 0 && iw < W) {
                            value = kb.load(0, ElemType::F32, b.CreateAdd(inRow, kb.index(iw)));
                            value = b.CreateSelect(rowInside, value, kb.f32(0.0f));
                          }
                          b.CreateStore(value, at(pixels, b.CreateAdd(row, kb.index(ow))));
                        }
                      }
                    }
                  }
                },
                /*unroll=*/false);
          },
          /*unroll=*/false);
    };

    // In place: packs channels [k0, k0 + count) of every tile, tile t's MR values per channel
    // consecutive at (t * blockK + k) * MR.
    auto packTiles = [&](llvm::Value* k0, int64_t count) {
      kb.forRange(
          tLo, tHi,
          [&](llvm::Value* t) {
            llvm::Value* p0 = tileStart(t);
            llvm::Value* tileBase = b.CreateMul(t, kb.index(blockK * MR));
            std::vector<llvm::Value*> offset(MR);
            if (!contiguous) {
              for (int64_t m = 0; m < MR; ++m) {
                llvm::Value* p = b.CreateAdd(p0, kb.index(m));
                llvm::Value* oh = b.CreateUDiv(p, kb.index(OW));
                llvm::Value* ow = b.CreateSub(p, b.CreateMul(oh, kb.index(OW)));
                offset[m] =
                    b.CreateAdd(b.CreateMul(oh, kb.index(sh * W)), b.CreateMul(ow, kb.index(sw)));
              }
            }
            kb.forRange(kb.index(0), kb.index(count), [&](llvm::Value* k) {
              llvm::Value* channel =
                  b.CreateAdd(xImage, b.CreateMul(b.CreateAdd(k0, k), kb.index(HW)));
              llvm::Value* dest = b.CreateAdd(tileBase, b.CreateMul(k, kb.index(MR)));
              if (contiguous) {
                // One masked load per L pixels; the stored lanes past MR are overwritten by
                // the next channel's (or land in the slack).
                for (int64_t m0 = 0; m0 < MR; m0 += L) {
                  llvm::Value* value =
                      loadVec(0, b.CreateAdd(channel, b.CreateAdd(p0, kb.index(m0))),
                              lanesOn(std::min<int64_t>(L, MR - m0)));
                  b.CreateAlignedStore(value, at(pixels, b.CreateAdd(dest, kb.index(m0))),
                                       llvm::Align(4));
                }
              } else {
                for (int64_t m = 0; m < MR; ++m)
                  b.CreateStore(kb.load(0, ElemType::F32, b.CreateAdd(channel, offset[m])),
                                at(pixels, b.CreateAdd(dest, kb.index(m))));
              }
            });
          },
          /*unroll=*/false);
    };

    // Panel `panel` (`width` output channels, every panel before it full) over K range
    // [k0, k0 + count): every tile starts from the bias (first) or its partial sums, and
    // ends in the partial sums or, if `last`, activated in the channel rows, which then go
    // to the output.
    auto panelProduct = [&](llvm::Value* panel, int64_t width, llvm::Value* k0, int64_t count,
                            llvm::Value* first, llvm::Value* last) {
      const int64_t nv = (width + L - 1) / L;
      llvm::Value* lastMask = width % L ? lanesOn(width % L) : nullptr;
      llvm::Value* oc0 = b.CreateMul(panel, kb.index(NR));
      llvm::Value* wBase = b.CreateAdd(
          groupWeights,
          b.CreateAdd(b.CreateMul(panel, kb.index(K * NR)), b.CreateMul(k0, kb.index(width))));
      llvm::Value* partialBase =
          partial ? b.CreateMul(b.CreateSub(panel, panelLo), kb.index(partialPerPanel)) : nullptr;
      std::vector<llvm::Value*> bias(nv, splatF(0.0f));
      if (hasBias)
        for (int64_t v = 0; v < nv; ++v)
          bias[v] = loadVec(2, b.CreateAdd(groupBias, b.CreateAdd(oc0, kb.index(v * L))),
                            v == nv - 1 ? lastMask : nullptr);
      auto partialAt = [&](llvm::Value* t, int64_t m, int64_t v) {
        return at(partial, b.CreateAdd(partialBase, b.CreateAdd(b.CreateMul(t, kb.index(MR * NR)),
                                                                kb.index(m * NR + v * L))));
      };
      // The weights block this item multiplies next: the next panel's, or after its last
      // panel the first panel's of the next K block. Each tile prefetches its share of its
      // cache lines, so the block is in cache when its first tile starts.
      // (Past the item's last block this is another item's block or the buffer's end:
      // prefetches never fault.)
      auto weightsAt = [&](llvm::Value* p, llvm::Value* k) {
        llvm::Value* pWidth = remOc == 0 ? kb.index(NR)
                                         : b.CreateSelect(b.CreateICmpULT(p, kb.index(fullPanels)),
                                                          kb.index(NR), kb.index(remOc));
        return b.CreateAdd(groupWeights,
                           b.CreateAdd(b.CreateMul(p, kb.index(K * NR)), b.CreateMul(k, pWidth)));
      };
      llvm::Value* nextPanel = b.CreateAdd(panel, kb.index(1));
      llvm::Value* nextW =
          b.CreateSelect(b.CreateICmpULT(nextPanel, panelHi), weightsAt(nextPanel, k0),
                         weightsAt(panelLo, b.CreateAdd(k0, kb.index(count))));
      const int64_t blockLines = (count * NR + kLineFloats - 1) / kLineFloats;
      // With AVX-512's twice faster multiply-adds a tile's 32 prefetches at its start left
      // the next block's lines partly unfetched (7x7 maps: 7 tiles x 32 of 320-480 lines) and
      // the first tiles waited on L3: there the whole share is prefetched, spread over the
      // microkernel's iterations (Zen 5, median thread CPU time, 1 thread, five interleaved
      // rounds: MobileNetV2's 7x7 convs 960 -> 320 176-177 -> 161-165 us, 320 -> 1280
      // 236-238 -> 213-215, 960 -> 160 + Add 94-95 -> 84-86, ResNet-18's layer4.0 conv1
      // 738-803 -> 655-670; 14x14 maps unchanged). x86_64-v3 code on Zen 5 ran 0-7% slower
      // with it (compute-bound there), so AVX2 keeps the prefetches at the tile's start.
      const int64_t iterations = count / unroll;
      const bool spread = L >= 16 && iterations > 0;
      const int64_t linesPerTile =
          spread ? (blockLines + tilesPerGroup - 1) / tilesPerGroup
                 : std::min((blockLines + tilesPerGroup - 1) / tilesPerGroup, kMaxPrefetches);
      const int64_t linesPerIteration = spread ? (linesPerTile + iterations - 1) / iterations : 0;
      kb.forRange(
          tLo, tHi,
          [&](llvm::Value* t) {
            llvm::Value* p0 = tileStart(t);
            llvm::Value* firstLine = b.CreateAdd(
                nextW, b.CreateMul(b.CreateSub(t, tLo), kb.index(linesPerTile * kLineFloats)));
            for (int64_t l = 0; l < (spread ? 0 : linesPerTile); ++l) {
              // (read, into every cache level, data)
              llvm::Value* address =
                  kb.elementAddress(1, b.CreateAdd(firstLine, kb.index(l * kLineFloats)));
              b.CreateIntrinsic(llvm::Intrinsic::prefetch, {address->getType()},
                                {address, b.getInt32(0), b.getInt32(3), b.getInt32(1)});
            }
            for (int64_t m = 0; m < MR; ++m) {
              for (int64_t v = 0; v < nv; ++v) {
                llvm::Value* start = bias[v];
                if (partial && first != b.getTrue()) {
                  llvm::Value* sum =
                      b.CreateAlignedLoad(vecTy, partialAt(t, m, v), llvm::Align(4 * L));
                  start = b.CreateSelect(first, bias[v], sum);
                }
                b.CreateStore(start, acc[m][v]);
              }
            }
            LoadA loadA;
            if (inPlace) {
              llvm::Value* tileBase = b.CreateMul(t, kb.index(blockK * MR));
              loadA = [&, tileBase](llvm::Value* k, int64_t m) -> llvm::Value* {
                llvm::Value* index =
                    b.CreateAdd(tileBase, b.CreateAdd(b.CreateMul(k, kb.index(MR)), kb.index(m)));
                return b.CreateLoad(floatTy, at(pixels, index));
              };
            } else {
              loadA = [&, p0](llvm::Value* k, int64_t m) -> llvm::Value* {
                llvm::Value* index =
                    b.CreateAdd(b.CreateMul(k, kb.index(aRow)), b.CreateAdd(p0, kb.index(m)));
                return b.CreateLoad(floatTy, at(pixels, index));
              };
            }
            LoadB loadB = [&](llvm::Value* k, int64_t v) {
              llvm::Value* index =
                  b.CreateAdd(wBase, b.CreateAdd(b.CreateMul(k, kb.index(width)), kb.index(v * L)));
              return loadVec(1, index, v == nv - 1 ? lastMask : nullptr);
            };
            PerIteration prefetch;
            if (spread)
              prefetch = prefetchLinesPerIteration(kb, 1, firstLine, linesPerIteration);
            emitMicrokernel(kb, {MR, nv, L}, acc, count, unroll, loadA, loadB, prefetch);
            if (partial && last != b.getTrue()) {
              kb.ifThen(b.CreateNot(last), [&] {
                for (int64_t m = 0; m < MR; ++m)
                  for (int64_t v = 0; v < nv; ++v)
                    b.CreateAlignedStore(b.CreateLoad(vecTy, acc[m][v]), partialAt(t, m, v),
                                         llvm::Align(4 * L));
              });
            }
            if (last == b.getFalse()) return;
            // Channels in lanes -> pixels in lanes, into the panel's channel rows.
            kb.ifThen(last, [&] {
              for (int64_t v = 0; v < nv; ++v) {
                for (int64_t m0 = 0; m0 < MR; m0 += L) {
                  std::vector<llvm::Value*> rows;
                  for (int64_t m = m0; m < std::min<int64_t>(MR, m0 + L); ++m)
                    rows.push_back(activate(b.CreateLoad(vecTy, acc[m][v])));
                  std::vector<llvm::Value*> columns = transpose(b, rows, L);
                  for (int64_t j = 0; j < int64_t(L) && v * L + j < width; ++j) {
                    llvm::Value* slot = b.CreateAdd(kb.index((v * L + j) * cRow + m0), p0);
                    b.CreateAlignedStore(columns[j], at(rowsBuffer, slot), llvm::Align(4));
                  }
                }
              }
            });
          },
          /*unroll=*/false);
      if (last == b.getFalse()) return;
      // The panel's channel rows to the output, through the fused chain.
      kb.ifThen(last, [&] {
        kb.forRange(
            kb.index(0), kb.index(width),
            [&](llvm::Value* j) {
              llvm::Value* outRow =
                  b.CreateAdd(outImage, b.CreateMul(b.CreateAdd(oc0, j), kb.index(P)));
              FusedEpilogue::Row row;
              if (chain) row = epilogue.row(outRow);
              llvm::Value* source = b.CreateMul(j, kb.index(cRow));
              auto storeColumns = [&](int64_t q, llvm::Value* mask) {
                llvm::Value* column = kb.index(q);
                llvm::Value* value = b.CreateAlignedLoad(
                    vecTy, at(rowsBuffer, b.CreateAdd(source, column)), llvm::Align(4 * L));
                if (chain) value = epilogue.applyVector(value, row, column, mask);
                llvm::Value* dest = b.CreateAdd(outRow, column);
                if (mask) {
                  b.CreateMaskedStore(value, kb.elementAddress(out, dest), llvm::Align(4), mask);
                } else {
                  kb.storeVector(out, dest, value);
                }
              };
              for (int64_t q = 0; q < P; q += L) {
                llvm::Value* mask = q + int64_t(L) > P ? lanesOn(P - q) : nullptr;
                if (tileGroups == 1) {
                  storeColumns(q, mask);
                  continue;
                }
                // Only the item's pixels [pLo, pHi): the lanes of this vector inside them.
                std::vector<llvm::Constant*> lane;
                for (int64_t e = 0; e < int64_t(L); ++e)
                  lane.push_back(llvm::ConstantInt::get(kb.indexType(), uint64_t(q + e)));
                llvm::Value* pixel = llvm::ConstantVector::get(lane);
                llvm::Value* inside = b.CreateAnd(
                    b.CreateICmpUGE(pixel, b.CreateVectorSplat(L, pLo)),
                    b.CreateICmpULT(pixel, b.CreateVectorSplat(L, pHi)));
                if (mask) inside = b.CreateAnd(inside, mask);
                kb.ifThen(b.CreateAnd(b.CreateICmpULT(kb.index(q), pHi),
                                      b.CreateICmpUGT(kb.index(q + int64_t(L)), pLo)),
                          [&] { storeColumns(q, inside); });
              }
            },
            /*unroll=*/false);
      });
    };
    // One K block over every panel of the item.
    auto block = [&](llvm::Value* k0, int64_t count, llvm::Value* first, llvm::Value* last) {
      if (inPlace) {
        packTiles(k0, count);
      } else {
        packIm2col(b.CreateUDiv(k0, kb.index(taps)), count / taps);
      }
      kb.forRange(
          panelLo, fullHi,
          [&](llvm::Value* panel) { panelProduct(panel, NR, k0, count, first, last); },
          /*unroll=*/false);
      if (remOc > 0)
        kb.ifThen(b.CreateICmpEQ(panelHi, kb.index(panels)),
                  [&] { panelProduct(kb.index(fullPanels), remOc, k0, count, first, last); });
    };
    if (blocks == 1) {
      block(kb.index(0), K, b.getTrue(), b.getTrue());
    } else {
      kb.forRange(
          kb.index(0), kb.index(fullBlocks),
          [&](llvm::Value* kBlock) {
            llvm::Value* first = b.CreateICmpEQ(kBlock, kb.index(0));
            llvm::Value* last =
                lastK > 0 ? b.getFalse() : b.CreateICmpEQ(kBlock, kb.index(fullBlocks - 1));
            block(b.CreateMul(kBlock, kb.index(blockK)), blockK, first, last);
          },
          /*unroll=*/false);
      if (lastK > 0) block(kb.index(fullBlocks * blockK), lastK, b.getFalse(), b.getTrue());
    }
  });
  workgroups = workgroupsFor(items, panelsPerGroup * NR * K * P);
  return true;
}

}  // namespace kiln::codegen::detail
