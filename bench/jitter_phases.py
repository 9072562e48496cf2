#!/usr/bin/env python3
"""Reads the per-call latencies of `kiln bench --samples=FILE.npy` and tells when the slow calls
happened: one by one through the run, or in phases of many consecutive slow calls.

    bench/jitter_phases.py FILE.npy [--threshold 1.10] [--json]

A call is slow when it takes more than THRESHOLD x the run's p50 (1.10: the calls that push
p99/p50 past issue 9's bar once they are more than 1 % of the run). Slow calls less than
GAP (20) calls apart belong to one group; a group spanning at least PHASE (50) calls is a
*phase*, the rest are *isolated* slow calls. Printed: the share of slow calls, how many of them
fall in phases, the phases' count and lengths (in milliseconds, from the samples themselves),
the median call inside and outside the phases, and p50, p99 and p99/p50 of the calls outside
the phases. With a 2 x N file (`--floor`), the same for the fixed work timed after each call:
a phase that slows the floor's work too is the machine's, not the runtime's.

Plain Python (no NumPy): it runs under any python3.
"""
import argparse
import ast
import json
import math
import struct
import sys

GAP = 20      # slow calls at most this many calls apart belong to one group
PHASE = 50    # a group spanning at least this many calls is a phase


def readNpy(path):
    """A little-endian f64 .npy of shape (N,) or (2, N): (calls, floor or None)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        sys.exit(f"jitter_phases: cannot read '{path}': {e.strerror}")
    if data[:6] != b"\x93NUMPY":
        sys.exit(f"jitter_phases: '{path}' is not a .npy file")
    major = data[6]
    if major == 1:
        header_len = struct.unpack_from("<H", data, 8)[0]
        start = 10
    else:
        header_len = struct.unpack_from("<I", data, 8)[0]
        start = 12
    header = ast.literal_eval(data[start:start + header_len].decode("latin1"))
    if header.get("descr") != "<f8" or header.get("fortran_order"):
        sys.exit(f"jitter_phases: '{path}' holds {header.get('descr')}, expected the f64 "
                 "samples of `kiln bench --samples`")
    shape = tuple(header["shape"])
    count = math.prod(shape)
    if len(data) < start + header_len + 8 * count:
        sys.exit(f"jitter_phases: '{path}' is truncated: its header promises {count} samples")
    values = struct.unpack_from(f"<{count}d", data, start + header_len)
    if len(shape) == 1:
        return list(values), None
    if len(shape) == 2 and shape[0] == 2:
        n = shape[1]
        return list(values[:n]), list(values[n:])
    sys.exit(f"jitter_phases: '{path}' has shape {shape}, expected (N,) or (2, N)")


def percentile(values, percent):
    """Nearest rank, as `kiln bench` computes its percentiles."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = min(max(math.ceil(percent / 100 * len(ordered)), 1), len(ordered))
    return ordered[rank - 1]


def findPhases(calls, threshold):
    """(slow call indices, [(first, last)] of the phases)."""
    p50 = percentile(calls, 50)
    slow = [i for i, c in enumerate(calls) if c > threshold * p50]
    phases = []
    if slow:
        first = prev = slow[0]
        for i in slow[1:] + [None]:
            if i is None or i - prev > GAP:
                if prev - first + 1 >= PHASE:
                    phases.append((first, prev))
                if i is not None:
                    first = i
            if i is not None:
                prev = i
    return slow, phases


