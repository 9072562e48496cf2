// The sum of a float buffer read as fast as the core can load it: four independent vector
// accumulators of the widest vectors the CPU has (AVX-512, AVX2 or 16-byte ones, picked at run
// time), so the loop is bound by the loads. Shared by the bench programs that measure read
// rates (cross_core_read_bench.cpp) and stream memory (two_thread_floor_bench.cpp).
#pragma once

#include <cstddef>

namespace kiln::bench {

template <int Bytes>
__attribute__((always_inline)) inline float sumVectors(const float* data, size_t n) {
  typedef float Vec __attribute__((vector_size(Bytes), aligned(4)));
  constexpr size_t kLanes = Bytes / sizeof(float);
  Vec a = {}, b = {}, c = {}, d = {};
  size_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    a += *reinterpret_cast<const Vec*>(data + i);
    b += *reinterpret_cast<const Vec*>(data + i + kLanes);
    c += *reinterpret_cast<const Vec*>(data + i + 2 * kLanes);
    d += *reinterpret_cast<const Vec*>(data + i + 3 * kLanes);
  }
  Vec sum = a + b + c + d;
  float total = 0;
  for (size_t j = 0; j < kLanes; ++j) total += sum[j];
  for (; i < n; ++i) total += data[i];
  return total;
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) inline float sumAvx512(const float* data, size_t n) {
  return sumVectors<64>(data, n);
}
__attribute__((target("avx2"))) inline float sumAvx2(const float* data, size_t n) {
  return sumVectors<32>(data, n);
}
#endif

// [data, data + n) summed with the widest vectors the CPU has.
inline float sumFloats(const float* data, size_t n) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) return sumAvx512(data, n);
  if (__builtin_cpu_supports("avx2")) return sumAvx2(data, n);
#endif
  return sumVectors<16>(data, n);
}

}  // namespace kiln::bench
