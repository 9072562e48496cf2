#!/usr/bin/python3
"""Exports the end-to-end test models with Debian's PyTorch/torchvision.

Each model gets random weights from a fixed seed; its BatchNorm running statistics are
calibrated on a few batches of random data (train mode, cumulative average), so that the
activations of deep networks stay in a sane range and the outputs are not degenerate. For each
model NAME the script writes OUT_DIR/NAME/model.onnx, input.npy (one random input) and
output.npy (PyTorch's output for it, float32). Same inputs, same files: fully deterministic.

    /usr/bin/python3 scripts/export_models.py OUT_DIR [NAME ...]     # default: all models
    /usr/bin/python3 scripts/export_models.py --skip-up-to-date OUT_DIR   # CTest's fixture
    /usr/bin/python3 scripts/export_models.py --list            # the first models
    /usr/bin/python3 scripts/export_models.py --list-families   # NAME, or NAME=OP (refusal)

The output goes into a build tree, not the repository (ResNet-18 alone is 45 MB).
"""
import argparse
import os
import sys
import time

import e2e_catalog  # no torch: --list stays instant

# Must match e2e_models.MODELS (checked below); tests/e2e/CMakeLists.txt reads it via --list.
NAMES = e2e_catalog.names()
FILES = ("model.onnx", "input.npy", "output.npy", "case.json")
HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = ("export_models.py", "e2e_models.py", "e2e_catalog.py", "e2e_vision.py",
           "e2e_transformers.py", "e2e_detection.py")


def upToDate(name, out_dir):
    """Its files exist and are newer than the export scripts."""
    script_time = max(os.path.getmtime(os.path.join(HERE, f)) for f in SOURCES)
    paths = [os.path.join(out_dir, name, f) for f in FILES]
    return all(os.path.exists(p) and os.path.getmtime(p) > script_time for p in paths)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?")
    parser.add_argument("names", nargs="*", help="models to export (default: all)")
    parser.add_argument("--list", action="store_true",
                        help="print the first models' names and exit")
    parser.add_argument("--list-families", action="store_true",
                        help="print the family models (NAME, or NAME=OP for an expected "
                             "refusal of operator OP) and exit")
    parser.add_argument("--base", action="store_true", help="only the first models (--list)")
    parser.add_argument("--skip-up-to-date", action="store_true",
                        help="keep models whose files are newer than the export scripts")
    args = parser.parse_args()
    if args.list:
        print("\n".join(e2e_catalog.BASE))
        return
    if args.list_families:
        refusals = e2e_catalog.EXPECTED_REFUSALS
        print("\n".join(f"{n}={refusals[n]}" if n in refusals else n
                        for n, _, _ in e2e_catalog.familyModels()))
        return
    if not args.out_dir:
        parser.error("OUT_DIR is required")
    unknown = [n for n in args.names if n not in NAMES]
    if unknown:
        parser.error(f"unknown model {unknown[0]!r}; known: {', '.join(NAMES)}")

    todo = []
    for name in args.names or (e2e_catalog.BASE if args.base else NAMES):
        if args.skip_up_to_date and upToDate(name, args.out_dir):
            print(f"{name}: up to date")
        else:
            todo.append(name)
    if not todo:
        return
    import torch  # slow (seconds): only when something is exported
    import e2e_models
    assert list(e2e_models.MODELS) == NAMES, "NAMES and e2e_models.MODELS disagree"
    torch.set_num_threads(1)  # bit-identical reference outputs from run to run
    import warnings
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    for name in todo:
        started = time.time()
        y = e2e_models.exportModel(name, args.out_dir)[0].double()
        print(f"{name}: output {tuple(y.shape)} mean {y.mean():.4f} std {y.std():.4f} "
              f"({time.time() - started:.1f} s)", flush=True)


if __name__ == "__main__":
    sys.exit(main())
