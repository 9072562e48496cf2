#!/usr/bin/env python3
"""Builds and runs the example firmware for one (model, board) pair under QEMU.

  run_firmware.py runtime --board B --out LIB.a --source-dir ROOT SRC.cpp...
      builds the runtime core for board B (a static library, messages compiled out)
  run_firmware.py run --board B --kiln KILN --runtime-source SRC.cpp... --name N
                      --model M.onnx --input IN.npy --expected OUT.npy --work DIR
                      [--external-weights]
      the runtime core built for the board (DIR/runtime, ~3 s), kiln compile --output-format=static-lib, firmware build (input and expected output
      compiled in), QEMU run with -icount shift=0, checks: exit status 0 (output within 1e-4,
      or byte-exact with --exact,
      stack within the header's bound, RAM overhead <= 512 B), and on soft-float boards no
      hardware float instruction in the model object or the firmware. Writes DIR/result.json.
  run_firmware.py two --board B --kiln KILN --runtime-source SRC.cpp... --name N --model M.onnx
                      --input IN.npy --expected OUT.npy --work DIR
      the model compiled twice (prefixes N_a, N_b) and linked into one firmware
      (firmware/two_models.c): both libraries in one load call, both modules run and match
  run_firmware.py table RESULT.json...
      the footprint / speed table of docs/mcu.md

Boards are described once, in BOARDS below.
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

ARM_LINK = ["--specs=nano.specs", "--specs=rdimon.specs", "-nostartfiles",
            "-L" + os.path.join(HERE, "boards")]
RISCV_LINK = ["--specs=picolibc.specs", "--oslib=semihost", "--crt0=semihost",
              "-Wl,--defsym=__flash=0x80000000,--defsym=__flash_size=0x400000,"
              "--defsym=__ram=0x80400000,--defsym=__ram_size=0x200000,"
              "--defsym=__stack_size=0x10000"]
# Hardware float instructions: VFP (Arm) and F/D extension (RISC-V) mnemonics in objdump -d.
ARM_FLOAT = re.compile(r"\t(v(add|sub|mul|div|fma|fms|fnma|fnms|nmul|neg|abs|sqrt|cmp|cmpe|cvt|"
                       r"cvtr|mov|ldr|str|ldm|stm|push|pop|mrs|msr|sel|maxnm|minnm|rint[anmpxz]?)"
                       r"[a-z0-9.]*)\b")
RISCV_FLOAT = re.compile(r"\t(f(lw|sw|ld|sd)|f[a-z]+\.(s|d|w|wu|x)(\.[a-z]+)?|frcsr|fscsr|frflags|"
                         r"fsflags|frrm|fsrm)\b")

BOARDS = {
    "m33": dict(
        desc="Cortex-M33, FPU (QEMU mps2-an505)", arch="arm", soft=False,
        cc="arm-none-eabi-gcc", cxx="arm-none-eabi-g++",
        flags=["-mcpu=cortex-m33", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16"],
        kiln=["--target=cortex-m33"],
        link=ARM_LINK + ["-T", os.path.join(HERE, "boards", "mps2_an505.ld")],
        board_c="board_arm.c",
        qemu=["qemu-system-arm", "-M", "mps2-an505", "-cpu", "cortex-m33"]),
    "m55": dict(
        desc="Cortex-M55, Helium (MVE) and FPU (QEMU mps3-an547)", arch="arm", soft=False,
        cc="arm-none-eabi-gcc", cxx="arm-none-eabi-g++",
        flags=["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"],
        kiln=["--target=cortex-m55"],
        link=ARM_LINK + ["-T", os.path.join(HERE, "boards", "mps3_an547.ld")],
        board_c="board_arm.c",
        qemu=["qemu-system-arm", "-M", "mps3-an547", "-cpu", "cortex-m55"]),
    "m7": dict(
        desc="Cortex-M7, double-precision FPU (QEMU mps2-an500)", arch="arm", soft=False,
        cc="arm-none-eabi-gcc", cxx="arm-none-eabi-g++",
        flags=["-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16"],
        kiln=["--target=cortex-m7"],
        link=ARM_LINK + ["-T", os.path.join(HERE, "boards", "mps2_an500.ld")],
        board_c="board_arm.c",
        qemu=["qemu-system-arm", "-M", "mps2-an500", "-cpu", "cortex-m7"]),
    "m4f": dict(
        desc="Cortex-M4F, FPU (QEMU mps2-an386)", arch="arm", soft=False,
        cc="arm-none-eabi-gcc", cxx="arm-none-eabi-g++",
        flags=["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
        kiln=["--target-triple=thumbv7em-none-eabihf", "--target-cpu=cortex-m4"],
        link=ARM_LINK + ["-T", os.path.join(HERE, "boards", "mps2_an386.ld")],
        board_c="board_arm.c",
        qemu=["qemu-system-arm", "-M", "mps2-an386", "-cpu", "cortex-m4"]),
    "m4": dict(
        desc="Cortex-M4, no FPU (QEMU mps2-an386)", arch="arm", soft=True,
        cc="arm-none-eabi-gcc", cxx="arm-none-eabi-g++",
        flags=["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=soft"],
        kiln=["--target=cortex-m4"],
        link=ARM_LINK + ["-T", os.path.join(HERE, "boards", "mps2_an386.ld")],
        board_c="board_arm.c",
        qemu=["qemu-system-arm", "-M", "mps2-an386", "-cpu", "cortex-m4"]),
    "rv32imac": dict(
        desc="RISC-V rv32imac, no FPU (QEMU virt)", arch="riscv", soft=True,
        cc="riscv64-unknown-elf-gcc", cxx="riscv64-unknown-elf-g++",
        flags=["-march=rv32imac", "-mabi=ilp32"],
        kiln=["--target=rv32imac"], cflags=["--specs=picolibc.specs"], link=RISCV_LINK,
        board_c="board_riscv.c",
        qemu=["qemu-system-riscv32", "-M", "virt", "-bios", "none"]),
    "rv32imafc": dict(
        desc="RISC-V rv32imafc, FPU (QEMU virt)", arch="riscv", soft=False,
        cc="riscv64-unknown-elf-gcc", cxx="riscv64-unknown-elf-g++",
        flags=["-march=rv32imafc", "-mabi=ilp32f"],
        kiln=["--target=rv32imafc"], cflags=["--specs=picolibc.specs"], link=RISCV_LINK,
        board_c="board_riscv.c",
        qemu=["qemu-system-riscv32", "-M", "virt", "-bios", "none"]),
}

COMMON = ["-Os", "-ffunction-sections", "-fdata-sections", "-DKILN_NO_STATUS_MESSAGES",
          "-I" + os.path.join(ROOT, "runtime", "include"),
          "-I" + os.path.join(ROOT, "format", "include")]
CXX_FLAGS = ["-std=c++17", "-fno-exceptions", "-fno-rtti", "-fno-threadsafe-statics",
             "-ffreestanding"]


def run(cmd, **kw):
    result = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if result.returncode != 0:
        sys.stderr.write("$ " + " ".join(cmd) + "\n" + result.stdout + result.stderr)
        raise SystemExit("command failed (%d): %s" % (result.returncode, cmd[0]))
    return result.stdout


def tool(board, name):
    return board["cc"].replace("-gcc", "-" + name)


def build_runtime_library(board, sources, out):
    """The runtime core for `board`: -Os, messages compiled out, one section per function."""
    obj_dir = os.path.join(os.path.dirname(os.path.abspath(out)), "objects")
    os.makedirs(obj_dir, exist_ok=True)
    objects = []
    for src in sources:
        obj = os.path.join(obj_dir, os.path.splitext(os.path.basename(src))[0] + ".o")
        run([board["cxx"]] + board["flags"] + COMMON + CXX_FLAGS +
            ["-I" + os.path.join(ROOT, "runtime", "src"), "-c", src, "-o", obj])
        objects.append(obj)
    if os.path.exists(out):
        os.remove(out)
    run([tool(board, "ar"), "rcs", out] + objects)


def build_runtime(args):
    build_runtime_library(BOARDS[args.board], args.sources, args.out)


def npy_to_bin(npy_path, bin_path, dtype=None):
    import numpy as np
    array = np.load(npy_path)
    if dtype is not None:
        array = array.astype(dtype)
    array.tofile(bin_path)
    return array


def count_macs(model_path):
    """Multiply-accumulates of one inference: Conv, ConvTranspose, Gemm and MatMul."""
    import onnx
    from onnx import shape_inference
    model = shape_inference.infer_shapes(onnx.load(model_path))
    shapes = {}
    for v in list(model.graph.value_info) + list(model.graph.output) + list(model.graph.input):
        dims = [d.dim_value for d in v.type.tensor_type.shape.dim]
        shapes[v.name] = dims
    for init in model.graph.initializer:
        shapes[init.name] = list(init.dims)
    macs = 0
    for node in model.graph.node:
        def prod(xs):
            p = 1
            for x in xs:
                p *= x
            return p
        if node.op_type == "Conv":
            out = shapes.get(node.output[0])
            weight = shapes.get(node.input[1])
            if out and weight:
                macs += prod(out) * prod(weight[1:])
        elif node.op_type == "Gemm":
            a, b = shapes.get(node.input[0]), shapes.get(node.input[1])
            trans_a = any(a_.name == "transA" and a_.i for a_ in node.attribute)
            if a and b:
                m, k = (a[1], a[0]) if trans_a else (a[0], a[1])
                n = prod(b) // k
                macs += m * n * k
        elif node.op_type == "MatMul":
            a, out = shapes.get(node.input[0]), shapes.get(node.output[0])
            if a and out:
                macs += prod(out) * a[-1]
    return macs


def header_defines(path, upper):
    values = {}
    for line in open(path):
        m = re.match(r"#define %s_(\w+) (\d+)u" % upper, line)
        if m:
            values[m.group(1)] = int(m.group(2))
    return values


def runtime_code_bytes(board, library, elf):
    """Bytes of the runtime core's functions linked into the firmware (after --gc-sections)."""
    names = set()
    for line in run([tool(board, "nm"), "--defined-only", library]).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "Tt":
            names.add(parts[2])
    total = 0
    for line in run([tool(board, "nm"), "-S", "--defined-only", elf]).splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "Tt" and parts[3] in names:
            total += int(parts[1], 16)
    return total