def analyse(calls, floor, threshold):
    p50 = percentile(calls, 50)
    slow, phases = findPhases(calls, threshold)
    inPhase = [False] * len(calls)
    for first, last in phases:
        for i in range(first, last + 1):
            inPhase[i] = True
    slowInPhases = sum(1 for i in slow if inPhase[i])
    # Time per call, the floor's work included: the phases' lengths in wall time.
    step = [c + (floor[i] if floor else 0.0) for i, c in enumerate(calls)]
    lengths_ms = sorted(sum(step[first:last + 1]) / 1000 for first, last in phases)
    inside = [c for c, p in zip(calls, inPhase) if p]
    outside = [c for c, p in zip(calls, inPhase) if not p]
    result = {
        "calls": len(calls), "p50_us": p50, "p99_us": percentile(calls, 99),
        "jitter": percentile(calls, 99) / p50, "threshold": threshold,
        "slow_calls": len(slow), "slow_share": len(slow) / len(calls),
        "slow_in_phases": slowInPhases, "phases": len(phases),
        "phase_share": len(inside) / len(calls),
        "run_ms": sum(step) / 1000,
        "phase_ms_median": percentile(lengths_ms, 50),
        "phase_ms_max": lengths_ms[-1] if lengths_ms else None,
        "phase_ms_total": sum(lengths_ms),
        "median_in_phases_us": percentile(inside, 50),
        "median_outside_us": percentile(outside, 50),
        "outside_p99_us": percentile(outside, 99),
        "outside_jitter": percentile(outside, 99) / percentile(outside, 50) if outside else None,
    }
    if floor:
        floorInside = [f for f, p in zip(floor, inPhase) if p]
        floorOutside = [f for f, p in zip(floor, inPhase) if not p]
        result.update({
            "floor_jitter": percentile(floor, 99) / percentile(floor, 50),
            "floor_median_in_phases_us": percentile(floorInside, 50),
            "floor_median_outside_us": percentile(floorOutside, 50),
        })
    return result


def ratio(a, b):
    return f"x{a / b:.2f}" if a is not None and b else "-"


def text(r):
    lines = [
        f"{r['calls']} calls in {r['run_ms']:.0f} ms: p50 {r['p50_us']:.3f} us, "
        f"p99 {r['p99_us']:.3f} us, p99/p50 {r['jitter']:.2f}",
        f"slow calls (> {r['threshold']:.2f} x p50): {r['slow_calls']} "
        f"({100 * r['slow_share']:.2f} %), {r['slow_in_phases']} of them in "
        f"{r['phases']} phase(s) of at least {PHASE} calls",
    ]
    if r["phases"]:
        lines.append(
            f"phases: {100 * r['phase_share']:.2f} % of the calls, {r['phase_ms_total']:.1f} ms "
            f"in all, median {r['phase_ms_median']:.2f} ms, longest {r['phase_ms_max']:.2f} ms; "
            f"median call in them {r['median_in_phases_us']:.3f} us against "
            f"{r['median_outside_us']:.3f} us outside "
            f"({ratio(r['median_in_phases_us'], r['median_outside_us'])})")
        if "floor_median_in_phases_us" in r:
            lines.append(
                f"the floor's fixed work in the same phases: {r['floor_median_in_phases_us']:.3f} "
                f"us against {r['floor_median_outside_us']:.3f} us outside "
                f"({ratio(r['floor_median_in_phases_us'], r['floor_median_outside_us'])})")
    if r["outside_jitter"] is not None:
        lines.append(f"outside the phases: p99 {r['outside_p99_us']:.3f} us, "
                     f"p99/p50 {r['outside_jitter']:.2f}")
    if "floor_jitter" in r:
        lines.append(f"floor p99/p50 (all calls): {r['floor_jitter']:.2f}")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("samples", help="the .npy written by `kiln bench --samples=FILE.npy`")
    parser.add_argument("--threshold", type=float, default=1.10,
                        help="a call slower than this times p50 is slow (default 1.10)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.threshold > 1.0:
        sys.exit(f"jitter_phases: --threshold {args.threshold}: expected a number above 1")
    calls, floor = readNpy(args.samples)
    if len(calls) < 2 * PHASE:
        sys.exit(f"jitter_phases: '{args.samples}' has {len(calls)} calls; "
                 f"at least {2 * PHASE} are needed")
    r = analyse(calls, floor, args.threshold)
    print(json.dumps(r) if args.json else text(r))


if __name__ == "__main__":
    main()
