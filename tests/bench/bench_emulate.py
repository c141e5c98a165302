#!/usr/bin/env python3
"""What the FP-op emulator costs (docs/emulate.md, "Cost"), side by side in
one invocation.

usage: bench_emulate.py BUILDDIR [ROUNDS]

Configurations, interleaved ROUNDS times (default 5; each round in another
order) so that drifts in the machine's load hit all alike:
  bare          the program alone
  none          valgrind --tool=none: Valgrind's own cost (translation and
                running translated code), the floor of any Valgrind tool
  mfufp         valgrind --tool=mfufp: Valgrind plus the counting
  record        mfu-record --emulate (the product: mfufp plus the recorder,
                the markers' client requests and the database)
Programs: the emulator workloads' own timers around the work, so that
Valgrind's start-up is not in the figure: emu_kernels' scalar_fp64,
sse_fp64, avx256 and fma_packed loops (seconds per kernel), emu_dgemm's
OpenBLAS 256^3 cblas_dgemm (one thread); and emu_steps' whole command (a
marked program: 20 steps of 200,000 iterations of AVX2 FMA and scalar
loops) for the recorder, which times nothing itself. The figure is each
configuration's time over bare in the same round, the median over the
rounds, with the smallest and largest.
"""
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import machine  # noqa: E402

build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else 'build')
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
libdir = os.path.join(build, 'src/emulate/valgrind')
record = os.path.join(build, 'src/record/mfu-record')
wl = os.path.join(build, 'tests/workloads')
KERNELS = ('scalar_fp64', 'sse_fp64', 'avx256', 'fma_packed')
env = dict(os.environ, VALGRIND_LIB=libdir, OPENBLAS_NUM_THREADS='1', MFU_NO_CALIBRATE='1')


def prefix(conf, tmp):
    if conf == 'bare':
        return []
    if conf == 'record':
        return [record, '--emulate', '-q', '-o', os.path.join(tmp, 'e.sqlite'), '--']
    return ['valgrind', '--tool=' + conf, '-q', '--trace-children=yes'] + \
        (['--mfu-dir=' + tmp] if conf == 'mfufp' else [])


def timed(cmd):
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if p.returncode:
        sys.exit('%s: exit %d: %s' % (' '.join(cmd), p.returncode, p.stderr[-500:]))
    return time.monotonic() - t0, p.stdout


def main():
    if not os.path.exists(os.path.join(libdir, 'mfufp-amd64-linux')):
        sys.exit('bench_emulate: the tool is not built in %s' % libdir)
    # work sized so that the bare runs take milliseconds, not microseconds
    kernels = [os.path.join(wl, 'wl_emu_kernels'), '2000000']
    dgemm = [os.path.join(wl, 'wl_emu_dgemm'), '256', '256', '256', '4']
    steps = [os.path.join(wl, 'wl_emu_steps'), '--steps', '20', '--n', '200000']
    ratios = {}
    seconds = {}
    confs = ['bare', 'none', 'mfufp']
    for r in range(rounds):
        order = confs[:]
        random.shuffle(order)
        got = {}
        with tempfile.TemporaryDirectory() as tmp:
            for conf in order:
                _, out = timed(prefix(conf, tmp) + kernels)
                for line in out.splitlines():
                    k = json.loads(line)
                    if k['kernel'] in KERNELS and 'seconds' in k:
                        got[(k['kernel'], conf)] = k['seconds']
                _, out = timed(prefix(conf, tmp) + dgemm)
                got[('dgemm 256^3', conf)] = json.loads(out.splitlines()[-1])['seconds'] / 4
            for conf in ['bare', 'mfufp', 'record'] if r % 2 else ['record', 'mfufp', 'bare']:
                got[('emu_steps (command)', conf)] = timed(prefix(conf, tmp) + steps)[0]
        for (prog, conf), t in got.items():
            seconds.setdefault((prog, conf), []).append(t)
            if conf != 'bare':
                ratios.setdefault((prog, conf), []).append(t / got[(prog, 'bare')])

    print(machine('%d rounds' % rounds))
    print('| program | bare | none / bare | mfufp / bare | mfufp / none | record / bare |')
    print('| --- | --- | --- | --- | --- | --- |')
    progs = [k for k in KERNELS] + ['dgemm 256^3', 'emu_steps (command)']
    for prog in progs:
        def cell(conf):
            v = ratios.get((prog, conf))
            if not v:
                return '-'
            return '%.3g (%.3g-%.3g)' % (statistics.median(v), min(v), max(v))
        over_none = '-'
        if (prog, 'none') in seconds:
            v = [a / b for a, b in zip(seconds[(prog, 'mfufp')], seconds[(prog, 'none')])]
            over_none = '%.2f (%.2f-%.2f)' % (statistics.median(v), min(v), max(v))
        bare = statistics.median(seconds[(prog, 'bare')])
        print('| %s | %.3g ms | %s | %s | %s | %s |' % (prog, bare * 1e3, cell('none'), cell('mfufp'), over_none,
                                                       cell('record')))


main()
