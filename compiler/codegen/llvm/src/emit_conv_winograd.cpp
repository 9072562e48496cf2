// Winograd convolution F(m x m, 3 x 3) for 3x3 stride-1 f32 convolutions on NCHW
// (winograd_plan.h has the math, the policy and the weights' layout). Per work item (image,
// block of tile rows, group of output-channel panels):
//  - tiles: the output map in m x m tiles, TW per tile row; a block of R tile rows is
//    R * TW "slots", tile (row tr, column tc) in slot tr * TW + tc, so that L consecutive
//    tiles of one tile row are one vector;
//  - input transform V = B^T d B, per channel and per vector of L tiles of a tile row: each
//    input row's alpha columns per tile come from one load of m * L consecutive floats (plus
//    two more) and a shuffle (tile tc starts at column m * tc), the row transform and then the
//    column transform are plain vector adds (and a few multiplies for F(4x4)); the alpha^2
//    vectors go to V[pos][channel][slot] on the stack (all channels at once where they fit
//    the budget of winogradBlocks, else one block of channels at a time);
//  - packed slots (at most half a vector of tiles per tile row: winogradPackedSlots): a vector is
//    L consecutive slots instead, across tile rows, gathered per input row by a shuffle of a
//    few masked loads of each tile row it touches; the output transform scatters its pixels
//    back per tile row the same way. SqueezeNet's 13x13 expand3x3 (4 tiles per row: 4 of 16
//    lanes did work) with stored weights: features.9/10 142-160 -> 111-135 us, features.11/12
//    231-276 -> 186-231 us (sums of per-workgroup CPU minimums, 1 thread, Zen 5, interleaved,
//    a loaded machine); ResNet-18 (one binary, packing switched off and on, 4 rounds)
//    layer2 (28x28, 7 tiles) 555-613 -> 520-584 us, layer3 (14x14, 4 tiles) 688-793 ->
//    595-674 us, layer4 (7x7 F(2x2), 4 tiles) 1044-1192 -> 988-1129 us. AVX2 (x86_64-v3
//    artifacts on Zen 5, 4 of 8 lanes did work; 3 rounds): SqueezeNet 13x13 features.9/10
//    197-206 -> 155-191 us, features.11/12 328-347 -> 313-352 us, ResNet-18 layer3
//    1029-1049 -> 947-1021 us, layer4 1598-1634 -> 1523-1638 us;
//  - per position pos, M[pos] = U[pos] x V[pos] on the GEMM microkernel
//    (emit_gemm_microkernel.h): A = the U panel's scalars broadcast, B = V's slot vectors;
//    the products of one panel of output channels go to the M buffer (with several channel
//    blocks, those of every panel of the item, as partial sums between the blocks);
//  - weights transformed here (WinogradPanels): per panel, runs of winogradTransformChannels
//    channels at a time, U' = H g H^T of the run's taps into a stack buffer of 48 KB at
//    most (vectors of consecutive (channel, row) pairs: a few adds each), then that run's
//    products (partial sums in the M buffer); V carries the factors d_i d_j instead (on
//    AVX-512, U = G g G^T and V unscaled: transformWithG below);
//  - output transform Y = A^T M A per vector of tiles, plus the bias; each output row's m
//    vectors are interleaved into m * L consecutive pixels, then the activation and the fused
//    epilogue chain run on them before their only (masked at the map's edge) store.
#include <algorithm>
#include <cassert>

#include "emit_gemm_microkernel.h"
#include "emitters.h"
#include "fused_epilogue.h"
#include "kernel_builder.h"
#include "kiln/codegen/winograd_plan.h"
#include "kiln/codegen/work_queue.h"

