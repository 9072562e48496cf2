// Tests for --expected_output comparison and --tolerance parsing.
#include "tensor_compare.h"

#include <gtest/gtest.h>

#include "cli_error.h"
#include "tensor_spec.h"

namespace kiln::cli {
namespace {

TEST(TensorCompare, EqualWithinTolerance) {
  Tolerance tol{1e-3, 1e-5};
  EXPECT_FALSE(compareTensors(parseTensorSpec("2xf32=1 100"), parseTensorSpec("2xf32=1.0005 100.09"),
                              tol));
}

TEST(TensorCompare, ReportsWorstElement) {
  Tolerance tol{1e-3, 1e-5};
  auto m = compareTensors(parseTensorSpec("2x2xf32=1 2 3 4"), parseTensorSpec("2x2xf32=1 2.1 3 5"),
                          tol);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->message,
            "2 of 4 elements differ (wanted within rtol=0.001 atol=1e-05); worst at [1, 1]: "
            "got 4., expected 5. (|diff| 1)");
}

// f64 differences below float32's resolution are seen, and an f32 result is not an f64 one.
TEST(TensorCompare, Float64) {
  Tolerance exact{0, 0};
  EXPECT_FALSE(compareTensors(parseTensorSpec("2xf64=0.30000000000000004 1"),
                              parseTensorSpec("2xf64=0.30000000000000004 1"), exact));
  auto m = compareTensors(parseTensorSpec("1xf64=0.30000000000000004"),
                          parseTensorSpec("1xf64=0.3"), exact);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->message, "1 of 1 elements differ (wanted within rtol=0 atol=0); worst at [0]: "
                        "got 0.3, expected 0.3 (|diff| 5.55e-17)");
  m = compareTensors(parseTensorSpec("2xf32=1 2"), parseTensorSpec("2xf64=1 2"), exact);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->message, "got 2xf32, expected 2xf64");
}

TEST(TensorCompare, ShapeTypeAndNan) {
  Tolerance tol;
  auto m = compareTensors(parseTensorSpec("4xf32"), parseTensorSpec("2x2xf32"), tol);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->message, "got 4xf32, expected 2x2xf32");
  EXPECT_FALSE(compareTensors(parseTensorSpec("1xf32=nan"), parseTensorSpec("1xf32=nan"), tol));
  EXPECT_TRUE(compareTensors(parseTensorSpec("1xf32=nan"), parseTensorSpec("1xf32=0"), tol));
}

TEST(TensorCompare, IntegersExactUnlessAtolAtLeastOne) {
  EXPECT_TRUE(compareTensors(parseTensorSpec("2xi8=1 2"), parseTensorSpec("2xi8=1 3"), {}));
  EXPECT_FALSE(compareTensors(parseTensorSpec("2xi8=1 2"), parseTensorSpec("2xi8=1 3"), {0, 1}));
  EXPECT_TRUE(compareTensors(parseTensorSpec("2xi8=1 2"), parseTensorSpec("2xi8=1 4"), {0, 1}));
}

TEST(TensorCompare, ParsesTolerance) {
  Tolerance both = parseTolerance("1e-3,1e-7");
  EXPECT_EQ(both.rtol, 1e-3);
  EXPECT_EQ(both.atol, 1e-7);
  Tolerance one = parseTolerance("0.01");
  EXPECT_EQ(one.rtol, 0.01);
  EXPECT_EQ(one.atol, 0.01);
  try {
    parseTolerance("x,1");
    FAIL();
  } catch (const CliError& e) {
    EXPECT_STREQ(e.what(), "invalid --tolerance 'x,1': expected RTOL[,ATOL], e.g. 1e-3,1e-5");
  }
}

}  // namespace
}  // namespace kiln::cli
