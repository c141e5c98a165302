#!/usr/bin/env python3
"""mfu-report --trace and --diff, end to end.

--trace: on a fixture database with known steps, phases (nested, odd names,
never ended), threads, off-CPU intervals and samples, the trace-event JSON
parses and holds exactly one slice per complete step and phase at the
database's times (exact, in microseconds), the off-CPU slices, the per-step
counters, every cpu-clock sample and the thread names; then on a recording
of the demo workload.

--diff: fixture runs of 40 steps with random-normal phase times (fixed
seeds): a run against itself changes nothing; a run whose phase B is 25%
longer is slower in B and in no other phase; the means, changes and
intervals agree with a computation here (its own t quantile, by Simpson's
rule on the t density); the formats, their columns (--columns), --skip-steps,
few steps, a phase in one run only, bad arguments. The intervals are batch means' on the log scale
(docs/report.md, "--diff"): recomputed here from the per-step values.

Run through meson (`meson test -C BUILD trace_diff`) or by hand:

    MFU_REPORT=build/src/report/mfu-report python3 tests/e2e/test_trace_diff.py -v
"""
import csv
import io
import json
import math
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_report import REPORT, START_NS, PEAK_FLOPS, PEAK_BW, NCPU, Fixture, schema_sql, run_sql  # noqa: E402
from mfutest import section_verdict  # noqa: E402

MS = 1_000_000
DIFF_COLUMNS = ['kind', 'name', 'unit', 'base_n', 'new_n', 'base', 'new', 'base_sd', 'new_sd', 'change',
                'change_lo', 'change_hi', 'delta', 'delta_low', 'delta_high', 'share', 'min_effect', 'batches',
                'preempted', 'verdict']


def run(*args, check=True):
    r = subprocess.run([REPORT] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if check and r.returncode != 0:
        raise AssertionError('mfu-report %s exited %d: %s' % (' '.join(args), r.returncode,
                                                               r.stderr.decode(errors='replace')))
    return r


def us(ns):
    """Nanoseconds from the run's start as the trace's microseconds."""
    return (ns - START_NS) / 1000


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(REPORT, os.X_OK):
            raise unittest.SkipTest('mfu-report not found at %s (set MFU_REPORT)' % REPORT)
        cls.tmp = tempfile.mkdtemp(prefix='mfu-trace-diff-')

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)


# ---- --trace ----

def trace_fixture(path):
    """test_report's Fixture (10 steps, one never ended; forward, backward,
    attention nested in forward, odd names, a load phase outside steps, a
    phase never ended) plus two threads, an exec, callchains, off-CPU
    intervals and samples."""
    fx = Fixture(path)
    db = sqlite3.connect(path)
    db.executescript("""
        INSERT INTO thread (tid, pid, ppid, comm, start_ns, end_ns, cpu_ns) VALUES
          (42, 42, 1, 'app', NULL, NULL, 1000000), (43, 42, 42, 'loader', 5000100000, NULL, 2000);
        INSERT INTO exec (time_ns, pid, comm) VALUES (5000000000, 42, 'app');
        INSERT INTO symbol (id, dso, name, kind, class) VALUES
          (1, '/lib/libc.so.6', 'read', 'user', 'neutral'),
          (2, '/app', 'load_batch', 'user', 'user'),
          (3, '/lib/libblas.so', 'sgemm_kernel', 'user', 'compute'),
          (4, '/usr/lib/libfoo.so.1', NULL, 'unknown', NULL);
        INSERT INTO stack (id, pid, nframes, leaf, compute, class_symbol) VALUES
          (1, 42, 2, 1, 0, 2), (2, 42, 2, 3, 1, 3), (3, 42, 1, 4, 0, NULL), (4, 42, 2, 1, 1, 3);
        INSERT INTO stack_frame (stack, depth, ip, kernel, symbol) VALUES
          (1, 0, 100, 0, 1), (1, 1, 200, 0, 2), (2, 0, 300, 0, 3), (2, 1, 200, 0, 2), (3, 0, 400, 0, 4),
          (4, 0, 100, 0, 1), (4, 1, 300, 0, 3);
    """)
    s1 = fx.steps[1]
    offcpu = [  # (tid, start, dur, kind, stack)
        (42, s1['begin_ns'] + 2 * MS + 17, 3 * MS + 5, 'blocked', 1),
        (43, s1['begin_ns'] + 1 * MS + 3, 250_001, 'runnable', None),
    ]
    for k, (tid, b, d, kind, stack) in enumerate(offcpu):
        db.execute("INSERT INTO offcpu (id, pid, tid, start_ns, end_ns, dur_ns, kind, stack, where_source)"
                   " VALUES (?, 42, ?, ?, ?, ?, ?, ?, 'switch_sample')", (k + 1, tid, b, b + d, d, kind, stack))
    samples = []  # (time, tid, kind, kernel, stack, class)
    rng = random.Random(5)
    for i in range(300):
        st = rng.choice([2, 3, None, 4])
        samples.append((START_NS + rng.randrange(0, 2_000_000_000), rng.choice([42, 43]), 0,
                        1 if st is None else 0, st,
                        {2: 'compute', 3: 'unclassified', None: 'kernel', 4: 'compute'}[st]))
    samples.append((START_NS + 5, 42, 1, 0, 1, 'dispatch'))   # a switch-out sample: not a cpu-clock one
    db.executemany("INSERT INTO sample (time_ns, pid, tid, cpu, kind, kernel, stack, class)"
                   " VALUES (?, 42, ?, 0, ?, ?, ?, ?)", samples)
    db.commit()
    db.close()
    return fx, offcpu, [s for s in samples if s[2] == 0]


