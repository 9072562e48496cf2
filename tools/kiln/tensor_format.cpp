// numpy-style tensor printing for `kiln run`.
#include "tensor_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kiln::cli {
namespace {

struct Printer {
  const HostTensor& tensor;
  bool elide;
  size_t edge;
  size_t width = 0;
  std::vector<size_t> strides;

  // Indices printed along an axis of length n (SIZE_MAX marks the "..." gap).
  std::vector<size_t> indicesFor(size_t n) const {
    std::vector<size_t> indices;
    if (!elide || n <= 2 * edge) {
      for (size_t i = 0; i < n; ++i) indices.push_back(i);
      return indices;
    }
    for (size_t i = 0; i < edge; ++i) indices.push_back(i);
    indices.push_back(SIZE_MAX);
    for (size_t i = n - edge; i < n; ++i) indices.push_back(i);
    return indices;
  }

  void measure(size_t axis, size_t offset) {
    if (axis == tensor.shape.size()) {
      width = std::max(width, formatElement(tensor, offset).size());
      return;
    }
    for (size_t i : indicesFor(static_cast<size_t>(tensor.shape[axis])))
      if (i != SIZE_MAX) measure(axis + 1, offset + i * strides[axis]);
  }

  void print(size_t axis, size_t offset, std::string& out) {
    size_t rank = tensor.shape.size();
    if (axis == rank) {
      std::string text = formatElement(tensor, offset);
      out.append(width - std::min(width, text.size()), ' ');
      out += text;
      return;
    }
    out += '[';
    std::vector<size_t> indices = indicesFor(static_cast<size_t>(tensor.shape[axis]));
    bool last = axis + 1 == rank;
    for (size_t k = 0; k < indices.size(); ++k) {
      if (k > 0) {
        if (last) {
          out += ' ';
        } else {
          // numpy: one newline per remaining axis beyond the innermost, then indentation.
          out.append(rank - axis - 1, '\n');
          out.append(axis + 1, ' ');
        }
      }
      if (indices[k] == SIZE_MAX) {
        out += "...";
        continue;
      }
      print(axis + 1, offset + indices[k] * strides[axis], out);
    }
    out += ']';
  }
};

}  // namespace

std::string formatElement(const HostTensor& tensor, size_t index) {
  double value = tensor.elementAsDouble(index);
  if (tensor.type == ElementType::Bool) return value != 0 ? "True" : "False";
  char buffer[64];
  if (!isFloatingPoint(tensor.type)) {
    std::snprintf(buffer, sizeof buffer, "%lld", static_cast<long long>(value));
    return buffer;
  }
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  std::string text = buffer;
  if (text.find_first_of(".eE") == std::string::npos) text += '.';
  return text;
}

std::string formatTensorValues(const HostTensor& tensor, const FormatOptions& options) {
  if (tensor.shape.empty()) return formatElement(tensor, 0);
  Printer printer{tensor, tensor.elementCount() > options.threshold, options.edgeItems, 0, {}};
  if (tensor.elementCount() == 0) {
    std::string out;
    for (size_t i = 0; i < tensor.shape.size(); ++i) out += '[';
    for (size_t i = 0; i < tensor.shape.size(); ++i) out += ']';
    return out;
  }
  printer.strides.assign(tensor.shape.size(), 1);
  for (size_t axis = tensor.shape.size() - 1; axis > 0; --axis)
    printer.strides[axis - 1] = printer.strides[axis] * static_cast<size_t>(tensor.shape[axis]);
  printer.measure(0, 0);
  std::string out;
  printer.print(0, 0, out);
  return out;
}

}  // namespace kiln::cli
