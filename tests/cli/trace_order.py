#!/usr/bin/python3
"""`kiln run --trace` executes exactly the schedule that `kiln dump` shows.

Compiles a model, reads the dispatch order and stages from `kiln dump --json`, runs the model
with `--trace` inline and on a 2-thread pool, and checks:
  - inline, the traced dispatches are exactly the dump's dispatches in the dump's order;
  - on the pool, every dispatch runs once and no dispatch runs before one of an earlier stage;
  - with --min-stage-width W, some stage of the dump holds at least W dispatches (the
    independent branches of the model were grouped into one stage);
  - with --no-dispatch-of KIND, no dispatch has root op KIND (e.g. Concat: written in place).
Usage: trace_order.py --kiln K --work DIR --model M.onnx --input I.npy [--min-stage-width W]
                      [--no-dispatch-of KIND]...
"""
import argparse
import json
import os
import re
import subprocess
import sys

TRACE = re.compile(r"^trace: dispatch\s+(\d+)\s+kernel\s+(\d+)\s+([0-9.]+) us")


def run(command):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(command)}\n{result.stderr}")
    return result


def traced(kiln, artifact, inputs, threads):
    command = [kiln, "run", artifact, "--trace", "--output=@" + artifact + ".out.npy"]
    command += ["--input=@" + i for i in inputs]
    if threads:
        command.append(f"--threads={threads}")
    order = []
    for line in run(command).stderr.splitlines():
        match = TRACE.match(line)
        if match:
            order.append(int(match.group(1)))
    return order


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--input", action="append", default=[])
    parser.add_argument("--min-stage-width", type=int, default=1)
    parser.add_argument("--no-dispatch-of", action="append", default=[])
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    artifact = os.path.join(args.work, "model.kiln")
    run([args.kiln, "compile", args.model, "-o", artifact])
    dump = json.loads(run([args.kiln, "dump", artifact, "--json"]).stdout)
    dispatches = [d for d in dump["dispatches"] if d["function"] == "main"]
    order = [d["index"] for d in dispatches]
    stage = {d["index"]: d["stage"] for d in dispatches}
    stages = [d["stage"] for d in dispatches]
    failures = []
    if stages != sorted(stages):
        failures.append(f"the dump's dispatches are not in stage order: {stages}")
    widest = max(stages.count(s) for s in set(stages)) if stages else 0
    print(f"{len(order)} dispatches in {len(set(stages))} stages, widest stage {widest}")
    if widest < args.min_stage_width:
        failures.append(f"no stage holds {args.min_stage_width} dispatches (widest: {widest})")

    for kind in args.no_dispatch_of:
        found = [d.get("name", "") for d in dispatches if d.get("name", "").split("+")[0] == kind]
        if found:
            failures.append(f"{len(found)} dispatches of {kind} remain")

    inline = traced(args.kiln, artifact, args.input, 0)
    if inline != order:
        failures.append(f"inline trace order {inline} differs from the dump's order {order}")
    pool = traced(args.kiln, artifact, args.input, 2)
    if sorted(pool) != sorted(order):
        failures.append(f"pool trace {pool} does not run every dispatch once")
    pool_stages = [stage.get(i, -1) for i in pool]
    if pool_stages != sorted(pool_stages):
        failures.append(f"pool trace runs out of stage order: stages {pool_stages}")
    for failure in failures:
        print("FAIL: " + failure, file=sys.stderr)
    if not failures:
        print("trace order matches the dump (inline) and respects the stages (pool)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
