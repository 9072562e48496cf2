// The Winograd convolution kernel's policy and its compile-time weight transform, in one
// place (emit_conv_winograd.cpp is the kernel). LLVM-free.
//
// Winograd F(m x m, 3 x 3) computes an m x m block of outputs of a 3x3, stride-1 convolution
// from an alpha x alpha input tile (alpha = m + 2) with alpha^2 multiplies per (output
// channel, input channel) instead of 9 m^2:
//   Y = A^T [ sum_c (G g_c G^T) .* (B^T d_c B) ] A
// The sum over c at each of the alpha^2 positions is a matrix product
//   M[pos][OC][tiles] = U[pos][OC][C] x V[pos][C][tiles],
// with U = G g G^T transformed at compile time and V = B^T d B per input tile at run time.
// F(2x2, 3x3): 16/36 of the multiplies; F(4x4, 3x3): 36/144 (a little more rounding and
// transform work).
//
// Transformed weights ("U panels"): output channels in panels of the GEMM tile's mr; panel p
// holds, for each position pos (row-major over alpha x alpha) in turn, U[pos][p*mr + m][c] at
// p*mr*positions*C + (pos*C + c)*mr + m, so that the kernel streams them in order; the last
// panel, if OC % mr = r != 0, holds its r rows the same way with r for mr. alpha^2 * OC * C
// floats in all, more than the OIHW weights (16/9 or 4x): the constant grows when packed.
//
// Or the kernel transforms the weights itself (ConvWeights::WinogradPanels), per panel and
// run of input channels (winogradTransformChannels; the channel blocks of winogradBlocks in
// runs, the last of a block shorter) into a stack buffer, from the 3x3 taps packed as
// [panel][run][tap][c][rows] (tap = kh * 3 + kw; same size as OIHW): per tap, the (c, row)
// pairs of the run are consecutive floats, so the transform is elementwise over whole vectors
// of them, and a panel's runs are one stream. It uses G = D H with D diagonal (G's rows scaled to a
// leading 1) and H of small integers only, U' = H g H^T, and moves D to the inputs' side, V' = D
// (B^T d B) D: U' .* V' = U .* V at every position, and U' costs a few adds per vector of pairs.
// (On AVX-512 the kernel computes U = G g G^T itself instead, one fused multiply-add per term,
// and leaves V unscaled: emit_conv_winograd.cpp's transformWithG.)
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/codegen/conv_gemm_plan.h"

