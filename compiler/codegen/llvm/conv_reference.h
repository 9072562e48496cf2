// What the convolution kernel tests share: a case (shape, strides, pads, bias, activation,
// an optional residual chain), the kernel description the lowering would give it, random
// operands, and a straightforward double-precision convolution to check a kernel against.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/codegen/kernel_desc.h"

namespace kiln::codegen::testing {

struct ConvCase {
  int64_t n, c, h, w, oc, kh, kw;
  std::array<int64_t, 2> strides{1, 1}, dilations{1, 1};
  std::array<int64_t, 4> pads{0, 0, 0, 0};  // top, left, bottom, right
  bool bias = true;
  Activation act = Activation::None;  // Clip is Clip(0, 6)
  bool residual = false;              // chain: result + R[n][oc][oh][ow], then Relu
  int64_t groups = 1;                 // c and oc are the totals; weights [oc][c/groups][kh][kw]
};

// The Conv kernel description of the case (inputs x, OIHW weights, bias?, residual?).
KernelDesc describeConv(const ConvCase& t, const std::string& name);

// Random operands (seeds 1-4), the weights OIHW; r has the output's size.
struct ConvOperands {
  std::vector<float> x, w, b, r;
};
ConvOperands randomConvOperands(const ConvCase& t);

// The case computed in double precision, rounded to float; `output` is describeConv's shape.
std::vector<float> referenceConv(const ConvCase& t, const ConvOperands& in,
                                 const std::vector<int64_t>& output);

}  // namespace kiln::codegen::testing
