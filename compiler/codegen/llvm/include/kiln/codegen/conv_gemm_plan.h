// The convolution GEMM kernel's policy, in one place: whether a convolution takes the
// register-blocked implicit-GEMM kernel (emit_conv_gemm.cpp) and with which register tile, and
// how its weights are packed at compile time into the tile's panel order. The packer
// (packConvWeights, called by the driver on the dispatch graph before code generation) and the
// emitter both ask convGemmTile, so they always agree. LLVM-free.
//
// The GEMM view of a 2-D convolution (NCHW, groups 1), per image n:
//   Y[OC][OH*OW] = A[OC][K] x B[K][OH*OW],  K = C*KH*KW,  A = the OIHW weights,
//   B[(c, kh, kw)][pixel] = X[c][oh*sh - padTop + kh*dh][ow*sw - padLeft + kw*dw] (0 outside).
// A tile is MR output channels x NR = nrVectors*lanes pixels; its MR x nrVectors
// accumulators stay in vector registers over K.
//
// Packed weights ("panels"): output channels in panels of MR, panel p holding
// A[p*MR + m][k] at p*K*MR + k*MR + m; the last panel, if OC % MR = r != 0, holds its r rows
// as k*r + m. Same bytes count as OIHW (no padding), so buffer sizes never change.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/codegen/kernel_desc.h"
#include "kiln/codegen/target_config.h"

namespace kiln::ir {
struct DispatchGraph;
}

