// Geometry of sliding-window ops (Conv, MaxPool, AveragePool): resolves ONNX's auto_pad,
// defaults and ceil_mode into explicit per-dim kernel, stride, dilation, pads and output
// sizes. Shared by the shape rules, canonicalization and codegen so they agree.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/ir/attribute.h"
#include "kiln/ir/type.h"

namespace kiln::ir {

struct WindowGeometry {
  std::vector<int64_t> kernel;     // per spatial dim
  std::vector<int64_t> strides;    // default 1
  std::vector<int64_t> dilations;  // default 1
  std::vector<int64_t> pads;       // [begin_0, begin_1, ..., end_0, end_1, ...] (ONNX order)
  std::vector<int64_t> output;     // output spatial sizes
};

// `inputSpatial` are the input's spatial dims; `kernel` the window size (Conv: the weight's
// spatial dims unless kernel_shape says otherwise). Reads auto_pad, strides, dilations, pads
// and (if `allowCeilMode`) ceil_mode from `attrs`. Throws CompileError on inconsistent
// attributes or an empty output.
WindowGeometry computeWindowGeometry(const Shape& inputSpatial, std::vector<int64_t> kernel,
                                     const AttributeMap& attrs, bool allowCeilMode);

// ConvTranspose: the same fields plus output_padding; `output` is the result's spatial size
// and `pads` what is cropped from the full result (begin..., end...). Reads auto_pad,
// strides, dilations, pads, output_padding and output_shape. Throws CompileError.
struct ConvTransposeGeometry : WindowGeometry {
  std::vector<int64_t> outputPadding;
};
ConvTransposeGeometry computeConvTransposeGeometry(const Shape& inputSpatial,
                                                   std::vector<int64_t> kernel,
                                                   const AttributeMap& attrs);

}  // namespace kiln::ir
