// numpy-style tensor printing for `kiln run`, following numpy's arrayprint with its default
// options (precision 8, 'maxprec' float mode, line width 75, summary beyond 1000 elements with
// 3 edge items): the printed floats share one layout — positional, or scientific when their
// magnitudes call for it — with aligned decimal points, and rows wrap at 75 columns.
#include "tensor_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "half.h"

namespace kiln::cli {
namespace {

constexpr size_t kLineWidth = 75;
constexpr int kPrecision = 8;

// The fewest significant digits that give back the same value in the tensor's type.
int shortestDigits(double value, ElementType type) {
  char buffer[64];
  for (int digits = 1; digits < 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*e", digits - 1, value);
    double exact = std::strtod(buffer, nullptr);
    if (type == ElementType::F64) {
      if (exact == value) return digits;
      continue;
    }
    float parsed = static_cast<float>(exact);
    bool same = type == ElementType::F16
                    ? floatToHalf(parsed) == floatToHalf(static_cast<float>(value))
                    : parsed == static_cast<float>(value);
    if (same) return digits;
  }
  return 17;
}

int decimalExponent(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.8e", value);
  const char* e = std::strchr(buffer, 'e');
  return e ? std::atoi(e + 1) : 0;
}

// Positional text, at most 8 fractional digits, trailing zeros trimmed but the '.' kept:
// "1.", "0.25", "-3.1415927".
std::string positional(double value, ElementType type) {
  int fraction = 0;
  if (value != 0)
    fraction = std::clamp(shortestDigits(value, type) - 1 - decimalExponent(value), 0, kPrecision);
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "%.*f", fraction, value);
  std::string text = buffer;
  if (text.find('.') == std::string::npos) text += '.';
  while (text.back() == '0') text.pop_back();
  return text;
}

// Scientific text with `fraction` mantissa digits after the point: "1.5e+00", "1.e-20".
std::string scientific(double value, int fraction) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*e", fraction, value);
  std::string text = buffer;
  if (fraction == 0) text.insert(text.find('e'), ".");
  return text;
}

// The shared layout of the printed float elements (numpy's FloatingFormat.fillFormat).
struct FloatLayout {
  bool useScientific = false;
  int fraction = 0;     // scientific: mantissa digits after the point, for every element
  size_t padLeft = 0;   // characters before the point
  size_t padRight = 0;  // characters after it

  void fit(const std::vector<double>& values, ElementType type) {
    double maxAbs = 0, minAbs = INFINITY;
    bool anyFinite = false;
    for (double v : values) {
      if (!std::isfinite(v)) continue;
      anyFinite = true;
      if (v == 0) continue;
      maxAbs = std::max(maxAbs, std::fabs(v));
      minAbs = std::min(minAbs, std::fabs(v));
    }
    if (!anyFinite) return;
    if (maxAbs > 0)
      useScientific = maxAbs >= 1e8 || minAbs < 1e-4 || maxAbs / minAbs > 1000.0;
    if (useScientific) {
      for (double v : values)
        if (std::isfinite(v)) fraction = std::max(fraction, std::min(shortestDigits(v, type) - 1, kPrecision));
    }
    for (double v : values) {
      if (!std::isfinite(v)) continue;
      std::string text = useScientific ? scientific(v, fraction) : positional(v, type);
      size_t dot = text.find('.');
      padLeft = std::max(padLeft, dot);
      padRight = std::max(padRight, text.size() - dot - 1);
    }
  }

  std::string format(double value, ElementType type) const {
    if (!std::isfinite(value)) {
      std::string text = std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
      size_t width = padLeft + padRight + 1;
      return std::string(width > text.size() ? width - text.size() : 0, ' ') + text;
    }
    std::string text = useScientific ? scientific(value, fraction) : positional(value, type);
    size_t dot = text.find('.');
    std::string left = text.substr(0, dot);
    std::string right = text.substr(dot + 1);
    if (left.size() < padLeft) left.insert(0, padLeft - left.size(), ' ');
    if (right.size() < padRight) right.append(padRight - right.size(), ' ');
    return left + "." + right;
  }
};

