#!/usr/bin/python3
"""Summarises the ONNX backend cases after CTest ran them (the e2e_onnx fixture's cleanup):
how many passed, failed or were refused as unsupported, and which operators were refused.
Reads DIR/<suite>/<case>/result.txt written by run_case.py; writes DIR/summary.txt too.

    /usr/bin/python3 tests/e2e/backend_summary.py DIR
"""
import collections
import glob
import os
import re
import sys


def refusalKind(message):
    """What a refusal is about: an operator, an element type, or one form of an operator."""
    for pattern, kind in ((r"operator '([^']+)'", "{}"),
                          (r"element type (\w+)", "{} tensors"),
                          (r"(string) tensor", "{} tensors"),
                          (r"node '[^']*' \((\w+)\)", "{} (this form)")):
        match = re.search(pattern, message)
        if match:
            return kind.format(match.group(1))
    return "other"


def main():
    root = sys.argv[1]
    outcomes = collections.defaultdict(list)
    refused_ops = collections.Counter()
    for path in sorted(glob.glob(os.path.join(root, "*", "*", "result.txt"))):
        case = os.path.relpath(os.path.dirname(path), root)
        with open(path) as f:
            status, _, detail = f.read().rstrip("\n").partition("\t")
        outcomes[status].append((case, detail))
        if status == "unsupported":
            refused_ops[refusalKind(detail)] += 1

    lines = [f"ONNX backend cases: {sum(len(v) for v in outcomes.values())} run, "
             f"{len(outcomes['pass'])} pass, {len(outcomes['unsupported'])} unsupported, "
             f"{len(outcomes['fail'])} fail"]
    if refused_ops:
        lines.append("refused (cases): " +
                     ", ".join(f"{op} ({n})" for op, n in refused_ops.most_common()))
    for status in ("fail", "unsupported"):
        for case, detail in outcomes[status]:
            lines.append(f"  {status:11} {case}: {detail}")
    for case, detail in outcomes["pass"]:  # passes that needed a compile flag (--fix-input)
        if detail:
            lines.append(f"  {'pass':11} {case}: {detail}")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(root, "summary.txt"), "w") as f:
        f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
