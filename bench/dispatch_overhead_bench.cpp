// Per-dispatch overhead of the runtime (Google Benchmark; a measurement, not a test).
// Artifacts of N trivial dispatches (a kernel that stores one float) run through
// kiln_context_call, so the time is almost all runtime: decoding DISPATCH commands, resolving
// bindings, handing stages to the executor, barriers. Two shapes:
//   chain: N stages of one dispatch each (a barrier after every dispatch, like a plain CNN);
//   wide:  one stage of N independent dispatches (each writes its own arena slot).
// Each dispatch has 1 workgroup, or 2 (then on a 2-thread pool the worker takes part in every
// dispatch: the cost of splitting a dispatch that has almost no work). Executors: inline (the
// calling thread) and the thread pool with 1 and 2 threads. The counter ns_per_dispatch is
// the wall-clock call time divided by N (on a loaded machine compare the CPU column too).
// A third shape, `work`, is a chain of 64 stages whose dispatches have 2 workgroups of about
// 20 us of arithmetic each (like MobileNetV2's stages at 2 threads): ns_per_dispatch is then
// mostly compute, and 2 threads against 1 shows what the pool's per-stage handoff costs.
// Every run reports mean, median and min over --benchmark_repetitions (default 5): on a
// machine shared with other work compare the minimums.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include "artifact_writer.h"
#include "kiln/kiln.h"
#include "kiln/kiln_host.h"

namespace {

using kiln::testing::AlignedBuffer;

// A binding has a 64-byte line per workgroup (at most kMaxWorkgroups), so that workgroups on
// different threads do not write one cache line (that would time false sharing, not the pool).
constexpr uint64_t kMaxWorkgroups = 4;
constexpr uint64_t kSlot = 64 * kMaxWorkgroups;

// Each workgroup stores one float to its own line.
void storeOne(void* const* bindings, uint32_t workgroup, uint32_t) {
  static_cast<float*>(bindings[0])[workgroup * 16] = 1.0f;
}
// About 20 us of dependent multiply-adds on this machine (no memory traffic), then a store.
void compute(void* const* bindings, uint32_t workgroup, uint32_t) {
  float x = static_cast<float*>(bindings[0])[workgroup * 16];
  for (int i = 0; i < 20000; ++i) x = x * 0.999f + 0.001f;
  static_cast<float*>(bindings[0])[workgroup * 16] = x;
}
const kiln_kernel_fn kKernels[] = {storeOne, compute};
const kiln_kernel_library kLibrary = {KILN_KERNEL_ABI_VERSION, 2, kKernels, "kiln_bench_nop"};

enum Shape { kChain, kWide, kWork };

std::vector<uint8_t> makeArtifact(uint32_t n, Shape shape, uint32_t workgroups) {
  bool wide = shape == kWide;
  kiln::testing::ArtifactSpec spec;
  spec.arenaSize = wide ? uint64_t{n} * kSlot : kSlot;
  spec.stackBound = 64;
  spec.staticLibrary = "kiln_bench_nop";
  spec.kernels = {{{kSlot, KILN_ACCESS_WRITE}}, {{kSlot, KILN_ACCESS_WRITE}}};
  kiln::testing::FunctionSpec f;
  f.name = "main";
  f.inputs = {{"x", KILN_DTYPE_F32, {16}}};
  f.outputs = {{"y", KILN_DTYPE_F32, {16}}};
  for (uint32_t i = 0; i < n; ++i) {
    f.commands.dispatch(shape == kWork ? 1 : 0, workgroups,
                        {{KILN_SPACE_ARENA, wide ? uint64_t{i} * kSlot : 0}});
    if (!wide) f.commands.barrier();
  }
  if (wide) f.commands.barrier();
  f.commands.copy(KILN_SPACE_ARENA, 0, KILN_SPACE_OUTPUT(0), 0, 64).ret();
  spec.functions.push_back(f);
  return kiln::testing::writeArtifact(spec);
}

// state.range(0): N; range(1): a Shape (0 chain, 1 wide, 2 work); range(2): 0 inline, else
// pool threads; range(3): workgroups per dispatch.
void dispatchOverhead(benchmark::State& state) {
  uint32_t n = uint32_t(state.range(0));
  Shape shape = Shape(state.range(1));
  uint32_t threads = uint32_t(state.range(2));
  uint32_t workgroups = uint32_t(state.range(3));
  AlignedBuffer artifact(makeArtifact(n, shape, workgroups));
  AlignedBuffer moduleMemory(kiln_module_memory_size());
  const kiln_kernel_library* libraries[] = {&kLibrary};
  kiln_load_options options;
  kiln_load_options_init(&options);
  options.kernel_libraries = libraries;
  options.kernel_library_count = 1;
  kiln_module* module = nullptr;
  if (kiln_module_load(artifact.data(), artifact.size(), &options, moduleMemory.data(),
                       moduleMemory.size(), &module) != KILN_OK) {
    state.SkipWithError("artifact does not load");
    return;
  }
  kiln_thread_pool* pool = nullptr;
  if (threads && kiln_thread_pool_create(threads, &pool) != KILN_OK) {
    state.SkipWithError("no thread pool");
    return;
  }
  AlignedBuffer contextMemory(kiln_context_memory_size(module));
  kiln_context* context = nullptr;
  kiln_context_init(module, pool ? kiln_thread_pool_executor(pool) : nullptr, contextMemory.data(),
                    contextMemory.size(), &context);
  alignas(64) float x[16] = {}, y[16] = {};
  kiln_input in = {x, sizeof x};
  kiln_output out = {y, sizeof y};
  for (auto _ : state) {
    kiln_context_call(context, 0, &in, 1, &out, 1);
    benchmark::DoNotOptimize(y[0]);
  }
  state.counters["ns_per_dispatch"] = benchmark::Counter(
      double(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  if (pool) kiln_thread_pool_destroy(pool);
  kiln_module_unload(module);
}

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"n", "shape", "threads", "wgs"});
  for (int64_t shape : {kChain, kWide})
    for (int64_t threads : {0, 1, 2}) b->Args({256, shape, threads, 1});
  b->Args({256, kChain, 2, 2});  // chain, every dispatch split in two on a 2-thread pool
  b->Args({256, kWide, 2, 2});
  for (int64_t threads : {0, 2}) b->Args({64, kWork, threads, 2});
}
BENCHMARK(dispatchOverhead)
    ->Apply(shapes)
    ->UseRealTime()
    ->Repetitions(5)
    ->ComputeStatistics("min", [](const std::vector<double>& v) {
      return *std::min_element(v.begin(), v.end());
    });

}  // namespace

BENCHMARK_MAIN();
