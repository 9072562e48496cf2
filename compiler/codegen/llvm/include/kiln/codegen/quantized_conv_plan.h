// The int8 convolution with output channels in vector lanes (emit_quantized_conv_oc.cpp), in
// one place: which quantized convolutions take it on a target, with how many lanes, and how
// their weights are packed at compile time. The packer (packConvWeights) and the emitter both
// ask int8OcLanes, so they always agree. LLVM-free.
//
// The kernel broadcasts four consecutive input channels of one pixel (4 bytes of NHWC x) to
// every i32 lane and multiplies them, with one dot-product instruction (x86 vpdpbusd, AArch64
// sdot), by four input channels of L output channels: the packed weights hold, per block of L
// output channels, per tap (kh * KW + kw), per group of four input channels, L x 4 bytes:
//   packed[(((block * taps + tap) * (C / 4) + c4) * L + lane) * 4 + j]
//     = w[block * L + lane][kh][kw][c4 * 4 + j]          (w: the model's OHWI weights)
// The same bytes count as OHWI (C and OC are multiples of 4 and of L).
//
// Row spans: where C is not a multiple of 4 (the first layer of an image model, C = 1..3)
// but a kernel row's KW taps are contiguous in x (dilation 1), the kernel reduces over whole
// kernel rows instead, KW * C bytes rounded up to R (a multiple of 4) with zero weights past
// KW * C:
//   packed[(((block * KH + kh) * (R / 4) + r4) * L + lane) * 4 + j]
//     = w[block * L + lane][kh][e / C][e % C] for e = r4 * 4 + j < KW * C, else 0.
// These are larger than OHWI (OC x KH x R bytes), so only with constants allowed to grow.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/codegen/kernel_desc.h"
#include "kiln/codegen/target_config.h"

namespace kiln::codegen {

// The dot-product instructions the kernel can use on a target, with the i32 lanes of the
// widest vectors they take: x86 AVX512-VNNI 16 (512-bit vpdpbusd), AVX-VNNI 8, AArch64
// +dotprod 4; 0 where there are none (or on microcontrollers).
int64_t int8OcTargetLanes(const TargetConfig& target);

// The lanes L the kernel uses for `desc` with at most `targetLanes` (int8OcTargetLanes), or 0
// where it does not take the convolution: it needs an int8 Conv of groups 1 with int8 output,
// i32 or no bias, OC a multiple of 4 (L: the largest of 16, 8, 4 dividing OC), and C a
// multiple of 4 or row spans (int8OcRowBytes) where `mayGrowConstants`, and a row buffer of
// at most 64 KB.
int64_t int8OcLanes(const KernelDesc& desc, int64_t targetLanes, bool mayGrowConstants);

// R, the bytes of a kernel row's span, where the kernel reduces over row spans (C not a
// multiple of 4, dilation 1 along the width, R at most 64); 0 where it reduces tap by tap.
int64_t int8OcRowBytes(const KernelDesc& desc);

// The columns of the kernel's row buffer: the input row with its padding on both sides, as
// many pixels as the windows of one output row span (the kernel copies the KH input rows of
// each output row there, KH x columns x C bytes, at most 64 KB).
int64_t int8OcBufferColumns(const KernelDesc& desc);

// OHWI weights [oc][taps][c] in the packed order above (L = lanes).
std::vector<int8_t> packInt8OcWeights(const std::vector<int8_t>& ohwi, int64_t oc, int64_t taps,
                                      int64_t c, int64_t lanes);
// OHWI weights [oc][kh][kw * c] in the row-span order above (R = rowBytes).
std::vector<int8_t> packInt8OcRowWeights(const std::vector<int8_t>& ohwi, int64_t oc, int64_t kh,
                                         int64_t kwc, int64_t rowBytes, int64_t lanes);

}  // namespace kiln::codegen
