#!/usr/bin/env python3
"""bench/two_thread_phases.py: its split of canned rounds by placement (medians counted by
hand), rounds in which the placement changed left out, and its errors for a missing artifact
and a missing tool."""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import two_thread_phases  # noqa: E402


def rnd(gbps, a, b, after=None):
    r = {"gbps": gbps, "runs": {"a.kiln": {"p50_us": a, "min_us": a - 100},
                                "b.kiln": {"p50_us": b, "min_us": b - 50}}}
    if after is not None:
        r["gbps_after"] = after
    return r


class TwoThreadPhases(unittest.TestCase):
    def test_rounds_split_at_the_rate(self):
        rounds = [rnd(71, 10000, 9900), rnd(22, 11300, 10500), rnd(75, 10100, 9950),
                  rnd(24, 11500, 10700), rnd(70, 10050, 9800), rnd(45, 10200, 10000)]
        s = two_thread_phases.summarize(rounds, ["a.kiln", "b.kiln"], 45.0)
        one, two = s["one core complex"], s["two core complexes"]
        # 45 GB/s counts as one core complex: 71, 75, 70, 45 against 22, 24.
        self.assertEqual(one["a.kiln"]["rounds"], 4)
        self.assertEqual(one["a.kiln"]["p50_us"], 10075)   # median of 10000, 10100, 10050, 10200
        self.assertEqual(one["b.kiln"]["min_us"], 9875)    # median of 9850, 9900, 9750, 9950
        self.assertEqual(two["a.kiln"]["p50_us"], 11400)   # median of 11300, 11500
        self.assertEqual(two["b.kiln"]["p50_us"], 10600)

    def test_rounds_that_moved_are_left_out(self):
        rounds = [rnd(71, 10000, 9900, 75), rnd(22, 11300, 10500, 24),
                  rnd(75, 13000, 12000, 23),   # moved to two complexes mid-round
                  rnd(24, 12500, 11900, 70),   # moved to one complex mid-round
                  rnd(70, 10200, 9800, 46), rnd(25, 11500, 10700, 44.9)]
        s = two_thread_phases.summarize(rounds, ["a.kiln", "b.kiln"], 45.0)
        one, two = s["one core complex"], s["two core complexes"]
        self.assertEqual(one["a.kiln"]["rounds"], 2)
        self.assertEqual(one["a.kiln"]["p50_us"], 10100)   # median of 10000, 10200
        self.assertEqual(two["a.kiln"]["rounds"], 2)
        self.assertEqual(two["b.kiln"]["p50_us"], 10600)   # median of 10500, 10700
        self.assertTrue(two_thread_phases.mixed(rounds[2], 45.0))
        self.assertFalse(two_thread_phases.mixed(rounds[5], 45.0))
        # Every round moved: no placement to report.
        self.assertEqual(two_thread_phases.summarize(rounds[2:4], ["a.kiln"], 45.0), {})

    def test_one_placement_only(self):
        s = two_thread_phases.summarize([rnd(71, 10000, 9900)], ["a.kiln", "b.kiln"], 45.0)
        self.assertEqual(list(s), ["one core complex"])

    def test_errors(self):
        script = os.path.join(HERE, "two_thread_phases.py")
        out = subprocess.run([sys.executable, script, "/nonexistent/a.kiln", "--input=@x.npy",
                              "--kiln", sys.executable, "--cross-core-bench", sys.executable],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 1)
        self.assertIn("two_thread_phases: '/nonexistent/a.kiln' not found", out.stderr)
        out = subprocess.run([sys.executable, script, "a.kiln", "--input=@x.npy",
                              "--kiln", "/nonexistent/kiln"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 1)
        self.assertIn("two_thread_phases: /nonexistent/kiln not found", out.stderr)


if __name__ == "__main__":
    unittest.main()
