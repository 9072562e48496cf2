#!/usr/bin/python3
"""Fusion on a real model: `kiln compile` it with default fusion and with --fusion=none, run both
on the same input and require every output to agree within --tolerance (default 1e-5,
absolute and relative); report both dispatch counts and arena sizes (`kiln dump --json`).
With --max-dispatches N the fused artifact must have at most N dispatches (a budget: it
fails when fusion regresses past the bar).

  fusion_check.py --kiln K --work DIR --model M.onnx --input I.npy [--max-dispatches N]
                  [--tolerance R,A] [--bench]

--bench also times both artifacts with `kiln bench` (p50, 1 thread) and prints the figures; it
is for the documentation, never part of a test.
"""
import argparse
import json
import os
import subprocess
import sys


def run(command):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        print("$ " + " ".join(command), file=sys.stderr)
        print(result.stdout + result.stderr, file=sys.stderr)
        sys.exit(f"fusion_check: '{os.path.basename(command[0])} {command[1]}' failed "
                 f"({result.returncode})")
    return result.stdout


def compile_and_run(args, mode):
    artifact = os.path.join(args.work, f"{mode}.kiln")
    output = os.path.join(args.work, f"{mode}_output.npy")
    run([args.kiln, "compile", args.model, "-o", artifact, f"--fusion={mode}"])
    run([args.kiln, "run", artifact, f"--input=@{args.input}", f"--output=@{output}"])
    dump = json.loads(run([args.kiln, "dump", "--json", artifact]))
    dispatches = dump["dispatches"]  # the list of dispatches (older dumps: the count)
    figures = {"dispatches": len(dispatches) if isinstance(dispatches, list) else dispatches,
               "arena": dump["arena_bytes"]}
    if args.bench:
        bench = json.loads(run([args.kiln, "bench", artifact, f"--input=@{args.input}",
                                "--seconds=2", "--json"]))
        figures["p50_us"] = bench["p50_us"]
    return artifact, output, figures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--input", required=True)
    parser.add_argument("--max-dispatches", type=int)
    parser.add_argument("--tolerance", default="1e-5,1e-5")
    parser.add_argument("--bench", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    _, fused_out, fused = compile_and_run(args, "elementwise")
    _, plain_out, plain = compile_and_run(args, "none")
    name = os.path.basename(os.path.dirname(os.path.abspath(args.model)))
    print(f"{name}: dispatches {plain['dispatches']} -> {fused['dispatches']}, "
          f"arena {plain['arena']} -> {fused['arena']} bytes" +
          (f", p50 {plain['p50_us']:.1f} -> {fused['p50_us']:.1f} us" if args.bench else ""))

    # The unfused outputs are the expected values of the fused artifact's run.
    fused_artifact = os.path.join(args.work, "elementwise.kiln")
    result = subprocess.run([args.kiln, "run", fused_artifact, f"--input=@{args.input}",
                             f"--expected_output=@{plain_out}", f"--tolerance={args.tolerance}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        print(result.stdout + result.stderr, file=sys.stderr)
        sys.exit(f"fusion_check: {name}: fused and unfused outputs differ beyond "
                 f"{args.tolerance}")
    if args.max_dispatches is not None and fused["dispatches"] > args.max_dispatches:
        sys.exit(f"fusion_check: {name}: {fused['dispatches']} dispatches, over the bar of "
                 f"{args.max_dispatches}")
    print("ok")


if __name__ == "__main__":
    main()
