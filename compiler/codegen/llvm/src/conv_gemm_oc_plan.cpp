// The policy of the output-channel-vectorised convolution GEMM (emit_conv_gemm_oc.cpp): which
// convolutions it takes and its register tile (conv_gemm_plan.h). LLVM-free: the packer and
// the emitter both ask ocVectorTile, so they always agree.
#include <algorithm>

#include "kiln/codegen/conv_gemm_plan.h"

namespace kiln::codegen {
namespace {

// Which convolutions take the variant, as measured on Zen 3 (AVX2) against the
// pixel-vectorised kernel (docs/codegen.md): maps of at most kSmallMap pixels always (7x7 and
// 8x8 maps leave a quarter of that kernel's lanes idle); maps up to kMaxPixels when the input
// is read with a stride (the pixel kernel gathers it) or when K is long enough to amortise a
// tile's transposition and the output channels few enough that the packed pixels are not
// streamed again for too many panels (MobileNetV2's 14x14 576->96: 334 -> 273 us; its
// 96->576 and SqueezeNet's 1000-channel classifier stay with the pixel kernel).
constexpr int64_t kSmallMap = 64;
constexpr int64_t kMaxPixels = 256;
constexpr int64_t kMinLongK = 256;
constexpr int64_t kMaxChannelsLongK = 512;
// The im2col of a convolution that cannot read its input in place is packed with each output
// row's columns unrolled: rows at most this wide.
constexpr int64_t kMaxIm2colColumns = 32;

int64_t roundUp(int64_t value, int64_t step) { return (value + step - 1) / step * step; }

}  // namespace

OcVectorTile ocVectorTile(const KernelDesc& d, VectorUnit unit) {
  // The same convolutions as the pixel-vectorised kernel (f32, groups 1, 2-D, an epilogue that
  // evaluates on vectors of pixels), with small maps and at least one full channel panel.
  ConvGemmTile base = convGemmTile(d, unit);
  if (!base.applies()) return {};
  const std::vector<int64_t>& ws = d.inputs[1].shape;
  const std::vector<int64_t>& ys = d.output.shape;
  const int64_t oc = ws[0], k = ws[1] * ws[2] * ws[3], pixels = ys[2] * ys[3];
  OcVectorTile tile;
  tile.lanes = unit.lanes;
  // 16 output channels (AVX2, SSE), 32 (AVX-512); NEON's 4-lane registers take 4 vectors.
  tile.ocVectors = unit.lanes == 4 && unit.registers >= 32 ? 4 : 2;
  if (pixels > kMaxPixels || oc < tile.oc()) return {};
  const bool inPlace = ws[2] == 1 && ws[3] == 1 && d.pads == std::array<int64_t, 4>{0, 0, 0, 0};
  if (!inPlace && ys[3] > kMaxIm2colColumns) return {};
  // Accumulators get every register but the weight vectors and one broadcast; of the tile
  // heights that keep enough independent accumulators (>= 8) the one that covers the map with
  // the fewest pixel computations (the last tile is shifted back to end on the map's end).
  const int64_t most = std::clamp<int64_t>(
      (int64_t(unit.registers) - tile.ocVectors - 1) / tile.ocVectors, 1, 12);
  if (pixels <= most) {
    tile.pixels = pixels;
    return tile;
  }
  const int64_t least = std::max<int64_t>(1, std::min(most, (8 + tile.ocVectors - 1) / tile.ocVectors));
  int64_t best = most;
  for (int64_t mr = most; mr >= least; --mr)
    if (roundUp(pixels, mr) < roundUp(pixels, best)) best = mr;
  tile.pixels = best;
  return tile;
}

bool ocVectorWins(const KernelDesc& d, VectorUnit unit) {
  if (!ocVectorTile(d, unit).applies()) return false;
  const std::vector<int64_t>& ws = d.inputs[1].shape;
  const int64_t oc = ws[0], k = ws[1] * ws[2] * ws[3];
  if (d.output.shape[2] * d.output.shape[3] <= kSmallMap) return true;
  const bool pointwise = ws[2] == 1 && ws[3] == 1 && d.pads == std::array<int64_t, 4>{0, 0, 0, 0};
  const bool strided = d.strides[0] > 1 || d.strides[1] > 1;
  return (pointwise && strided) || (k >= kMinLongK && oc <= kMaxChannelsLongK);
}

}  // namespace kiln::codegen
