// Parses `--input-shape=NAME:1x3x224x224` values (see input_shape.h).
#include "kiln/import/onnx/input_shape.h"

#include <charconv>

#include "kiln/support/diagnostics.h"

namespace kiln::import {

namespace {

constexpr int64_t kMaxElements = int64_t(1) << 40;  // far beyond any real input

[[noreturn]] void throwSyntax(std::string_view flagValue, const std::string& why) {
  throw CompileError("--input-shape=" + std::string(flagValue) + ": " + why +
                     " (expected NAME:DIMS, e.g. --input-shape=input:1x3x224x224)");
}

}  // namespace

InputShape parseInputShape(std::string_view flagValue) {
  size_t colon = flagValue.rfind(':');
  if (colon == std::string_view::npos) throwSyntax(flagValue, "missing ':' between name and dims");
  InputShape shape;
  shape.name = std::string(flagValue.substr(0, colon));
  if (shape.name.empty()) throwSyntax(flagValue, "empty input name");
  std::string_view rest = flagValue.substr(colon + 1);
  if (rest.empty()) throwSyntax(flagValue, "no dims after ':'");
  int64_t elements = 1;
  while (true) {
    size_t x = rest.find('x');
    std::string_view text = rest.substr(0, x);
    int64_t dim = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), dim);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || dim <= 0) {
      throwSyntax(flagValue, "dim '" + std::string(text) + "' is not a positive integer");
    }
    shape.dims.push_back(dim);
    elements = dim > kMaxElements / elements ? kMaxElements + 1 : elements * dim;
    if (elements > kMaxElements) throwSyntax(flagValue, "the shape has over 2^40 elements");
    if (x == std::string_view::npos) break;
    rest = rest.substr(x + 1);
  }
  return shape;
}

std::string formatDims(const std::vector<int64_t>& dims) {
  if (dims.empty()) return "scalar";
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += 'x';
    text += dims[i] < 0 ? std::string("?") : std::to_string(dims[i]);
  }
  return text;
}

}  // namespace kiln::import
