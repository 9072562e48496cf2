// The few-channel convolutions' B source (emit_conv_pool.cpp): per convolution row, each
// input row it reads (channel c, kernel row kh) split once by the width stride sw into
// phase planes, plane p holding input columns sw * j + p - padLeft for j in [0, length)
// (zeros outside the image, and the whole row when it lies outside), so that tap kw of
// output pixel ow is plane kw % sw at ow + kw / sw: one plain vector load per tap and
// vector of pixels, no im2col panels. Vector block j of every plane comes from sw x lanes
// consecutive input floats (plain loads inside the row, loads with constant masks at its
// ends: the columns are static, only the row varies), split by the stride's shuffles.
#pragma once

#include <llvm/IR/Value.h>

#include <cstdint>

namespace kiln::codegen::detail {

class KernelBuilder;

struct PlaneShape {
  int64_t c = 0, h = 0, w = 0;  // input channels and map
  int64_t kh = 0;               // kernel rows
  int64_t sw = 1;               // width stride: phases per input row
  int64_t padLeft = 0;
  int64_t length = 0;  // floats per plane, whole vectors
};

// Emits the planes of the c x kh input rows top + kh (an index value; rows outside the
// image give zeros) of the image at element xImage of binding 0 into the f32 buffer
// `planes`: plane (c, kh, p) at ((c * s.kh + kh) * s.sw + p) * s.length, 32-byte aligned
// vector stores.
void emitInputPlanes(KernelBuilder& kb, const PlaneShape& s, llvm::Value* planes,
                     llvm::Value* xImage, llvm::Value* top);

// Emits prefetches (to L1) of the input rows top + kh, kh in [firstRow, s.kh), of every
// channel: the rows the next convolution row reads that this one did not, fetched while
// this one computes (the planes' loads from the input missed the caches: 17 % of
// SqueezeNet's stem on Zen 5 AVX-512). Rows outside the image are prefetched all the same
// (a prefetch never faults).
void emitPrefetchInputRows(KernelBuilder& kb, const PlaneShape& s, llvm::Value* xImage,
                           llvm::Value* top, int64_t firstRow);

}  // namespace kiln::codegen::detail
