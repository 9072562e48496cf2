// Convolution as implicit GEMM on NCHW (conv_gemm_plan.h has the math and the policy):
// per image, Y[OC][pixels] = A[OC][K] x B[K][pixels], computed in MR x NR register tiles by
// the GEMM microkernel (emit_gemm_microkernel.h), vectorised over output pixels so the NCHW
// output is the tile's rows, stored as they are.
//  - A: the weights, packed at compile time in panels of MR output channels (weightPanel)
//    so each k step's MR broadcasts are consecutive floats, the next panel's block prefetched
//    by the tiles of the current one; unpacked OIHW also works.
//  - B: for 1x1 / stride 1 / no padding with at most kMaxDirectK channels (or kMaxFewOCK,
//    kMaxFewOCK16 on AVX-512, into at most kFewOC) the input itself (row k = channel k, stride H*W), a tile at a time
//    over every panel, the next tile's rows prefetched; otherwise a K block x NR im2col
//    panel per pixel tile on the stack (emit_im2col.h: masked vector loads, strided loads +
//    shuffles, per-row segments; zeros in the padding).
//  - Pixel tiles: flattened over the whole map when stride 1 keeps the width or rows are
//    shorter than a tile (no lanes wasted at row ends), else along output rows (the row's
//    last tile narrower), or along 2-4 rows at a time where that fills the tiles better.
//    A group of tiles (up to kGroupTiles flattened ones, or one row group) shares each
//    block of A: per K block its B panels are packed, then every OC panel of the item runs
//    over every tile of the group.
//  - K blocks (whole channels, <= kMaxBlockK rows) keep a tile's B in L1; between blocks the
//    tile's partial sums go through the output. The first block starts from the bias, the
//    last applies the activation and the fused epilogue chain to the accumulators before
//    their final store; pixel tails use masked loads and stores.
//  - Work items: (image, pixel group, group of OC panels), split evenly over workgroups. Pixel
//    groups outermost: the pool's threads take runs of consecutive items from either end, so
//    each thread writes every output channel of its own pixels, which the next convolution
//    reads (a 1x1 conv reads every channel of its pixels) from its own core's caches rather
//    than the other's (2 threads, interleaved: MobileNetV2 2576 -> 2531 us, ResNet-18 5823 ->
//    5781 us; 1 thread and SqueezeNet within the noise).
#include <algorithm>
#include <cassert>

#include "emit_gemm_microkernel.h"
#include "emit_im2col.h"
#include "emitters.h"
#include "fused_epilogue.h"
#include "kernel_builder.h"
#include "kiln/codegen/conv_gemm_plan.h"

