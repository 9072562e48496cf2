// Type rules of data-movement and shape-arithmetic ops: views (Reshape, Flatten, Squeeze,
// Unsqueeze), Transpose, Concat, Split, Slice, Gather, GatherElements, Pad, Expand, Tile,
// Shape, Size, ConstantOfShape, Range.
#include <algorithm>
#include <cmath>
#include <set>

#include "rule_helpers.h"

namespace kiln::ir {

using namespace rules;

RuleResult ruleReshape(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  requireRank(in, 1, 1);
  auto target = staticInts(in, 1);
  if (!target) return unknown();
  bool allowZero = in.attrs.getInt("allowzero", 0) != 0;
  Shape out;
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < target->size(); ++i) {
    int64_t d = (*target)[i];
    if (d == 0 && !allowZero) {
      if (i >= x.shape.size())
        fail("shape copies dim " + std::to_string(i) + " that the input lacks");
      d = x.shape[i];
    }
    if (d == -1) {
      if (inferred >= 0) fail("shape has more than one -1");
      inferred = int64_t(i);
      out.push_back(1);
      continue;
    }
    if (d < 0) fail("shape has a negative dim " + std::to_string(d));
    out.push_back(d);
    known *= d;
  }
  if (inferred >= 0) {
    if (known == 0 || x.numElements() % known != 0)
      fail("cannot reshape " + shapeToString(x.shape) + " to " + shapeToString(*target));
    out[size_t(inferred)] = x.numElements() / known;
  }
  if (numElements(out) != x.numElements())
    fail("cannot reshape " + shapeToString(x.shape) + " (" + std::to_string(x.numElements()) +
         " elements) to " + shapeToString(out));
  return single(TensorType(x.dtype, out));
}

RuleResult ruleFlatten(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  int64_t axis = in.attrs.getInt("axis", 1);
  if (axis < -x.rank() || axis > x.rank())
    fail("axis " + std::to_string(axis) + " is out of range");
  if (axis < 0) axis += x.rank();
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < x.rank(); ++i) (i < axis ? outer : inner) *= x.shape[size_t(i)];
  return single(TensorType(x.dtype, {outer, inner}));
}

RuleResult ruleSqueeze(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  std::set<int64_t> axes;
  if (present(in, 1)) {
    auto values = staticInts(in, 1);
    if (!values) return unknown();
    for (int64_t a : *values) {
      int64_t axis = normalizeAxis(a, x.rank());
      if (x.shape[size_t(axis)] != 1)
        fail("cannot squeeze axis " + std::to_string(a) + " of shape " + shapeToString(x.shape));
      axes.insert(axis);
    }
  } else {
    for (int64_t i = 0; i < x.rank(); ++i)
      if (x.shape[size_t(i)] == 1) axes.insert(i);
  }
  Shape out;
  for (int64_t i = 0; i < x.rank(); ++i)
    if (!axes.count(i)) out.push_back(x.shape[size_t(i)]);
  return single(TensorType(x.dtype, out));
}

RuleResult ruleUnsqueeze(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  auto values = staticInts(in, 1);
  if (!values) return unknown();
  int64_t rank = x.rank() + int64_t(values->size());
  std::set<int64_t> axes;
  for (int64_t a : *values)
    if (!axes.insert(normalizeAxis(a, rank)).second) fail("axes repeat axis " + std::to_string(a));
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) out.push_back(axes.count(i) ? 1 : x.shape[next++]);
  return single(TensorType(x.dtype, out));
}

RuleResult ruleTranspose(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  std::vector<int64_t> perm;
  for (int64_t i = x.rank() - 1; i >= 0; --i) perm.push_back(i);
  perm = in.attrs.getInts("perm", perm);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != int64_t(i) || sorted.size() != x.shape.size())
      fail("perm [" + joinInts(perm, ", ") + "] is not a permutation of " +
           std::to_string(x.rank()) + " dims");
  Shape out;
  for (int64_t p : perm) out.push_back(x.shape[size_t(p)]);
  return single(TensorType(x.dtype, out));
}

RuleResult ruleConcat(const RuleInput& in) {
  const TensorType& first = typeOf(in, 0);
  int64_t axis = normalizeAxis(in.attrs.getInt("axis"), first.rank());
  Shape out = first.shape;
  for (size_t i = 1; i < in.operands.size(); ++i) {
    requireSameDType(in, 0, i);
    const Shape& s = typeOf(in, i).shape;
    bool ok = s.size() == out.size();
    for (size_t d = 0; ok && d < s.size(); ++d) ok = int64_t(d) == axis || s[d] == out[d];
    if (!ok)
      fail(operandName(i) + " shape " + shapeToString(s) + " does not match " +
           shapeToString(first.shape) + " outside axis " + std::to_string(axis));
    out[size_t(axis)] += s[size_t(axis)];
  }
  return single(TensorType(first.dtype, out));
}

