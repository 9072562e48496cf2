// NumPy .npy files: read format 1.0/2.0/3.0 and write 1.0 (2.0 when the header needs it),
// little-endian, C order, dtypes f32 f16 f64 i8 u8 i16 i32 i64 bool. Anything else (Fortran
// order, big-endian, other dtypes, truncated data) is a CliError naming the file.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "host_tensor.h"

namespace kiln::cli {

// Parses a whole .npy image; `name` is used in error messages.
HostTensor decodeNpy(std::span<const uint8_t> bytes, const std::string& name);
HostTensor readNpyFile(const std::string& path);

std::vector<uint8_t> encodeNpy(const HostTensor& tensor);
void writeNpyFile(const std::string& path, const HostTensor& tensor);

// Reads a whole file; CliError "cannot open '<path>': <reason>" when it cannot.
std::vector<uint8_t> readFileBytes(const std::string& path);
void writeFileBytes(const std::string& path, std::span<const uint8_t> bytes);

}  // namespace kiln::cli