class TraceTest(Base):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.db = os.path.join(cls.tmp, 'trace.sqlite')
        cls.fx, cls.offcpu, cls.samples = trace_fixture(cls.db)
        cls.path = os.path.join(cls.tmp, 'trace.json')
        r = run('--db', cls.db, '--trace', cls.path)
        assert r.stdout == b'' and r.stderr == b'', r
        with open(cls.path, encoding='utf-8') as f:
            cls.trace = json.load(f)
        cls.events = cls.trace['traceEvents']

    def rows(self, sql):
        db = sqlite3.connect(self.db)
        db.row_factory = sqlite3.Row
        try:
            return [dict(r) for r in db.execute(sql)]
        finally:
            db.close()

    def of(self, ph, cat=None):
        return [e for e in self.events if e['ph'] == ph and (cat is None or e.get('cat') == cat)]

    def test_object(self):
        self.assertEqual(set(self.trace), {'traceEvents', 'stackFrames', 'displayTimeUnit', 'metadata'})
        self.assertEqual(self.trace['displayTimeUnit'], 'ns')
        md = self.trace['metadata']
        self.assertEqual(md['run']['start_ns'], START_NS)
        self.assertEqual(md['run']['peak_flops'], PEAK_FLOPS)
        self.assertEqual(md['run']['skipped_steps'], 0)
        ev = md['events']
        self.assertEqual(ev['steps'], len(self.of('X', 'step')))
        self.assertEqual(ev['samples'], len(self.samples))
        self.assertEqual(sum(v for k, v in ev.items()), len(self.events))
        for e in self.events:
            self.assertIn(e['ph'], 'XiCM', e)
            if e['ph'] != 'M':
                self.assertIsInstance(e['ts'], (int, float), e)

    def test_one_slice_per_complete_step(self):
        got = self.of('X', 'step')
        self.assertEqual(len(got), len(self.fx.steps))
        for s, e in zip(self.fx.steps, got):
            self.assertEqual(e['name'], 'step %d' % s['step'])
            self.assertEqual((e['pid'], e['tid']), (42, 42))
            self.assertEqual(e['ts'], us(s['begin_ns']))           # exact: ns precision
            self.assertEqual(e['dur'], s['wall_ns'] / 1000)
            want = self.fx.step_expect(s)
            a = e['args']
            self.assertEqual(a['step'], s['step'])
            for k in ('mfu', 'mbu', 'model_flops', 'cpu_util', 'wall_ms', 'cpu_ms'):
                if want[k] is None:
                    self.assertNotIn(k, a, (s['step'], k))
                else:
                    self.assertTrue(math.isclose(a[k], want[k], rel_tol=1e-12), (s['step'], k, a[k], want[k]))
            self.assertEqual(a.get('flops_source'), want['flops_source'])
        # the fixture's times are not whole microseconds: ns precision kept
        self.assertTrue(any(e['ts'] != int(e['ts']) for e in got))

    def test_never_ended_marked(self):
        inc = [e for e in self.of('i') if 'incomplete' in e.get('cat', '')]
        names = sorted(e['name'] for e in inc)
        self.assertEqual(names, ['forward (never ended)', 'step 10 (never ended)'])
        self.assertFalse(any('never ended' in e['name'] for e in self.of('X')))

    def test_one_slice_per_complete_phase(self):
        rows = self.rows("SELECT * FROM phase WHERE complete = 1 ORDER BY id")
        got = self.of('X', 'phase')
        self.assertEqual(len(got), len(rows))
        by_id = {e['args']['id']: e for e in got}
        self.assertEqual(sorted(by_id), [p['id'] for p in rows])
        for p in rows:
            e = by_id[p['id']]
            self.assertEqual(e['name'], p['name'])    # odd names come back as stored
            self.assertEqual((e['pid'], e['tid']), (p['pid'], p['tid']))
            self.assertEqual(e['ts'], us(p['begin_ns']))
            self.assertEqual(e['dur'], p['wall_ns'] / 1000)
            self.assertEqual(e['args']['id'], p['id'])
            self.assertEqual(e['args'].get('step'), p['step'])
            self.assertEqual(e['args']['depth'], p['depth'])
        # nested phases lie inside their parents
        for p in rows:
            if p['depth'] > 0:
                parent = next(q for q in rows if q['depth'] == 0 and q['step'] == p['step'] and q['name'] == 'forward')
                e, pe = by_id[p['id']], by_id[parent['id']]
                self.assertTrue(pe['ts'] <= e['ts'] and e['ts'] + e['dur'] <= pe['ts'] + pe['dur'])

    def test_slices_in_begin_order_outer_first(self):
        # a viewer nests a slice in the one before it when they begin together
        xs = [e for e in self.events if e['ph'] == 'X' and e['cat'] in ('step', 'phase')]
        for a, b in zip(xs, xs[1:]):
            self.assertLessEqual(a['ts'], b['ts'])
            if a['ts'] == b['ts']:
                self.assertGreaterEqual(a['dur'], b['dur'])
        first = [e for e in xs if e['ts'] == us(self.fx.steps[0]['begin_ns'])]
        self.assertEqual(first[0]['name'], 'step 0')

    def test_offcpu_slices(self):
        got = self.of('X', 'offcpu')
        self.assertEqual(len(got), len(self.offcpu))
        for (tid, b, d, kind, stack), e in zip(self.offcpu, got):
            self.assertEqual(e['tid'], tid)
            self.assertEqual(e['ts'], us(b))
            self.assertEqual(e['dur'], d / 1000)
            self.assertEqual(e['args']['kind'], kind)
            if stack:
                self.assertEqual(e['name'], 'blocked: read')
                self.assertEqual(e['args']['where'], 'read <- load_batch')
            else:
                self.assertEqual(e['name'], kind)
                self.assertNotIn('where', e['args'])

    def test_counters(self):
        steps = self.fx.steps
        for track, key in (('MFU', 'mfu'), ('MBU', 'mbu'), ('CPU util', 'cpu_util'),
                           ('model FLOP/s', 'model_flops_per_s'), ('model bytes/s', 'model_bytes_per_s')):
            got = sorted((e['ts'], e['args']['value']) for e in self.of('C') if e['name'] == track)
            want = []
            for s in steps:
                v = self.fx.step_expect(s)[key]
                if v is not None:   # the value over the step, 0 after it (the steps have gaps)
                    want += [(us(s['begin_ns']), v), (us(s['begin_ns'] + s['wall_ns']), 0)]
            want.sort()
            self.assertEqual(len(got), len(want), track)
            for (gt, gv), (wt, wv) in zip(got, want):
                self.assertEqual(gt, wt, track)
                self.assertTrue(math.isclose(gv, wv, rel_tol=1e-12), (track, gv, wv))
            for e in self.of('C'):
                self.assertEqual(e['pid'], 42)
        # no hardware counters in this fixture: no such track
        self.assertFalse([e for e in self.of('C') if e['name'] == 'HW FLOP/s'])

    def test_samples(self):
        got = self.of('i', 'sample')
        self.assertEqual(len(got), len(self.samples))
        names = {2: 'sgemm_kernel', 3: '[libfoo.so.1]', None: '[kernel]', 4: 'sgemm_kernel'}
        want = sorted((us(t), tid, names[st], cls) for t, tid, _, _, st, cls in self.samples)
        self.assertEqual(sorted((e['ts'], e['tid'], e['name'], e['args']['class']) for e in got), want)
        # each sample's phase by the process's timeline (issue 23, item 4):
        # its own thread's innermost complete phase open then, else that of
        # the thread that began the first step; phase_tid when not its own
        # (the fixture's phases overlap without parents, which no recording
        # writes: the innermost is the thread's last phase begun, or the
        # nearest of its parents, that is still open, as dispatch.sql walks)
        phases = {r['id']: r for r in self.rows('SELECT id, name, tid, begin_ns, end_ns, complete, parent FROM phase')}
        marker = self.rows('SELECT tid FROM step ORDER BY step LIMIT 1')[0]['tid']

        def innermost(tid, t):
            before = [p for p in phases.values() if p['tid'] == tid and p['begin_ns'] <= t]
            p = max(before, key=lambda p: (p['begin_ns'], p['id'])) if before else None
            while p and not (p['complete'] == 1 and p['end_ns'] > t):
                p = phases.get(p['parent'])
            return (p['name'], p['tid']) if p else None
        want_phase = {}
        for t, tid, _, _, _, _ in self.samples:
            p = innermost(tid, t) or innermost(marker, t)
            want_phase[(us(t), tid)] = (p[0], p[1] if p[1] != tid else None) if p else (None, None)
        self.assertEqual({(e['ts'], e['tid']): (e['args'].get('phase'), e['args'].get('phase_tid')) for e in got},
                         want_phase)
        # the fixture has both: samples of the loader thread (which marks
        # nothing) in the app thread's phases, and samples outside phases
        self.assertTrue([k for k, v in want_phase.items() if v[1] is not None])
        self.assertTrue([k for k, v in want_phase.items() if v[0] is None])
        for e in got:
            self.assertEqual(e['s'], 't')
            if e['name'] == 'sgemm_kernel' and e['args']['stack'] == 4:
                self.assertEqual(e['args']['leaf'], 'read')   # the innermost frame, when not the named one
                self.assertEqual(e['args']['dso'], '/lib/libblas.so')

    def test_stack_frames(self):
        """Each sample with a callchain names its innermost frame with
        "sf"; following "parent" from there gives the stack's frames,
        innermost to outermost, as stack_frame stores them; frames shared
        by two callchains (load_batch under stacks 1 and 2) are one node."""
        frames = self.trace['stackFrames']
        names = {1: 'read', 2: 'load_batch', 3: 'sgemm_kernel', 4: '[libfoo.so.1]'}
        chains = {}
        for r in self.rows('SELECT stack, symbol FROM stack_frame ORDER BY stack, depth'):
            chains.setdefault(r['stack'], []).append(names[r['symbol']])
        got = self.of('i', 'sample')
        seen = 0
        for e in got:
            st = e['args'].get('stack')
            if st is None:
                self.assertNotIn('sf', e)
                continue
            chain, k = [], e['sf']
            while k is not None:
                chain.append(frames[k]['name'])
                k = frames[k].get('parent')
            self.assertEqual(chain, chains[st], e)
            seen += 1
        self.assertGreater(seen, 0)
        # read <- load_batch, sgemm_kernel <- load_batch, read <- sgemm_kernel,
        # [libfoo.so.1]: load_batch once as an outermost frame
        self.assertEqual(sorted(f['name'] for f in frames.values() if 'parent' not in f),
                         ['[libfoo.so.1]', 'load_batch', 'sgemm_kernel'])
        self.assertEqual(len(frames), 6)
        self.assertEqual({f['category'] for f in frames.values()}, {'libc.so.6', 'app', 'libblas.so', 'libfoo.so.1'})

    def test_thread_names(self):
        m = {(e['name'], e['pid'], e['tid']): e['args']['name'] for e in self.of('M')}
        self.assertEqual(m, {('process_name', 42, 42): 'app', ('thread_name', 42, 42): 'app',
                             ('thread_name', 42, 43): 'loader'})

    def test_stdout_same_as_file(self):
        r = run('--db', self.db, '--trace', '-')
        with open(self.path, 'rb') as f:
            self.assertEqual(r.stdout, f.read())

    def test_skip_steps(self):
        r = run('--db', self.db, '--trace', '-', '--skip-steps', '3')
        t = json.loads(r.stdout)
        steps = [e['args']['step'] for e in t['traceEvents'] if e.get('cat') == 'step']
        self.assertEqual(steps, list(range(3, 10)))
        self.assertEqual(t['metadata']['run']['skipped_steps'], 3)

    def test_errors(self):
        d = tempfile.mkdtemp(dir=self.tmp)
        out = os.path.join(d, 't.json')
        # a database that cannot be read: exit 1, no trace file created
        r = run('--db', os.path.join(d, 'nope.sqlite'), '--trace', out, check=False)
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.startswith(b'mfu-report: '), r.stderr)
        self.assertFalse(os.path.exists(out))
        # a trace that cannot be written
        for bad in (os.path.join(d, 'no', 'such', 'dir.json'), '/dev/full'):
            r = run('--db', self.db, '--trace', bad, check=False)
            self.assertEqual(r.returncode, 1, bad)
            err = r.stderr.decode()
            self.assertTrue(err.startswith('mfu-report: %s: ' % bad) and 'cannot write' in err, err)
            self.assertEqual(len(err.splitlines()), 1, err)
        # bad usage: exit 2, nothing written
        for args in (['--trace'], ['--trace', out, 'steps'], ['--trace', out, '--format', 'csv'],
                     ['--trace', out, '--diff', self.db, self.db], ['--trace', ''], ['--trace', out, '--list']):
            r = run('--db', self.db, *args, check=False)
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(r.stdout, b'', args)
            self.assertTrue(r.stderr.startswith(b'mfu-report: '), args)
            self.assertFalse(os.path.exists(out), args)