class Printer {
 public:
  Printer(const HostTensor& tensor, const FormatOptions& options)
      : tensor_(tensor),
        elide_(tensor.elementCount() > options.threshold),
        edge_(options.edgeItems),
        strides_(tensor.shape.size(), 1) {
    for (size_t axis = tensor.shape.size(); axis > 1; --axis)
      strides_[axis - 2] = strides_[axis - 1] * static_cast<size_t>(tensor.shape[axis - 1]);
    std::vector<size_t> shown;
    collect(0, 0, shown);
    if (isFloatingPoint(tensor.type)) {
      std::vector<double> values;
      for (size_t i : shown) values.push_back(tensor.elementAsDouble(i));
      floats_.fit(values, tensor.type);
    } else {
      for (size_t i : shown) width_ = std::max(width_, element(i).size());
    }
  }

  // numpy's _formatArray: `indent` is the hanging indent, `width` the room left on a line.
  std::string format(size_t axis, size_t offset, const std::string& indent, size_t width) const {
    std::vector<size_t> indices = indicesFor(static_cast<size_t>(tensor_.shape[axis]));
    std::string nextIndent = indent + " ";
    size_t nextWidth = width - 1;
    std::string s;
    if (axis + 1 == tensor_.shape.size()) {
      size_t elemWidth = width - 1;
      std::string line = indent;
      for (size_t k = 0; k < indices.size(); ++k) {
        std::string word = indices[k] == SIZE_MAX ? "..." : element(offset + indices[k] * strides_[axis]);
        bool needsWrap = line.size() + word.size() > elemWidth && line.size() > indent.size();
        if (needsWrap) {
          while (!line.empty() && line.back() == ' ') line.pop_back();
          s += line + "\n";
          line = indent;
        }
        line += word;
        if (k + 1 < indices.size()) line += ' ';
      }
      s += line;
    } else {
      std::string separator(tensor_.shape.size() - axis - 1, '\n');
      for (size_t k = 0; k < indices.size(); ++k) {
        s += indent;
        s += indices[k] == SIZE_MAX
                 ? "..."
                 : format(axis + 1, offset + indices[k] * strides_[axis], nextIndent, nextWidth);
        if (k + 1 < indices.size()) s += separator;
      }
    }
    return "[" + s.substr(indent.size()) + "]";
  }

  std::string element(size_t index) const {
    std::string text = isFloatingPoint(tensor_.type)
                           ? floats_.format(tensor_.elementAsDouble(index), tensor_.type)
                           : formatElement(tensor_, index);
    if (text.size() < width_) text.insert(0, width_ - text.size(), ' ');
    return text;
  }

 private:
  // Indices printed along an axis of length n; SIZE_MAX marks the "..." gap.
  std::vector<size_t> indicesFor(size_t n) const {
    std::vector<size_t> indices;
    if (!elide_ || n <= 2 * edge_) {
      for (size_t i = 0; i < n; ++i) indices.push_back(i);
      return indices;
    }
    for (size_t i = 0; i < edge_; ++i) indices.push_back(i);
    indices.push_back(SIZE_MAX);
    for (size_t i = n - edge_; i < n; ++i) indices.push_back(i);
    return indices;
  }

  void collect(size_t axis, size_t offset, std::vector<size_t>& out) const {
    if (axis == tensor_.shape.size()) {
      out.push_back(offset);
      return;
    }
    for (size_t i : indicesFor(static_cast<size_t>(tensor_.shape[axis])))
      if (i != SIZE_MAX) collect(axis + 1, offset + i * strides_[axis], out);
  }

  const HostTensor& tensor_;
  bool elide_;
  size_t edge_;
  std::vector<size_t> strides_;
  FloatLayout floats_;
  size_t width_ = 0;
};

}  // namespace

std::string formatElement(const HostTensor& tensor, size_t index) {
  double value = tensor.elementAsDouble(index);
  if (tensor.type == ElementType::Bool) return value != 0 ? "True" : "False";
  if (!isFloatingPoint(tensor.type)) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%lld", static_cast<long long>(value));
    return buffer;
  }
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  double magnitude = std::fabs(value);
  if (magnitude != 0 && (magnitude >= 1e16 || magnitude < 1e-4))
    return scientific(value, std::min(shortestDigits(value, tensor.type) - 1, kPrecision));
  return positional(value, tensor.type);
}

std::string formatTensorValues(const HostTensor& tensor, const FormatOptions& options) {
  if (tensor.shape.empty()) return formatElement(tensor, 0);
  if (tensor.elementCount() == 0) {
    std::string out;
    for (size_t i = 0; i < tensor.shape.size(); ++i) out += '[';
    for (size_t i = 0; i < tensor.shape.size(); ++i) out += ']';
    return out;
  }
  Printer printer(tensor, options);
  return printer.format(0, 0, " ", kLineWidth);
}

}  // namespace kiln::cli
