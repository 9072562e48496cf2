#!/usr/bin/env python3
"""kiln vs ONNX Runtime on the same models and inputs.

For every model: `kiln compile` (timed), then `kiln bench --json` and bench/ort_bench.js (ONNX
Runtime through onnxruntime-node) at each thread count, the same input .npy for both,
interleaved: R rounds (--rounds, default 3) of kiln then ONNX Runtime, and the reported p50 and
p99 are the medians of the per-round figures (at 2 threads and more, each round also reads the
cross-core probe before kiln's run, between the two and after ONNX Runtime's, so a round in
which the host moved the vCPUs between core complexes can be told apart); then the peak RSS (/usr/bin/time) of one
`kiln run` and of one ONNX Runtime run. Prints a table: p50 of each, the ratio ORT p50 / kiln
p50 (> 1: kiln is faster), the RSS figures and the artifact size. --json keeps every round.

Models: scripts/export_models.py's set (exported into --models-dir if missing) and the shipped
example examples/digits. Needs `make` (build/bin/kiln) and `npm ci` in bench/.

    bench/compare.py [--models mnist_cnn,resnet18] [--threads 1,2] [--seconds 2] [--rounds 3]
                     [--json F]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

import two_thread_phases

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_MODELS = ["mnist_cnn", "mlp", "two_branch", "mobilenet_v2", "resnet18", "squeezenet1_1"]


def sh(command, **kwargs):
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          **kwargs)


def lastLine(text):
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


def peakRssKb(command):
    """Peak resident set size of `command` in KiB (GNU time's %M), or None if it failed."""
    result = sh(["/usr/bin/time", "-f", "KILN_PEAK_RSS %M"] + command)
    match = re.search(r"KILN_PEAK_RSS (\d+)", result.stderr)
    return int(match.group(1)) if result.returncode == 0 and match else None


def caseOf(folder):
    """The e2e case file beside an exported model (model-family exports write one): its
    compile flags (--input-shape for a symbolic input) and its tolerance against PyTorch."""
    path = os.path.join(folder, "case.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        case = json.load(f)
    # Every input of a model with several (BERT's ids and mask), found beside the model.
    inputs = [os.path.join(folder, os.path.basename(p)) for p in case.get("inputs", [])]
    return {"compile_flags": case.get("compile_flags", []), "tolerance": case.get("tolerance"),
            "inputs": inputs}


def findModels(args):
    """(name, model.onnx, input.npy, reference output.npy, case) for every model to compare;
    case: caseOf the model's folder."""
    models = []
    names = args.models.split(",") if args.models else TORCH_MODELS + ["digits"]
    torch_names = [n for n in names if n != "digits"]
    missing = [n for n in torch_names
               if not os.path.exists(os.path.join(args.models_dir, n, "model.onnx"))]
    if missing:
        print(f"exporting {', '.join(missing)} into {args.models_dir} ...", file=sys.stderr)
        subprocess.run([args.python, os.path.join(ROOT, "scripts", "export_models.py"),
                        args.models_dir] + missing, check=True, stdout=subprocess.DEVNULL)
    for name in names:
        if name == "digits":
            folder = os.path.join(ROOT, "examples", "digits")
            models.append((name, os.path.join(folder, "model.onnx"),
                           os.path.join(folder, "digit_0.npy"),
                           os.path.join(folder, "digit_0_logits.npy"), {}))
        else:
            folder = os.path.join(args.models_dir, name)
            models.append((name, os.path.join(folder, "model.onnx"),
                           os.path.join(folder, "input.npy"), os.path.join(folder, "output.npy"),
                           caseOf(folder)))
    return models


def checkOutputs(args, row, artifact, ort, inputs, reference, tolerance):
    """Both runtimes must reproduce PyTorch's output before their timings mean anything, within
    `tolerance` (RTOL,ATOL)."""
    for who, command in (
            ("kiln", [args.kiln, "run", artifact] + inputs +
                     [f"--expected_output=@{reference}", f"--tolerance={tolerance}"]),
            ("ORT", ort + ["--iterations=1", "--warmup=1", f"--expected_output=@{reference}",
                           f"--tolerance={tolerance}"])):
        result = sh(command)
        if result.returncode != 0:
            row.setdefault("mismatches", []).append(
                f"{who} check against PyTorch's output failed: "
                + lastLine(result.stderr or result.stdout))


def benchModel(args, name, model, input_npy, reference, case):
    row = {"model": name, "onnx_bytes": os.path.getsize(model), "threads": {}}
    artifact = os.path.join(args.work, name + ".kiln")
    started = time.monotonic()
    compiled = sh([args.kiln, "compile", model, "-o", artifact] + case.get("compile_flags", []))
    row["compile_s"] = time.monotonic() - started
    if compiled.returncode != 0:
        row["error"] = "kiln compile: " + lastLine(compiled.stderr)
        return row
    row["kiln_bytes"] = os.path.getsize(artifact)
    dumped = sh([args.kiln, "dump", artifact, "--json"])
    if dumped.returncode == 0:
        row["dump"] = sizeBreakdown(json.loads(dumped.stdout))
    inputs = [f"--input=@{path}" for path in case.get("inputs") or [input_npy]]
    ort = ["node", os.path.join(ROOT, "bench", "ort_bench.js"), model] + inputs
    checkOutputs(args, row, artifact, ort, inputs, reference,
                 case.get("tolerance") or "1e-3,1e-4")
    for threads in args.threads:
        # With --compile-for-threads, kiln runs N threads on an artifact compiled for N.
        bench_artifact = artifact
        if args.compile_for_threads and threads >= 2:
            bench_artifact = os.path.join(args.work, f"{name}.t{threads}.kiln")
            compiled = sh([args.kiln, "compile", model, "-o", bench_artifact,
                           f"--threads={threads}"] + case.get("compile_flags", []))
            if compiled.returncode != 0:
                row["error"] = f"kiln compile --threads={threads}: " + lastLine(compiled.stderr)
                return row
            checkOutputs(args, row, bench_artifact, ort, inputs, reference,
                         case.get("tolerance") or "1e-3,1e-4")
        row["threads"][str(threads)] = benchInterleaved(args, bench_artifact, ort, inputs,
                                                        threads)
    output = os.path.join(args.work, name + "_out.npy")
    row["kiln_rss_kb"] = peakRssKb([args.kiln, "run", artifact] + inputs +
                                   [f"--output=@{output}"])
    row["ort_rss_kb"] = peakRssKb(ort + ["--iterations=1", "--warmup=1", "--json"])
    return row


def placementSummary(probes, kiln_rounds, ort_rounds):
    """`probes`: per round the cross-core rates [before kiln, between, after ONNX Runtime] (None
    where the probe did not run). Returns how many rounds the host moved the vCPUs in (the rates
    on both sides of two_thread_phases.ONE_COMPLEX_GBPS), and the median kiln/ORT p50 over the other rounds, each
    round's pair timed in one placement (None if there is none)."""
    moved, ratios = 0, []
    for rates, kiln, ort in zip(probes, kiln_rounds, ort_rounds):
        known = [r for r in rates if r is not None]
        if not known:
            continue
        sides = {r >= two_thread_phases.ONE_COMPLEX_GBPS for r in known}
        if len(sides) > 1:
            moved += 1
        else:
            ratios.append(kiln["p50_us"] / ort["p50_us"])
    return {"moved": moved, "rounds": len(probes),
            "steady_ratio": statistics.median(ratios) if ratios else None,
            "steady_rounds": len(ratios)}


def benchInterleaved(args, artifact, ort, inputs, threads):
    """R rounds of (kiln, ORT) at one thread count. Per runtime: the per-round p50/p99 lists
    and their medians (*_p50_us, *_p99_us), and the median per-round jitter p99/p50. At 2
    threads and more with the cross-core probe: per round its rates before, between and after
    the two runs (cross_core_rounds) and placementSummary's figures (placement)."""
    probe = None
    if threads >= 2 and args.cross_core_bench:
        probe = lambda: two_thread_phases.crossCoreRate(args.cross_core_bench)  # noqa: E731
    commands = (
        ("kiln", [args.kiln, "bench", artifact] + inputs +
                 [f"--threads={threads}", f"--seconds={args.seconds}", "--json"] +
                 args.kiln_bench_flags),
        ("ort", ort + [f"--threads={threads}", f"--seconds={args.seconds}", "--json"]))
    rounds = {who: [] for who, _ in commands}
    timing = {}
    probes = []
    for _ in range(args.rounds):
        rates = [probe()] if probe else []
        for who, command in commands:
            if probe and who == "ort":
                rates.append(probe())
            if who + "_error" in timing:
                continue
            result = sh(command)
            if result.returncode != 0:
                timing[who + "_error"] = lastLine(result.stderr)
                continue
            stats = json.loads(lastLine(result.stdout))
            figures = {"p50_us": stats["p50_us"], "p99_us": stats["p99_us"]}
            if "unpreempted_jitter" in stats:  # kiln bench --preemption
                figures["unpreempted_jitter"] = stats["unpreempted_jitter"]
                figures["preempted_share"] = stats["preempted_calls"] / stats["iterations"]
            rounds[who].append(figures)
        if probe:
            rates.append(probe())
            probes.append(rates)
    if probes and len(rounds["kiln"]) == len(probes) and len(rounds["ort"]) == len(probes):
        timing["cross_core_rounds"] = probes
        timing["placement"] = placementSummary(probes, rounds["kiln"], rounds["ort"])
    for who, figures in rounds.items():
        if not figures:
            continue
        timing[who + "_rounds"] = figures
        timing[who + "_p50_us"] = statistics.median(f["p50_us"] for f in figures)
        timing[who + "_p99_us"] = statistics.median(f["p99_us"] for f in figures)
        timing[who + "_jitter"] = statistics.median(f["p99_us"] / f["p50_us"] for f in figures)
        if all("unpreempted_jitter" in f for f in figures):
            timing[who + "_unpreempted_jitter"] = statistics.median(
                f["unpreempted_jitter"] for f in figures)
            timing[who + "_preempted_share"] = statistics.median(
                f["preempted_share"] for f in figures)
    return timing


def sizeBreakdown(dump):
    """The parts of `kiln dump --json` that say where an artifact's bytes go."""
    sections = {s["name"]: s["bytes"] for s in dump.get("sections", [])}
    return {"file_bytes": dump.get("file_bytes"), "sections": sections,
            "overhead_bytes": dump.get("overhead_bytes"), "arena_bytes": dump.get("arena_bytes"),
            "dispatches": len(dump.get("dispatches", [])),
            "stages": len({d.get("stage") for d in dump.get("dispatches", [])})}


def printSizes(rows):
    names = ["CONSTANTS", "KERNELS", "COMMANDS", "META", "DEBUG"]
    header = ["model", "file"] + [n.lower() for n in names] + ["other", "arena", "dispatches",
                                                               "stages"]
    table = [header]
    kb = lambda n: "-" if n is None else (f"{n / 1024:.1f} KB" if n >= 1024 else f"{n} B")
    for row in rows:
        dump = row.get("dump")
        if not dump:
            continue
        sections = dump["sections"]
        table.append([row["model"], kb(dump["file_bytes"])] +
                     [kb(sections.get(n)) for n in names] +
                     [kb(dump["overhead_bytes"]), kb(dump["arena_bytes"]),
                      str(dump["dispatches"]), str(dump["stages"])])
    if len(table) == 1:
        return
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    print("\nartifact sizes (kiln dump --json; 'other' = header, section table, padding):\n")
    for i, r in enumerate(table):
        print("  ".join(c.rjust(w) if j else c.ljust(w) for j, (c, w) in enumerate(zip(r, widths))))
        if i == 0:
            print("  ".join("-" * w for w in widths))


def formatUs(us):
    if us is None:
        return "-"
    return f"{us / 1000:.2f} ms" if us >= 1000 else f"{us:.1f} us"


def printTable(rows, threads, baseline_kb):
    header = ["model"]
    for t in threads:
        header += [f"kiln p50 {t}T", f"ORT p50 {t}T", f"ORT/kiln {t}T"]
    header += ["kiln RSS", "ORT RSS", ".kiln size", ".onnx size"]
    table = [header]
    notes = []
    for row in rows:
        if "error" in row:
            notes.append(f"{row['model']}: {row['error']}")
            table.append([row["model"]] + ["-"] * (len(header) - 1))
            continue
        line = [row["model"]]
        for mismatch in row.get("mismatches", []):
            notes.append(f"{row['model']}: {mismatch}")
        for t in threads:
            timing = row["threads"][str(t)]
            kiln, ort = timing.get("kiln_p50_us"), timing.get("ort_p50_us")
            line += [formatUs(kiln), formatUs(ort), f"{ort / kiln:.2f}" if kiln and ort else "-"]
            for who in ("kiln", "ort"):
                if who + "_error" in timing:
                    notes.append(f"{row['model']} {t}T {who}: {timing[who + '_error']}")
        rss = lambda kb: f"{kb / 1024:.1f} MB" if kb else "-"
        line += [rss(row["kiln_rss_kb"]), rss(row["ort_rss_kb"]),
                 f"{row['kiln_bytes'] / 1024:.1f} KB", f"{row['onnx_bytes'] / 1024:.1f} KB"]
        table.append(line)
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    for i, r in enumerate(table):
        print("  ".join(c.rjust(w) if j else c.ljust(w) for j, (c, w) in enumerate(zip(r, widths))))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    if baseline_kb:
        print(f"\nORT RSS includes node + onnxruntime-node itself: {baseline_kb / 1024:.1f} MB "
              "with no model loaded (bench/ort_bench.js --baseline).")
    for note in notes:
        print("note: " + note)
    return notes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=os.path.join(ROOT, "build", "bin", "kiln"))
    parser.add_argument("--models-dir", default=os.path.join(ROOT, "build", "e2e-models"))
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "bench"))
    parser.add_argument("--python", default="/usr/bin/python3",
                        help="Python with torch for scripts/export_models.py")
    parser.add_argument("--models", help="comma-separated subset (default: all)")
    parser.add_argument("--threads", default="1,2", help="thread counts, e.g. 1,2")
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per run")
    parser.add_argument("--rounds", type=int, default=3,
                        help="interleaved kiln/ORT rounds per model and thread count; the "
                        "medians of the rounds' p50 and p99 are reported")
    parser.add_argument("--kiln-bench-flags", default="",
                        help="extra flags for kiln bench, e.g. '--pin=0'")
    parser.add_argument("--compile-for-threads", action="store_true",
                        help="bench kiln at N >= 2 threads on an artifact compiled with "
                        "--threads=N (row groups, one run of rows per thread)")
    parser.add_argument("--cross-core-bench",
                        help="kiln_cross_core_read_bench, read around every round at 2 threads "
                        "and more (default: next to --kiln; 'none': not read)")
    parser.add_argument("--json", help="also write the raw figures to this file")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 if any model failed to compile, run or match PyTorch")
    args = parser.parse_args()
    args.threads = [int(t) for t in args.threads.split(",")]
    args.kiln_bench_flags = args.kiln_bench_flags.split()
    if args.cross_core_bench is None:
        candidate = os.path.join(os.path.dirname(args.kiln), "kiln_cross_core_read_bench")
        args.cross_core_bench = candidate if os.access(candidate, os.X_OK) else None
    elif args.cross_core_bench == "none":
        args.cross_core_bench = None
    if args.rounds < 1:
        sys.exit("compare: --rounds must be at least 1")
    if not os.access(args.kiln, os.X_OK):
        sys.exit(f"compare: {args.kiln} not found; run 'make' first (or pass --kiln)")
    if not os.path.isdir(os.path.join(ROOT, "bench", "node_modules", "onnxruntime-node")):
        sys.exit("compare: onnxruntime-node missing; run "
                 "'cd bench && ONNXRUNTIME_NODE_INSTALL=skip npm ci'")
    os.makedirs(args.work, exist_ok=True)

    rows = []
    for name, model, input_npy, reference, case in findModels(args):
        print(f"benchmarking {name} ...", file=sys.stderr, flush=True)
        rows.append(benchModel(args, name, model, input_npy, reference, case))
    baseline_kb = peakRssKb(["node", os.path.join(ROOT, "bench", "ort_bench.js"), "--baseline"])
    cpu = sh(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"]).stdout.strip()
    print(f"kiln vs ONNX Runtime (onnxruntime-node), median over {args.rounds} interleaved "
          f"rounds of the p50 of {args.seconds:g} s per run; CPU: {cpu}, {os.cpu_count()} "
          "cores\n")
    notes = printTable(rows, args.threads, baseline_kb)
    printSizes(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu, "seconds": args.seconds, "rounds": args.rounds,
                       "ort_baseline_rss_kb": baseline_kb, "models": rows}, f, indent=1)
    return 1 if args.strict and notes else 0


if __name__ == "__main__":
    sys.exit(main())
