// The machine's own latency jitter, for `kiln bench --floor`: a fixed piece of work of the
// kind a kernel does (vector multiply-adds on operands in L1), with no runtime around it and
// no system calls, sized to last as long as one call of the model and timed between the
// model's calls. Whatever moves its time (the host scheduling the virtual CPU away, frequency
// changes, interrupts, a sibling hardware thread on the same core) moves the model's calls
// too, and nothing of the runtime's can: so its p99/p50 is the floor under the runtime's
// jitter on this machine, measured in the same seconds.
#pragma once

#include <cstdint>

namespace kiln::cli {

enum class FloorKind {
  Avx512,        // 8 zmm multiply-adds per step, each with a load from a 16 KB buffer
  Avx2,          // the same on ymm registers (AVX2 + FMA)
  IntegerChain,  // one dependent 64-bit multiply-add per step (other CPUs)
};

// The widest kind this CPU runs.
FloorKind floorKind();

// `steps` steps of `kind`'s work; returns a value computed from all of it, so the work cannot
// be optimised away. IntegerChain returns the 64-bit linear congruential sequence
// x' = 6364136223846793005 x + 1442695040888963407 (mod 2^64) from seed | 1.
uint64_t runFloorWork(uint64_t steps, uint64_t seed, FloorKind kind);

// The number of steps whose run takes about `micros` microseconds on the calling thread now:
// the median of several timed runs, scaled. At least 1.
uint64_t calibrateFloorSteps(double micros, FloorKind kind);

}  // namespace kiln::cli
