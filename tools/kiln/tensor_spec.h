// Parsing tensors given on the command line, in the forms IREE's tools accept:
//   2x2xf32=1 2 3 4          shape, element type and values (one value is splatted,
//                            none gives zeros); values may be separated by spaces or commas
//   f32=2.5                  a scalar
//   @file.npy                a .npy file, shape and type from its header
//   1x1x28x28xf32=@file.npy  a .npy file checked (type, element count) and reshaped;
//                            a file without .npy magic is read as raw little-endian bytes
#pragma once

#include <string>
#include <string_view>

#include "host_tensor.h"

namespace kiln::cli {

HostTensor parseTensorSpec(std::string_view spec);

// Parses "1x3x224x224xf32" into `type` and `shape`; false when it is not of that form.
bool parseTensorType(std::string_view text, ElementType& type, std::vector<int64_t>& shape);

}  // namespace kiln::cli
