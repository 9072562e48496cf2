// Shape-value tracking for the importer (see onnx_shape_values.h).
#include "onnx_shape_values.h"

#include <algorithm>
#include <cmath>

#include "kiln/ir/constant_data.h"
#include "kiln/ir/op_rules.h"
#include "kiln/support/diagnostics.h"
#include "onnx_translation.h"

namespace kiln::import::detail {

namespace {

constexpr int64_t kMaxElements = 64;  // shape tensors are tiny

using Ints = std::vector<int64_t>;

// Any rank: torch's Pad exports reshape the pads to [n, 2], reverse and transpose them.
bool isSmallInteger(const ir::Value* value) {
  return value && ir::isInteger(value->dtype()) && value->type().numElements() <= kMaxElements;
}

// Tracked results may also be bool (torch's Expand: Where(Equal(shape, -1), ones, shape)).
bool isSmallIntegerOrBool(const ir::Value* value) {
  return value && (ir::isInteger(value->dtype()) || value->dtype() == ir::DType::Bool) &&
         value->type().numElements() <= kMaxElements;
}

// Numpy broadcasting of two vectors (or scalars) of integers.
std::optional<Ints> elementwise(const Ints& a, const Ints& b, char op) {
  if (a.size() != b.size() && a.size() != 1 && b.size() != 1) return std::nullopt;
  size_t n = std::max(a.size(), b.size());
  Ints out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = a[a.size() == 1 ? 0 : i];
    int64_t y = b[b.size() == 1 ? 0 : i];
    switch (op) {
      case '+': out[i] = x + y; break;
      case '-': out[i] = x - y; break;
      case '*': out[i] = x * y; break;
      case '/':
        if (y == 0) return std::nullopt;
        out[i] = x / y;  // integer Div truncates, like onnxruntime
        break;
      case '=': out[i] = x == y; break;
    }
  }
  return out;
}

// ONNX Slice on a 1-D tensor.
std::optional<Ints> slice1d(const Ints& data, int64_t start, int64_t end, int64_t step) {
  const auto size = static_cast<int64_t>(data.size());
  if (step == 0) return std::nullopt;
  if (start < 0) start += size;
  if (end < 0) end += size;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, size);
    end = std::clamp<int64_t>(end, 0, size);
  } else {
    start = std::clamp<int64_t>(start, 0, size - 1);
    end = std::clamp<int64_t>(end, -1, size - 1);
  }
  Ints out;
  for (int64_t i = start; step > 0 ? i < end : i > end; i += step) out.push_back(data[i]);
  return out;
}

}  // namespace

std::optional<Ints> ShapeValues::get(const ir::Value* value) const {
  if (!value) return std::nullopt;
  if (value->isConstant()) {
    if (!isSmallInteger(value)) return std::nullopt;
    return ir::constantInts(value);
  }
  auto found = known_.find(value);
  if (found == known_.end()) return std::nullopt;
  return found->second;
}

