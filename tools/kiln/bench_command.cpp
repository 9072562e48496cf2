// `kiln bench ARTIFACT --input=... [--threads=N] [--iterations=N | --seconds=S] [--json]`:
// measures the latency of one call: warm-up calls first, then timed calls, then min, p50,
// p90, p99, max, mean and jitter (p99 / p50) in microseconds. `--per-dispatch` also times
// every dispatch through the runtime's trace hook and reports each one's median, share and
// achieved GFLOP/s from the compiler's cost table (dispatch_profile.h); `--pin` and
// `--lock-memory` remove two sources of jitter, `--preemption` separates the calls that
// another process interrupted, and `--floor` measures the machine's own jitter between the
// calls (machine_floor.h); `--cold-caches=KB` writes a buffer before every timed call, so the
// calls start with cold caches. `--samples=FILE.npy` saves every timed call's latency in call
// order, so that slow calls can be told apart as phases or as single outliers.
// `--per-workgroup` times every workgroup by thread CPU time and simulates the thread pool's
// schedule of those times (workgroup_profile.h).
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include "artifact_reader.h"
#include "cli_error.h"
#include "command.h"
#include "dispatch_profile.h"
#include "dispatch_trace.h"
#include "json_writer.h"
#include "latency_stats.h"
#include "machine_floor.h"
#include "npy.h"
#include "runtime_session.h"
#include "tensor_spec.h"
#include "workgroup_profile.h"

