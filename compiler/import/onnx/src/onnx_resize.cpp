// Resize (opset 11+ form, and old Upsample nodes) imported as per-axis gathers: shapes are
// static, so for every resized axis the source coordinate of each output index is computed
// here, in double precision as ONNX's reference does, and the axis becomes
//   nearest:       Gather(x, idx)
//   linear/cubic:  sum over taps t of Gather(x, idx_t) * w_t   (w_t broadcast along the axis)
// with edge indices clamped (ONNX pads the edges). Modes: nearest (round_prefer_floor,
// round_prefer_ceil, floor, ceil), linear, cubic (cubic_coeff_a, exclude_outside);
// coordinate transforms half_pixel, pytorch_half_pixel, align_corners, asymmetric. Nodes from
// models of opsets 7-10 (Upsample, Resize-10) keep their asymmetric / floor semantics.
#include <array>
#include <cmath>

#include "kiln/ir/constant_data.h"
#include "onnx_translators.h"

namespace kiln::import::detail {

using ir::DType;
using ir::TensorType;

namespace {

struct AxisTaps {
  std::vector<std::vector<int64_t>> indices;  // per tap: input index of each output index
  std::vector<std::vector<double>> weights;   // per tap (empty for nearest)
};

double sourceCoordinate(const std::string& transform, double out, double scale, int64_t inLen,
                        int64_t outLen) {
  if (transform == "half_pixel") return (out + 0.5) / scale - 0.5;
  if (transform == "pytorch_half_pixel") return outLen > 1 ? (out + 0.5) / scale - 0.5 : 0.0;
  if (transform == "align_corners")
    return outLen == 1 ? 0.0 : out * double(inLen - 1) / double(outLen - 1);
  return out / scale;  // asymmetric
}

int64_t clampIndex(int64_t i, int64_t len) { return i < 0 ? 0 : i >= len ? len - 1 : i; }

int64_t nearestIndex(const std::string& mode, double x) {
  double f = std::floor(x);
  double ratio = x - f;
  if (mode == "floor") return int64_t(f);
  if (mode == "ceil") return int64_t(std::ceil(x));
  if (mode == "round_prefer_ceil") return int64_t(ratio >= 0.5 ? f + 1 : f);
  return int64_t(ratio > 0.5 ? f + 1 : f);  // round_prefer_floor
}

// Keys cubic convolution weights of the 4 neighbours floor(x) - 1 .. floor(x) + 2.
std::array<double, 4> cubicWeights(double ratio, double a) {
  auto w = [a](double d) {
    d = std::fabs(d);
    if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
    if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    return 0.0;
  };
  return {w(ratio + 1), w(ratio), w(1 - ratio), w(2 - ratio)};
}

}  // namespace

std::vector<ir::Value*> translateResize(OnnxTranslation& t, const OnnxNode& node,
                                        std::optional<ir::OpKind>) {
  for (const auto& [name, type] : node.otherAttrs)
    t.fail(node, "attribute '" + name + "' of type " + type + " is not supported");
  ir::Value* x = node.inputs.at(0);
  const ir::Shape& in = x->shape();
  const size_t rank = in.size();
  const bool upsample = node.opType == "Upsample";
  // Operands: Resize(X, roi?, scales?, sizes?); Upsample(X, scales).
  ir::Value* scalesValue = upsample ? (node.inputs.size() > 1 ? node.inputs[1] : nullptr)
                                    : (node.inputs.size() > 2 ? node.inputs[2] : nullptr);
  ir::Value* sizesValue = !upsample && node.inputs.size() > 3 ? node.inputs[3] : nullptr;
  auto contents = [&](ir::Value* v, const char* what) -> std::optional<std::vector<double>> {
    if (!v || v->type().numElements() == 0) return std::nullopt;
    if (v->isConstant()) return ir::constantDoubles(v);
    if (auto tracked = t.shapeValues.get(v))
      return std::vector<double>(tracked->begin(), tracked->end());
    t.fail(node, std::string(what) + " ('" + v->name() +
                     "') is known only at run time; kiln needs static shapes: make it a "
                     "constant in the model" +
                     (v->isInput() ? ", or give its values when compiling: --fix-input=" +
                                         v->name() + "=@VALUES.npy"
                                   : std::string()));
  };
  std::optional<std::vector<double>> scales = contents(scalesValue, "scales");
  std::optional<std::vector<double>> sizes = contents(sizesValue, "sizes");
  if (!scales && !sizes) t.fail(node, "has neither scales nor sizes");
  if ((scales && scales->size() != rank) || (sizes && sizes->size() != rank))
    t.fail(node, "scales/sizes must have one value per input dim (" + std::to_string(rank) + ")");

  std::string mode = node.attrs.getString("mode", "nearest");
  // Upsample (opsets 7-9) and Resize-10 map output index i to i / scale and take the floor for
  // nearest. libonnx's version converter turns them into opset-11+ Resize nodes without
  // setting that mode, whose defaults (half_pixel, round_prefer_floor) differ.
  bool legacy = upsample || t.sourceOpset < 11;
  std::string transform =
      node.attrs.getString("coordinate_transformation_mode", legacy ? "asymmetric" : "half_pixel");
  std::string nearestMode =
      node.attrs.getString("nearest_mode", legacy ? "floor" : "round_prefer_floor");
  double cubicA = node.attrs.getFloat("cubic_coeff_a", -0.75f);
  bool excludeOutside = node.attrs.getInt("exclude_outside", 0) != 0;
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    t.fail(node, "mode '" + mode + "' is not supported (nearest, linear, cubic)");
  if (transform != "half_pixel" && transform != "pytorch_half_pixel" &&
      transform != "align_corners" && transform != "asymmetric")
    t.fail(node, "coordinate_transformation_mode '" + transform +
                     "' is not supported (half_pixel, pytorch_half_pixel, align_corners, "
                     "asymmetric)");
  if (nearestMode != "round_prefer_floor" && nearestMode != "round_prefer_ceil" &&
      nearestMode != "floor" && nearestMode != "ceil")
    t.fail(node, "nearest_mode '" + nearestMode + "' is not supported");

  const std::string& outName = node.outputNames.at(0);
  ir::Value* y = x;
  // Axes in order; the last resized axis produces the named output.
  std::vector<size_t> resized;
  std::vector<int64_t> outLens(rank);
  for (size_t axis = 0; axis < rank; ++axis) {
    double scale = scales ? (*scales)[axis] : 0.0;
    int64_t outLen = sizes ? int64_t((*sizes)[axis]) : int64_t(std::floor(in[axis] * scale));
    if (!sizes && scale <= 0) t.fail(node, "scales must be positive");
    if (outLen < 1) t.fail(node, "output dim " + std::to_string(axis) + " would be empty");
    outLens[axis] = outLen;
    bool identity = outLen == in[axis] && (sizes || scale == 1.0);
    if (!identity) resized.push_back(axis);
  }
  if (resized.empty()) {
    y = buildOp(t, node, ir::OpKind::Identity, {x}, {}, outName);
    checkDecomposedResult(t, node, y);
    return {y};
  }
  for (size_t axis : resized) {
    const int64_t inLen = in[axis], outLen = outLens[axis];
    double scale = sizes ? double(outLen) / double(inLen) : (*scales)[axis];
    AxisTaps taps;
    size_t tapCount = mode == "nearest" ? 1 : mode == "linear" ? 2 : 4;
    taps.indices.assign(tapCount, std::vector<int64_t>(size_t(outLen)));
    if (mode != "nearest") taps.weights.assign(tapCount, std::vector<double>(size_t(outLen)));
    for (int64_t o = 0; o < outLen; ++o) {
      double src = sourceCoordinate(transform, double(o), scale, inLen, outLen);
      if (mode == "nearest") {
        taps.indices[0][o] = clampIndex(nearestIndex(nearestMode, src), inLen);
        continue;
      }
      double f = std::floor(src), ratio = src - f;
      int64_t base = int64_t(f);
      if (mode == "linear") {
        taps.indices[0][o] = clampIndex(base, inLen);
        taps.indices[1][o] = clampIndex(base + 1, inLen);
        taps.weights[0][o] = 1 - ratio;
        taps.weights[1][o] = ratio;
        continue;
      }
      std::array<double, 4> w = cubicWeights(ratio, cubicA);
      double total = 0;
      for (size_t k = 0; k < 4; ++k) {
        int64_t i = base - 1 + int64_t(k);
        if (excludeOutside && (i < 0 || i >= inLen)) w[k] = 0;
        total += w[k];
        taps.indices[k][o] = clampIndex(i, inLen);
      }
      for (size_t k = 0; k < 4; ++k) taps.weights[k][o] = excludeOutside ? w[k] / total : w[k];
    }
    const bool last = axis == resized.back();
    const std::string axisName = outName + ".axis" + std::to_string(axis);
    ir::AttributeMap gatherAttrs;
    gatherAttrs.set("axis", static_cast<int64_t>(axis));
    ir::Value* sum = nullptr;
    for (size_t k = 0; k < tapCount; ++k) {
      ir::Value* idx = constantI64(t, axisName + ".idx" + std::to_string(k), taps.indices[k]);
      bool named = last && tapCount == 1;
      ir::Value* g =
          buildOp(t, node, ir::OpKind::Gather, {y, idx}, gatherAttrs, named ? outName : "");
      if (tapCount == 1) {
        sum = g;
        break;
      }
      // Weights shaped [outLen, 1, ..., 1] broadcast along the axis.
      ir::Shape wShape(rank - axis, 1);
      wShape[0] = outLen;
      TensorType wType(x->dtype(), wShape);
      ir::Value* w = t.graph.addConstant(t.graph.uniqueName(axisName + ".w" + std::to_string(k)),
                                         wType, ir::makeConstantBytes(wType, taps.weights[k]));
      ir::Value* term = buildOp(t, node, ir::OpKind::Mul, {g, w});
      bool final = last && k + 1 == tapCount;
      sum = sum ? buildOp(t, node, ir::OpKind::Add, {sum, term}, {}, final ? outName : "") : term;
    }
    y = sum;
  }
  checkDecomposedResult(t, node, y);
  return {y};
}

}  // namespace kiln::import::detail