def float_instructions(board, path):
    listing = run([tool(board, "objdump"), "-d", path])
    pattern = ARM_FLOAT if board["arch"] == "arm" else RISCV_FLOAT
    return [line.strip() for line in listing.splitlines() if pattern.search(line)]


def run_model(args):
    board = BOARDS[args.board]
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    name, upper = args.name, args.name.upper()
    base = os.path.join(work, name)

    # 0. The runtime core for this board.
    runtime = os.path.join(work, "runtime", "libkiln_runtime.a")
    build_runtime_library(board, args.runtime_source, runtime)

    # 1. The model as a static library for this board.
    kiln_flags = board["kiln"] + (["--optimize=size"] if args.optimize_size else [])
    compile_cmd = [args.kiln, "compile", args.model, "-o", base, "--output-format=static-lib",
                   "--name=" + name] + kiln_flags
    weights = []
    if args.external_weights:
        weights = [base + "_weights.o"]
        compile_cmd.append("--external-constants=" + weights[0])
    compile_out = run(compile_cmd)
    sys.stdout.write(compile_out)
    defines = header_defines(base + ".h", upper)

    # 2. Input and expected output as raw bytes.
    import numpy as np
    npy_to_bin(args.input, os.path.join(work, "input.bin"),
               np.float32 if np.load(args.input).dtype == np.float64 else None)
    npy_to_bin(args.expected, os.path.join(work, "expected.bin"))

    # 3. Firmware.
    fw_dir = os.path.join(HERE, "firmware")
    flags = board["flags"] + board.get("cflags", []) + COMMON + ["-I" + work, "-I" + fw_dir]
    model_defs = ['-DKILN_MODEL_HEADER="%s.h"' % name, "-DKILN_MODEL=" + name,
                  "-DKILN_MODEL_UPPER=" + upper, '-DKILN_MODEL_NAME="%s"' % name]
    if args.exact:
        model_defs.append("-DKILN_COMPARE_EXACT")
    objects = []
    for src, extra in (("main.c", model_defs), (board["board_c"], []),
                       ("data.S", ['-DKILN_INPUT_PATH="%s"' % os.path.join(work, "input.bin"),
                                   '-DKILN_EXPECTED_PATH="%s"' % os.path.join(work, "expected.bin")])):
        obj = os.path.join(work, os.path.splitext(src)[0] + ".o")
        run([board["cc"]] + flags + ["-std=c11"] * src.endswith(".c") + extra +
            ["-c", os.path.join(fw_dir, src), "-o", obj])
        objects.append(obj)
    elf = os.path.join(work, "firmware.elf")
    run([board["cc"]] + board["flags"] + board["link"] +
        ["-Wl,--gc-sections", "-Wl,--no-warn-rwx-segments", "-Wl,-Map=" + elf + ".map",
         "-o", elf] + objects + [base + ".o"] + weights + [runtime])

    # 4. Soft-float boards: no hardware float instruction anywhere.
    if board["soft"]:
        for path in [base + ".o", elf]:
            found = float_instructions(board, path)
            if found:
                raise SystemExit("%s: %d hardware float instructions on a soft-float board, "
                                 "e.g. %s" % (path, len(found), found[0]))
        print("soft float: no hardware float instruction in %s.o or firmware.elf" % name)
    elif not args.exact and not float_instructions(board, elf):
        # The same scan on a hard-float float-model firmware must find some: the scan works.
        raise SystemExit("the float-instruction scan found nothing in a hard-float firmware")

    # 5. Run.
    cmd = board["qemu"] + ["-nographic", "-semihosting", "-icount", "shift=0", "-kernel", elf]
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        raise SystemExit("QEMU timed out after %d s" % args.timeout)
    # Semihosting output arrives on stdout (Arm) or stderr (RISC-V).
    output = result.stdout + result.stderr
    sys.stdout.write(output)
    if result.returncode != 0:
        raise SystemExit("firmware exit status %d (see main.c for its meaning)" % result.returncode)

    m = re.search(r"instructions per inference: (\d+) \(second run (\d+)", output)
    stack = re.search(r"stack: (\d+) used", output)
    runtime_stack = re.search(r"runtime stack: load (\d+), init (\d+) \(bound \d+\); call to "
                              r"kernel entry (\d+)", output)
    macs = args.macs if args.macs is not None else count_macs(args.model)
    runtime_code = runtime_code_bytes(board, runtime, elf)
    print("runtime core code linked: %d bytes (header assumes %d)" %
          (runtime_code, defines["FLASH_RUNTIME_BYTES"]))
    instructions = int(m.group(2))
    size_out = run([tool(board, "size"), "-A", elf])
    text = sum(int(x) for x in re.findall(r"^\.text\s+(\d+)", size_out, re.M))
    result_json = dict(
        board=args.board, board_desc=board["desc"], model=name, macs=macs,
        instructions=instructions, macs_per_instruction=round(macs / instructions, 4),
        flags=" ".join(kiln_flags),
        stack_used=int(stack.group(1)), load_stack_used=max(int(runtime_stack.group(1)),
                                                            int(runtime_stack.group(2))),
        call_stack_used=int(runtime_stack.group(3)), runtime_code=runtime_code,
        firmware_flash_text=text, header=defines)
    with open(os.path.join(work, "result.json"), "w") as f:
        json.dump(result_json, f, indent=1)
    print("%s on %s: %d instructions, %d MACs, %.3f MAC/instruction" %
          (name, args.board, instructions, macs, macs / instructions))
    # Budgets: QEMU counts instructions exactly, so these fail only when the kernels change.
    if args.max_instructions is not None and instructions > args.max_instructions:
        raise SystemExit("budget: %d instructions per inference, more than the %d allowed" %
                         (instructions, args.max_instructions))
    kernel_bytes = defines["FLASH_KERNEL_BYTES"]
    if args.max_kernel_bytes is not None and kernel_bytes > args.max_kernel_bytes:
        raise SystemExit("budget: %d bytes of kernel code and tables, more than the %d allowed" %
                         (kernel_bytes, args.max_kernel_bytes))


