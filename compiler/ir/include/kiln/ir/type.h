// Tensor types: dtype + static shape + optional quantization parameters.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/ir/dtype.h"

namespace kiln::ir {

// A static shape: every dim is known and >= 0. Rank 0 (empty vector) is a scalar.
using Shape = std::vector<int64_t>;

int64_t numElements(const Shape& shape);        // product of dims (1 for a scalar)
std::string shapeToString(const Shape& shape);  // "[1,3,224,224]"

// Affine quantization: real = scale * (q - zero_point).
// Per tensor: axis == -1 and one scale / zero point. Per channel: axis = the channel dim and
// one scale / zero point per element of that dim.
struct QuantParams {
  int64_t axis = -1;
  std::vector<float> scales;
  std::vector<int64_t> zeroPoints;

  bool perChannel() const { return axis >= 0; }
  bool operator==(const QuantParams&) const = default;
};

struct TensorType {
  DType dtype = DType::F32;
  Shape shape;
  std::optional<QuantParams> quant;

  TensorType() = default;
  TensorType(DType d, Shape s) : dtype(d), shape(std::move(s)) {}

  int64_t rank() const { return int64_t(shape.size()); }
  int64_t numElements() const { return ir::numElements(shape); }
  uint64_t byteSize() const { return uint64_t(numElements()) * dtypeSize(dtype); }

  // Same dtype and shape (quantization parameters ignored).
  bool sameShapeAndDType(const TensorType& other) const {
    return dtype == other.dtype && shape == other.shape;
  }
  bool operator==(const TensorType&) const = default;

  // Text form, as in the IR text: "f32[1,3,224,224]", "i8[16] quant(scale=0.5, zero_point=3)".
  std::string toString() const;
};

}  // namespace kiln::ir
