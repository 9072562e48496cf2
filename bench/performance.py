#!/usr/bin/env python3
"""Regenerates docs/performance.md: kiln vs ONNX Runtime on the issue-9 models, with the machine
and the method, in one command.

    bench/performance.py [--kiln build/bin/kiln] [--rounds 3] [--seconds 2]
                         [--output docs/performance.md]

Steps: the machine (lscpu: model, the SIMD flags that matter, cores); the f32 FMA peak of one
core (bench/fma_peak_bench.cpp, best of a few repetitions); bench/compare.py on digits, mnist_cnn,
mobilenet_v2, resnet18 and squeezenet1_1 at 1 and 2 threads with R interleaved kiln/ORT rounds
(medians of the per-round p50 and p99; kiln's 2 threads on artifacts compiled with --threads=2); `kiln bench --per-dispatch --peak-gflops=PEAK` on
ResNet-18 at 1 thread for its 3x3 convolutions (kernel size read from the ONNX file by
bench/onnx_nodes.py); ResNet-18's 2-thread speed-up in paired rounds of kiln and ONNX Runtime,
each beside bench/two_thread_floor_bench.cpp (the machine's own ceiling), and kiln's in
neighbouring 50 ms blocks (`kiln compare --threads=1 --threads-b=2`), whole and per dispatch
(`--per-dispatch`, with the cross-core probe around it); the three slowest dispatches of each model; and the jitter of digits and the MNIST CNN
with and without `--pin` / `--lock-memory` (`--preemption` separating preempted calls).
Every figure in the document comes from this run; nothing is typed in by hand.
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import jitter_phases  # noqa: E402
import onnx_nodes  # noqa: E402
import two_thread_phases  # noqa: E402

MODELS = ["digits", "mnist_cnn", "mobilenet_v2", "resnet18", "squeezenet1_1"]
# The small CNNs whose jitter is measured: examples/digits (Conv-Conv-Pool-MLP on 8x8 images,
# the size of the "MNIST-size CNN") and the e2e MNIST CNN (28x28, 6 MFLOP).
JITTER_MODELS = ["digits", "mnist_cnn"]


def modelInput(args, name):
    """The input .npy of a benchmark model (the digits example ships its own samples)."""
    if name == "digits":
        return os.path.join(ROOT, "examples", "digits", "digit_0.npy")
    return os.path.join(args.models_dir, name, "input.npy")
FLAGS_THAT_MATTER = ["sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
                     "avx512_vnni", "avx_vnni", "amx_tile"]


def sh(command, check=True):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and result.returncode != 0:
        sys.exit(f"performance: {' '.join(command)} failed:\n{result.stderr.strip()}")
    return result


def machine():
    fields = {}
    for line in sh(["lscpu"]).stdout.splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    flags = set(fields.get("Flags", "").split())
    model = fields.get("Model name", "?")
    if "CPU family" in fields:  # the family tells Zen 3 (25) from Zen 5 (26) behind "AMD EPYC"
        model += f" (family {fields['CPU family']}, model {fields.get('Model', '?')})"
    return {"model": model, "cpus": fields.get("CPU(s)", "?"),
            "threads_per_core": fields.get("Thread(s) per core", "?"),
            "hypervisor": fields.get("Hypervisor vendor", ""),
            "l2": fields.get("L2 cache", "not reported"),
            "l3": fields.get("L3 cache", "not reported"),
            "has": [f for f in FLAGS_THAT_MATTER if f in flags],
            "lacks": [f for f in FLAGS_THAT_MATTER if f not in flags],
            "load": os.getloadavg()}


def fmaPeak(bench, repetitions):
    """Best and median GFLOP/s over the repetitions of the widest instruction set measured."""
    result = sh([bench, "--benchmark_format=json", f"--benchmark_repetitions={repetitions}",
                 "--benchmark_min_time=0.5"])
    runs = [b for b in json.loads(result.stdout)["benchmarks"] if b.get("run_type") == "iteration"]
    by_name = {}
    for run in runs:
        by_name.setdefault(run.get("run_name", run["name"]), []).append(run["GFLOP"])
    name = max(by_name, key=lambda n: max(by_name[n]))
    return {"benchmark": name, "best": max(by_name[name]),
            "median": statistics.median(by_name[name]), "all": by_name}


def twoCpuPeak(bench, name):
    """The FMA loop `name` pinned to CPU 0 and CPU 1 at once: each one's GFLOP/s. A virtual
    machine's two vCPUs may share one physical core (SMT siblings, or the host's time slices,
    which the guest does not see): then each gets about half of one CPU's peak, and no
    FMA-bound program can run twice as fast on two threads."""
    command = ["--benchmark_format=json", "--benchmark_min_time=1",
               f"--benchmark_filter=^{re.escape(name)}$"]
    runs = [subprocess.Popen(["taskset", "-c", str(cpu), bench] + command, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE) for cpu in (0, 1)]
    rates = []
    for run in runs:
        out, _ = run.communicate()
        if run.returncode != 0:
            return None
        rates += [b["GFLOP"] for b in json.loads(out)["benchmarks"]
                  if b.get("run_type") == "iteration"]
    return rates if len(rates) == 2 else None


def runCompare(args):
    out_json = os.path.join(args.work, "compare.json")
    command = [sys.executable, os.path.join(HERE, "compare.py"), "--kiln", args.kiln,
               "--models-dir", args.models_dir, "--work", args.work, "--models", ",".join(MODELS),
               "--threads", "1,2", "--seconds", str(args.seconds), "--rounds", str(args.rounds),
               "--kiln-bench-flags=--preemption", "--compile-for-threads", "--json", out_json]
    print("performance: " + " ".join(command), file=sys.stderr, flush=True)
    result = sh(command, check=False)
    if not os.path.exists(out_json):
        sys.exit(f"performance: compare.py failed:\n{result.stderr.strip()}")
    with open(out_json) as f:
        return json.load(f), result.stdout


def kilnBench(args, artifact, input_npy, extra):
    result = sh([args.kiln, "bench", artifact, f"--input=@{input_npy}", "--json"] + extra)
    return json.loads(result.stdout.strip().splitlines()[-1])


def conv3x3Dispatches(report, kernels):
    rows = []
    for d in report["dispatches"]:
        first = d.get("node", "").split(", ")[0]
        node = first[:-len(" (Conv)")] if first.endswith(" (Conv)") else None
        if node and kernels.get(node) == [3, 3]:
            rows.append(d)
    return rows


def resnetConvs(args, peak):
    """ResNet-18's 3x3 convolutions from `kiln bench --per-dispatch` at 1 thread, by thread CPU
    time (the table) and by wall clock (the aggregate compared with ONNX Runtime's)."""
    folder = os.path.join(args.models_dir, "resnet18")
    kernels = {n["name"]: n["attrs"].get("kernel_shape") for n in
               onnx_nodes.nodes(os.path.join(folder, "model.onnx")) if n["op_type"] == "Conv"}
    bench = lambda clock: kilnBench(
        args, os.path.join(args.work, "resnet18.kiln"), os.path.join(folder, "input.npy"),
        ["--per-dispatch", f"--peak-gflops={peak:.1f}", "--threads=1", f"--clock={clock}",
         f"--seconds={max(args.seconds, 3)}"])
    report = bench("thread-cpu")
    wall = conv3x3Dispatches(bench("wall"), kernels)
    report["wall_3x3"] = {"flops": sum(d["cost"] for d in wall),
                          "us": sum(d["median_us"] for d in wall), "count": len(wall)}
    return report, conv3x3Dispatches(report, kernels)


def workSplit(args):
    """ResNet-18's work split at 1 thread (`kiln bench --per-workgroup`): each workgroup's
    minimum thread CPU time and the thread pool's schedule of them replayed for 2 threads."""
    folder = os.path.join(args.models_dir, "resnet18")
    report = kilnBench(args, os.path.join(args.work, "resnet18.kiln"),
                       os.path.join(folder, "input.npy"),
                       ["--per-workgroup", "--threads=1", f"--seconds={max(args.seconds, 3)}"])
    split = report["per_workgroup"]
    two = next(s for s in split["simulated"] if s["threads"] == 2)
    result = {"one_thread_us": split["one_thread_us"], "two_threads_us": two["us"],
              "speedup": two["speedup"], "calls": split["calls"]}
    if "uneven" in split:
        result["uneven"] = split["uneven"]
    return result


def pairedSpeedup(args):
    """ResNet-18's 2-thread speed-up measured in pairs: R rounds of kiln at 1 and at 2 threads and
    ONNX Runtime at 1 and at 2 threads, back to back (every other round the 2-thread runs first,
    so a drift of the machine within a round favours neither). compare.py measures all of a
    model's 1-thread rounds before its 2-thread rounds, some tens of seconds apart, so a phase
    of the shared host that lasts that long enters its speed-up; here each round's ratio has
    both of its timings from the same seconds. Per runtime: the per-round p50 ratios and their
    median, the median ratio of the rounds' fastest calls (min 1T / min 2T: the scaling with the
    machine's slow phases left out) and the median 2-thread p50 over its own fastest call. With
    args.floor_bench, every round also runs bench/two_thread_floor_bench.cpp (a call of
    ResNet-18's shape with no kiln in it): the same figures for the machine alone ("floor")."""
    folder = os.path.join(args.models_dir, "resnet18")
    input_npy = os.path.join(folder, "input.npy")
    commands = {
        "kiln": lambda t: [args.kiln, "bench",
                           os.path.join(args.work, "resnet18.kiln" if t == 1 else
                                        f"resnet18.t{t}.kiln"),
                           f"--input=@{input_npy}", f"--threads={t}",
                           f"--seconds={args.seconds}", "--json"],
        "ort": lambda t: ["node", os.path.join(HERE, "ort_bench.js"),
                          os.path.join(folder, "model.onnx"), f"--input=@{input_npy}",
                          f"--threads={t}", f"--seconds={args.seconds}", "--json"]}
    runs = {who: [] for who in commands}
    floor = []
    crossCore = []  # per round: GB/s of reads of what the other CPU wrote
    for r in range(args.rounds):
        order = (1, 2) if r % 2 == 0 else (2, 1)
        for who, command in commands.items():
            figures = {}
            for threads in order:
                stats = json.loads(sh(command(threads)).stdout.strip().splitlines()[-1])
                figures[threads] = stats
            runs[who].append(figures)
        if args.floor_bench:
            floor.append(json.loads(sh([args.floor_bench, "--benchmark_format=json"]).stdout)
                         ["benchmarks"][0])
        crossCore.append(two_thread_phases.crossCoreRate(args.cross_core_bench)
                         if args.cross_core_bench else None)
    result = {}
    if any(x is not None for x in crossCore):
        result["cross_core_gbps"] = crossCore
    if floor:
        result["floor"] = {"ratios": [b["speedup_p50"] for b in floor],
                           "median": statistics.median(b["speedup_p50"] for b in floor),
                           "fastest": statistics.median(b["speedup_min"] for b in floor),
                           "spread_2t": statistics.median(b["spread_2t"] for b in floor)}
    for who, rounds in runs.items():
        ratios = [f[1]["p50_us"] / f[2]["p50_us"] for f in rounds]
        result[who] = {"ratios": ratios, "median": statistics.median(ratios),
                       "fastest": statistics.median(f[1]["min_us"] / f[2]["min_us"]
                                                    for f in rounds),
                       "spread_2t": statistics.median(f[2]["p50_us"] / f[2]["min_us"]
                                                      for f in rounds)}
    return result


def blockSpeedup(args):
    """ResNet-18's 2-thread speed-up in neighbouring 50 ms blocks: `kiln compare` of the default
    artifact at 1 thread (A) and the --threads=2 artifact at 2 (B, --threads-b=2) for R x S
    seconds. B / A by pairs of blocks, inverted: the speed-up's median and quartiles."""
    folder = os.path.join(args.models_dir, "resnet18")
    stats = json.loads(sh([args.kiln, "compare", os.path.join(args.work, "resnet18.kiln"),
                           os.path.join(args.work, "resnet18.t2.kiln"),
                           f"--input=@{os.path.join(folder, 'input.npy')}", "--threads=1",
                           "--threads-b=2", f"--seconds={args.rounds * args.seconds}",
                           "--json"]).stdout.strip().splitlines()[-1])
    return {"median": 1.0 / stats["ratio_p50"], "low": 1.0 / stats["ratio_p75"],
            "high": 1.0 / stats["ratio_p25"], "pairs": stats["pairs"]}


def layerSpeedups(args):
    """ResNet-18's 2-thread speed-up per dispatch: `kiln compare --per-dispatch` of the default
    artifact at 1 thread and the --threads=2 artifact at 2 (neighbouring 50 ms blocks of traced
    calls, S x 2 seconds), with the cross-core probe before and after (which placement the host
    gave the vCPUs). Per dispatch: its first node, the two medians and the speed-up (the inverse
    of the median B / A over the pairs of blocks)."""
    folder = os.path.join(args.models_dir, "resnet18")
    probe = lambda: (two_thread_phases.crossCoreRate(args.cross_core_bench)  # noqa: E731
                     if args.cross_core_bench else None)
    before = probe()
    stats = json.loads(sh([args.kiln, "compare", os.path.join(args.work, "resnet18.kiln"),
                           os.path.join(args.work, "resnet18.t2.kiln"),
                           f"--input=@{os.path.join(folder, 'input.npy')}", "--threads=1",
                           "--threads-b=2", "--per-dispatch", f"--seconds={2 * args.seconds}",
                           "--json"]).stdout.strip().splitlines()[-1])
    after = probe()
    rows = []
    for d in stats["dispatches"]:
        if "a" not in d or "b" not in d:
            continue  # a dispatch of one artifact only: no speed-up to give
        rows.append({"node": d["node"].split(" (")[0], "name": d["name"],
                     "one_us": d["a_median_us"], "two_us": d["b_median_us"],
                     "speedup": 1.0 / d["ratio_p50"] if d["ratio_p50"] > 0 else 0.0})
    return {"rows": rows, "pairs": stats["pairs"], "whole": 1.0 / stats["ratio_p50"],
            "cross_core_gbps": [before, after]}


def ortConvs(args):
    """ONNX Runtime's own profile of ResNet-18 at 1 thread: its 3x3 convolutions (weights
    [OC, C/group, 3, 3]), median kernel time per node over the runs, FLOPs = 2 x output
    elements x C/group x 9."""
    folder = os.path.join(args.models_dir, "resnet18")
    result = sh(["node", os.path.join(HERE, "ort_bench.js"), os.path.join(folder, "model.onnx"),
                 f"--input=@{os.path.join(folder, 'input.npy')}", "--threads=1", "--profile",
                 "--iterations=20"])
    flops = time_us = count = 0
    for n in json.loads(result.stdout.strip().splitlines()[-1])["nodes"]:
        if n["op"] != "Conv" or len(n["inputs"]) < 2 or len(n["inputs"][1]) != 4:
            continue
        weights = n["inputs"][1]
        if weights[2:] != [3, 3]:
            continue
        outputs = 1
        for dim in n["outputs"][0]:
            outputs *= dim
        flops += 2 * outputs * weights[1] * 9
        time_us += n["median_us"]
        count += 1
    return {"flops": flops, "us": time_us, "count": count}


def slowestDispatches(args, peak):
    """Per model at 1 thread: the top dispatches by time (--per-dispatch, thread CPU time)."""
    result = {}
    for name in MODELS:
        artifact = os.path.join(args.work, name + ".kiln")
        if not os.path.exists(artifact):
            continue
        try:
            report = kilnBench(args, artifact, modelInput(args, name),
                               ["--per-dispatch", f"--peak-gflops={peak:.1f}", "--threads=1",
                                "--clock=thread-cpu", f"--seconds={args.seconds}"])
        except (SystemExit, Exception) as e:  # noqa: BLE001
            result[name] = {"error": str(e).strip().splitlines()[-1]}
            continue
        rows = {d["index"]: d for d in report["dispatches"]}
        result[name] = {"sum_us": report["dispatch_sum_us"], "count": len(rows),
                        "top": [rows[i] for i in report["top"][:3]]}
    return result


def writeSlowest(L, slowest):
    L.append("## Where the time goes (1 thread)\n")
    L.append("The three slowest dispatches of each model (`kiln bench --per-dispatch "
             "--clock=thread-cpu`; share of the sum of all dispatch medians):\n")
    L.append("| model | dispatch | kind | share | median | cost | throughput | % of peak |")
    L.append("|---|---|---|--:|--:|--:|--:|--:|")
    for name, s in slowest.items():
        if "error" in s:
            L.append(f"| {name} | not measured: {s['error']} | | | | | | |")
            continue
        for d in s["top"]:
            node = d.get("node", "").split(", ")[0].rsplit(" (", 1)[0]  # the root's node
            cost = d.get("cost", 0)
            unit = {"flops": "MFLOP", "int_ops": "Mop", "elements": "M elements"}.get(
                d.get("cost_kind"), "")
            through = d.get("throughput_g_per_s")
            L.append(f"| {name} | #{d['index']} `{node}` | {d.get('name', '?')} | "
                     f"{100 * d['share']:.1f} % | {us(d['median_us'])} | "
                     + (f"{cost / 1e6:.2f} {unit}" if unit else "-") + " | "
                     + (f"{through:.1f} G/s" if through is not None else "-") + " | "
                     + (f"{d['percent_of_peak']:.1f} %" if "percent_of_peak" in d else "-")
                     + " |")
    L.append("")


def medianOf(values):
    """Median of the values that exist (a run where every call was preempted has none)."""
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def jitterStudy(args, model):
    """`model` at 1 thread: plain, --pin, --pin + --lock-memory, --floor (the machine's own
    jitter measured between the calls); interleaved rounds."""
    artifact = os.path.join(args.work, model + ".kiln")
    variants = [("plain", []), ("--pin=1", ["--pin=1"]),
                ("--pin=1 --lock-memory", ["--pin=1", "--lock-memory"]),
                ("--floor", ["--floor"])]
    results = {name: [] for name, _ in variants}
    phases = []  # the --floor rounds' samples read by bench/jitter_phases.py
    samples = os.path.join(args.work, f"{model}_samples.npy")
    for _ in range(args.rounds):
        for name, extra in variants:
            if name == "--floor":
                extra = extra + [f"--samples={samples}"]
            r = kilnBench(args, artifact, modelInput(args, model),
                          ["--threads=1", f"--seconds={args.seconds}", "--preemption"] + extra)
            results[name].append(r)
            if name == "--floor":
                calls, floor = jitter_phases.readNpy(samples)
                phases.append(jitter_phases.analyse(calls, floor, 1.10))
    summary = []
    for name, _ in variants:
        runs = results[name]
        summary.append({"variant": name,
                        "p50": statistics.median(r["p50_us"] for r in runs),
                        "p99": statistics.median(r["p99_us"] for r in runs),
                        "jitter": statistics.median(r["jitter"] for r in runs),
                        "jitters": [r["jitter"] for r in runs],
                        "preempted": statistics.median(r["preempted_calls"] / r["iterations"]
                                                       for r in runs),
                        "calm_p99": medianOf(r.get("unpreempted_p99_us") for r in runs),
                        "calm_jitter": medianOf(r.get("unpreempted_jitter") for r in runs),
                        "floor_jitter": medianOf(r.get("floor_jitter") for r in runs),
                        "floor_jitters": [r["floor_jitter"] for r in runs
                                          if "floor_jitter" in r]})
        if name == "--floor":
            summary[-1]["phases"] = phases
    return summary


def us(value):
    if value is None:
        return "-"
    return f"{value / 1000:.2f} ms" if value >= 1000 else f"{value:.1f} µs"


def writeMarkdown(args, m, peak, compare, compare_text, resnet, convs, jitter, slowest):
    rows = {r["model"]: r for r in compare["models"]}
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head = sh(["git", "-C", ROOT, "log", "-1", "--format=%h"], check=False).stdout.strip()
    L = []
    L.append("# Performance: kiln vs ONNX Runtime\n")
    L.append("Generated by `bench/performance.py` (one command; every figure below comes from "
             "that run) on " + now + ", at commit `" + head + "`. Regenerate:\n")
    L.append("```\n" + "ninja -C build kiln kiln_fma_peak_bench kiln_two_thread_floor_bench"
             "   # and, once: cd bench && "
             "ONNXRUNTIME_NODE_INSTALL=skip npm ci\n"
             f"bench/performance.py --kiln build/bin/kiln --rounds {args.rounds} "
             f"--seconds {args.seconds:g}\n" + "```\n")
    L.append("## The machine\n")
    L.append(f"- CPU: {m['model']}" + (f" ({m['hypervisor']} guest)" if m["hypervisor"] else "") +
             f", {m['cpus']} CPUs, {m['threads_per_core']} thread(s) per core; L2 {m['l2']}, "
             f"L3 {m['l3']}.")
    L.append(f"- SIMD flags present: {', '.join(m['has'])}; absent: "
             f"{', '.join(m['lacks']) or 'none'}.")
    L.append(f"- f32 FMA peak of one core: **{peak['best']:.1f} GFLOP/s** ({peak['benchmark']}, "
             f"best of {len(peak['all'][peak['benchmark']])} repetitions; median "
             f"{peak['median']:.1f}), measured by `build/bin/kiln_fma_peak_bench` "
             "(bench/fma_peak_bench.cpp: independent FMA accumulators in registers, the widest "
             "instruction set the CPU has, chosen at run time).")
    both = [peak.get("two_cpus_before"), peak.get("two_cpus_after")]
    if all(both):
        scaling = [sum(r) / peak["best"] for r in both]
        L.append(f"- The same loop on both CPUs at once (pinned to CPU 0 and 1), before and after "
                 f"the comparison: {' + '.join(f'{x:.1f}' for x in both[0])} and "
                 f"{' + '.join(f'{x:.1f}' for x in both[1])} GFLOP/s, **x{scaling[0]:.2f}** and "
                 f"**x{scaling[1]:.2f}** one CPU's peak. Where this is well below x2 the host "
                 "runs the two vCPUs on one physical core (or time-slices them), and no "
                 "FMA-bound program can scale to two threads there; it changes during a run.")
    L.append(f"- Load average before the run: {m['load'][0]:.2f} / {m['load'][1]:.2f} / "
             f"{m['load'][2]:.2f} (1/5/15 min). The machine is a shared VM: other work moves "
             "the figures by 10-30 %, which is why kiln and ONNX Runtime are interleaved.")
    cpus = int(m["cpus"]) if str(m["cpus"]).isdigit() else 1
    if m["load"][0] > cpus:
        L.append(f"- **The machine was loaded** (load average {m['load'][0]:.1f} on {cpus} CPUs): "
                 "a call is regularly preempted for another process's time slice (several ms), "
                 "so p99 and the jitter columns measure the other processes, not the runtimes, "
                 "and the 2-thread figures find the second core busy (the per-layer table uses "
                 "CPU time and is less affected). Regenerate on a quiet machine for the bars.")
    L.append("")
    L.append("## Method\n")
    L.append(f"- `bench/compare.py --rounds {compare['rounds']} --seconds {compare['seconds']:g}`: "
             "per model and thread count, R rounds of [`kiln bench --json`, then "
             "`node bench/ort_bench.js --json`] (onnxruntime-node, `intraOpNumThreads=N`, "
             "sequential execution, all graph optimisations), each run timing calls for "
             f"{compare['seconds']:g} s after a warm-up. A figure below is the **median over the "
             "rounds of the per-round p50** (and of the per-round p99); jitter is the median of "
             "the per-round p99/p50.")
    L.append("- kiln runs N threads on the artifact compiled for N (`kiln compile --threads=N`, "
             "compare.py --compile-for-threads: one run of rows per thread in the Winograd "
             "convolutions, the activations between them in row groups), as a deployment "
             "compiles for its thread count; 1 thread on the default artifact.")
    L.append("- Both runtimes first reproduce PyTorch's output on the same input (compare.py "
             "checks it, for every artifact; a mismatch would be listed under the table).")
    L.append("- Models: the torch-exported models of the e2e tests (`scripts/export_models.py`, "
             "batch 1, f32).\n")
    L.append("## kiln vs ONNX Runtime\n")
    L.append("| model | kiln p50 1T | ORT p50 1T | kiln/ORT 1T | kiln p50 2T | ORT p50 2T | "
             "kiln/ORT 2T | kiln p99/p50 1T | ORT p99/p50 1T | kiln p99/p50 2T | "
             "kiln p99/p50 1T unpreempted |")
    L.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    notes = []
    for name in MODELS:
        r = rows.get(name)
        if not r or "error" in r:
            L.append(f"| {name} | " + " | ".join(["-"] * 10) + " |")
            notes.append(f"{name}: {r.get('error') if r else 'not measured'}")
            continue
        t1, t2 = r["threads"].get("1", {}), r["threads"].get("2", {})
        ratio = lambda t: (f"{t['kiln_p50_us'] / t['ort_p50_us']:.2f}"
                           if t.get("kiln_p50_us") and t.get("ort_p50_us") else "-")
        jit = lambda t, who: f"{t[who + '_jitter']:.2f}" if who + "_jitter" in t else "-"
        L.append(f"| {name} | {us(t1.get('kiln_p50_us'))} | {us(t1.get('ort_p50_us'))} | "
                 f"{ratio(t1)} | {us(t2.get('kiln_p50_us'))} | {us(t2.get('ort_p50_us'))} | "
                 f"{ratio(t2)} | {jit(t1, 'kiln')} | {jit(t1, 'ort')} | {jit(t2, 'kiln')} | "
                 f"{jit(t1, 'kiln_unpreempted')} |")
        for mismatch in r.get("mismatches", []):
            notes.append(f"{name}: {mismatch}")
        for t in ("1", "2"):
            for who in ("kiln", "ort"):
                if who + "_error" in r["threads"].get(t, {}):
                    notes.append(f"{name} {t}T {who}: {r['threads'][t][who + '_error']}")
    L.append("")
    L.append("kiln/ORT below 1 means kiln is faster. Issue 9's bars: ≤ 0.9 on MobileNetV2, "
             "ResNet-18 and SqueezeNet 1.1 at 1 and 2 threads; ≤ 0.25 on the MNIST-size CNN "
             "(the digits model: the issue's ONNX Runtime figure, 7.8 µs, fits its size; the e2e "
             "mnist_cnn does 6 MFLOP, which no runtime does in 7.8 µs), whose kiln p99/p50 at 1 "
             "thread should be ≤ 1.10. The last column leaves out the calls "
             "the scheduler preempted (`kiln bench --preemption`; ONNX Runtime's harness has no "
             "equivalent): on a loaded machine it is the only jitter figure that measures the "
             "runtime rather than the other processes.\n")
    for note in notes:
        L.append(f"- note: {note}")
    if notes:
        L.append("")
    writePlacement(L, rows)
    r18 = rows.get("resnet18", {})
    t1, t2 = r18.get("threads", {}).get("1", {}), r18.get("threads", {}).get("2", {})
    L.append("## ResNet-18: threads and compile time\n")
    if t1.get("kiln_p50_us") and t2.get("kiln_p50_us"):
        speedup = t1["kiln_p50_us"] / t2["kiln_p50_us"]
        line = (f"- 2-thread speedup (p50 1T / p50 2T): kiln **{speedup:.2f}x** "
                f"({us(t1['kiln_p50_us'])} → {us(t2['kiln_p50_us'])})")
        if t1.get("ort_p50_us") and t2.get("ort_p50_us"):
            line += f"; ONNX Runtime {t1['ort_p50_us'] / t2['ort_p50_us']:.2f}x"
        both = [peak.get("two_cpus_before"), peak.get("two_cpus_after")]
        if all(both):
            line += (". The machine's own 2-CPU scaling of FMA work, before and after the "
                     f"comparison: x{sum(both[0]) / peak['best']:.2f} and "
                     f"x{sum(both[1]) / peak['best']:.2f} (see The machine)")
        L.append(line + ". Bar: ≥ 1.8x.")
    paired = resnet.get("paired") if isinstance(resnet, dict) else None
    if paired and "error" in paired:
        L.append(f"- The speed-up in pairs: not measured: {paired['error']}")
    elif paired:
        k, o = paired["kiln"], paired["ort"]
        L.append(f"- The same speed-up measured in pairs ({len(k['ratios'])} rounds of kiln at 1 "
                 "and 2 threads and ONNX Runtime at 1 and 2 threads back to back, so that each "
                 "round's ratio has both timings from the same seconds; the median of the "
                 f"rounds' ratios): kiln **{k['median']:.2f}x** (rounds: "
                 + ", ".join(f"{x:.2f}" for x in k["ratios"])
                 + f"), ONNX Runtime {o['median']:.2f}x (rounds: "
                 + ", ".join(f"{x:.2f}" for x in o["ratios"])
                 + "). The rounds' fastest calls (min 1T / min 2T) scale "
                 f"x{k['fastest']:.2f} (kiln) and x{o['fastest']:.2f} (ONNX Runtime); a "
                 f"2-thread p50 is {k['spread_2t']:.2f}x its fastest call for kiln and "
                 f"{o['spread_2t']:.2f}x for ONNX Runtime: the slow phases of this shared host "
                 "take that much more from a 2-thread call.")
        cross = paired.get("cross_core_gbps")
        if cross:
            L.append("- How fast one CPU read what the other wrote, after each round "
                     "(`build/bin/kiln_cross_core_read_bench`, 800 KB): "
                     + ", ".join("-" if x is None else f"{x:.0f}" for x in cross)
                     + " GB/s. About 70 GB/s when the host runs the two vCPUs on one core "
                     "complex (a shared L3), 20-25 GB/s when on two; every stage of a 2-thread "
                     "call reads data the other thread wrote, so the 2-thread rounds are slower "
                     "in the second case (docs/benchmarks.md).")
        f = paired.get("floor")
        if f:
            L.append("- The machine's own ceiling, in the same rounds: a call of ResNet-18's shape "
                     "with no kiln in it (`build/bin/kiln_two_thread_floor_bench`: 18 stages of "
                     "FMA work in registers, 54 MB streamed from memory per call, a spin barrier "
                     f"between stages) scales **x{f['median']:.2f}** at p50 (rounds: "
                     + ", ".join(f"{x:.2f}" for x in f["ratios"])
                     + f"), x{f['fastest']:.2f} by its fastest calls, and its 2-thread p50 is "
                     f"{f['spread_2t']:.2f}x its fastest call. No program of this shape scales "
                     "further on this machine in these minutes.")
    blocks = resnet.get("blocks") if isinstance(resnet, dict) else None
    if blocks and "error" in blocks:
        L.append(f"- The speed-up in blocks: not measured: {blocks['error']}")
    elif blocks:
        L.append(f"- The same speed-up in {blocks['pairs']} pairs of neighbouring 50 ms blocks "
                 "(`kiln compare resnet18.kiln resnet18.t2.kiln --threads=1 --threads-b=2`: "
                 "the 1-thread and 2-thread calls at most 100 ms apart, so that the host's "
                 f"phases fall on both): kiln **x{blocks['median']:.2f}** (quartiles "
                 f"x{blocks['low']:.2f}-x{blocks['high']:.2f}).")
    split = resnet.get("split") if isinstance(resnet, dict) else None
    if split and "error" in split:
        L.append(f"- Work split: not measured: {split['error']}")
    elif split:
        L.append(f"- Work split (`kiln bench --per-workgroup`, 1 thread): the sum of every "
                 f"workgroup's minimum thread CPU time over {split['calls']} calls is "
                 f"{us(split['one_thread_us'])}; the thread pool's claim order replayed on those "
                 f"times gives {us(split['two_threads_us'])} at 2 threads, "
                 f"**x{split['speedup']:.2f}**. That is what the artifact's split allows on two "
                 "CPUs of equal speed."
                 + (f" With one thread {(split['uneven']['slowdown'] - 1) * 100:.0f} % slower "
                    "than the other (this VM's two vCPUs often differ by that much, as the "
                    "host loads their cores), the same replay gives "
                    f"{us(split['uneven']['us'])}, x{split['uneven']['speedup']:.2f}: a stage's "
                    "last workgroups cannot move to the faster thread."
                    if "uneven" in split else "")
                 + " The measured speed-up is lower still by what the threads lose to data "
                 "that the other core wrote (`build/bin/kiln_cross_core_read_bench` measures "
                 "that rate against a core's own; docs/benchmarks.md).")
    if "compile_s" in r18:
        L.append(f"- Compile time (`kiln compile model.onnx`, wall clock, this run): "
                 f"**{r18['compile_s']:.1f} s**.")
    L.append("")
    writeLayerSpeedups(L, resnet)
    L.append("## ResNet-18's 3x3 convolutions at 1 thread\n")
    writeResnetTable(L, peak, resnet, convs)
    writeSlowest(L, slowest)
    for model, study in jitter.items():
        writeJitterTable(L, args, model, study)
    L.append("## compare.py's own output\n")
    L.append("```\n" + compare_text.strip() + "\n```")
    with open(args.output, "w") as f:
        f.write("\n".join(L) + "\n")


def writePlacement(L, rows):
    """Where the host ran the two vCPUs in each model's 2-thread rounds (compare.py's probe)."""
    parts = []
    for name in MODELS:
        t2 = rows.get(name, {}).get("threads", {}).get("2", {})
        placement, probes = t2.get("placement"), t2.get("cross_core_rounds")
        if not placement or not probes:
            continue
        rates = "; ".join("/".join("-" if x is None else f"{x:.0f}" for x in r) for r in probes)
        steady = (f"kiln/ORT over the other {placement['steady_rounds']}: "
                  f"{placement['steady_ratio']:.2f}" if placement["steady_ratio"] is not None
                  else "no round in one placement")
        parts.append(f"- {name}: {rates} GB/s; the host moved the vCPUs in "
                     f"{placement['moved']} of {placement['rounds']} rounds, {steady}")
    if not parts:
        return
    L.append("Where the host ran the two vCPUs during each 2-thread round "
             "(`build/bin/kiln_cross_core_read_bench`, 800 KB, before kiln's run / between / "
             f"after ONNX Runtime's: {two_thread_phases.ONE_COMPLEX_GBPS:g} GB/s and more is one "
             "core complex, less is two, where "
             "both runtimes are slower; a round whose rates fall on both sides timed the two "
             "runtimes in different placements, so the ratio is also given over the rounds "
             "that did not):\n")
    L.extend(parts)
    L.append("")


def writeLayerSpeedups(L, resnet):
    layers = resnet.get("layers") if isinstance(resnet, dict) else None
    if not layers:
        return
    L.append("## ResNet-18's 2-thread speed-up per dispatch\n")
    if "error" in layers:
        L.append(f"Not measured: {layers['error']}\n")
        return
    cross = ", ".join("-" if x is None else f"{x:.0f}" for x in layers["cross_core_gbps"])
    L.append("`kiln compare resnet18.kiln resnet18.t2.kiln --threads=1 --threads-b=2 "
             f"--per-dispatch`: {layers['pairs']} pairs of neighbouring 50 ms blocks of traced "
             "calls (every dispatch timed, by the wall clock), the default artifact at 1 thread "
             "and the `--threads=2` one at 2; per dispatch the median of its block medians at "
             "each thread count and the speed-up, the inverse of the median 2-thread / 1-thread "
             f"ratio over the pairs of blocks. Whole traced call: x{layers['whole']:.2f}. The "
             f"cross-core probe before and after: {cross} GB/s (about 70 or more: the two vCPUs "
             "on one core complex; 20-40: on two, where the layers that exchange the most "
             "data lose the most; docs/benchmarks.md).\n")
    L.append("| dispatch | kind | 1 thread | 2 threads | speed-up |")
    L.append("|---|---|--:|--:|--:|")
    for r in layers["rows"]:
        L.append(f"| `{r['node']}` | {r['name']} | {us(r['one_us'])} | {us(r['two_us'])} | "
                 f"x{r['speedup']:.2f} |")
    L.append("")


def writeResnetTable(L, peak, resnet, convs):
    if "error" in resnet:
        L.append(f"Not measured: {resnet['error']}\n")
        return
    L.append(f"`kiln bench resnet18.kiln --per-dispatch --peak-gflops={peak['best']:.1f} "
             "--threads=1 --clock=thread-cpu`: per dispatch the median time over the timed "
             "calls, the compiler's FLOP count (2 x MACs, from the artifact's DEBUG cost table) "
             "and the achieved GFLOP/s; a convolution counts as 3x3 by its ONNX `kernel_shape`. "
             "Times are the calling thread's CPU time, like the FMA peak, so the time other "
             "processes held the core is left out (on a quiet machine CPU and wall time agree). "
             f"Whole call (traced, wall clock): p50 {us(resnet['p50_us'])}; sum of all dispatch "
             f"medians (CPU time) {us(resnet['dispatch_sum_us'])}.\n")
    L.append("| # | node | MFLOP | median | GFLOP/s | % of peak | share of all dispatches |")
    L.append("|--:|---|--:|--:|--:|--:|--:|")
    flops = time_us = 0
    for d in convs:
        node = d.get("node", "").split(", ")[0].replace(" (Conv)", "")
        L.append(f"| {d['index']} | `{node}` | {d['cost'] / 1e6:.1f} | {us(d['median_us'])} | "
                 f"{d.get('gflops', 0):.1f} | {d.get('percent_of_peak', 0):.1f} % | "
                 f"{100 * d['share']:.1f} % |")
        flops += d["cost"]
        time_us += d["median_us"]
    if time_us:
        achieved = flops / (time_us * 1e3)
        L.append(f"| all | {len(convs)} 3x3 convolutions | {flops / 1e6:.1f} | {us(time_us)} | "
                 f"{achieved:.1f} | **{100 * achieved / peak['best']:.1f} %** | "
                 f"{100 * time_us / resnet['dispatch_sum_us']:.1f} % |")
    L.append("\nBar: ≥ 85 % of the FMA peak on these layers at 1 thread. The FLOPs are the "
             "direct convolution's (2 x MACs), so a layer the compiler gave to the Winograd "
             "kernel (3x3 stride 1: 2.25x or 4x fewer multiplies, docs/codegen.md) shows an "
             "*effective* rate, which can pass 100 %; the stride-2 layers run as direct "
             "GEMMs.\n")
    wall, ort = resnet.get("wall_3x3"), resnet.get("ort_3x3")
    line = lambda who, f: (f"{who}: {f['count']} layers, {f['flops'] / 1e6:.1f} MFLOP in "
                           f"{us(f['us'])} = {f['flops'] / (f['us'] * 1e3):.1f} GFLOP/s = "
                           f"**{100 * f['flops'] / (f['us'] * 1e3) / peak['best']:.1f} %** of "
                           "the peak")
    if wall and wall["us"] and ort and ort.get("us"):
        L.append("Side by side with ONNX Runtime on the same layers, both by the wall clock "
                 "(ONNX Runtime's own profiler, `node bench/ort_bench.js --profile`: median "
                 "kernel time per node over 20 runs, FLOPs from the shapes it reports; kiln: "
                 "`--per-dispatch --clock=wall`, FLOPs from the compiler):\n")
        L.append("- " + line("kiln", wall))
        L.append("- " + line("ONNX Runtime", ort) + "\n")
    elif ort and "error" in ort:
        L.append(f"ONNX Runtime's per-layer profile: not measured ({ort['error']}).\n")


def writeJitterTable(L, args, model, jitter):
    L.append(f"## Jitter of {model} (1 thread)\n")
    if isinstance(jitter, dict):
        L.append(f"Not measured: {jitter['error']}\n")
        return
    L.append(f"`kiln bench {model}.kiln --threads=1`, plain and with the jitter options, "
             f"{args.rounds} interleaved round(s) of {args.seconds:g} s (medians of the "
             "rounds):\n")
    L.append("| options | p50 | p99 | p99/p50 | per round | preempted calls | p99 unpreempted | "
             "p99/p50 unpreempted | machine floor p99/p50 (per round) |")
    L.append("|---|--:|--:|--:|---|--:|--:|--:|--:|")
    for j in jitter:
        floor = "-"
        if j.get("floor_jitter") is not None:
            floor = (f"{j['floor_jitter']:.2f} ("
                     + ", ".join(f"{x:.2f}" for x in j["floor_jitters"]) + ")")
        L.append(f"| {j['variant']} | {us(j['p50'])} | {us(j['p99'])} | {j['jitter']:.2f} | "
                 + ", ".join(f"{x:.2f}" for x in j["jitters"]) +
                 f" | {100 * j['preempted']:.1f} % | {us(j['calm_p99'])} | "
                 + (f"{j['calm_jitter']:.2f}" if j["calm_jitter"] is not None else "-")
                 + f" | {floor} |")
    L.append("\nThree columns come from `--preemption`: calls during which the scheduler "
             "gave the CPU to another thread (an involuntary context switch of the calling "
             "thread) are counted and left out, so the unpreempted p99/p50 is kiln's own jitter "
             "on a shared machine (caches that other processes evicted still count). The last "
             "comes from `--floor`: after every timed call `kiln bench` times fixed work of the "
             "same length, of the kind a kernel does but with no runtime around it (vector "
             "multiply-adds on operands in L1), so its p99/p50 is the machine's own jitter in "
             "the same seconds (the host scheduling the virtual CPU away, frequency changes, "
             "interrupts, a sibling hardware thread), which no runtime can go below.")
    phases = next((j["phases"] for j in jitter if j.get("phases")), None)
    if phases:
        writePhasesTable(L, phases)
    L.append("\n`--pin=CPU` pins the calling thread (which runs every kernel at 1 thread) with "
             "sched_setaffinity, so the scheduler does not migrate it between calls; "
             "`--lock-memory` mlockall()s the process so that no call takes a page fault. "
             "Between timed calls `kiln bench` does nothing but read the clock and store the "
             "sample in a vector reserved before the first timed call (a reallocation between "
             "calls would evict the caches the next call needs), and the warm-up has already "
             "touched every page of the arena, inputs and outputs. What remains on a shared VM "
             "is the other tenants: see docs/benchmarks.md.\n")


def writePhasesTable(L, phases):
    """When the slow calls of the --floor rounds happened (bench/jitter_phases.py)."""
    L.append("\nWhen the slow calls happened, in the `--floor` rounds (`kiln bench --samples`, "
             "read by `bench/jitter_phases.py`): a call is slow above 1.10 x the round's p50; "
             "slow calls less than 20 calls apart form a group, and a group spanning at least "
             "50 calls is a *phase*. In a phase, the fixed work timed after each call shows "
             "whether the machine slowed down as a whole.\n")
    L.append("| round | p99/p50 | slow calls | of them in phases | phases (longest) | "
             "calls in phases | call in phases / outside | floor in phases / outside | "
             "p99/p50 outside the phases |")
    L.append("|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for i, r in enumerate(phases, 1):
        longest = f" ({r['phase_ms_max']:.1f} ms)" if r["phases"] else ""
        slowIn = (f"{100 * r['slow_in_phases'] / r['slow_calls']:.0f} %"
                  if r["slow_calls"] else "-")
        L.append(f"| {i} | {r['jitter']:.2f} | {100 * r['slow_share']:.2f} % | {slowIn} | "
                 f"{r['phases']}{longest} | {100 * r['phase_share']:.2f} % | "
                 f"{jitter_phases.ratio(r['median_in_phases_us'], r['median_outside_us'])} | "
                 f"{jitter_phases.ratio(r.get('floor_median_in_phases_us'), r.get('floor_median_outside_us'))} | "
                 + (f"{r['outside_jitter']:.2f}" if r["outside_jitter"] is not None else "-")
                 + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=os.path.join(ROOT, "build", "bin", "kiln"))
    parser.add_argument("--fma-bench", help="kiln_fma_peak_bench (default: next to --kiln)")
    parser.add_argument("--floor-bench",
                        help="kiln_two_thread_floor_bench (default: next to --kiln, if built)")
    parser.add_argument("--models-dir", default=os.path.join(ROOT, "build", "e2e-models"))
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "performance"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--peak-repetitions", type=int, default=5)
    parser.add_argument("--output", default=os.path.join(ROOT, "docs", "performance.md"))
    args = parser.parse_args()
    args.fma_bench = args.fma_bench or os.path.join(os.path.dirname(args.kiln),
                                                    "kiln_fma_peak_bench")
    if not args.floor_bench:
        candidate = os.path.join(os.path.dirname(args.kiln), "kiln_two_thread_floor_bench")
        args.floor_bench = candidate if os.access(candidate, os.X_OK) else None
    candidate = os.path.join(os.path.dirname(args.kiln), "kiln_cross_core_read_bench")
    args.cross_core_bench = candidate if os.access(candidate, os.X_OK) else None
    for tool in (args.kiln, args.fma_bench):
        if not os.access(tool, os.X_OK):
            sys.exit(f"performance: {tool} not found (build the kiln and kiln_fma_peak_bench "
                     "targets, or pass --kiln / --fma-bench)")
    os.makedirs(args.work, exist_ok=True)
    m = machine()
    print("performance: measuring the FMA peak ...", file=sys.stderr, flush=True)
    peak = fmaPeak(args.fma_bench, args.peak_repetitions)
    peak["two_cpus_before"] = twoCpuPeak(args.fma_bench, peak["benchmark"])
    compare, compare_text = runCompare(args)
    peak["two_cpus_after"] = twoCpuPeak(args.fma_bench, peak["benchmark"])
    print("performance: ResNet-18 per dispatch ...", file=sys.stderr, flush=True)
    try:  # a model that does not compile (yet) leaves a note instead of no document
        resnet, convs = resnetConvs(args, peak["best"])
        try:
            resnet["split"] = workSplit(args)
        except (SystemExit, Exception) as e:  # noqa: BLE001
            resnet["split"] = {"error": str(e).strip().splitlines()[-1]}
        print("performance: ResNet-18's speed-up in pairs ...", file=sys.stderr, flush=True)
        try:
            resnet["paired"] = pairedSpeedup(args)
        except (SystemExit, Exception) as e:  # noqa: BLE001
            resnet["paired"] = {"error": str(e).strip().splitlines()[-1]}
        try:
            resnet["blocks"] = blockSpeedup(args)
        except (SystemExit, Exception) as e:  # noqa: BLE001
            resnet["blocks"] = {"error": str(e).strip().splitlines()[-1]}
        try:
            resnet["layers"] = layerSpeedups(args)
        except (SystemExit, Exception) as e:  # noqa: BLE001
            resnet["layers"] = {"error": str(e).strip().splitlines()[-1]}
        try:
            resnet["ort_3x3"] = ortConvs(args)
        except (SystemExit, Exception) as e:  # noqa: BLE001
            resnet["ort_3x3"] = {"error": str(e).strip().splitlines()[-1]}
    except (SystemExit, Exception) as e:  # noqa: BLE001
        resnet, convs = {"error": str(e).strip().splitlines()[-1]}, []
    print("performance: the slowest dispatches ...", file=sys.stderr, flush=True)
    slowest = slowestDispatches(args, peak["best"])
    jitter = {}
    for model in JITTER_MODELS:
        print(f"performance: {model} jitter ...", file=sys.stderr, flush=True)
        try:
            jitter[model] = jitterStudy(args, model)
        except (SystemExit, Exception) as e:  # noqa: BLE001
            jitter[model] = {"error": str(e).strip().splitlines()[-1]}
    writeMarkdown(args, m, peak, compare, compare_text, resnet, convs, jitter, slowest)
    with open(os.path.join(args.work, "performance.json"), "w") as f:
        json.dump({"machine": m, "peak": peak, "compare": compare, "resnet18": resnet,
                   "jitter": jitter, "slowest": slowest}, f, indent=1)
    print(f"performance: wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
