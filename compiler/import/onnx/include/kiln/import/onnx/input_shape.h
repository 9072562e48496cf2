// The `--input-shape=NAME:1x3x224x224` flag: fixes the unknown or symbolic dimensions of one
// model input before shape inference. This header parses the flag's value; the importer
// applies it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::import {

// One `--input-shape` override: the input's name and its full static shape.
struct InputShape {
  std::string name;
  std::vector<int64_t> dims;
};

// Parses the value of one `--input-shape` flag ("NAME:DxDxD"). The name may itself contain
// ':' (TensorFlow-style "input:0"), so the dims follow the last ':'. Throws kiln::CompileError
// naming the flag when the syntax is wrong.
InputShape parseInputShape(std::string_view flagValue);

// "1x3x224x224" for {1, 3, 224, 224}; "?" stands for an unknown dim (-1).
std::string formatDims(const std::vector<int64_t>& dims);

}  // namespace kiln::import
