#!/usr/bin/env python3
"""Benchmark mfu-calibrate against references measured in the same invocation.

usage: bench_calibrate.py [BUILDDIR]      (default: build)

1. Memory: mfu-calibrate's single-core triad next to a plain STREAM triad
   (tests/bench/stream_triad.c, -O3 -march=native, one thread, pinned to the
   same CPU, over the same total size), and their ratio.
2. Time: the wall time of a full calibration (target: under 10 s) and of a
   --quick one (target: under 5 s; the e2e tests no longer bound either).
3. FLOPs: the single-core fp64 FMA figure next to the spec peak of one core,
   with what explains a gap: the clock mfu-calibrate measured around the
   kernel (turbo or the host of a VM running above the nominal frequency),
   the FLOPs per cycle at that clock (an AVX-512 frequency licence lowers the
   clock of heavy 512-bit FMA code below the scalar clock), virtualization.

The binaries come from $MFU_CALIBRATE and $MFU_STREAM_TRIAD, else from
BUILDDIR/src/calibrate/. Not a registered test. Copy the output into
docs/performance.md.
"""
import json
import os
import platform
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARE_OK = 0.95  # TEAM_SHARE_OK, src/calibrate/team.h


def cpu_info():
    name, hyper = platform.processor(), False
    with open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('model name'):
                name = line.split(':', 1)[1].strip()
            if line.startswith('flags') and ' hypervisor' in line:
                hyper = True
    return name, hyper


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, 'build'))
    calibrate = os.environ.get('MFU_CALIBRATE', os.path.join(build, 'src/calibrate/mfu-calibrate'))
    triad_ref = os.environ.get('MFU_STREAM_TRIAD', os.path.join(build, 'src/calibrate/stream_triad'))
    for p in (calibrate, triad_ref):
        if not os.path.exists(p):
            sys.exit('bench_calibrate: %s not found: build first (ninja -C BUILDDIR)' % p)

    name, hyper = cpu_info()
    cpus = sorted(os.sched_getaffinity(0))
    print('machine: %s, %d CPUs allowed (%s), %s, Linux %s, load average %.2f at start'
          % (name, len(cpus), ','.join(map(str, cpus)), 'virtual machine' if hyper else 'bare metal',
             platform.release(), os.getloadavg()[0]))

    t = time.monotonic()
    p = subprocess.run([calibrate, '--format', 'json', '--no-save'], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, check=True)
    wall = time.monotonic() - t
    t = time.monotonic()
    subprocess.run([calibrate, '--quick', '--no-save'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    quick = time.monotonic() - t
    rows = json.loads(p.stdout)
    if p.stderr.strip():
        print('mfu-calibrate said: ' + p.stderr.strip())

    # 1. Triad, one core.
    triad = [r for r in rows if r['kind'] == 'bandwidth' and r['scope'] == 'core'
             and r['kernel'].startswith('triad')][0]
    m = re.search(r'(\d+) MiB', triad['detail'])
    total = int(m.group(1)) << 20 if m else 402653184
    core_cpu = cpus[0]
    ref = subprocess.run([triad_ref, str(total), '10'], stdout=subprocess.PIPE, text=True, check=True,
                         preexec_fn=lambda: os.sched_setaffinity(0, {core_cpu}))
    kv = dict(x.split('=', 1) for x in ref.stdout.split())
    ref_bw = float(kv['triad_bytes_per_s'])
    other = re.search(r'; (triad(?:_nt)?) ([\d.]+) GB/s', triad['detail'])
    print('triad, one core (CPU %d), %d MiB: mfu-calibrate %s %.1f GB/s%s; plain STREAM triad '
          '(-O3 -march=native, best of 10) %.1f GB/s; ratio %.2f'
          % (core_cpu, total >> 20, triad['kernel'], triad['value'] / 1e9,
             ' (%s %s GB/s)' % (other.group(1), other.group(2)) if other else '',
             ref_bw / 1e9, triad['value'] / ref_bw))
    if triad['cpu_share'] < SHARE_OK:
        print('  (the triad shared its CPU with another task: ran %.0f%% of the time)'
              % (100 * triad['cpu_share']))

    # 2. Time.
    print('calibration wall time: %.2f s (target < 10 s); --quick %.2f s (target < 5 s)' % (wall, quick))

    # 2b. Repeatability of the bandwidth figures: a second full run (the
    # e2e test checks only that they are positive: a VM's memory bandwidth
    # moves with the host's other guests and a busy machine's other tasks).
    rows2 = json.loads(subprocess.run([calibrate, '--format', 'json', '--no-save'], stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True, check=True).stdout)
    print('bandwidth, run 1 vs run 2 (GB/s, larger / smaller):')
    for r in rows:
        if r['kind'] != 'bandwidth':
            continue
        r2 = [x for x in rows2 if x['kind'] == 'bandwidth' and x['scope'] == r['scope']
              and x['kernel'].replace('_nt', '') == r['kernel'].replace('_nt', '')][0]
        shared = min(r['cpu_share'], r2['cpu_share']) < SHARE_OK
        print('  %-4s %-9s %6.1f vs %6.1f: %.2fx%s'
              % (r['scope'], r['kernel'], r['value'] / 1e9, r2['value'] / 1e9,
                 max(r['value'], r2['value']) / min(r['value'], r2['value']),
                 '  [CPUs shared]' if shared else ''))

    # 3. fp64 FMA, one core.
    fp64 = max((r for r in rows if r['kind'] == 'flops' and r['dtype'] == 'fp64'
                and r['scope'] == 'core'), key=lambda r: r['value'])
    if fp64['spec'] is None:
        print('fp64 FMA, one core: %.1f GFLOP/s (%s); no spec peak for this CPU'
              % (fp64['value'] / 1e9, fp64['kernel']))
        return
    words = fp64['spec_detail'].split()
    fpc = float(words[words.index('FLOP/cycle') - 1])
    nominal = fp64['spec'] / fpc
    print('fp64 FMA, one core: %s %.1f GFLOP/s vs spec %.1f GFLOP/s (%.2f GHz nominal x %g '
          'FLOP/cycle): ratio %.2f'
          % (fp64['kernel'], fp64['value'] / 1e9, fp64['spec'] / 1e9, nominal / 1e9, fpc,
             fp64['value'] / fp64['spec']))
    why = []
    clock = fp64.get('clock_hz')
    if clock:
        at_clock = fp64['value'] / clock
        why.append('the core clock measured around the kernel (integer add chain) was up to %.2f GHz, '
                   '%.0f%% of nominal%s' % (clock / 1e9, 100 * clock / nominal,
                                            ': the host runs above the nominal frequency (turbo)'
                                            if clock > nominal * 1.02 else ''))
        why.append('at that clock the kernel did %.1f FLOP/cycle of the spec %g (%.0f%%)%s'
                   % (at_clock, fpc, 100 * at_clock / fpc,
                      ': heavy 512-bit FMA code runs at a lower clock than scalar code (AVX-512 '
                      'frequency licence), and on a VM a sibling hyper-thread of another guest can '
                      'share the FMA ports' if at_clock < 0.95 * fpc else ''))
    if hyper:
        why.append('virtual machine: the hypervisor decides the frequency and can deschedule the '
                   'vCPU (steal time, invisible to the guest)')
    if fp64['cpu_share'] < SHARE_OK:
        why.append('another task shared the CPU (the kernel ran %.0f%% of the time)'
                   % (100 * fp64['cpu_share']))
    for w in why:
        print('  - ' + w)

    print('all FLOP kernels, one core | all CPUs (GFLOP/s, ratio to spec):')
    for r in rows:
        if r['kind'] != 'flops' or r['scope'] != 'core':
            continue
        a = [x for x in rows if x['kind'] == 'flops' and x['scope'] == 'all'
             and x['dtype'] == r['dtype'] and x['kernel'] == r['kernel']][0]
        print('  %-4s %-16s %8.1f (%.2f) | %8.1f (%.2f)%s'
              % (r['dtype'], r['kernel'], r['value'] / 1e9, r['ratio'] or 0, a['value'] / 1e9,
                 a['ratio'] or 0, '  [all: CPUs shared, %.0f%%]' % (100 * a['cpu_share'])
                 if a['cpu_share'] < SHARE_OK else ''))
    print('bandwidth, one core | all CPUs (GB/s):')
    for r in rows:
        if r['kind'] != 'bandwidth' or r['scope'] != 'core':
            continue
        base = r['kernel'].replace('_nt', '')
        a = [x for x in rows if x['kind'] == 'bandwidth' and x['scope'] == 'all'
             and x['kernel'].replace('_nt', '') == base][0]
        print('  %-9s %6.1f | %-9s %6.1f%s' % (r['kernel'], r['value'] / 1e9, a['kernel'],
                                               a['value'] / 1e9,
                                               '  (ratio to spec %.3f)' % a['ratio'] if a['ratio']
                                               else ''))


if __name__ == '__main__':
    main()
