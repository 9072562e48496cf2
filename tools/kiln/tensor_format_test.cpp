// Tests for numpy-style printing: every expected string is what numpy 1.24 prints for the same
// float32/int array with str(arr) (Debian's python3-numpy, default print options).
#include "tensor_format.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tensor_spec.h"

namespace kiln::cli {
namespace {

std::string show(const std::string& spec) { return formatTensorValues(parseTensorSpec(spec)); }

TEST(TensorFormat, Integers) {
  EXPECT_EQ(show("2x3xi32=1 2 3 4 5 6"), "[[1 2 3]\n [4 5 6]]");
  EXPECT_EQ(show("2x2x2xi8=0 1 2 3 4 5 6 7"), "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
  EXPECT_EQ(show("2xi1=1 0"), "[ True False]");
}

TEST(TensorFormat, PositionalFloatsAlignDecimalPoints) {
  EXPECT_EQ(show("3xf32=0 0.25 1.75"), "[0.   0.25 1.75]");
  EXPECT_EQ(show("2xf32=0.3 0.33333334"), "[0.3        0.33333334]");
  EXPECT_EQ(show("2x2xf32=1 -2.5 10 nan"), "[[ 1.  -2.5]\n [10.   nan]]");
  EXPECT_EQ(show("f32=0.125"), "0.125");
}

// float64 keeps 8 digits of its own precision: numpy str(np.array([0.1, 1/3])) and
// str(np.array([2.0, 0.1 + 0.2])).
TEST(TensorFormat, Float64) {
  EXPECT_EQ(show("2xf64=0.1 0.3333333333333333"), "[0.1        0.33333333]");
  EXPECT_EQ(show("2xf64=2 0.30000000000000004"), "[2.  0.3]");
}

TEST(TensorFormat, ScientificWhenMagnitudesDiffer) {
  EXPECT_EQ(show("2xf32=1e-5 1.5"), "[1.0e-05 1.5e+00]");
  EXPECT_EQ(show("3xf32=-1e-5 1.5 inf"), "[-1.0e-05  1.5e+00      inf]");
  EXPECT_EQ(show("2xf32=1e-20 0"), "[1.e-20 0.e+00]");
}

TEST(TensorFormat, WrapsAtSeventyFiveColumns) {
  // numpy: str(np.arange(30, dtype=np.float32) * 1.5)
  HostTensor t{ElementType::F32, {30}, std::vector<uint8_t>(120)};
  for (int i = 0; i < 30; ++i) {
    float v = static_cast<float>(i) * 1.5f;
    std::memcpy(t.data.data() + 4 * i, &v, 4);
  }
  EXPECT_EQ(formatTensorValues(t),
            "[ 0.   1.5  3.   4.5  6.   7.5  9.  10.5 12.  13.5 15.  16.5 18.  19.5\n"
            " 21.  22.5 24.  25.5 27.  28.5 30.  31.5 33.  34.5 36.  37.5 39.  40.5\n"
            " 42.  43.5]");
}

TEST(TensorFormat, ElidesLargeTensors) {
  // numpy: str(np.arange(2000, dtype=np.int32))
  HostTensor t{ElementType::I32, {2000}, std::vector<uint8_t>(8000)};
  for (int32_t i = 0; i < 2000; ++i) std::memcpy(t.data.data() + 4 * i, &i, 4);
  EXPECT_EQ(formatTensorValues(t), "[   0    1    2 ... 1997 1998 1999]");
  // numpy: str((np.arange(3000, dtype=np.float32) / 7).reshape(3, 1000))
  HostTensor f{ElementType::F32, {3, 1000}, std::vector<uint8_t>(12000)};
  for (int i = 0; i < 3000; ++i) {
    float v = static_cast<float>(i) / 7.0f;
    std::memcpy(f.data.data() + 4 * i, &v, 4);
  }
  EXPECT_EQ(formatTensorValues(f),
            "[[0.0000000e+00 1.4285715e-01 2.8571430e-01 ... 1.4242857e+02\n"
            "  1.4257143e+02 1.4271428e+02]\n"
            " [1.4285715e+02 1.4300000e+02 1.4314285e+02 ... 2.8528571e+02\n"
            "  2.8542856e+02 2.8557144e+02]\n"
            " [2.8571429e+02 2.8585715e+02 2.8600000e+02 ... 4.2814285e+02\n"
            "  4.2828571e+02 4.2842856e+02]]");
}

TEST(TensorFormat, SingleElements) {
  HostTensor t = parseTensorSpec("4xf32=4 0.1 1e-7 -2.5");
  EXPECT_EQ(formatElement(t, 0), "4.");
  EXPECT_EQ(formatElement(t, 1), "0.1");
  EXPECT_EQ(formatElement(t, 2), "1.e-07");
  EXPECT_EQ(formatElement(t, 3), "-2.5");
}

}  // namespace
}  // namespace kiln::cli
