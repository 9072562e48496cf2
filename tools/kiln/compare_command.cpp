// `kiln compare A.kiln B.kiln --input=... [--threads=N] [--threads-b=M] [--seconds=S]
// [--block-ms=M] [--json]`: the latency of two artifacts of one model (two compilers, two sets
// of flags), or of one artifact at two thread counts, measured side by side: blocks of calls
// of each, alternating A B B A A B ... (paired_blocks.h), each with its own context and, with
// --threads, its own pool. Reports each one's p50 over all its
// calls and the median ratio B / A of neighbouring blocks with its quartiles, which holds
// when the machine's speed changes in phases (another tenant, the host moving the vCPUs);
// and whether the two give the same outputs on the inputs. `--per-dispatch` times every
// dispatch of both through the trace hook and reports them side by side, matched by the first
// model node each runs (dispatch_pairs.h), with the same paired ratio per dispatch.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include "cli_error.h"
#include "command.h"
#include "dispatch_pairs.h"
#include "dispatch_trace.h"
#include "json_writer.h"
#include "latency_stats.h"
#include "paired_blocks.h"
#include "runtime_session.h"
#include "tensor_compare.h"
#include "tensor_spec.h"

namespace kiln::cli {
namespace {

using Clock = std::chrono::steady_clock;

double microsecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// One artifact ready to call, and every timed call's latency.
struct Side {
  std::string path;
  std::unique_ptr<RuntimeSession> session;
  uint32_t function = 0;
  std::vector<AlignedBuffer> inputs, outputs;
  std::vector<double> samples;
  std::vector<double> blockMedians;
  // --per-dispatch: the trace's profile, and per dispatch (slot) the median of each block.
  PerDispatch per;
  std::vector<std::vector<double>> dispatchBlockMedians;