def run_two(args):
    """Two static libraries of one model under different prefixes in one firmware."""
    board = BOARDS[args.board]
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    runtime = os.path.join(work, "runtime", "libkiln_runtime.a")
    build_runtime_library(board, args.runtime_source, runtime)
    names = [args.name + "_a", args.name + "_b"]
    for name in names:
        run([args.kiln, "compile", args.model, "-o", os.path.join(work, name),
             "--output-format=static-lib", "--name=" + name] + board["kiln"])
    npy_to_bin(args.input, os.path.join(work, "input.bin"))
    npy_to_bin(args.expected, os.path.join(work, "expected.bin"))
    fw_dir = os.path.join(HERE, "firmware")
    flags = board["flags"] + board.get("cflags", []) + COMMON + ["-I" + work, "-I" + fw_dir]
    defs = []
    for letter, name in zip("AB", names):
        defs += ['-DKILN_MODEL_%s_HEADER="%s.h"' % (letter, name), "-DKILN_MODEL_%s=%s" % (letter, name),
                 "-DKILN_MODEL_%s_UPPER=%s" % (letter, name.upper()),
                 '-DKILN_MODEL_%s_NAME="%s"' % (letter, name)]
    objects = []
    for src, extra in (("two_models.c", defs), (board["board_c"], []),
                       ("data.S", ['-DKILN_INPUT_PATH="%s"' % os.path.join(work, "input.bin"),
                                   '-DKILN_EXPECTED_PATH="%s"' % os.path.join(work, "expected.bin")])):
        obj = os.path.join(work, os.path.splitext(src)[0] + ".o")
        run([board["cc"]] + flags + ["-std=c11"] * src.endswith(".c") + extra +
            ["-c", os.path.join(fw_dir, src), "-o", obj])
        objects.append(obj)
    elf = os.path.join(work, "two_models.elf")
    run([board["cc"]] + board["flags"] + board["link"] +
        ["-Wl,--gc-sections", "-Wl,--no-warn-rwx-segments", "-o", elf] + objects +
        [os.path.join(work, n + ".o") for n in names] + [runtime])
    cmd = board["qemu"] + ["-nographic", "-semihosting", "-kernel", elf]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    sys.stdout.write(result.stdout + result.stderr)
    if result.returncode != 0:
        raise SystemExit("two-model firmware exit status %d" % result.returncode)


