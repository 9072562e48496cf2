// Tests for numpy-style printing; expected strings are what numpy 1.24 prints for the same
// arrays (str(arr)), apart from the float formatting noted below.
#include "tensor_format.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tensor_spec.h"

namespace kiln::cli {
namespace {

TEST(TensorFormat, Matrix) {
  // numpy: str(np.arange(1, 7).reshape(2, 3)) == "[[1 2 3]\n [4 5 6]]"
  EXPECT_EQ(formatTensorValues(parseTensorSpec("2x3xi32=1 2 3 4 5 6")), "[[1 2 3]\n [4 5 6]]");
}

TEST(TensorFormat, FloatsAlignedLikeNumpy) {
  // numpy: str(np.array([1, -2.5, 10], np.float32)) == "[ 1.  -2.5 10. ]"; we right-align
  // each element to the widest one without numpy's fixed-precision padding.
  EXPECT_EQ(formatTensorValues(parseTensorSpec("3xf32=1 -2.5 10")), "[  1. -2.5  10.]");
}

TEST(TensorFormat, ThreeDimensionsSeparateBlocksWithBlankLine) {
  // numpy: str(np.arange(8).reshape(2, 2, 2)) == "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]"
  EXPECT_EQ(formatTensorValues(parseTensorSpec("2x2x2xi8=0 1 2 3 4 5 6 7")),
            "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
}

TEST(TensorFormat, ElidesLargeTensors) {
  // numpy: str(np.arange(2000)) == "[   0    1    2 ... 1997 1998 1999]"
  HostTensor t{ElementType::I32, {2000}, std::vector<uint8_t>(8000)};
  for (int32_t i = 0; i < 2000; ++i) std::memcpy(t.data.data() + 4 * i, &i, 4);
  EXPECT_EQ(formatTensorValues(t), "[   0    1    2 ... 1997 1998 1999]");
}

TEST(TensorFormat, ScalarsBoolsAndSpecials) {
  EXPECT_EQ(formatTensorValues(parseTensorSpec("f32=0.125")), "0.125");
  EXPECT_EQ(formatTensorValues(parseTensorSpec("2xi1=1 0")), "[ True False]");
  EXPECT_EQ(formatTensorValues(parseTensorSpec("3xf32=inf -inf nan")), "[ inf -inf  nan]");
}

}  // namespace
}  // namespace kiln::cli