std::vector<int64_t> resolveSplit(int64_t dim, const std::vector<int64_t>* split, size_t count) {
  if (split) {
    if (split->size() != count)
      fail("split has " + std::to_string(split->size()) + " sizes for " + std::to_string(count) +
           " results");
    int64_t total = 0;
    for (int64_t s : *split) {
      if (s < 0) fail("split sizes must not be negative");
      total += s;
    }
    if (total != dim)
      fail("split sizes sum to " + std::to_string(total) + ", the axis has " + std::to_string(dim));
    return *split;
  }
  if (count == 0) fail("Split needs at least one result");
  int64_t part = (dim + int64_t(count) - 1) / int64_t(count);
  std::vector<int64_t> sizes(count, part);
  sizes.back() = dim - part * int64_t(count - 1);
  if (sizes.back() < 0)
    fail("cannot split " + std::to_string(dim) + " into " + std::to_string(count) + " parts");
  return sizes;
}

RuleResult ruleSplit(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  int64_t axis = normalizeAxis(in.attrs.getInt("axis", 0), x.rank());
  std::optional<std::vector<int64_t>> split;
  if (present(in, 1)) {
    split = staticInts(in, 1);
    if (!split) return unknown(in.numResults);
  }
  std::vector<int64_t> sizes =
      resolveSplit(x.shape[size_t(axis)], split ? &*split : nullptr, in.numResults);
  RuleResult r;
  for (int64_t s : sizes) {
    Shape out = x.shape;
    out[size_t(axis)] = s;
    r.types.push_back(TensorType(x.dtype, out));
  }
  return r;
}

SliceGeometry resolveSlice(const Shape& data, const std::vector<int64_t>& starts,
                           const std::vector<int64_t>& ends, const std::vector<int64_t>& axesIn,
                           const std::vector<int64_t>& stepsIn) {
  size_t n = starts.size();
  if (ends.size() != n) fail("starts and ends differ in length");
  std::vector<int64_t> axes = axesIn;
  if (axes.empty())
    for (size_t i = 0; i < n; ++i) axes.push_back(int64_t(i));
  std::vector<int64_t> steps = stepsIn.empty() ? std::vector<int64_t>(n, 1) : stepsIn;
  if (axes.size() != n || steps.size() != n) fail("starts, ends, axes and steps differ in length");
  SliceGeometry g;
  g.starts.assign(data.size(), 0);
  g.steps.assign(data.size(), 1);
  g.output = data;
  std::set<int64_t> seen;
  for (size_t i = 0; i < n; ++i) {
    int64_t axis = normalizeAxis(axes[i], int64_t(data.size()));
    if (!seen.insert(axis).second) fail("axes repeat axis " + std::to_string(axes[i]));
    int64_t dim = data[size_t(axis)], step = steps[i];
    if (step == 0) fail("slice step must not be 0");
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    int64_t count = step > 0 ? (end - start + step - 1) / step : (start - end - step - 1) / -step;
    g.starts[size_t(axis)] = start;
    g.steps[size_t(axis)] = step;
    g.output[size_t(axis)] = std::max<int64_t>(count, 0);
  }
  return g;
}

RuleResult ruleSlice(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  std::vector<std::vector<int64_t>> params(4);
  for (size_t i = 1; i < 5; ++i) {
    if (!present(in, i)) continue;
    requireIndexType(in, i);
    auto values = staticInts(in, i);
    if (!values) return unknown();
    params[i - 1] = *values;
  }
  SliceGeometry g = resolveSlice(x.shape, params[0], params[1], params[2], params[3]);
  return single(TensorType(x.dtype, g.output));
}

RuleResult ruleGather(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  requireIndexType(in, 1);
  int64_t axis = normalizeAxis(in.attrs.getInt("axis", 0), x.rank());
  Shape out(x.shape.begin(), x.shape.begin() + axis);
  const Shape& idx = typeOf(in, 1).shape;
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
  return single(TensorType(x.dtype, out));
}

// GatherElements(data, indices) {axis = 0}: the result has the indices' shape.
RuleResult ruleGatherElements(const RuleInput& in) {
  const TensorType& data = typeOf(in, 0);
  const TensorType& indices = typeOf(in, 1);
  requireIndexType(in, 1);
  if (indices.rank() != data.rank() || data.rank() < 1)
    fail("indices have shape " + shapeToString(indices.shape) + ", expected the rank of data " +
         shapeToString(data.shape));
  int64_t axis = normalizeAxis(in.attrs.getInt("axis", 0), data.rank());
  for (int64_t i = 0; i < data.rank(); ++i) {
    if (i != axis && indices.shape[size_t(i)] > data.shape[size_t(i)])
      fail("indices have shape " + shapeToString(indices.shape) + ", larger than data " +
           shapeToString(data.shape) + " in dim " + std::to_string(i));
  }
  return single(TensorType(data.dtype, indices.shape));
}

