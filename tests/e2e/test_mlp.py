#!/usr/bin/env python3
"""End-to-end checks of the demo workload wl_mlp (tests/workloads/mlp.c).

The executable comes from the environment: MFU_WL_MLP (meson test sets it).
Checks that the declared model FLOPs equal the multiplies and adds an
instrumented scalar step performs and the analytic formula of docs/demo.md,
that a short run exits 0 with a decreasing loss, and that bad options exit 2.
"""

import math
import os
import re
import subprocess
import unittest

# The network of mlp.c, for an independent evaluation of the formula.
N_IN, N_H1, N_H2, N_OUT, BATCH = 256, 512, 512, 10, 64


def model_flops():
    """Per step and per phase, as docs/demo.md derives them."""
    p1, p2, p3 = N_IN * N_H1, N_H1 * N_H2, N_H2 * N_OUT
    params = p1 + p2 + p3
    forward = 2 * BATCH * params
    # weight gradients of all layers, input gradients of layers 2 and 3 only
    backward = 2 * BATCH * params + 2 * BATCH * (p2 + p3)
    optimizer = 2 * params
    return forward + backward + optimizer, forward, backward, optimizer


def wl_mlp():
    path = os.environ.get("MFU_WL_MLP")
    if not path:
        raise AssertionError("set MFU_WL_MLP to the wl_mlp executable (meson test does)")
    return path


def run(*args, timeout=120):
    return subprocess.run(
        [wl_mlp(), *args], capture_output=True, text=True, timeout=timeout
    )


def keyvals(text):
    return {k: v for k, v in re.findall(r"(\w+)=(\S+)", text)}


def losses(stdout):
    out = []
    for line in stdout.splitlines():
        step, loss = line.split()
        out.append((int(step), float(loss)))
    return out


class TestMlpFlops(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.r = run("--count-flops")

    def test_exit_status(self):
        self.assertEqual(self.r.returncode, 0, self.r.stderr)

    def test_counted_equals_declared(self):
        kv = keyvals(self.r.stdout)
        self.assertIn("counted_flops", kv, self.r.stdout)
        self.assertEqual(int(kv["counted_flops"]), int(kv["declared_flops"]), self.r.stdout)

    def test_declared_matches_formula(self):
        total, forward, backward, optimizer = model_flops()
        kv = keyvals(self.r.stdout)
        self.assertEqual(int(kv["declared_flops"]), total)
        self.assertEqual(int(kv["forward"]), forward)
        self.assertEqual(int(kv["backward"]), backward)
        self.assertEqual(int(kv["optimizer"]), optimizer)

    def test_fast_path_computes_the_counted_step(self):
        # The count is only meaningful if the vectorized step does the same
        # arithmetic: same summation order, so the weights agree exactly.
        kv = keyvals(self.r.stdout)
        self.assertLessEqual(float(kv["max_weight_diff"]), 1e-6, self.r.stdout)


class TestMlpRun(unittest.TestCase):
    def test_quiet_run(self):
        r = run("--steps", "20", "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("loss", r.stderr)
        self.assertEqual(r.stdout, "")
        kv = keyvals(r.stderr)
        self.assertEqual(kv.get("steps"), "20", r.stderr)
        self.assertEqual(int(kv["model_flops_per_step"]), model_flops()[0])

    def test_loss_decreases(self):
        r = run("--steps", "20", "--quiet", "--print-losses")
        self.assertEqual(r.returncode, 0, r.stderr)
        ls = losses(r.stdout)
        self.assertEqual([s for s, _ in ls], list(range(1, 21)))
        values = [v for _, v in ls]
        self.assertTrue(all(math.isfinite(v) for v in values), values)
        first, last = sum(values[:5]) / 5, sum(values[-5:]) / 5
        # Measured: mean ~3.0 over steps 1-5, ~2.3 over 16-20; the batches are noisy, so compare means.
        self.assertLess(last, first - 0.3, values)

    def test_threads_do_not_change_the_arithmetic(self):
        # Threads split output rows, never a sum: identical losses.
        one = run("--steps", "5", "--quiet", "--print-losses")
        two = run("--steps", "5", "--quiet", "--print-losses", "--threads", "2")
        self.assertEqual(one.returncode, 0, one.stderr)
        self.assertEqual(two.returncode, 0, two.stderr)
        self.assertEqual(one.stdout, two.stdout)

    def test_default_loss_lines(self):
        r = run("--steps", "3")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stderr, r"mlp: step 1 loss \d+\.\d+")
        self.assertRegex(r.stderr, r"mlp: step 3 loss \d+\.\d+")

    def test_help(self):
        r = run("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("usage:", r.stdout)
        self.assertEqual(r.stderr, "")

    def test_bad_options_exit_2(self):
        cases = [
            (["--steps", "0"], "--steps"),
            (["--steps", "-3"], "--steps"),
            (["--steps", "12x"], "--steps"),
            (["--steps", "99999999999999999999"], "--steps"),
            (["--steps"], "needs a value"),
            (["--threads", "0"], "--threads"),
            (["--threads", "65"], "--threads"),
            (["--bogus"], "unknown option"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                r = run(*args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(message, r.stderr)
                self.assertTrue(r.stderr.startswith("mlp: "), r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
