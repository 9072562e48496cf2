// The machine's own latency jitter, for `kiln bench --floor`: a fixed piece of work with no
// memory traffic and no system calls, sized to last as long as one call of the model, timed
// between the model's calls. Whatever moves its time (the host scheduling the virtual CPU
// away, frequency changes, interrupts, a busy sibling thread) moves the model's calls too,
// and nothing of the runtime's can: so its p99/p50 is the floor under the runtime's jitter on
// this machine, measured in the same seconds.
#pragma once

#include <cstdint>

namespace kiln::cli {

// `steps` dependent integer multiply-adds (about four cycles each on current x86-64 and
// AArch64 cores); returns the chain's last value, so the work cannot be optimised away.
uint64_t runFloorWork(uint64_t steps, uint64_t seed);

// The number of steps whose run takes about `micros` microseconds on the calling thread now:
// the median of several timed runs, scaled. At least 1.
uint64_t calibrateFloorSteps(double micros);

}  // namespace kiln::cli
