// The convolution GEMM's im2col packing (emit_conv_gemm.cpp): one pixel tile's B panel,
// row (channel, tap) x NR floats, on the stack, with zeros where a tap falls in the padding.
// How a tap's lanes are read depends on the tile and the stride (Im2colRead):
//  - Contiguous: consecutive lanes are consecutive inputs (row tiles with width stride 1, or
//    any tile when stride 1 keeps the width so the input offset is pixel + constant): one
//    masked vector load per vector;
//  - Strided: row tiles with width stride 2-4: one load of stride x lanes (as `stride`
//    registers), then a shuffle keeps every stride-th lane;
//  - Segments: tiles that cross output rows (flattened over rows narrower than a tile, or
//    tiles over a group of rows) with stride 1-4: the lanes of one vector lie on a few output
//    rows (segments); each segment reads one strided run of one input row, so a vector is a
//    few masked loads with the segment's lanes on, OR-ed together, then the stride shuffle.
//    No gathers: LLVM scalarises those on AVX2 (per lane a test, a load and an insert);
//  - Gather: anything else (stride > 4, or rows so short a vector spans many of them).
// The masks (tile width, padding, segment) are computed per register of the load in its own
// lanes, once per tap outside the loop over channels (the row test once per kernel row);
// a row tile's tap whose loads lie inside the input row uses plain loads.
#pragma once

#include <llvm/IR/Value.h>

#include <cstdint>

namespace kiln::codegen::detail {

class KernelBuilder;

// The convolution's geometry (one image, NCHW, 2-D).
struct Im2colShape {
  int64_t c = 0, h = 0, w = 0;             // input channels and map
  int64_t kh = 0, kw = 0;                  // kernel
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;  // strides, dilations
  int64_t padTop = 0, padLeft = 0;
  int64_t oh = 0, ow = 0;  // output map
};

enum class Im2colRead { Contiguous, Strided, Segments, Gather };

// How tiles (`lanes` f32 per vector) read their taps: tiles along output rows (`rowTiles`)
// or flattened over the map.
Im2colRead im2colReadFor(const Im2colShape& s, bool rowTiles, unsigned lanes);

// Emits the packing of channels [c0, c0 + count) of one tile of `width` pixels starting at
// flat output pixel p0 (of the image whose first input element is xImage, an element index of
// binding 0) into the f32 buffer `panel` from element `tileBase`: row
// (c - c0) * KH * KW + tap holds the tap's input for each of the tile's pixels, NR floats a
// row (lanes past `width` are 0).
void emitIm2colTile(KernelBuilder& kb, const Im2colShape& s, bool rowTiles, int64_t nr,
                    llvm::Value* panel, llvm::Value* tileBase, llvm::Value* xImage, llvm::Value* c0,
                    int64_t count, llvm::Value* p0, int64_t width);

}  // namespace kiln::codegen::detail
