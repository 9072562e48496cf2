// Comparing an output tensor with an expected one (`kiln run --expected_output=`):
// same type and shape, then every element within |got - want| <= atol + rtol * |want|
// (NaN matches NaN). Reports the worst element.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "host_tensor.h"

namespace kiln::cli {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
};

// Parses "RTOL[,ATOL]" (e.g. "1e-3,1e-5"); a single number sets both.
Tolerance parseTolerance(const std::string& text);

struct Mismatch {
  std::string message;  // one line, e.g. "3 of 10 elements differ ...; worst at [0, 7]: ..."
};

// Integer outputs are compared exactly unless atol >= 1 (then within atol).
std::optional<Mismatch> compareTensors(const HostTensor& got, const HostTensor& expected,
                                       const Tolerance& tolerance);

}  // namespace kiln::cli
