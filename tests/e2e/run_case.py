#!/usr/bin/python3
"""One end-to-end test: `kiln compile` a model, then `kiln run` it and compare every output
with its reference (`--expected_output`, `--tolerance`).

Two forms:
  run_case.py --kiln K --work DIR --tolerance R,A --model M.onnx --input I.npy...
              --expected O.npy... [--threads N]
  run_case.py --kiln K --work DIR --tolerance R,A --case case.json --allow-unsupported

With --allow-unsupported (the ONNX backend cases), a compile error is acceptable when it is a
clear refusal: it says what kiln does not support ("unsupported", "not supported", "does not
support", "only ... are supported", "needs static shapes") and names one of the model's
operators or the offending value type (string, sequence, an element type such as double).
Such a case exits with 77, which CTest reports as skipped (SKIP_RETURN_CODE); any other
failure (a crash, an unclear error, a wrong output) fails the test. The outcome goes to
DIR/result.txt for the summary (backend_summary.py).

A refusal that suggests `--fix-input=NAME=@VALUES.npy` (a shape operand that is a graph input)
is retried once the way a user who knows that input's value would compile the model: with
--fix-input=NAME=@ the case's own input file for NAME (case.json's "input_names"), and `kiln
run` without that input. A pass that way is recorded as "pass" with the flag as its detail.

With --expected-refusal OP (an exported model using an operator kiln lacks yet), only a clear
refusal naming OP is skipped; once kiln compiles the model it must match like any other.
A case.json may carry its own "tolerance" (the exported models' per-model bar), which wins over
--tolerance, and "compile_flags" for `kiln compile` (e.g. --input-shape).
"""
import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time

SKIPPED = 77
REFUSAL = re.compile(r"unsupported|not supported|does not support|supports .*only|"
                     r"only .* (is|are) supported|needs static shapes", re.IGNORECASE)