class TraceRecordedTest(Base):
    """A recording of the demo workload: the trace has every complete step
    and phase of the database at its times, its samples and off-CPU
    intervals, and thread names."""

    def test_worker_threads_named(self):
        """Threads a program starts (OpenMP's workers here) have their
        creator's comm until they set their own, so the trace names every
        thread (issue 26, item 5)."""
        rec, wl = os.environ.get('MFU_RECORD'), os.environ.get('MFU_WL_OMP')
        if not rec or not wl:
            self.skipTest('MFU_RECORD / MFU_WL_OMP not set (run through meson test)')
        db = os.path.join(self.tmp, 'omp.sqlite')
        r = subprocess.run([rec, '--no-calibrate', '-q', '-o', db, '--', wl], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=120, env=dict(os.environ, OMP_NUM_THREADS='3'))
        self.assertEqual(r.returncode, 0, r.stdout)
        con = sqlite3.connect(db)
        threads = con.execute('SELECT tid, comm FROM thread').fetchall()
        con.close()
        self.assertGreaterEqual(len(threads), 2, threads)
        self.assertEqual([c for _, c in threads if not c], [], threads)
        t = json.loads(run('--db', db, '--trace', '-').stdout)
        named = {e['tid']: e['args']['name'] for e in t['traceEvents']
                 if e['ph'] == 'M' and e['name'] == 'thread_name'}
        self.assertEqual(named, dict(threads))

    def test_demo(self):
        rec, wl = os.environ.get('MFU_RECORD'), os.environ.get('MFU_WL_MLP')
        if not rec or not wl:
            self.skipTest('MFU_RECORD / MFU_WL_MLP not set (run through meson test)')
        db = os.path.join(self.tmp, 'demo.sqlite')
        r = subprocess.run([rec, '--no-calibrate', '-q', '-o', db, '--', wl, '--quiet', '--steps', '20'],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120,
                           env=dict(os.environ, MFU_NO_CALIBRATE='1'))
        self.assertEqual(r.returncode, 0, r.stdout)
        t = json.loads(run('--db', db, '--trace', '-').stdout)
        con = sqlite3.connect(db)
        start = con.execute('SELECT start_ns FROM run').fetchone()[0]
        steps = con.execute('SELECT step, tid, begin_ns, wall_ns FROM step WHERE complete = 1 ORDER BY step').fetchall()
        phases = con.execute('SELECT name, tid, begin_ns, wall_ns FROM phase WHERE complete = 1 ORDER BY id').fetchall()
        nsamples = con.execute('SELECT count(*) FROM sample WHERE kind = 0').fetchone()[0]
        noff = con.execute('SELECT count(*) FROM offcpu').fetchone()[0]
        tids = {r[0] for r in con.execute('SELECT tid FROM thread WHERE comm IS NOT NULL')}
        con.close()
        ev = t['traceEvents']
        self.assertEqual(len(steps), 20)
        self.assertEqual([('step %d' % s, tid, (b - start) / 1000, w / 1000) for s, tid, b, w in steps],
                         [(e['name'], e['tid'], e['ts'], e['dur']) for e in ev if e.get('cat') == 'step'])
        self.assertEqual([(n, tid, (b - start) / 1000, w / 1000) for n, tid, b, w in phases],
                         [(e['name'], e['tid'], e['ts'], e['dur']) for e in ev if e.get('cat') == 'phase'])
        self.assertGreater(nsamples, 0)
        self.assertEqual(nsamples, len([e for e in ev if e.get('cat') == 'sample']))
        self.assertEqual(noff, len([e for e in ev if e.get('cat') == 'offcpu']))
        self.assertEqual(tids, {e['tid'] for e in ev if e['ph'] == 'M' and e['name'] == 'thread_name'})
        self.assertTrue(any(e['ph'] == 'C' and e['name'] == 'MFU' and e['args']['value'] > 0 for e in ev))