namespace kiln::cli {
namespace {

using Clock = std::chrono::steady_clock;

double microsecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// Pins the calling thread (the one that runs the interpreter and, with one thread, every
// kernel) to `cpu`. Called after the thread pool exists: its workers must not inherit it.
void pinCallingThread(int64_t cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(static_cast<int>(cpu), &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    throw CliError("--pin=" + std::to_string(cpu) + ": cannot pin to CPU " + std::to_string(cpu) +
                   ": " + std::strerror(errno));
}

// Writes one byte of every cache line of `buffer` (--cold-caches): the lines the last call
// left in the caches that hold less than the buffer are evicted, the artifact's constants,
// arena, inputs and code among them, and whatever they evict is dirty (written back first),
// as after other work on the same core.
void evictCaches(std::vector<unsigned char>& buffer) {
  volatile unsigned char* bytes = buffer.data();
  for (size_t i = 0; i < buffer.size(); i += 64) bytes[i] = static_cast<unsigned char>(bytes[i] + 1);
}

// Involuntary context switches of the calling thread so far: how often the scheduler took
// its CPU away for another thread (a preempted call's time includes someone else's slice).
long involuntarySwitches() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_nivcsw;
}

void lockMemory() {
  if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
    throw CliError(std::string("--lock-memory: mlockall failed: ") + std::strerror(errno) +
                   " (the limit is `ulimit -l`)");
}

const char* floorWorkName(FloorKind kind) {
  switch (kind) {
    case FloorKind::Avx512: return "avx512-fma";
    case FloorKind::Avx2: return "avx2-fma";
    default: return "integer-chain";
  }
}

// --samples=FILE.npy: the timed calls' latencies in microseconds, in call order, as f64;
// with --floor a second row holds the fixed work timed after each call (shape 2 x N).
void writeSamples(const std::string& path, const std::vector<double>& calls,
                  const std::vector<double>& floorWork) {
  HostTensor t;
  t.type = ElementType::F64;
  bool withFloor = !floorWork.empty();
  if (withFloor)
    t.shape = {2, int64_t(calls.size())};
  else
    t.shape = {int64_t(calls.size())};
  t.data.resize((withFloor ? 2 : 1) * calls.size() * sizeof(double));
  std::memcpy(t.data.data(), calls.data(), calls.size() * sizeof(double));
  if (withFloor)
    std::memcpy(t.data.data() + calls.size() * sizeof(double), floorWork.data(),
                floorWork.size() * sizeof(double));
  writeNpyFile(path, t);
}

void printStatsJson(JsonWriter& j, const LatencyStats& stats) {
  j.field("min_us", stats.min);
  j.field("p50_us", stats.p50);
  j.field("p90_us", stats.p90);
  j.field("p99_us", stats.p99);
  j.field("max_us", stats.max);
  j.field("mean_us", stats.mean);
  j.field("jitter", stats.jitter());
}

int runBench(const ParsedArgs& args) {
  if (args.has("iterations") && args.has("seconds"))
    throw CliError("give either --iterations or --seconds, not both");
  bool perDispatch = args.flag("per-dispatch");
  std::optional<double> peak;
  if (args.has("peak-gflops")) {
    if (!perDispatch) throw CliError("--peak-gflops needs --per-dispatch");
    peak = args.number("peak-gflops", 0);
  }
  std::string clock = args.value("clock").value_or("wall");
  if (clock != "wall" && clock != "thread-cpu")
    throw CliError("--clock=" + clock + ": expected wall or thread-cpu");
  bool threadCpuClock = clock == "thread-cpu";
  if (threadCpuClock && !perDispatch) throw CliError("--clock needs --per-dispatch");
  bool perWorkgroup = args.flag("per-workgroup");
  if (perWorkgroup && perDispatch)
    throw CliError("--per-workgroup and --per-dispatch time the calls in two different ways: "
                   "give one of them");
  std::optional<std::string> samplesPath = args.value("samples");
  bool floor = args.flag("floor");
  if (floor && (perDispatch || perWorkgroup))
    throw CliError("--floor sets plain calls beside the machine's own jitter: not with "
                   "--per-dispatch or --per-workgroup, which slow the calls down");
  // --cold-caches=KB: a buffer written line by line before every timed call.
  const int64_t coldKb = args.integer("cold-caches", 0, 1, int64_t{1} << 22);
  SessionOptions options;
  options.threads = static_cast<uint32_t>(args.integer("threads", 1, 1, 256));
  options.constantsPath = args.value("constants").value_or("");
  int64_t iterations = args.integer("iterations", 0, 1, int64_t{1} << 30);
  double seconds = args.number("seconds", 1.0);
  int64_t warmup = args.integer("warmup", -1, 0, int64_t{1} << 30);
  int64_t pin = args.integer("pin", -1, 0, CPU_SETSIZE - 1);
  if (threadCpuClock && options.threads != 1)
    throw CliError("--clock=thread-cpu measures the calling thread only: use it with --threads=1");
  if (perWorkgroup && options.threads != 1)
    throw CliError("--per-workgroup runs every workgroup on the calling thread and simulates "
                   "the thread pool's schedule: use it with --threads=1");
  WorkgroupProfile workgroups;
  if (perWorkgroup) options.executor = workgroups.executor();
  std::vector<HostTensor> inputs;
  for (const std::string& spec : args.values("input")) inputs.push_back(parseTensorSpec(spec));

  const std::string& path = args.positionals[0];
  RuntimeSession session(path, options);
  uint32_t function = session.findFunction(args.value("function"));
  std::vector<AlignedBuffer> inputBuffers = session.prepareInputs(function, inputs);
  std::vector<AlignedBuffer> outputBuffers = session.allocateOutputs(function);
  PerDispatch per;
  if (perDispatch) per = preparePerDispatch(path, session, function, threadCpuClock);
  std::vector<DispatchInfo> workgroupInfos;
  if (perWorkgroup) {
    ArtifactSummary artifact = readArtifact(readFileBytes(path), path);
    const ArtifactFunction& f = artifact.functions.at(function);
    workgroups.track(f.firstDispatch, f.dispatchCount);
    workgroupInfos = dispatchInfos(artifact, f);
  }
  auto endWorkgroupCall = [&] {
    if (perWorkgroup && !workgroups.endCall())
      throw CliError("'" + path + "': a call did not run every dispatch once, in the stages of "
                     "the first call");
  };
  if (pin >= 0) pinCallingThread(pin);
  if (args.flag("lock-memory")) lockMemory();

  auto call = [&] {
    session.call(function, inputBuffers, outputBuffers);
    if (per.profile && !per.profile->endCall())
      throw CliError("'" + path + "': the trace hook did not see every dispatch of a call");
    endWorkgroupCall();
  };

  // Warm-up: the given count, or calls for ~10% of the time budget (at least 3, at most 100)
  // so that caches, page tables and the thread pool are warm.
  Clock::time_point warmStart = Clock::now();
  int64_t warmed = 0;
  while (warmup >= 0 ? warmed < warmup
                     : (warmed < 3 || (warmed < 100 && microsecondsSince(warmStart) <
                                                            seconds * 1e5))) {
    call();
    ++warmed;
  }
  // The warm-up's dispatch times are not samples.
  if (per.profile) per.profile->clearSamples();
  if (perWorkgroup) workgroups.clearSamples();

  // --floor: fixed work as long as a call (the median of a few), run after every timed call.
  uint64_t floorSteps = 0;
  const FloorKind floorWork = floorKind();
  std::vector<double> floorSamples;
  if (floor) {
    std::vector<double> probe;
    for (int i = 0; i < 21; ++i) {
      Clock::time_point t0 = Clock::now();
      call();
      probe.push_back(microsecondsSince(t0));
    }
    floorSteps = calibrateFloorSteps(summarize(probe).p50, floorWork);
  }

  // Room for the samples up front: a reallocation between two calls would evict the caches
  // the next call needs (a p99 outlier). With --seconds, from the warm-up's time per call.
  std::vector<double> samples;
  double warmPerCallUs = microsecondsSince(warmStart) / double(std::max<int64_t>(warmed, 1));
  // (At most 4 M samples, 32 MB, up front; a longer run grows the vectors as it goes.)
  size_t expectedCalls = std::min<size_t>(
      iterations > 0 ? size_t(iterations)
                     : size_t(1.5 * seconds * 1e6 / std::max(warmPerCallUs, 1.0)) + 16,
      size_t{1} << 22);
  // assign + clear: the pages are touched now, not by a page fault between two timed calls.
  samples.assign(expectedCalls, 0.0);
  samples.clear();
  if (per.profile)  // at most 16 M samples over all dispatches (128 MB)
    per.profile->reserveCalls(
        std::min<size_t>(expectedCalls, (size_t{1} << 24) / std::max(per.profile->count(), 1u)));
  bool preemption = args.flag("preemption");
  std::vector<double> unpreempted;  // --preemption: the calls the scheduler left alone
  if (preemption) {
    unpreempted.assign(expectedCalls, 0.0);
    unpreempted.clear();
  }
  if (floor) {
    floorSamples.assign(expectedCalls, 0.0);
    floorSamples.clear();
  }
  // --cold-caches: allocated and touched now, so that writing it before a call only evicts.
  std::vector<unsigned char> coldBuffer(size_t(coldKb) * 1024, 0);
  uint64_t floorSink = 0;
  Clock::time_point start = Clock::now();
  while (iterations > 0 ? int64_t(samples.size()) < iterations
                        : (samples.size() < 10 || microsecondsSince(start) < seconds * 1e6)) {
    if (!coldBuffer.empty()) evictCaches(coldBuffer);
    long switches = preemption ? involuntarySwitches() : 0;
    Clock::time_point t0 = Clock::now();
    session.call(function, inputBuffers, outputBuffers);
    samples.push_back(microsecondsSince(t0));
    if (preemption && involuntarySwitches() == switches) unpreempted.push_back(samples.back());
    if (per.profile && !per.profile->endCall())
      throw CliError("'" + path + "': the trace hook did not see every dispatch of a call");
    endWorkgroupCall();
    if (floor) {
      Clock::time_point f0 = Clock::now();
      floorSink += runFloorWork(floorSteps, floorSink, floorWork);
      floorSamples.push_back(microsecondsSince(f0));
    }
  }
  session.setTrace(nullptr);
  if (samplesPath) writeSamples(*samplesPath, samples, floorSamples);
  LatencyStats floorStats = summarize(floorSamples);
  LatencyStats stats = summarize(samples);
  LatencyStats calm = summarize(unpreempted);
  size_t preempted = samples.size() - unpreempted.size();
  std::optional<ProfileReport> report;
  if (per.profile)
    report = buildProfileReport(*per.profile, per.infos, per.hasCosts, peak);
  std::optional<WorkgroupReport> workgroupReport;
  if (perWorkgroup) workgroupReport = buildWorkgroupReport(workgroups, workgroupInfos);

  if (args.flag("json")) {
    JsonWriter j;
    j.beginObject();
    j.field("artifact", path);
    j.field("function", session.functionName(function));
    j.field("threads", options.threads);
    j.field("warmup_iterations", warmed);
    j.field("iterations", uint64_t{stats.count});
    if (pin >= 0) j.field("pinned_cpu", pin);
    if (coldKb > 0) j.field("cold_caches_kb", coldKb);
    printStatsJson(j, stats);
    if (preemption) j.field("preempted_calls", uint64_t{preempted});
    if (floor) {
      j.field("floor_work", floorWorkName(floorWork));
      j.field("floor_steps", floorSteps);
      j.field("floor_p50_us", floorStats.p50);
      j.field("floor_p99_us", floorStats.p99);
      j.field("floor_jitter", floorStats.jitter());
    }
    if (!unpreempted.empty()) {  // none when every call was preempted (long calls, busy CPU)
      j.field("unpreempted_p50_us", calm.p50);
      j.field("unpreempted_p99_us", calm.p99);
      j.field("unpreempted_jitter", calm.jitter());
    }
    if (report) {
      j.field("per_dispatch", true);  // the figures above are of traced calls
      j.field("dispatch_clock", clock);
      if (!per.missingCosts.empty()) j.field("costs_unavailable", per.missingCosts);
      writeProfileJson(j, *report);
    }
    if (workgroupReport) writeWorkgroupJson(j, *workgroupReport);
    j.endObject();
    std::printf("%s\n", j.text().c_str());
    return 0;
  }
  std::printf("%s: function '%s', %u thread%s, %zu iterations after %lld warm-up%s\n",
              path.c_str(), session.functionName(function).c_str(), options.threads,
              options.threads == 1 ? "" : "s", stats.count, static_cast<long long>(warmed),
              pin >= 0 ? (", pinned to CPU " + std::to_string(pin)).c_str() : "");
  std::printf(
      "  %smin %.1f us   p50 %.1f us   p90 %.1f us   p99 %.1f us   max %.1f us   mean %.1f us\n",
      report ? "whole call (traced): "
             : (workgroupReport ? "whole call (workgroups timed one by one): " : ""),
      stats.min, stats.p50, stats.p90, stats.p99, stats.max,
      stats.mean);
  std::printf("  jitter (p99/p50): %.2f\n", stats.jitter());
  if (coldKb > 0)
    std::printf("  cold caches: %lld KB written before every timed call (not timed)\n",
                static_cast<long long>(coldKb));
  if (preemption && !unpreempted.empty())
    std::printf("  preempted calls: %zu of %zu (%.1f%%); the others: p50 %.1f us   p99 %.1f us   "
                "jitter %.2f\n",
                preempted, samples.size(), 100.0 * double(preempted) / double(samples.size()),
                calm.p50, calm.p99, calm.jitter());
  else if (preemption)
    std::printf("  preempted calls: all %zu\n", samples.size());
  if (floor)
    std::printf("  machine floor (fixed %s work run after each call): p50 %.1f us   "
                "p99 %.1f us   jitter %.2f\n",
                floorWorkName(floorWork), floorStats.p50, floorStats.p99, floorStats.jitter());
  if (report) {
    if (!per.missingCosts.empty()) std::printf("  note: %s\n", per.missingCosts.c_str());
    if (peak) std::printf("  peak: %.1f GFLOP/s (--peak-gflops)\n", *peak);
    std::printf("  per dispatch (median over %zu calls, %s; each dispatch adds two clock "
                "reads):\n%s",
                per.profile->calls(), threadCpuClock ? "thread CPU time" : "wall clock",
                profileText(*report).c_str());
  }
  if (workgroupReport)
    std::printf("  per workgroup (thread CPU time, minimum over %llu calls):\n%s",
                static_cast<unsigned long long>(workgroupReport->calls),
                workgroupText(*workgroupReport).c_str());
  return 0;
}

}  // namespace

const Command& benchCommand() {
  static const Command command{
      "bench",
      "measure the latency of an artifact's entry function",
      "kiln bench ARTIFACT --input=TENSOR... [--threads=N] [--iterations=N | --seconds=S] "
      "[--per-dispatch [--peak-gflops=X] [--clock=wall|thread-cpu] | --per-workgroup] [--pin=CPU] "
      "[--lock-memory] "
      "[--preemption] [--floor] [--cold-caches=KB] [--samples=FILE.npy] [--json]",
      "Calls the entry function repeatedly on the same inputs (written as for `kiln run`):\n"
      "first warm-up calls, then timed calls for --iterations=N calls or --seconds=S seconds\n"
      "(default 1 s, at least 10 calls). Prints min, p50, p90, p99, max and mean latency in\n"
      "microseconds and the jitter p99/p50; --json prints one JSON object with p50_us, p90_us,\n"
      "p99_us, min_us, max_us, mean_us, jitter and iterations.\n"
      "\n"
      "--per-dispatch times every dispatch through the runtime's trace hook and prints, by\n"
      "dispatch index: kernel, median and min time, share of the sum, the compiler's cost\n"
      "(FLOPs = 2 x MACs of conv/matmul, integer ops of quantized conv/FC, elements of the\n"
      "others; from the artifact's DEBUG section, so a --strip'ped artifact gives times only),\n"
      "the achieved GFLOP/s and, with --peak-gflops=X (e.g. from bench/fma_peak_bench), the % of\n"
      "that peak; then the top 5 by time. The trace costs two clock reads per dispatch and runs\n"
      "a stage's dispatches one after another, so the whole-call figures of a per-dispatch run\n"
      "(reported separately) are a little slower than a plain run. --clock=thread-cpu times the\n"
      "dispatches by the calling thread's CPU time instead of the wall clock (--threads=1 only):\n"
      "on a machine shared with other work it leaves out the time other processes held the CPU,\n"
      "like bench/fma_peak_bench's peak (a system call per clock read: a little more overhead).\n"
      "\n"
      "--per-workgroup (--threads=1 only) runs every workgroup of every dispatch one at a time on\n"
      "the calling thread, timed by its CPU time, and prints per dispatch the minimum of each\n"
      "workgroup over the calls; then the time the thread pool would take with 2 and 4 threads\n"
      "for those minimums (its claim order simulated, no claim or wake-up costs) and the stages\n"
      "that lose the most to imbalance. On a machine where two busy threads' wall-clock times\n"
      "move with the neighbours' load, it tells how evenly the artifact's work splits.\n"
      "\n"
      "--pin=CPU pins the calling thread (it runs every kernel with --threads=1) to one CPU;\n"
      "--lock-memory locks the process's pages in RAM (mlockall) so that no call page-faults;\n"
      "--preemption counts the calls during which the scheduler preempted the calling thread\n"
      "(involuntary context switches, two getrusage calls per call) and also reports p50, p99\n"
      "and jitter of the other calls: kiln's own jitter on a machine shared with other work.\n"
      "--floor runs fixed work after every timed call (vector multiply-adds on operands in L1,\n"
      "calibrated to the median call's length; no runtime, no system call) and reports its\n"
      "p50, p99 and jitter: the machine's own jitter in the same seconds (host scheduling,\n"
      "frequency, interrupts, a sibling hardware thread), the floor under the calls'\n"
      "(--seconds then takes about twice as long).\n"
      "--cold-caches=KB writes one byte of every cache line of a KB-kilobyte buffer before every\n"
      "timed call (outside the timing), so each call starts with the artifact's constants, arena,\n"
      "inputs and code evicted from every cache smaller than the buffer: the latency of a call\n"
      "after other work on the same core (e.g. 4096 on a core with 1 MB of L2 and a shared L3:\n"
      "L1 and L2 cold, L3 mostly warm; more than the L3 for a call from memory).\n"
      "--samples=FILE.npy saves every timed call's latency (microseconds, f64, in call order;\n"
      "with --floor a 2 x N array whose second row is the fixed work after each call), to\n"
      "tell slow phases of the machine from single slow calls.",
      {{"function", FlagKind::Value, "NAME", "entry function to call (default: the first)"},
       {"input", FlagKind::Repeated, "TENSOR", "an input, in order (repeat per input)"},
       {"threads", FlagKind::Value, "N", "worker threads (default 1: the calling thread)"},
       {"iterations", FlagKind::Value, "N", "timed calls"},
       {"seconds", FlagKind::Value, "S", "time budget of the timed calls (default 1)"},
       {"warmup", FlagKind::Value, "N", "warm-up calls (default: ~10% of the budget, 3-100)"},
       {"per-dispatch", FlagKind::Bool, "", "time every dispatch (trace hook) and report each"},
       {"peak-gflops", FlagKind::Value, "X", "the machine's peak, for % of peak (--per-dispatch)"},
       {"per-workgroup", FlagKind::Bool, "",
        "time every workgroup (thread CPU) and simulate the pool's schedule"},
       {"clock", FlagKind::Value, "wall|thread-cpu",
        "clock of the per-dispatch times (default wall; thread-cpu: --threads=1 only)"},
       {"pin", FlagKind::Value, "CPU", "pin the calling thread to this CPU"},
       {"lock-memory", FlagKind::Bool, "", "lock all pages in RAM (mlockall)"},
       {"samples", FlagKind::Value, "FILE.npy", "save every timed call's latency (us, f64)"},
       {"preemption", FlagKind::Bool, "",
        "count calls preempted by the scheduler; statistics of the others"},
       {"floor", FlagKind::Bool, "",
        "time fixed kernel-like work between the calls: the machine's own jitter"},
       {"cold-caches", FlagKind::Value, "KB",
        "write a KB-kilobyte buffer before every timed call: cold-cache latency"},
       {"json", FlagKind::Bool, "", "print one JSON object"},
       {"constants", FlagKind::Value, "FILE",
        "the constants of an artifact compiled with --external-constants"}},
      1,
      runBench};
  return command;
}

}  // namespace kiln::cli
