"""What the e2e checks that drive the `kiln` binary on one model share: running a command
(its output, or exit with the command and what it printed) and their common arguments
(--kiln K --work DIR --model M.onnx --input I.npy --output O.npy)."""
import argparse
import os
import subprocess
import sys


def run(command):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit(f"$ {' '.join(command)}\n{result.stdout}{result.stderr}")
    return result.stdout


def model_case_args(extra_flags=()):
    """The parsed arguments (and the boolean `extra_flags`); the work directory exists
    afterwards."""
    parser = argparse.ArgumentParser()
    for flag in ("--kiln", "--work", "--model", "--input", "--output"):
        parser.add_argument(flag, required=True)
    for flag in extra_flags:
        parser.add_argument(flag, action="store_true")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    return args
