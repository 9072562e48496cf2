// The fixed work of `kiln bench --floor` and its calibration (machine_floor.h).
//
// The work is what a kernel does, without a runtime around it: vector multiply-adds on
// independent accumulators fed by loads from a small buffer that stays in L1 (on x86-64 with
// AVX-512 or AVX2+FMA, picked at run time like bench/fma_peak_bench.cpp; elsewhere a chain of
// integer multiply-adds). So a sibling hardware thread competing for the FMA pipes or the L1,
// a frequency change, the host scheduling the virtual CPU away, or an interrupt moves its time
// as it moves a call's, and nothing of the runtime's can.
#include "machine_floor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kiln::cli {
namespace {

// 16 KB of floats read over and over: in L1 after the first pass.
constexpr int kBufferFloats = 4096;
alignas(64) float gBuffer[kBufferFloats];

void fillBuffer() {
  static bool filled = false;
  if (filled) return;
  for (int i = 0; i < kBufferFloats; ++i) gBuffer[i] = 1.0f + float(i % 97) * 1e-7f;
  filled = true;
}

uint64_t integerChain(uint64_t steps, uint64_t seed) {
  uint64_t x = seed | 1;
  for (uint64_t i = 0; i < steps; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    // An empty barrier the optimiser cannot see through: no closed form, no vectorising.
    __asm__ __volatile__("" : "+r"(x));
  }
  return x;
}

#if defined(__x86_64__)
// One step: 8 multiply-adds on 8 accumulators, each with a vector loaded from the buffer.
__attribute__((target("avx512f"))) uint64_t vectorWorkAvx512(uint64_t steps, uint64_t seed) {
  __m512 acc[8];
  for (int i = 0; i < 8; ++i) acc[i] = _mm512_set1_ps(float(seed % 7) + float(i));
  const __m512 m = _mm512_set1_ps(0.999999f);
  uint64_t at = 0;
  for (uint64_t s = 0; s < steps; ++s) {
    for (int i = 0; i < 8; ++i)
      acc[i] = _mm512_fmadd_ps(acc[i], m, _mm512_load_ps(gBuffer + at + 16 * i));
    at = (at + 128) % kBufferFloats;
  }
  __m512 sum = acc[0];
  for (int i = 1; i < 8; ++i) sum = _mm512_add_ps(sum, acc[i]);
  float lane = _mm512_cvtss_f32(sum);
  uint32_t bits;
  std::memcpy(&bits, &lane, sizeof bits);
  return bits;
}

__attribute__((target("avx2,fma"))) uint64_t vectorWorkAvx2(uint64_t steps, uint64_t seed) {
  __m256 acc[8];
  for (int i = 0; i < 8; ++i) acc[i] = _mm256_set1_ps(float(seed % 7) + float(i));
  const __m256 m = _mm256_set1_ps(0.999999f);
  uint64_t at = 0;
  for (uint64_t s = 0; s < steps; ++s) {
    for (int i = 0; i < 8; ++i)
      acc[i] = _mm256_fmadd_ps(acc[i], m, _mm256_load_ps(gBuffer + at + 8 * i));
    at = (at + 64) % kBufferFloats;
  }
  __m256 sum = acc[0];
  for (int i = 1; i < 8; ++i) sum = _mm256_add_ps(sum, acc[i]);
  float lane = _mm256_cvtss_f32(sum);
  uint32_t bits;
  std::memcpy(&bits, &lane, sizeof bits);
  return bits;
}
#endif

}  // namespace

FloorKind floorKind() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) return FloorKind::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return FloorKind::Avx2;
#endif
  return FloorKind::IntegerChain;
}

uint64_t runFloorWork(uint64_t steps, uint64_t seed, FloorKind kind) {
  switch (kind) {
#if defined(__x86_64__)
    case FloorKind::Avx512:
      fillBuffer();
      return vectorWorkAvx512(steps, seed);
    case FloorKind::Avx2:
      fillBuffer();
      return vectorWorkAvx2(steps, seed);
#endif
    default:
      return integerChain(steps, seed);
  }
}

uint64_t calibrateFloorSteps(double micros, FloorKind kind) {
  using Clock = std::chrono::steady_clock;
  // A run of a fixed length long enough to read the clock's resolution away, timed several
  // times; the median's rate scales to the wanted length.
  constexpr uint64_t kProbeSteps = 20000;
  constexpr int kProbes = 15;
  std::vector<double> nsPerStep;
  uint64_t sink = 0;
  runFloorWork(kProbeSteps, 0, kind);  // the buffer into L1, the vector unit awake
  for (int i = 0; i < kProbes; ++i) {
    Clock::time_point t0 = Clock::now();
    sink += runFloorWork(kProbeSteps, sink + uint64_t(i), kind);
    double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    nsPerStep.push_back(ns / double(kProbeSteps));
  }
  std::nth_element(nsPerStep.begin(), nsPerStep.begin() + kProbes / 2, nsPerStep.end());
  double rate = std::max(nsPerStep[kProbes / 2], 1e-3);
  // (sink feeds the result so the probes cannot be dropped; it changes it by at most 1.)
  return std::max<uint64_t>(1, uint64_t(micros * 1000.0 / rate) + (sink & 1));
}

}  // namespace kiln::cli
