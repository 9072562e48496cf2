// The fixed work of `kiln bench --floor` (machine_floor.h): the chain computes the 64-bit
// linear congruential sequence x' = 6364136223846793005 x + 1442695040888963407 (mod 2^64)
// from seed | 1 (values worked out with Python's integers), and the calibration gives a
// usable step count. No timing is asserted.
#include "machine_floor.h"

#include <gtest/gtest.h>

namespace kiln::cli {
namespace {

TEST(MachineFloor, RunsTheFixedChain) {
  EXPECT_EQ(runFloorWork(0, 6), 7u);  // no steps: the odd seed itself
  EXPECT_EQ(runFloorWork(3, 5), 15135621383883345378ull);
  EXPECT_EQ(runFloorWork(3, 4), 15135621383883345378ull);  // 4 | 1 == 5
}

TEST(MachineFloor, CalibratesToAtLeastOneStep) {
  EXPECT_GE(calibrateFloorSteps(0.0), 1u);
  // 1 ms of a ~1-ns step chain: far more steps than a 1-us run (a factor of 1000 in the
  // wanted length cannot be undone by any machine's noise between two calibrations).
  EXPECT_GT(calibrateFloorSteps(1000.0), 10 * calibrateFloorSteps(1.0));
}

}  // namespace
}  // namespace kiln::cli
