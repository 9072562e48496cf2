// The fused Conv + MaxPool kernel's policy (emit_conv_pool.cpp), in one place: whether the
// convolution runs on the GEMM microkernel (then its weights are packed in GemmPanels, as
// chooseConvWeights asks here) and how the work splits. LLVM-free.
//
// Work items are (image, group of output channels, band of pooled rows). For each pooled
// row of its band an item computes the convolution rows of the window it has not computed
// yet into a ring of pool-kernel-height row buffers on the stack (one row per output channel
// of the group, -inf around the row so the pool's padding and ceil-mode windows need no
// tests), then pools the window: the max over its rows into one row, then over its columns,
// stored once. Convolution rows read by two bands (kernel > stride) are computed by both;
// bands are few and tall so that costs little (ResNet-18 and SqueezeNet: 8 bands of 7
// pooled rows, 15 convolution rows for 14; 4 bands of 14 were 3-5 % faster on one thread,
// but on two threads of the loaded machine one late item left a thread with 3 of 4).
#pragma once

#include <cstdint>

#include "kiln/codegen/conv_gemm_plan.h"
#include "kiln/codegen/kernel_desc.h"

namespace kiln::codegen {

// Whether a pooled convolution (KernelDesc::pooled) runs on the GEMM microkernel with
// im2col row tiles and vector pooling: convGemmTile takes it and the pool's width stride is
// 1-4. Else the kernel's plain loops run it (weights OIHW).
bool convPoolVectorised(const KernelDesc& d, VectorUnit unit);

struct ConvPoolPlan {
  int64_t lanes = 1;       // f32 lanes of the row buffers' vectors (1: plain loops)
  int64_t panelRows = 1;   // output channels per weights panel (MR; 1: plain loops)
  int64_t ocPerGroup = 1;  // output channels per item (a multiple of panelRows)
  int64_t ocGroups = 1;
  int64_t bandRows = 1;  // pooled rows per band (the last band may be shorter)
  int64_t bands = 1;
  int64_t rowLen = 0;   // floats per channel and row in the ring of convolution rows
  int64_t rowLeft = 0;  // where the row starts in it (-inf before: the pool's left pad)
  int64_t items(int64_t images) const { return images * ocGroups * bands; }
};

// The split for `d` with panels of `panelRows` channels, vectors of `lanes` floats and
// convolution tiles of `tileWidth` pixels (1, 1, 1 for the plain loops).
ConvPoolPlan convPoolPlan(const KernelDesc& d, int64_t panelRows, int64_t lanes, int64_t tileWidth);

// Whether the vectorised kernel reads B from input planes (few channels) instead of im2col
// row tiles: per convolution row, each input row it reads (channel, kernel row) split once
// into stride-phase planes of planeFloats(d, tile) / (C * KH * sw) floats each, all of
// them in L1; dilation 1, width stride 1-4, kernel width up to 9. `d` is pooled.
bool convPoolPlanes(const KernelDesc& d, const ConvGemmTile& tile);
int64_t convPlaneLength(const KernelDesc& d, const ConvGemmTile& tile);

// Whether a convolution that is not pooled takes this kernel all the same, storing its rows
// straight to the output (no pool): the few-channel stems (at most 4 input channels) that
// read planes, with an epilogue that reads no other tensor. MobileNetV2's 3x3 s2 3 -> 32
// packed im2col tiles for only 32 output channels, a third of its time.
bool convStemDirect(const KernelDesc& d, VectorUnit unit);

// The pooled view of `d`: d itself if pooled, else d with an identity pool (1x1, stride 1).
KernelDesc pooledView(const KernelDesc& d);

// Convolution rows [first, end) that pooled row `ph` reads (empty if its window lies in the
// padding).
struct RowRange {
  int64_t first = 0, end = 0;
};
RowRange convRowsOf(const KernelDesc& d, int64_t ph);

}  // namespace kiln::codegen
