#!/usr/bin/env python3
"""Recording overhead on the demo workload, side by side in one invocation.

usage: bench_overhead.py BUILDDIR [ROUNDS]

Configurations, run interleaved ROUNDS times (default 12) so that drifts in
the machine's load hit all alike:
  bare                      the demo alone
  mfu-record                default settings: counters, markers, 1 kHz
                            cpu-clock sampling with callchains on every CPU,
                            context switches and their samples, counter
                            readings every 10 ms
  mfu-record -F 0           the same without cpu-clock samples
  mfu-record -F 250         sampling at 250 Hz
  perf record -F 1000 -g --switch-events   perf with mfu's default frequency,
                            callchains and context switches
  perf record -F 250 -g --switch-events
The figure is the demo's own clock around its training loop ("loop"),
and the whole command. Each configuration's ratio to the bare run of the
same round is taken, and the median over the rounds is printed with a 95%
bootstrap interval. The cost of one cpu-clock sample on this machine is the
slope between the 250 Hz and 1 kHz runs (both tools), which tells what any
sampler costs here.
"""
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else 'build')
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 12
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


def boot_ci(xs, rng, n=2000):
    meds = sorted(statistics.median(rng.choice(xs) for _ in xs) for _ in range(n))
    return meds[int(0.025 * n)], meds[int(0.975 * n)]


with tempfile.TemporaryDirectory() as tmp:
    configs = {
        'bare': mlp,
        'mfu-record': [record, '-q', '-o', 'run.sqlite', '--'] + mlp,
        'mfu-record -F 0': [record, '-q', '-F', '0', '-o', 'run.sqlite', '--'] + mlp,
        'mfu-record -F 250': [record, '-q', '-F', '250', '-o', 'run.sqlite', '--'] + mlp,
    }
    if perf:
        for f in ('1000', '250'):
            configs['perf -F %s -g --switch-events' % f] = [perf, 'record', '-q', '-F', f, '-g', '--switch-events',
                                                             '-o', 'perf.data', '--'] + mlp
    times = {k: [] for k in configs}
    for _ in range(rounds):
        for name, cmd in configs.items():
            times[name].append(timed(cmd, tmp))
    rng = random.Random(1)
    ratio = {}
    print('%d rounds; loop = the demo\'s own clock around its training loop, command = the whole command' % rounds)
    print('%-32s %8s %22s %9s %9s' % ('configuration', 'loop s', 'loop ratio (95% CI)', 'command s', 'cmd ratio'))
    for name in configs:
        loops = [t[1] / b[1] for t, b in zip(times[name], times['bare'])]
        cmds = [t[0] / b[0] for t, b in zip(times[name], times['bare'])]
        lo, hi = boot_ci(loops, rng)
        ratio[name] = statistics.median(loops)
        print('%-32s %8.3f %8.3f (%.3f-%.3f) %9.3f %9.3f' % (
            name, statistics.median(t[1] for t in times[name]), ratio[name], lo, hi,
            statistics.median(t[0] for t in times[name]), statistics.median(cmds)))
    bare = statistics.median(t[1] for t in times['bare'])
    for tool, hi, lo in (('mfu-record', 'mfu-record', 'mfu-record -F 250'),
                         ('perf', 'perf -F 1000 -g --switch-events', 'perf -F 250 -g --switch-events')):
        if hi in ratio and lo in ratio:
            # extra seconds per second of loop, per extra sample per second
            per_sample = (ratio[hi] - ratio[lo]) / 750.0
            print('%-10s cost of one cpu-clock sample: %.1f us (from the 250 Hz and 1 kHz runs)' %
                  (tool, per_sample * 1e6))
    if 'perf -F 1000 -g --switch-events' in ratio:
        print('mfu-record / perf at 1 kHz (loop): %.3f' % (ratio['mfu-record'] / ratio['perf -F 1000 -g --switch-events']))
    print('bare loop median %.3f s' % bare)
