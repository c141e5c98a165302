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
  mfu-record -I 0           no counter readings every 10 ms
  mfu-record --no-lib-flops no library-call counting (its preload and the
                            library-count reads at every boundary)
  mfu-record (live line)    without -q: the live line on stderr
  perf record -F 1000 -g    perf with mfu's default frequency and callchains
  perf record -F 1000 -g --switch-events   ... and context switches
  perf record -F 250 -g --switch-events
The figures are the demo's own clock around its training loop ("loop"),
the whole command's wall time, and its CPU time (user + system of the
demo, the recorder and everything they ran: what the recording costs the
machine, and the figure that holds when other jobs share the CPUs, where
wall times measure the scheduler). Each configuration's ratio to the bare run of the
same round is taken, and the median over the rounds is printed with a 95%
bootstrap interval. Each mfu-record configuration is also set against perf record -F 1000 -g
of the same round: the ratio of the two overheads (mfu - bare) / (perf -
bare), median over the rounds (the issue's figure: at most 1). The cost of
one cpu-clock sample on this machine is the
slope between the 250 Hz and 1 kHz runs (both tools), which tells what any
sampler costs here.
"""
import os
import random
import re
import resource
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
    """(wall time of the whole command, the training loop's own time, CPU
    seconds of the whole command: the demo, the recorder and all they ran)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    m = re.search(r'train_s=([\d.]+)', p.stderr)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, float(m.group(1)), cpu


def boot_ci(xs, rng, n=2000):
    meds = sorted(statistics.median(rng.choice(xs) for _ in xs) for _ in range(n))
    return meds[int(0.025 * n)], meds[int(0.975 * n)]


with tempfile.TemporaryDirectory() as tmp:
    configs = {
        'bare': mlp,
        'mfu-record': [record, '-q', '-o', 'run.sqlite', '--'] + mlp,
        'mfu-record -F 0': [record, '-q', '-F', '0', '-o', 'run.sqlite', '--'] + mlp,
        'mfu-record -F 250': [record, '-q', '-F', '250', '-o', 'run.sqlite', '--'] + mlp,
        'mfu-record -I 0': [record, '-q', '-I', '0', '-o', 'run.sqlite', '--'] + mlp,
        'mfu-record --no-lib-flops': [record, '-q', '--no-lib-flops', '-o', 'run.sqlite', '--'] + mlp,
        'mfu-record (live line)': [record, '-o', 'run.sqlite', '--'] + mlp,
    }
    if perf:
        configs['perf -F 1000 -g'] = [perf, 'record', '-q', '-F', '1000', '-g', '-o', 'perf.data', '--'] + mlp
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
    print('%-32s %8s %22s %9s %9s %8s %22s' % ('configuration', 'loop s', 'loop ratio (95% CI)', 'command s',
                                               'cmd ratio', 'cpu s', 'cpu ratio (95% CI)'))
    for name in configs:
        loops = [t[1] / b[1] for t, b in zip(times[name], times['bare'])]
        cmds = [t[0] / b[0] for t, b in zip(times[name], times['bare'])]
        cpus = [t[2] / b[2] for t, b in zip(times[name], times['bare'])]
        lo, hi = boot_ci(loops, rng)
        clo, chi = boot_ci(cpus, rng)
        ratio[name] = statistics.median(loops)
        print('%-32s %8.3f %8.3f (%.3f-%.3f) %9.3f %9.3f %8.3f %8.3f (%.3f-%.3f)' % (
            name, statistics.median(t[1] for t in times[name]), ratio[name], lo, hi,
            statistics.median(t[0] for t in times[name]), statistics.median(cmds),
            statistics.median(t[2] for t in times[name]), statistics.median(cpus), clo, chi))
    bare = statistics.median(t[1] for t in times['bare'])
    for tool, hi, lo in (('mfu-record', 'mfu-record', 'mfu-record -F 250'),
                         ('perf', 'perf -F 1000 -g --switch-events', 'perf -F 250 -g --switch-events')):
        if hi in ratio and lo in ratio:
            # extra seconds per second of loop, per extra sample per second
            per_sample = (ratio[hi] - ratio[lo]) / 750.0
            print('%-10s cost of one cpu-clock sample: %.1f us (from the 250 Hz and 1 kHz runs)' %
                  (tool, per_sample * 1e6))
    if 'perf -F 1000 -g' in ratio:
        print('overhead ratio to perf record -F 1000 -g of the same round, (config - bare) / (perf - bare), '
              'median over the rounds where perf cost something (<= 1: at or below perf):')
        for name in configs:
            if not name.startswith('mfu-record'):
                continue
            out = []
            for k, what in ((1, 'loop'), (2, 'cpu')):
                rs = [(t[k] - b[k]) / (p[k] - b[k])
                      for t, p, b in zip(times[name], times['perf -F 1000 -g'], times['bare']) if p[k] > b[k]]
                out.append('%s %s (%d rounds)' % (what, '%.2f' % statistics.median(rs) if rs else '-', len(rs)))
            print('  %-30s %s' % (name, ', '.join(out)))
    if 'perf -F 1000 -g --switch-events' in ratio:
        print('mfu-record / perf at 1 kHz (loop): %.3f' % (ratio['mfu-record'] / ratio['perf -F 1000 -g --switch-events']))
    print('bare loop median %.3f s' % bare)