void ShapeValues::track(const OnnxNode& node, const std::vector<ir::Value*>& results) {
  if (results.empty() || !results[0] || results[0]->isConstant() ||
      !isSmallIntegerOrBool(results[0])) {
    return;
  }
  auto input = [&](size_t i) -> std::optional<Ints> {
    return i < node.inputs.size() ? get(node.inputs[i]) : std::nullopt;
  };
  const std::string& op = node.opType;
  // Elementwise results of rank > 1 are tracked only without broadcasting between shapes.
  auto sameShapes = [&]() {
    const ir::Value* first = nullptr;
    for (const ir::Value* v : node.inputs) {
      if (!v || v->type().numElements() == 1) continue;
      if (first && first->shape() != v->shape()) return false;
      first = v;
    }
    return true;
  };
  if (results[0]->type().rank() > 1 && (op == "Add" || op == "Sub" || op == "Mul" ||
                                        op == "Div" || op == "Equal" || op == "Where") &&
      !sameShapes()) {
    return;
  }
  std::optional<Ints> out;
  if (op == "Shape") {
    const ir::Shape& shape = node.inputs.at(0)->shape();
    auto rank = static_cast<int64_t>(shape.size());
    int64_t start = node.attrs.getInt("start", 0);
    int64_t end = node.attrs.getInt("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    out = Ints(shape.begin() + start, shape.begin() + end);
  } else if (op == "Gather") {
    auto data = input(0);
    auto indices = input(1);
    if (data && indices && node.attrs.getInt("axis", 0) == 0 &&
        node.inputs[0]->type().rank() == 1) {
      Ints gathered;
      for (int64_t index : *indices) {
        if (index < 0) index += static_cast<int64_t>(data->size());
        if (index < 0 || index >= static_cast<int64_t>(data->size())) return;
        gathered.push_back((*data)[index]);
      }
      out = gathered;
    }
  } else if (op == "Cast" && !input(0) && node.inputs.at(0)->isConstant() &&
             node.inputs[0]->type().numElements() <= kMaxElements) {
    // A float constant of whole numbers cast to an integer type (old-opset torch exports).
    std::vector<double> values = ir::constantDoubles(node.inputs[0]);
    Ints whole;
    for (double v : values) {
      if (v != static_cast<double>(static_cast<int64_t>(v))) return;
      whole.push_back(static_cast<int64_t>(v));
    }
    out = whole;
  } else if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Identity" ||
             op == "Cast") {
    out = input(0);
    const ir::Value* source = node.inputs.empty() ? nullptr : node.inputs[0];
    if (!out && op == "Cast" && source && source->isConstant() &&
        ir::isFloat(source->dtype()) && source->type().rank() <= 1 &&
        source->type().numElements() <= kMaxElements) {
      // torch's opset 7/8 shape arithmetic: float (double in the file) constants Cast to int64.
      Ints truncated;
      for (double v : ir::constantDoubles(source)) {
        if (!(std::fabs(v) < 1e15)) return;
        truncated.push_back(static_cast<int64_t>(v));  // Cast truncates toward zero
      }
      out = truncated;
    }
  } else if (op == "Transpose") {
    auto data = input(0);
    const ir::Shape& shape = node.inputs.at(0)->shape();
    if (!data) return;
    std::vector<int64_t> perm = node.attrs.getInts("perm", {});
    if (perm.empty())
      for (size_t i = shape.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
    if (perm.size() != shape.size()) return;
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
    ir::Shape outShape;
    for (int64_t p : perm) outShape.push_back(shape[static_cast<size_t>(p)]);
    Ints moved(data->size());
    for (size_t linear = 0; linear < moved.size(); ++linear) {
      size_t rest = linear;
      int64_t source = 0;
      for (size_t axis = outShape.size(); axis-- > 0;) {
        int64_t coord = static_cast<int64_t>(rest) % outShape[axis];
        rest /= static_cast<size_t>(outShape[axis]);
        source += coord * strides[static_cast<size_t>(perm[axis])];
      }
      moved[linear] = (*data)[static_cast<size_t>(source)];
    }
    out = moved;
  } else if (op == "Concat") {
    if (results[0]->type().rank() > 1 &&
        node.attrs.getInt("axis", 0) % results[0]->type().rank() != 0) {
      return;  // joining flat lists is only right along the first axis
    }
    Ints joined;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      auto part = input(i);
      if (!part) return;
      joined.insert(joined.end(), part->begin(), part->end());
    }
    out = joined;
  } else if (op == "Slice") {
    auto data = input(0);
    auto starts = input(1);
    auto ends = input(2);
    auto steps = input(4);
    if (data && starts && ends && starts->size() == 1 && ends->size() == 1 &&
        node.inputs[0]->type().rank() == 1) {
      out = slice1d(*data, (*starts)[0], (*ends)[0], steps && steps->size() == 1 ? (*steps)[0] : 1);
    } else if (data && starts && ends) {
      // Any rank (torch's Pad reverses the rows of its [n, 2] pads).
      auto axes = input(3);
      if (node.inputs.size() > 3 && node.inputs[3] && !axes) return;
      if (node.inputs.size() > 4 && node.inputs[4] && !steps) return;
      const ir::Shape& shape = node.inputs[0]->shape();
      ir::SliceGeometry g;
      try {
        g = ir::resolveSlice(shape, *starts, *ends, axes ? *axes : Ints{}, steps ? *steps : Ints{});
      } catch (const CompileError&) {
        return;
      }
      std::vector<int64_t> strides(shape.size(), 1);
      for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
      int64_t count = 1;
      for (int64_t d : g.output) count *= d;
      Ints picked(static_cast<size_t>(count));
      for (int64_t linear = 0; linear < count; ++linear) {
        int64_t rest = linear, source = 0;
        for (size_t axis = g.output.size(); axis-- > 0;) {
          int64_t coord = rest % g.output[axis];
          rest /= g.output[axis];
          source += (g.starts[axis] + coord * g.steps[axis]) * strides[axis];
        }
        picked[static_cast<size_t>(linear)] = (*data)[static_cast<size_t>(source)];
      }
      out = picked;
    }
  } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    auto a = input(0);
    auto b = input(1);
    char symbol = op == "Add" ? '+' : op == "Sub" ? '-' : op == "Mul" ? '*' : '/';
    if (a && b) out = elementwise(*a, *b, symbol);
  } else if (op == "Equal") {
    auto a = input(0);
    auto b = input(1);
    if (a && b) out = elementwise(*a, *b, '=');
  } else if (op == "Where") {
    auto condition = input(0);
    auto x = input(1);
    auto y = input(2);
    if (condition && x && y) {
      auto picked = elementwise(*condition, *x, '*');  // checks the broadcast of all three
      if (picked && elementwise(*picked, *y, '+')) {
        size_t n = std::max({condition->size(), x->size(), y->size()});
        Ints chosen(n);
        for (size_t i = 0; i < n; ++i) {
          auto at = [i](const Ints& v) { return v[v.size() == 1 ? 0 : i]; };
          chosen[i] = at(*condition) ? at(*x) : at(*y);
        }
        out = chosen;
      }
    }
  } else if (op == "ConstantOfShape") {
    auto shape = input(0);
    if (!shape) return;
    int64_t count = 1;
    for (int64_t dim : *shape) {
      if (dim < 0 || dim > kMaxElements) return;
      count *= dim;
    }
    if (count > kMaxElements) return;
    int64_t fill = 0;
    if (auto found = node.tensorAttrs.find("value"); found != node.tensorAttrs.end()) {
      const ConstantTensor& value = found->second;
      if (value.type.numElements() != 1 || !ir::isInteger(value.type.dtype)) return;
      fill = static_cast<int64_t>(ir::readElementDouble(value.type.dtype, value.bytes.data(), 0));
    }
    out = Ints(static_cast<size_t>(count), fill);
  }
  if (out && static_cast<int64_t>(out->size()) == results[0]->type().numElements()) {
    known_[results[0]] = *out;
  }
}

}  // namespace kiln::import::detail