namespace kiln::codegen::detail {
namespace {

constexpr int64_t kMFloats = 32768;  // M buffer with several channel blocks: 128 KB at most
// Shared panels (work queues): a thread joins a task that others have started only while at
// least this many of its panels are left, else the input transform it would add costs more
// than its share of the panels saves (ResNet-18: a row block's transform costs 0.4-1.7 times
// a panel's products).
constexpr int64_t kJoinPanels = 3;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

uint32_t emitConvWinograd(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  const WinogradPlan plan = winogradPlan(d, {kb.target().vectorLanes, kb.target().vectorRegisters});
  const bool inKernel = d.weightLayout == ConvWeights::WinogradPanels;
  assert(plan.applies() && (d.weightLayout == ConvWeights::Winograd || inKernel) &&
         d.weightPanel == plan.tile.mr && "Winograd weights need this kernel");
  // The tile size the weights were transformed for (the packer's choice).
  const WinogradMatrices wm = winogradMatrices(d.winogradTile);
  llvm::IRBuilder<>& b = kb.b();
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  const std::vector<int64_t>& ys = d.output.shape;
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  const int64_t OC = ys[1], OH = ys[2], OW = ys[3], OHW = OH * OW;
  const int64_t padTop = d.pads[0], padLeft = d.pads[1];
  const int64_t m = wm.m, A = wm.alpha, P = A * A;
  const unsigned L = unsigned(plan.tile.lanes);
  const int64_t MR = plan.tile.mr, NRV = plan.tile.nrVectors, NR = plan.tile.nr();
  const bool hasBias = d.inputs.size() - d.epilogue.inputCount > 2;
  const unsigned out = kb.outputBinding();

  // Tiles, blocks of tile rows and channel blocks (winograd_plan.h).
  const WinogradBlocks blocks = winogradBlocks(d, plan.tile, m);
  const int64_t TW = blocks.tileCols, rowVectors = blocks.rowVectors;
  const bool packed = winogradPackedSlots(blocks, L);
  // Block b covers tile rows [b*T/B, (b+1)*T/B): shortRows or shortRows + 1 rows (at most
  // blocks.blockRows, which the buffers are sized for), so
  // contiguous runs of blocks, as the pool's threads take them, get even shares of the map.
  const int64_t rowBlocks = blocks.rowBlocks, T = blocks.tileRows;
  const int64_t shortRows = T / rowBlocks, longRows = shortRows + (T % rowBlocks != 0);
  assert(longRows <= blocks.blockRows);
  const int64_t slotsBuf = blocks.slots, blockC = blocks.blockC;
  const int64_t fullCBlocks = C / blockC, lastC = C % blockC;
  // V's positions one cache line more than a block apart: the input transform stores to
  // every position at once, and strides of a multiple of 4 KB would put all of them in the
  // same L1 set. A channel's last tile row may write up to L - 1 slots past the channel's
  // row; the next channel's transform overwrites them, the last channel's land in this gap.
  const int64_t vPosition = blockC * slotsBuf + std::max<int64_t>(16, L);
  const bool oneCBlock = fullCBlocks == 1 && lastC == 0;
  // Output-channel panels in groups: enough work items, and with several channel blocks an M
  // buffer (every panel of the group) within kMFloats.
  const int64_t fullPanels = OC / MR, remRows = OC % MR, panels = fullPanels + (remRows > 0);
  const int64_t storedFloats = OC * P * C;  // the stored transform's size (binding 1)
  // Shared panels (work_queue.h, winogradSharedTasks): one task per (image, block of tile
  // rows), perTask workgroups each, every panel of the task claimed from its queue. Else
  // output-channel groups fixed per work item.
  const int64_t tasks = d.workQueues;
  const bool shared = tasks > 0;
  // Split for T threads (KernelDesc::threadSplit): T workgroups of consecutive row blocks.
  const int64_t split = d.threadSplit;
  assert((split == 0 || (!shared && N == 1)) && "a thread split has no work queues");
  assert((!shared || (oneCBlock && tasks == N * rowBlocks)) && "work queues need one channel block");
  const int64_t perTask = shared ? workgroupsPerTask(tasks) : 1;
  int64_t ocGroups = shared || split > 0
                         ? 1
                         : std::clamp<int64_t>(ceilDiv(kWinogradMinItems, N * rowBlocks), 1, panels);
  if (!oneCBlock) ocGroups = std::max(ocGroups, ceilDiv(panels * P * MR * slotsBuf, kMFloats));
  ocGroups = std::min(ocGroups, panels);
  // Group g takes panels [g * panels / G, (g + 1) * panels / G): sizes differ by one at most
  // and the last group, which holds the short remainder panel, is a large one (SqueezeNet's
  // expand3x3 at 27x27, 22 panels for 128 channels in 4 groups: 5, 6, 5, 6 panels = 30, 36,
  // 30, 32 rows; groups of 6 gave 36, 36, 36, 20).
  const int64_t panelsPerGroup = ceilDiv(panels, ocGroups);  // the largest group
  const int64_t mPanels = oneCBlock ? 1 : panelsPerGroup;  // M buffer panels
  const int64_t items = shared ? tasks * perTask : N * ocGroups * rowBlocks;
  // Weights transformed here: runs of kc channels, a run's U' at uBuf[pos * uStride + c *
  // rows + row].
  const int64_t kc = winogradTransformChannels(m, MR, blockC);
  const int64_t uStride = ceilDiv(kc * MR, 16) * 16;

  llvm::Type* floatTy = b.getFloatTy();
  auto* vecTy = llvm::FixedVectorType::get(floatTy, L);
  auto* wideTy = llvm::FixedVectorType::get(floatTy, unsigned(m * L));
  auto* vBuf = llvm::cast<llvm::AllocaInst>(
      kb.local(llvm::ArrayType::get(floatTy, uint64_t(P * vPosition)), "winograd.v"));
  vBuf->setAlignment(llvm::Align(64));
  auto* mBuf = llvm::cast<llvm::AllocaInst>(kb.local(
      llvm::ArrayType::get(floatTy, uint64_t(mPanels * P * MR * slotsBuf + L)), "winograd.m"));
  mBuf->setAlignment(llvm::Align(64));
  llvm::AllocaInst* uBuf = nullptr;
  if (inKernel) {
    uBuf = llvm::cast<llvm::AllocaInst>(
        kb.local(llvm::ArrayType::get(floatTy, uint64_t(P * uStride)), "winograd.u"));
    uBuf->setAlignment(llvm::Align(64));
  }
  Accumulators acc = makeAccumulators(kb, {MR, NRV, L});
  FusedEpilogue epilogue(kb);
  const bool chain = !d.epilogue.chain.nodes.empty();
  llvm::Value* zero = llvm::ConstantFP::get(vecTy, 0.0);
  auto splatF = [&](double v) { return llvm::ConstantFP::get(vecTy, v); };
  auto vecAt = [&](llvm::Value* buffer, llvm::Value* at) {
    return b.CreateGEP(floatTy, buffer, at);
  };

  // sum_i coeffs[i * stride] * xs[i] (the transforms' rows), skipping zero coefficients.
  auto combine = [&](const double* coeffs, int64_t stride,
                     const std::vector<llvm::Value*>& terms) -> llvm::Value* {
    llvm::Value* sum = nullptr;
    for (size_t i = 0; i < terms.size(); ++i) {
      const double c = coeffs[int64_t(i) * stride];
      if (c == 0) continue;
      llvm::Value* x = terms[i];
      if (!sum) {
        sum = c == 1 ? x : c == -1 ? b.CreateFNeg(x) : b.CreateFMul(x, splatF(c));
      } else if (c == 1) {
        sum = b.CreateFAdd(sum, x);
      } else if (c == -1) {
        sum = b.CreateFSub(sum, x);
      } else {
        sum = b.CreateFAdd(sum, b.CreateFMul(x, splatF(c)));
      }
    }
    return sum ? sum : zero;
  };
  // The weights transformed here (WinogradPanels): on AVX2 and narrower with H (G = D H, small
  // integers: adds only) and D moved onto V; on AVX-512 with G itself, one fused multiply-add
  // per term, as the compile-time transform does in double: the same speed there, and its
  // rounding stays closer to the stored transform's (with H and D, Inception-v3's e2e case on
  // an 80x80 input, whose 16x16 80 -> 192 layer the kernel transforms on AVX-512, missed its
  // tolerance on one logit, 0.00484 against 0.00455; with G it passes). AVX2 keeps H: G took
  // 2-4% more time on ResNet-18's layer3 there (x86_64-v3 on Zen 5).
  const bool transformWithG = L >= 16;
  const std::vector<double>& weightRows = transformWithG ? wm.g : wm.h;
  // H x (x: 3 vectors) (or G x), its alpha rows: a pair of rows (e0, o, e2), (e0, -o, e2) shares its
  // even part, e + o and e - o.
  auto applyH = [&](const std::vector<llvm::Value*>& x) {
    std::vector<llvm::Value*> y;
    for (int64_t r = 0; r < A; ++r) {
      const double* h = &weightRows[size_t(r * 3)];
      const double* next = r + 1 < A ? &weightRows[size_t((r + 1) * 3)] : nullptr;
      if (next && h[1] != 0 && next[0] == h[0] && next[1] == -h[1] && next[2] == h[2]) {
        const double even[3] = {h[0], 0, h[2]}, odd[3] = {0, h[1], 0};
        llvm::Value* e = combine(even, 1, x);
        llvm::Value* o = combine(odd, 1, x);
        y.push_back(b.CreateFAdd(e, o));
        y.push_back(b.CreateFSub(e, o));
        ++r;
      } else {
        y.push_back(combine(h, 1, x));
      }
    }
    return y;
  };
  // The activation field on a vector (Sigmoid and Tanh too: math_approx.h takes vectors).
  auto activate = [&](llvm::Value* v) { return kb.applyEpilogue(d.epilogue, v); };
  // Constant lane masks: lane e of `width` lanes valid if column first + e is in [lo, hi)
  // and e < count (nullptr: every lane valid).
  auto columnMask = [&](int64_t width, int64_t first, int64_t lo, int64_t hi,
                        int64_t count) -> llvm::Value* {
    std::vector<llvm::Constant*> on;
    bool all = true;
    for (int64_t e = 0; e < width; ++e) {
      bool valid = e < count && first + e >= lo && first + e < hi;
      all = all && valid;
      on.push_back(b.getInt1(valid));
    }
    return all ? nullptr : llvm::ConstantVector::get(on);
  };
  auto maskedLoad = [&](llvm::Type* type, unsigned binding, llvm::Value* at,
                        llvm::Value* mask) -> llvm::Value* {
    if (!mask) return b.CreateAlignedLoad(type, kb.elementAddress(binding, at), llvm::Align(4));
    return b.CreateMaskedLoad(type, kb.elementAddress(binding, at), llvm::Align(4), mask,
                              llvm::Constant::getNullValue(type));
  };
  // Shuffle picking lanes m * j + s (j < L) of two concatenated wide vectors.
  auto pickColumn = [&](int64_t s) {
    std::vector<int> lanes;
    for (int64_t j = 0; j < int64_t(L); ++j) lanes.push_back(int(m * j + s));
    return lanes;
  };
  // Output row interleave: pixel e = m * j + q of m * L comes from lane j of vector q.
  std::vector<int> interleave;
  for (int64_t e = 0; e < m * int64_t(L); ++e)
    interleave.push_back(int((e % m) * L + e / m));
  std::vector<int> concat2, concat4;
  for (int64_t e = 0; e < 2 * int64_t(L); ++e) concat2.push_back(int(e));
  for (int64_t e = 0; e < 4 * int64_t(L); ++e) concat4.push_back(int(e));

  kb.forWorkgroupShare(items, [&](llvm::Value* item) {
    // Shared: item = (task, helper), the task's queue, and the end it claims from (the pool
    // runs its first items on one thread and its last on another: they start at both ends).
    llvm::Value *n, *ocGroup, *rowBlock, *queue = nullptr, *fromTop = nullptr;
    if (shared) {
      std::vector<llvm::Value*> co = kb.decompose(item, {N, rowBlocks, perTask});
      n = co[0], rowBlock = co[1], ocGroup = kb.index(0);
      queue = kb.workQueue(b.CreateUDiv(item, kb.index(perTask)));
      fromTop = b.CreateICmpNE(b.CreateAnd(co[2], kb.index(1)), kb.index(0));
    } else if (split > 0) {  // row blocks outer: a workgroup's share is a run of rows
      std::vector<llvm::Value*> co = kb.decompose(item, {N, rowBlocks, ocGroups});
      n = co[0], rowBlock = co[1], ocGroup = co[2];
    } else {
      std::vector<llvm::Value*> co = kb.decompose(item, {N, ocGroups, rowBlocks});
      n = co[0], ocGroup = co[1], rowBlock = co[2];
    }
    llvm::Value* panelLo =
        b.CreateUDiv(b.CreateMul(ocGroup, kb.index(panels)), kb.index(ocGroups));
    llvm::Value* panelHi = b.CreateUDiv(
        b.CreateMul(b.CreateAdd(ocGroup, kb.index(1)), kb.index(panels)), kb.index(ocGroups));
    llvm::Value* fullHi = kb.minValue(panelHi, kb.index(fullPanels));
    llvm::Value* hasRemainder = b.CreateICmpEQ(panelHi, kb.index(panels));
    llvm::Value* outImage = b.CreateMul(n, kb.index(OC * OHW));
    llvm::Value* tr0 = b.CreateUDiv(b.CreateMul(rowBlock, kb.index(T)), kb.index(rowBlocks));
    llvm::Value* tr1 = b.CreateUDiv(b.CreateMul(b.CreateAdd(rowBlock, kb.index(1)), kb.index(T)),
                                    kb.index(rowBlocks));

    // One block of `rows` tile rows.
    auto block = [&](int64_t rows) {
      const int64_t slots = rows * TW, fullSlotTiles = slots / NR, tailSlots = slots % NR;

      // The column transform of a vector of tiles' row transforms h[r][j] (B^T h B), stored at
      // V[pos][.][rowSlot]; scaled to V' = D V D beside the weights' U' where the kernel
      // transforms the weights by the H/D factoring (winograd_plan.h).
      auto storeColumnTransform = [&](const std::vector<std::vector<llvm::Value*>>& h,
                                      llvm::Value* rowSlot) {
        for (int64_t i = 0; i < A; ++i) {
          for (int64_t j = 0; j < A; ++j) {
            std::vector<llvm::Value*> column;
            for (int64_t r = 0; r < A; ++r) column.push_back(h[r][j]);
            llvm::Value* value = combine(&wm.bt[i * A], 1, column);
            const double scale =
                inKernel && !transformWithG ? wm.d[size_t(i)] * wm.d[size_t(j)] : 1;
            if (scale != 1) value = b.CreateFMul(value, splatF(scale));
            llvm::Value* at = b.CreateAdd(rowSlot, kb.index((i * A + j) * vPosition));
            b.CreateAlignedStore(value, vecAt(vBuf, at), llvm::Align(4));
          }
        }
      };

      // The input rows this block reads, [rowLo, rowHi) of every channel plane: prefetched a
      // channel ahead by the input transforms. A plane's rows are a short contiguous run (a few
      // KB), too short for the hardware's stream prefetch to pay off before the next plane's;
      // and with two threads the rows that the other core wrote (a channel-split convolution
      // before this one) arrive at a fifth of the rate of its own.
      llvm::Value* rowLo = kb.maxValue(
          b.CreateSub(b.CreateMul(tr0, kb.index(m)), kb.index(padTop)), kb.index(0));
      llvm::Value* rowHi = kb.minValue(
          b.CreateSub(b.CreateAdd(b.CreateMul(tr1, kb.index(m)), kb.index(A - m)),
                      kb.index(padTop)),
          kb.index(H));
      // In row groups, only the block's own rows: the halo rows lie in the groups beside it,
      // which the threads working on them write (row_groups.h).
      const bool grouped = !d.inputs[0].rowGroups.empty();
      llvm::Value* runLo =
          grouped ? kb.minValue(b.CreateMul(tr0, kb.index(m)), kb.index(H - 1)) : rowLo;
      llvm::Value* runHi =
          grouped ? kb.minValue(b.CreateMul(tr1, kb.index(m)), kb.index(H)) : rowHi;
      llvm::Value* runLines = b.CreateUDiv(
          b.CreateAdd(b.CreateMul(b.CreateSub(runHi, runLo), kb.index(W)), kb.index(15)),
          kb.index(16));
      // Channel c, once the next channel's rows are on their way (in row groups, the rows
      // of rowLo's group and on).
      auto enterChannel = [&](llvm::Value* c) {
        llvm::Value* next = kb.minValue(b.CreateAdd(c, kb.index(1)), kb.index(C - 1));
        llvm::Value* start = kb.rowAddress(d.inputs[0], n, next, runLo);
        kb.forRange(
            kb.index(0), runLines,
            [&](llvm::Value* line) {
              llvm::Value* address =
                  kb.elementAddress(0, b.CreateAdd(start, b.CreateMul(line, kb.index(16))));
              b.CreateIntrinsic(llvm::Intrinsic::prefetch, {address->getType()},
                                {address, b.getInt32(0), b.getInt32(3), b.getInt32(1)});
            },
            /*unroll=*/false);
        return c;
      };

      // V for channels [c0, c0 + count): V[pos][channel - c0][slot].
      auto inputTransform = [&](llvm::Value* c0, int64_t count) {
        kb.forRange(
            kb.index(0), kb.index(count),
            [&](llvm::Value* cl) {
              llvm::Value* channel = enterChannel(b.CreateAdd(c0, cl));
              kb.forRange(
                  kb.index(0), kb.index(rows),
                  [&](llvm::Value* trl) {
                    llvm::Value* ihTop = b.CreateSub(
                        b.CreateMul(b.CreateAdd(tr0, trl), kb.index(m)), kb.index(padTop));
                    for (int64_t v = 0; v < rowVectors; ++v) {
                      const int64_t col0 = v * L * m - padLeft;  // tile v*L's first column
                      llvm::Value* mask1 = columnMask(m * L, col0, 0, W, m * L);
                      llvm::Value* mask2 = columnMask(m * L, col0 + m * L, 0, W, A - m);
                      // Row transform of each of the alpha input rows: h[r][j].
                      std::vector<std::vector<llvm::Value*>> h(static_cast<size_t>(A));
                      for (int64_t r = 0; r < A; ++r) {
                        llvm::Value* ih = b.CreateAdd(ihTop, kb.index(r));
                        llvm::Value* inside = b.CreateAnd(b.CreateICmpSGE(ih, kb.index(0)),
                                                          b.CreateICmpSLT(ih, kb.index(H)));
                        llvm::Value* clamped =
                            b.CreateSelect(inside, ih, kb.index(0));  // a readable row
                        llvm::Value* rowAt = kb.rowAddress(d.inputs[0], n, channel, clamped);
                        llvm::Value* w1 =
                            maskedLoad(wideTy, 0, b.CreateAdd(rowAt, kb.index(col0)), mask1);
                        llvm::Value* w2 = maskedLoad(
                            wideTy, 0, b.CreateAdd(rowAt, kb.index(col0 + m * L)), mask2);
                        llvm::Value* wideZero = llvm::Constant::getNullValue(wideTy);
                        w1 = b.CreateSelect(inside, w1, wideZero);
                        w2 = b.CreateSelect(inside, w2, wideZero);
                        std::vector<llvm::Value*> x;
                        for (int64_t s = 0; s < A; ++s)
                          x.push_back(b.CreateShuffleVector(w1, w2, pickColumn(s)));
                        for (int64_t j = 0; j < A; ++j)
                          h[r].push_back(combine(&wm.bt[j * A], 1, x));
                      }
                      // Column transform, stored at V[pos][cl][slot].
                      llvm::Value* slot = b.CreateAdd(b.CreateMul(trl, kb.index(TW)),
                                                      kb.index(v * L));
                      storeColumnTransform(
                          h, b.CreateAdd(b.CreateMul(cl, kb.index(slotsBuf)), slot));
                    }
                  },
                  /*unroll=*/false);
            },
            /*unroll=*/false);
      };

      // Output channel `row` of `panel` (M buffer panel `mp`): its output plane, its bias as a
      // vector, its row of the epilogue's chain and its row of M.
      struct OutputRow {
        llvm::Value* oc;
        llvm::Value* plane;
        llvm::Value* bias;
        llvm::Value* mRow;
        FusedEpilogue::Row chain;
      };
      auto outputRow = [&](llvm::Value* panel, llvm::Value* mp, llvm::Value* row) {
        OutputRow o;
        llvm::Value* oc = b.CreateAdd(b.CreateMul(panel, kb.index(MR)), row);
        o.oc = oc;
        o.plane = b.CreateAdd(outImage, b.CreateMul(oc, kb.index(OHW)));
        o.bias = hasBias ? b.CreateVectorSplat(L, kb.load(2, ElemType::F32, oc)) : nullptr;
        if (chain) o.chain = epilogue.row(o.plane);
        o.mRow = b.CreateAdd(b.CreateMul(mp, kb.index(P * MR * slotsBuf)),
                             b.CreateMul(row, kb.index(slotsBuf)));
        return o;
      };

      // Y = A^T M A for output channel rows [0, panelRows) of `panel` (M buffer panel `mp`),
      // plus bias, activation and chain, stored.
      auto outputTransform = [&](llvm::Value* panel, int64_t panelRows, llvm::Value* mp) {
        kb.forRange(
            kb.index(0), kb.index(panelRows),
            [&](llvm::Value* row) {
              const OutputRow o = outputRow(panel, mp, row);
              llvm::Value *oc = o.oc, *bias = o.bias, *mRow = o.mRow;
              const FusedEpilogue::Row chainRow = o.chain;
              kb.forRange(
                  kb.index(0), kb.index(rows),
                  [&](llvm::Value* trl) {
                    llvm::Value* ohTop = b.CreateMul(b.CreateAdd(tr0, trl), kb.index(m));
                    for (int64_t v = 0; v < rowVectors; ++v) {
                      llvm::Value* slot = b.CreateAdd(
                          mRow, b.CreateAdd(b.CreateMul(trl, kb.index(TW)), kb.index(v * L)));
                      // t[a][j] = sum_b M[a][b] AT[j][b]
                      std::vector<std::vector<llvm::Value*>> t(static_cast<size_t>(A));
                      for (int64_t a = 0; a < A; ++a) {
                        std::vector<llvm::Value*> mv;
                        for (int64_t bb = 0; bb < A; ++bb) {
                          llvm::Value* at =
                              b.CreateAdd(slot, kb.index((a * A + bb) * MR * slotsBuf));
                          mv.push_back(b.CreateAlignedLoad(vecTy, vecAt(mBuf, at), llvm::Align(4)));
                        }
                        for (int64_t j = 0; j < m; ++j) t[a].push_back(combine(&wm.at[j * A], 1, mv));
                      }
                      for (int64_t i = 0; i < m; ++i) {
                        std::vector<llvm::Value*> y;
                        for (int64_t j = 0; j < m; ++j) {
                          std::vector<llvm::Value*> column;
                          for (int64_t a = 0; a < A; ++a) column.push_back(t[a][j]);
                          llvm::Value* value = combine(&wm.at[i * A], 1, column);
                          y.push_back(bias ? b.CreateFAdd(value, bias) : value);
                        }
                        llvm::Value* wide =
                            m == 2 ? b.CreateShuffleVector(y[0], y[1], interleave)
                                   : b.CreateShuffleVector(
                                         b.CreateShuffleVector(y[0], y[1], concat2),
                                         b.CreateShuffleVector(y[2], y[3], concat2), interleave);
                        llvm::Value* oh = b.CreateAdd(ohTop, kb.index(i));
                        auto store = [&] {
                          llvm::Value* rowStart = b.CreateMul(oh, kb.index(OW));
                          llvm::Value* outRow = kb.rowAddress(d.output, n, oc, oh);
                          for (int64_t q = 0; q < m; ++q) {
                            const int64_t col = v * L * m + q * L;
                            if (col >= OW) break;
                            std::vector<int> part;
                            for (int64_t e = 0; e < int64_t(L); ++e) part.push_back(int(q * L + e));
                            llvm::Value* value = activate(b.CreateShuffleVector(wide, part));
                            llvm::Value* mask = columnMask(L, col, 0, OW, L);
                            llvm::Value* column = b.CreateAdd(rowStart, kb.index(col));
                            llvm::Value* at = b.CreateAdd(outRow, kb.index(col));
                            const FusedEpilogue::Position position{n, oc, oh, kb.index(col)};
                            if (chain)
                              value = epilogue.applyVector(value, chainRow, column, mask, &position);
                            if (mask) {
                              b.CreateMaskedStore(value, kb.elementAddress(out, at),
                                                  llvm::Align(4), mask);
                            } else {
                              b.CreateAlignedStore(value, kb.elementAddress(out, at),
                                                   llvm::Align(4));
                            }
                          }
                        };
                        if (OH % m == 0) {
                          store();
                        } else {
                          kb.ifThen(b.CreateICmpSLT(oh, kb.index(OH)), store);
                        }
                      }
                    }
                  },
                  /*unroll=*/false);
            },
            /*unroll=*/false);
      };

      // Packed slots (winogradPackedSlots): the block's vector vi holds slots [vi * L,
      // vi * L + L), lane e the tile (trl, tc) of slot vi * L + e, so one vector spans
      // several tile rows: its pieces, one per tile row, with their lanes [e0, e1) and first
      // tile column tc0.
      struct Piece {
        int64_t trl, e0, e1, tc0;
      };
      const int64_t packedVectors = ceilDiv(slots, int64_t(L));
      auto piecesOf = [&](int64_t vi) {
        std::vector<Piece> pieces;
        const int64_t s0 = vi * L, s1 = std::min(s0 + int64_t(L), slots);
        for (int64_t s = s0; s < s1;) {
          const int64_t trl = s / TW, end = std::min(s1, (trl + 1) * TW);
          pieces.push_back({trl, s - s0, end - s0, s - trl * TW});
          s = end;
        }
        return pieces;
      };

      // inputTransform with packed slots: per vector and input row, each piece's columns
      // come from a few (masked) loads of its tile row, and every one of the alpha columns
      // of the vector's tiles is one shuffle of those loads (and a zero vector: padding).
      auto inputTransformPacked = [&](llvm::Value* c0, int64_t count) {
        kb.forRange(
            kb.index(0), kb.index(count),
            [&](llvm::Value* cl) {
              llvm::Value* channel = enterChannel(b.CreateAdd(c0, cl));
              for (int64_t vi = 0; vi < packedVectors; ++vi) {
                const std::vector<Piece> pieces = piecesOf(vi);
                // Map columns [lo, lo + width) that each piece's tiles read.
                std::vector<int64_t> lo, width;
                for (const Piece& p : pieces) {
                  const int64_t first = m * p.tc0 - padLeft;
                  const int64_t end = m * (p.tc0 + p.e1 - p.e0 - 1) + A - padLeft;
                  lo.push_back(std::max<int64_t>(0, first));
                  width.push_back(std::max<int64_t>(0, std::min(W, end) - lo.back()));
                }
                std::vector<std::vector<llvm::Value*>> h(static_cast<size_t>(A));
                for (int64_t r = 0; r < A; ++r) {
                  std::vector<llvm::Value*> sources;
                  std::vector<int64_t> base;  // each piece's first lane in the joined sources
                  for (size_t k = 0; k < pieces.size(); ++k) {
                    base.push_back(int64_t(sources.size()) * L);
                    if (width[k] == 0) continue;
                    llvm::Value* ih = b.CreateSub(
                        b.CreateAdd(b.CreateMul(b.CreateAdd(tr0, kb.index(pieces[k].trl)),
                                                kb.index(m)),
                                    kb.index(r)),
                        kb.index(padTop));
                    llvm::Value* inside = b.CreateAnd(b.CreateICmpSGE(ih, kb.index(0)),
                                                      b.CreateICmpSLT(ih, kb.index(H)));
                    llvm::Value* clamped = b.CreateSelect(inside, ih, kb.index(0));
                    llvm::Value* rowAt = kb.rowAddress(d.inputs[0], n, channel, clamped);
                    for (int64_t q = 0; q * L < width[k]; ++q) {
                      llvm::Value* mask = columnMask(L, 0, 0, width[k] - q * L, L);
                      llvm::Value* part =
                          maskedLoad(vecTy, 0, b.CreateAdd(rowAt, kb.index(lo[k] + q * L)), mask);
                      sources.push_back(b.CreateSelect(inside, part, zero));
                    }
                  }
                  const int zeroLane = int(sources.size() * L);
                  sources.push_back(zero);
                  llvm::Value* joined = kb.concatVectors(sources);
                  std::vector<llvm::Value*> x;
                  for (int64_t s = 0; s < A; ++s) {
                    std::vector<int> pick(L, zeroLane);
                    for (size_t k = 0; k < pieces.size(); ++k)
                      for (int64_t e = pieces[k].e0; e < pieces[k].e1; ++e) {
                        const int64_t col = m * (pieces[k].tc0 + e - pieces[k].e0) + s - padLeft;
                        if (col >= lo[k] && col < lo[k] + width[k])
                          pick[size_t(e)] = int(base[k] + col - lo[k]);
                      }
                    x.push_back(b.CreateShuffleVector(joined, pick));
                  }
                  for (int64_t j = 0; j < A; ++j) h[r].push_back(combine(&wm.bt[j * A], 1, x));
                }
                // Column transform, stored at V[pos][cl][vi * L].
                storeColumnTransform(
                    h, b.CreateAdd(b.CreateMul(cl, kb.index(slotsBuf)), kb.index(vi * L)));
              }
            },
            /*unroll=*/false);
      };

      // outputTransform with packed slots: per vector, Y of its tiles; per piece and output
      // row, the piece's m * (e1 - e0) pixels are shuffles of that row's m vectors.
      auto outputTransformPacked = [&](llvm::Value* panel, int64_t panelRows, llvm::Value* mp) {
        kb.forRange(
            kb.index(0), kb.index(panelRows),
            [&](llvm::Value* row) {
              const OutputRow o = outputRow(panel, mp, row);
              llvm::Value *oc = o.oc, *bias = o.bias, *mRow = o.mRow;
              const FusedEpilogue::Row chainRow = o.chain;
              for (int64_t vi = 0; vi < packedVectors; ++vi) {
                llvm::Value* slot = b.CreateAdd(mRow, kb.index(vi * L));
                std::vector<std::vector<llvm::Value*>> t(static_cast<size_t>(A));
                for (int64_t a = 0; a < A; ++a) {
                  std::vector<llvm::Value*> mv;
                  for (int64_t bb = 0; bb < A; ++bb) {
                    llvm::Value* at = b.CreateAdd(slot, kb.index((a * A + bb) * MR * slotsBuf));
                    mv.push_back(b.CreateAlignedLoad(vecTy, vecAt(mBuf, at), llvm::Align(4)));
                  }
                  for (int64_t j = 0; j < m; ++j) t[a].push_back(combine(&wm.at[j * A], 1, mv));
                }
                const std::vector<Piece> pieces = piecesOf(vi);
                for (int64_t i = 0; i < m; ++i) {
                  std::vector<llvm::Value*> y;
                  for (int64_t j = 0; j < m; ++j) {
                    std::vector<llvm::Value*> column;
                    for (int64_t a = 0; a < A; ++a) column.push_back(t[a][j]);
                    llvm::Value* value = combine(&wm.at[i * A], 1, column);
                    y.push_back(bias ? b.CreateFAdd(value, bias) : value);
                  }
                  llvm::Value* joined = kb.concatVectors(y);  // pixel j of tile e: j * L + e
                  for (const Piece& p : pieces) {
                    llvm::Value* oh = b.CreateAdd(
                        b.CreateMul(b.CreateAdd(tr0, kb.index(p.trl)), kb.index(m)), kb.index(i));
                    const int64_t col0 = m * p.tc0, pixels = m * (p.e1 - p.e0);
                    auto store = [&] {
                      llvm::Value* rowStart = b.CreateMul(oh, kb.index(OW));
                      llvm::Value* outRow = kb.rowAddress(d.output, n, oc, oh);
                      for (int64_t q = 0; q * L < pixels && col0 + q * L < OW; ++q) {
                        std::vector<int> pick;
                        for (int64_t e = 0; e < int64_t(L); ++e) {
                          const int64_t px = std::min(q * L + e, pixels - 1);
                          pick.push_back(int((px % m) * L + p.e0 + px / m));
                        }
                        llvm::Value* value = activate(b.CreateShuffleVector(joined, pick));
                        llvm::Value* mask = columnMask(L, col0 + q * L, 0, OW, pixels - q * L);
                        llvm::Value* column = b.CreateAdd(rowStart, kb.index(col0 + q * L));
                        llvm::Value* at = b.CreateAdd(outRow, kb.index(col0 + q * L));
                        const FusedEpilogue::Position position{n, oc, oh, kb.index(col0 + q * L)};
                        if (chain)
                          value = epilogue.applyVector(value, chainRow, column, mask, &position);
                        if (mask) {
                          b.CreateMaskedStore(value, kb.elementAddress(out, at), llvm::Align(4),
                                              mask);
                        } else {
                          b.CreateAlignedStore(value, kb.elementAddress(out, at), llvm::Align(4));
                        }
                      }
                    };
                    if (OH % m == 0) {
                      store();
                    } else {
                      kb.ifThen(b.CreateICmpSLT(oh, kb.index(OH)), store);
                    }
                  }
                }
              }
            },
            /*unroll=*/false);
      };

      // U' = H g H^T of `panel`'s rows x the run of channels [cAbs, cAbs + count) into uBuf,
      // from the run's taps ([tap][c][rows], winograd_plan.h): elementwise over vectors of
      // (channel, row) pairs.
      auto transformWeights = [&](llvm::Value* panel, int64_t panelRows, llvm::Value* cAbs,
                                  int64_t count) {
        const int64_t pairs = count * panelRows, vectors = pairs / L, tail = pairs % L;
        llvm::Value* wBase = b.CreateAdd(b.CreateMul(panel, kb.index(MR * 9 * C)),
                                         b.CreateMul(cAbs, kb.index(9 * panelRows)));
        auto transformVector = [&](llvm::Value* j, llvm::Value* mask) {
          std::vector<llvm::Value*> g;
          for (int64_t t = 0; t < 9; ++t) {
            llvm::Value* at = b.CreateAdd(wBase, b.CreateAdd(kb.index(t * pairs), j));
            g.push_back(maskedLoad(vecTy, 1, at, mask));
          }
          std::vector<std::vector<llvm::Value*>> cols;  // cols[kw][r] = (H g)[r][kw]
          for (int64_t kw = 0; kw < 3; ++kw) cols.push_back(applyH({g[kw], g[3 + kw], g[6 + kw]}));
          for (int64_t r = 0; r < A; ++r) {
            std::vector<llvm::Value*> u =
                applyH({cols[0][size_t(r)], cols[1][size_t(r)], cols[2][size_t(r)]});
            for (int64_t s2 = 0; s2 < A; ++s2) {
              llvm::Value* at = b.CreateAdd(kb.index((r * A + s2) * uStride), j);
              b.CreateAlignedStore(u[size_t(s2)], vecAt(uBuf, at), llvm::Align(4));
            }
          }
        };
        kb.forRange(
            kb.index(0), kb.index(vectors),
            [&](llvm::Value* v) { transformVector(b.CreateMul(v, kb.index(L)), nullptr); },
            /*unroll=*/false);
        if (tail > 0) transformVector(kb.index(vectors * L), columnMask(L, 0, 0, tail, L));
      };

      // Channels [c0, c0 + count): V, then per panel of the group and position the products
      // (from zero if `first`, else from the M buffer), then the output if `last`.
      auto cBlock = [&](llvm::Value* c0, int64_t count, llvm::Value* first, llvm::Value* last) {
        if (packed) {
          inputTransformPacked(c0, count);
        } else {
          inputTransform(c0, count);
        }
        // `nextPanel`: the panel this thread most likely takes next, whose weights the last
        // position prefetches (null: panel + 1, whose weights follow this panel's).
        auto panelWork = [&](llvm::Value* panel, int64_t panelRows, llvm::Value* nextPanel) {
          llvm::Value* mp = oneCBlock ? kb.index(0) : b.CreateSub(panel, panelLo);
          // The taps of the next run, which follow this one's (this panel's next channels,
          // after the last run the next panel's first), a share of their cache lines per
          // position: the transform's first touch would otherwise wait on memory with nothing
          // to overlap (ResNet-18 layer4: 9.4 MB of taps per convolution).
          auto prefetchNextRun = [&](llvm::Value* pos, llvm::Value* cAbs, int64_t kCount) {
            llvm::Value* next = b.CreateAdd(
                b.CreateMul(panel, kb.index(MR * 9 * C)),
                b.CreateMul(b.CreateAdd(cAbs, kb.index(kCount)), kb.index(9 * panelRows)));
            if (nextPanel) {
              llvm::Value* lastRun = b.CreateICmpSGE(b.CreateAdd(cAbs, kb.index(kCount)),
                                                     kb.index(C));
              next = b.CreateSelect(lastRun, b.CreateMul(nextPanel, kb.index(MR * 9 * C)), next);
            }
            const int64_t lines = ceilDiv(9 * kc * panelRows, 16) + 1, perPos = ceilDiv(lines, P);
            llvm::Value* line0 = b.CreateMul(pos, kb.index(perPos));
            for (int64_t i = 0; i < perPos; ++i) {
              llvm::Value* line = kb.minValue(b.CreateAdd(line0, kb.index(i)), kb.index(lines - 1));
              llvm::Value* address =
                  kb.elementAddress(1, b.CreateAdd(next, b.CreateMul(line, kb.index(16))));
              b.CreateIntrinsic(llvm::Intrinsic::prefetch, {address->getType()},
                                {address, b.getInt32(0), b.getInt32(3), b.getInt32(1)});
            }
          };
          // The stored U of the next position (C * panelRows floats on, after the last position
          // the next panel's first), all its cache lines: each position's first slot tile would
          // otherwise wait on memory for its weights, which the position's other tiles then
          // find in L1. (Clamped to the weights' last line.)
          auto prefetchNextPosition = [&](llvm::Value* uBase, llvm::Value* pos, int64_t kCount) {
            const int64_t lines = ceilDiv(kCount * panelRows, 16) + 1;
            llvm::Value* next = b.CreateAdd(uBase, kb.index(C * panelRows));
            if (nextPanel) {
              llvm::Value* lastPosition = b.CreateICmpEQ(pos, kb.index(P - 1));
              next = b.CreateSelect(lastPosition, b.CreateMul(nextPanel, kb.index(MR * P * C)),
                                    next);
            }
            for (int64_t i = 0; i < lines; ++i) {
              llvm::Value* at =
                  kb.minValue(b.CreateAdd(next, kb.index(i * 16)), kb.index(storedFloats - 1));
              llvm::Value* address = kb.elementAddress(1, at);
              b.CreateIntrinsic(llvm::Intrinsic::prefetch, {address->getType()},
                                {address, b.getInt32(0), b.getInt32(3), b.getInt32(1)});
            }
          };
          // The products of channels [c0 + cl0, c0 + cl0 + kCount) into the M buffer (from
          // zero if `from0`), U from the weights (stored transform) or from uBuf.
          auto products = [&](llvm::Value* cl0, int64_t kCount, llvm::Value* from0) {
            llvm::Value* uPanel = b.CreateMul(panel, kb.index(MR * P * C));
            kb.forRange(
                kb.index(0), kb.index(P),
                [&](llvm::Value* pos) {
                  llvm::Value* mBase = b.CreateMul(b.CreateAdd(b.CreateMul(mp, kb.index(P)), pos),
                                                   kb.index(MR * slotsBuf));
                  llvm::Value* uBase =
                      inKernel
                          ? b.CreateMul(pos, kb.index(uStride))
                          : b.CreateAdd(uPanel,
                                        b.CreateMul(b.CreateAdd(b.CreateMul(pos, kb.index(C)), c0),
                                                    kb.index(panelRows)));
                  llvm::Value* vBase = b.CreateAdd(b.CreateMul(pos, kb.index(vPosition)),
                                                   b.CreateMul(cl0, kb.index(slotsBuf)));
                  if (inKernel) {
                    prefetchNextRun(pos, b.CreateAdd(c0, cl0), kCount);
                  } else {
                    prefetchNextPosition(uBase, pos, kCount);
                  }
                  auto gemmTile = [&](llvm::Value* s0, int64_t nv) {
                    for (int64_t r = 0; r < panelRows; ++r) {
                      for (int64_t v = 0; v < nv; ++v) {
                        llvm::Value* value = zero;
                        if (from0 != b.getTrue()) {
                          llvm::Value* at =
                              b.CreateAdd(mBase, b.CreateAdd(s0, kb.index(r * slotsBuf + v * L)));
                          llvm::Value* partial =
                              b.CreateAlignedLoad(vecTy, vecAt(mBuf, at), llvm::Align(32));
                          value = b.CreateSelect(from0, zero, partial);
                        }
                        b.CreateStore(value, acc[size_t(r)][size_t(v)]);
                      }
                    }
                    LoadA loadA = [&](llvm::Value* k, int64_t r) -> llvm::Value* {
                      llvm::Value* at = b.CreateAdd(
                          uBase, b.CreateAdd(b.CreateMul(k, kb.index(panelRows)), kb.index(r)));
                      if (inKernel) return b.CreateLoad(floatTy, vecAt(uBuf, at));
                      return kb.load(1, ElemType::F32, at);
                    };
                    LoadB loadB = [&](llvm::Value* k, int64_t v) {
                      llvm::Value* at =
                          b.CreateAdd(vBase, b.CreateAdd(b.CreateMul(k, kb.index(slotsBuf)),
                                                         b.CreateAdd(s0, kb.index(v * L))));
                      return b.CreateAlignedLoad(vecTy, vecAt(vBuf, at), llvm::Align(32));
                    };
                    emitMicrokernel(kb, {panelRows, nv, L}, acc, kCount, 4, loadA, loadB);
                    for (int64_t r = 0; r < panelRows; ++r) {
                      for (int64_t v = 0; v < nv; ++v) {
                        llvm::Value* at =
                            b.CreateAdd(mBase, b.CreateAdd(s0, kb.index(r * slotsBuf + v * L)));
                        b.CreateAlignedStore(b.CreateLoad(vecTy, acc[size_t(r)][size_t(v)]),
                                             vecAt(mBuf, at), llvm::Align(32));
                      }
                    }
                  };
                  kb.forRange(
                      kb.index(0), kb.index(fullSlotTiles),
                      [&](llvm::Value* st) { gemmTile(b.CreateMul(st, kb.index(NR)), NRV); },
                      /*unroll=*/false);
                  if (tailSlots > 0) gemmTile(kb.index(fullSlotTiles * NR), ceilDiv(tailSlots, L));
                },
                /*unroll=*/false);
          };
          if (!inKernel) {
            products(kb.index(0), count, first);
          } else {
            // Runs of kc channels (the last one shorter): U' of the run, then its products.
            const int64_t runs = count / kc, lastRun = count % kc;
            kb.forRange(
                kb.index(0), kb.index(runs),
                [&](llvm::Value* run) {
                  llvm::Value* cl0 = b.CreateMul(run, kb.index(kc));
                  transformWeights(panel, panelRows, b.CreateAdd(c0, cl0), kc);
                  products(cl0, kc, b.CreateAnd(first, b.CreateICmpEQ(run, kb.index(0))));
                },
                /*unroll=*/false);
            if (lastRun > 0) {
              transformWeights(panel, panelRows, b.CreateAdd(c0, kb.index(runs * kc)), lastRun);
              products(kb.index(runs * kc), lastRun, runs == 0 ? first : b.getFalse());
            }
          }
          auto output = [&] {
            if (packed) {
              outputTransformPacked(panel, panelRows, mp);
            } else {
              outputTransform(panel, panelRows, mp);
            }
          };
          if (last == b.getTrue()) {
            output();
          } else {
            kb.ifThen(last, output);
          }
        };
        if (shared) {
          // Every panel of the task, one claim at a time; the next claim from the same end is
          // most likely the neighbouring panel.
          kb.forEachClaimed(queue, panels, fromTop, [&](llvm::Value* panel) {
            llvm::Value* next = b.CreateSelect(
                fromTop, kb.maxValue(b.CreateSub(panel, kb.index(1)), kb.index(0)),
                kb.minValue(b.CreateAdd(panel, kb.index(1)), kb.index(panels - 1)));
            if (remRows == 0) {
              panelWork(panel, MR, next);
              return;
            }
            kb.ifThen(b.CreateICmpULT(panel, kb.index(fullPanels)),
                      [&] { panelWork(panel, MR, next); });
            kb.ifThen(b.CreateICmpEQ(panel, kb.index(fullPanels)),
                      [&] { panelWork(kb.index(fullPanels), remRows, next); });
          });
        } else {
          kb.forRange(panelLo, fullHi, [&](llvm::Value* panel) { panelWork(panel, MR, nullptr); },
                      /*unroll=*/false);
          if (remRows > 0)
            kb.ifThen(hasRemainder, [&] { panelWork(kb.index(fullPanels), remRows, nullptr); });
        }
      };

      if (oneCBlock) {
        cBlock(kb.index(0), C, b.getTrue(), b.getTrue());
      } else {
        kb.forRange(
            kb.index(0), kb.index(fullCBlocks),
            [&](llvm::Value* k) {
              llvm::Value* first = b.CreateICmpEQ(k, kb.index(0));
              llvm::Value* last =
                  lastC > 0 ? b.getFalse() : b.CreateICmpEQ(k, kb.index(fullCBlocks - 1));
              cBlock(b.CreateMul(k, kb.index(blockC)), blockC, first, last);
            },
            /*unroll=*/false);
        if (lastC > 0) cBlock(kb.index(fullCBlocks * blockC), lastC, b.getFalse(), b.getTrue());
      }
    };

    auto rowBlockWork = [&] {
      if (longRows == shortRows) {
        block(shortRows);
        return;
      }
      llvm::Value* isLong = b.CreateICmpEQ(b.CreateSub(tr1, tr0), kb.index(longRows));
      kb.ifThen(isLong, [&] { block(longRows); });
      kb.ifThen(b.CreateNot(isLong), [&] { block(shortRows); });
    };
    if (!shared) {
      rowBlockWork();
      return;
    }
    // A task nobody has started, or one with enough panels left to be worth a transform.
    llvm::Value* claimed = kb.workQueueClaimed(queue);
    kb.ifThen(b.CreateOr(b.CreateICmpEQ(claimed, kb.index(0)),
                         b.CreateICmpSLE(claimed, kb.index(panels - kJoinPanels))),
              rowBlockWork);
  });
  if (split > 0) return uint32_t(std::min(split, rowBlocks));
  return workgroupsFor(items, panelsPerGroup * MR * C * P * slotsBuf);
}

}  // namespace kiln::codegen::detail
