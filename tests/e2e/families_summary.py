#!/usr/bin/python3
"""Summary of the model-family end-to-end tests (CTest's cleanup step after them).

    families_summary.py MODELS_DIR NAME[=OP]...

Reads each model's result.txt and compile_seconds.txt (written by run_case.py) and case.json
(written by scripts/export_models.py), prints a Markdown table of every model — result, kiln
compile time, the tolerance's atol and PyTorch's own float32 error against the float64
reference — and the slowest compile (CPU time); the table also goes to
MODELS_DIR/families_summary.md.
It never fails: the tests themselves judge.
"""
import json
import os
import sys


def readText(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def main():
    models_dir, entries = sys.argv[1], sys.argv[2:]
    rows = ["| model | result | compile s (wall / CPU) | atol | PyTorch f32 error |",
            "|---|---|---|---|---|"]
    counts, slowest = {}, (0.0, "")
    for entry in entries:
        name, _, refusal = entry.partition("=")
        folder = os.path.join(models_dir, name)
        result = readText(os.path.join(folder, "result.txt")) or "not run"
        status, _, detail = result.partition("\t")
        counts[status] = counts.get(status, 0) + 1
        if status == "unsupported":
            status = f"refused ({refusal or detail})"
        elif status == "fail":
            status = f"FAIL: {detail[:120]}"
        seconds = (readText(os.path.join(folder, "compile_seconds.txt")) or "").split()
        if len(seconds) == 2 and float(seconds[1]) > slowest[0] and status == "pass":
            slowest = (float(seconds[1]), name)
        case = {}
        if os.path.exists(os.path.join(folder, "case.json")):
            with open(os.path.join(folder, "case.json")) as f:
                case = json.load(f)
        atol = case.get("tolerance", "").partition(",")[2]
        error = case.get("torch_f32_error")
        rows.append(f"| {name} | {status} | {' / '.join(seconds) or '-'} | {atol or '-'} | "
                    f"{'-' if error is None else f'{error:.2g}'} |")
    rows.append("")
    rows.append(", ".join(f"{n} {s}" for s, n in sorted(counts.items())) +
                (f"; slowest passing compile: {slowest[1]} {slowest[0]:.2f} s CPU"
                 if slowest[1] else ""))
    text = "\n".join(rows) + "\n"
    print(text, end="")
    with open(os.path.join(models_dir, "families_summary.md"), "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
