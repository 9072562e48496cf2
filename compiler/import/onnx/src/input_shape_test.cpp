// Tests for parsing `--input-shape=NAME:DIMS` (every syntax error's message included).
#include "kiln/import/onnx/input_shape.h"

#include <gtest/gtest.h>

#include "kiln/support/diagnostics.h"

namespace kiln::import {
namespace {

std::string errorOf(std::string_view flag) {
  try {
    parseInputShape(flag);
  } catch (const CompileError& error) {
    return error.what();
  }
  return "no error";
}

TEST(InputShape, ParsesNameAndDims) {
  InputShape shape = parseInputShape("input:1x3x224x224");
  EXPECT_EQ(shape.name, "input");
  EXPECT_EQ(shape.dims, (std::vector<int64_t>{1, 3, 224, 224}));
}

TEST(InputShape, OneDim) {
  EXPECT_EQ(parseInputShape("x:7").dims, (std::vector<int64_t>{7}));
}

TEST(InputShape, NameMayContainColons) {
  InputShape shape = parseInputShape("serving:input:0:2x5");
  EXPECT_EQ(shape.name, "serving:input:0");
  EXPECT_EQ(shape.dims, (std::vector<int64_t>{2, 5}));
}

TEST(InputShape, MissingColon) {
  EXPECT_EQ(errorOf("input1x3"),
            "--input-shape=input1x3: missing ':' between name and dims (expected NAME:DIMS, "
            "e.g. --input-shape=input:1x3x224x224)");
}

TEST(InputShape, EmptyName) {
  EXPECT_EQ(errorOf(":1x3"),
            "--input-shape=:1x3: empty input name (expected NAME:DIMS, e.g. "
            "--input-shape=input:1x3x224x224)");
}

TEST(InputShape, NoDims) {
  EXPECT_EQ(errorOf("x:"),
            "--input-shape=x:: no dims after ':' (expected NAME:DIMS, e.g. "
            "--input-shape=input:1x3x224x224)");
}

TEST(InputShape, BadDims) {
  const std::string tail = " (expected NAME:DIMS, e.g. --input-shape=input:1x3x224x224)";
  EXPECT_EQ(errorOf("x:1xax3"), "--input-shape=x:1xax3: dim 'a' is not a positive integer" + tail);
  EXPECT_EQ(errorOf("x:1x0"), "--input-shape=x:1x0: dim '0' is not a positive integer" + tail);
  EXPECT_EQ(errorOf("x:1x-2"), "--input-shape=x:1x-2: dim '-2' is not a positive integer" + tail);
  EXPECT_EQ(errorOf("x:1x"), "--input-shape=x:1x: dim '' is not a positive integer" + tail);
  EXPECT_EQ(errorOf("x:1,3"), "--input-shape=x:1,3: dim '1,3' is not a positive integer" + tail);
  EXPECT_EQ(errorOf("x:3x?"), "--input-shape=x:3x?: dim '?' is not a positive integer" + tail);
}

TEST(InputShape, TooLarge) {
  EXPECT_EQ(errorOf("x:1048576x1048576x2"),
            "--input-shape=x:1048576x1048576x2: the shape has over 2^40 elements (expected "
            "NAME:DIMS, e.g. --input-shape=input:1x3x224x224)");
  EXPECT_EQ(parseInputShape("x:1048576x1048576").dims.size(), 2u);
}

TEST(InputShape, FormatDims) {
  EXPECT_EQ(formatDims({1, 3, 224, 224}), "1x3x224x224");
  EXPECT_EQ(formatDims({-1, 3}), "?x3");
  EXPECT_EQ(formatDims({}), "scalar");
}

}  // namespace
}  // namespace kiln::import
