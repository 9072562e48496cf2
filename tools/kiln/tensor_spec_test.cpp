// Tests for --input / --expected_output tensor parsing (IREE's forms).
#include "tensor_spec.h"

#include <gtest/gtest.h>

#include <cstring>

#include "cli_error.h"
#include "npy.h"

namespace kiln::cli {
namespace {

std::string errorOf(const std::string& spec) {
  try {
    parseTensorSpec(spec);
  } catch (const CliError& e) {
    return e.what();
  }
  return "";
}

TEST(TensorSpec, ShapeTypeAndValues) {
  HostTensor t = parseTensorSpec("2x2xf32=1 2 3 4.5");
  EXPECT_EQ(t.type, ElementType::F32);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(t.elementAsDouble(0), 1);
  EXPECT_EQ(t.elementAsDouble(3), 4.5);
}

TEST(TensorSpec, CommasBracketsAndNegatives) {
  HostTensor t = parseTensorSpec("3xi32=[-1,2, -3]");
  EXPECT_EQ(t.type, ElementType::I32);
  EXPECT_EQ(t.elementAsDouble(0), -1);
  EXPECT_EQ(t.elementAsDouble(2), -3);
}

TEST(TensorSpec, SplatZerosAndScalar) {
  HostTensor splat = parseTensorSpec("2x3xi8=7");
  EXPECT_EQ(splat.data, std::vector<uint8_t>(6, 7));
  HostTensor zeros = parseTensorSpec("4xf16");
  EXPECT_EQ(zeros.data, std::vector<uint8_t>(8, 0));
  HostTensor scalar = parseTensorSpec("f32=2.5");
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(scalar.elementAsDouble(0), 2.5);
  HostTensor f16 = parseTensorSpec("2xf16=0.5 -2");
  EXPECT_EQ(f16.elementAsDouble(0), 0.5);
  EXPECT_EQ(f16.elementAsDouble(1), -2);
  HostTensor b = parseTensorSpec("3xi1=1 0 true");
  EXPECT_EQ(b.data, (std::vector<uint8_t>{1, 0, 1}));
}

TEST(TensorSpec, NpyFileAndTypedNpyFile) {
  std::string path = testing::TempDir() + "/spec.npy";
  HostTensor t{ElementType::F32, {4}, std::vector<uint8_t>(16, 0)};
  float values[] = {1, 2, 3, 4};
  std::memcpy(t.data.data(), values, 16);
  writeNpyFile(path, t);
  HostTensor plain = parseTensorSpec("@" + path);
  EXPECT_EQ(plain.shape, (std::vector<int64_t>{4}));
  HostTensor reshaped = parseTensorSpec("1x2x2xf32=@" + path);
  EXPECT_EQ(reshaped.shape, (std::vector<int64_t>{1, 2, 2}));
  EXPECT_EQ(reshaped.elementAsDouble(3), 4);
  EXPECT_EQ(errorOf("2x3xf32=@" + path),
            "'" + path + "' holds 4xf32 (4 elements), not 2x3xf32 (6 elements)");
  EXPECT_EQ(errorOf("4xi32=@" + path),
            "'" + path + "' holds f32 values but '4xi32=@" + path + "' asks for i32");
}

TEST(TensorSpec, RawBinaryFile) {
  std::string path = testing::TempDir() + "/raw.bin";
  std::vector<uint8_t> bytes = {1, 2, 3, 4, 5, 6};
  writeFileBytes(path, bytes);
  HostTensor t = parseTensorSpec("2x3xu8=@" + path);
  EXPECT_EQ(t.data, bytes);
  EXPECT_EQ(errorOf("2x3xf32=@" + path),
            "raw file '" + path + "' has 6 bytes, 2x3xf32 needs 24");
}

TEST(TensorSpec, Errors) {
  EXPECT_EQ(errorOf("2x2xf32=1 2 3"), "tensor '2x2xf32' needs 4 values, got 3");
  EXPECT_EQ(errorOf("2x2xf99=1"),
            "cannot parse tensor '2x2xf99=1': expected SHAPExTYPE=VALUES (e.g. 2x2xf32=1 2 3 4), "
            "@FILE.npy or SHAPExTYPE=@FILE");
  EXPECT_EQ(errorOf("2xf32=1 abc"), "invalid f32 value 'abc' in tensor '2xf32=1 abc'");
  EXPECT_EQ(errorOf("1xi8=300"), "value 300 out of range for i8 in tensor '1xi8=300'");
  EXPECT_EQ(errorOf("@/nonexistent.npy"),
            "cannot open '/nonexistent.npy': No such file or directory");
}

}  // namespace
}  // namespace kiln::cli
