// Type rules of the neural-network compute ops: Conv, MatMul, Gemm, pools, normalisations,
// Softmax, reductions, ConvTranspose, InstanceNormalization, LRN and TopK.
#include <algorithm>
#include <set>

#include "kiln/ir/window_geometry.h"
#include "rule_helpers.h"

namespace kiln::ir {

using namespace rules;

RuleResult ruleConv(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  const TensorType& w = typeOf(in, 1);
  if (x.rank() < 3)
    fail("input has shape " + shapeToString(x.shape) + ", expected N x C x spatial...");
  requireRank(in, 1, x.rank());
  requireSameDType(in, 0, 1);
  int64_t group = in.attrs.getInt("group", 1);
  if (group < 1 || x.shape[1] % group != 0 || w.shape[0] % group != 0)
    fail("group " + std::to_string(group) + " does not divide input channels " +
         std::to_string(x.shape[1]) + " and output channels " + std::to_string(w.shape[0]));
  if (w.shape[1] * group != x.shape[1])
    fail("weight has " + std::to_string(w.shape[1]) + " input channels per group, input has " +
         std::to_string(x.shape[1]) + " channels in " + std::to_string(group) + " group(s)");
  if (present(in, 2)) {
    requireSameDType(in, 0, 2);
    if (typeOf(in, 2).shape != Shape{w.shape[0]})
      fail("bias has shape " + shapeToString(typeOf(in, 2).shape) + ", expected [" +
           std::to_string(w.shape[0]) + "]");
  }
  Shape spatial(x.shape.begin() + 2, x.shape.end());
  std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end());
  if (in.attrs.has("kernel_shape") && in.attrs.getInts("kernel_shape") != kernel)
    fail("kernel_shape does not match the weight's spatial dims " + shapeToString(kernel));
  WindowGeometry g = computeWindowGeometry(spatial, kernel, in.attrs, false);
  Shape out = {x.shape[0], w.shape[0]};
  out.insert(out.end(), g.output.begin(), g.output.end());
  return single(TensorType(x.dtype, out));
}

// ConvTranspose(X [N, C, spatial...], W [C, OC / group, kernel...], B? [OC]).
RuleResult ruleConvTranspose(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  const TensorType& w = typeOf(in, 1);
  if (x.rank() < 3)
    fail("input has shape " + shapeToString(x.shape) + ", expected N x C x spatial...");
  requireRank(in, 1, x.rank());
  requireSameDType(in, 0, 1);
  requireFloat(in, 0);
  int64_t group = in.attrs.getInt("group", 1);
  if (group < 1 || x.shape[1] % group != 0)
    fail("group " + std::to_string(group) + " does not divide input channels " +
         std::to_string(x.shape[1]));
  if (w.shape[0] != x.shape[1])
    fail("weight has shape " + shapeToString(w.shape) + ", expected " +
         std::to_string(x.shape[1]) + " input channels in dim 0");
  int64_t outChannels = w.shape[1] * group;
  if (present(in, 2)) {
    requireSameDType(in, 0, 2);
    if (typeOf(in, 2).shape != Shape{outChannels})
      fail("bias has shape " + shapeToString(typeOf(in, 2).shape) + ", expected [" +
           std::to_string(outChannels) + "]");
  }
  Shape spatial(x.shape.begin() + 2, x.shape.end());
  std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end());
  if (in.attrs.has("kernel_shape") && in.attrs.getInts("kernel_shape") != kernel)
    fail("kernel_shape does not match the weight's spatial dims " + shapeToString(kernel));
  ConvTransposeGeometry g = computeConvTransposeGeometry(spatial, kernel, in.attrs);
  Shape out = {x.shape[0], outChannels};
  out.insert(out.end(), g.output.begin(), g.output.end());
  return single(TensorType(x.dtype, out));
}

