#!/usr/bin/python3
"""Cross-target end-to-end test: `kiln compile --target=T` on this machine, then run the
artifact under qemu-user with kiln_raw_run (the runtime cross-built for T, tests/e2e/cross),
and compare its outputs with the reference .npy files (|got - want| <= atol + rtol * |want|).

    run_cross.py --kiln K --runner R --qemu Q --target aarch64 --work DIR --tolerance R,A
                 --model M.onnx --input I.npy... --expected O.npy...
"""
import argparse
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
    for flag in ("--kiln", "--runner", "--qemu", "--target", "--work", "--tolerance", "--model"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--input", action="append", default=[])
    parser.add_argument("--expected", action="append", default=[])
    args = parser.parse_args()
    rtol, atol = (float(x) for x in args.tolerance.split(","))
    os.makedirs(args.work, exist_ok=True)

    artifact = os.path.join(args.work, f"model.{args.target}.kiln")
    run([args.kiln, "compile", args.model, f"--target={args.target}", "-o", artifact])

    raw_inputs = []
    for i, path in enumerate(args.input):
        raw = os.path.join(args.work, f"input_{i}.bin")
        np.ascontiguousarray(np.load(path)).tofile(raw)
        raw_inputs.append(raw)
    raw_outputs = [os.path.join(args.work, f"output_{i}.{args.target}.bin")
                   for i in range(len(args.expected))]
    run([args.qemu, args.runner, artifact] + raw_inputs + raw_outputs)

    failed = False
    for raw, path in zip(raw_outputs, args.expected):
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
