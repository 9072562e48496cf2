// The policy of the output-channel-vectorised convolution GEMM (emit_conv_gemm_oc.cpp): which
// convolutions it takes and its register tile (conv_gemm_plan.h). LLVM-free: the packer and
// the emitter both ask ocVectorTile, so they always agree.
#include <algorithm>
#include <vector>

#include "kiln/codegen/conv_gemm_plan.h"

namespace kiln::codegen {
namespace {

// The kernel takes maps of up to kMaxPixels; it is chosen for maps of at most kSmallMap, as
// measured on Zen 3 (AVX2) against the pixel-vectorised kernel (docs/codegen.md): 7x7 maps
// leave a quarter of that kernel's lanes idle and this one wins by 5-15 % (MobileNetV2's 7x7
// 1x1 convs, ResNet-18's layer4.0 conv1 and downsample).
constexpr int64_t kSmallMap = 64;
// Maps of up to kMidMap pixels (14x14) take it when K is long and the output channels are a
// few panels per work item: MobileNetV2's 14x14 project convs (384 -> 96, 576 -> 96: 7-8 %
// faster by min) and ResNet-18's layer3.0 conv1 (3x3 stride 2, 128 -> 256 into 14x14: 1.49
// -> 1.38 ms); with K <= 192 (the 14x14 expand convs, 192 -> 64) or 64 channels (384 -> 64,
// SqueezeNet's 13x13 squeeze convs) it lost 3-15 %, and SqueezeNet's 512 -> 1000 classifier
// was even, so those keep the pixel-vectorised kernel.
constexpr int64_t kMidMap = 196;
constexpr int64_t kMidMapMinK = 384;
constexpr int64_t kMidMapOc[2] = {96, 256};
constexpr int64_t kMaxPixels = 256;
// Few-channel stems whose rows are narrower than the pixel-vectorised kernel's tile, with a
// width stride of 3 or more: there that kernel's tiles cross output rows and every tap of a
// vector is a few masked loads of stride x lanes floats (im2col "segments"), while this one
// packs each output row once per item. Measured on Zen 5 (AVX-512), sums of per-workgroup
// minimums, 1 thread: AlexNet's 11x11 stride-4 stem on a 96x96 input (3 -> 64, 23x23) 209 ->
// 128-142 us, on 128x128 (31x31) 362-384 -> 259; 4x4 stride 4 (3 -> 64, 24x24) 29 -> 24;
// 7x7 stride 3 (3 -> 64, 20x20) 52-54 -> 42-43; 3x3 stride 3 (3 -> 96, 26x26) even. Stride 2
// lost (SqueezeNet 1.0's 7x7 stem at 64x64, 29x29: 133 -> 139 us by min; 3x3 at 31x31 too),
// and on AVX2 the 31x31 case lost 5 %: so AVX-512 only. Up to kMaxStemPixels, the im2col of
// one channel within kMaxStemIm2colFloats (512 KB of stack; 11x11 over 31x31: 472 KB).
constexpr int64_t kStemChannels = 4;
constexpr int64_t kStemMinStride = 3;
constexpr int64_t kMaxStemPixels = 1024;
constexpr int64_t kMaxStemIm2colFloats = 131072;
// The im2col of a convolution that cannot read its input in place is packed with each output
// row's columns unrolled: rows at most this wide.
constexpr int64_t kMaxIm2colColumns = 32;
// Tiles keep at least this many accumulators when the registers allow: 4 x 2 (8, just the
// FMA latency x throughput) ran 3-5 % slower than 6 x 2 on 14x14 maps (196 pixels: 49 tiles
// of 4 against 33 of 6).
constexpr int64_t kMinAccumulators = 10;

int64_t roundUp(int64_t value, int64_t step) { return (value + step - 1) / step * step; }

// The stems above (the pixel-vectorised tile `base` of the convolution on `unit`).
bool shortRowStem(const KernelDesc& d, const ConvGemmTile& base, VectorUnit unit) {
  const std::vector<int64_t>& ws = d.inputs[1].shape;
  const std::vector<int64_t>& ys = d.output.shape;
  const int64_t pixels = ys[2] * ys[3], taps = ws[2] * ws[3];
  return unit.lanes >= 16 && ws[1] <= kStemChannels && d.strides[1] >= kStemMinStride &&
         ys[3] < base.nr() && pixels <= kMaxStemPixels &&
         taps * roundUp(pixels + unit.lanes, unit.lanes) <= kMaxStemIm2colFloats;
}

}  // namespace

OcVectorTile ocVectorTile(const KernelDesc& d, VectorUnit unit) {
  // The same convolutions as the pixel-vectorised kernel (f32, groups 1, 2-D, an epilogue that
  // evaluates on vectors of pixels), with small maps and at least one full channel panel.
  ConvGemmTile base = convGemmTile(d, unit);
  if (!base.applies()) return {};
  const std::vector<int64_t>& ws = d.inputs[1].shape;
  const std::vector<int64_t>& ys = d.output.shape;
  const int64_t oc = ws[0], pixels = ys[2] * ys[3];
  OcVectorTile tile;
  tile.lanes = unit.lanes;
  // 16 output channels (AVX2, SSE), 32 (AVX-512); NEON's 4-lane registers take 4 vectors.
  tile.ocVectors = unit.lanes == 4 && unit.registers >= 32 ? 4 : 2;
  if ((pixels > kMaxPixels && !shortRowStem(d, base, unit)) || oc < tile.oc()) return {};
  const bool inPlace = ws[2] == 1 && ws[3] == 1 && d.pads == std::array<int64_t, 4>{0, 0, 0, 0};
  if (!inPlace && ys[3] > kMaxIm2colColumns) return {};
  // Where the items can only be groups of panels (maps too small for groups of pixel tiles,
  // ocVectorItems), an odd number of two-vector panels shares unevenly between two threads:
  // MobileNetV2's 7x7 960 -> 160 convs ran as 2 + 3 panels of 32 channels, 64 and 89 us. With
  // 32 registers, one-vector panels (10 of 16: 5 + 5) are no slower on one thread, 149-150
  // against 153 us (the sum of both workgroups' minimums, Zen 4), and even on two: 75 + 75.
  const bool panelsOnly = pixels < 2 * kMinGroupPixels || (!inPlace && pixels <= oc);
  if (tile.ocVectors == 2 && unit.registers >= 32 && panelsOnly && oc % unit.lanes == 0) {
    const int64_t panels = (oc + tile.oc() - 1) / tile.oc();
    if (panels > 1 && panels % 2 == 1) tile.ocVectors = 1;
  }
  // Accumulators get every register but the weight vectors and one broadcast; of the tile
  // heights that keep enough independent accumulators (>= 8) the one that covers the map with
  // the fewest pixel computations (the last tile is shifted back to end on the map's end).
  // Tiles of up to 12 pixels, or 14 on AVX-512 read in place: 14 x 2 accumulators, 31 of its
  // 32 registers, cover 14x14 maps exactly (MobileNetV2's 384 -> 96 and 576 -> 96 + Add at
  // 14x14 89 -> 82, 130 -> 120 us by median thread CPU time, 1 thread, five interleaved
  // rounds, Zen 5: 7-pixel tiles before; the im2col path (ResNet-18's layer3.0 conv1) ran
  // 3-5% slower with them).
  const int64_t tallest = unit.lanes >= 16 && inPlace ? 14 : 12;
  const int64_t most = std::clamp<int64_t>(
      (int64_t(unit.registers) - tile.ocVectors - 1) / tile.ocVectors, 1, tallest);
  if (pixels <= most) {
    tile.pixels = pixels;
    return tile;
  }
  const int64_t least = std::max<int64_t>(
      1, std::min(most, (kMinAccumulators + tile.ocVectors - 1) / tile.ocVectors));
  int64_t best = most;
  for (int64_t mr = most; mr >= least; --mr)
    if (roundUp(pixels, mr) < roundUp(pixels, best)) best = mr;
  tile.pixels = best;
  return tile;
}

namespace {

// The time two threads take for `items` (work per item) in the thread pool's order: the caller
// from the top, the worker from the bottom, one item per claim, the thread free first claims
// next; the caller `callerFactor` times slower than the worker.
double twoThreads(const std::vector<double>& items, double callerFactor) {
  size_t lo = 0, hi = items.size();
  double caller = 0, worker = 0;
  while (lo < hi) {
    if (caller <= worker) {
      caller += callerFactor * items[--hi];
    } else {
      worker += items[lo++];
    }
  }
  return std::max(caller, worker);
}

}  // namespace

OcVectorItems ocVectorItems(int64_t images, int64_t panels, int64_t lastPanelWidth,
                            int64_t panelWidth, int64_t tiles, int64_t tilePixels,
                            PixelSplit pixelSplit, int64_t minOcGroups) {
  const bool tileGroups = pixelSplit != PixelSplit::None;
  const int64_t maxTileGroups =
      tileGroups ? std::clamp<int64_t>(tiles * tilePixels / kMinGroupPixels, 1, tiles) : 1;
  // Groups of panels: as many as make 2 items (each one packs its pixels again: on 7x7 maps,
  // 4 groups instead of 2 made MobileNetV2's 960 -> 160 and 960 -> 320 convs 18-20 % slower,
  // sums of per-workgroup minimums, 1 thread), or as the partial sums need; tile groups where
  // they even the items out better.
  const int64_t fewest = std::max<int64_t>(1, minOcGroups);
  const int64_t most = std::max(fewest, std::min<int64_t>(panels, (2 + images - 1) / images));
  OcVectorItems best;
  double bestScore = 0;
  for (int64_t g = fewest; g <= most; ++g) {
    for (int64_t p = 1; p <= maxTileGroups; ++p) {
      const int64_t items = images * g * p;
      // Item (image, group, tile group): its channels x its tiles, in the kernels' order.
      std::vector<double> work;
      for (int64_t n = 0; n < images; ++n)
        for (int64_t gi = 0; gi < g; ++gi) {
          const int64_t lo = gi * panels / g, hi = (gi + 1) * panels / g;
          const int64_t channels = (hi - lo) * panelWidth - (hi == panels ? panelWidth - lastPanelWidth : 0);
          for (int64_t pi = 0; pi < p; ++pi)
            work.push_back(double(channels) * double((pi + 1) * tiles / p - pi * tiles / p));
        }
      double total = 0;
      for (double w : work) total += w;
      // The worse of equal threads and either one 10 % slower, against a perfect split.
      const double equal = twoThreads(work, 1.0) / (total / 2);
      const double slow = std::max(twoThreads(work, 1.1), twoThreads(work, 1 / 1.1) * 1.1) /
                          (total * 1.1 / 2.1);
      // Each item costs a little more (its pass over the weights, its prefetches): 1 % a piece.
      // Where the packed pixels outweigh the weights, ties go to groups of tiles.
      const double score = std::max(equal, slow) + 0.01 * double(items) +
                           (pixelSplit == PixelSplit::Preferred ? 0.001 * double(g - 1) : 0.0);
      if (bestScore == 0 || score < bestScore - 1e-9) {
        bestScore = score;
        best = {g, p};
      }
    }
  }
  return best;
}

bool ocVectorWins(const KernelDesc& d, VectorUnit unit) {
  if (!ocVectorTile(d, unit).applies()) return false;
  const std::vector<int64_t>& ws = d.inputs[1].shape;
  const int64_t pixels = d.output.shape[2] * d.output.shape[3], k = ws[1] * ws[2] * ws[3];
  if (pixels <= kSmallMap || shortRowStem(d, convGemmTile(d, unit), unit)) return true;
  return pixels <= kMidMap && k >= kMidMapMinK && ws[0] >= kMidMapOc[0] && ws[0] <= kMidMapOc[1];
}

}  // namespace kiln::codegen
