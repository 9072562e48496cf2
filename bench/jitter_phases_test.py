#!/usr/bin/env python3
"""bench/jitter_phases.py on hand-built sample files: a run of 10,000 calls of 1.0 us with
one phase of 200 calls at 1.3 us (the floor's work 1.1 us in it) and 30 isolated calls of 2.0 us,
300 calls apart; the figures below are counted by hand. Also its errors: a file of another
dtype, too few calls, a missing file and a truncated one."""
import os
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import jitter_phases  # noqa: E402


def writeNpy(path, values, shape, descr="<f8"):
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    fmt = "<%dd" % len(values) if descr == "<f8" else "<%df" % len(values)
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack(fmt, *values))


def handBuiltRun():
    calls = [1.0] * 10000
    floor = [1.0] * 10000
    for i in range(5000, 5200):      # the phase: 200 consecutive slow calls
        calls[i] = 1.3
        floor[i] = 1.1
    isolated = list(range(100, 9100, 300))  # 30 calls, none near the phase
    isolated = [i for i in isolated if not 4900 <= i <= 5300][:30]
    while len(isolated) < 30:
        isolated.append(isolated[-1] + 300)
    for i in isolated:
        calls[i] = 2.0
    return calls, floor


class JitterPhases(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kiln-jitter-phases-")

    def test_phase_and_isolated_calls(self):
        calls, floor = handBuiltRun()
        r = jitter_phases.analyse(calls, floor, 1.10)
        self.assertEqual(r["slow_calls"], 230)
        self.assertEqual(r["phases"], 1)
        self.assertEqual(r["slow_in_phases"], 200)
        self.assertAlmostEqual(r["phase_share"], 0.02)
        self.assertEqual(r["median_in_phases_us"], 1.3)
        self.assertEqual(r["median_outside_us"], 1.0)
        # 30 slow calls of 9,800 outside the phase are 0.3 %: the p99 outside is 1.0.
        self.assertEqual(r["outside_jitter"], 1.0)
        # All calls: 230 of 10,000 slow (2.3 %), so the p99 is 1.3 (the phase's calls).
        self.assertAlmostEqual(r["jitter"], 1.3)
        self.assertEqual(r["floor_median_in_phases_us"], 1.1)
        # The phase's wall time: 200 x (1.3 + 1.1) us.
        self.assertAlmostEqual(r["phase_ms_total"], 0.48)

    def test_reads_both_shapes_from_files(self):
        calls, floor = handBuiltRun()
        one = os.path.join(self.dir, "calls.npy")
        two = os.path.join(self.dir, "both.npy")
        writeNpy(one, calls, "(10000,)")
        writeNpy(two, calls + floor, "(2, 10000)")
        self.assertEqual(jitter_phases.readNpy(one), (calls, None))
        self.assertEqual(jitter_phases.readNpy(two), (calls, floor))
        out = subprocess.run([sys.executable, os.path.join(HERE, "jitter_phases.py"), two],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("slow calls (> 1.10 x p50): 230 (2.30 %), 200 of them in 1 phase(s)",
                      out.stdout)
        self.assertIn("the floor's fixed work in the same phases: 1.100 us", out.stdout)

    def test_errors_name_the_file(self):
        f32 = os.path.join(self.dir, "f32.npy")
        writeNpy(f32, [1.0] * 200, "(200,)", descr="<f4")
        out = subprocess.run([sys.executable, os.path.join(HERE, "jitter_phases.py"), f32],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 1)
        self.assertIn(f"jitter_phases: '{f32}' holds <f4, expected the f64 samples", out.stderr)
        few = os.path.join(self.dir, "few.npy")
        writeNpy(few, [1.0] * 20, "(20,)")
        out = subprocess.run([sys.executable, os.path.join(HERE, "jitter_phases.py"), few],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 1)
        self.assertIn(f"jitter_phases: '{few}' has 20 calls; at least 100 are needed", out.stderr)
        missing = os.path.join(self.dir, "missing.npy")
        out = subprocess.run([sys.executable, os.path.join(HERE, "jitter_phases.py"), missing],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 1)
        self.assertIn(f"jitter_phases: cannot read '{missing}': No such file or directory",
                      out.stderr)
        truncated = os.path.join(self.dir, "truncated.npy")
        writeNpy(truncated, [1.0] * 200, "(200,)")
        with open(truncated, "r+b") as f:
            f.truncate(os.path.getsize(truncated) - 8)
        out = subprocess.run([sys.executable, os.path.join(HERE, "jitter_phases.py"), truncated],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 1)
        self.assertIn(f"jitter_phases: '{truncated}' is truncated: its header promises 200 "
                      "samples", out.stderr)


if __name__ == "__main__":
    unittest.main()