def table(args):
    rows = [json.load(open(p)) for p in args.results]
    print("| model | board | flash total | runtime | kernels | weights | commands+meta | "
          "arena | runtime RAM | stack bound (used) | RAM total | instructions | MAC/instr |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        h = r["header"]
        print("| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d (%d) | %d | %d | %.3f |" % (
            r["model"], r["board"], h["FLASH_BYTES"], h["FLASH_RUNTIME_BYTES"],
            h["FLASH_KERNEL_BYTES"], h["FLASH_CONSTANTS_BYTES"], h["FLASH_COMMANDS_BYTES"],
            h["ARENA_BYTES"], h["MODULE_BYTES"] + h["CONTEXT_BYTES"] - h["ARENA_BYTES"],
            h["STACK_BYTES"], r["stack_used"], h["RAM_BYTES"], r["instructions"],
            r["macs_per_instruction"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("runtime")
    p.add_argument("--board", required=True, choices=sorted(BOARDS))
    p.add_argument("--out", required=True)
    p.add_argument("sources", nargs="+")
    p.set_defaults(fn=build_runtime)
    p = sub.add_parser("run")
    p.add_argument("--board", required=True, choices=sorted(BOARDS))
    p.add_argument("--kiln", required=True)
    p.add_argument("--runtime-source", action="append", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--input", required=True)
    p.add_argument("--expected", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--external-weights", action="store_true")
    p.add_argument("--optimize-size", action="store_true",
                   help="compile with --optimize=size (the plain int8 loops: less flash)")
    p.add_argument("--exact", action="store_true", help="outputs must match byte for byte")
    p.add_argument("--macs", type=int, help="MACs per inference (default: counted from ONNX)")
    p.add_argument("--max-instructions", type=int,
                   help="fail above this many instructions per inference (a budget)")
    p.add_argument("--max-kernel-bytes", type=int,
                   help="fail above this many bytes of kernels (the header's FLASH_KERNEL_BYTES)")
    p.add_argument("--timeout", type=int, default=240)
    p.set_defaults(fn=run_model)
    p = sub.add_parser("two")
    p.add_argument("--board", required=True, choices=sorted(BOARDS))
    p.add_argument("--kiln", required=True)
    p.add_argument("--runtime-source", action="append", required=True)
    for flag in ("--name", "--model", "--input", "--expected", "--work"):
        p.add_argument(flag, required=True)
    p.add_argument("--timeout", type=int, default=240)
    p.set_defaults(fn=run_two)
    p = sub.add_parser("table")
    p.add_argument("results", nargs="+")
    p.set_defaults(fn=table)
    args = parser.parse_args()
    args.fn(args)


if __name__ == "__main__":
    main()
