// `kiln bench --per-dispatch` and the FLOP counts of `kiln dump` on the shipped digits model
// (examples/digits: Conv 1->8 3x3, ReLU, Conv 8->16 3x3, ReLU, MaxPool 2x2, Flatten,
// Gemm 256->24, ReLU, Gemm 24->10 on a 1x1x8x8 image), compiled once per suite. The FLOP
// counts are worked out by hand (2 x multiply-accumulates):
//   conv 0: 8x8x8 outputs  x 1x3x3 = 4608 MACs  ->   9216 FLOPs
//   conv 1: 16x8x8 outputs x 8x3x3 = 73728 MACs -> 147456 FLOPs
//   gemm 0: 24 outputs x 256 = 6144 MACs        ->  12288 FLOPs
//   gemm 1: 10 outputs x 24  = 240 MACs         ->    480 FLOPs
//   max pool: reads 16x8x8 = 1024 elements
// Fusion makes four dispatches: Conv+Relu, Conv+Relu, MaxPool, Gemm+Relu+Gemm (12768 FLOPs).
// No timing is asserted beyond "the dispatch times add up to roughly the call".
// `kiln compare --per-dispatch` sets the artifact beside one compiled with --fusion=none
// (Conv, Relu, Conv, Relu, MaxPool, Gemm, Relu, Gemm: eight dispatches, Flatten a view), whose
// Conv and Gemm dispatches start at the fused ones' first nodes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "cli_fixture.h"
#include "cli_runner.h"
#include "npy.h"

