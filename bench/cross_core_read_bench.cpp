// How fast one core reads a buffer that the other core has just written, against one it wrote
// itself: what a thread of the pool pays when a stage's work item reads what the previous
// stage's items on the other thread produced (docs/benchmarks.md, "What two threads lose").
// The timed thread runs on CPU 0; a helper pinned to CPU 1 writes the buffer between timed
// reads (only the read is timed); BM_Write* time overwriting the buffer instead (the other
// core's lines must first leave its cache). Linux, two CPUs or more. Run by hand:
//   build-*/bin/kiln_cross_core_read_bench
// BM_ReadAgain reads a buffer that nothing writes between reads, from 2 MB to past the L3:
// how much of the last-level cache one core of a shared host gets (ResNet-18's 54 MB of weights,
// read once per call, come from memory). Each benchmark's bytes_per_second is the read rate;
// the argument is the buffer in KB.
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "vector_sum.h"

namespace {

bool pinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

void writeAll(std::vector<float>& buffer, float value) {
  for (float& x : buffer) x = value;
  benchmark::ClobberMemory();
}

float readAll(const std::vector<float>& buffer) {
  return kiln::bench::sumFloats(buffer.data(), buffer.size());
}

// A helper thread on CPU 1 that writes the buffer whenever asked.
class OtherCore {
 public:
  explicit OtherCore(std::vector<float>& buffer) : buffer_(buffer) {
    thread_ = std::thread([this] {
      pinned_ = pinTo(1);
      ready_.store(true);
      for (;;) {
        int request;
        while ((request = request_.load(std::memory_order_acquire)) == 0) {
        }
        if (request < 0) return;
        writeAll(buffer_, 1.0f);
        request_.store(0, std::memory_order_release);
      }
    });
    while (!ready_.load()) {
    }
  }
  ~OtherCore() {
    request_.store(-1, std::memory_order_release);
    thread_.join();
  }
  bool pinned() const { return pinned_; }
  void write() {
    request_.store(1, std::memory_order_release);
    while (request_.load(std::memory_order_acquire) != 0) {
    }
  }

 private:
  std::vector<float>& buffer_;
  std::atomic<int> request_{0};
  std::atomic<bool> ready_{false};
  bool pinned_ = false;
  std::thread thread_;
};

// Reads (or, with timedWrite, overwrites) the buffer after the other core or this one wrote it.
void timedAfter(benchmark::State& state, bool otherCoreWrote, bool timedWrite) {
  if (!pinTo(0)) {
    state.SkipWithError("cannot pin to CPU 0");
    return;
  }
  std::vector<float> buffer(size_t(state.range(0)) * 1024 / sizeof(float), 0.0f);
  OtherCore other(buffer);
  if (!other.pinned()) {
    state.SkipWithError("cannot pin the writer to CPU 1 (one CPU only?)");
    return;
  }
  // Manual time: only the read is timed (PauseTiming's own clock reads would weigh on the
  // smaller buffers).
  for (auto _ : state) {
    if (otherCoreWrote) {
      other.write();
    } else {
      writeAll(buffer, 2.0f);
    }
    auto start = std::chrono::steady_clock::now();
    if (timedWrite)
      writeAll(buffer, 3.0f);
    else
      benchmark::DoNotOptimize(readAll(buffer));
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(buffer.size() * sizeof(float)));
}

void BM_ReadAfterOtherCoreWrote(benchmark::State& state) { timedAfter(state, true, false); }
void BM_ReadAfterThisCoreWrote(benchmark::State& state) { timedAfter(state, false, false); }
// Writing lines the other core holds first takes them from its cache: what a stage pays when
// its output lands where the other thread wrote the tensor before (the arena's regions are
// reused from tensor to tensor).
void BM_WriteAfterOtherCoreWrote(benchmark::State& state) { timedAfter(state, true, true); }
void BM_WriteAfterThisCoreWrote(benchmark::State& state) { timedAfter(state, false, true); }

// 64 KB to 2 MB: a work item's share of a layer's activations, around a Zen core's 1 MB L2.
BENCHMARK(BM_ReadAfterOtherCoreWrote)->Arg(64)->Arg(256)->Arg(400)->Arg(800)->Arg(2048)
    ->UseManualTime();
BENCHMARK(BM_ReadAfterThisCoreWrote)->Arg(64)->Arg(256)->Arg(400)->Arg(800)->Arg(2048)
    ->UseManualTime();
BENCHMARK(BM_WriteAfterOtherCoreWrote)->Arg(256)->Arg(800)->UseManualTime();
BENCHMARK(BM_WriteAfterThisCoreWrote)->Arg(256)->Arg(800)->UseManualTime();

// A buffer read over and over, written once before: the rate falls from the L2's to the
// L3's to memory's as the buffer outgrows each.
void BM_ReadAgain(benchmark::State& state) {
  if (!pinTo(0)) {
    state.SkipWithError("cannot pin to CPU 0");
    return;
  }
  std::vector<float> buffer(size_t(state.range(0)) * 1024 / sizeof(float), 1.0f);
  benchmark::DoNotOptimize(readAll(buffer));
  for (auto _ : state) benchmark::DoNotOptimize(readAll(buffer));
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(buffer.size() * sizeof(float)));
}
BENCHMARK(BM_ReadAgain)->Arg(2048)->Arg(8192)->Arg(16384)->Arg(24576)->Arg(32768)->Arg(65536);

}  // namespace

BENCHMARK_MAIN();
