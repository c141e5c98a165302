#!/usr/bin/env python3
"""Recording overhead on the demo workload, side by side in one invocation:
the bare run, mfu-record at default settings (counters, markers, 1 kHz
sampling with callchains, context switches), and perf record with the same
frequency and callchains (-F 1000 -g, context switches).

usage: bench_overhead.py BUILDDIR [REPS]

Prints the median wall time of each and the ratios to the bare run. Runs are
interleaved (bare, mfu, perf, bare, ...) so drifts in machine load hit all
three alike.
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else 'build')
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 7
mlp = [os.path.join(build, 'tests/workloads/wl_mlp'), '--steps', '200', '--quiet']
record = os.path.join(build, 'src/record/mfu-record')
perf = shutil.which('perf')


def timed(cmd, cwd):
    """(wall time of the whole command, the training loop's own time)."""
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    m = re.search(r'train_s=([\d.]+)', p.stderr)
    return wall, float(m.group(1))


with tempfile.TemporaryDirectory() as tmp:
    configs = {'bare': mlp,
               'mfu-record': [record, '-q', '-o', 'run.sqlite', '--'] + mlp}
    if perf:
        configs['perf record -F 1000 -g'] = [perf, 'record', '-q', '-F', '1000', '-g', '--switch-events',
                                             '-o', 'perf.data', '--'] + mlp
    times = {k: [] for k in configs}
    for _ in range(reps):
        for name, cmd in configs.items():
            times[name].append(timed(cmd, tmp))
    def med(name, k):
        return statistics.median(t[k] for t in times[name])
    print('training loop time (the program\'s own clock), and the whole command:')
    for name in times:
        print('%-26s loop %.3f s (ratio %.3f)   command %.3f s (ratio %.3f)   median of %d' %
              (name, med(name, 1), med(name, 1) / med('bare', 1), med(name, 0), med(name, 0) / med('bare', 0),
               reps))
    if 'perf record -F 1000 -g' in times:
        perf_name = 'perf record -F 1000 -g'
        print('mfu-record / perf record: loop %.3f, command %.3f' %
              (med('mfu-record', 1) / med(perf_name, 1), med('mfu-record', 0) / med(perf_name, 0)))
