#!/usr/bin/python3
"""One TFLite end-to-end test: `kiln compile` a .tflite model, `kiln run` it on the reference
inputs of one seed (../shared/testdata/tflite/refs/MODEL/seedS: input_K.npy, output_K.npy,
run.json) and compare every output:
  - integers: bit exact (--lsb 1 allows one unit, for the models where TFLM's reference
    kernels and TF Lite themselves differ by 1 LSB: sub0, sub1, sub3);
  - floats: |got - want| <= rtol * (|want| + max|want|) with rtol 1e-5: relative to the
    element and to the tensor's largest magnitude, so that an output that is a small difference
    of large sums (the autoencoders) is judged on the scale of its terms.
When the seed has per-operator references (per_op/tensors.json), the model is compiled again
with --debug-outputs and every operator's output is compared the same way: saturated final
outputs (mostly -128/127) then still prove the layers underneath.

A model TFLM itself could not run (run.json status "error": the hybrid models) or that kiln
refuses with a clear "unsupported"/"not supported" message exits 77, which CTest reports as
skipped, with the reason printed, as does an artifact for CPU features this machine lacks
(--compile-flag: a target other than the host's); anything else that is not a match fails.
"""
import argparse
import array
import ast
import json
import os
import subprocess
import sys

SKIPPED = 77
TYPECODES = {"<f4": "f", "<i1": "b", "|i1": "b", "<u1": "B", "|u1": "B", "<i2": "h",
             "<i4": "i", "<i8": "q", "<f8": "d"}


def readNpy(path):
    """(descr, shape, values) of a little-endian, C-order .npy file (versions 1-3)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError(f"{path}: not a .npy file")
    major = data[6]
    if major == 1:
        length, start = int.from_bytes(data[8:10], "little"), 10
    else:
        length, start = int.from_bytes(data[8:12], "little"), 12
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    if header.get("fortran_order"):
        raise ValueError(f"{path}: Fortran order is not supported")
    descr = header["descr"]
    values = array.array(TYPECODES[descr])
    values.frombytes(data[start + length:])
    if sys.byteorder != "little":
        values.byteswap()
    return descr, tuple(header["shape"]), values


def compare(got_path, want_path, lsb, rtol):
    """None if the tensors match, else a one-line reason."""
    gd, gs, got = readNpy(got_path)
    wd, ws, want = readNpy(want_path)
    if gs != ws or TYPECODES[gd] != TYPECODES[wd]:
        return f"shape/type {gs} {gd}, expected {ws} {wd}"
    if TYPECODES[wd] in "fd":
        scale = max((abs(w) for w in want), default=0.0)
        bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, want))
               if not abs(g - w) <= rtol * (abs(w) + scale)]
        what = f"rtol {rtol} of the element and of max|want| {scale:.6g}"
    else:
        bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if abs(g - w) > lsb]
        what = "exact" if lsb == 0 else f"within {lsb} LSB"
    if not bad:
        return None
    i, g, w = max(bad, key=lambda b: abs(b[1] - b[2]))
    return f"{len(bad)} of {len(want)} elements differ ({what}); worst at flat index {i}: got {g}, expected {w}"


def run(command):
    print("$ " + " ".join(command), flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.stderr:
        print(result.stderr, end="" if result.stderr.endswith("\n") else "\n", file=sys.stderr)
    return result


def lastLine(result):
    lines = (result.stderr.strip() or result.stdout.strip()).splitlines()
    return lines[-1] if lines else f"exit code {result.returncode}"


def compileAndRun(kiln, model, artifact, inputs, outputs, extra=()):
    compiled = run([kiln, "compile", model, "-o", artifact, *extra])
    if compiled.returncode != 0:
        return compiled, None
    command = [kiln, "run", artifact] + [f"--input=@{p}" for p in inputs]
    command += [f"--output=@{p}" for p in outputs]
    return compiled, run(command)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--refs", required=True, help="refs/MODEL/seedS")
    parser.add_argument("--lsb", type=int, default=0, help="integer tolerance in units")
    parser.add_argument("--rtol", type=float, default=1e-5, help="float tolerance")
    parser.add_argument("--compile-flag", action="append", default=[],
                        help="passed to kiln compile (repeatable), e.g. --target=x86_64-v3")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    with open(os.path.join(args.refs, "run.json")) as f:
        info = json.load(f)
    if info.get("status") != "ok":
        print("skipped: TFLite Micro could not run this model, no reference outputs: "
              + " / ".join(info.get("log", [])))
        return SKIPPED

    inputs = [os.path.join(args.refs, i["file"]) for i in info["inputs"]]
    wanted = [os.path.join(args.refs, o["file"]) for o in info["outputs"]]
    got = [os.path.join(args.work, "got_" + o["file"]) for o in info["outputs"]]
    compiled, ran = compileAndRun(args.kiln, args.model, os.path.join(args.work, "model.kiln"),
                                  inputs, got, args.compile_flag)
    if compiled.returncode != 0:
        message = lastLine(compiled).replace("kiln: error: ", "")
        if compiled.returncode > 0 and ("unsupported" in message or "not supported" in message):
            print("skipped: " + message)
            return SKIPPED
        print("FAIL: kiln compile: " + message)
        return 1
    if ran.returncode != 0:
        if "CPU features this processor lacks" in lastLine(ran):
            print("skipped: " + lastLine(ran).replace("kiln: error: ", ""))
            return SKIPPED
        print("FAIL: kiln run: " + lastLine(ran))
        return 1
    failures = []
    for g, w, o in zip(got, wanted, info["outputs"]):
        reason = compare(g, w, args.lsb, args.rtol)
        if reason:
            failures.append(f"output '{o['name']}': {reason}")

    per_op = os.path.join(args.refs, "per_op", "tensors.json")
    layers = 0
    if os.path.exists(per_op):
        with open(per_op) as f:
            tensors = json.load(f)
        # --debug-outputs order: the model's outputs, then every other operator output in
        # operator order.
        seen = {o["tensor_index"] for o in info["outputs"]}
        debug = [t for t in tensors if not (t["tensor_index"] in seen or seen.add(t["tensor_index"]))]
        debug_got = [os.path.join(args.work, "layer_" + t["file"]) for t in debug]
        compiled, ran = compileAndRun(args.kiln, args.model,
                                      os.path.join(args.work, "debug.kiln"), inputs,
                                      got + debug_got, ["--debug-outputs", *args.compile_flag])
        if compiled.returncode != 0 or ran.returncode != 0:
            failures.append("--debug-outputs: " + lastLine(ran if ran else compiled))
        else:
            for t, g in zip(debug, debug_got):
                reason = compare(g, os.path.join(args.refs, "per_op", t["file"]), args.lsb,
                                 args.rtol)
                layers += 1
                if reason:
                    failures.append(f"operator #{t['op_index']} ({t['op']}) '{t['name'][:60]}': {reason}")
    for failure in failures:
        print("FAIL: " + failure)
    if failures:
        return 1
    print(f"pass: {len(got)} output(s)" + (f", {layers} per-operator tensors" if layers else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
