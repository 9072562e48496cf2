#!/usr/bin/python3
"""TFLite checks through the command line, on models that are not in the shared test data:
  --json M.json         a model written as JSON, turned into .tflite by flatc with kiln's
                        schema subset (compiler/import/tflite/schema/tflite_subset.fbs)
  --truncate M.tflite   the first half of a real model (a truncated download)
  --mutate M.tflite     --count seeded random byte mutations of a real model, each compiled:
                        every one must compile or be refused with a one-line error (exit
                        status 0 or 1), never crash
then either
  --expect-error TEXT   `kiln compile` must fail with exit status 1 and a one-line error that
                        contains TEXT (never a crash), or
  --input T --expected T  the compiled model run by `kiln run` must give the expected output
                        (hand-computed values, `kiln run --expected_output` syntax).
"""
import argparse
import os
import subprocess
import sys


def run(command):
    print("$ " + " ".join(command), flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    print(result.stdout + result.stderr, end="")
    return result


def mutate(args):
    import random
    with open(args.mutate, "rb") as f:
        data = f.read()
    rng = random.Random(11)
    outcomes = {0: 0, 1: 0}
    for i in range(args.count):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 6)):
            # Mostly the tables and vectors at the start and the end of the file.
            if rng.random() < 0.3:
                at = rng.randrange(len(mutated))
            elif rng.random() < 0.5:
                at = rng.randrange(2048)
            else:
                at = len(mutated) - 1 - rng.randrange(4096)
            mutated[at] = rng.randrange(256)
        model = os.path.join(args.work, f"mutant{i}.tflite")
        with open(model, "wb") as f:
            f.write(mutated)
        result = run([args.kiln, "compile", model, "-o", os.path.join(args.work, "mutant.kiln")])
        lines = result.stderr.strip().splitlines()
        if result.returncode not in outcomes or (result.returncode == 1 and len(lines) != 1):
            print(f"FAIL: mutant {i}: exit status {result.returncode}")
            return 1
        outcomes[result.returncode] += 1
    print(f"pass: {outcomes[0]} compiled, {outcomes[1]} refused with one line")
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--flatc", default="flatc")
    parser.add_argument("--schema")
    parser.add_argument("--work", required=True)
    parser.add_argument("--json")
    parser.add_argument("--truncate")
    parser.add_argument("--mutate")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--expect-error")
    parser.add_argument("--input", action="append", default=[])
    parser.add_argument("--expected", action="append", default=[])
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    if args.mutate:
        return mutate(args)
    if args.json:
        if run([args.flatc, "-b", "-o", args.work, args.schema, args.json]).returncode != 0:
            print("FAIL: flatc could not build the model")
            return 1
        model = os.path.join(args.work, os.path.splitext(os.path.basename(args.json))[0] + ".tflite")
    else:
        with open(args.truncate, "rb") as f:
            data = f.read()
        model = os.path.join(args.work, "truncated.tflite")
        with open(model, "wb") as f:
            f.write(data[:len(data) // 2])

    artifact = os.path.join(args.work, "model.kiln")
    compiled = run([args.kiln, "compile", model, "-o", artifact])
    if args.expect_error:
        lines = compiled.stderr.strip().splitlines()
        if compiled.returncode != 1 or len(lines) != 1 or args.expect_error not in lines[0]:
            print(f"FAIL: expected exit 1 and one line containing '{args.expect_error}'")
            return 1
        print("pass")
        return 0
    if compiled.returncode != 0:
        print("FAIL: kiln compile")
        return 1
    command = [args.kiln, "run", artifact] + [f"--input={t}" for t in args.input]
    command += [f"--expected_output={t}" for t in args.expected]
    return 0 if run(command).returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
