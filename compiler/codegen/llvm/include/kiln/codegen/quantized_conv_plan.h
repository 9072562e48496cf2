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
// i32 or no bias, C a multiple of 4 and OC of 4 (L: the largest of 16, 8, 4 dividing OC).
int64_t int8OcLanes(const KernelDesc& desc, int64_t targetLanes);

// OHWI weights [oc][taps][c] in the packed order above (L = lanes).
std::vector<int8_t> packInt8OcWeights(const std::vector<int8_t>& ohwi, int64_t oc, int64_t taps,
                                      int64_t c, int64_t lanes);

}  // namespace kiln::codegen