  void call() {
    session->call(function, inputs, outputs);
    if (per.profile && !per.profile->endCall())
      throw CliError("'" + path + "': the trace hook did not see every dispatch of a call");
  }
  // Calls for at least `microseconds` (and at least once); records them and their median
  // (and each dispatch's median in the block, whose samples are then dropped: memory stays
  // bounded however short the calls).
  void block(double microseconds) {
    std::vector<double> latencies;
    Clock::time_point start = Clock::now();
    do {
      Clock::time_point t0 = Clock::now();
      call();
      latencies.push_back(microsecondsSince(t0));
    } while (microsecondsSince(start) < microseconds);
    samples.insert(samples.end(), latencies.begin(), latencies.end());
    blockMedians.push_back(blockMedian(latencies));
    if (!per.profile) return;
    dispatchBlockMedians.resize(per.profile->count());
    for (uint32_t slot = 0; slot < per.profile->count(); ++slot)
      dispatchBlockMedians[slot].push_back(blockMedian(per.profile->samplesUs(slot)));
    per.profile->clearSamples();
  }
  void forgetWarmUp() {
    samples.clear();
    blockMedians.clear();
    dispatchBlockMedians.clear();
  }
};

// --per-dispatch: one row per matched pair of dispatches (or a dispatch of one side alone).
struct DispatchComparison {
  std::optional<uint32_t> a, b;  // global dispatch indices, as `kiln dump` numbers them
  const DispatchInfo* info = nullptr;  // A's where A has the dispatch, else B's
  std::string otherName;               // B's name where it differs from A's
  double aUs = 0, bUs = 0;             // medians of the block medians
  PairedRatios ratios;                 // pairs of blocks, both sides present
};

double medianOf(const std::vector<double>& values) {
  return values.empty() ? 0.0 : blockMedian(values);
}

std::vector<DispatchComparison> compareDispatches(const Side& a, const Side& b,
                                                  const DispatchPairing& pairing) {
  std::vector<DispatchComparison> rows;
  for (const DispatchPair& pair : pairing.pairs) {
    DispatchComparison row;
    if (pair.a) {
      row.a = a.per.profile->firstDispatch() + *pair.a;
      row.info = &a.per.infos[*pair.a];
      row.aUs = medianOf(a.dispatchBlockMedians[*pair.a]);
    }
    if (pair.b) {
      row.b = b.per.profile->firstDispatch() + *pair.b;
      const DispatchInfo& bInfo = b.per.infos[*pair.b];
      if (!row.info)
        row.info = &bInfo;
      else if (bInfo.name != row.info->name)
        row.otherName = bInfo.name;
      row.bUs = medianOf(b.dispatchBlockMedians[*pair.b]);
    }
    if (pair.a && pair.b)
      row.ratios = pairedRatios(a.dispatchBlockMedians[*pair.a], b.dispatchBlockMedians[*pair.b]);
    rows.push_back(row);
  }
  return rows;
}

void printDispatchesText(const std::vector<DispatchComparison>& rows, bool byPosition) {
  std::printf("  per dispatch (median of the block medians; B / A by pairs of blocks; dispatches "
              "matched by %s):\n",
              byPosition ? "position (no node names)" : "their first node and op");
  std::printf("  %5s %5s %10s %10s %8s  %s\n", "A #", "B #", "A us", "B us", "B / A", "dispatch");
  double sumA = 0, sumB = 0;
  size_t countA = 0, countB = 0;
  for (const DispatchComparison& row : rows) {
    auto index = [](std::optional<uint32_t> i) { return i ? std::to_string(*i) : "-"; };
    auto us = [](std::optional<uint32_t> i, double v) {
      char text[32];
      std::snprintf(text, sizeof text, "%.2f", v);
      return i ? std::string(text) : std::string("-");
    };
    std::string ratio = "-";
    if (row.a && row.b) {
      char text[32];
      std::snprintf(text, sizeof text, "%.3f", row.ratios.p50);
      ratio = text;
    }
    if (row.a) sumA += row.aUs, ++countA;
    if (row.b) sumB += row.bUs, ++countB;
    std::string what = row.info->name.empty() ? "(no name)" : row.info->name;
    if (!row.otherName.empty()) what += " (B: " + row.otherName + ")";
    if (!row.info->node.empty()) what += "  <- " + row.info->node;
    std::printf("  %5s %5s %10s %10s %8s  %s\n", index(row.a).c_str(), index(row.b).c_str(),
                us(row.a, row.aUs).c_str(), us(row.b, row.bUs).c_str(), ratio.c_str(),
                what.c_str());
  }
  std::printf("  sums of the dispatch medians: A %.1f us (%zu dispatches), B %.1f us (%zu)\n",
              sumA, countA, sumB, countB);
}

void writeDispatchesJson(JsonWriter& j, const std::vector<DispatchComparison>& rows,
                         bool byPosition) {
  j.field("dispatches_matched_by", byPosition ? "position" : "first_node_and_op");
  j.key("dispatches");
  j.beginArray();
  for (const DispatchComparison& row : rows) {
    j.beginObject();
    if (row.a) j.field("a", *row.a), j.field("a_median_us", row.aUs);
    if (row.b) j.field("b", *row.b), j.field("b_median_us", row.bUs);
    j.field("name", row.info->name);
    if (!row.otherName.empty()) j.field("b_name", row.otherName);
    j.field("node", row.info->node);
    if (row.a && row.b) {
      j.field("ratio_p25", row.ratios.p25);
      j.field("ratio_p50", row.ratios.p50);
      j.field("ratio_p75", row.ratios.p75);
    }
    j.endObject();
  }
  j.endArray();
}

// The outputs of A and B on the inputs, compared within `tolerance`: nullopt if they agree,
// else the first mismatch, naming the output.
std::optional<std::string> compareOutputs(const Side& a, const Side& b,
                                          const Tolerance& tolerance) {
  std::vector<TensorSignature> as = a.session->outputs(a.function);
  std::vector<TensorSignature> bs = b.session->outputs(b.function);
  if (as.size() != bs.size())
    return "'" + a.path + "' has " + std::to_string(as.size()) + " outputs, '" + b.path +
           "' " + std::to_string(bs.size());
  for (size_t i = 0; i < as.size(); ++i) {
    HostTensor x = a.session->toHostTensor(as[i], a.outputs[i]);
    HostTensor y = b.session->toHostTensor(bs[i], b.outputs[i]);
    if (auto mismatch = compareTensors(y, x, tolerance))
      return "output " + std::to_string(i) + " ('" + as[i].name + "'): " + mismatch->message;
  }
  return std::nullopt;
}

int runCompare(const ParsedArgs& args) {
  SessionOptions options;
  options.threads = static_cast<uint32_t>(args.integer("threads", 1, 1, 256));
  // B at another thread count (its 2-thread speed-up is then A / B in paired blocks).
  SessionOptions optionsB = options;
  optionsB.threads = static_cast<uint32_t>(args.integer("threads-b", options.threads, 1, 256));
  const double seconds = args.number("seconds", 10.0);
  const double blockMs = args.number("block-ms", 50.0);
  Tolerance tolerance;
  if (auto text = args.value("tolerance")) tolerance = parseTolerance(*text);
  std::vector<HostTensor> inputs;
  for (const std::string& spec : args.values("input")) inputs.push_back(parseTensorSpec(spec));

  Side sides[2];
  for (int s = 0; s < 2; ++s) {
    Side& side = sides[s];
    side.path = args.positionals[size_t(s)];
    side.session = std::make_unique<RuntimeSession>(side.path, s == 0 ? options : optionsB);
    side.function = side.session->findFunction(args.value("function"));
  }
  for (Side& side : sides) {  // (both loaded first: a missing file is the first error)
    try {
      side.inputs = side.session->prepareInputs(side.function, inputs);
    } catch (const CliError& e) {  // which of the two artifacts
      throw CliError("'" + side.path + "': " + e.what());
    }
    side.outputs = side.session->allocateOutputs(side.function);
  }
  Side& a = sides[0];
  Side& b = sides[1];
  const bool perDispatch = args.flag("per-dispatch");
  DispatchPairing pairing;
  if (perDispatch) {
    for (Side& side : sides)
      side.per = preparePerDispatch(side.path, *side.session, side.function, false);
    pairing = pairDispatches(a.per.infos, b.per.infos);
    if (!pairing.error.empty()) throw CliError("--per-dispatch: " + pairing.error);
  }

  // Warm-up: a few blocks of each (caches, page tables, the pools' threads), untimed.
  for (int i = 0; i < 2; ++i) {
    a.block(blockMs * 1000);
    b.block(blockMs * 1000);
  }
  std::optional<std::string> differ = compareOutputs(a, b, tolerance);
  for (Side& side : sides) side.forgetWarmUp();

  Clock::time_point start = Clock::now();
  for (size_t pair = 0; pair < 2 || microsecondsSince(start) < seconds * 1e6; ++pair) {
    Side& first = aFirst(pair) ? a : b;
    Side& second = aFirst(pair) ? b : a;
    first.block(blockMs * 1000);
    second.block(blockMs * 1000);
  }
  const PairedRatios ratios = pairedRatios(a.blockMedians, b.blockMedians);
  // What the two sessions run on (a pool each, or the calling thread).
  const uint32_t threadsA = a.session->threads(), threadsB = b.session->threads();
  const LatencyStats sa = summarize(a.samples), sb = summarize(b.samples);
  std::vector<DispatchComparison> dispatches;
  if (perDispatch) dispatches = compareDispatches(a, b, pairing);

  if (args.flag("json")) {
    JsonWriter j;
    j.beginObject();
    j.field("a", a.path);
    j.field("b", b.path);
    j.field("function", a.session->functionName(a.function));
    j.field("threads", threadsA);
    j.field("threads_b", threadsB);
    j.field("pairs", uint64_t{ratios.pairs});
    if (perDispatch) j.field("per_dispatch", true);  // the figures above are of traced calls
    j.field("a_calls", uint64_t{sa.count});
    j.field("b_calls", uint64_t{sb.count});
    j.field("a_p50_us", sa.p50);
    j.field("b_p50_us", sb.p50);
    j.field("ratio_p25", ratios.p25);
    j.field("ratio_p50", ratios.p50);
    j.field("ratio_p75", ratios.p75);
    j.field("outputs_agree", !differ.has_value());
    if (differ) j.field("outputs_differ", *differ);
    if (perDispatch) writeDispatchesJson(j, dispatches, pairing.byPosition);
    j.endObject();
    std::printf("%s\n", j.text().c_str());
    return 0;
  }
  if (threadsB == threadsA) {
    std::printf("function '%s', %u thread%s, %zu pairs of %.0f ms blocks\n",
                a.session->functionName(a.function).c_str(), threadsA, threadsA == 1 ? "" : "s",
                ratios.pairs, blockMs);
  } else {
    std::printf("function '%s', A at %u thread%s, B at %u thread%s, %zu pairs of %.0f ms blocks\n",
                a.session->functionName(a.function).c_str(), threadsA, threadsA == 1 ? "" : "s",
                threadsB, threadsB == 1 ? "" : "s", ratios.pairs, blockMs);
  }
  if (perDispatch) std::printf("  (traced calls: every dispatch timed)\n");
  std::printf("  A %s: p50 %.1f us (%zu calls)\n", a.path.c_str(), sa.p50, sa.count);
  std::printf("  B %s: p50 %.1f us (%zu calls)\n", b.path.c_str(), sb.p50, sb.count);
  std::printf("  B / A by pairs of blocks: median %.3f (quartiles %.3f - %.3f)\n", ratios.p50,
              ratios.p25, ratios.p75);
  if (threadsB != threadsA)
    std::printf("  A / B (B's speed-up at %u thread%s over A's at %u): %.3f\n", threadsB,
                threadsB == 1 ? "" : "s", threadsA, 1.0 / ratios.p50);
  if (differ)
    std::printf("  outputs differ: %s\n", differ->c_str());
  else
    std::printf("  outputs agree (rtol %g, atol %g)\n", tolerance.rtol, tolerance.atol);
  if (perDispatch) printDispatchesText(dispatches, pairing.byPosition);
  return 0;
}

}  // namespace

const Command& compareCommand() {
  static const Command command{
      "compare",
      "measure two artifacts' latency side by side, in alternating blocks of calls",
      "kiln compare A.kiln B.kiln --input=TENSOR... [--threads=N] [--threads-b=M] "
      "[--seconds=S] [--block-ms=M] [--per-dispatch] [--tolerance=RTOL[,ATOL]] [--json]",
      "Calls the entry functions of two artifacts of one model (say, two compilers or two sets\n"
      "of compile flags) on the same inputs (written as for `kiln run`), in blocks of calls of\n"
      "--block-ms=M milliseconds each (default 50, at least one call) that alternate A B, B A,\n"
      "A B, ... for --seconds=S seconds (default 10), after two untimed blocks of each. Each\n"
      "artifact has its own context and, with --threads=N, its own thread pool.\n"
      "--threads-b=M runs B at M threads instead (default: N), so that A and B may be one\n"
      "artifact at two thread counts: A / B is then its speed-up, measured in neighbouring\n"
      "blocks rather than in runs seconds apart.\n"
      "\n"
      "Prints each one's p50 over all its timed calls and, for each pair of neighbouring\n"
      "blocks, the ratio of B's block median to A's: their median and quartiles. On a machine\n"
      "whose speed changes in phases (other tenants, a host that moves the vCPUs between core\n"
      "complexes) two separate `kiln bench` runs can land in different phases; neighbouring\n"
      "blocks share one, so the ratio holds where the two p50s do not. Also says whether the\n"
      "two give the same outputs within --tolerance (default 1e-3,1e-5; not an error if not).\n"
      "\n"
      "--per-dispatch times every dispatch of both through the runtime's trace hook (two clock\n"
      "reads per dispatch, a stage's dispatches one after another, so the whole calls are a\n"
      "little slower) and prints them side by side: per dispatch the median of its block\n"
      "medians in A and in B and the median of B / A over the pairs of blocks. Dispatches are\n"
      "matched by the first model node each runs and the first op of their names, so that\n"
      "artifacts that fused differently still line up (\"Conv+Relu\" with \"Conv\"); one that\n"
      "starts at no such node and op of the other is listed alone. Without node names\n"
      "(--strip) they are matched by position, which needs as many in each.\n"
      "\n"
      "--json prints one JSON object: a_p50_us, b_p50_us, ratio_p25, ratio_p50, ratio_p75,\n"
      "pairs, a_calls, b_calls, threads, threads_b, outputs_agree; with --per-dispatch also\n"
      "dispatches (a, b, a_median_us, b_median_us, ratio_p25/p50/p75, name, b_name, node)\n"
      "and dispatches_matched_by (first_node_and_op or position).",
      {{"function", FlagKind::Value, "NAME", "entry function to call (default: the first)"},
       {"input", FlagKind::Repeated, "TENSOR", "an input, in order (repeat per input)"},
       {"threads", FlagKind::Value, "N", "worker threads of each (default 1: the calling thread)"},
       {"threads-b", FlagKind::Value, "M", "worker threads of B (default: --threads)"},
       {"seconds", FlagKind::Value, "S", "time budget of the timed blocks (default 10)"},
       {"block-ms", FlagKind::Value, "M", "length of one block of calls (default 50)"},
       {"per-dispatch", FlagKind::Bool, "", "time every dispatch of both, side by side"},
       {"tolerance", FlagKind::Value, "RTOL[,ATOL]",
        "tolerance of the outputs' comparison (default 1e-3,1e-5)"},
       {"json", FlagKind::Bool, "", "print one JSON object"}},
      2,
      runCompare};
  return command;
}

}  // namespace kiln::cli
