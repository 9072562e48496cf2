#!/usr/bin/python3
"""An artifact compiled for two threads (`kiln compile --threads=2`) on a real model: two compiles
give the same bytes and it gives the reference output at 1 and 2 threads. With --row-groups (a
model with Winograd convolutions: one run of rows per thread, row groups between them, bytes
reused only within a layout) `--verbose` reports its split dispatches and row-group tensors, its
outputs are bit for bit the default artifact's (`kiln compare --tolerance=0,0`: the same
arithmetic, only the bytes' places differ) and its arena at least as large (fewer tensors share
bytes). With --fewer-dispatches (MobileNet blocks: expand and depthwise convolutions fused from
smaller expanded tensors on for two threads) it has fewer dispatches than the default artifact
and agrees with it within the default tolerance.

  threads_artifact_check.py --kiln K --work DIR --model M.onnx --input I.npy --output O.npy
                            (--row-groups | --fewer-dispatches)
"""
import json
import os
import re
import sys

from kiln_cli import model_case_args, run


def arena_bytes(kiln, artifact):
    return json.loads(run([kiln, "dump", "--json", artifact]))["arena_bytes"]


def dispatches(kiln, artifact):
    functions = json.loads(run([kiln, "dump", "--json", artifact]))["functions"]
    return sum(f["dispatch_count"] for f in functions)


def expand_depthwise_workgroups(kiln, artifact):
    """The workgroup counts of the dispatches that run an expand and a depthwise convolution
    (two Conv ops in one dispatch)."""
    listed = json.loads(run([kiln, "dump", "--json", artifact]))["dispatches"]
    return [d["workgroups"] for d in listed if d["node"].count("(Conv)") == 2]


def main():
    args = model_case_args(("--row-groups", "--fewer-dispatches"))
    if args.row_groups == args.fewer_dispatches:
        sys.exit("give one of --row-groups and --fewer-dispatches")
    default = os.path.join(args.work, "default.kiln")
    two = os.path.join(args.work, "threads2.kiln")
    run([args.kiln, "compile", args.model, "-o", default])
    said = run([args.kiln, "compile", args.model, "-o", two, "--threads=2", "--verbose"])
    split = re.search(r"for 2 threads: (\d+) dispatches split into one run of rows per thread, "
                      r"(\d+) tensors in row groups, (\d+) dispatches of an expand and a "
                      r"depthwise convolution", said)
    if not split:
        sys.exit(f"--threads=2 --verbose should say what it did for the threads:\n{said}")
    if args.row_groups and (int(split.group(1)) == 0 or int(split.group(2)) == 0):
        sys.exit(f"--threads=2 --verbose should report split dispatches and row groups:\n{said}")
    again = os.path.join(args.work, "threads2_again.kiln")
    run([args.kiln, "compile", args.model, "-o", again, "--threads=2"])
    with open(two, "rb") as a, open(again, "rb") as b:
        if a.read() != b.read():
            sys.exit("two compiles with --threads=2 gave different bytes")
    for threads in ("1", "2"):
        run([args.kiln, "run", two, f"--input=@{args.input}", f"--threads={threads}",
             f"--expected_output=@{args.output}", "--tolerance=1e-3,1e-4"])
    tolerance = ["--tolerance=0,0"] if args.row_groups else []
    compared = json.loads(run([args.kiln, "compare", default, two, f"--input=@{args.input}",
                               "--threads=2", "--seconds=0.2", "--block-ms=20", "--json"] +
                              tolerance))
    if not compared["outputs_agree"]:
        sys.exit(f"the two artifacts' outputs differ: {compared.get('outputs_differ')}")
    summary = (f"same outputs as the default artifact{' bit for bit' if args.row_groups else ''}; "
               f"2 threads B/A {compared['ratio_p50']:.3f} over {compared['pairs']} pairs")
    if args.row_groups:
        a, b = arena_bytes(args.kiln, default), arena_bytes(args.kiln, two)
        if b < a:
            sys.exit(f"the 2-thread artifact's arena ({b} bytes) is smaller than the default's "
                     f"({a})")
        print(f"--threads=2: {split.group(1)} split dispatches, {split.group(2)} row-group "
              f"tensors; arena {a} -> {b} bytes; {summary}")
    else:
        a, b = dispatches(args.kiln, default), dispatches(args.kiln, two)
        if b >= a or int(split.group(3)) == 0:
            sys.exit(f"the 2-thread artifact should fuse more expand and depthwise "
                     f"convolutions and have fewer dispatches than the default's ({b} against "
                     f"{a}):\n{said}")
        counts = expand_depthwise_workgroups(args.kiln, two)
        if len(counts) != int(split.group(3)) or max(counts) > 2:
            sys.exit(f"each fused expand + depthwise dispatch should have at most one "
                     f"workgroup per thread: {counts}")
        print(f"--threads=2: {a} -> {b} dispatches, {split.group(3)} of an expand and a "
              f"depthwise convolution; {summary}")


if __name__ == "__main__":
    main()
