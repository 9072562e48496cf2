// Rule entry point (arity checks), numpy broadcasting, axis normalisation and the
// sliding-window geometry shared by Conv and the pools.
#include <algorithm>

#include "kiln/ir/window_geometry.h"
#include "rule_helpers.h"

namespace kiln::ir {

using rules::fail;

RuleResult inferResultTypes(const RuleInput& in) {
  const OpInfo& info = opInfo(in.kind);
  int n = int(in.operands.size());
  if (n < info.minOperands || (info.maxOperands >= 0 && n > info.maxOperands)) {
    std::string expected =
        info.maxOperands < 0 ? "at least " + std::to_string(info.minOperands)
        : info.minOperands == info.maxOperands
            ? std::to_string(info.minOperands)
            : std::to_string(info.minOperands) + " to " + std::to_string(info.maxOperands);
    fail("has " + std::to_string(n) + " operands, expected " + expected);
  }
  for (int i = 0; i < n; ++i)
    if (!in.operands[size_t(i)] && i < info.minOperands)
      fail("operand " + std::to_string(i) + " is required but absent");
  if (info.numResults >= 0 && in.numResults != size_t(info.numResults))
    fail("has " + std::to_string(in.numResults) + " results, expected " +
         std::to_string(info.numResults));
  RuleResult result = info.rule(in);
  KILN_ASSERT(result.types.size() == in.numResults,
              "rule of " + std::string(info.name) + " returned a wrong number of types");
  return result;
}

Shape broadcastShapes(const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      fail("shapes " + shapeToString(a) + " and " + shapeToString(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

bool broadcastsTo(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[i + offset]) return false;
  return true;
}

int64_t normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

WindowGeometry computeWindowGeometry(const Shape& inputSpatial, std::vector<int64_t> kernel,
                                     const AttributeMap& attrs, bool allowCeilMode) {
  size_t n = inputSpatial.size();
  WindowGeometry g;
  g.kernel = std::move(kernel);
  if (g.kernel.size() != n)
    fail("kernel_shape has " + std::to_string(g.kernel.size()) + " dims, expected " +
         std::to_string(n));
  g.strides = attrs.getInts("strides", std::vector<int64_t>(n, 1));
  g.dilations = attrs.getInts("dilations", std::vector<int64_t>(n, 1));
  if (g.strides.size() != n)
    fail("strides has " + std::to_string(g.strides.size()) + " values, expected " +
         std::to_string(n));
  if (g.dilations.size() != n)
    fail("dilations has " + std::to_string(g.dilations.size()) + " values, expected " +
         std::to_string(n));
  for (size_t i = 0; i < n; ++i) {
    if (g.strides[i] < 1 || g.dilations[i] < 1 || g.kernel[i] < 1)
      fail("kernel, strides and dilations must be positive");
  }
  std::string autoPad = attrs.getString("auto_pad", "NOTSET");
  bool ceilMode = allowCeilMode && attrs.getInt("ceil_mode", 0) != 0;
  g.pads.assign(2 * n, 0);
  g.output.resize(n);
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < n; ++i) {
      int64_t out = (inputSpatial[i] + g.strides[i] - 1) / g.strides[i];
      int64_t extent = (g.kernel[i] - 1) * g.dilations[i] + 1;
      int64_t total = std::max<int64_t>(0, (out - 1) * g.strides[i] + extent - inputSpatial[i]);
      int64_t small = total / 2, big = total - small;
      g.pads[i] = autoPad == "SAME_UPPER" ? small : big;
      g.pads[i + n] = autoPad == "SAME_UPPER" ? big : small;
      g.output[i] = out;
    }
    return g;
  }
  if (autoPad == "NOTSET") {
    g.pads = attrs.getInts("pads", std::vector<int64_t>(2 * n, 0));
    if (g.pads.size() != 2 * n)
      fail("pads has " + std::to_string(g.pads.size()) + " values, expected " +
           std::to_string(2 * n));
    for (int64_t p : g.pads)
      if (p < 0) fail("pads must not be negative");
  } else if (autoPad != "VALID") {
    fail("auto_pad '" + autoPad + "' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  }
  for (size_t i = 0; i < n; ++i) {
    int64_t extent = (g.kernel[i] - 1) * g.dilations[i] + 1;
    int64_t span = inputSpatial[i] + g.pads[i] + g.pads[i + n] - extent;
    if (span < 0)
      fail("window of extent " + std::to_string(extent) + " does not fit input size " +
           std::to_string(inputSpatial[i]) + " plus padding");
    int64_t out = ceilMode ? (span + g.strides[i] - 1) / g.strides[i] + 1 : span / g.strides[i] + 1;
    // With ceil_mode the last window must start inside the input or its begin padding.
    if (ceilMode && (out - 1) * g.strides[i] >= inputSpatial[i] + g.pads[i]) --out;
    g.output[i] = out;
  }
  return g;
}

}  // namespace kiln::ir
