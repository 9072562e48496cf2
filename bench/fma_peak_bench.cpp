// The f32 FMA peak of one core, in GFLOP/s (Google Benchmark; a measurement, not a test): the
// ceiling that `kiln bench --per-dispatch --peak-gflops=X` compares each convolution with.
//
// A loop of fused multiply-adds on independent accumulators, kept in registers: enough of
// them to cover the FMA latency times the number of FMA pipes (Zen 3: 4 cycles x 2 pipes = 8
// in flight; 12 ymm accumulators of AVX2 leave room; AVX-512: 16 zmm accumulators). The
// instruction set is chosen at run time from the CPU's features (the file is compiled for
// the baseline; each loop carries a target attribute), so one binary measures AVX-512 where
// there is one and AVX2+FMA elsewhere. Counter GFLOP (printed "GFLOP=X/s") = 2 x lanes x
// accumulators x rounds per second of the thread's CPU time, not wall time: on a shared
// machine the wall clock also counts the time other processes hold the core, and the peak is
// a property of the core.
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <cstdint>
#include <cstdio>

namespace {

constexpr int64_t kInner = 1024;  // FMA rounds per call of a loop

__attribute__((target("avx2,fma"))) float fmaLoopAvx2(int64_t rounds, float seed) {
  constexpr int kAcc = 12;
  __m256 acc[kAcc];
  for (int i = 0; i < kAcc; ++i) acc[i] = _mm256_set1_ps(seed + float(i));
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (int64_t r = 0; r < rounds; ++r) {
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] = _mm256_fmadd_ps(acc[i], m, c);
  }
  __m256 sum = acc[0];
  for (int i = 1; i < kAcc; ++i) sum = _mm256_add_ps(sum, acc[i]);
  return _mm256_cvtss_f32(sum);
}
constexpr double kFlopsPerRoundAvx2 = 2.0 * 8 * 12;

__attribute__((target("avx512f"))) float fmaLoopAvx512(int64_t rounds, float seed) {
  constexpr int kAcc = 16;
  __m512 acc[kAcc];
  for (int i = 0; i < kAcc; ++i) acc[i] = _mm512_set1_ps(seed + float(i));
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  for (int64_t r = 0; r < rounds; ++r) {
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] = _mm512_fmadd_ps(acc[i], m, c);
  }
  __m512 sum = acc[0];
  for (int i = 1; i < kAcc; ++i) sum = _mm512_add_ps(sum, acc[i]);
  return _mm512_reduce_add_ps(sum);
}
constexpr double kFlopsPerRoundAvx512 = 2.0 * 16 * 16;

template <float (*Loop)(int64_t, float)>
void fmaPeak(benchmark::State& state, double flopsPerRound) {
  // Opaque inputs: with constant ones the compiler would evaluate the loop at compile time.
  float seed = 1.0f;
  int64_t rounds = kInner;
  for (auto _ : state) {
    benchmark::DoNotOptimize(seed);
    benchmark::DoNotOptimize(rounds);
    float r = Loop(rounds, seed);
    benchmark::DoNotOptimize(r);
  }
  state.counters["GFLOP"] = benchmark::Counter(
      flopsPerRound * double(kInner) * double(state.iterations()) / 1e9,
      benchmark::Counter::kIsRate);
}

}  // namespace

int main(int argc, char** argv) {
  __builtin_cpu_init();
  bool any = false;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    benchmark::RegisterBenchmark("fma_peak/avx2_fma", [](benchmark::State& s) {
      fmaPeak<fmaLoopAvx2>(s, kFlopsPerRoundAvx2);
    });
    any = true;
  }
  if (__builtin_cpu_supports("avx512f")) {
    benchmark::RegisterBenchmark("fma_peak/avx512f", [](benchmark::State& s) {
      fmaPeak<fmaLoopAvx512>(s, kFlopsPerRoundAvx512);
    });
    any = true;
  }
  if (!any) {
    std::fprintf(stderr, "fma_peak_bench: this CPU has neither AVX2+FMA nor AVX-512F\n");
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
