// How far two threads of this machine can speed up a call shaped like ResNet-18's, with no
// kiln in it (Google Benchmark; a measurement, not a test): the machine's own ceiling for
// issue 9's "2 threads >= 1.8x faster than 1" bar, as `kiln bench --floor` is for jitter.
//
// A call is kStages stages; in each, every thread does its share of fixed FMA work (in
// registers, the widest instruction set the CPU has, picked at run time), then streams its
// share of the stage's slice of a buffer as large as ResNet-18's weights (which do not fit the
// last-level cache, so every call reads them from memory), then waits at a spin barrier, as
// the thread pool's threads wait between stages. The second thread lives across calls and
// spins between them, as the pool's worker does. Calls alternate between 1 and 2 threads in
// chunks of kChunkCalls, so that both see the same phases of a shared host. Counters:
// p50 and min per call at 1 and at 2 threads (us), speedup_p50 = p50 1T / p50 2T,
// speedup_min = min 1T / min 2T, spread_2t = p50 2T / min 2T (how much the host's slow
// phases take from a 2-thread call). Run by hand (Linux, x86-64):
//   build-*/bin/kiln_two_thread_floor_bench
#include <benchmark/benchmark.h>
#include <immintrin.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include "vector_sum.h"

namespace {

constexpr int kStages = 18;                 // ResNet-18's pool stages
constexpr int64_t kBufferBytes = 54 << 20;  // ResNet-18's weights, f32
constexpr double kCallGflop = 2.4;          // about ResNet-18's effective work (Winograd)
constexpr int kChunkCalls = 25;
constexpr int kChunks = 8;  // per thread count

inline void cpuRelax() { _mm_pause(); }

// FMA rounds on 16 independent accumulators; `acc` carries the result between stages.
__attribute__((target("avx512f"))) void fmaRoundsAvx512(int64_t rounds, float* acc) {
  __m512 a[16];
  for (int i = 0; i < 16; ++i) a[i] = _mm512_set1_ps(acc[i]);
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  for (int64_t r = 0; r < rounds; ++r) {
#pragma unroll
    for (int i = 0; i < 16; ++i) a[i] = _mm512_fmadd_ps(a[i], m, c);
  }
  for (int i = 0; i < 16; ++i) acc[i] = _mm512_reduce_add_ps(a[i]) / 16;
}
__attribute__((target("avx2,fma"))) void fmaRoundsAvx2(int64_t rounds, float* acc) {
  __m256 a[12];
  for (int i = 0; i < 12; ++i) a[i] = _mm256_set1_ps(acc[i]);
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (int64_t r = 0; r < rounds; ++r) {
#pragma unroll
    for (int i = 0; i < 12; ++i) a[i] = _mm256_fmadd_ps(a[i], m, c);
  }
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_cvtss_f32(a[i]);
}

struct Machine {
  bool avx512 = false;
  int64_t roundsPerCall = 0;  // FMA rounds of one call, all threads together
  void fma(int64_t rounds, float* acc) const {
    avx512 ? fmaRoundsAvx512(rounds, acc) : fmaRoundsAvx2(rounds, acc);
  }
  float sum(const float* data, size_t n) const { return kiln::bench::sumFloats(data, n); }
};

// The stages of one call on `threads` threads; `id` is this thread's index.
class CallShape {
 public:
  explicit CallShape(const Machine& m) : m_(m), buffer_(size_t(kBufferBytes) / sizeof(float), 1.0f) {}

  void stages(int id, int threads, float* acc) {
    const size_t slice = buffer_.size() / kStages, share = slice / size_t(threads);
    for (int s = 0; s < kStages; ++s) {
      m_.fma(m_.roundsPerCall / kStages / threads, acc);
      acc[0] += m_.sum(buffer_.data() + size_t(s) * slice + size_t(id) * share, share) * 1e-9f;
      if (threads > 1) barrier(threads);
    }
  }

  // The second thread: runs a call's stages whenever the first starts one (epoch), until told
  // to stop.
  void worker() {
    float acc[16] = {};
    uint64_t seen = 0;
    for (;;) {
      uint64_t e;
      while ((e = epoch_.load(std::memory_order_acquire)) == seen) cpuRelax();
      if (e == kStop) return;
      seen = e;
      stages(1, 2, acc);
    }
    benchmark::DoNotOptimize(acc[0]);
  }
  void startTwoThreadCall() { epoch_.fetch_add(1, std::memory_order_release); }
  void stop() { epoch_.store(kStop, std::memory_order_release); }

 private:
  static constexpr uint64_t kStop = ~uint64_t{0};
  void barrier(int threads) {
    const uint32_t generation = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == uint32_t(threads)) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
    } else {
      while (generation_.load(std::memory_order_acquire) == generation) cpuRelax();
    }
  }

  const Machine& m_;
  std::vector<float> buffer_;
  alignas(64) std::atomic<uint64_t> epoch_{0};
  alignas(64) std::atomic<uint32_t> arrived_{0};
  alignas(64) std::atomic<uint32_t> generation_{0};
};

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[size_t(p * double(v.size() - 1))];
}

void twoThreadFloor(benchmark::State& state, const Machine& m) {
  if (std::thread::hardware_concurrency() < 2) {
    state.SkipWithError("needs two CPUs");
    return;
  }
  CallShape shape(m);
  std::thread second([&] { shape.worker(); });
  float acc[16] = {};
  std::vector<double> one, two;
  for (auto _ : state) {
    for (int chunk = 0; chunk < 2 * kChunks; ++chunk) {
      const int threads = chunk % 2 == 0 ? 1 : 2;
      for (int c = 0; c < kChunkCalls; ++c) {
        auto t0 = std::chrono::steady_clock::now();
        if (threads == 2) shape.startTwoThreadCall();
        shape.stages(0, threads, acc);
        auto t1 = std::chrono::steady_clock::now();
        (threads == 1 ? one : two).push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      }
    }
  }
  shape.stop();
  second.join();
  benchmark::DoNotOptimize(acc[0]);
  const double p50One = percentile(one, 0.5), p50Two = percentile(two, 0.5);
  const double minOne = percentile(one, 0), minTwo = percentile(two, 0);
  state.counters["p50_1t_us"] = p50One;
  state.counters["p50_2t_us"] = p50Two;
  state.counters["min_1t_us"] = minOne;
  state.counters["min_2t_us"] = minTwo;
  state.counters["speedup_p50"] = p50One / p50Two;
  state.counters["speedup_min"] = minOne / minTwo;
  state.counters["spread_2t"] = p50Two / minTwo;
}

}  // namespace

int main(int argc, char** argv) {
  __builtin_cpu_init();
  static Machine machine;
  machine.avx512 = __builtin_cpu_supports("avx512f");
  if (!machine.avx512 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
    std::fprintf(stderr, "kiln_two_thread_floor_bench: needs AVX2+FMA or AVX-512\n");
    return 1;
  }
  const double flopsPerRound = machine.avx512 ? 2.0 * 16 * 16 : 2.0 * 8 * 12;
  machine.roundsPerCall = int64_t(kCallGflop * 1e9 / flopsPerRound);
  benchmark::RegisterBenchmark(machine.avx512 ? "two_thread_floor/avx512f" : "two_thread_floor/avx2_fma",
                               [](benchmark::State& s) { twoThreadFloor(s, machine); })
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