# ---- --diff ----

MEANS = {'A': (10 * MS, 1 * MS), 'B': (20 * MS, 2 * MS), 'C': (5 * MS, 0.5 * MS)}


def diff_run(path, seed, nsteps=40, slow=None, factor=1.25, names=('A', 'B', 'C'), peak=True):
    """A run of @nsteps steps, each the phases @names one after the other,
    with random-normal times (MEANS; @slow's mean and spread times
    @factor), 1 GFLOP declared per step. Returns the per-step values:
    {('step', 'wall_ms'): [...], ('step', 'mfu'): [...], ('phase', N): [...]}."""
    rng = random.Random(seed)
    db = sqlite3.connect(path)
    db.executescript(schema_sql())
    db.execute("INSERT INTO run (id, mfu_version, command, cwd, start_unix_ns, start_ns, end_ns, host,"
               " ncpu_affinity, ncpu, dtype, peak_flops, peak_flops_source, peak_bw, peak_bw_source,"
               " target_pid, exit_status, lost_records, state)"
               " VALUES (1, '0.1.0', '[\"./app\"]', '/tmp', 0, ?, ?, 'host', 4, ?, 'fp32', ?, 'user', ?,"
               " 'user', 42, 0, 0, 'complete')",
               (START_NS, START_NS + 10**12, NCPU, PEAK_FLOPS if peak else None, PEAK_BW))
    vals = {('step', 'wall_ms'): [], ('step', 'mfu'): []}
    t, pid = START_NS + MS, 0
    for i in range(nsteps):
        b = pt = t
        for name in names:
            mu, sd = MEANS[name]
            if name == slow:
                mu, sd = mu * factor, sd * factor
            w = max(1000, int(rng.gauss(mu, sd)))
            db.execute("INSERT INTO phase (id, step, name, pid, tid, depth, begin_ns, end_ns, wall_ns, complete)"
                       " VALUES (?, ?, ?, 42, 42, 0, ?, ?, ?, 1)", (pid, i, name, pt, pt + w, w))
            pid += 1
            vals.setdefault(('phase', name), []).append(w / 1e6)
            pt += w + 1000
        wall = pt - b
        db.execute("INSERT INTO step (step, pid, tid, end_tid, begin_ns, end_ns, wall_ns, model_flops, cpu_ns,"
                   " complete) VALUES (?, 42, 42, 42, ?, ?, ?, 1e9, ?, 1)", (i, b, pt, wall, wall))
        vals[('step', 'wall_ms')].append(wall / 1e6)
        if peak:
            vals[('step', 'mfu')].append(1e9 / (wall / 1e9 * PEAK_FLOPS))
        t = pt + rng.randrange(100_000, 300_000)
    db.commit()
    db.close()
    return vals


