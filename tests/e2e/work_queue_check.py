#!/usr/bin/python3
"""Work queues on a real model (compiler/codegen/llvm/include/kiln/codegen/work_queue.h): the
artifact's Winograd convolutions that share their panels say so in DEBUG (`kiln dump` text and
JSON), their last binding is a read-write arena region of 64 bytes per task, those regions lie
together at the end of the arena, and the first command of the call is the FILL that empties
them, alone in stage 0; `kiln bench --per-workgroup --json` names the same dispatches; and the
model still gives its reference output at 1 and 2 threads.

  work_queue_check.py --kiln K --work DIR --model M.onnx --input I.npy --output O.npy
"""
import json
import os
import sys

from kiln_cli import model_case_args, run

QUEUE_BYTES = 64


def main():
    args = model_case_args()
    artifact = os.path.join(args.work, "model.kiln")
    run([args.kiln, "compile", args.model, "-o", artifact])
    dump = json.loads(run([args.kiln, "dump", "--json", artifact]))
    shared = [d for d in dump["dispatches"] if d.get("work_queues", 0) > 0]
    if not shared:
        sys.exit("no dispatch shares work through work queues")
    regions = []
    for d in shared:
        last = d["bindings"][-1]
        want = QUEUE_BYTES * d["work_queues"]
        if last["space"] != "arena" or last["access"] != "rw" or last["length"] != want:
            sys.exit(f"dispatch {d['index']}: last binding {last}, want {want} rw arena bytes")
        regions.append((last["offset"], last["length"]))
    regions.sort()
    for (offset, length), (following, _) in zip(regions, regions[1:]):
        if offset + length != following:
            sys.exit(f"the queue regions are not contiguous: {regions}")
    end = regions[-1][0] + regions[-1][1]
    if end != dump["arena_bytes"]:
        sys.exit(f"the queues end at {end}, the arena at {dump['arena_bytes']}")
    commands = dump["commands"]
    if [c["op"] for c in commands[:2]] != ["fill", "barrier"] or commands[2]["stage"] != 1:
        sys.exit(f"the call does not start with the queues' FILL alone in stage 0: {commands[:3]}")
    text = run([args.kiln, "dump", artifact])
    fill = f"fill      arena +{regions[0][0]}, {end - regions[0][0]} bytes of 0x00"
    if fill not in text:
        sys.exit(f"`kiln dump` does not show '{fill}'")
    marked = text.count(" shared task")
    if marked != len(shared):
        sys.exit(f"`kiln dump` marks {marked} dispatches as shared, DEBUG {len(shared)}")
    profile = json.loads(run([args.kiln, "bench", artifact, f"--input=@{args.input}",
                              "--per-workgroup", "--iterations=3", "--json"]))
    profiled = {d["index"]: d.get("work_queues", 0) for d in profile["per_workgroup"]["dispatches"]}
    for d in shared:
        if profiled.get(d["index"]) != d["work_queues"]:
            sys.exit(f"--per-workgroup: dispatch {d['index']} has {profiled.get(d['index'])} "
                     f"work queues, DEBUG {d['work_queues']}")
    for threads in ("1", "2"):
        run([args.kiln, "run", artifact, f"--input=@{args.input}", f"--threads={threads}",
             f"--expected_output=@{args.output}", "--tolerance=1e-3,1e-4"])
    print(f"{len(shared)} dispatches share {sum(d['work_queues'] for d in shared)} tasks; "
          f"queues at arena +{regions[0][0]}, {end - regions[0][0]} bytes")


if __name__ == "__main__":
    main()
