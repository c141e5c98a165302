#!/usr/bin/env python3
"""A marked Python step loop that keeps its own clock, for checking the
recorder's step times against the program's (steps.c's Python twin).

    py_steps.py [--steps N] [--busy-ms MS] [--phases] [--clock FILE] [--fork]

Each step is `with mfu.step():` around MS milliseconds of spinning (inside
`with mfu.phase("compute"):` with --phases); the program reads
CLOCK_MONOTONIC right before entering the step and right after leaving it,
and writes "step t_before t_after delay_outside" (ns) per step to FILE at
the end, delay_outside being how long it waited for a CPU between those
readings and the step's markers (run_delay.h).
--fork: halfway through, fork a child that runs 20 steps of its own and
exits (the parent waits for it). Prints "py_steps: done N" at the end.
Finds mfu.py on PYTHONPATH, else in ../../src/python relative to this file.
"""

import argparse
import os
import sys
import time

try:
    import mfu
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "python"))
    import mfu


def spin(ms):
    end = time.monotonic_ns() + int(ms * 1e6)
    while time.monotonic_ns() < end:
        pass


def run_delay_ns():
    """This thread's time waiting for a CPU so far (run_delay.h), 0 if unknown."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def loop(n, ms, phases, clock):
    delay = run_delay_ns if clock is not None else (lambda: 0)
    for s in range(n):
        d0 = delay()
        t0 = time.monotonic_ns()
        with mfu.step():
            d_begin = delay()
            if phases:
                with mfu.phase("compute"):
                    spin(ms)
            else:
                spin(ms)
            d_end = delay()
        t1 = time.monotonic_ns()
        d1 = delay()
        if clock is not None:
            clock.append((s, t0, t1, (d_begin - d0) + (d1 - d_end)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--busy-ms", type=float, default=5.0)
    ap.add_argument("--phases", action="store_true")
    ap.add_argument("--clock")
    ap.add_argument("--fork", action="store_true")
    a = ap.parse_args()
    clock = [] if a.clock else None
    if not a.fork:
        loop(a.steps, a.busy_ms, a.phases, clock)
    else:
        half = a.steps // 2
        loop(half, a.busy_ms, a.phases, clock)
        pid = os.fork()
        if pid == 0:
            loop(20, a.busy_ms, a.phases, None)
            os._exit(0)
        loop(a.steps - half, a.busy_ms, a.phases, clock)
        os.waitpid(pid, 0)
    if a.clock:
        with open(a.clock, "w") as f:
            for row in clock:
                f.write("%d %d %d %d\n" % row)
    print("py_steps: done %d" % a.steps, flush=True)


if __name__ == "__main__":
    main()
