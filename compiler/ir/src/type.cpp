// TensorType helpers: element counts and the text form of types.
#include "kiln/ir/type.h"

#include "kiln/support/strings.h"

namespace kiln::ir {

int64_t numElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shapeToString(const Shape& shape) { return "[" + joinInts(shape, ",") + "]"; }

std::string TensorType::toString() const {
  std::string out = std::string(dtypeName(dtype)) + shapeToString(shape);
  if (quant) {
    out += " quant(";
    if (quant->perChannel()) {
      out += "axis=" + std::to_string(quant->axis) + ", scale=[";
      for (size_t i = 0; i < quant->scales.size(); ++i)
        out += (i ? ", " : "") + formatFloat(quant->scales[i]);
      out += "], zero_point=[" + joinInts(quant->zeroPoints, ", ") + "]";
    } else {
      out += "scale=" + formatFloat(quant->scales.empty() ? 0.0f : quant->scales[0]);
      out += ", zero_point=" + std::to_string(quant->zeroPoints.empty() ? 0 : quant->zeroPoints[0]);
    }
    out += ")";
  }
  return out;
}

}  // namespace kiln::ir
