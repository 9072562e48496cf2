// The Winograd convolution kernel's policy and weight transform (see winograd_plan.h).
// LLVM-free.
#include "kiln/codegen/winograd_plan.h"

#include "kiln/codegen/work_queue.h"

#include <algorithm>
#include <cmath>
#include <cassert>

namespace kiln::codegen {
namespace {

// Below this many input or output channels the transforms cost more than the multiplies
// they save.
constexpr int64_t kMinChannels = 16;
constexpr int64_t kTargetSlots = 48;  // tiles per block at least (3 GEMM tiles of 16), if any
// Transformed inputs of a channel block: 800 KB at most (one block is worth more than the
// cache it spills from: partial products would go through memory and several output-channel
// groups would repeat the transform).
constexpr int64_t kVFloats = 200000;
// Rows per block shrink (down to a GEMM tile's worth) until a block's transformed inputs fit
// 256 KB, half of a Zen 3 core's L2: ResNet-18 layer1's 4-row blocks (576 KB) took 7.6% more
// time than 2-row ones (1 thread, per-workgroup CPU time, interleaved).
constexpr int64_t kL2VFloats = 65536;
// Transformed weights of one panel and one run of input channels (WinogradPanels kernels):
// 48 KB (L1 and L2). ResNet-18 layer3 (1 thread, thread CPU time by min, interleaved):
// 1430-1450 us with 48 KB runs, 1466-1500 with 24 KB, 1584-1675 with 12 KB (the products'
// partial sums go through memory once per run); layer4 within the noise of each other.
constexpr int64_t kUFloats = 12288;
// The kernel transforms the weights itself where the stored transform would be larger than
// this (bytes). Measured on ResNet-18, 1 thread, thread CPU time by min, interleaved: the
// in-kernel transform costs about 16 store-bound cycles per 8 (channel, row) pairs, a lot
// beside products over only 16 tiles per pair on 14x14 and 7x7 maps, but reads 9 floats per
// pair instead of 16 (F(2x2)) or 36 (F(4x4)). layer4 (stored 16.8 MB, read from memory on
// every call) about even (2070-2150 against 2050-2150 us); layer3 (9.4 MB) 0-5% slower
// by min (1430-1500 against 1420-1470 us); layer1/layer2 (0.6 / 2.4 MB, cache-resident)
// 10% slower; SqueezeNet's expand3x3 (at most 2.4 MB) 2-10% slower. Above 4 MB the bytes
// (and the memory bandwidth two threads share) are worth more: ResNet-18's artifact 97.4 ->
// 54.1 MB.
constexpr int64_t kInKernelFromBytes = int64_t(4) << 20;
// AVX-512 (16 lanes) on maps of at most one vector of tiles: above 1 MB, the L2 of a Zen 4/5
// core. Its FMAs take twice the bytes per cycle that AVX2's do, and there (13x13 F(4x4): 16
// tiles) each transformed weight gets one vector of work: SqueezeNet's features.9/10
// expand3x3 (48 -> 192, stored 1.3 MB) 113-120 -> 88-92 us, features.11/12 (64 -> 256, 2.4
// MB) 200-205 -> 131-151 us. Larger maps amortise the stored weights over more tiles:
// ResNet-18 layer2 (28x28, 49 tiles, 2.4 MB) even (493-539 against 516-536 us). Below 1 MB the
// kernel's transform costs more than it saves (SqueezeNet's 27x27 and 55x55 expand3x3, 0.6
// and 0.15 MB: 3-8% slower). Sums of per-workgroup CPU minimums, 1 thread, Zen 5 AVX-512,
// interleaved.
constexpr int64_t kInKernelFromBytesWide = int64_t(1) << 20;

// The Winograd kernel applies where its per-position products, over the tiles rounded up to
// whole vectors, are at most this share of the direct convolution's multiplies (9 per output
// pixel and channel pair): on maps of a few tiles most lanes of every vector are padding.
// Measured on AVX-512 (Zen 5, 1 thread, one 3x3 conv + ReLU with 128 and 512 channels, p50
// of the Winograd kernel against the output-channel-vectorised one): 4x4 maps (share 1.78)
// 47 against 26 and 918 against 362 us; 5x5 (1.14) 53 against 48 and 1037 against 611; 6x6
// (0.79) 55 against 57 and 1067 against 846; 8x8 (0.44) 51 against 98 and 1076 against 1473;
// 9x9 (0.70) 90 against 125 and 1801 against 2414; 11x11 (0.71) 125 against 170 and 2650
// against 2797. ResNet-50's layer4 at a 64x64 input (2x2 maps, 512 -> 512: share 7.1) took
// 920 us a convolution on Winograd. ResNet-18's 7x7 and 14x14 maps (0.58) keep it.
constexpr int64_t kMaxProductShareNum = 3, kMaxProductShareDen = 4;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

WinogradBlocks winogradBlocks(const KernelDesc& d, const ConvGemmTile& tile, int64_t m) {
  const int64_t C = d.inputs[0].shape[1], OH = d.output.shape[2], OW = d.output.shape[3];
  const int64_t P = (m + 2) * (m + 2), L = tile.lanes;
  WinogradBlocks k;
  k.tileRows = ceilDiv(OH, m);
  k.tileCols = ceilDiv(OW, m);
  k.rowVectors = ceilDiv(k.tileCols, L);
  // Slots of a block of r tile rows, whole vectors. (The last row's last vector may reach
  // up to L - 1 slots further: the kernel's buffers leave room for that.)
  auto slotsFor = [&](int64_t r) { return ceilDiv(r * k.tileCols, L) * L; };
  // kTargetSlots tiles, fewer while the transformed inputs of every channel would not fit
  // kL2VFloats, but a GEMM tile's worth at least.
  k.blockRows = std::min(k.tileRows, ceilDiv(kTargetSlots, k.tileCols));
  const int64_t minRows = std::min(k.tileRows, ceilDiv(tile.nr(), k.tileCols));
  while (k.blockRows > minRows && P * C * slotsFor(k.blockRows) > kL2VFloats) --k.blockRows;
  // As many blocks, the longest blockRows rows (the kernel gives block b rows
  // [b*T/B, (b+1)*T/B)). More than 4 blocks round up to a multiple of 4 where the longest
  // still has minRows rows: items that divide over 2 and 4 threads and repeat no input
  // transform (ResNet-18 layer1 on AVX2: 7 -> 8, simulated on two threads x1.92 -> x1.96).
  // Failing that, an odd count above 1 rounds up to an even one: 5 items split 3 + 2 on two
  // threads (ResNet-18 layer1 on AVX-512, 3-row blocks: 5 -> 6 blocks of 3 and 2 rows; each
  // convolution's time over half its 1-thread time, replayed on per-workgroup minimums at 2
  // threads, 44-48 -> 15-20 us; rounding down to 4 blocks of 4 rows: 20-25 us, and blocks
  // past the L2 budget below).
  k.rowBlocks = ceilDiv(k.tileRows, k.blockRows);
  auto fits = [&](int64_t blocks) {
    return blocks <= k.tileRows && ceilDiv(k.tileRows, blocks) >= minRows;
  };
  if (k.rowBlocks > 4 && k.rowBlocks % 4 != 0 && fits(ceilDiv(k.rowBlocks, 4) * 4))
    k.rowBlocks = ceilDiv(k.rowBlocks, 4) * 4;
  else if (k.rowBlocks > 1 && k.rowBlocks % 2 != 0 && fits(k.rowBlocks + 1))
    ++k.rowBlocks;
  k.blockRows = ceilDiv(k.tileRows, k.rowBlocks);
  k.slots = slotsFor(k.blockRows);
  // Channel blocks: a divisor of C not much smaller than the even split if there is one,
  // else the even split rounded up.
  const int64_t blocks = ceilDiv(P * C * k.slots, kVFloats);
  k.blockC = ceilDiv(C, blocks);
  for (int64_t c = k.blockC; c * 2 > k.blockC && c > 0; --c) {
    if (C % c == 0) {
      k.blockC = c;
      break;
    }
  }
  k.channelBlocks = ceilDiv(C, k.blockC);
  return k;
}

WinogradPlan winogradPlan(const KernelDesc& d, VectorUnit unit) {
  ConvGemmTile tile = convGemmTile(d, unit);
  if (!tile.applies()) return {};
  const std::vector<int64_t>& ws = d.inputs[1].shape;
  const std::vector<int64_t>& ys = d.output.shape;
  if (ws[2] != 3 || ws[3] != 3) return {};
  if (d.strides != std::array<int64_t, 2>{1, 1} || d.dilations != std::array<int64_t, 2>{1, 1})
    return {};
  if (ws[0] < kMinChannels || ws[1] < kMinChannels) return {};
  WinogradPlan plan;
  plan.tile = tile;
  // F(4x4): a quarter of the multiplies, worth its larger transforms where the map has
  // three or more 4 x 4 tiles per row and its transformed inputs fit one channel block
  // (measured: ResNet-18's 56x56 and 28x28 maps, SqueezeNet's 55x55 to 13x13 ones). F(2x2)
  // on smaller maps (7 x 7: F(4x4)'s 2 x 2 tiles would fill a quarter of the vectors) and
  // where F(4x4) would need several channel blocks (ResNet-18's 14x14 x 256).
  const int64_t oh = ys[2], ow = ys[3];
  plan.m = oh >= 12 && ow >= 12 && winogradBlocks(d, tile, 4).channelBlocks == 1 ? 4 : 2;
  const int64_t storedBytes = plan.positions() * ws[0] * ws[1] * int64_t(sizeof(float));
  const WinogradBlocks blocks = winogradBlocks(d, tile, plan.m);
  const int64_t products = plan.positions() * blocks.rowBlocks * blocks.slots;
  if (products * kMaxProductShareDen > 9 * oh * ow * kMaxProductShareNum) return {};
  const bool oneVectorOfTiles = blocks.tileRows * blocks.tileCols <= int64_t(unit.lanes);
  plan.transformInKernel =
      storedBytes >
      (unit.lanes >= 16 && oneVectorOfTiles ? kInKernelFromBytesWide : kInKernelFromBytes);
  return plan;
}

int64_t winogradSharedTasks(const KernelDesc& d, VectorUnit unit) {
  const WinogradPlan plan = winogradPlan(d, unit);
  if (!plan.applies()) return 0;
  const WinogradBlocks blocks = winogradBlocks(d, plan.tile, plan.m);
  const int64_t tasks = d.inputs[0].shape[0] * blocks.rowBlocks;
  // With kWorkQueueThreads tasks or more, every thread of a pool that size has a task of its
  // own: fixed workgroups, one per task, do as well.
  return blocks.channelBlocks == 1 && tasks < kWorkQueueThreads ? tasks : 0;
}

WinogradMatrices winogradMatrices(int64_t m) {
  WinogradMatrices w;
  w.m = m;
  w.alpha = m + 2;
  if (m == 2) {
    w.bt = {1, 0, -1, 0,  //
            0, 1, 1,  0,  //
            0, -1, 1, 0,  //
            0, 1, 0,  -1};
    w.g = {1, 0, 0, 0.5, 0.5, 0.5, 0.5, -0.5, 0.5, 0, 0, 1};
    w.at = {1, 1, 1, 0,  //
            0, 1, -1, -1};
  } else {
    assert(m == 4 && "F(2x2) and F(4x4) only");
    // Interpolation points 0, 1, -1, 1/2, -2 and infinity rather than the usual 0, +-1, +-2:
    // the products' rounding errors grow less through the transforms. Simulated in f32 over
    // 256 input channels (60 random tiles, error of the largest output against a float64 direct
    // convolution, relative to the largest output): 2.3e-6 against 3.9e-6 with +-2 (the direct
    // convolution in f32: 1.0e-6). Against the e2e references (PyTorch in f32): Inception v3
    // at 80x80 0.0051 -> 0.0046 on the host (mean 1.27e-3 -> 1.03e-3; F(2x2) everywhere
    // 0.0020, no Winograd 0.0019, PyTorch's own f32 error 0.0015) and 0.0058 -> 0.0042 on
    // aarch64, now within its tolerance (e2e.aarch64.inception_v3_op13); ResNet-50 1.9e-4 ->
    // 1.4e-4; ResNet-18's mean 1.18e-6 -> 0.91e-6. The same speed (ResNet-18, sums of
    // per-workgroup minimums, 1 thread: 10.88, 11.00 -> 10.65, 10.72 ms). Every coefficient of
    // B^T and A^T is a short binary fraction (exact in f32).
    w.bt = {1, -1.5, -2,   1.5,  1,   0,  //
            0, -1,   0.5,  2.5,  1,   0,  //
            0, 1,    -2.5, 0.5,  1,   0,  //
            0, -2,   -1,   2,    1,   0,  //
            0, 0.5,  -1,   -0.5, 1,   0,  //
            0, 1,    -1.5, -2,   1.5, 1};
    w.g = {1,          0,          0,          //
           1.0 / 3,    1.0 / 3,    1.0 / 3,    //
           -1.0 / 3,   1.0 / 3,    -1.0 / 3,   //
           -16.0 / 15, -8.0 / 15,  -4.0 / 15,  //
           1.0 / 15,   -2.0 / 15,  4.0 / 15,   //
           0,          0,          1};
    w.at = {1, 1, 1,  1,     1,  0,  //
            0, 1, -1, 0.5,   -2, 0,  //
            0, 1, 1,  0.25,  4,  0,  //
            0, 1, -1, 0.125, -8, 1};
  }
  // G = diag(d) H: d_r is row r's nonzero entry of least magnitude, so H holds small
  // integers (the point 1/2's row (1, 1/2, 1/4) becomes (4, 2, 1)).
  for (int64_t r = 0; r < w.alpha; ++r) {
    const double* row = &w.g[size_t(r * 3)];
    double least = 0;
    for (int64_t k = 0; k < 3; ++k)
      if (row[k] != 0 && (least == 0 || std::fabs(row[k]) < std::fabs(least))) least = row[k];
    w.d.push_back(least);
    for (int64_t k = 0; k < 3; ++k) w.h.push_back(row[k] / least);
  }
  return w;
}

std::vector<float> winogradTransformWeights(const std::vector<float>& weights, int64_t oc,
                                            int64_t c, int64_t m, int64_t mr) {
  assert(int64_t(weights.size()) == oc * c * 9 && mr > 0);
  const WinogradMatrices w = winogradMatrices(m);
  const int64_t a = w.alpha, positions = a * a;
  // U[pos][o][i] = (G g G^T)[pos], as positions x (oc x c) matrices.
  std::vector<float> u(size_t(positions * oc * c));
  for (int64_t o = 0; o < oc; ++o) {
    for (int64_t i = 0; i < c; ++i) {
      const float* g = weights.data() + (o * c + i) * 9;
      double gg[6][3];  // G g
      for (int64_t r = 0; r < a; ++r)
        for (int64_t k = 0; k < 3; ++k) {
          double sum = 0;
          for (int64_t j = 0; j < 3; ++j) sum += w.g[r * 3 + j] * double(g[j * 3 + k]);
          gg[r][k] = sum;
        }
      for (int64_t r = 0; r < a; ++r)
        for (int64_t s = 0; s < a; ++s) {
          double sum = 0;
          for (int64_t k = 0; k < 3; ++k) sum += gg[r][k] * w.g[s * 3 + k];
          u[size_t(((r * a + s) * oc + o) * c + i)] = float(sum);
        }
    }
  }
  // Panels of mr output channels, each holding every position's [c][rows] block in turn.
  std::vector<float> packed(u.size());
  for (int64_t first = 0; first < oc; first += mr) {
    const int64_t rows = std::min(mr, oc - first);
    float* panel = packed.data() + first * positions * c;
    for (int64_t pos = 0; pos < positions; ++pos)
      for (int64_t i = 0; i < c; ++i)
        for (int64_t m = 0; m < rows; ++m)
          panel[(pos * c + i) * rows + m] = u[size_t((pos * oc + first + m) * c + i)];
  }
  return packed;
}

std::vector<float> winogradPackTaps(const std::vector<float>& weights, int64_t oc, int64_t c,
                                    int64_t mr, int64_t blockC, int64_t run) {
  assert(int64_t(weights.size()) == oc * c * 9 && mr > 0 && blockC > 0 && run > 0);
  std::vector<float> packed(weights.size());
  for (int64_t first = 0; first < oc; first += mr) {
    const int64_t rows = std::min(mr, oc - first);
    float* panel = packed.data() + first * 9 * c;
    for (int64_t block = 0; block < c; block += blockC) {
      const int64_t blockEnd = std::min(c, block + blockC);
      for (int64_t c0 = block; c0 < blockEnd; c0 += run) {
        const int64_t n = std::min(run, blockEnd - c0);
        float* runAt = panel + 9 * c0 * rows;
        for (int64_t t = 0; t < 9; ++t)
          for (int64_t i = 0; i < n; ++i)
            for (int64_t r = 0; r < rows; ++r)
              runAt[(t * n + i) * rows + r] = weights[size_t(((first + r) * c + c0 + i) * 9 + t)];
      }
    }
  }
  return packed;
}

int64_t winogradTransformChannels(int64_t m, int64_t mr, int64_t blockC) {
  const int64_t perChannel = (m + 2) * (m + 2) * mr;
  return std::min(blockC, std::max<int64_t>(4, kUFloats / perChannel / 4 * 4));
}

std::vector<int64_t> winogradRowBoundaries(const KernelDesc& desc, VectorUnit unit) {
  const WinogradPlan plan = winogradPlan(desc, unit);
  const int64_t m = desc.winogradTile;
  const WinogradBlocks blocks = winogradBlocks(desc, plan.tile, m);
  const int64_t T = blocks.tileRows, B = blocks.rowBlocks, OH = desc.output.shape[2];
  // Block b: tile rows [b * T / B, (b + 1) * T / B), as emit_conv_winograd.cpp splits them.
  std::vector<int64_t> bounds;
  for (int64_t b = 0; b < B; ++b) bounds.push_back(std::min(OH, b * T / B * m));
  bounds.push_back(OH);
  return bounds;
}

}  // namespace kiln::codegen
