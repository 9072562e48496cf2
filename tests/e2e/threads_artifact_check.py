#!/usr/bin/python3
"""An artifact compiled for two threads (`kiln compile --threads=2`: one run of rows per thread in
the Winograd convolutions, row groups between them, bytes reused only within a layout) on a real
model: `--verbose` reports its split dispatches and row-group tensors, two compiles give the
same bytes, it gives the reference output at 1 and 2 threads, the same outputs bit for bit as
the default artifact (`kiln compare --tolerance=0,0`: the same arithmetic, only the bytes'
places differ), and an arena at least as large as the default's (fewer tensors share bytes).

  threads_artifact_check.py --kiln K --work DIR --model M.onnx --input I.npy --output O.npy
"""
import json
import os
import re
import sys

from kiln_cli import model_case_args, run


def arena_bytes(kiln, artifact):
    return json.loads(run([kiln, "dump", "--json", artifact]))["arena_bytes"]


def main():
    args = model_case_args()
    default = os.path.join(args.work, "default.kiln")
    two = os.path.join(args.work, "threads2.kiln")
    run([args.kiln, "compile", args.model, "-o", default])
    said = run([args.kiln, "compile", args.model, "-o", two, "--threads=2", "--verbose"])
    split = re.search(r"for 2 threads: (\d+) dispatches split into one run of rows per thread, "
                      r"(\d+) tensors in row groups", said)
    if not split or int(split.group(1)) == 0 or int(split.group(2)) == 0:
        sys.exit(f"--threads=2 --verbose should report split dispatches and row groups:\n{said}")
    again = os.path.join(args.work, "threads2_again.kiln")
    run([args.kiln, "compile", args.model, "-o", again, "--threads=2"])
    with open(two, "rb") as a, open(again, "rb") as b:
        if a.read() != b.read():
            sys.exit("two compiles with --threads=2 gave different bytes")
    for threads in ("1", "2"):
        run([args.kiln, "run", two, f"--input=@{args.input}", f"--threads={threads}",
             f"--expected_output=@{args.output}", "--tolerance=1e-3,1e-4"])
    compared = json.loads(run([args.kiln, "compare", default, two, f"--input=@{args.input}",
                               "--threads=2", "--seconds=0.2", "--block-ms=20",
                               "--tolerance=0,0", "--json"]))
    if not compared["outputs_agree"]:
        sys.exit(f"the two artifacts' outputs differ: {compared.get('outputs_differ')}")
    a, b = arena_bytes(args.kiln, default), arena_bytes(args.kiln, two)
    if b < a:
        sys.exit(f"the 2-thread artifact's arena ({b} bytes) is smaller than the default's ({a})")
    print(f"--threads=2: {split.group(1)} split dispatches, {split.group(2)} row-group tensors; "
          f"same outputs as the default artifact; arena {a} -> {b} bytes; "
          f"2 threads B/A {compared['ratio_p50']:.3f} over {compared['pairs']} pairs")


if __name__ == "__main__":
    main()
