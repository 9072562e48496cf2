// What it costs two threads when their shares of one tensor alternate in memory, though
// neither ever touches the other's bytes (Google Benchmark; a measurement, not a test).
//
// A stage: each thread reads its share of tensor X and writes the same share of tensor Y, then
// both wait at a spin barrier, and the next stage swaps X and Y, as consecutive convolutions
// split the same way do. The tensor is ResNet-18 layer2's activation, 128 planes of 28 x 28
// floats (392 KB). Layouts (first argument):
//   0, rows: every plane split at row 12, the first 1344 bytes the timed thread's and the
//      rest the helper's, as a split by output rows (the Winograd row tasks, the direct
//      convolutions' pixel groups) leaves a planar (NCHW) tensor: 256 alternations;
//   1, channels: planes 0-63 the timed thread's, 64-127 the helper's, as a split by output
//      channels does: one alternation;
//   2, blocked rows: the same row split of a channel-blocked tensor (NCHW16c: 8 blocks of 16
//      channels, each block's rows of 16 interleaved channels contiguous): 16 alternations;
//   3, channels read whole: the channel split, each thread reading all of X before writing its
//      share of Y, as a convolution split by output channels reads every input channel.
// The second argument pads the row layout: that many untouched bytes between the shares
// (before the helper's rows and after them). On a Zen 4 VM whose two vCPUs the host put on
// two core complexes, the row layout took ~70 us a stage against ~4.5 for the channel one
// (~0.25 us per alternation), 6-10 with 1 KB of padding, ~10 blocked, ~110 reading whole; on
// one complex 17-26 against 4.3, blocked ~6, reading whole 31-36 (docs/benchmarks.md, "Whose
// bytes a share of a tensor lies beside"). The lines a thread's hardware prefetchers fetch past
// the end of its share are the other core's, which must then win them back before it writes
// them.
//
// The timed thread runs on CPU 0, the helper on CPU 1. Linux, two CPUs or more. Run by hand:
//   build-*/bin/kiln_split_layout_bench
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "vector_sum.h"

namespace {

constexpr size_t kPlanes = 128;
constexpr size_t kPlaneBytes = 28 * 28 * sizeof(float);
constexpr size_t kFirstShare = 12 * 28 * sizeof(float);  // rows 0-11

bool pinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

constexpr size_t kBlockChannels = 16;  // the blocked layout's channels per block

enum class Split { Rows, Channels, BlockedRows, ChannelsReadWhole };

struct Layout {
  Split split = Split::Rows;
  size_t gap = 0;  // untouched bytes on both sides of the helper's share of a plane (rows)

  // The two channel splits lay the shares out alike; one of them reads all of X as well.
  bool byChannels() const { return split == Split::Channels || split == Split::ChannelsReadWhole; }
  bool readsWhole() const { return split == Split::ChannelsReadWhole; }

  // Planes (rows), blocks of kBlockChannels planes (blocked rows), or halves (channels).
  size_t unitBytes() const {
    if (split == Split::BlockedRows) return kBlockChannels * kPlaneBytes;
    return byChannels() ? kPlanes / 2 * kPlaneBytes : kPlaneBytes;
  }
  size_t units() const {
    if (split == Split::BlockedRows) return kPlanes / kBlockChannels;
    return byChannels() ? 1 : kPlanes;
  }
  size_t stride() const { return split == Split::Rows ? kPlaneBytes + 2 * gap : unitBytes(); }
  size_t bytes() const { return byChannels() ? 2 * unitBytes() : units() * stride(); }
  // The byte range [offset, offset + length) of thread t's share of unit u.
  void share(int t, size_t u, size_t& offset, size_t& length) const {
    if (byChannels()) {
      offset = t == 0 ? 0 : unitBytes();
      length = unitBytes();
      return;
    }
    const size_t first = split == Split::Rows ? kFirstShare : kBlockChannels * kFirstShare;
    offset = u * stride() + (t == 0 ? 0 : first + gap);
    length = t == 0 ? first : unitBytes() - first;
  }
  size_t alternations() const { return byChannels() ? 1 : 2 * units(); }
};

// One stage of thread t: its shares of `from`, scaled, into the same bytes of `to` (after
// summing all of `from` into `sink` if the layout reads it whole).
void stage(const Layout& layout, int t, const char* from, char* to, float& sink) {
  if (layout.readsWhole()) {
    sink += kiln::bench::sumFloats(reinterpret_cast<const float*>(from),
                                   layout.bytes() / sizeof(float));
  }
  for (size_t u = 0; u < layout.units(); ++u) {
    size_t offset, length;
    layout.share(t, u, offset, length);
    const float* in = reinterpret_cast<const float*>(from + offset);
    float* out = reinterpret_cast<float*>(to + offset);
    for (size_t i = 0; i < length / sizeof(float); ++i) out[i] = in[i] * 0.5f + 1.0f;
  }
}

// A sense-reversing spin barrier for two threads.
class Barrier {
 public:
  void arriveAndWait(bool& sense) {
    sense = !sense;
    if (count_.fetch_add(1, std::memory_order_acq_rel) == 1) {
      count_.store(0, std::memory_order_relaxed);
      sense_.store(sense, std::memory_order_release);
      return;
    }
    while (sense_.load(std::memory_order_acquire) != sense) {
    }
  }

 private:
  alignas(64) std::atomic<int> count_{0};
  alignas(64) std::atomic<bool> sense_{false};
};

void BM_SplitLayout(benchmark::State& state) {
  Layout layout;
  layout.split = Split(state.range(0));
  layout.gap = layout.split == Split::Rows ? size_t(state.range(1)) : 0;
  if (!pinTo(0)) {
    state.SkipWithError("cannot pin to CPU 0");
    return;
  }
  const size_t bytes = layout.bytes();
  char* x = static_cast<char*>(aligned_alloc(4096, (bytes + 4095) / 4096 * 4096));
  char* y = static_cast<char*>(aligned_alloc(4096, (bytes + 4095) / 4096 * 4096));
  memset(x, 0, bytes);
  memset(y, 0, bytes);
  Barrier barrier;
  std::atomic<bool> stop{false}, helperPinned{false};
  float sink0 = 0, helperSink = 0;
  std::thread helper([&] {
    helperPinned.store(pinTo(1));
    bool sense = false;
    for (bool odd = false;; odd = !odd) {
      barrier.arriveAndWait(sense);  // the stage starts
      if (stop.load(std::memory_order_relaxed)) return;
      stage(layout, 1, odd ? y : x, odd ? x : y, helperSink);
      barrier.arriveAndWait(sense);  // the stage ends
    }
  });
  bool sense = false, odd = false;
  for (auto _ : state) {
    barrier.arriveAndWait(sense);
    stage(layout, 0, odd ? y : x, odd ? x : y, sink0);
    barrier.arriveAndWait(sense);
    odd = !odd;
  }
  stop.store(true);
  barrier.arriveAndWait(sense);
  helper.join();
  if (!helperPinned.load()) state.SkipWithError("cannot pin the helper to CPU 1");
  benchmark::DoNotOptimize(sink0 + helperSink);
  state.counters["alternations"] = double(layout.alternations());
  free(x);
  free(y);
}

BENCHMARK(BM_SplitLayout)
    // split: 0 rows, 1 channels, 2 rows of a blocked layout, 3 channels reading all of X
    ->ArgNames({"split", "gap"})
    ->Args({0, 0})
    ->Args({0, 256})
    ->Args({0, 1024})
    ->Args({1, 0})
    ->Args({2, 0})
    ->Args({3, 0})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