// ScatterND(data, indices [..., k], updates [..., data dims k...]) {reduction = "none"}.
RuleResult ruleScatterND(const RuleInput& in) {
  const TensorType& data = typeOf(in, 0);
  const TensorType& indices = typeOf(in, 1);
  const TensorType& updates = typeOf(in, 2);
  requireIndexType(in, 1);
  requireSameDType(in, 0, 2);
  if (in.attrs.getString("reduction", "none") != "none")
    fail("reduction '" + in.attrs.getString("reduction", "none") + "' is not supported");
  if (indices.rank() < 1 || indices.shape.back() > data.rank())
    fail("indices have shape " + shapeToString(indices.shape) + ", expected [..., k] with k <= " +
         std::to_string(data.rank()));
  Shape expected(indices.shape.begin(), indices.shape.end() - 1);
  expected.insert(expected.end(), data.shape.begin() + indices.shape.back(), data.shape.end());
  if (updates.shape != expected)
    fail("updates have shape " + shapeToString(updates.shape) + ", expected " +
         shapeToString(expected));
  return single(data);
}

RuleResult rulePad(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  std::string mode = in.attrs.getString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    fail("mode '" + mode + "' is not constant, reflect or edge");
  if (present(in, 2)) {
    requireSameDType(in, 0, 2);
    if (typeOf(in, 2).numElements() != 1) fail("constant_value must be a scalar");
  }
  auto pads = staticInts(in, 1);
  if (!pads) return unknown();
  std::vector<int64_t> axes;
  if (present(in, 3)) {
    auto values = staticInts(in, 3);
    if (!values) return unknown();
    axes = *values;
  } else {
    for (int64_t i = 0; i < x.rank(); ++i) axes.push_back(i);
  }
  if (pads->size() != 2 * axes.size())
    fail("pads has " + std::to_string(pads->size()) + " values, expected " +
         std::to_string(2 * axes.size()));
  Shape out = x.shape;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = normalizeAxis(axes[i], x.rank());
    out[size_t(axis)] += (*pads)[i] + (*pads)[i + axes.size()];
    if (out[size_t(axis)] < 0) fail("pads make dim " + std::to_string(axis) + " negative");
  }
  return single(TensorType(x.dtype, out));
}

RuleResult ruleExpand(const RuleInput& in) {
  requireRank(in, 1, 1);
  auto shape = staticInts(in, 1);
  if (!shape) return unknown();
  return single(TensorType(typeOf(in, 0).dtype, broadcastShapes(typeOf(in, 0).shape, *shape)));
}

RuleResult ruleTile(const RuleInput& in) {
  const TensorType& x = typeOf(in, 0);
  auto repeats = staticInts(in, 1);
  if (!repeats) return unknown();
  if (int64_t(repeats->size()) != x.rank())
    fail("repeats has " + std::to_string(repeats->size()) + " values, input has rank " +
         std::to_string(x.rank()));
  Shape out = x.shape;
  for (size_t i = 0; i < out.size(); ++i) {
    if ((*repeats)[i] < 0) fail("repeats must not be negative");
    out[i] *= (*repeats)[i];
  }
  return single(TensorType(x.dtype, out));
}

RuleResult ruleShape(const RuleInput& in) {
  int64_t rank = typeOf(in, 0).rank();
  int64_t start = in.attrs.getInt("start", 0), end = in.attrs.getInt("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  return single(TensorType(DType::I64, {std::max<int64_t>(end - start, 0)}));
}

RuleResult ruleSize(const RuleInput& in) { return single(TensorType(DType::I64, {})); }

RuleResult ruleConstantOfShape(const RuleInput& in) {
  requireRank(in, 0, 1);
  if (typeOf(in, 0).dtype != DType::I64) fail("shape operand must be i64");
  int64_t dtype = in.attrs.getInt("dtype", int64_t(DType::F32));
  if (dtype < 0 || dtype >= kDTypeCount)
    fail("attribute 'dtype' = " + std::to_string(dtype) + " is not a kiln dtype");
  auto shape = staticInts(in, 0);
  if (!shape) return unknown();
  for (int64_t d : *shape)
    if (d < 0) fail("shape has a negative dim " + std::to_string(d));
  return single(TensorType(DType(dtype), *shape));
}

RuleResult ruleRange(const RuleInput& in) {
  for (size_t i = 0; i < 3; ++i) {
    requireSameDType(in, 0, i);
    if (typeOf(in, i).numElements() != 1) fail(operandName(i) + " must be a scalar");
  }
  DType dtype = typeOf(in, 0).dtype;
  for (size_t i = 0; i < 3; ++i)
    if (!isConstantValue(in.operands[i])) return unknown();
  double start = constantDoubles(in.operands[0])[0];
  double limit = constantDoubles(in.operands[1])[0];
  double delta = constantDoubles(in.operands[2])[0];
  if (delta == 0) fail("delta must not be 0");
  int64_t n = std::max<int64_t>(int64_t(std::ceil((limit - start) / delta)), 0);
  return single(TensorType(dtype, {n}));
}

}  // namespace kiln::ir
