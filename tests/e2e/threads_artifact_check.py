#!/usr/bin/python3
"""An artifact compiled for two threads (`kiln compile --threads=2`: row groups for the
activations that Winograd convolutions split by rows, bytes reused only within a layout) on a
real model:
it gives the reference output at 1 and 2 threads, the same outputs bit for bit as the
default artifact (`kiln compare --tolerance=0,0`: the same arithmetic, only the bytes' places
differ), and an arena at least as large as the default's (fewer tensors may share bytes).

  threads_artifact_check.py --kiln K --work DIR --model M.onnx --input I.npy --output O.npy
"""
import json
import os
import sys

from kiln_cli import model_case_args, run


def arena_bytes(kiln, artifact):
    return json.loads(run([kiln, "dump", "--json", artifact]))["arena_bytes"]


def main():
    args = model_case_args()
    default = os.path.join(args.work, "default.kiln")
    two = os.path.join(args.work, "threads2.kiln")
    run([args.kiln, "compile", args.model, "-o", default])
    run([args.kiln, "compile", args.model, "-o", two, "--threads=2"])
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
    print(f"--threads=2: same outputs as the default artifact; arena {a} -> {b} bytes; "
          f"2 threads B/A {compared['ratio_p50']:.3f} over {compared['pairs']} pairs")


if __name__ == "__main__":
    main()
