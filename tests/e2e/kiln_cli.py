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


def model_case_args():
    """The parsed arguments; the work directory exists afterwards."""
    parser = argparse.ArgumentParser()
    for flag in ("--kiln", "--work", "--model", "--input", "--output"):
        parser.add_argument(flag, required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    return args