namespace kiln::codegen::detail {
namespace {

constexpr int64_t kPanelFloats = 49152;  // a group's B panels: 192 KB (L2) at most
constexpr int64_t kMaxBlockK = 256;      // K block: a tile's B (16 KB for NR = 16) stays in L1
constexpr int64_t kMaxBlockK1x1 = 512;   // ... for packed 1x1 tiles (see blockK)
constexpr int64_t kGroupTiles = 8;       // flattened tiles per group at most
constexpr int64_t kWholeMapFloats = 98304;  // B panels of a whole small map: 384 KB (L2)
constexpr int64_t kMaxDirectK = 128;     // 1x1 convs read B in place up to this many channels
constexpr int64_t kFewOC = 64;           // ... or up to kMaxFewOCK into at most this many
constexpr int64_t kMaxFewOCK = 256;
constexpr int64_t kMaxFewOCK16 = 512;    // ... with 16-lane vectors (AVX-512)
constexpr int64_t kMinItems = 8;         // OC panels are split into groups until this many items
constexpr int64_t kLineFloats = 16;      // a 64-byte cache line

}  // namespace

bool emitConvGemm(KernelBuilder& kb, uint32_t& workgroups) {
  // A grouped convolution runs as groups 1 over N x groups images (groupedView), each image's
  // weights and bias those of its group.
  const KernelDesc view = groupedView(kb.desc());
  const KernelDesc& d = view;
  const int64_t groups = kb.desc().groups;
  ConvGemmTile plan = convGemmTile(d, {kb.target().vectorLanes, kb.target().vectorRegisters});
  if (!plan.applies()) {
    assert(d.weightLayout == ConvWeights::Oihw && "packed convolution weights need their kernel");
    return false;
  }
  assert(d.weightLayout == ConvWeights::Oihw ||
         (d.weightLayout == ConvWeights::GemmPanels && d.weightPanel == plan.mr));
  llvm::IRBuilder<>& b = kb.b();
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  const std::vector<int64_t>& ws = d.inputs[1].shape;
  const std::vector<int64_t>& ys = d.output.shape;
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  const int64_t OC = ws[0], KH = ws[2], KW = ws[3], OH = ys[2], OW = ys[3];
  const int64_t sh = d.strides[0], sw = d.strides[1], dh = d.dilations[0], dw = d.dilations[1];
  const int64_t padTop = d.pads[0], padLeft = d.pads[1];
  const int64_t taps = KH * KW, K = C * taps, HW = H * W, OHW = OH * OW;
  const unsigned L = unsigned(plan.lanes);
  const int64_t MR = plan.mr, NRV = plan.nrVectors, NR = plan.nr();
  const bool packedA = d.weightLayout == ConvWeights::GemmPanels;
  const bool hasBias = d.inputs.size() - d.epilogue.inputCount > 2;
  const unsigned out = kb.outputBinding();
  // A 1x1 stride-1 convolution reads B straight from the input, one tile at a time over all
  // the item's output-channel panels (its rows, K of them H*W apart, each touching one or two
  // cache lines, stay in L1 or L2 across the panels), the next tile's rows prefetched: up to
  // kMaxDirectK channels, or up to kMaxFewOCK into at most kFewOC output channels, where few
  // panels share a packed tile and its packing costs more than it saves (SqueezeNet's
  // features.7 squeeze 256 -> 32 at 27x27: 187-198 -> 165-171 us by min, 1 thread). A tile's
  // rows (up to two cache lines each) then still fit L1; with 384 or 512 channels they do not
  // and the panels re-read them from L2 (SqueezeNet's 13x13 squeezes 384/512 -> 64: medians
  // 5-15% worse in place than packed, Zen 3 AVX2; x86_64-v3 code on Zen 5 still 0-7% worse).
  // With AVX-512's 32-pixel tiles in place wins up to 512 channels (Zen 5, median thread CPU
  // time, 1 thread, interleaved: SqueezeNet's 384 -> 48 45 -> 33 us, 384 -> 64 56 -> 46,
  // 512 -> 64 75 -> 61; MobileNetV2's 384 -> 64 + Add at 14x14 62-67 -> 58-60). Larger
  // convolutions are packed in K blocks.
  const int64_t maxFewOCK = L >= 16 ? kMaxFewOCK16 : kMaxFewOCK;
  const bool direct = KH == 1 && KW == 1 && sh == 1 && sw == 1 && padTop == 0 && padLeft == 0 &&
                      OH == H && OW == W && (C <= kMaxDirectK || (OC <= kFewOC && C <= maxFewOCK));
  // Flattened tiles waste no lanes at row ends and read contiguously when stride 1 keeps the
  // width; other convolutions with rows of a tile or more use row tiles (contiguous or
  // strided reads instead of gathers).
  const bool sameWidth = sh == 1 && sw == 1 && W == OW;
  const bool rowAligned = !direct && !sameWidth && OW >= NR;
  const Im2colShape im2col{C, H, W, KH, KW, sh, sw, dh, dw, padTop, padLeft, OH, OW};
  // Row tiles span groupRows output rows when one row would end in a tile of more than one
  // vector that is not full (ResNet's 28-wide rows: 16 + 12 lanes, 87.5% used; two rows are
  // 3 tiles + one vector, which runs over two panels at once): the tiles then cross rows and
  // the panel is packed like flattened tiles (per-row segments).
  int64_t groupRows = 1;
  if (rowAligned && OW % NR > int64_t(L) &&
      im2colReadFor(im2col, /*rowTiles=*/false, L) == Im2colRead::Segments) {
    for (int64_t r = 2; r <= 4 && groupRows == 1; ++r)
      if (OH % r == 0 && (r * OW) % NR <= int64_t(L)) groupRows = r;
  }
  const bool rowTiles = rowAligned && groupRows == 1;  // how the panels are packed

  // Pixel tiles of NR pixels: along each output row (the row's last tile narrower) or over
  // the flattened map. A group of tiles (one row, or up to kGroupTiles flattened tiles)
  // shares every block of A: each weights panel block is loaded once per group.
  const int64_t span = rowAligned ? groupRows * OW : OHW;
  const int64_t fullTiles = span / NR, tailWidth = span % NR;
  const int64_t spanTiles = fullTiles + (tailWidth > 0);
  // Packed flattened tiles split into up to kMinItems / 2 pixel groups before the output
  // channels are split in more than two: every OC group packs its pixel group's B panels
  // again (ResNet-18 layer3.0 conv1, 14x14: 4 OC groups x 2 pixel groups packed each panel
  // four times; 2 x 4 twice).
  // On AVX-512 a packed 1x1 stride-1 convolution over a map of at most kGroupTiles tiles
  // (SqueezeNet's 13x13 classifier: 6 tiles of 32 pixels, the last of 9) is one pixel group,
  // its B panels for a K block of up to kMaxBlockK1x1 rows within kWholeMapFloats, and its
  // output channels kMinItems / 2 groups: 3 pixel groups (2, 2 and 1 + the tail) x 3 OC groups
  // made 9 items of unequal work, 40-48 us over half at 2 threads by the pool's schedule of
  // the per-workgroup minimums (Zen 5): 413-417 us against 448-458 for the dispatch, 1 thread
  // even (810-835 against 800-846 us, sum of per-workgroup minimums; 829-874 against 823-876
  // by per-dispatch min).
  const bool wholeMap = L >= 16 && sameWidth && !direct && taps == 1 &&
                        spanTiles <= kGroupTiles &&
                        spanTiles * NR * std::min(K, kMaxBlockK1x1) <= kWholeMapFloats;
  int64_t pixelGroups = rowAligned ? OH / groupRows : (spanTiles + kGroupTiles - 1) / kGroupTiles;
  if (!rowAligned && !direct && !wholeMap)
    pixelGroups = std::min(spanTiles, std::max(pixelGroups, (kMinItems / 2 + N - 1) / N));
  const int64_t groupTiles = rowAligned ? spanTiles : (spanTiles + pixelGroups - 1) / pixelGroups;
  if (!rowAligned) pixelGroups = (spanTiles + groupTiles - 1) / groupTiles;
  const int64_t fullPanels = OC / MR, remRows = OC % MR, panels = fullPanels + (remRows > 0);
  const int64_t minItems = wholeMap ? kMinItems / 2 : kMinItems;
  int64_t ocGroups =
      std::clamp<int64_t>((minItems + N * pixelGroups - 1) / (N * pixelGroups), 1, panels);
  // Group g: panels [g * panels / G, (g + 1) * panels / G), sizes within one of each other.
  const int64_t panelsPerGroup = (panels + ocGroups - 1) / ocGroups;  // the largest group
  const int64_t items = N * ocGroups * pixelGroups;
  // K blocks of whole channels (all taps of a channel in one block), sized so that the
  // group's B panels fit kPanelFloats. Packed 1x1 tiles take up to kMaxBlockK1x1 rows: the
  // group's panels come from L2 while each A panel block stays in L1 over them either way,
  // and one block instead of two spares the partial sums' trip through the output and half
  // the tile prologues (SqueezeNet's classifier 512 -> 1000 at 13x13: 2131-2187 -> 1994-2059
  // us by min, 1 thread, four interleaved rounds).
  const int64_t maxBlockK = taps == 1 ? kMaxBlockK1x1 : kMaxBlockK;
  const int64_t panelFloats = wholeMap ? kWholeMapFloats : kPanelFloats;
  const int64_t blockK = std::max(taps, std::min(maxBlockK, panelFloats / (groupTiles * NR)));
  const int64_t blocks = direct ? 1 : (K + blockK - 1) / blockK;
  // Channels per block: a divisor of C not much smaller than the even split if there is one
  // (no separately emitted last block), else the even split rounded up.
  int64_t blockC = (C + blocks - 1) / blocks;
  for (int64_t c = blockC; c * 2 > blockC && c > 0; --c) {
    if (C % c == 0) {
      blockC = c;
      break;
    }
  }
  const int64_t fullBlocks = C / blockC, lastC = C % blockC;
  const int64_t tileFloats = blockC * taps * NR;  // one tile's B panel
  // K steps per microkernel loop iteration: a channel's taps when that is a few (no
  // remainder), else 4.
  const int64_t unroll = taps >= 4 && taps <= 9 ? taps : 4;
  // Packed tiles: each full tile of a group prefetches its share of the next panel's block of
  // A, linesA cache lines per microkernel iteration (together at least the block), so the
  // panel after finds its weights in cache rather than in L3: SqueezeNet's classifier, 2 MB
  // of weights, 885-914 us against 924-1023 by median thread CPU time (1 thread, five
  // interleaved rounds, Zen 5 AVX-512).
  const int64_t linesA =
      direct || !packedA ? 0 : (unroll * MR + kLineFloats * groupTiles - 1) / (kLineFloats * groupTiles);

  llvm::Type* floatTy = b.getFloatTy();
  auto* vecTy = llvm::FixedVectorType::get(floatTy, L);
  FusedEpilogue epilogue(kb);
  const bool chain = !d.epilogue.chain.nodes.empty();
  // A tail tile of one vector runs over two panels at once (2 x MR accumulators): one
  // vector per k step would leave the FMA units waiting on loads.
  const bool pairTail = tailWidth > 0 && tailWidth <= int64_t(L) && NRV >= 2;
  Accumulators acc = makeAccumulators(kb, {pairTail ? 2 * MR : MR, NRV, L});
  llvm::Value* bPanel = nullptr;
  if (!direct) {
    auto* panel = llvm::cast<llvm::AllocaInst>(
        kb.local(llvm::ArrayType::get(floatTy, uint64_t(groupTiles * tileFloats)), "im2col"));
    panel->setAlignment(llvm::Align(64));
    bPanel = panel;
  }
  auto splatF = [&](float v) { return llvm::ConstantFP::get(vecTy, v); };
  // The activation field on a vector (Sigmoid and Tanh too: math_approx.h takes vectors).
  auto activate = [&](llvm::Value* v) { return kb.applyEpilogue(d.epilogue, v); };
  // Lanes inside a tile of `width` pixels, for vector v if the tile ends inside it.
  auto laneMask = [&](int64_t width, int64_t v) -> llvm::Value* {
    if ((v + 1) * L <= width) return nullptr;
    std::vector<llvm::Constant*> on;
    for (int64_t j = 0; j < int64_t(L); ++j) on.push_back(b.getInt1(v * L + j < width));
    return llvm::ConstantVector::get(on);
  };
  auto loadVec = [&](unsigned binding, llvm::Value* at, llvm::Value* mask) -> llvm::Value* {
    if (!mask) return kb.loadVector(binding, at, L);
    return b.CreateMaskedLoad(vecTy, kb.elementAddress(binding, at), llvm::Align(4), mask,
                              llvm::Constant::getNullValue(vecTy));
  };
  kb.forWorkgroupShare(items, [&](llvm::Value* item) {
    std::vector<llvm::Value*> co = kb.decompose(item, {N, pixelGroups, ocGroups});
    llvm::Value *n = co[0], *pixelGroup = co[1], *ocGroup = co[2];
    llvm::Value* panelLo =
        b.CreateUDiv(b.CreateMul(ocGroup, kb.index(panels)), kb.index(ocGroups));
    llvm::Value* panelHi = b.CreateUDiv(
        b.CreateMul(b.CreateAdd(ocGroup, kb.index(1)), kb.index(panels)), kb.index(ocGroups));
    llvm::Value* fullHi = kb.minValue(panelHi, kb.index(fullPanels));
    llvm::Value* hasRemainder = b.CreateICmpEQ(panelHi, kb.index(panels));
    llvm::Value* xImage = b.CreateMul(n, kb.index(C * HW));
    llvm::Value* outImage = b.CreateMul(n, kb.index(OC * OHW));
    // A grouped convolution's image n is group n % groups: its weights and bias.
    llvm::Value* group = groups > 1 ? b.CreateURem(n, kb.index(groups)) : kb.index(0);
    llvm::Value* groupWeights = b.CreateMul(group, kb.index(OC * K));
    llvm::Value* groupBias = b.CreateMul(group, kb.index(OC));
    // This group's tiles: `groupFull` full tiles from flat pixel groupStart, then the tail
    // tile (tailWidth pixels) if hasTail.
    llvm::Value *groupStart, *groupFull, *hasTail;
    if (rowAligned) {
      groupStart = b.CreateMul(pixelGroup, kb.index(span));
      groupFull = kb.index(fullTiles);
      hasTail = b.getInt1(tailWidth > 0);
    } else {
      // Group g: tiles [g * spanTiles / G, (g + 1) * spanTiles / G), at most groupTiles
      // (ResNet-18's 14x14 maps, 13 tiles in 4 groups: 3, 3, 3, 4 rather than 4, 4, 4, 1).
      llvm::Value* firstTile = b.CreateUDiv(b.CreateMul(pixelGroup, kb.index(spanTiles)),
                                            kb.index(pixelGroups));
      llvm::Value* endTile = b.CreateUDiv(
          b.CreateMul(b.CreateAdd(pixelGroup, kb.index(1)), kb.index(spanTiles)),
          kb.index(pixelGroups));
      groupStart = b.CreateMul(firstTile, kb.index(NR));
      groupFull = b.CreateSub(kb.minValue(endTile, kb.index(fullTiles)), firstTile);
      hasTail = b.CreateAnd(b.getInt1(tailWidth > 0),
                            b.CreateICmpEQ(pixelGroup, kb.index(pixelGroups - 1)));
    }
    llvm::Value* tailStart = b.CreateAdd(groupStart, b.CreateMul(groupFull, kb.index(NR)));
    // Calls tile(t, p0, width) for every tile t of the group (a loop over the full ones).
    auto forTiles = [&](const std::function<void(llvm::Value*, llvm::Value*, int64_t)>& tile) {
      kb.forRange(kb.index(0), groupFull, [&](llvm::Value* t) {
        tile(t, b.CreateAdd(groupStart, b.CreateMul(t, kb.index(NR))), NR);
      });
      if (tailWidth > 0) kb.ifThen(hasTail, [&] { tile(groupFull, tailStart, tailWidth); });
    };

    // The microkernel for one tile of `rows` output channels from panel `panel` over K range
    // [k0, k0 + kCount), B given by loadB: the tile starts from the bias (first) or the
    // partial sums in the output, and gets the epilogue if `last`.
    // With rows = 2 * MR the tile spans panels `panel` and `panel` + 1. prefetchA: where this
    // tile's share of the next panel's block of A starts (null: no prefetches).
    auto tileProduct = [&](llvm::Value* panel, int64_t rows, llvm::Value* p0, int64_t width,
                           llvm::Value* k0, int64_t kCount, const LoadB& loadB, llvm::Value* first,
                           llvm::Value* last, llvm::Value* prefetchA = nullptr) {
      const int64_t nv = (width + L - 1) / L;
      llvm::Value* oc0 = b.CreateMul(panel, kb.index(MR));
      std::vector<llvm::Value*> outRow(static_cast<size_t>(rows));
      for (int64_t m = 0; m < rows; ++m) {
        llvm::Value* oc = b.CreateAdd(oc0, kb.index(m));
        outRow[m] = b.CreateAdd(outImage, b.CreateMul(oc, kb.index(OHW)));
        llvm::Value* start =
            hasBias ? b.CreateVectorSplat(L, kb.load(2, ElemType::F32, b.CreateAdd(groupBias, oc)))
                    : splatF(0.0f);
        for (int64_t v = 0; v < nv; ++v) {
          llvm::Value* at = b.CreateAdd(b.CreateAdd(outRow[m], p0), kb.index(v * L));
          llvm::Value* partial =
              first == b.getTrue() ? nullptr : loadVec(out, at, laneMask(width, v));
          b.CreateStore(partial ? b.CreateSelect(first, start, partial) : start, acc[m][v]);
        }
      }
      const int64_t stride = std::min(rows, MR);  // rows of a packed panel
      llvm::Value* aBase = b.CreateAdd(
          groupWeights, packedA ? b.CreateAdd(b.CreateMul(panel, kb.index(K * MR)),
                                              b.CreateMul(k0, kb.index(stride)))
                                : b.CreateAdd(b.CreateMul(oc0, kb.index(K)), k0));
      LoadA loadA = [&](llvm::Value* k, int64_t m) {
        llvm::Value* at = packedA ? b.CreateAdd(b.CreateMul(k, kb.index(stride)),
                                                kb.index(m / stride * K * MR + m % stride))
                                  : b.CreateAdd(k, kb.index(m * K));
        return kb.load(1, ElemType::F32, b.CreateAdd(aBase, at));
      };
      // Prefetches (read, into every cache level, data) never fault: past the last panel
      // they may point outside the weights.
      PerIteration prefetch;
      if (prefetchA) prefetch = prefetchLinesPerIteration(kb, 1, prefetchA, linesA);
      emitMicrokernel(kb, {rows, nv, L}, acc, kCount, unroll, loadA, loadB, prefetch);
      for (int64_t m = 0; m < rows; ++m) {
        FusedEpilogue::Row row;
        if (chain && last != b.getFalse()) row = epilogue.row(outRow[m]);
        for (int64_t v = 0; v < nv; ++v) {
          llvm::Value* column = b.CreateAdd(p0, kb.index(v * L));
          llvm::Value* at = b.CreateAdd(outRow[m], column);
          llvm::Value* value = b.CreateLoad(vecTy, acc[m][v]);
          llvm::Value* mask = laneMask(width, v);
          if (last != b.getFalse()) {
            llvm::Value* done = activate(value);
            if (chain) done = epilogue.applyVector(done, row, column, mask);
            value = last == b.getTrue() ? done : b.CreateSelect(last, done, value);
          }
          if (mask) {
            b.CreateMaskedStore(value, kb.elementAddress(out, at), llvm::Align(4), mask);
          } else {
            kb.storeVector(out, at, value);
          }
        }
      }
    };
    // Every panel of the item times every tile of the group, over one K range; bAt(t, width)
    // gives tile t's B.
    auto panelsTimesTiles =
        [&](llvm::Value* k0, int64_t kCount,
            const std::function<LoadB(llvm::Value*, llvm::Value*, int64_t)>& bOf,
            llvm::Value* first, llvm::Value* last) {
          // Panel rows x the group's tiles; the tail tile only if `tail` (else the caller
          // pairs it).
          auto panelRow = [&](llvm::Value* panel, int64_t rows, bool tail) {
            kb.forRange(kb.index(0), groupFull, [&](llvm::Value* t) {
              llvm::Value* p0 = b.CreateAdd(groupStart, b.CreateMul(t, kb.index(NR)));
              // The next panel's block of A, tile t of the group its t-th share of the lines.
              llvm::Value* nextA = nullptr;
              if (linesA > 0)
                nextA = b.CreateAdd(
                    b.CreateAdd(groupWeights,
                                b.CreateAdd(b.CreateMul(b.CreateAdd(panel, kb.index(1)),
                                                        kb.index(K * MR)),
                                            b.CreateMul(k0, kb.index(MR)))),
                    b.CreateMul(t, kb.index(kCount / unroll * linesA * kLineFloats)));
              tileProduct(panel, rows, p0, NR, k0, kCount, bOf(t, p0, NR), first, last, nextA);
            });
            if (tailWidth > 0 && tail)
              kb.ifThen(hasTail, [&] {
                tileProduct(panel, rows, tailStart, tailWidth, k0, kCount,
                            bOf(groupFull, tailStart, tailWidth), first, last);
              });
          };
          if (direct) {
            // Every tile of the group over every panel: the tile's B stays in cache while
            // the panels (at most kMaxDirectK x OC or kMaxFewOCK x kFewOC floats) stream
            // through it. (Packed tiles run the other way: the group's B panels stay in L2
            // while each A panel block stays in L1 over them, since A can be large:
            // SqueezeNet's classifier 512 -> 1000 is ~4% slower tile by tile.)
            auto tilePanels = [&](llvm::Value* t, llvm::Value* p0, int64_t width, bool pair) {
              LoadB loadB = bOf(t, p0, width);
              llvm::Value* lo = panelLo;
              if (pair) {
                llvm::Value* pairs = b.CreateUDiv(b.CreateSub(fullHi, panelLo), kb.index(2));
                kb.forRange(kb.index(0), pairs, [&](llvm::Value* q) {
                  llvm::Value* panel = b.CreateAdd(panelLo, b.CreateMul(q, kb.index(2)));
                  tileProduct(panel, 2 * MR, p0, width, k0, kCount, loadB, first, last);
                });
                lo = b.CreateAdd(panelLo, b.CreateMul(pairs, kb.index(2)));
              }
              kb.forRange(lo, fullHi, [&](llvm::Value* panel) {
                tileProduct(panel, MR, p0, width, k0, kCount, loadB, first, last);
              });
              if (remRows > 0)
                kb.ifThen(hasRemainder, [&] {
                  tileProduct(kb.index(fullPanels), remRows, p0, width, k0, kCount, loadB, first,
                              last);
                });
            };
            kb.forRange(kb.index(0), groupFull, [&](llvm::Value* t) {
              tilePanels(t, b.CreateAdd(groupStart, b.CreateMul(t, kb.index(NR))), NR, false);
            });
            if (tailWidth > 0)
              kb.ifThen(hasTail, [&] { tilePanels(groupFull, tailStart, tailWidth, pairTail); });
            return;
          }
          if (pairTail) {
            // Full panels two at a time, their tail tile as one 2 x MR tile; an odd one last.
            llvm::Value* pairs = b.CreateUDiv(b.CreateSub(fullHi, panelLo), kb.index(2));
            kb.forRange(kb.index(0), pairs, [&](llvm::Value* q) {
              llvm::Value* panel = b.CreateAdd(panelLo, b.CreateMul(q, kb.index(2)));
              panelRow(panel, MR, false);
              panelRow(b.CreateAdd(panel, kb.index(1)), MR, false);
              kb.ifThen(hasTail, [&] {
                tileProduct(panel, 2 * MR, tailStart, tailWidth, k0, kCount,
                            bOf(groupFull, tailStart, tailWidth), first, last);
              });
            });
            llvm::Value* odd = b.CreateAdd(panelLo, b.CreateMul(pairs, kb.index(2)));
            kb.ifThen(b.CreateICmpULT(odd, fullHi), [&] { panelRow(odd, MR, true); });
          } else {
            kb.forRange(panelLo, fullHi, [&](llvm::Value* panel) { panelRow(panel, MR, true); });
          }
          if (remRows > 0)
            kb.ifThen(hasRemainder, [&] { panelRow(kb.index(fullPanels), remRows, true); });
        };

    if (direct) {
      // B row k is input channel k: consecutive pixels, rows H*W apart.
      panelsTimesTiles(
          kb.index(0), K,
          [&](llvm::Value*, llvm::Value* p0, int64_t width) -> LoadB {
            // A full tile prefetches the next tile's row k at each k step (the first touch
            // of the rows would otherwise wait on L2 / L3 K times: SqueezeNet features.4
            // squeeze 128 -> 16 at 55x55, 188 -> 151 us by min with the tile order above).
            llvm::Value* ahead = width == NR && HW >= NR
                                     ? kb.minValue(b.CreateAdd(p0, kb.index(NR)), kb.index(HW - NR))
                                     : nullptr;
            return [&, p0, width, ahead](llvm::Value* k, int64_t v) {
              llvm::Value* row = b.CreateAdd(xImage, b.CreateMul(k, kb.index(HW)));
              llvm::Value* at = b.CreateAdd(row, b.CreateAdd(p0, kb.index(v * L)));
              if (ahead && v == 0) {
                std::vector<int64_t> offsets;
                for (int64_t o = 0; o < NR; o += 16) offsets.push_back(o);
                offsets.push_back(NR - 1);
                for (int64_t o : offsets) {
                  llvm::Value* address =
                      kb.elementAddress(0, b.CreateAdd(row, b.CreateAdd(ahead, kb.index(o))));
                  b.CreateIntrinsic(llvm::Intrinsic::prefetch, {address->getType()},
                                    {address, b.getInt32(0), b.getInt32(3), b.getInt32(1)});
                }
              }
              return loadVec(0, at, laneMask(width, v));
            };
          },
          b.getTrue(), b.getTrue());
      return;
    }

    // Packs channels [c0, c0 + count) of tile t (width pixels from p0) into its B panel.
    auto packTile = [&](llvm::Value* c0, int64_t count, llvm::Value* t, llvm::Value* p0,
                        int64_t width) {
      emitIm2colTile(kb, im2col, rowTiles, NR, bPanel, b.CreateMul(t, kb.index(tileFloats)), xImage,
                     c0, count, p0, width);
    };

    // One K block: channels [c0, c0 + count) of every tile packed, then every panel x tile.
    auto block = [&](llvm::Value* c0, int64_t count, llvm::Value* first, llvm::Value* last) {
      forTiles([&](llvm::Value* t, llvm::Value* p0, int64_t width) {
        packTile(c0, count, t, p0, width);
      });
      panelsTimesTiles(
          b.CreateMul(c0, kb.index(taps)), count * taps,
          [&](llvm::Value* t, llvm::Value*, int64_t) -> LoadB {
            llvm::Value* tileBase = b.CreateMul(t, kb.index(tileFloats));
            return [&, tileBase](llvm::Value* k, int64_t v) {
              llvm::Value* slot =
                  b.CreateAdd(tileBase, b.CreateAdd(b.CreateMul(k, kb.index(NR)), kb.index(v * L)));
              return b.CreateAlignedLoad(vecTy, b.CreateGEP(floatTy, bPanel, slot),
                                         llvm::Align(32));
            };
          },
          first, last);
    };
    if (fullBlocks == 1 && lastC == 0) {
      block(kb.index(0), blockC, b.getTrue(), b.getTrue());
    } else {
      kb.forRange(0, fullBlocks, [&](llvm::Value* k) {
        llvm::Value* first = b.CreateICmpEQ(k, kb.index(0));
        llvm::Value* last = lastC > 0 ? b.getFalse() : b.CreateICmpEQ(k, kb.index(fullBlocks - 1));
        block(b.CreateMul(k, kb.index(blockC)), blockC, first, last);
      });
      if (lastC > 0) block(kb.index(fullBlocks * blockC), lastC, b.getFalse(), b.getTrue());
    }
  });
  workgroups = workgroupsFor(items, panelsPerGroup * MR * K * NR * groupTiles);
  return true;
}

}  // namespace kiln::codegen::detail
