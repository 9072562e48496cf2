#!/usr/bin/env python3
"""Test of bench/compare.py without benchmark runs: its reading of a model's case.json (the
compile flags, the tolerance and every input, found beside the model whatever folder the case
file names; a folder without a case file gives an empty case), and placementSummary on
hand-made rounds."""
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
    # Rounds: one placement (125 / 100 -> 0.8), moved between the runs (95 then 30 GB/s), no
    # probe at all (not counted), and two complexes throughout (100 / 200 -> 0.5).
    kiln = [{"p50_us": 100.0}, {"p50_us": 110.0}, {"p50_us": 90.0}, {"p50_us": 100.0}]
    ort = [{"p50_us": 125.0}, {"p50_us": 100.0}, {"p50_us": 100.0}, {"p50_us": 200.0}]
    probes = [[95.0, 96.0, 97.0], [95.0, 30.0, 31.0], [None, None, None], [30.0, None, 29.0]]
    summary = compare.placementSummary(probes, kiln, ort)
    want = {"moved": 1, "rounds": 4, "steady_ratio": 0.65, "steady_rounds": 2}
    if summary != want:
        print(f"compare_test: placementSummary gave {summary}, expected {want}")
        return 1
    print("compare_test: case.json read and placements summarised as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
