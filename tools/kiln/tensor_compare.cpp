// Element-wise comparison of an output with its expected value, reporting the worst element.
#include "tensor_compare.h"

#include <cmath>
#include <cstdlib>

#include "cli_error.h"
#include "tensor_format.h"

namespace kiln::cli {
namespace {

std::string indexText(const std::vector<int64_t>& shape, size_t flat) {
  std::vector<size_t> index(shape.size());
  for (size_t axis = shape.size(); axis > 0; --axis) {
    size_t dim = static_cast<size_t>(shape[axis - 1]);
    index[axis - 1] = flat % dim;
    flat /= dim;
  }
  std::string text = "[";
  for (size_t i = 0; i < index.size(); ++i) text += (i ? ", " : "") + std::to_string(index[i]);
  return text + "]";
}

double parseNumber(const std::string& text, const std::string& whole) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(value >= 0))
    throw CliError("invalid --tolerance '" + whole + "': expected RTOL[,ATOL], e.g. 1e-3,1e-5");
  return value;
}

}  // namespace

Tolerance parseTolerance(const std::string& text) {
  Tolerance tolerance;
  size_t comma = text.find(',');
  if (comma == std::string::npos) {
    tolerance.rtol = tolerance.atol = parseNumber(text, text);
  } else {
    tolerance.rtol = parseNumber(text.substr(0, comma), text);
    tolerance.atol = parseNumber(text.substr(comma + 1), text);
  }
  return tolerance;
}

std::optional<Mismatch> compareTensors(const HostTensor& got, const HostTensor& expected,
                                       const Tolerance& tolerance) {
  if (got.type != expected.type || got.shape != expected.shape)
    return Mismatch{"got " + describeTensorType(got.type, got.shape) + ", expected " +
                    describeTensorType(expected.type, expected.shape)};
  bool exact = !isFloatingPoint(got.type) && tolerance.atol < 1;
  size_t bad = 0;
  size_t worst = 0;
  double worstExcess = -1;
  for (size_t i = 0; i < got.elementCount(); ++i) {
    double g = got.elementAsDouble(i);
    double e = expected.elementAsDouble(i);
    if (std::isnan(g) && std::isnan(e)) continue;
    double diff = std::fabs(g - e);
    double allowed = exact ? 0 : tolerance.atol + tolerance.rtol * std::fabs(e);
    bool ok = diff <= allowed;  // false for NaN against a number
    if (ok) continue;
    ++bad;
    double excess = std::isnan(diff) ? INFINITY : diff - allowed;
    if (excess > worstExcess) {
      worstExcess = excess;
      worst = i;
    }
  }
  if (bad == 0) return std::nullopt;
  double g = got.elementAsDouble(worst);
  double e = expected.elementAsDouble(worst);
  char diffText[32];
  std::snprintf(diffText, sizeof diffText, "%.3g", std::fabs(g - e));
  char tolText[64];
  std::snprintf(tolText, sizeof tolText, exact ? "exactly" : "within rtol=%g atol=%g",
                tolerance.rtol, tolerance.atol);
  return Mismatch{std::to_string(bad) + " of " + std::to_string(got.elementCount()) +
                  " elements differ (wanted " + tolText + "); worst at " +
                  indexText(got.shape, worst) + ": got " + formatElement(got, worst) +
                  ", expected " + formatElement(expected, worst) + " (|diff| " + diffText + ")"};
}

}  // namespace kiln::cli
