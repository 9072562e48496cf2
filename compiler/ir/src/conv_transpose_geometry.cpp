// Geometry of ConvTranspose (ONNX opset 17): resolves strides, dilations, output_padding,
// pads, auto_pad and output_shape into explicit per-dim values and the output size. Shared by
// the type rule and the code generator so that they agree.
#include "kiln/ir/window_geometry.h"
#include "rule_helpers.h"

namespace kiln::ir {

using rules::fail;

namespace {

std::vector<int64_t> perDim(const AttributeMap& attrs, const char* name, size_t n,
                            int64_t fallback) {
  std::vector<int64_t> values = attrs.getInts(name, std::vector<int64_t>(n, fallback));
  if (values.size() != n)
    fail(std::string(name) + " has " + std::to_string(values.size()) + " values, expected " +
         std::to_string(n));
  return values;
}

}  // namespace

ConvTransposeGeometry computeConvTransposeGeometry(const Shape& inputSpatial,
                                                   std::vector<int64_t> kernel,
                                                   const AttributeMap& attrs) {
  size_t n = inputSpatial.size();
  ConvTransposeGeometry g;
  g.kernel = std::move(kernel);
  if (g.kernel.size() != n)
    fail("kernel_shape has " + std::to_string(g.kernel.size()) + " dims, expected " +
         std::to_string(n));
  g.strides = perDim(attrs, "strides", n, 1);
  g.dilations = perDim(attrs, "dilations", n, 1);
  g.outputPadding = perDim(attrs, "output_padding", n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (g.strides[i] < 1 || g.dilations[i] < 1 || g.kernel[i] < 1)
      fail("kernel, strides and dilations must be positive");
    if (g.outputPadding[i] < 0) fail("output_padding must not be negative");
  }
  std::string autoPad = attrs.getString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    fail("auto_pad '" + autoPad + "' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  // The full (unpadded) output size of dim i.
  auto full = [&](size_t i) {
    return g.strides[i] * (inputSpatial[i] - 1) + g.outputPadding[i] +
           (g.kernel[i] - 1) * g.dilations[i] + 1;
  };
  g.pads.assign(2 * n, 0);
  g.output.resize(n);
  std::vector<int64_t> wanted = attrs.getInts("output_shape", {});
  if (!wanted.empty() && wanted.size() == n + 2) wanted.erase(wanted.begin(), wanted.begin() + 2);
  if (!wanted.empty() && wanted.size() != n)
    fail("output_shape has " + std::to_string(wanted.size()) + " values, expected " +
         std::to_string(n));
  if (wanted.empty() && (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")) {
    for (size_t i = 0; i < n; ++i) wanted.push_back(inputSpatial[i] * g.strides[i]);
  }
  if (!wanted.empty()) {
    // The padding that gives the requested size, split as ONNX's reference does.
    for (size_t i = 0; i < n; ++i) {
      int64_t total = full(i) - wanted[i];
      if (total < 0)
        fail("output_shape " + std::to_string(wanted[i]) + " is larger than the full output " +
             std::to_string(full(i)));
      int64_t half = total / 2;
      g.pads[i] = autoPad == "SAME_UPPER" ? half : total - half;
      g.pads[i + n] = total - g.pads[i];
      g.output[i] = wanted[i];
    }
    return g;
  }
  if (autoPad == "NOTSET") g.pads = perDim(attrs, "pads", 2 * n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (g.pads[i] < 0 || g.pads[i + n] < 0) fail("pads must not be negative");
    g.output[i] = full(i) - g.pads[i] - g.pads[i + n];
    if (g.output[i] < 1)
      fail("pads " + std::to_string(g.pads[i]) + " + " + std::to_string(g.pads[i + n]) +
           " leave no output along spatial dim " + std::to_string(i));
  }
  return g;
}

}  // namespace kiln::ir
