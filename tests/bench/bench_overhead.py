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
    t0 = time.monotonic()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t0


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
    bare = statistics.median(times['bare'])
    for name, ts in times.items():
        med = statistics.median(ts)
        print('%-26s median %.3f s over %d runs (min %.3f)  ratio to bare %.3f' %
              (name, med, reps, min(ts), med / bare))
    if 'perf record -F 1000 -g' in times:
        print('mfu-record / perf record: %.3f' % (statistics.median(times['mfu-record']) /
                                                 statistics.median(times['perf record -F 1000 -g'])))
