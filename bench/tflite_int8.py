#!/usr/bin/env python3
"""kiln on the int8 MLPerf Tiny models (TFLite files of ../shared/testdata; ONNX Runtime does
not read them): `kiln bench` p50 at 1 and 2 threads over interleaved rounds, each model fed
its reference input (refs/MODEL/seed1/input_*.npy), optionally beside a second kiln
(--baseline, e.g. an older tree's build) compiling and running the same models, alternating
the two in every round. Prints one line per model and thread count, and --json a summary.

    bench/tflite_int8.py [--kiln build/bin/kiln] [--baseline OTHER/bin/kiln] [--rounds 3]
                         [--seconds 1] [--threads 1,2] [--models vww_96_int8,...]
                         [--testdata ../shared/testdata/tflite]
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TESTDATA = os.path.join(os.path.dirname(ROOT), "shared", "testdata", "tflite")  # --testdata

# Model file stems under models/mlperf-tiny; the short name is what --models takes.
MODELS = {
    "vww_96_int8": "visual_wake_words__vww_96_int8",
    "kws_ref_model": "keyword_spotting__kws_ref_model",
    "pretrainedResnet_quant": "image_classification__pretrainedResnet_quant",
    "pretrainedResnet_large_int8": "image_classification__pretrainedResnet_large_int8",
    "ad01_int8": "anomaly_detection__ad01_int8",
    "str_ww_ref_model": "streaming_wakeword__str_ww_ref_model",
}


def sh(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{result.stderr.strip()}")
    return result.stdout


def inputs(testdata, stem):
    """The reference input files of a model, in input order."""
    files = sorted(glob.glob(os.path.join(testdata, "refs", stem, "seed1", "input_*.npy")),
                   key=lambda f: int(os.path.basename(f)[len("input_"):-len(".npy")]))
    if not files:
        sys.exit(f"no reference inputs for {stem} under {testdata}/refs")
    return files


def bench(kiln, artifact, files, threads, seconds):
    command = [kiln, "bench", artifact, f"--threads={threads}", f"--seconds={seconds}", "--json"]
    command += [f"--input=@{f}" for f in files]
    return json.loads(sh(command).strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=os.path.join(ROOT, "build", "bin", "kiln"))
    parser.add_argument("--baseline", help="a second kiln to run beside --kiln")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--models", default="vww_96_int8,kws_ref_model,pretrainedResnet_quant",
                        help="comma-separated, of: " + ", ".join(MODELS))
    parser.add_argument("--testdata", default=TESTDATA, help="the TFLite test data (models/, refs/)")
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "bench-tflite-int8"))
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args()
    names = [m for m in args.models.split(",") if m]
    unknown = [m for m in names if m not in MODELS]
    if unknown:
        sys.exit(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    threads = [int(t) for t in args.threads.split(",")]
    kilns = {"kiln": args.kiln}
    if args.baseline:
        kilns["baseline"] = args.baseline
    for label, kiln in kilns.items():
        if not (os.path.isfile(kiln) and os.access(kiln, os.X_OK)):
            sys.exit(f"--{label}: {kiln} is not an executable kiln (build it: make build)")
    os.makedirs(args.work, exist_ok=True)

    summary = []
    for name in names:
        stem = MODELS[name]
        model = os.path.join(args.testdata, "models", "mlperf-tiny", stem + ".tflite")
        artifacts = {}
        for label, kiln in kilns.items():
            artifacts[label] = os.path.join(args.work, f"{name}-{label}.kiln")
            sh([kiln, "compile", model, "-o", artifacts[label]])
        files = inputs(args.testdata, stem)
        for t in threads:
            p50 = {label: [] for label in kilns}
            for _ in range(args.rounds):
                for label, kiln in kilns.items():
                    p50[label].append(bench(kiln, artifacts[label], files, t, args.seconds)["p50_us"])
            row = {"model": name, "threads": t}
            for label in kilns:
                row[label] = {"p50_us": statistics.median(p50[label]), "rounds": p50[label],
                              "artifact_bytes": os.path.getsize(artifacts[label])}
            summary.append(row)
            line = f"{name:28s} {t}T  kiln p50 {row['kiln']['p50_us']:8.1f} us"
            if args.baseline:
                base = row["baseline"]["p50_us"]
                line += (f"   baseline {base:8.1f} us   speed-up x{base / row['kiln']['p50_us']:.2f}"
                         f"   artifact {row['baseline']['artifact_bytes']} -> "
                         f"{row['kiln']['artifact_bytes']} B")
            print(line, flush=True)
    if args.json:
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