RuleResult ruleMatMul(const RuleInput& in) {
  requireSameDType(in, 0, 1);
  Shape a = typeOf(in, 0).shape, b = typeOf(in, 1).shape;
  if (a.empty() || b.empty()) fail("MatMul operands must have rank >= 1");
  bool vecA = a.size() == 1, vecB = b.size() == 1;
  if (vecA) a.insert(a.begin(), 1);
  if (vecB) b.push_back(1);
  int64_t k = a.back();
  if (b[b.size() - 2] != k)
    fail("inner dims differ: " + shapeToString(typeOf(in, 0).shape) + " x " +
         shapeToString(typeOf(in, 1).shape));
  Shape batch = broadcastShapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  Shape out = batch;
  if (!vecA) out.push_back(a[a.size() - 2]);
  if (!vecB) out.push_back(b.back());
  return single(TensorType(typeOf(in, 0).dtype, out));
}

RuleResult ruleGemm(const RuleInput& in) {
  requireRank(in, 0, 2);
  requireRank(in, 1, 2);
  requireSameDType(in, 0, 1);
  const Shape& a = typeOf(in, 0).shape;
  const Shape& b = typeOf(in, 1).shape;
  bool ta = in.attrs.getInt("transA", 0) != 0, tb = in.attrs.getInt("transB", 0) != 0;
  int64_t m = ta ? a[1] : a[0], k = ta ? a[0] : a[1];
  int64_t kb = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  if (k != kb)
    fail("inner dims differ: A " + shapeToString(a) + (ta ? " (transposed)" : "") + ", B " +
         shapeToString(b) + (tb ? " (transposed)" : ""));
  Shape out = {m, n};
  if (present(in, 2)) {
    requireSameDType(in, 0, 2);
    if (!broadcastsTo(typeOf(in, 2).shape, out))
      fail("C shape " + shapeToString(typeOf(in, 2).shape) + " does not broadcast to " +
           shapeToString(out));
  }
  return single(TensorType(typeOf(in, 0).dtype, out));
}

RuleResult rulePool(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  if (x.rank() < 3)
    fail("input has shape " + shapeToString(x.shape) + ", expected N x C x spatial...");
  Shape spatial(x.shape.begin() + 2, x.shape.end());
  WindowGeometry g =
      computeWindowGeometry(spatial, in.attrs.getInts("kernel_shape"), in.attrs, true);
  Shape out = {x.shape[0], x.shape[1]};
  out.insert(out.end(), g.output.begin(), g.output.end());
  return single(TensorType(x.dtype, out));
}

RuleResult ruleGlobalPool(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  if (x.rank() < 3)
    fail("input has shape " + shapeToString(x.shape) + ", expected N x C x spatial...");
  Shape out(x.shape.size(), 1);
  out[0] = x.shape[0];
  out[1] = x.shape[1];
  return single(TensorType(x.dtype, out));
}

RuleResult ruleBatchNorm(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  if (x.rank() < 2) fail("input has shape " + shapeToString(x.shape) + ", expected N x C x ...");
  static const char* kNames[] = {"", "scale", "bias", "mean", "var"};
  for (size_t i = 1; i < 5; ++i) {
    requireSameDType(in, 0, i);
    if (typeOf(in, i).shape != Shape{x.shape[1]})
      fail(std::string(kNames[i]) + " has shape " + shapeToString(typeOf(in, i).shape) +
           ", expected [" + std::to_string(x.shape[1]) + "]");
  }
  return single(x);
}

RuleResult ruleLayerNorm(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  requireFloat(in, 0);
  int64_t axis = normalizeAxis(in.attrs.getInt("axis", -1), x.rank());
  Shape normalized(x.shape.begin() + axis, x.shape.end());
  for (size_t i = 1; i < in.operands.size(); ++i) {
    if (!present(in, i)) continue;
    requireSameDType(in, 0, i);
    if (!broadcastsTo(typeOf(in, i).shape, normalized))
      fail(operandName(i) + " shape " + shapeToString(typeOf(in, i).shape) +
           " does not broadcast to the normalized shape " + shapeToString(normalized));
  }
  return single(x);
}

