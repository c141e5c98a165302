#!/usr/bin/env python3
"""The in-process mode's MFU against the recorded MFU of the same PyTorch
training loop (issue 28, docs/python.md "In-process mode").

usage: bench_inprocess_torch.py BUILDDIR [ROUNDS] [STEPS]

Each round runs tests/workloads/torch_results.py twice, in alternating
order: once with mfu.enable() (libmfu times the steps itself and takes the
peak from the machine profile) and once under mfu-record (the recorder's
peak and per-step figures). The model is 1024 -> 2048 -> 1024 with a batch of
256, one thread: steps of about 50 ms, long enough that a recorder's cost per
step and the VM's scheduling noise are small against them. The first 5
steps of each run are warm-up and left out. Per round: the median per-step
MFU of each mode and their ratio; at the end the median ratio over the
rounds, with the smallest and largest. The target is a ratio within
0.95-1.05 (the in-process figure within 5% of the recorded one). Both modes
must report the same peak; the benchmark fails if they do not.

Needs a Python with torch (MFU_TORCH_PYTHON, or /usr/bin/python3) and a
machine profile (mfu-calibrate) for the in-process mode.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import machine  # noqa: E402

build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else 'build')
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 40
src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
record = os.path.join(build, 'src/record/mfu-record')
script = os.path.join(src, 'tests/workloads/torch_results.py')
py = os.environ.get('MFU_TORCH_PYTHON', '/usr/bin/python3')
WARMUP = 5

env = dict(os.environ, PYTHONPATH=os.path.join(src, 'src/python'),
           MFU_LIBRARY=os.path.join(build, 'src/lib/libmfu.so'), OPENBLAS_NUM_THREADS='1')
args = [py, script, '--steps', str(steps), '--width', '1024', '--batch', '256']


def per_step(out):
    rows = [json.loads(l) for l in out.splitlines() if l.startswith('{"step"')]
    if len(rows) != steps:
        sys.exit('expected %d steps, got %d' % (steps, len(rows)))
    rows = rows[WARMUP:]
    if any(r['mfu'] is None for r in rows):
        sys.exit('a step has no MFU: %s' % rows[0])
    return rows


def run_inprocess():
    p = subprocess.run(args + ['--inprocess'], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode:
        sys.exit('in-process run failed: %s' % p.stderr[-2000:])
    return per_step(p.stdout)


def run_recorded(tmp):
    db = os.path.join(tmp, 'r.sqlite')
    if os.path.exists(db):
        os.unlink(db)
    p = subprocess.run([record, '-q', '-o', db, '--'] + args, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode:
        sys.exit('recorded run failed: %s' % p.stderr[-2000:])
    return per_step(p.stdout)


print(machine('load average %.2f at start' % os.getloadavg()[0]))
ratios = []
with tempfile.TemporaryDirectory() as tmp:
    for i in range(rounds):
        order = (run_inprocess, run_recorded) if i % 2 == 0 else (run_recorded, run_inprocess)
        res = {}
        for f in order:
            res[f.__name__] = f() if f is run_inprocess else f(tmp)
        inp, rec = res['run_inprocess'], res['run_recorded']
        if inp[0]['peak_flops'] != rec[0]['peak_flops']:
            sys.exit('the two modes used different peaks: %s vs %s'
                     % (inp[0]['peak_source'], rec[0]['peak_source']))
        mi = statistics.median(r['mfu'] for r in inp)
        mr = statistics.median(r['mfu'] for r in rec)
        wi = statistics.median(r['wall_ms'] for r in inp)
        wr = statistics.median(r['wall_ms'] for r in rec)
        ratios.append(mi / mr)
        print('round %d: in-process MFU %.4f (step %.2f ms), recorded MFU %.4f (step %.2f ms): '
              'ratio %.3f' % (i + 1, mi, wi, mr, wr, mi / mr))
print('peak: %.4g FLOP/s, %s' % (inp[0]['peak_flops'], inp[0]['peak_source']))
print('in-process MFU / recorded MFU, median per-step MFU of %d steps after %d of warm-up: '
      'median %.3f over %d rounds (min %.3f, max %.3f; target 0.95-1.05)'
      % (steps - WARMUP, WARMUP, statistics.median(ratios), rounds, min(ratios), max(ratios)))
