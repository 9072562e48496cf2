#!/usr/bin/env python3
"""Test of bench/compare.py's reading of a model's case.json (no benchmark runs): the compile
flags, the tolerance and every input, found beside the model whatever folder the case file
names; a folder without a case file gives an empty case."""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare  # noqa: E402


def main():
    with tempfile.TemporaryDirectory() as folder:
        if compare.caseOf(folder) != {}:
            print("compare_test: a folder without case.json should give an empty case")
            return 1
        with open(os.path.join(folder, "case.json"), "w") as f:
            json.dump({"compile_flags": ["--input-shape=ids:1x16"], "tolerance": "1e-3,2e-05",
                       "inputs": ["/elsewhere/model_a/input.npy", "/elsewhere/model_a/input1.npy"]},
                      f)
        case = compare.caseOf(folder)
        want = {"compile_flags": ["--input-shape=ids:1x16"], "tolerance": "1e-3,2e-05",
                "inputs": [os.path.join(folder, "input.npy"), os.path.join(folder, "input1.npy")]}
        if case != want:
            print(f"compare_test: caseOf gave {case}, expected {want}")
            return 1
    print("compare_test: case.json read as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