namespace kiln::codegen {

struct WinogradPlan {
  int64_t m = 0;      // output tile size (2 or 4); 0: the Winograd kernel does not apply
  ConvGemmTile tile;  // the GEMM register tile of the per-position products
  // Whether the kernel transforms the weights itself (WinogradPanels) rather than reading
  // them transformed at compile time (Winograd): where the stored transform would be large
  // (winograd_plan.cpp has the measurements).
  bool transformInKernel = false;
  bool applies() const { return m > 0; }
  int64_t alpha() const { return m + 2; }
  int64_t positions() const { return alpha() * alpha(); }
};

// The plan for a Conv kernel description on `unit`: groups 1, f32, 3x3, stride 1,
// dilation 1, any pads, an epilogue the GEMM kernel's tiles take, enough channels to pay for
// the transforms, and enough tiles to fill the vectors (products over whole vectors of tiles
// at most 3/4 of the direct multiplies: not on maps of a few tiles); m = 0 otherwise. F(4x4)
// unless the map is small or its transformed inputs would not fit one channel block (then
// F(2x2)).
WinogradPlan winogradPlan(const KernelDesc& desc, VectorUnit unit);

// How the kernel blocks a convolution with output tile m: the output map in tileRows x
// tileCols tiles; blocks of blockRows tile rows (tile (r, c) of a block in slot
// r * tileCols + c; the products are `slots` wide, the tiles rounded up to whole vectors);
// the input channels in blocks of blockC (the transformed block, positions x blockC x slots
// floats, stays within the kernel's stack budget).
struct WinogradBlocks {
  int64_t tileRows = 0, tileCols = 0, rowVectors = 0;  // rowVectors: vectors per tile row
  int64_t blockRows = 0, rowBlocks = 0, slots = 0;
  int64_t blockC = 0, channelBlocks = 0;
};
WinogradBlocks winogradBlocks(const KernelDesc& desc, const ConvGemmTile& tile, int64_t m);
// Where every input channel's transform fits one channel block and there are fewer (image,
// block of tile rows) tasks than kWorkQueueThreads, the kernel shares its output-channel
// panels through work queues (work_queue.h): one task per (image, block of tile rows), its
// panels claimed one at a time by every thread that joins it, so the input transform is done
// once per thread and task rather than once per fixed group of panels, and a thread that
// finishes early helps with a task still running. winogradSharedTasks gives that task count, 0
// where the kernel's workgroups take fixed shares instead: items of kWinogradMinItems at least
// (enough for a few threads), output-channel groups where the tasks are fewer.
inline constexpr int64_t kWinogradMinItems = 4;
int64_t winogradSharedTasks(const KernelDesc& desc, VectorUnit unit);

// The output rows at which the kernel's blocks of tile rows begin, and the output's height
// last: 0 = b[0] < ... < b[rowBlocks] = OH (a kernel description the Winograd kernel takes,
// its winogradTile set). The pool's threads take contiguous runs of these blocks.
std::vector<int64_t> winogradRowBoundaries(const KernelDesc& desc, VectorUnit unit);

// Whether the kernel's transforms take vectors of L consecutive slots across tile rows
// ("packed": lane e of a block's vector v is the tile of slot v * L + e) rather than L tiles
// of one tile row: where a tile row has at most half a vector of tiles (AVX-512: 13x13/14x14
// F(4x4) and 7x7 F(2x2), 4 tiles; 27x27/28x28 F(4x4), 7; AVX2: the 4-tile ones), so that
// every lane of the transforms does work (lane permutes gather a vector from several rows).
// Not below 8 lanes (SSE, NEON: maps of 2 tiles per row; not measured).
inline bool winogradPackedSlots(const WinogradBlocks& blocks, int64_t lanes) {
  return lanes >= 8 && blocks.tileCols * 2 <= lanes;
}
inline bool winogradApplies(const KernelDesc& desc, VectorUnit unit) {
  return winogradPlan(desc, unit).applies();
}

// The transform matrices of F(m x m, 3 x 3), row-major: B^T (alpha x alpha), G (alpha x 3),
// A^T (m x alpha); G = diag(d) H with H's rows led by 1 (or 0, 0, 1): H (alpha x 3), d
// (alpha).
struct WinogradMatrices {
  int64_t m = 0, alpha = 0;
  std::vector<double> bt, g, at;
  std::vector<double> h, d;
};
WinogradMatrices winogradMatrices(int64_t m);

// OIHW 3x3 weights (oc x c x 3 x 3) transformed to U panels (see above), computed in double.
std::vector<float> winogradTransformWeights(const std::vector<float>& weights, int64_t oc,
                                            int64_t c, int64_t m, int64_t mr);

// OIHW 3x3 weights (oc x c x 3 x 3) in the panels the kernel transforms itself (see above),
// the channels in blocks of blockC and those in runs of `run`: panel p of rows = min(mr, oc -
// p * mr) output channels at p * mr * 9 * c, the run of n channels from channel c0 at
// 9 * c0 * rows within it, tap t of its channel c0 + i and row r at (t * n + i) * rows + r.
// Same size as the weights.
std::vector<float> winogradPackTaps(const std::vector<float>& weights, int64_t oc, int64_t c,
                                    int64_t mr, int64_t blockC, int64_t run);

// Input channels per weight transform of the kernel (WinogradPanels) in channel blocks of
// blockC: the transformed weights of one panel of `mr` rows and that many channels,
// positions x channels x mr floats, stay within 48 KB; a multiple of 4 (whole vectors of 8
// with mr = 6), at most blockC.
int64_t winogradTransformChannels(int64_t m, int64_t mr, int64_t blockC);

}  // namespace kiln::codegen
