#!/usr/bin/python3
"""Cross-target end-to-end test: `kiln compile --target=T` on this machine, then run the
artifact under qemu-user with kiln_raw_run (the runtime cross-built for T, tests/e2e/cross),
and compare its outputs with the reference .npy files (|got - want| <= atol + rtol * |want|).

    run_cross.py --kiln K --runner R --qemu Q --target aarch64 --work DIR --tolerance R,A
                 --model M.onnx --input I.npy... --expected O.npy...
    run_cross.py --kiln K --runner R --qemu Q --target aarch64 --work DIR --tolerance R,A
                 --case case.json

A case.json (an exported model's, tests/e2e/run_case.py) gives the model, its inputs, its
outputs, its compile flags and its own tolerance, which wins over --tolerance.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np


def run(command):
    print("$ " + " ".join(command), flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(result.stdout, end="")
    if result.returncode != 0:
        sys.exit(f"FAILED (exit code {result.returncode}): {command[0]}")


def main():
    parser = argparse.ArgumentParser()
    for flag in ("--kiln", "--runner", "--qemu", "--target", "--work", "--tolerance"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--model")
    parser.add_argument("--case", help="an exported model's case.json (instead of --model...)")
    parser.add_argument("--input", action="append", default=[])
    parser.add_argument("--expected", action="append", default=[])
    args = parser.parse_args()
    model, inputs, expected, tolerance, flags = (args.model, args.input, args.expected,
                                                 args.tolerance, [])
    if args.case:
        with open(args.case) as f:
            case = json.load(f)
        model, inputs, expected = case["model"], case["inputs"], case["outputs"]
        tolerance = case.get("tolerance", tolerance)
        flags = case.get("compile_flags", [])
    if not model:
        parser.error("--model or --case is required")
    rtol, atol = (float(x) for x in tolerance.split(","))
    os.makedirs(args.work, exist_ok=True)

    artifact = os.path.join(args.work, f"model.{args.target}.kiln")
    run([args.kiln, "compile", model, f"--target={args.target}", "-o", artifact] + flags)

    raw_inputs = []
    for i, path in enumerate(inputs):
        raw = os.path.join(args.work, f"input_{i}.bin")
        np.ascontiguousarray(np.load(path)).tofile(raw)
        raw_inputs.append(raw)
    raw_outputs = [os.path.join(args.work, f"output_{i}.{args.target}.bin")
                   for i in range(len(expected))]
    run([args.qemu, args.runner, artifact] + raw_inputs + raw_outputs)

    failed = False
    for raw, path in zip(raw_outputs, expected):
        want = np.load(path)
        got = np.fromfile(raw, dtype=want.dtype)
        if got.size != want.size:
            print(f"{raw}: {got.size} elements, expected {want.size} ({path})")
            failed = True
            continue
        got = got.reshape(want.shape)
        excess = np.abs(got.astype(np.float64) - want) - (atol + rtol * np.abs(want))
        worst = np.unravel_index(int(np.argmax(excess)), want.shape)
        status = "mismatch" if excess[worst] > 0 else "ok"
        failed |= excess[worst] > 0
        print(f"output {os.path.basename(path)}: {status}; max |got - want| = "
              f"{float(np.abs(got - want).max()):.3g}; worst at {list(worst)}: "
              f"{got[worst]!r} vs {want[worst]!r}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
