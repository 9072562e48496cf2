// The fixed work of `kiln bench --floor` (machine_floor.h): the integer chain computes the
// 64-bit linear congruential sequence x' = 6364136223846793005 x + 1442695040888963407
// (mod 2^64) from seed | 1 (values worked out with Python's integers); the vector work is
// deterministic and depends on its length; the calibration gives usable step counts. No
// timing is asserted.
#include "machine_floor.h"

#include <gtest/gtest.h>

namespace kiln::cli {
namespace {

TEST(MachineFloor, IntegerChainIsTheSequence) {
  EXPECT_EQ(runFloorWork(0, 6, FloorKind::IntegerChain), 7u);  // no steps: the odd seed
  EXPECT_EQ(runFloorWork(3, 5, FloorKind::IntegerChain), 15135621383883345378ull);
  EXPECT_EQ(runFloorWork(3, 4, FloorKind::IntegerChain), 15135621383883345378ull);  // 4 | 1
}

TEST(MachineFloor, VectorWorkOnThisCpu) {
  FloorKind kind = floorKind();
  EXPECT_EQ(runFloorWork(100, 3, kind), runFloorWork(100, 3, kind));
  EXPECT_NE(runFloorWork(100, 3, kind), runFloorWork(1000, 3, kind));
}

TEST(MachineFloor, CalibratesToAtLeastOneStep) {
  for (FloorKind kind : {floorKind(), FloorKind::IntegerChain}) {
    EXPECT_GE(calibrateFloorSteps(0.0, kind), 1u);
    // A factor of 1000 in the wanted length cannot be undone by any machine's noise between
    // two calibrations.
    EXPECT_GT(calibrateFloorSteps(1000.0, kind), 10 * calibrateFloorSteps(1.0, kind));
  }
}

}  // namespace
}  // namespace kiln::cli
