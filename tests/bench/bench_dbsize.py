#!/usr/bin/env python3
"""Database bytes per step: how big mfu-record's database grows per step.

usage: bench_dbsize.py [BUILDDIR] [--steps N]

Records, in one invocation, with mfu-record's default settings (counters,
markers, 1 kHz cpu-clock sampling with callchains, context switches):

  empty      wl_steps --steps 0: the reference, a run with no step at all
  steps      wl_steps --steps N --busy-us 1: N steps (default 10,000)
  1 phase    the same with --phases: a phase "compute" in every step
  2 phases   --phases --sleep-us 1 too: "compute" and "wait" (the sleep
             adds a context switch per step)
  demo       wl_mlp: 200 steps of 4 phases, sampled (the demo)

and prints for each the final database (after mfu-record ended, with its
indexes, in rollback-journal mode): its bytes, the bytes per step above the
empty run's, the payload per step (every value of every row above the empty
run's, at 8 bytes a number and the length of a text: what a plain binary
dump would need), their ratio, and the tables and indexes that take the
most space per step (SQLite's dbstat). Copy the output into
docs/performance.md.
"""
import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile


def payload(db):
    """Bytes of every value in every table: 8 per number, a text's length."""
    total = 0
    tables = [r[0] for r in db.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    for t in tables:
        cols = [r[1] for r in db.execute('SELECT * FROM pragma_table_info(?)', (t,))]
        if not cols:
            continue
        expr = ' + '.join("(CASE typeof(\"%s\") WHEN 'null' THEN 0 WHEN 'integer' THEN 8 WHEN 'real' THEN 8"
                          " ELSE length(CAST(\"%s\" AS BLOB)) END)" % (c, c) for c in cols)
        total += db.execute('SELECT coalesce(sum(%s), 0) FROM "%s"' % (expr, t)).fetchone()[0]
    return total


def measure(record, workload, args, path):
    if os.path.exists(path):
        os.unlink(path)
    r = subprocess.run([record, '-q', '-o', path, '--', workload] + args,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        sys.exit('bench_dbsize: recording %s %s failed (exit %d)' % (workload, ' '.join(args), r.returncode))
    for side in ('-wal', '-shm', '-journal'):
        if os.path.exists(path + side):
            sys.exit('bench_dbsize: %s%s left behind: the recording did not finish' % (path, side))
    db = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
    steps = db.execute('SELECT count(*) FROM step').fetchone()[0]
    phases = db.execute('SELECT count(*) FROM phase').fetchone()[0]
    samples = db.execute('SELECT count(*) FROM sample').fetchone()[0]
    by_name = dict(db.execute('SELECT name, sum(pgsize) FROM dbstat GROUP BY name'))
    out = dict(bytes=os.path.getsize(path), steps=steps, phases=phases, samples=samples,
               payload=payload(db), by_name=by_name)
    db.close()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('build', nargs='?', default='build')
    ap.add_argument('--steps', type=int, default=10000)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    record = os.path.join(build, 'src/record/mfu-record')
    wl_steps = os.path.join(build, 'tests/workloads/wl_steps')
    wl_mlp = os.path.join(build, 'tests/workloads/wl_mlp')
    n = str(args.steps)
    runs = [
        ('empty', wl_steps, ['--steps', '0']),
        ('steps', wl_steps, ['--steps', n, '--busy-us', '1']),
        ('1 phase', wl_steps, ['--steps', n, '--busy-us', '1', '--phases']),
        ('2 phases', wl_steps, ['--steps', n, '--busy-us', '1', '--sleep-us', '1', '--phases']),
        ('demo', wl_mlp, ['--quiet']),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        res = {}
        for name, wl, wargs in runs:
            res[name] = measure(record, wl, wargs, os.path.join(tmp, 'db.sqlite'))
    empty = res['empty']
    print('database bytes per step (reference: the empty run, %d bytes, %d bytes of payload)'
          % (empty['bytes'], empty['payload']))
    print('%-9s %6s %7s %8s %10s %10s %11s %6s  %s' % ('run', 'steps', 'phases', 'samples', 'bytes',
                                                   'bytes/step', 'payload/st', 'ratio', 'most bytes per step'))
    for name, _, _ in runs[1:]:
        r = res[name]
        per = (r['bytes'] - empty['bytes']) / r['steps']
        pay = (r['payload'] - empty['payload']) / r['steps']
        grown = sorted(((b - empty['by_name'].get(k, 0)) / r['steps'], k) for k, b in r['by_name'].items())
        top = ', '.join('%s %.0f' % (k, b) for b, k in reversed(grown[-4:]) if b > 0)
        print('%-9s %6d %7d %8d %10d %10.1f %11.1f %6.2f  %s' % (name, r['steps'], r['phases'], r['samples'],
                                                              r['bytes'], per, pay, per / pay, top))


if __name__ == '__main__':
    main()
