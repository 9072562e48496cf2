// Tiny .tflite models built in memory for the importer's tests, with the builder API that
// flatc generates from schema/tflite_subset.fbs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tflite_subset_generated.h"

namespace kiln::import::tflite::testing {

namespace fb = ::kiln::tflite_fb;

struct TestTensor {
  std::string name;
  fb::TensorType type = fb::TensorType::FLOAT32;
  std::vector<int32_t> shape;
  std::vector<uint8_t> data;  // empty: not a constant
  std::vector<float> scales;  // empty: not quantized
  std::vector<int64_t> zeroPoints;
  int32_t quantAxis = 0;
};

using OptionsBuilder = std::function<flatbuffers::Offset<void>(flatbuffers::FlatBufferBuilder&)>;

struct TestOperator {
  int32_t code = 0;
  std::vector<int32_t> inputs, outputs;
  fb::BuiltinOptions optionsType = fb::BuiltinOptions::NONE;
  OptionsBuilder options;  // builds the options table (when optionsType is set)
  std::string customCode;  // for code 32 (CUSTOM)
};

struct TestModel {
  std::vector<TestTensor> tensors;
  std::vector<TestOperator> operators;
  std::vector<int32_t> inputs, outputs;
  uint32_t version = 3;
};

// The serialized .tflite bytes.
std::string buildTflite(const TestModel& model);

std::vector<uint8_t> floatBytes(const std::vector<float>& values);
std::vector<uint8_t> int32Bytes(const std::vector<int32_t>& values);
std::vector<uint8_t> int8Bytes(const std::vector<int8_t>& values);

}  // namespace kiln::import::tflite::testing
