// `kiln bench ARTIFACT --input=... [--threads=N] [--iterations=N | --seconds=S] [--json]`:
// measures the latency of one call: warm-up calls first, then timed calls, then min, p50,
// p90, p99, max, mean and jitter (p99 / p50) in microseconds.
#include <chrono>
#include <cstdio>

#include "cli_error.h"
#include "command.h"
#include "json_writer.h"
#include "latency_stats.h"
#include "runtime_session.h"
#include "tensor_spec.h"

namespace kiln::cli {
namespace {

using Clock = std::chrono::steady_clock;

double microsecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

int runBench(const ParsedArgs& args) {
  if (args.has("iterations") && args.has("seconds"))
    throw CliError("give either --iterations or --seconds, not both");
  SessionOptions options;
  options.threads = static_cast<uint32_t>(args.integer("threads", 1, 1, 256));
  options.constantsPath = args.value("constants").value_or("");
  int64_t iterations = args.integer("iterations", 0, 1, int64_t{1} << 30);
  double seconds = args.number("seconds", 1.0);
  int64_t warmup = args.integer("warmup", -1, 0, int64_t{1} << 30);
  std::vector<HostTensor> inputs;
  for (const std::string& spec : args.values("input")) inputs.push_back(parseTensorSpec(spec));

  RuntimeSession session(args.positionals[0], options);
  uint32_t function = session.findFunction(args.value("function"));
  std::vector<AlignedBuffer> inputBuffers = session.prepareInputs(function, inputs);
  std::vector<AlignedBuffer> outputBuffers = session.allocateOutputs(function);

  // Warm-up: the given count, or calls for ~10% of the time budget (at least 3, at most 100)
  // so that caches, page tables and the thread pool are warm.
  Clock::time_point warmStart = Clock::now();
  int64_t warmed = 0;
  while (warmup >= 0 ? warmed < warmup
                     : (warmed < 3 || (warmed < 100 && microsecondsSince(warmStart) <
                                                            seconds * 1e5))) {
    session.call(function, inputBuffers, outputBuffers);
    ++warmed;
  }

  std::vector<double> samples;
  Clock::time_point start = Clock::now();
  while (iterations > 0 ? int64_t(samples.size()) < iterations
                        : (samples.size() < 10 || microsecondsSince(start) < seconds * 1e6)) {
    Clock::time_point t0 = Clock::now();
    session.call(function, inputBuffers, outputBuffers);
    samples.push_back(microsecondsSince(t0));
  }
  LatencyStats stats = summarize(samples);

  if (args.flag("json")) {
    JsonWriter j;
    j.beginObject();
    j.field("artifact", args.positionals[0]);
    j.field("function", session.functionName(function));
    j.field("threads", options.threads);
    j.field("warmup_iterations", warmed);
    j.field("iterations", uint64_t{stats.count});
    j.field("min_us", stats.min);
    j.field("p50_us", stats.p50);
    j.field("p90_us", stats.p90);
    j.field("p99_us", stats.p99);
    j.field("max_us", stats.max);
    j.field("mean_us", stats.mean);
    j.field("jitter", stats.jitter());
    j.endObject();
    std::printf("%s\n", j.text().c_str());
    return 0;
  }
  std::printf("%s: function '%s', %u thread%s, %zu iterations after %lld warm-up\n",
              args.positionals[0].c_str(), session.functionName(function).c_str(),
              options.threads, options.threads == 1 ? "" : "s", stats.count,
              static_cast<long long>(warmed));
  std::printf("  min %.1f us   p50 %.1f us   p90 %.1f us   p99 %.1f us   max %.1f us   mean %.1f us\n",
              stats.min, stats.p50, stats.p90, stats.p99, stats.max, stats.mean);
  std::printf("  jitter (p99/p50): %.2f\n", stats.jitter());
  return 0;
}

}  // namespace

const Command& benchCommand() {
  static const Command command{
      "bench",
      "measure the latency of an artifact's entry function",
      "kiln bench ARTIFACT --input=TENSOR... [--threads=N] [--iterations=N | --seconds=S] [--json]",
      "Calls the entry function repeatedly on the same inputs (written as for `kiln run`):\n"
      "first warm-up calls, then timed calls for --iterations=N calls or --seconds=S seconds\n"
      "(default 1 s, at least 10 calls). Prints min, p50, p90, p99, max and mean latency in\n"
      "microseconds and the jitter p99/p50; --json prints one JSON object with p50_us, p90_us,\n"
      "p99_us, min_us, max_us, mean_us, jitter and iterations.",
      {{"function", FlagKind::Value, "NAME", "entry function to call (default: the first)"},
       {"input", FlagKind::Repeated, "TENSOR", "an input, in order (repeat per input)"},
       {"threads", FlagKind::Value, "N", "worker threads (default 1: the calling thread)"},
       {"iterations", FlagKind::Value, "N", "timed calls"},
       {"seconds", FlagKind::Value, "S", "time budget of the timed calls (default 1)"},
       {"warmup", FlagKind::Value, "N", "warm-up calls (default: ~10% of the budget, 3-100)"},
       {"json", FlagKind::Bool, "", "print one JSON object"},
       {"constants", FlagKind::Value, "FILE",
        "the constants of an artifact compiled with --external-constants"}},
      1,
      runBench};
  return command;
}

}  // namespace kiln::cli
