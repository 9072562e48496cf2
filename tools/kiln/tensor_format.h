// Printing tensors to a terminal in numpy's style: nested brackets, aligned columns, and
// `...` elision of the middle of every axis when the tensor is large.
#pragma once

#include <string>

#include "host_tensor.h"

namespace kiln::cli {

struct FormatOptions {
  size_t threshold = 1000;  // more elements than this: elide (numpy's default)
  size_t edgeItems = 3;     // elements kept at each end of an elided axis
};

// The values only, e.g. "[[1 2]\n [3 4]]".
std::string formatTensorValues(const HostTensor& tensor, const FormatOptions& options = {});

// One element as text: "%.6g"-like for floats (with a trailing '.' for integral values, as
// numpy does), decimal for integers, True/False for bool.
std::string formatElement(const HostTensor& tensor, size_t index);

}  // namespace kiln::cli