def t_quantile(p, df):
    """Student's t quantile by bisection on the CDF, the density integrated
    by Simpson's rule: independent of mfu-report's incomplete beta."""
    if math.isinf(df):
        return statistics.NormalDist().inv_cdf(p)
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)

    def density(x):
        return c * (1 + x * x / df) ** (-(df + 1) / 2)

    def cdf(t, n=2000):
        h = t / n
        s = density(0) + density(t)
        s += 4 * sum(density((2 * k - 1) * h) for k in range(1, n // 2 + 1))
        s += 2 * sum(density(2 * k * h) for k in range(1, n // 2))
        return 0.5 + s * h / 3

    lo, hi = 0.0, 1.0
    while cdf(hi) < p:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        if cdf(mid) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def batch_se2(x):
    """(batches, squared standard error of the mean) by batch means: 10
    batches of consecutive values from 20 on, batches of 2 from 4."""
    n = len(x)
    k = 10 if n >= 20 else n // 2 if n >= 4 else n
    means = [statistics.fmean(x[j * n // k:(j + 1) * n // k]) for j in range(k)]
    return k, statistics.variance(means) / k


def ratio_ci(base, new):
    """(change, lo, hi) of new / base - 1, the 95% interval on the log
    scale from batch means (delta method, Welch-Satterthwaite df)."""
    mb, mn = statistics.fmean(base), statistics.fmean(new)
    (kb, vb), (kn, vn) = batch_se2(base), batch_se2(new)
    lb, ln = vb / mb ** 2, vn / mn ** 2
    df = (lb + ln) ** 2 / (lb ** 2 / (kb - 1) + ln ** 2 / (kn - 1))
    t = t_quantile(0.975, df)
    r, se = math.log(mn / mb), math.sqrt(lb + ln)
    return mn / mb - 1, math.expm1(r - t * se), math.expm1(r + t * se)


class DiffTest(Base):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.base = os.path.join(cls.tmp, 'base.sqlite')
        cls.new = os.path.join(cls.tmp, 'new.sqlite')
        cls.base_vals = diff_run(cls.base, seed=1)
        cls.new_vals = diff_run(cls.new, seed=2, slow='B')

    def diff(self, base, new, *args):
        r = run('--diff', base, new, '--format', 'json', *args)
        return {(row['kind'], row['name']): row for row in json.loads(r.stdout)}

    def test_against_itself_no_change(self):
        rows = self.diff(self.base, self.base)
        self.assertEqual(set(rows), {('step', 'wall_ms'), ('step', 'mfu'), ('phase', 'A'), ('phase', 'B'),
                                     ('phase', 'C')})   # no samples: no breakdown rows
        for key, row in rows.items():
            self.assertEqual(row['verdict'], 'no significant change', key)
            self.assertEqual(row['change'], 0, key)
            self.assertEqual(row['base'], row['new'], key)
            self.assertLess(row['change_lo'], 0, key)
            self.assertGreater(row['change_hi'], 0, key)
            self.assertEqual((row['base_n'], row['new_n']), (40, 40), key)

    def test_runs_without_steps_side_by_side(self):
        """Unmarked runs (no complete step): no step-by-step comparison,
        but the whole runs' time and library FLOPs side by side, with no
        verdict (one value each)."""
        paths = []
        for i, (end, lib) in enumerate(((2000000000, 4e9), (1000000000, 4e9))):
            p = os.path.join(self.tmp, 'unmarked-%d.sqlite' % i)
            shutil.copy(self.base, p)
            db = sqlite3.connect(p)
            db.execute('UPDATE step SET complete = 0')
            db.execute('UPDATE run SET end_ns = start_ns + ?, lib_flops = ?', (end, lib))
            db.commit()
            db.close()
            paths.append(p)
        r = run('--diff', paths[0], paths[1])
        verdict, _ = section_verdict(r.stdout.decode() if isinstance(r.stdout, bytes) else r.stdout)
        self.assertIn('No complete step in either run: nothing to compare step by step', verdict)
        self.assertIn('wall time 2 s -> 1 s (-50.0%)', verdict)
        self.assertIn('library FLOP 4.00 GFLOP -> 4.00 GFLOP (+0.0%)', verdict)
        self.assertIn('run MFU 0.1% -> 0.2% (+100.0%)', verdict)   # 4 GFLOP over 2 s, 1 s of a 2 TFLOP/s peak
        self.assertIn('no interval', verdict)

    def test_slower_phase_named(self):
        rows = self.diff(self.base, self.new)
        verdicts = {k: r['verdict'] for k, r in rows.items()}
        self.assertEqual(verdicts, {('step', 'wall_ms'): 'slower', ('step', 'mfu'): 'lower',
                                    ('phase', 'A'): 'no significant change', ('phase', 'B'): 'slower',
                                    ('phase', 'C'): 'no significant change'})
        b = rows[('phase', 'B')]
        self.assertTrue(b['change_lo'] < 0.25 < b['change_hi'], b)   # the true change is inside
        self.assertEqual(rows[('step', 'mfu')]['unit'], 'fraction')
        self.assertEqual(rows[('phase', 'B')]['unit'], 'ms')

    def test_numbers(self):
        rows = self.diff(self.base, self.new)
        for key, row in rows.items():
            base, new = self.base_vals[key], self.new_vals[key]
            change, lo, hi = ratio_ci(base, new)
            for col, want in (('base', statistics.fmean(base)), ('new', statistics.fmean(new)),
                              ('base_sd', statistics.stdev(base)), ('new_sd', statistics.stdev(new)),
                              ('change', change)):
                self.assertTrue(math.isclose(row[col], want, rel_tol=1e-9), (key, col, row[col], want))
            # the t quantile here is Simpson's: agree to 1e-8 of the interval
            for col, want in (('change_lo', lo), ('change_hi', hi)):
                self.assertTrue(math.isclose(row[col], want, rel_tol=1e-8, abs_tol=1e-10),
                                (key, col, row[col], want))
            # the change per step in the row's unit, its interval the
            # relative one times the base mean, its share of the step's
            mb, mn = statistics.fmean(base), statistics.fmean(new)
            wall_b = statistics.fmean(self.base_vals[('step', 'wall_ms')])
            wall_d = statistics.fmean(self.new_vals[('step', 'wall_ms')]) - wall_b
            self.assertTrue(math.isclose(row['delta'], mn - mb, rel_tol=1e-9), key)
            self.assertTrue(math.isclose(row['delta_low'], mb * lo, rel_tol=1e-8), key)
            self.assertTrue(math.isclose(row['delta_high'], mb * hi, rel_tol=1e-8), key)
            self.assertEqual(row['batches'], 10, key)
            if key == ('step', 'mfu'):
                self.assertIsNone(row['share'])
                self.assertTrue(math.isclose(row['min_effect'], 0.02 * mb, rel_tol=1e-9))
            else:
                self.assertTrue(math.isclose(row['share'], (mn - mb) / wall_d, rel_tol=1e-9), key)
                self.assertTrue(math.isclose(row['min_effect'], 0.02 * wall_b, rel_tol=1e-9), key)

    def test_phase_time_is_the_sum_per_step(self):
        # two occurrences of A in a step count as one per-step total; a step
        # without C counts 0 ms of it
        p = os.path.join(self.tmp, 'twice.sqlite')
        diff_run(p, seed=3, nsteps=4)
        db = sqlite3.connect(p)
        db.execute("INSERT INTO phase (id, step, name, pid, tid, depth, begin_ns, end_ns, wall_ns, complete)"
                   " SELECT 1000 + id, step, name, pid, 43, depth, begin_ns, end_ns, 2 * wall_ns, 1 FROM phase"
                   " WHERE name = 'A'")
        db.execute("DELETE FROM phase WHERE name = 'C' AND step = 0")
        db.commit()
        a = [3 * w for (w,) in db.execute("SELECT wall_ns / 1e6 FROM phase WHERE name = 'A' AND tid = 42 ORDER BY step")]
        c = [0] + [w for (w,) in db.execute("SELECT wall_ns / 1e6 FROM phase WHERE name = 'C' ORDER BY step")]
        db.close()
        rows = self.diff(p, p)
        self.assertTrue(math.isclose(rows[('phase', 'A')]['base'], statistics.fmean(a), rel_tol=1e-12))
        self.assertTrue(math.isclose(rows[('phase', 'C')]['base'], statistics.fmean(c), rel_tol=1e-12))
        self.assertEqual(rows[('phase', 'C')]['base_n'], 4)
        # the zero counts in the change and its interval too
        row = self.diff(p, self.base)[('phase', 'C')]
        change, lo, hi = ratio_ci(c, self.base_vals[('phase', 'C')])
        self.assertTrue(math.isclose(row['base_sd'], statistics.stdev(c), rel_tol=1e-9))
        for col, want in (('change', change), ('change_lo', lo), ('change_hi', hi)):
            self.assertTrue(math.isclose(row[col], want, rel_tol=1e-8), (col, row[col], want))

    def test_net_of_preemption(self):
        # the same steps, NEW's thread preempted 3 ms in phase B of every
        # step: with switch records in both runs the times are compared net
        # of it (no change), the preemption is in its own column, and the
        # breakdown's runnable row says the machine was busier
        quiet = os.path.join(self.tmp, 'quiet.sqlite')
        busy = os.path.join(self.tmp, 'busy.sqlite')
        vals = diff_run(quiet, seed=9)
        shutil.copy(quiet, busy)
        for path in (quiet, busy):
            db = sqlite3.connect(path)
            db.execute("INSERT INTO sampling (freq, user_only, switch_samples) VALUES (0, 0, 0)")
            db.commit()
            db.close()
        db = sqlite3.connect(busy)
        pre = 3 * MS
        phases = db.execute("SELECT step, begin_ns, end_ns FROM phase WHERE name = 'B' ORDER BY step").fetchall()
        for k, (step, b, e) in enumerate(phases):
            # shift the phase and everything after it in the step by 3 ms
            db.execute("UPDATE phase SET begin_ns = begin_ns + ?, end_ns = end_ns + ? WHERE step = ? AND begin_ns > ?",
                       (pre, pre, step, b))
            db.execute("UPDATE phase SET end_ns = end_ns + ?, wall_ns = wall_ns + ? WHERE step = ? AND name = 'B'",
                       (pre, pre, step))
            db.execute("UPDATE step SET end_ns = end_ns + ?, wall_ns = wall_ns + ? WHERE step = ?", (pre, pre, step))
            db.execute("INSERT INTO offcpu (id, pid, tid, start_ns, end_ns, dur_ns, kind) VALUES (?, 42, 42, ?, ?, ?,"
                       " 'runnable')", (k, b + 1000, b + 1000 + pre, pre))
        db.commit()
        db.close()
        rows = self.diff(quiet, busy)
        for key in (('step', 'wall_ms'), ('phase', 'B'), ('step', 'mfu')):
            row = rows[key]
            self.assertEqual(row['verdict'], 'no significant change', key)
            self.assertTrue(math.isclose(row['base'], row['new'], rel_tol=1e-9), (key, row))
            self.assertTrue(math.isclose(row['preempted'], 3.0, rel_tol=1e-9), (key, row))
        self.assertTrue(math.isclose(rows[('step', 'wall_ms')]['base'], statistics.fmean(vals[('step', 'wall_ms')]),
                                     rel_tol=1e-9))
        self.assertEqual(rows[('phase', 'A')]['preempted'], 0)
        self.assertIsNone(rows[('breakdown', 'blocked_ms')]['preempted'])
        run_row = rows[('breakdown', 'runnable_ms')]
        self.assertEqual(run_row['verdict'], 'more contention')
        self.assertTrue(math.isclose(run_row['delta'], 3.0, rel_tol=1e-9), run_row)
        text = section_verdict(run('--diff', quiet, busy).stdout.decode())[0]
        self.assertIn('times net of preemption', text)
        self.assertIn('no significant change in any of the', text)
        self.assertIn('the machine: more contention in NEW, the thread preempted +3 ms per step', text)
        # without switch records in one run: the wall times as they are
        rows = self.diff(self.base, busy)
        self.assertEqual(rows[('step', 'wall_ms')]['verdict'], 'slower')
        self.assertIsNone(rows[('step', 'wall_ms')]['preempted'])

    def test_skip_steps_both_runs(self):
        rows = self.diff(self.base, self.new, '--skip-steps', '5')
        for key, row in rows.items():
            self.assertEqual((row['base_n'], row['new_n']), (35, 35), key)
            self.assertTrue(math.isclose(row['base'], statistics.fmean(self.base_vals[key][5:]), rel_tol=1e-9))
            self.assertTrue(math.isclose(row['new'], statistics.fmean(self.new_vals[key][5:]), rel_tol=1e-9))

    def test_phase_in_one_run_only(self):
        p = os.path.join(self.tmp, 'only.sqlite')
        diff_run(p, seed=4, names=('A', 'B'))
        rows = self.diff(p, self.base)
        c = rows[('phase', 'C')]
        self.assertEqual(c['verdict'], 'only in new')
        self.assertEqual(c['base'], 0)
        self.assertIsNone(c['change'])
        rows = self.diff(self.base, p)
        self.assertEqual(rows[('phase', 'C')]['verdict'], 'only in base')
        self.assertEqual(rows[('phase', 'C')]['change'], -1)

    def test_few_steps(self):
        one = os.path.join(self.tmp, 'one.sqlite')
        diff_run(one, seed=5, nsteps=1)
        rows = self.diff(one, self.base)
        for key, row in rows.items():
            self.assertEqual(row['verdict'], 'unknown (fewer than 2 steps)', key)
            self.assertIsNone(row['change_lo'], key)
            self.assertIsNone(row['base_sd'], key)
        three = os.path.join(self.tmp, 'three.sqlite')
        diff_run(three, seed=6, nsteps=3)
        text = run('--diff', three, self.base).stdout.decode()
        self.assertIn('few steps: the intervals are wide', text)

    def test_no_peak_no_mfu_row(self):
        p = os.path.join(self.tmp, 'nopeak.sqlite')
        diff_run(p, seed=7, peak=False)
        self.assertNotIn(('step', 'mfu'), self.diff(p, p))
        rows = self.diff(p, self.base)
        self.assertEqual(rows[('step', 'mfu')]['verdict'], 'unknown (no values in one run)')

    def test_formats(self):
        r = run('--diff', self.base, self.new, '--format', 'csv')
        recs = list(csv.reader(io.StringIO(r.stdout.decode())))
        self.assertEqual(recs[0], DIFF_COLUMNS)
        self.assertEqual(len(recs), 6)
        js = json.loads(run('--diff', self.base, self.new, '--format', 'json').stdout)
        self.assertEqual(list(js[0]), DIFF_COLUMNS)
        table = run('--diff', self.base, self.new).stdout.decode()
        lines = table.splitlines()
        self.assertEqual(lines[0], 'diff')
        verdict, grid = section_verdict(table)
        self.assertIn('phase B slower +', verdict)         # the verdict names it
        self.assertIn('no significant change elsewhere', verdict)
        self.assertLessEqual(max(len(l) for l in lines[:len(lines) - len(grid)]), 99)
        self.assertIn('change %', grid[0])
        self.assertTrue(any(l.startswith('phase') and ' B ' in l and l.endswith('slower') for l in lines))
        md = run('--diff', self.base, self.new, '--format', 'markdown').stdout.decode()
        self.assertTrue(md.startswith('### diff\n'))
        self.assertIn('| kind', md)
        self.assertIn('| no significant change |', md)

    def test_columns(self):
        # table and markdown: the columns read first, --columns all or a
        # list for the others; every name checked before a run is read
        table = section_verdict(run('--diff', self.base, self.new).stdout.decode())[1]
        self.assertEqual(re.split(r'  +', table[0].strip()),
                         ['kind', 'name', 'base', 'new', 'change %', 'change lo %', 'change hi %', 'verdict'])
        self.assertLessEqual(max(len(line) for line in table), 120)
        self.assertEqual(table[-1], '(12 more columns: --columns all; csv and json carry every column)')
        every = section_verdict(run('--diff', self.base, self.new, '--columns', 'all').stdout.decode())[1]
        self.assertEqual(len(re.split(r'  +', every[0].strip())), len(DIFF_COLUMNS))
        self.assertNotIn('more column', every[-1])
        some = section_verdict(run('--diff', self.base, self.new, '--columns', 'share,name').stdout.decode())[1]
        self.assertEqual(re.split(r'  +', some[0].strip()), ['share %', 'name'])
        for cols, bad in (('name,nope', 'nope'), ('Verdict', 'Verdict')):
            r = run('--diff', self.base, os.path.join(self.tmp, 'missing.sqlite'), '--columns', cols, check=False)
            self.assertEqual((r.returncode, r.stdout), (2, b''), cols)
            self.assertEqual(r.stderr.decode(), "mfu-report: --columns: no column '%s' in diff (the names are the "
                             "csv header: mfu-report --diff BASE NEW --format csv | head -1)\n" % bad)
        for args in (['--format', 'csv', '--columns', 'all'], ['--format', 'json', '--columns', 'name'],
                     ['--columns', 'name,,verdict'], ['--columns', '']):
            r = run('--diff', self.base, self.new, *args, check=False)
            self.assertEqual((r.returncode, r.stdout), (2, b''), args)

    def test_sql_by_hand(self):
        # --sql diff prints the per-step values' SQL, breakdown written out:
        # sqlite3 runs it as it is and gets the values the comparison uses
        sql = run('--sql', 'diff').stdout.decode()
        self.assertNotIn('@breakdown@', sql)
        db = sqlite3.connect(self.base)
        got = run_sql(db, sql).fetchall()
        db.close()
        walls = sorted(v for kind, name, _, _, v in got if (kind, name) == ('step', 'wall_ms'))
        self.assertEqual(walls, sorted(self.base_vals[('step', 'wall_ms')]))

    def test_bad_arguments(self):
        d = tempfile.mkdtemp(dir=self.tmp)
        for args in (['--diff'], ['--diff', self.base], ['--diff', self.base, self.new, self.new],
                     ['--diff', self.base, self.new, 'steps'], ['--db', self.base, '--diff', self.base, self.new],
                     ['--diff', self.base, self.new, '--format', 'xml'], ['--diff', '', self.new],
                     ['--diff', self.base, self.new, '--sql', 'steps']):
            r = run(*args, check=False)
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(r.stdout, b'', args)
            self.assertTrue(r.stderr.startswith(b'mfu-report: '), (args, r.stderr))
        other = os.path.join(d, 'other.sqlite')
        db = sqlite3.connect(other)
        db.execute('CREATE TABLE t (x)')
        db.commit()
        db.close()
        newer = os.path.join(d, 'newer.sqlite')
        diff_run(newer, seed=8, nsteps=2)
        db = sqlite3.connect(newer)
        db.execute('PRAGMA user_version = 99')
        db.commit()
        db.close()
        for bad, why in ((os.path.join(d, 'missing.sqlite'), 'no such file'), (other, 'not one written by mfu-record'),
                         (newer, 'newer')):
            for args in (['--diff', bad, self.new], ['--diff', self.base, bad]):
                r = run(*args, check=False)
                err = r.stderr.decode()
                self.assertEqual(r.returncode, 1, (args, err))
                self.assertEqual(r.stdout, b'', args)
                self.assertTrue(err.startswith('mfu-report: ') and why in err, (args, err))
                self.assertEqual(len(err.splitlines()), 1, err)


if __name__ == '__main__':
    unittest.main()
