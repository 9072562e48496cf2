#!/usr/bin/python3
"""One TFLite end-to-end test on another architecture: `kiln compile --target=T` a .tflite
model (with --debug-outputs when the seed has per-operator references), run the artifact under
qemu-user with kiln_raw_run (the runtime cross-built for T, tests/e2e/cross) on the reference
inputs of one seed, and compare the model's outputs and every per-operator tensor with
../shared/testdata/tflite/refs/MODEL/seedS the way tflite_case.py does (integers bit exact).
Used for the int8 dot-product kernels on AArch64 (--target=aarch64-dotprod, qemu -cpu max).

    tflite_cross_case.py --kiln K --runner R --qemu Q [--qemu-arg=-cpu --qemu-arg=max]
                         --target T --work DIR --model M.tflite --refs refs/MODEL/seedS
"""
import argparse
import json
import os
import subprocess
import sys

from tflite_case import SKIPPED, compare, lastLine, readNpy, run


def writeNpy(path, descr, shape, data):
    """A version-1 .npy file holding `data` (raw little-endian bytes) as descr[shape]."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, repr(tuple(shape)))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode("latin1"))
        f.write(data)


def main():
    parser = argparse.ArgumentParser()
    for flag in ("--kiln", "--runner", "--qemu", "--target", "--work", "--model", "--refs"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--qemu-arg", action="append", default=[])
    parser.add_argument("--lsb", type=int, default=0, help="integer tolerance in units")
    parser.add_argument("--rtol", type=float, default=1e-5, help="float tolerance")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    with open(os.path.join(args.refs, "run.json")) as f:
        info = json.load(f)
    if info.get("status") != "ok":
        print("skipped: TFLite Micro could not run this model, no reference outputs")
        return SKIPPED

    # Expected tensors: the model's outputs, then (--debug-outputs order) every other
    # operator output in operator order.
    expected = [(os.path.join(args.refs, o["file"]), f"output '{o['name']}'") for o in info["outputs"]]
    per_op = os.path.join(args.refs, "per_op", "tensors.json")
    extra = []
    if os.path.exists(per_op):
        with open(per_op) as f:
            tensors = json.load(f)
        seen = {o["tensor_index"] for o in info["outputs"]}
        for t in tensors:
            if t["tensor_index"] in seen or seen.add(t["tensor_index"]):
                continue
            expected.append((os.path.join(args.refs, "per_op", t["file"]),
                             f"operator #{t['op_index']} ({t['op']}) '{t['name'][:60]}'"))
        extra = ["--debug-outputs"]

    artifact = os.path.join(args.work, f"model.{args.target}.kiln")
    compiled = run([args.kiln, "compile", args.model, f"--target={args.target}", "-o", artifact] + extra)
    if compiled.returncode != 0:
        print("FAIL: kiln compile: " + lastLine(compiled))
        return 1

    raw_inputs = []
    for i, item in enumerate(info["inputs"]):
        _, _, values = readNpy(os.path.join(args.refs, item["file"]))
        raw = os.path.join(args.work, f"input_{i}.bin")
        with open(raw, "wb") as f:
            f.write(values.tobytes())
        raw_inputs.append(raw)
    raw_outputs = [os.path.join(args.work, f"output_{i}.bin") for i in range(len(expected))]
    ran = run([args.qemu] + args.qemu_arg + [args.runner, artifact] + raw_inputs + raw_outputs)
    if ran.returncode != 0:
        print("FAIL: kiln_raw_run: " + lastLine(ran))
        return 1

    failures = []
    for raw, (want, what) in zip(raw_outputs, expected):
        descr, shape, values = readNpy(want)
        with open(raw, "rb") as f:
            data = f.read()
        if len(data) != len(values) * values.itemsize:
            failures.append(f"{what}: {len(data)} bytes, expected {len(values) * values.itemsize}")
            continue
        got = raw[:-len(".bin")] + ".npy"
        writeNpy(got, descr, shape, data)
        reason = compare(got, want, args.lsb, args.rtol)
        if reason:
            failures.append(f"{what}: {reason}")
    for failure in failures:
        print("FAIL: " + failure)
    if failures:
        return 1
    print(f"pass on {args.target}: {len(info['outputs'])} output(s), "
          f"{len(expected) - len(info['outputs'])} per-operator tensors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