// InstanceNormalization(X [N, C, spatial...], scale [C], B [C]) {epsilon = 1e-5}.
RuleResult ruleInstanceNorm(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  requireFloat(in, 0);
  if (x.rank() < 3)
    fail("input has shape " + shapeToString(x.shape) + ", expected N x C x spatial...");
  for (size_t i = 1; i < 3; ++i) {
    requireSameDType(in, 0, i);
    if (typeOf(in, i).shape != Shape{x.shape[1]})
      fail(std::string(i == 1 ? "scale" : "bias") + " has shape " +
           shapeToString(typeOf(in, i).shape) + ", expected [" + std::to_string(x.shape[1]) +
           "]");
  }
  return single(x);
}

// LRN(X [N, C, spatial...]) {alpha = 1e-4, beta = 0.75, bias = 1, size (required)}.
RuleResult ruleLrn(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  requireFloat(in, 0);
  if (x.rank() < 3)
    fail("input has shape " + shapeToString(x.shape) + ", expected N x C x spatial...");
  if (!in.attrs.has("size") || in.attrs.getInt("size") < 1)
    fail("attribute 'size' must be a positive integer");
  return single(x);
}

RuleResult ruleSoftmax(const RuleInput& in) {
  requireFloat(in, 0);
  normalizeAxis(in.attrs.getInt("axis", -1), typeOf(in, 0).rank());
  return single(typeOf(in, 0));
}

RuleResult ruleReduce(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  std::vector<int64_t> axes;
  if (in.operands.size() > 1 && present(in, 1)) {
    auto values = staticInts(in, 1);
    if (!values) return unknown();
    axes = *values;
  } else {
    axes = in.attrs.getInts("axes", {});
  }
  bool keepDims = in.attrs.getInt("keepdims", 1) != 0;
  if (axes.empty()) {
    if (in.attrs.getInt("noop_with_empty_axes", 0) != 0) return single(x);
    for (int64_t i = 0; i < x.rank(); ++i) axes.push_back(i);
  }
  std::set<int64_t> reduced;
  for (int64_t a : axes) {
    if (!reduced.insert(normalizeAxis(a, x.rank())).second)
      fail("axes repeat axis " + std::to_string(a));
  }
  Shape out;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (!reduced.count(i))
      out.push_back(x.shape[size_t(i)]);
    else if (keepDims)
      out.push_back(1);
  }
  return single(TensorType(x.dtype, out));
}

RuleResult ruleArgReduce(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  int64_t axis = normalizeAxis(in.attrs.getInt("axis", 0), x.rank());
  Shape out = x.shape;
  if (in.attrs.getInt("keepdims", 1) != 0)
    out[size_t(axis)] = 1;
  else
    out.erase(out.begin() + axis);
  return single(TensorType(DType::I64, out));
}

// CumSum(x, axis: scalar) {exclusive = 0, reverse = 0}: same type as x.
RuleResult ruleCumSum(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  if (x.rank() < 1) fail("input must have rank >= 1");
  if (typeOf(in, 0).dtype == DType::Bool) fail("operand 0 has dtype bool, expected a number");
  if (auto axis = staticInts(in, 1)) {
    if (axis->size() != 1) fail("axis must hold one value, it has " + std::to_string(axis->size()));
    normalizeAxis((*axis)[0], x.rank());
  }
  return single(x);
}

// TopK(X, K [1]) {axis = -1, largest = 1, sorted = 1} -> (values, indices: i64).
RuleResult ruleTopK(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  if (x.rank() < 1) fail("input must have rank >= 1");
  int64_t axis = normalizeAxis(in.attrs.getInt("axis", -1), x.rank());
  auto k = staticInts(in, 1);
  if (!k) return unknown(2);
  if (k->size() != 1) fail("K must hold one value, it has " + std::to_string(k->size()));
  int64_t dim = x.shape[size_t(axis)];
  if ((*k)[0] < 0 || (*k)[0] > dim)
    fail("K = " + std::to_string((*k)[0]) + " is outside [0, " + std::to_string(dim) +
         "] (the size of axis " + std::to_string(axis) + ")");
  Shape out = x.shape;
  out[size_t(axis)] = (*k)[0];
  RuleResult r;
  r.types.push_back(TensorType(x.dtype, out));
  r.types.push_back(TensorType(DType::I64, out));
  return r;
}

}  // namespace kiln::ir
