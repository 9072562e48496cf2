#!/usr/bin/env python3
"""kiln at 2 threads, measured separately in the host's two placements of the vCPUs.

    bench/two_thread_phases.py --input=@x.npy A.kiln [B.kiln ...] [--rounds 20] [--seconds 1]
                               [--threads 2] [--split-gbps 45] [--json]

A shared VM's two vCPUs sit on one core complex of the host for some minutes (a shared L3:
the one reads what the other wrote at about 70 GB/s) and on two for others (20-25 GB/s), and
every stage of a 2-thread call reads what the other thread wrote, so a 2-thread figure means
little without the placement it was measured in (docs/benchmarks.md, "A Zen 4 host"). Each
round measures that rate (build/bin/kiln_cross_core_read_bench: CPU 0 reads 800 KB that CPU 1
has just written), runs every artifact for --seconds (in a rotated order, so none is always
first) and measures the rate again; at the end the rounds are split at --split-gbps, and per
placement and artifact it prints the rounds, the median p50 and the median fastest call. A
round whose two rates fall on different sides of the split saw the host move the vCPUs while
it ran (a fifth of the rounds, some minutes): it counts for neither placement. Comparing two
builds of one model this way tells whether a change helps in both placements, whichever the
host gave.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(command):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit(f"two_thread_phases: {' '.join(command)} failed:\n{result.stderr.strip()}")
    return result.stdout


# Cross-core read rates (GB/s) at or above this: the two vCPUs on one core complex (a shared
# L3); below it, on two (~70-125 against ~20-40 on the Zen hosts seen so far).
ONE_COMPLEX_GBPS = 45.0


def crossCoreRate(bench):
    """GB/s at which CPU 0 reads 800 KB that CPU 1 has just written
    (bench/cross_core_read_bench.cpp), or None when the benchmark cannot run (one CPU, say)."""
    result = subprocess.run([bench, "--benchmark_format=json", "--benchmark_min_time=0.2",
                             "--benchmark_filter=^BM_ReadAfterOtherCoreWrote/800/manual_time$"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        return None
    runs = [b for b in json.loads(result.stdout)["benchmarks"]
            if b.get("run_type") == "iteration" and not b.get("error_occurred")]
    return runs[0]["bytes_per_second"] / 1e9 if runs else None


def mixed(r, split):
    """Whether the rates before and after round r fall on different sides of split."""
    return (r["gbps"] >= split) != (r.get("gbps_after", r["gbps"]) >= split)


def summarize(rounds, artifacts, split):
    """{placement: {artifact: {rounds, p50_us, min_us}}} for the rounds with both rates on one
    side of split (rounds without "gbps_after" by "gbps" alone)."""
    out = {}
    steady = [r for r in rounds if not mixed(r, split)]
    for name, keep in (("one core complex", lambda r: r["gbps"] >= split),
                       ("two core complexes", lambda r: r["gbps"] < split)):
        chosen = [r for r in steady if keep(r)]
        if not chosen:
            continue
        out[name] = {a: {"rounds": len(chosen),
                         "p50_us": statistics.median(r["runs"][a]["p50_us"] for r in chosen),
                         "min_us": statistics.median(r["runs"][a]["min_us"] for r in chosen)}
                     for a in artifacts}
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("artifacts", nargs="+", help="the .kiln files to compare")
    parser.add_argument("--input", action="append", required=True,
                        help="an input, as for `kiln bench` (repeat per input)")
    parser.add_argument("--kiln", default=os.path.join(ROOT, "build", "bin", "kiln"))
    parser.add_argument("--cross-core-bench",
                        help="kiln_cross_core_read_bench (default: next to --kiln)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--split-gbps", type=float, default=ONE_COMPLEX_GBPS,
                        help="cross-core reads at or above this: one core complex "
                        f"(default {ONE_COMPLEX_GBPS:g})")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    bench = args.cross_core_bench or os.path.join(os.path.dirname(args.kiln),
                                                  "kiln_cross_core_read_bench")
    for tool in (args.kiln, bench):
        if not os.access(tool, os.X_OK):
            sys.exit(f"two_thread_phases: {tool} not found (build the kiln and "
                     "kiln_cross_core_read_bench targets, or pass --kiln / --cross-core-bench)")
    for artifact in args.artifacts:
        if not os.path.isfile(artifact):
            sys.exit(f"two_thread_phases: '{artifact}' not found")
    if args.rounds < 1:
        sys.exit(f"two_thread_phases: --rounds {args.rounds}: expected at least 1")

    def rate():
        gbps = crossCoreRate(bench)
        if gbps is None:
            sys.exit(f"two_thread_phases: {bench} could not measure the cross-core read rate "
                     "(it needs two CPUs it may pin threads to)")
        return gbps

    rounds = []
    for r in range(args.rounds):
        gbps = rate()
        order = args.artifacts[r % len(args.artifacts):] + args.artifacts[:r % len(args.artifacts)]
        runs = {}
        for artifact in order:
            out = run([args.kiln, "bench", artifact, f"--threads={args.threads}",
                       f"--seconds={args.seconds}", "--json"]
                      + [f"--input={i}" for i in args.input])
            runs[artifact] = json.loads(out.strip().splitlines()[-1])
        rounds.append({"gbps": gbps, "gbps_after": rate(), "runs": runs})
        print(f"round {r + 1}: cross-core reads {gbps:.0f} / {rounds[-1]['gbps_after']:.0f} GB/s"
              + (" (moved: left out)" if mixed(rounds[-1], args.split_gbps) else "") + "; "
              + ", ".join(f"{os.path.basename(a)} p50 {runs[a]['p50_us']:.0f} us"
                          for a in args.artifacts), file=sys.stderr, flush=True)
    summary = summarize(rounds, args.artifacts, args.split_gbps)
    if args.json:
        print(json.dumps({"rounds": rounds, "summary": summary}))
        return 0
    for placement, per in summary.items():
        any_artifact = next(iter(per.values()))
        count = any_artifact["rounds"]
        print(f"{placement} ({count} round{'' if count == 1 else 's'}):")
        for artifact, figures in per.items():
            print(f"  {artifact}: p50 {figures['p50_us']:.1f} us, "
                  f"fastest {figures['min_us']:.1f} us")
    missing = {"one core complex", "two core complexes"} - set(summary)
    for placement in sorted(missing):
        print(f"{placement}: no round (the host did not keep the vCPUs there for a whole round)")
    moved = sum(mixed(r, args.split_gbps) for r in rounds)
    if moved:
        print(f"{moved} of {len(rounds)} rounds left out: the placement changed while they ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
