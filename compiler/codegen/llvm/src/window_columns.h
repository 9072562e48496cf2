// The innermost loop shared by the plain convolution and pooling emitters: for each kernel
// column kw, the output columns ow whose input column iw = ow * stride + kw * dilation -
// padBegin lies inside the image, so the body never tests bounds. Narrow kernels are unrolled
// (each column's range is a compile-time constant, which LLVM vectorizes well); wide kernels
// loop over kw at run time with ranges computed there, so code size stays bounded (a
// 200-wide 1-D window unrolled gave 80 KB of code and took 14 s to compile).
#pragma once

#include <cstdint>
#include <functional>

#include "kernel_builder.h"

namespace kiln::codegen::detail {

struct WindowColumns {
  int64_t kernel = 1;    // KW
  int64_t stride = 1;    // sw
  int64_t dilation = 1;  // dw
  int64_t padBegin = 0;  // left padding
  int64_t inWidth = 1;   // W
  int64_t outWidth = 1;  // OW
};

// Kernels at most this wide are unrolled column by column.
inline constexpr int64_t kMaxUnrolledWindowColumns = 16;

// perColumn(kw) runs once per kernel column before its output loop (e.g. to load the
// column's weight) and may return a value, or nullptr; body(ow, iw, columnValue) runs inside
// the loop. kw, ow (output column) and iw (input column) are of KernelBuilder::indexType().
using WindowColumnSetup = std::function<llvm::Value*(llvm::Value* kw)>;
using WindowColumnBody =
    std::function<void(llvm::Value* ow, llvm::Value* iw, llvm::Value* columnValue)>;

void forEachWindowColumn(KernelBuilder& kb, const WindowColumns& w,
                         const WindowColumnSetup& perColumn, const WindowColumnBody& body);

}  // namespace kiln::codegen::detail
