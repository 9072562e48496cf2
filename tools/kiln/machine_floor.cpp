// The fixed register-only work of `kiln bench --floor` and its calibration (machine_floor.h).
#include "machine_floor.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace kiln::cli {

uint64_t runFloorWork(uint64_t steps, uint64_t seed) {
  uint64_t x = seed | 1;
  for (uint64_t i = 0; i < steps; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    // An empty barrier the optimiser cannot see through: no closed form, no vectorising.
    __asm__ __volatile__("" : "+r"(x));
  }
  return x;
}

uint64_t calibrateFloorSteps(double micros) {
  using Clock = std::chrono::steady_clock;
  // A run of a fixed length long enough to read the clock's resolution away, timed several
  // times; the median's rate scales to the wanted length.
  constexpr uint64_t kProbeSteps = 20000;
  constexpr int kProbes = 15;
  std::vector<double> nsPerStep;
  uint64_t sink = 0;
  for (int i = 0; i < kProbes; ++i) {
    Clock::time_point t0 = Clock::now();
    sink += runFloorWork(kProbeSteps, sink + uint64_t(i));
    double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    nsPerStep.push_back(ns / double(kProbeSteps));
  }
  std::nth_element(nsPerStep.begin(), nsPerStep.begin() + kProbes / 2, nsPerStep.end());
  double rate = std::max(nsPerStep[kProbes / 2], 1e-3);
  // (sink feeds the result so the probes cannot be dropped; it changes it by at most 1.)
  return std::max<uint64_t>(1, uint64_t(micros * 1000.0 / rate) + (sink & 1));
}

}  // namespace kiln::cli