def run(command, what):
    print("$ " + " ".join(command), flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.stdout:
        print(result.stdout, end="" if result.stdout.endswith("\n") else "\n")
    if result.stderr:
        print(result.stderr, end="" if result.stderr.endswith("\n") else "\n", file=sys.stderr)
    if result.returncode < 0:
        print(f"{what}: killed by signal {-result.returncode}", file=sys.stderr)
    return result


def childCpuSeconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def clearRefusal(message, ops):
    """True when `message` refuses the model clearly: names an operator of it or a value type."""
    if not REFUSAL.search(message):
        return False
    if re.search(r"string tensor|sequence|\bmap\b|optional|sparse|element type \w+", message):
        return True
    return any(re.search(r"\b" + re.escape(op) + r"\b", message) for op in ops)


def fixInputRetry(compiled, case, inputs):
    """(flag, its .npy file, remaining inputs) when the compile error suggests --fix-input for
    an input whose values the case provides; else None."""
    if compiled.returncode <= 0 or not case:
        return None
    match = re.search(r"--fix-input=(.+?)=@VALUES\.npy", compiled.stderr)
    names = case.get("input_names", [])
    if not match or match.group(1) not in names or len(names) != len(inputs):
        return None
    index = names.index(match.group(1))
    return (f"--fix-input={match.group(1)}=@{inputs[index]}", inputs[index],
            inputs[:index] + inputs[index + 1:])


def finish(work, status, detail, code):
    with open(os.path.join(work, "result.txt"), "w") as f:
        f.write(f"{status}\t{detail}\n")
    print(f"{status}: {detail}" if detail else status)
    return code


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--work", required=True, help="folder for the artifact and result.txt")
    parser.add_argument("--tolerance", required=True, help="RTOL,ATOL for --tolerance")
    parser.add_argument("--model")
    parser.add_argument("--input", action="append", default=[])
    parser.add_argument("--expected", action="append", default=[])
    parser.add_argument("--case", help="case.json written by prepare_backend_data.py")
    parser.add_argument("--allow-unsupported", action="store_true")
    parser.add_argument("--expected-refusal", metavar="OP",
                        help="skip (77) when the compile refuses the model naming OP")
    parser.add_argument("--threads", type=int, default=1, help="for kiln run's thread pool")
    parser.add_argument("--compile-flag", action="append", default=[],
                        help="one more flag for kiln compile (repeatable)")
    parser.add_argument("--max-artifact-bytes", type=int,
                        help="a size budget: fail when the artifact is larger")
    parser.add_argument("--budget-target",
                        help="hold the artifact compiled for this target (kiln compile "
                        "--target) to --max-artifact-bytes, not the host's: the kernels' code "
                        "differs between, say, an AVX2 and an AVX-512 machine")
    args = parser.parse_args()

    ops, problems = [], []
    model, inputs, expected = args.model, args.input, args.expected
    tolerance, flags = args.tolerance, []
    if args.case:
        with open(args.case) as f:
            case = json.load(f)
        model, inputs, expected = case["model"], case["inputs"], case["outputs"]
        ops, problems = case["ops"], case["problems"]
        tolerance = case.get("tolerance", tolerance)
        flags = case.get("compile_flags", [])
    flags = flags + args.compile_flag
    if not model:
        parser.error("--model or --case is required")
    os.makedirs(args.work, exist_ok=True)

    artifact = os.path.join(args.work, "model.kiln")
    started, cpu_before = time.monotonic(), childCpuSeconds()
    compiled = run([args.kiln, "compile", model, "-o", artifact] + flags, "kiln compile")
    fixed_note = ""
    retry = fixInputRetry(compiled, case if args.case else None, inputs)
    if retry:
        fix_flag, fixed_file, inputs = retry
        fixed_note = "with " + fix_flag.replace(fixed_file, os.path.basename(fixed_file))
        compiled = run([args.kiln, "compile", model, "-o", artifact] + flags + [fix_flag],
                       "kiln compile")
    seconds, cpu = time.monotonic() - started, childCpuSeconds() - cpu_before
    # CPU time too: on a loaded machine it says more about the compiler than the wall clock.
    print(f"kiln compile: {seconds:.2f} s, {cpu:.2f} s CPU")
    with open(os.path.join(args.work, "compile_seconds.txt"), "w") as f:
        f.write(f"{seconds:.2f} {cpu:.2f}\n")
    if compiled.returncode != 0:
        message = compiled.stderr.strip().splitlines()[-1] if compiled.stderr.strip() else ""
        # The model's path could contain an operator's name: judge the message without it.
        message = message.replace("kiln: error: ", "").replace(model + ": ", "").replace(model, "")
        if (args.allow_unsupported and compiled.returncode > 0
                and clearRefusal(message, ops)):
            return finish(args.work, "unsupported", message, SKIPPED)
        if (args.expected_refusal and compiled.returncode > 0
                and clearRefusal(message, [args.expected_refusal])):
            return finish(args.work, "unsupported", "expected refusal: " + message, SKIPPED)
        reason = "crashed" if compiled.returncode < 0 else "unclear compile error"
        return finish(args.work, "fail", f"{reason}: {message}", 1)
    size = os.path.getsize(artifact)
    print(f"artifact: {size} bytes")
    budgeted, what = artifact, "the artifact"
    if args.max_artifact_bytes and args.budget_target:
        budgeted, what = os.path.join(args.work, "model.budget.kiln"), \
            f"the {args.budget_target} artifact"
        compiled = run([args.kiln, "compile", model, "-o", budgeted,
                        f"--target={args.budget_target}"] + flags, "kiln compile")
        if compiled.returncode != 0:
            return finish(args.work, "fail", f"{what} did not compile", 1)
        size = os.path.getsize(budgeted)
        print(f"{what}: {size} bytes")
    if args.max_artifact_bytes and size > args.max_artifact_bytes:
        return finish(args.work, "fail", f"{what} is {size} bytes, over its budget of "
                      f"{args.max_artifact_bytes}", 1)
    if problems:
        return finish(args.work, "fail", "compiled a model whose test data kiln cannot feed: "
                      + "; ".join(problems), 1)

    command = [args.kiln, "run", artifact, f"--tolerance={tolerance}"]
    if args.threads != 1:
        command.append(f"--threads={args.threads}")
    command += [f"--input=@{path}" for path in inputs]
    command += [f"--expected_output=@{path}" for path in expected]
    ran = run(command, "kiln run")
    if ran.returncode != 0:
        lines = (ran.stderr.strip() or ran.stdout.strip()).splitlines()
        return finish(args.work, "fail", "kiln run: " + (lines[-1] if lines else
                                                        f"exit code {ran.returncode}"), 1)
    return finish(args.work, "pass", fixed_note, 0)


if __name__ == "__main__":
    sys.exit(main())