namespace kiln::codegen {

// What the register tiles are sized by: f32 lanes per vector register (0: no tiled kernels,
// e.g. microcontrollers) and the number of architectural vector registers.
struct VectorUnit {
  unsigned lanes = 0;
  unsigned registers = 0;
};
VectorUnit vectorUnitOf(const TargetConfig& target);

struct ConvGemmTile {
  int64_t mr = 0;         // output channels per tile (0: the GEMM kernel does not apply)
  int64_t nrVectors = 0;  // pixel vectors per tile
  int64_t lanes = 0;      // f32 lanes per vector
  bool applies() const { return mr > 0; }
  int64_t nr() const { return nrVectors * lanes; }
};

// The tile for a Conv kernel description on `unit`, or mr = 0 if the GEMM kernel does not
// handle it (grouped or 3-D convolutions, non-f32, epilogues that do not evaluate on vectors,
// no vector unit). Ignores desc.weightPanel.
ConvGemmTile convGemmTile(const KernelDesc& desc, VectorUnit unit);

// A grouped convolution (1 < groups, at least 2 input channels per group: depthwise ones have
// their own kernel) as the GEMM kernels run it: on NCHW, group g of image n reads the input
// channels [g*C/G, (g+1)*C/G) and writes the output channels [g*OC/G, (g+1)*OC/G), runs
// that lie one after another, so the whole is one convolution of groups 1 over N*G images of
// C/G channels into OC/G channels, whose weights and bias are those of group (image % G).
// The view has those shapes and groups 1, and the epilogue keeps the real output shape (an
// output element's linear index is the same in both). Packed weights are panels per group,
// one group's after the other's. Any other description is returned as it is.
KernelDesc groupedView(const KernelDesc& desc);

// Which packed layout (and so which kernel) a convolution whose weights can be packed takes
// on `unit`; Oihw if none of the packed kernels applies. Grouped convolutions (groupedView)
// take the GEMM kernels too, not Winograd or the fused ones.
// mayGrowConstants false (`kiln compile --optimize=size`): only layouts of the weights' own
// size (Winograd transformed by the kernel, never at compile time: those weights are 16/9 or
// 4 times the 3x3 weights).
ConvWeights chooseConvWeights(const KernelDesc& desc, VectorUnit unit,
                              bool mayGrowConstants = true);

// OIHW weights (oc rows of k values) in panel order for panels of `mr` rows (see above); with
// `groups`, each group's oc / groups rows are panelled on their own, one group after the
// other (groupedView).
std::vector<float> packConvWeightPanels(const std::vector<float>& weights, int64_t oc, int64_t k,
                                        int64_t mr, int64_t groups = 1);

// The output-channel-vectorised variant (emit_conv_gemm_oc.cpp, conv_gemm_oc_plan.cpp) for
// small maps: the same microkernel transposed, a tile of `pixels` output pixels (A, broadcast)
// x ocVectors * lanes output channels (B, vectors), so no lanes are wasted on maps of a few
// dozen pixels. Weights packed as [OC/NR][K][NR], NR = oc(): packConvWeightPanels with panels
// of NR rows (the same order: a k step's NR weights are consecutive).
struct OcVectorTile {
  int64_t pixels = 0;     // output pixels per tile (0: the kernel does not apply)
  int64_t ocVectors = 0;  // output-channel vectors per tile
  int64_t lanes = 0;      // f32 lanes per vector
  bool applies() const { return pixels > 0; }
  int64_t oc() const { return ocVectors * lanes; }
};
// The tile for a Conv kernel description on `unit`, or pixels = 0 where the variant cannot
// take it (maps over 256 pixels but for few-channel stems of rows narrower than the
// pixel-vectorised kernel's tile, fewer output channels than a tile, im2col rows over 32
// pixels, and whatever the pixel-vectorised kernel refuses).
OcVectorTile ocVectorTile(const KernelDesc& desc, VectorUnit unit);
// How the variant splits its work into items: per image, groups of output-channel panels
// and, where the pixels are packed per group of tiles (a 1x1 convolution read in place packs
// each tile's pixels; the im2col packs the output rows of the item's tiles), groups of pixel
// tiles of kMinGroupPixels pixels at least (pixelSplit Allowed; Preferred on ties, where the
// packed pixels outweigh the weights: each group of panels packs every pixel again).
// Per image at most the two groups of panels of before (each group packs its pixels again),
// fewer where tile groups share better.
// `panels` output-channel panels of `panelWidth` channels (the last one `lastPanelWidth`),
// `tiles` tiles of `tilePixels` pixels, at least `minOcGroups` groups of panels (the partial
// sums' budget). The counts are those whose items two threads
// share best, equal speeds or one 10 % slower, claimed as the thread pool claims them (an
// output-channel split of 3 panels is 1 : 2; 14 tiles in two groups are 7 : 7), with fewer
// items on ties (each group of panels packs its pixels again, each group of tiles reads the
// weights again).
struct OcVectorItems {
  int64_t ocGroups = 1, pixelGroups = 1;
};
enum class PixelSplit { None, Allowed, Preferred };
// Each tile group reads its panels' weights once more: on 7x7 maps, groups of one or two
// 7-pixel tiles made MobileNetV2's 960 -> 160 convs 19 % slower (84 -> 100 us, sums of
// per-workgroup minimums, 1 thread); halves of a 14x14 map made its 576 -> 96 ones faster.
inline constexpr int64_t kMinGroupPixels = 96;
OcVectorItems ocVectorItems(int64_t images, int64_t panels, int64_t lastPanelWidth,
                            int64_t panelWidth, int64_t tiles, int64_t tilePixels,
                            PixelSplit pixelSplit, int64_t minOcGroups);

// Whether the variant takes the convolution and measurably beats the pixel-vectorised kernel
// on it (chooseConvWeights asks this).
bool ocVectorWins(const KernelDesc& desc, VectorUnit unit);

// For every Conv dispatch that takes the GEMM kernel and whose weights are a constant read by
// no other dispatch or copy: repacks the constant's bytes (in place, same size; Winograd's
// transformed weights are larger: the constants are laid out again) and sets the kernel's
// weightLayout and weightPanel. `kernels` are graph's dispatches lowered (lowerDispatches), in order.
// Returns how many constants were packed.
// mayGrowConstants: as for chooseConvWeights.
int packConvWeights(ir::DispatchGraph& graph, std::vector<KernelDesc>& kernels,
                    const TargetConfig& target, bool mayGrowConstants = true);

}  // namespace kiln::codegen
