// The fused Conv + MaxPool kernel's policy (see conv_pool_plan.h). LLVM-free.
#include "kiln/codegen/conv_pool_plan.h"

#include <algorithm>

namespace kiln::codegen {
namespace {

constexpr int64_t kTargetItems = 8;       // items per dispatch (even over 1, 2, 4, 8 threads)
constexpr int64_t kMaxRowFloats = 49152;  // a group's ring of convolution rows: 192 KB (L2)
constexpr int64_t kMaxStride = 4;         // widest pool stride the vector pooling reads

constexpr int64_t kMaxPlaneFloats = 6144;  // a row's input planes: 24 KB (L1) at most
constexpr int64_t kMaxPlaneStride = 4;     // widest stride the planes are split into
constexpr int64_t kMaxPlaneWidth = 9;      // widest kernel (its taps are unrolled)
constexpr int64_t kMaxStemChannels = 4;    // unpooled convolutions taken: the stems
// Unpooled stems need rows of a full tile or of kMinStemRow pixels: one row tile, its lanes
// past the row computed and dropped, still beat the GEMM kernel's tiles across rows (Zen 5,
// sums of per-workgroup minimums, 1 thread: SqueezeNet 1.0's 7x7 stride-2 stem on a 64x64
// input, 29x29, 130-136 -> 115 us; SqueezeNet 1.1's 3x3 one, 31x31, 24-26 -> 19-20; the MNIST
// CNN's 28x28 1 -> 16 conv 7.3-7.6 -> 5.9; 3x3 stride 2, 3 -> 32 into 12x12 to 24x24 20-40 %
// faster, AVX2 at 12x12 too); 8-pixel rows lost (the digits' 8x8 1 -> 16 conv 0.54 -> 0.65
// us, AVX2 0.57 -> 0.58-0.63).
constexpr int64_t kMinStemRow = 12;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int64_t convPlaneLength(const KernelDesc& d, const ConvGemmTile& tile) {
  const int64_t OW = d.convOutput[3], KW = d.inputs[1].shape[3], sw = d.strides[1];
  const int64_t L = tile.lanes, NR = tile.nr();
  return ceilDiv(ceilDiv(OW, NR) * NR + (KW - 1) / sw, L) * L;
}

bool convPoolPlanes(const KernelDesc& d, const ConvGemmTile& tile) {
  if (!tile.applies() || d.dilations[0] != 1 || d.dilations[1] != 1) return false;
  const std::vector<int64_t>& ws = d.inputs[1].shape;
  const int64_t C = ws[1], KH = ws[2], KW = ws[3], sw = d.strides[1];
  return sw <= kMaxPlaneStride && KW <= kMaxPlaneWidth &&
         C * KH * sw * convPlaneLength(d, tile) <= kMaxPlaneFloats;
}

KernelDesc pooledView(const KernelDesc& d) {
  if (d.pooled()) return d;
  KernelDesc v = d;
  v.convOutput = d.output.shape;
  v.poolKernel = {1, 1};
  v.poolStrides = {1, 1};
  v.poolPads = {0, 0, 0, 0};
  return v;
}

bool convStemDirect(const KernelDesc& d, VectorUnit unit) {
  if (d.kind != KernelKind::Conv || d.pooled() || d.tailB >= 0) return false;
  const ConvGemmTile tile = convGemmTile(d, unit);
  if (!tile.applies() || d.inputs[1].shape[1] > kMaxStemChannels) return false;
  if (d.output.shape[3] < std::min(tile.nr(), kMinStemRow)) return false;
  // Pointwise convolutions read in place by the GEMM kernel need no packing.
  const std::vector<int64_t>& ws = d.inputs[1].shape;
  if (ws[2] == 1 && ws[3] == 1 && d.strides == std::array<int64_t, 2>{1, 1} &&
      d.pads == std::array<int64_t, 4>{0, 0, 0, 0})
    return false;
  for (const ExprNode& node : d.epilogue.chain.nodes)
    if (node.op == ExprOp::Input) return false;  // the chain is applied with no row
  return convPoolPlanes(pooledView(d), tile);
}

bool convPoolVectorised(const KernelDesc& d, VectorUnit unit) {
  return d.pooled() && d.poolStrides[1] <= kMaxStride && convGemmTile(d, unit).applies();
}

ConvPoolPlan convPoolPlan(const KernelDesc& d, int64_t panelRows, int64_t lanes,
                          int64_t tileWidth) {
  ConvPoolPlan p;
  p.lanes = lanes;
  p.panelRows = panelRows;
  const int64_t N = d.output.shape[0], OC = d.output.shape[1];
  const int64_t PH = d.output.shape[2], PW = d.output.shape[3];
  const int64_t OW = d.convOutput[3];
  const int64_t kw = d.poolKernel[1], sw = d.poolStrides[1], padLeft = d.poolPads[1];
  // Row buffer: rowLeft floats of -inf, the row (whole tiles of it), -inf up to the last
  // float the width pooling reads (whole vectors of pooled columns).
  const int64_t pooledVectors = ceilDiv(PW, lanes);
  // The row starts at a whole vector (rowLeft >= padLeft) so that the tiles' stores are
  // aligned (ResNet's pad 1 made every other one split a cache line).
  p.rowLeft = ceilDiv(padLeft, lanes) * lanes;
  const int64_t written = p.rowLeft + ceilDiv(OW, tileWidth) * tileWidth;
  const int64_t read = p.rowLeft - padLeft + pooledVectors * lanes * sw + kw - 1;
  p.rowLen = ceilDiv(std::max(written, read), lanes) * lanes;
  // Output channels: all of them unless the ring of pool-kernel-height rows would outgrow
  // kMaxRowFloats.
  const int64_t panels = ceilDiv(OC, panelRows);
  const int64_t panelsPerGroup =
      std::clamp<int64_t>(kMaxRowFloats / (d.poolKernel[0] * p.rowLen * panelRows), 1, panels);
  p.ocGroups = ceilDiv(panels, panelsPerGroup);
  p.ocPerGroup = ceilDiv(panels, p.ocGroups) * panelRows;
  p.ocGroups = ceilDiv(OC, p.ocPerGroup);
  // Bands: enough items for kTargetItems, as tall as that allows, and an even count (two
  // threads get the same share; 14 pooled rows: 4 bands of 4, not 7 of 2).
  const int64_t wanted = std::clamp<int64_t>(ceilDiv(kTargetItems, N * p.ocGroups), 1, PH);
  p.bandRows = ceilDiv(PH, wanted);
  p.bands = ceilDiv(PH, p.bandRows);
  while (p.bands > 1 && p.bands % 2 == 1 && (N * p.ocGroups) % 2 == 1) {
    p.bandRows += 1;
    p.bands = ceilDiv(PH, p.bandRows);
  }
  return p;
}

RowRange convRowsOf(const KernelDesc& d, int64_t ph) {
  const int64_t start = ph * d.poolStrides[0] - d.poolPads[0];
  RowRange r{std::max<int64_t>(start, 0), std::min(start + d.poolKernel[0], d.convOutput[2])};
  if (r.end < r.first) r.end = r.first;
  return r;
}

}  // namespace kiln::codegen
