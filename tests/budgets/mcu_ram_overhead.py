#!/usr/bin/env python3
"""Budget: the runtime's RAM beyond the arena (module + context + stage buffers) stays within
512 bytes for every example model on every microcontroller target, as `kiln compile
--output-format=static-lib` records it in the header (the example firmware checks the same
numbers against the runtime itself under QEMU).

usage: mcu_ram_overhead.py KILN WORKDIR MODEL.onnx...
"""
import os
import re
import subprocess
import sys

BUDGET = 512
TARGETS = [["--target=cortex-m33"], ["--target=cortex-m4"], ["--target=cortex-m7"],
           ["--target=cortex-m55"],
           ["--target-triple=thumbv7em-none-eabihf", "--target-cpu=cortex-m4"],
           ["--target=rv32imac"], ["--target=rv32imafc"]]


def main():
    kiln, work, models = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(work, exist_ok=True)
    failures = 0
    for model in models:
        for target in TARGETS:
            out = os.path.join(work, "model")
            subprocess.run([kiln, "compile", model, "-o", out, "--output-format=static-lib",
                            "--name=m"] + target, check=True, capture_output=True)
            values = {k: int(v) for k, v in
                      re.findall(r"#define M_(\w+) (\d+)u", open(out + ".h").read())}
            overhead = values["MODULE_BYTES"] + values["CONTEXT_BYTES"] - values["ARENA_BYTES"]
            status = "ok" if overhead <= BUDGET else "OVER BUDGET"
            failures += overhead > BUDGET
            print("%s %s: runtime RAM beyond the arena %d B (module %d, context %d) <= %d: %s" %
                  (os.path.basename(os.path.dirname(model)) + "/" + os.path.basename(model),
                   " ".join(target), overhead, values["MODULE_BYTES"],
                   values["CONTEXT_BYTES"] - values["ARENA_BYTES"], BUDGET, status))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