namespace kiln::clitest {
namespace {

std::string example(const std::string& file) {
  return std::string(KILN_SOURCE_DIR) + "/examples/digits/" + file;
}

// The number after `"key":` at or after `from` in a compact JSON text.
double jsonNumber(const std::string& json, const std::string& key, size_t from = 0) {
  size_t at = json.find("\"" + key + "\":", from);
  EXPECT_NE(at, std::string::npos) << key << " in " << json;
  if (at == std::string::npos) return 0;
  return std::strtod(json.c_str() + at + key.size() + 3, nullptr);
}

class KilnBenchPerDispatch : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(makeTempDir("kiln-cli-per-dispatch-"));
    CliResult r = runKiln({"compile", example("model.onnx"), "-o", path("digits.kiln")});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    r = runKiln({"compile", example("model.onnx"), "-o", path("stripped.kiln"), "--strip"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    r = runKiln({"compile", example("model.onnx"), "-o", path("unfused.kiln"), "--fusion=none"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    r = runKiln({"compile", example("model.onnx"), "-o", path("unfused-stripped.kiln"),
                 "--fusion=none", "--strip"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
  }
  static CliResult compare(const std::string& a, const std::string& b,
                           std::vector<std::string> extra) {
    std::vector<std::string> args = {"compare", path(a), path(b),
                                     "--input=1x1x8x8xf32=@" + example("digit_0.npy"),
                                     "--seconds=0.05", "--block-ms=5", "--per-dispatch"};
    args.insert(args.end(), extra.begin(), extra.end());
    return runKiln(args);
  }
  static std::string path(const std::string& name) { return *dir_ + "/" + name; }
  static CliResult bench(const std::string& artifact, std::vector<std::string> extra) {
    std::vector<std::string> args = {"bench", path(artifact),
                                     "--input=1x1x8x8xf32=@" + example("digit_0.npy"),
                                     "--iterations=200", "--warmup=20"};
    args.insert(args.end(), extra.begin(), extra.end());
    return runKiln(args);
  }
  static std::string* dir_;
};
std::string* KilnBenchPerDispatch::dir_ = nullptr;

// The dispatches of the digits model as `kiln dump` lists them (index: name, cost text).
struct Expected {
  const char* name;
  const char* node;  // the first source node
  const char* kind;
  uint64_t cost;
  const char* costText;
};
const Expected kDigits[] = {
    {"Conv+Relu", "/features/features.0/Conv (Conv)", "flops", 9216, "9.22 kFLOP"},
    {"Conv+Relu", "/features/features.2/Conv (Conv)", "flops", 147456, "147 kFLOP"},
    {"MaxPool", "/features/features.4/MaxPool (MaxPool)", "elements", 1024, "1.02 k elements"},
    {"Gemm+Relu+Gemm", "/classifier/classifier.1/Gemm (Gemm)", "flops", 12768, "12.8 kFLOP"},
};
constexpr size_t kDigitsDispatches = sizeof kDigits / sizeof kDigits[0];

TEST_F(KilnBenchPerDispatch, TextHasOneRowPerDispatchWithNamesAndFlops) {
  CliResult r = bench("digits.kiln", {"--per-dispatch", "--peak-gflops=50"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("whole call (traced): min "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("peak: 50.0 GFLOP/s (--peak-gflops)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("per dispatch (median over 200 calls"), std::string::npos) << r.out;
  size_t pos = r.out.find("median us");
  ASSERT_NE(pos, std::string::npos) << r.out;
  for (size_t i = 0; i < kDigitsDispatches; ++i) {
    // "      3      3       0.12 ..." : index, then the row's cost and name.
    size_t line = r.out.find("\n  " + std::string(5 - std::to_string(i).size(), ' ') +
                                 std::to_string(i) + " ",
                             pos);
    ASSERT_NE(line, std::string::npos) << "row " << i << "\n" << r.out;
    std::string row = r.out.substr(line + 1, r.out.find('\n', line + 1) - line - 1);
    EXPECT_NE(row.find(kDigits[i].costText), std::string::npos) << row;
    EXPECT_NE(row.find(std::string(kDigits[i].name) + "  <- " + kDigits[i].node),
              std::string::npos) << row;
    if (std::string(kDigits[i].kind) == "flops") {
      EXPECT_NE(row.find(" GFLOP/s "), std::string::npos) << row;
      EXPECT_NE(row.find("%  " + std::string(kDigits[i].name)), std::string::npos) << row;
    }
    pos = line + 1;
  }
  // No row past the last dispatch, then the summary.
  EXPECT_EQ(r.out.find("\n  " + std::string(4, ' ') + std::to_string(kDigitsDispatches) + " ",
                       pos),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sum of dispatch medians: "), std::string::npos);
  EXPECT_NE(r.out.find("169 kFLOP in conv/matmul dispatches"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("top 4 by time:\n    1. #"), std::string::npos) << r.out;
}

TEST_F(KilnBenchPerDispatch, JsonShapeAndHandComputedFlops) {
  CliResult r = bench("digits.kiln", {"--per-dispatch", "--peak-gflops=50", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string& j = r.out;
  EXPECT_EQ(j.front(), '{');
  for (const char* key : {"\"per_dispatch\":true", "\"costs_available\":true",
                          "\"peak_gflops\":50", "\"total_flops\":169440", "\"iterations\":200,",
                          "\"dispatches\":[{\"index\":0,", "\"top\":["})
    EXPECT_NE(j.find(key), std::string::npos) << key << " in " << j;
  size_t pos = j.find("\"dispatches\":[");
  double sum = 0;
  for (size_t i = 0; i < kDigitsDispatches; ++i) {
    std::string head = "{\"index\":" + std::to_string(i) + ",";
    size_t at = j.find(head, pos);
    ASSERT_NE(at, std::string::npos) << head << " in " << j;
    std::string entry = j.substr(at, j.find('}', at) - at);
    EXPECT_NE(entry.find("\"name\":\"" + std::string(kDigits[i].name) + "\""), std::string::npos)
        << entry;
    EXPECT_NE(entry.find("\"cost_kind\":\"" + std::string(kDigits[i].kind) + "\",\"cost\":" +
                         std::to_string(kDigits[i].cost) + ","),
              std::string::npos) << entry;
    for (const char* key :
         {"\"median_us\":", "\"min_us\":", "\"share\":", "\"kernel\":", "\"workgroups\":"})
      EXPECT_NE(entry.find(key), std::string::npos) << key << " in " << entry;
    bool flops = std::string(kDigits[i].kind) == "flops";
    EXPECT_EQ(entry.find("\"gflops\":") != std::string::npos, flops) << entry;
    EXPECT_EQ(entry.find("\"percent_of_peak\":") != std::string::npos, flops) << entry;
    sum += jsonNumber(entry, "median_us");
    pos = at + 1;
  }
  EXPECT_EQ(j.find("{\"index\":" + std::to_string(kDigitsDispatches) + ",", pos),
            std::string::npos) << j;
  EXPECT_NEAR(sum, jsonNumber(j, "dispatch_sum_us"), 1e-6 * sum + 1e-9);
}

TEST_F(KilnBenchPerDispatch, DispatchTimesSumToAboutTheCall) {
  // The call also decodes commands and reads the clock around each dispatch, so the medians
  // add up to a bit less than the call's p50; loose bounds (the machine may be loaded).
  CliResult r = bench("digits.kiln", {"--per-dispatch", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  double sum = jsonNumber(r.out, "dispatch_sum_us");
  double p50 = jsonNumber(r.out, "p50_us");
  EXPECT_GT(sum, 0.2 * p50) << r.out;
  EXPECT_LT(sum, 1.5 * p50) << r.out;
}

TEST_F(KilnBenchPerDispatch, StrippedArtifactSaysFlopsAreUnavailable) {
  CliResult r = bench("stripped.kiln", {"--per-dispatch"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("note: '" + path("stripped.kiln") +
                       "' has no DEBUG section (compiled with --strip): FLOPs and dispatch "
                       "names are unavailable, times only"),
            std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("FLOP/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n      3 "), std::string::npos) << r.out;  // still one row each
  CliResult j = bench("stripped.kiln", {"--per-dispatch", "--json"});
  ASSERT_EQ(j.exitCode, 0) << j.err;
  EXPECT_NE(j.out.find("\"costs_available\":false"), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("\"costs_unavailable\":\""), std::string::npos) << j.out;
  EXPECT_EQ(j.out.find("\"cost_kind\""), std::string::npos) << j.out;
}

TEST_F(KilnBenchPerDispatch, WorksWithTwoThreads) {
  CliResult r = bench("digits.kiln", {"--per-dispatch", "--threads=2", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("\"threads\":2,"), std::string::npos);
  EXPECT_NE(r.out.find("{\"index\":" + std::to_string(kDigitsDispatches - 1) + ","),
            std::string::npos) << r.out;
}

TEST_F(KilnBenchPerDispatch, PeakGflopsNeedsPerDispatch) {
  CliResult r = bench("digits.kiln", {"--peak-gflops=50"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("kiln: error: --peak-gflops needs --per-dispatch"), std::string::npos)
      << r.err;
}

TEST_F(KilnBenchPerDispatch, ThreadCpuClock) {
  CliResult r = bench("digits.kiln", {"--per-dispatch", "--clock=thread-cpu", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("\"dispatch_clock\":\"thread-cpu\""), std::string::npos) << r.out;
  EXPECT_GT(jsonNumber(r.out, "dispatch_sum_us"), 0) << r.out;
  CliResult text = bench("digits.kiln", {"--per-dispatch", "--clock=thread-cpu"});
  EXPECT_NE(text.out.find("(median over 200 calls, thread CPU time;"), std::string::npos)
      << text.out;

  CliResult threads = bench("digits.kiln", {"--per-dispatch", "--clock=thread-cpu", "--threads=2"});
  EXPECT_EQ(threads.exitCode, 1);
  EXPECT_NE(threads.err.find("--clock=thread-cpu measures the calling thread only: use it with "
                             "--threads=1"),
            std::string::npos) << threads.err;
  CliResult plain = bench("digits.kiln", {"--clock=thread-cpu"});
  EXPECT_NE(plain.err.find("kiln: error: --clock needs --per-dispatch"), std::string::npos)
      << plain.err;
  CliResult bad = bench("digits.kiln", {"--per-dispatch", "--clock=tsc"});
  EXPECT_NE(bad.err.find("kiln: error: --clock=tsc: expected wall or thread-cpu"),
            std::string::npos) << bad.err;
}

// --per-workgroup: every digits dispatch is one workgroup (too small to split), so the
// simulated pool gains nothing at 2 or 4 threads; the sum of the workgroups is one thread.
TEST_F(KilnBenchPerDispatch, PerWorkgroupTimesEachWorkgroupAndSimulatesThePool) {
  CliResult r = bench("digits.kiln", {"--per-workgroup"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("whole call (workgroups timed one by one): min "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("per workgroup (thread CPU time, minimum over 200 calls):"),
            std::string::npos) << r.out;
  size_t pos = r.out.find("sum us");
  ASSERT_NE(pos, std::string::npos) << r.out;
  for (size_t i = 0; i < kDigitsDispatches; ++i) {
    pos = r.out.find(kDigits[i].name, pos);
    ASSERT_NE(pos, std::string::npos) << kDigits[i].name << " in " << r.out;
  }
  EXPECT_NE(r.out.find("(sum of the workgroups' minimums, 4 stages)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("2 threads (the pool's schedule of those times): "), std::string::npos)
      << r.out;

  CliResult j = bench("digits.kiln", {"--per-workgroup", "--json"});
  ASSERT_EQ(j.exitCode, 0) << j.err;
  size_t at = j.out.find("\"per_workgroup\":{\"calls\":200,");
  ASSERT_NE(at, std::string::npos) << j.out;
  double one = jsonNumber(j.out, "one_thread_us", at);
  EXPECT_GT(one, 0);
  size_t two = j.out.find("{\"threads\":2,", at);
  ASSERT_NE(two, std::string::npos) << j.out;
  EXPECT_DOUBLE_EQ(jsonNumber(j.out, "speedup", two), 1.0) << j.out;
  EXPECT_NE(j.out.find("\"workgroups_us\":["), std::string::npos) << j.out;

  CliResult threads = bench("digits.kiln", {"--per-workgroup", "--threads=2"});
  EXPECT_EQ(threads.exitCode, 1);
  EXPECT_NE(threads.err.find("kiln: error: --per-workgroup runs every workgroup on the calling "
                             "thread and simulates the thread pool's schedule: use it with "
                             "--threads=1"),
            std::string::npos) << threads.err;
  CliResult both = bench("digits.kiln", {"--per-workgroup", "--per-dispatch"});
  EXPECT_EQ(both.exitCode, 1);
  EXPECT_NE(both.err.find("kiln: error: --per-workgroup and --per-dispatch time the calls in two "
                          "different ways: give one of them"),
            std::string::npos) << both.err;
}

TEST_F(KilnBenchPerDispatch, PinAndLockMemory) {
  CliResult r = bench("digits.kiln", {"--pin=0", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("\"pinned_cpu\":0,"), std::string::npos) << r.out;
  CliResult text = bench("digits.kiln", {"--pin=0"});
  EXPECT_NE(text.out.find(", pinned to CPU 0\n"), std::string::npos) << text.out;
  CliResult bad = bench("digits.kiln", {"--pin=1000"});
  EXPECT_EQ(bad.exitCode, 1);
  EXPECT_NE(bad.err.find("--pin=1000: cannot pin to CPU 1000"), std::string::npos) << bad.err;
  // mlockall needs CAP_IPC_LOCK or a big enough `ulimit -l`: either it works or it says why.
  CliResult locked = bench("digits.kiln", {"--lock-memory"});
  if (locked.exitCode != 0)
    EXPECT_NE(locked.err.find("--lock-memory: mlockall failed: "), std::string::npos)
        << locked.err;
}

TEST_F(KilnBenchPerDispatch, PreemptionSplitsTheCalls) {
  CliResult r = bench("digits.kiln", {"--preemption", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  double preempted = jsonNumber(r.out, "preempted_calls");
  EXPECT_GE(preempted, 0);
  EXPECT_LE(preempted, 200);
  for (const char* key : {"\"unpreempted_p50_us\":", "\"unpreempted_p99_us\":",
                          "\"unpreempted_jitter\":"})
    EXPECT_NE(r.out.find(key), std::string::npos) << key << " in " << r.out;
  CliResult text = bench("digits.kiln", {"--preemption"});
  ASSERT_EQ(text.exitCode, 0) << text.err;
  EXPECT_NE(text.out.find("  preempted calls: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" of 200 ("), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("the others: p50 "), std::string::npos) << text.out;
}

// --floor: fixed kernel-like work after every call, reported beside the calls' statistics
// (no figure is asserted but the ordering of percentiles); not with the per-dispatch trace.
TEST_F(KilnBenchPerDispatch, FloorBesideTheCalls) {
  CliResult r = bench("digits.kiln", {"--floor", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_GE(jsonNumber(r.out, "floor_steps"), 1);
  double p50 = jsonNumber(r.out, "floor_p50_us"), p99 = jsonNumber(r.out, "floor_p99_us");
  EXPECT_GT(p50, 0);
  EXPECT_GE(p99, p50);
  EXPECT_GE(jsonNumber(r.out, "floor_jitter"), 1.0);
  CliResult text = bench("digits.kiln", {"--floor"});
  ASSERT_EQ(text.exitCode, 0) << text.err;
  EXPECT_NE(text.out.find("  machine floor (fixed "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" work run after each call): p50 "), std::string::npos) << text.out;
  CliResult traced = bench("digits.kiln", {"--floor", "--per-dispatch"});
  EXPECT_EQ(traced.exitCode, 1);
  EXPECT_NE(traced.err.find("kiln: error: --floor sets plain calls beside the machine's own "
                            "jitter: not with --per-dispatch or --per-workgroup"),
            std::string::npos) << traced.err;
}

// --cold-caches=KB: a buffer written before every timed call, outside the timing (the timed
// calls are still the requested 200; no figure is asserted, this is not a timed test); with
// the per-dispatch trace too; the buffer's size must be a positive number of kilobytes.
TEST_F(KilnBenchPerDispatch, ColdCachesBeforeEveryCall) {
  CliResult r = bench("digits.kiln", {"--cold-caches=2048", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("\"cold_caches_kb\":2048,"), std::string::npos) << r.out;
  EXPECT_EQ(jsonNumber(r.out, "iterations"), 200);
  EXPECT_GE(jsonNumber(r.out, "p99_us"), jsonNumber(r.out, "p50_us"));
  CliResult text = bench("digits.kiln", {"--cold-caches=64", "--per-dispatch"});
  ASSERT_EQ(text.exitCode, 0) << text.err;
  EXPECT_NE(text.out.find("  cold caches: 64 KB written before every timed call (not timed)\n"),
            std::string::npos) << text.out;
  EXPECT_NE(text.out.find("per dispatch (median over 200 calls"), std::string::npos) << text.out;
  for (const char* bad : {"--cold-caches=0", "--cold-caches=-5"}) {
    CliResult e = bench("digits.kiln", {bad});
    EXPECT_EQ(e.exitCode, 1) << bad;
    EXPECT_NE(e.err.find(std::string(bad) + " is out of range [1, 4194304]"), std::string::npos)
        << e.err;
  }
  CliResult word = bench("digits.kiln", {"--cold-caches=lots"});
  EXPECT_EQ(word.exitCode, 1);
  EXPECT_NE(word.err.find("--cold-caches expects an integer, got 'lots'"), std::string::npos)
      << word.err;
}

// --samples=FILE.npy: every timed call's latency in call order, the very numbers the
// statistics come from (min, max and the nearest-rank p50 of the file equal the report's);
// with --floor a second row holds the fixed work after each call.
TEST_F(KilnBenchPerDispatch, SamplesFileHoldsEveryTimedCall) {
  std::string file = path("samples.npy");
  CliResult r = bench("digits.kiln", {"--samples=" + file, "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  cli::HostTensor t = cli::readNpyFile(file);
  ASSERT_EQ(t.type, cli::ElementType::F64);
  ASSERT_EQ(t.shape, std::vector<int64_t>{200});
  std::vector<double> v(200);
  for (size_t i = 0; i < v.size(); ++i) v[i] = t.elementAsDouble(i);
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_GT(sorted.front(), 0.0);
  EXPECT_DOUBLE_EQ(sorted.front(), jsonNumber(r.out, "min_us"));
  EXPECT_DOUBLE_EQ(sorted.back(), jsonNumber(r.out, "max_us"));
  EXPECT_DOUBLE_EQ(sorted[99], jsonNumber(r.out, "p50_us"));  // nearest rank: the 100th of 200

  std::string both = path("samples_floor.npy");
  CliResult f = bench("digits.kiln", {"--samples=" + both, "--floor", "--json"});
  ASSERT_EQ(f.exitCode, 0) << f.err;
  cli::HostTensor tf = cli::readNpyFile(both);
  ASSERT_EQ(tf.shape, (std::vector<int64_t>{2, 200}));
  // Row 1 is the floor's work: its nearest-rank p50 and max are the report's floor figures.
  std::vector<double> floorRow;
  for (size_t i = 200; i < 400; ++i) floorRow.push_back(tf.elementAsDouble(i));
  std::sort(floorRow.begin(), floorRow.end());
  EXPECT_GT(floorRow.front(), 0.0);
  EXPECT_DOUBLE_EQ(floorRow[99], jsonNumber(f.out, "floor_p50_us"));
  EXPECT_DOUBLE_EQ(floorRow[197], jsonNumber(f.out, "floor_p99_us"));  // rank ceil(0.99 x 200)

  CliResult empty = bench("digits.kiln", {"--samples="});
  EXPECT_EQ(empty.exitCode, 1);
  EXPECT_NE(empty.err.find("kiln: error: flag '--samples' needs a value (--samples=FILE.npy)"),
            std::string::npos) << empty.err;
  CliResult unwritable = bench("digits.kiln", {"--samples=/nonexistent-dir/s.npy"});
  EXPECT_EQ(unwritable.exitCode, 1);
  EXPECT_NE(unwritable.err.find("/nonexistent-dir/s.npy"), std::string::npos) << unwritable.err;
}

TEST_F(KilnBenchPerDispatch, DumpShowsFlops) {
  CliResult r = runKiln({"dump", path("digits.kiln")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (const Expected& e : kDigits)
    EXPECT_NE(r.out.find("(" + std::string(e.costText) + ")  " + e.name + "  <- " + e.node),
              std::string::npos) << e.node << "\n" << r.out;
  CliResult j = runKiln({"dump", path("digits.kiln"), "--json"});
  ASSERT_EQ(j.exitCode, 0) << j.err;
  EXPECT_NE(j.out.find("\"cost_kind\":\"flops\",\"cost\":147456"), std::string::npos) << j.out;
}

// The runtime validates the DEBUG section with the cost table (entries at 32, not 16) and
// still finds the names where the entries are: `kiln run --trace` labels through
// kiln_module_dispatch_debug.
TEST_F(KilnBenchPerDispatch, RuntimeReadsNamesNextToTheCostTable) {
  CliResult r = runKiln({"run", path("digits.kiln"),
                         "--input=1x1x8x8xf32=@" + example("digit_0.npy"),
                         "--expected_output=@" + example("digit_0_logits.npy"),
                         "--tolerance=1e-4,1e-4", "--trace"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (const Expected& e : kDigits)
    EXPECT_NE(r.err.find(std::string(e.name) + " <- " + e.node), std::string::npos)
        << e.node << "\n" << r.err;
}

// The runtime's standard test artifact is written without the cost table (as by an older
// compiler): names but no FLOPs.
TEST(KilnBenchPerDispatchOld, ArtifactWithoutCostTable) {
  const CliFiles& f = cliFiles();
  CliResult r = runKiln({"bench", f.elf, "--input=@" + f.x, "--input=@" + f.y, "--iterations=20",
                         "--warmup=2", "--per-dispatch"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("has no cost table in DEBUG (written by an older compiler): FLOPs are "
                       "unavailable, times only"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dispatch_2  <- node_2"), std::string::npos) << r.out;
}

// The fused artifact against the unfused one: rows in A's order, B's lone Relu and Gemm
// dispatches where B runs them, both names where they differ, and the sums of each side.
TEST_F(KilnBenchPerDispatch, CompareMatchesDispatchesAcrossFusions) {
  CliResult r = compare("digits.kiln", "unfused.kiln", {});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("  (traced calls: every dispatch timed)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dispatches matched by their first node and op):\n"
                       "    A #   B #       A us       B us    B / A  dispatch\n"),
            std::string::npos) << r.out;
  // (A #, B #, the name column) per row, in order.
  const std::pair<const char*, const char*> rows[] = {
      {"      0     0 ", "Conv+Relu (B: Conv)  <- /features/features.0/Conv (Conv), "},
      {"      -     1 ", "Relu  <- /features/features.1/Relu (Relu)"},
      {"      1     2 ", "Conv+Relu (B: Conv)  <- /features/features.2/Conv (Conv), "},
      {"      -     3 ", "Relu  <- /features/features.3/Relu (Relu)"},
      {"      2     4 ", "MaxPool  <- /features/features.4/MaxPool (MaxPool)"},
      {"      3     5 ", "Gemm+Relu+Gemm (B: Gemm)  <- /classifier/classifier.1/Gemm (Gemm), "},
      {"      -     6 ", "Relu  <- /classifier/classifier.2/Relu (Relu)"},
      {"      -     7 ", "Gemm  <- /classifier/classifier.3/Gemm (Gemm)"}};
  size_t pos = r.out.find("B / A  dispatch\n");
  for (const auto& [indices, name] : rows) {
    size_t line = r.out.find(std::string("\n") + indices, pos);
    ASSERT_NE(line, std::string::npos) << indices << "\n" << r.out;
    std::string row = r.out.substr(line + 1, r.out.find('\n', line + 1) - line - 1);
    EXPECT_NE(row.find(name), std::string::npos) << row;
    // A lone dispatch has no ratio; a matched one has A's and B's times and B / A.
    const bool matched = indices[6] != '-';
    EXPECT_EQ(row.find("        -  ") == std::string::npos, matched) << row;
    pos = line + 1;
  }
  EXPECT_NE(r.out.find("  sums of the dispatch medians: A "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" (4 dispatches), B "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" us (8)\n"), std::string::npos) << r.out;
}

TEST_F(KilnBenchPerDispatch, CompareJsonListsEveryDispatchOfBoth) {
  CliResult r = compare("digits.kiln", "unfused.kiln", {"--json", "--threads=2"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string& j = r.out;
  for (const char* key : {"\"per_dispatch\":true", "\"dispatches_matched_by\":\"first_node_and_op\"",
                          "\"dispatches\":[{\"a\":0,\"a_median_us\":",
                          "\"b_name\":\"Conv\"", "\"outputs_agree\":true"})
    EXPECT_NE(j.find(key), std::string::npos) << key << " in " << j;
  const size_t rows = j.find("\"dispatches\":[");
  ASSERT_NE(rows, std::string::npos) << j;
  auto count = [&](const std::string& text) {  // in the dispatches' array
    size_t n = 0;
    for (size_t at = j.find(text, rows); at != std::string::npos; at = j.find(text, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("{\"a\":"), 4u) << j;  // every row with A's dispatch starts with it
  EXPECT_EQ(count("\"b\":"), 8u) << j;
  EXPECT_EQ(count("\"ratio_p50\":"), 4u) << j;  // the matched rows
  // Every matched dispatch's median is a time.
  for (size_t at = j.find("\"a_median_us\":"); at != std::string::npos;
       at = j.find("\"a_median_us\":", at + 1))
    EXPECT_GT(std::strtod(j.c_str() + at + 14, nullptr), 0.0) << j;
}

// Without node names the dispatches pair by position, which needs as many in each.
TEST_F(KilnBenchPerDispatch, CompareStrippedArtifactsByPosition) {
  CliResult r = compare("stripped.kiln", "digits.kiln", {});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("dispatches matched by position (no node names)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n      3     3 "), std::string::npos) << r.out;
  r = compare("stripped.kiln", "unfused-stripped.kiln", {});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("kiln: error: --per-dispatch: a dispatch has no node name (an artifact "
                       "compiled with --strip?) and A has 4 dispatches, B 8: they cannot be "
                       "matched"),
            std::string::npos) << r.err;
}

}  // namespace
}  // namespace kiln::clitest
