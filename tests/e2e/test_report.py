#!/usr/bin/env python3
"""End-to-end tests of mfu-report on fixture databases.

The fixtures are built here: schema/*.sql plus rows of known times, FLOPs
and peaks; every number mfu-report prints is recomputed in Python from those
rows and compared. Run through meson (`meson test -C BUILD report`) or by
hand:

    MFU_REPORT=build/src/report/mfu-report python3 tests/e2e/test_report.py -v

MFU_REPORT names the mfu-report binary; MFU_SOURCE_ROOT the source tree
(default: two directories up from this file).
"""
import csv
import io
import json
import math
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mfutest import run_sql, sql_statements  # noqa: E402

ROOT = os.environ.get('MFU_SOURCE_ROOT') or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT = os.environ.get('MFU_REPORT') or os.path.join(ROOT, 'build', 'src', 'report', 'mfu-report')

START_NS = 5_000_000_000          # run.start_ns
PEAK_FLOPS = 2.0e12               # FLOP/s
PEAK_BW = 5.0e10                  # bytes/s
NCPU = 4.0
ODD_NAME = 'a,"b"\nc'             # a phase name that needs quoting everywhere
NASTY_NAME = 'x|y\x1b[31m\ttab\\z'  # pipe, escape sequence, tab, backslash

STEP_COLUMNS = ['step', 'begin_ms', 'wall_ms', 'model_flops', 'model_bytes', 'hw_flops', 'mfu', 'hfu',
                'mbu', 'cpu_ms', 'cpu_util', 'ctx_switches', 'page_faults', 'ipc', 'hw_flops_fp64',
                'hw_flops_fp32', 'hw_flops_fp16', 'hw_fraction', 'dram_bytes', 'dram_bw_util', 'ai_model',
                'ai_hw', 'counts', 'cpu_err_ms', 'model_flops_per_s', 'hw_flops_per_s', 'model_bytes_per_s',
                'lib_flops', 'flops_source', 'lib_calls']
PHASE_COLUMNS = ['phase', 'count', 'total_ms', 'mean_ms', 'p50_ms', 'p95_ms', 'share', 'mfu',
                 'model_flops', 'cpu_ms', 'hfu', 'mbu', 'hw_flops', 'dram_bytes', 'dram_bw_util', 'ai_hw',
                 'union_ms', 'model_flops_per_s', 'hw_flops_per_s', 'model_bytes_per_s',
                 'flops_source', 'lib_flops']
SUMMARY_COLUMNS = ['steps', 'wall_ms', 'mfu', 'peak_flops', 'peak_source', 'peak_bw', 'dtype',
                   'mean_step_ms', 'p50_step_ms', 'mbu', 'hfu', 'cpu_util', 'ncpu', 'lost_records',
                   'anomalies', 'exit_status', 'exit_signal', 'state', 'e2e_wall_ms', 'e2e_mfu',
                   'model_flops_per_s', 'hw_flops_per_s', 'model_bytes_per_s', 'skipped_steps']


def schema_sql():
    parts = []
    # the run database's schema, NNN.sql (profile.sql is the machine profile's)
    for name in sorted(os.listdir(os.path.join(ROOT, 'schema'))):
        if name.endswith('.sql') and name[:3].isdigit():
            with open(os.path.join(ROOT, 'schema', name), encoding='utf-8') as f:
                parts.append(f.read())
    return '\n'.join(parts)


def nearest_rank(values, p):
    """The p-th percentile by nearest rank: the value at rank ceil(p/100 * n)."""
    s = sorted(values)
    k = -(-p * len(s) // 100)
    return s[k - 1]


class Fixture:
    """A run database with known rows, and the numbers expected from it."""

    def __init__(self, path, peak=True, wal=False, nsteps=10, phases=True, hw=False):
        self.path = path
        db = sqlite3.connect(path)
        if wal:
            db.execute('PRAGMA journal_mode=WAL')   # as mfu-record writes it
        db.executescript(schema_sql())
        db.execute(
            "INSERT INTO run (id, mfu_version, command, cwd, start_unix_ns, start_ns, end_ns, host,"
            " ncpu_affinity, ncpu, dtype, peak_flops, peak_flops_source, peak_bw, peak_bw_source,"
            " target_pid, exit_status, exit_signal, lost_records, state)"
            " VALUES (1, '0.1.0', '[\"./app\"]', '/tmp', 0, ?, ?, 'host', 4, ?, 'fp32', ?, ?, ?, ?,"
            " 42, 0, NULL, 3, 'complete')",
            (START_NS, START_NS + 10_000_000_000, NCPU,
             PEAK_FLOPS if peak else None, 'user: --peak-flops 2T' if peak else None,
             PEAK_BW if peak else None, 'measured: triad' if peak else None))
        # Steps: step i lasts (i+1) * 10 ms (+ i * 1234 ns so the times are not
        # round), declares (i+1) GFLOP except step 3, which declares nothing.
        self.steps = []
        t = START_NS + 1_000_000
        for i in range(nsteps):
            wall = (i + 1) * 10_000_000 + i * 1234
            flops = None if i == 3 else (i + 1) * 1.0e9
            row = dict(step=i, begin_ns=t, wall_ns=wall, model_flops=flops, model_bytes=2.0e8,
                       cpu_ns=wall * 2 + 17, ctx_switches=i, page_faults=2 * i,
                       cycles=1000 * (i + 1) if hw else None,
                       instructions=1500 * (i + 1) if hw else None,
                       hw_flops=flops * 1.5 if hw and flops else None)
            self.steps.append(row)
            db.execute(
                "INSERT INTO step (step, pid, tid, end_tid, begin_ns, end_ns, wall_ns, model_flops,"
                " model_bytes, cpu_ns, ctx_switches, cpu_migrations, page_faults, cycles,"
                " instructions, hw_flops, complete) VALUES (?, 42, 42, 42, ?, ?, ?, ?, ?, ?, ?, 0, ?,"
                " ?, ?, ?, 1)",
                (i, t, t + wall, wall, flops, 2.0e8, row['cpu_ns'], i, 2 * i, row['cycles'],
                 row['instructions'], row['hw_flops']))
            t += wall + 500_000
        # A step that never ended: in no table.
        db.execute("INSERT INTO step (step, pid, tid, begin_ns, model_flops, complete)"
                   " VALUES (?, 42, 42, ?, 1e15, 0)", (nsteps, t))
        self.phase_rows = []   # (name, step, wall_ns, model_flops, cpu_ns) of the counted ones
        if phases:
            pid = 0

            def phase(step, name, begin, wall, flops=None, complete=1, depth=0, cpu=None):
                nonlocal pid
                db.execute(
                    "INSERT INTO phase (id, step, name, pid, tid, depth, begin_ns, end_ns, wall_ns,"
                    " model_flops, cpu_ns, complete) VALUES (?, ?, ?, 42, 42, ?, ?, ?, ?, ?, ?, ?)",
                    (pid, step, name, depth, begin, begin + wall if complete else None,
                     wall if complete else None, flops, cpu, complete))
                pid += 1
                if complete and (step is None or step < nsteps):
                    self.phase_rows.append((name, step, wall, flops, cpu))

            # Outside any step: counted (phases are not only inside steps).
            phase(None, 'load', START_NS, 700_000, cpu=100_000)
            for s in self.steps:
                b, w = s['begin_ns'], s['wall_ns']
                phase(s['step'], 'forward', b, w * 6 // 10, flops=s['model_flops'], cpu=w)
                if s['step'] % 2 == 0:   # nested inside forward
                    phase(s['step'], 'attention', b + 1000, w // 5, flops=1.0e8, depth=1, cpu=w // 5)
                phase(s['step'], 'backward', b + w * 6 // 10, w * 3 // 10, cpu=w // 2)
                if s['step'] < 3:
                    phase(s['step'], ODD_NAME, b, 1_000_000 * (s['step'] + 1))
                    phase(s['step'], NASTY_NAME, b, 2_000_000)
            # Not counted: an unfinished phase, a phase of the unfinished step.
            phase(0, 'forward', t, 0, complete=0)
            phase(nsteps, 'forward', t, 5_000_000, flops=1e15)
        db.execute("INSERT INTO note (kind, text) VALUES ('missing_counters',"
                   " 'cycles, instructions, FP_ARITH: no hardware PMU on this machine')")
        for kind in ('step_open_at_exit', 'step_open_at_exit', 'phase_end_mismatch'):
            db.execute("INSERT INTO anomaly (time_ns, pid, tid, kind) VALUES (0, 42, 42, ?)", (kind,))
        db.commit()
        db.close()
        self.peak = peak
        self.hw = hw

    # ---- the expected numbers, computed from the rows ----

    def step_expect(self, s):
        w_s = s['wall_ns'] / 1e9
        pf = PEAK_FLOPS if self.peak else None
        pb = PEAK_BW if self.peak else None
        return dict(
            step=s['step'], wall_ms=s['wall_ns'] / 1e6, begin_ms=(s['begin_ns'] - START_NS) / 1e6,
            model_flops=s['model_flops'], model_bytes=s['model_bytes'], hw_flops=s['hw_flops'],
            mfu=s['model_flops'] / (w_s * pf) if pf and s['model_flops'] is not None else None,
            hfu=s['hw_flops'] / (w_s * pf) if pf and s['hw_flops'] is not None else None,
            mbu=s['model_bytes'] / (w_s * pb) if pb else None,
            cpu_ms=s['cpu_ns'] / 1e6, cpu_util=s['cpu_ns'] / (s['wall_ns'] * NCPU),
            ctx_switches=s['ctx_switches'], page_faults=s['page_faults'],
            ipc=s['instructions'] / s['cycles'] if s['cycles'] else None,
            model_flops_per_s=s['model_flops'] / w_s if s['model_flops'] is not None else None,
            hw_flops_per_s=s['hw_flops'] / w_s if s['hw_flops'] is not None else None,
            model_bytes_per_s=s['model_bytes'] / w_s,
            # library calls not counted in this fixture: unknown, and the
            # declared FLOPs are the numerator where there are some
            lib_flops=None, lib_calls=None,
            flops_source='declared' if s['model_flops'] is not None else None)

    def summary_expect(self):
        walls = [s['wall_ns'] for s in self.steps]
        with_f = [s for s in self.steps if s['model_flops'] is not None]
        pf = PEAK_FLOPS if self.peak else None
        mfu = None
        if pf and with_f:
            mfu = sum(s['model_flops'] for s in with_f) / (sum(s['wall_ns'] for s in with_f) / 1e9 * pf)
        return dict(
            steps=len(self.steps), wall_ms=sum(walls) / 1e6, mfu=mfu,
            peak_flops=pf, peak_bw=PEAK_BW if self.peak else None, dtype='fp32',
            peak_source='user: --peak-flops 2T' if self.peak else None,
            mean_step_ms=sum(walls) / len(walls) / 1e6,
            p50_step_ms=nearest_rank(walls, 50) / 1e6, p95_step_ms=nearest_rank(walls, 95) / 1e6,
            mbu=(sum(s['model_bytes'] for s in self.steps) / (sum(walls) / 1e9 * PEAK_BW)
                 if self.peak else None),
            cpu_util=sum(s['cpu_ns'] for s in self.steps) / (sum(walls) * NCPU),
            ncpu=NCPU, lost_records=3, anomalies=3, exit_status=0, exit_signal=None,
            state='complete', incomplete_steps=1)

    def phases_expect(self):
        total_steps = sum(s['wall_ns'] for s in self.steps)
        out = []
        for name in dict.fromkeys(r[0] for r in self.phase_rows):   # first-seen order
            rows = [r for r in self.phase_rows if r[0] == name]
            walls = [r[2] for r in rows]
            fl = [r for r in rows if r[3] is not None]
            cpu = [r[4] for r in rows if r[4] is not None]
            out.append(dict(
                phase=name, count=len(rows), total_ms=sum(walls) / 1e6,
                mean_ms=sum(walls) / len(walls) / 1e6,
                p50_ms=nearest_rank(walls, 50) / 1e6, p95_ms=nearest_rank(walls, 95) / 1e6,
                # the occurrences inside steps only: 'load' runs outside
                share=(sum(r[2] for r in rows if r[1] is not None) / total_steps
                       if any(r[1] is not None for r in rows) else None),
                mfu=(sum(r[3] for r in fl) / (sum(r[2] for r in fl) / 1e9 * PEAK_FLOPS)
                     if fl and self.peak else None),
                model_flops=sum(r[3] for r in fl) if fl else None,
                cpu_ms=sum(cpu) / 1e6 if cpu else None, hfu=None, mbu=None,
                # one thread: no occurrence overlaps another of its name
                union_ms=sum(walls) / 1e6,
                model_flops_per_s=sum(r[3] for r in fl) / (sum(r[2] for r in fl) / 1e9) if fl else None,
                hw_flops_per_s=None, model_bytes_per_s=None, lib_flops=None,
                flops_source='declared' if fl else None))
        return out


class ReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(REPORT, os.X_OK):
            raise unittest.SkipTest('mfu-report not found at %s (set MFU_REPORT)' % REPORT)
        cls.tmp = tempfile.mkdtemp(prefix='mfu-report-test-')
        cls.fx = Fixture(os.path.join(cls.tmp, 'run.sqlite'))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_report(self, *args, db=None, check=True):
        cmd = [REPORT, '--db', db or self.fx.path] + list(args)
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        if check and r.returncode != 0:
            self.fail('%s exited %d: %s' % (' '.join(cmd), r.returncode, r.stderr.decode(errors='replace')))
        return r

    def json(self, *sections, db=None):
        r = self.run_report('--format', 'json', *sections, db=db)
        return json.loads(r.stdout.decode('utf-8')), r.stderr.decode()

    def assertValue(self, got, want, what):
        """NULL must stay null (never 0); numbers agree to 1e-12 relative."""
        if want is None:
            self.assertIsNone(got, what)
        elif isinstance(want, str):
            self.assertEqual(got, want, what)
        else:
            self.assertIsNotNone(got, what)
            self.assertTrue(math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-15),
                            '%s: got %r, want %r' % (what, got, want))

    def assertRow(self, got, want, what):
        for k, v in want.items():
            self.assertIn(k, got, '%s lacks %s' % (what, k))
            self.assertValue(got[k], v, '%s.%s' % (what, k))


class JsonTest(ReportTest):
    def test_summary_is_default_section(self):
        got, _ = self.json()
        self.assertIsInstance(got, list)
        self.assertEqual(len(got), 1)
        self.assertEqual(list(got[0])[:7], SUMMARY_COLUMNS[:7])
        for k in SUMMARY_COLUMNS:
            self.assertIn(k, got[0])
        self.assertRow(got[0], self.fx.summary_expect(), 'summary')
        self.assertIsInstance(got[0]['steps'], int)

    def test_steps(self):
        got, _ = self.json('steps')
        self.assertEqual(len(got), 10)            # the unfinished step is left out
        for row, s in zip(got, self.fx.steps):
            self.assertEqual(list(row), STEP_COLUMNS)
            self.assertRow(row, self.fx.step_expect(s), 'step %d' % s['step'])
            self.assertIsInstance(row['step'], int)
        self.assertIsNone(got[3]['mfu'])          # declared no FLOPs: unknown, not 0
        self.assertIsNone(got[0]['hfu'])          # no FP counters: unknown, not 0
        self.assertIsNone(got[0]['ipc'])
        # MFU of step 0 by hand: 1 GFLOP in 10 ms on a 2 TFLOP/s peak = 5%
        self.assertAlmostEqual(got[0]['mfu'], 1e9 / (0.010 * 2e12), places=12)

    def test_phases(self):
        got, _ = self.json('phases')
        want = self.fx.phases_expect()
        self.assertEqual([r['phase'] for r in got], [w['phase'] for w in want])
        self.assertEqual([r['phase'] for r in got][:4], ['load', 'forward', 'attention', 'backward'])
        for row, w in zip(got, want):
            self.assertEqual(list(row), PHASE_COLUMNS)
            self.assertRow(row, w, 'phase %r' % w['phase'])
        by = {r['phase']: r for r in got}
        self.assertEqual(by['forward']['count'], 10)   # not the unfinished ones
        self.assertIsNone(by['backward']['mfu'])       # no FLOPs declared
        self.assertIsNone(by[ODD_NAME]['cpu_ms'])      # not counted
        self.assertEqual(by[NASTY_NAME]['phase'], NASTY_NAME)
        # forward holds 60% of every step: share ~0.6; nested attention adds more
        self.assertAlmostEqual(by['forward']['share'], 0.6, places=3)
        # load runs before the steps: its time is none of theirs
        self.assertIsNone(by['load']['share'])

    def test_percentiles_nearest_rank(self):
        # 20 occurrences 1..20 ms: p50 = 10 ms (rank 10), p95 = 19 ms (rank 19);
        # 7 occurrences: p50 = rank 4, p95 = rank 7 (the maximum).
        path = os.path.join(self.tmp, 'pct.sqlite')
        Fixture(path, nsteps=1, phases=False)
        db = sqlite3.connect(path)
        vals = list(range(1, 21))
        random.Random(7).shuffle(vals)
        for i, v in enumerate(vals):
            db.execute("INSERT INTO phase (id, step, name, pid, tid, depth, begin_ns, end_ns, wall_ns,"
                       " complete) VALUES (?, NULL, 'twenty', 1, 1, 0, 0, ?, ?, 1)", (i, v * 1000000, v * 1000000))
        for i, v in enumerate([5, 1, 7, 3, 3, 9, 2]):
            db.execute("INSERT INTO phase (id, step, name, pid, tid, depth, begin_ns, end_ns, wall_ns,"
                       " complete) VALUES (?, NULL, 'seven', 1, 1, 0, 0, ?, ?, 1)", (100 + i, v * 1000000, v * 1000000))
        db.commit()
        db.close()
        got, _ = self.json('phases', db=path)
        by = {r['phase']: r for r in got}
        self.assertEqual(by['twenty']['p50_ms'], 10)
        self.assertEqual(by['twenty']['p95_ms'], 19)
        self.assertEqual(by['seven']['p50_ms'], 3)       # sorted 1 2 3 3 5 7 9, rank 4
        self.assertEqual(by['seven']['p95_ms'], 9)
        self.assertEqual(by['seven']['count'], 7)

    def test_several_sections_keyed(self):
        got, _ = self.json('steps', 'summary', 'phases')
        self.assertIsInstance(got, dict)
        self.assertEqual(list(got), ['steps', 'summary', 'phases'])
        self.assertEqual(len(got['steps']), 10)
        self.assertEqual(len(got['summary']), 1)

    def test_duplicate_section_once(self):
        got, _ = self.json('steps', 'steps')
        self.assertIsInstance(got, list)
        self.assertEqual(len(got), 10)

    def test_notes_go_to_stderr(self):
        r = self.run_report('--format', 'json', 'steps')
        json.loads(r.stdout)    # stdout is only JSON
        lines = r.stderr.decode().splitlines()
        self.assertTrue(lines)
        for line in lines:
            self.assertTrue(line.startswith('mfu-report: note: '), line)
        self.assertTrue(any('no hardware PMU' in l for l in lines))
        self.assertTrue(any('3 marker records were lost' in l for l in lines))

    def test_no_peak_gives_null(self):
        path = os.path.join(self.tmp, 'nopeak.sqlite')
        fx = Fixture(path, peak=False)
        got, err = self.json('summary', 'steps', 'phases', db=path)
        for key in ('mfu', 'hfu', 'mbu', 'peak_flops', 'peak_bw', 'peak_source'):
            self.assertIsNone(got['summary'][0][key], key)
        for row in got['steps']:
            self.assertIsNone(row['mfu'])
            self.assertIsNone(row['mbu'])
            self.assertIsNotNone(row['cpu_util'])
        for row in got['phases']:
            self.assertIsNone(row['mfu'])
        self.assertRow(got['summary'][0], fx.summary_expect(), 'summary')
        self.assertIn('no fp32 FLOP/s peak is known', err)

    def test_hw_counters(self):
        path = os.path.join(self.tmp, 'hw.sqlite')
        fx = Fixture(path, hw=True)
        got, _ = self.json('steps', 'summary', db=path)
        for row, s in zip(got['steps'], fx.steps):
            self.assertRow(row, fx.step_expect(s), 'step %d' % s['step'])
        self.assertAlmostEqual(got['steps'][0]['ipc'], 1.5)
        hw = [s for s in fx.steps if s['hw_flops'] is not None]
        want = sum(s['hw_flops'] for s in hw) / (sum(s['wall_ns'] for s in hw) / 1e9 * PEAK_FLOPS)
        self.assertValue(got['summary'][0]['hfu'], want, 'summary hfu')

    def test_empty_run(self):
        path = os.path.join(self.tmp, 'empty.sqlite')
        Fixture(path, nsteps=0, phases=False)
        got, _ = self.json('summary', 'steps', 'phases', db=path)
        self.assertEqual(got['steps'], [])
        self.assertEqual(got['phases'], [])
        s = got['summary'][0]
        self.assertEqual(s['steps'], 0)
        self.assertIsNone(s['mfu'])
        self.assertIsNone(s['p50_step_ms'])

    def test_phase_breakdown_in_the_phases_order(self):
        # the phases section lists names as they first occur ('load', before
        # the loop, is the shortest); phase_breakdown lists them alike
        got, _ = self.json('phases', 'phase_breakdown')
        names = [r['phase'] for r in got['phases']]
        self.assertEqual(names[0], 'load')
        self.assertEqual([r['phase'] for r in got['phase_breakdown']], names)

    def test_no_steps_is_unknown_not_zero(self):
        """A run without a complete step: no time is unknown, not 0; no row
        of nothing in any section; a note that says why and what to do."""
        path = os.path.join(self.tmp, 'nosteps.sqlite')
        Fixture(path, nsteps=0, phases=False)       # its one step never ended
        got, err = self.json('summary', 'waterfall', 'breakdown', 'notes', db=path)
        s = got['summary'][0]
        self.assertEqual(s['steps'], 0)
        for k in ('wall_ms', 'mean_step_ms', 'e2e_wall_ms', 'mfu'):
            self.assertIsNone(s[k], k)
        self.assertEqual(got['waterfall'], [])
        self.assertEqual(got['breakdown'], [])
        notes = [n for n in got['notes'] if n['kind'] == 'no_steps']
        self.assertEqual(len(notes), 1, got['notes'])
        self.assertEqual(notes[0]['missing'], 1)
        self.assertIn('no complete step in this run', notes[0]['text'])
        self.assertIn('began and never ended', notes[0]['text'])
        self.assertIn('mfu-report: note: no complete step in this run', err)
        csv = self.run_report('--format', 'csv', 'waterfall', db=path).stdout.decode()
        self.assertEqual(csv.splitlines()[1:], [], 'no row of empty fields')
        table = self.run_report(db=path).stdout.decode()
        # no line of unknowns: the steps line says there are none
        self.assertRegex(table, r'\n  steps +0 complete; 1 begun and never ended')
        self.assertNotRegex(table, r' -\n')
        self.assertIn('no complete step in this run', table)

    def test_no_steps_reasons(self):
        """The note names the likeliest reason; the recorder's own no_steps
        note (no marker at all) is said once, not twice."""
        path = os.path.join(self.tmp, 'nomarker.sqlite')
        Fixture(path, nsteps=0, phases=False)
        db = sqlite3.connect(path)
        db.execute('DELETE FROM step')
        db.commit()
        db.close()
        got, _ = self.json('notes', db=path)
        texts = [n['text'] for n in got if n['kind'] == 'no_steps']
        self.assertEqual(len(texts), 1)
        self.assertIn('no step marker was seen', texts[0])
        self.assertIn('--step FUNC', texts[0])
        db = sqlite3.connect(path)
        db.execute("INSERT INTO note (kind, text) VALUES ('no_steps', 'the recorder saw no marker')")
        db.commit()
        db.close()
        got, _ = self.json('notes', db=path)
        self.assertEqual([n['text'] for n in got if n['kind'] == 'no_steps'], ['the recorder saw no marker'])
        # every step skipped: says so, with the number
        got, _ = self.json('--skip-steps', '10', 'notes')
        texts = [n['text'] for n in got if n['kind'] == 'no_steps']
        self.assertEqual(len(texts), 1, got)
        self.assertIn('--skip-steps left out all 10 complete steps', texts[0])

    def test_quiet_leaves_out_the_machines_notes(self):
        """-q: the notes on counters this machine cannot open (the same on a
        VM every run) are left out, on stderr and under the tables; the
        others stay."""
        r = self.run_report('-q', '--format', 'json', 'steps')
        err = r.stderr.decode()
        self.assertNotIn('no hardware PMU', err)
        self.assertIn('3 marker records were lost', err)
        text = self.run_report('--quiet').stdout.decode()
        self.assertNotIn('no hardware PMU', text)
        self.assertIn('mfu covers 9 of 10 steps', text)
        got, _ = self.json('-q', 'notes')
        self.assertFalse([n for n in got if n['kind'] == 'missing_counters'])
        self.assertIn('no hardware PMU', self.run_report('steps').stdout.decode())

    def test_invalid_utf8_stays_valid_json(self):
        path = os.path.join(self.tmp, 'utf8.sqlite')
        Fixture(path, nsteps=1, phases=False)
        db = sqlite3.connect(path)
        db.execute("INSERT INTO phase (id, step, name, pid, tid, depth, begin_ns, end_ns, wall_ns, complete)"
                   " VALUES (1, 0, CAST(X'666f6fff00627172' AS TEXT), 1, 1, 0, 0, 1, 1, 1)")
        db.commit()
        db.close()
        got, _ = self.json('phases', db=path)
        self.assertEqual(got[0]['phase'], 'foo\ufffd\x00bqr')


def nearest_rank_nulls_first(values, p):
    """nearest_rank() where None sorts first, as SQL's ORDER BY puts NULL."""
    s = sorted(values, key=lambda v: (v is not None, v if v is not None else 0))
    k = -(-p * len(s) // 100)
    return s[k - 1]


def m3_killer(n):
    """Musser's median-of-3 killer sequence (n even): defeats quickselect
    with a first/middle/last pivot, which must fall back and stay exact."""
    k = n // 2
    a = [0] * n
    for i in range(1, k + 1):
        if i % 2:
            a[i - 1] = i
            a[i] = k + i
        a[k + i - 1] = 2 * i
    return a


def select_killer(n, k):
    """Wall times that drive mfu-report's selection of rank k + 1 (Hoare's
    partition with a first/middle/last median, src/report/phase_stats.c)
    into a round per two values: McIlroy's adversary ("A killer adversary
    for quicksort", 1999) answers each comparison of the replayed algorithm
    so that the pivot is nearly the smallest value left. mfu-report must
    notice, sort what is left, and still be exact."""
    gas = n
    val = [gas] * n
    state = {'solid': 0, 'cand': 0}

    def cmp(x, y):
        if val[x] == gas and val[y] == gas:
            z = x if x == state['cand'] else y
            val[z] = state['solid']
            state['solid'] += 1
        if val[x] == gas:
            state['cand'] = x
        elif val[y] == gas:
            state['cand'] = y
        return val[x] - val[y]

    v = list(range(n))
    lo, hi = 0, n - 1
    while hi > lo:
        mid = lo + (hi - lo) // 2
        for a, b in ((mid, lo), (hi, lo), (hi, mid)):
            if cmp(v[a], v[b]) < 0:
                v[a], v[b] = v[b], v[a]
        pivot, i, j = v[mid], lo, hi
        while i <= j:
            while cmp(v[i], pivot) < 0:
                i += 1
            while cmp(v[j], pivot) > 0:
                j -= 1
            if i <= j:
                v[i], v[j] = v[j], v[i]
                i, j = i + 1, j - 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            break
    return val


class ProbeStepsTest(ReportTest):
    def test_probe_steps_library_flops_known_or_not(self):
        """Steps from --step probes: a uprobe's steps have no library FLOPs
        (NULL: the counters are read in the program) and the note says why;
        a py: probe's steps read them (0 when no call was made in a step),
        and the note says only that no step made a counted call."""
        path = os.path.join(self.tmp, 'probe-steps.sqlite')
        Fixture(path, phases=False)
        db = sqlite3.connect(path)
        db.execute("UPDATE run SET lib_counting = 'on'")
        db.execute("UPDATE step SET model_flops = NULL, lib_flops = NULL")
        db.execute("INSERT INTO probe (role, spec, boundary, point, status) "
                   "VALUES ('step', 'libx.so:f', 'each', 'libx.so:f', 'placed')")
        db.commit()
        got, _ = self.json('notes', db=path)
        text = [n['text'] for n in got if n['kind'] == 'model_flops']
        self.assertEqual(len(text), 1, got)
        self.assertIn('unknown (NULL, not 0)', text[0])
        db.execute("UPDATE step SET lib_flops = 0")
        db.commit()
        db.close()
        got, _ = self.json('notes', db=path)
        text = [n['text'] for n in got if n['kind'] == 'model_flops']
        self.assertEqual(len(text), 1, got)
        self.assertNotIn('NULL', text[0])
        self.assertIn('made a counted library call', text[0])


class RunStateTest(ReportTest):
    def test_interrupted_says_what_the_data_covers(self):
        """state interrupted: mfu-record passed a signal on and recorded on
        to the program's end. A program that ignored it ran to its end:
        nothing is missing; one the signal ended was cut short there."""
        path = os.path.join(self.tmp, 'interrupted.sqlite')
        Fixture(path, phases=False)
        for status, signal, want, missing, words in (
                (0, None, 'the program ran on to its end (exit status 0), and the data covers all of it', 0,
                 'exit status 0, recorded to the end after a signal mfu-record passed on'),
                (None, 2, 'the program ended by signal 2: the data covers the program until then', 1,
                 'killed by signal 2, after a signal mfu-record passed on')):
            db = sqlite3.connect(path)
            db.execute("UPDATE run SET state = 'interrupted', exit_status = ?, exit_signal = ?", (status, signal))
            db.commit()
            db.close()
            got, _ = self.json('notes', db=path)
            notes = [n for n in got if n['kind'] == 'state']
            self.assertEqual(len(notes), 1, got)
            self.assertIn(want, notes[0]['text'])
            self.assertEqual(notes[0]['missing'], missing)
            p = subprocess.run([REPORT, '--db', path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            flat = ' '.join((p.stdout + p.stderr).split())   # the summary wraps its lines
            self.assertIn(words, flat)
            self.assertNotIn('recording interrupted', flat)


class NoStepsGapsTest(ReportTest):
    def test_gaps_without_steps_say_so(self):
        """A sampled run without a complete step: the gaps verdict says
        there is no step, not that the threads never left the CPU."""
        from mfutest import section_verdict
        from test_trace_diff import trace_fixture
        path = os.path.join(self.tmp, 'nosteps-gaps.sqlite')
        trace_fixture(path)
        db = sqlite3.connect(path)
        db.execute('UPDATE step SET complete = 0')
        db.execute('DELETE FROM sampling')
        db.execute('INSERT INTO sampling (freq, user_only, switch_samples) VALUES (1000, 0, 1)')
        db.commit()
        db.close()
        p = subprocess.run([REPORT, '--db', path, 'gaps'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        verdict, _ = section_verdict(p.stdout)
        self.assertIn('No complete step', verdict)
        self.assertNotIn('never left the CPU', verdict)
        # where time went: the whole run's samples by class, adding up
        db = sqlite3.connect(path)
        by = dict(db.execute('SELECT coalesce(class, \'unknown\'), count(*) FROM sample WHERE kind = 0 '
                             'GROUP BY 1').fetchall())
        db.close()
        p = subprocess.run([REPORT, '--db', path, 'breakdown'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        verdict, _ = section_verdict(p.stdout)
        self.assertIn("over the whole run, the target's %d cpu-clock samples were" % sum(by.values()), verdict)
        for cls, n in by.items():
            self.assertIn('%.0f%% %s' % (100.0 * n / sum(by.values()), cls), verdict)


class JobLibDtypeTest(ReportTest):
    def test_job_says_the_work_is_of_another_precision(self):
        """Ranks whose library FLOPs are mostly fp64 against fp32 peaks: the
        job's notes say so, as each rank's own do; not when they match."""
        paths = []
        for r in (0, 1):
            p = os.path.join(self.tmp, 'dt.%d.sqlite' % r)
            Fixture(p, phases=False)
            db = sqlite3.connect(p)
            db.execute("UPDATE run SET lib_flops = 1e10, lib_flops_fp64 = 9e9, lib_flops_fp32 = 1e9")
            db.commit()
            db.close()
            paths.append(p)
        merged = os.path.join(self.tmp, 'dt-job.sqlite')
        subprocess.run([REPORT, 'merge', '-o', merged] + paths, check=True, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
        got, _ = self.json('job_notes', db=merged)
        texts = [n['text'] for n in got if n['kind'] == 'lib_dtype']
        self.assertEqual(texts, ["90% of the job's library FLOPs are fp64, but the job's MFU uses the ranks' fp32 "
                                 "peaks: record with --dtype fp64 for their MFU against the fp64 peak"])
        db = sqlite3.connect(merged)
        db.execute("UPDATE run SET lib_flops_fp64 = 1e9, lib_flops_fp32 = 9e9")
        db.commit()
        db.close()
        got, _ = self.json('job_notes', db=merged)
        self.assertEqual([n for n in got if n['kind'] == 'lib_dtype'], [])


class PercentileTest(ReportTest):
    """mfu-report computes the phases' totals and percentiles in C
    (mfu_phase_stats); they must equal Python's own sort of the same rows and
    the plain SQL of analyses/phases.sql run in sqlite3, to the last bit."""

    def build(self, name, series, extra=None):
        """A run with one phase name per (name, wall times) in @series."""
        path = os.path.join(self.tmp, name + '.sqlite')
        Fixture(path, nsteps=3, phases=False)
        db = sqlite3.connect(path)
        pid = 0
        rows = []
        for pname, walls in series:
            for i, w in enumerate(walls):
                flops = None if i % 3 == 0 or w is None else float(w) * 1e3 + 0.1
                rows.append((pid, i % 3, pname, w, flops, None if i % 5 == 0 else i * 7))
                pid += 1
        db.executemany("INSERT INTO phase (id, step, name, pid, tid, depth, begin_ns, end_ns, wall_ns,"
                       " model_flops, cpu_ns, complete) VALUES (?, ?, ?, 1, 1, 0, 0, ?4, ?4, ?5, ?6, 1)",
                       rows)
        if extra:
            extra(db, pid)
        db.commit()
        db.close()
        return path

    def expect(self, series):
        out = {}
        for pname, walls in series:
            known = [w for w in walls if w is not None]
            out[pname] = dict(
                count=len(walls),
                total_ms=sum(known) / 1e6 if known else None,
                p50_ms=None if nearest_rank_nulls_first(walls, 50) is None
                else nearest_rank_nulls_first(walls, 50) / 1e6,
                p95_ms=None if nearest_rank_nulls_first(walls, 95) is None
                else nearest_rank_nulls_first(walls, 95) / 1e6)
        return out

    def check(self, path, series):
        got, _ = self.json('phases', db=path)
        want = self.expect(series)
        self.assertEqual([r['phase'] for r in got], [n for n, _ in series])
        for row in got:
            w = want[row['phase']]
            what = 'phase %r (%d)' % (row['phase'], w['count'])
            self.assertEqual(row['count'], w['count'], what)
            # exact: the same double as Python's sort gives, not close to it
            self.assertEqual(row['p50_ms'], w['p50_ms'], what + ' p50')
            self.assertEqual(row['p95_ms'], w['p95_ms'], what + ' p95')
            self.assertValue(row['total_ms'], w['total_ms'], what + ' total')
        # and every column equals the plain SQL's, run as a user runs it
        sql = self.run_report('--sql', 'phases').stdout.decode()
        db = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
        cur = run_sql(db, sql)
        names = [d[0] for d in cur.description]
        plain = [dict(zip(names, r)) for r in cur.fetchall()]
        db.close()
        self.assertEqual(len(plain), len(got))
        for a, b in zip(plain, got):
            for k in names:
                if isinstance(a[k], str):
                    self.assertEqual(b[k], a[k], k)
                elif k in ('count', 'p50_ms', 'p95_ms', 'total_ms', 'cpu_ms'):
                    self.assertEqual(b[k], a[k], '%s of %r' % (k, a['phase']))   # integer sums: exact
                else:
                    self.assertValue(b[k], a[k], '%s of %r' % (k, a['phase']))
        # the table format reads the section twice: the same percentiles
        table = self.run_report('phases', db=path).stdout.decode()
        for row in got:
            if row['p95_ms'] is not None and row['phase'].isalnum():
                line = [l for l in table.splitlines() if l.startswith(row['phase'] + ' ')][0]
                self.assertIn('%.3f' % row['p95_ms'], line)

    def test_patterns(self):
        # Orders and sizes that break a naive selection: sorted, reversed,
        # all equal, two values, organ pipe, sawtooth, the median-of-3
        # killer; sizes around the ranks' rounding (19, 20, 21).
        rng = random.Random(11)
        series = []
        for n in (1, 2, 3, 19, 20, 21, 1000, 4096):
            base = [(i + 1) * 1000 for i in range(n)]
            pats = {
                'sorted': base,
                'reversed': base[::-1],
                'equal': [7000] * n,
                'two': [1000 if i % 2 else 2000 for i in range(n)],
                'pipe': [min(i, n - 1 - i) * 1000 for i in range(n)],
                'saw': [(i % 17) * 1000 for i in range(n)],
                'dupes': [rng.randrange(50) * 1000 for _ in range(n)],
            }
            if n % 2 == 0:
                pats['killer'] = [v * 1000 for v in m3_killer(n)]
            for pat, walls in pats.items():
                series.append(('%s%d' % (pat, n), walls))
        self.check(self.build('patterns', series), series)

    def test_adversarial_order(self):
        # about n/2 partition rounds without the fallback to a sort
        series = []
        for n in (100, 1000, 5000):
            series.append(('adv%d' % n, [v * 1000 + 1 for v in select_killer(n, (50 * n + 99) // 100 - 1)]))
        self.check(self.build('adversary', series), series)

    def test_random_with_nulls_and_excluded_rows(self):
        # Random times with ties; complete phases without a wall time (NULL
        # sorts first, as in SQL); phases of an unfinished step and
        # unfinished phases, which count nowhere.
        rng = random.Random(5)
        series = []
        for k in range(12):
            n = rng.choice([1, 5, 37, 300, 2500])
            walls = [rng.randrange(1, 10 ** rng.randrange(2, 12)) for _ in range(n)]
            if k % 3 == 0:
                for i in rng.sample(range(n), max(1, n // 4)):
                    walls[i] = None
            series.append(('name%d' % k, walls))

        def extra(db, pid):
            for i in range(50):   # step 3 never ended (the fixture's), and incomplete phases
                db.execute("INSERT INTO phase (id, step, name, pid, tid, depth, begin_ns, end_ns,"
                           " wall_ns, complete) VALUES (?, ?, 'name0', 1, 1, 0, 0, ?, ?, ?)",
                           (pid + i, 3 if i % 2 else 1, 10 ** 13, 10 ** 13, i % 2))
        self.check(self.build('random', series, extra), series)

    def test_large_integers_stay_exact(self):
        # wall times near 2^53: a double still holds each exactly, and the
        # selection must not lose the last unit
        big = 2 ** 53 - 1000
        series = [('big', [big + d for d in (7, 3, 999, 0, 512, 1, 2)])]
        self.check(self.build('big', series), series)


def dispatch_fixture(path, seed, nsamples=3000):
    """A run whose thread 1 has an outer 'train' phase around nested phases
    (fwd > attn, bwd, a 'stuck' phase that never ended with a complete
    child), thread 2 phases at overlapping times, and cpu-clock samples at
    random times and on the boundaries. Returns {(phase, class): samples}
    as the dispatch section must count them: each sample in the innermost
    complete phase of its thread open at its time, found here by brute
    force over all phases."""
    Fixture(path, nsteps=1, phases=False)
    rng = random.Random(seed)
    db = sqlite3.connect(path)
    db.execute("INSERT INTO symbol (id, dso, name, kind) VALUES (1, '/lib/libk.so', 'kern', 'user')")
    db.execute("INSERT INTO stack (id, pid, nframes, leaf, compute) VALUES (1, 42, 1, 1, 1)")
    phases = []   # (id, tid, name, depth, parent, begin, end, complete)

    def phase(tid, name, depth, parent, begin, end, complete=1):
        phases.append((len(phases), tid, name, depth, parent, begin, end if complete else None, complete))
        return len(phases) - 1

    train = phase(1, 'train', 0, None, 1000, 2_000_000)
    t = 2000
    while t < 1_700_000:
        f = phase(1, 'fwd', 1, train, t, t + rng.randrange(2000, 9000))
        if rng.random() < 0.5:   # a third of them begin with fwd, in the same ns
            b = phases[f][5] + (rng.randrange(0, 500) if rng.random() < 0.7 else 0)
            phase(1, 'attn', 2, f, b, min(b + rng.randrange(1, 3000), phases[f][6]))
        t = phases[f][6] + rng.randrange(0, 3000)
        phase(1, 'bwd', 1, train, t, t + rng.randrange(1000, 5000))
        t = phases[-1][6] + rng.randrange(1, 4000)
    stuck = phase(1, 'stuck', 1, train, 1_800_000, None, complete=0)
    phase(1, 'inner', 2, stuck, 1_850_000, 1_900_000)
    t = 0
    while t < 2_000_000:
        phase(2, 'loader', 0, None, t, t + 7000)
        t += 10_000
    db.executemany("INSERT INTO phase (id, step, name, pid, tid, depth, parent, begin_ns, end_ns, wall_ns,"
                   " complete) VALUES (?, NULL, ?3, 42, ?2, ?4, ?5, ?6, ?7, ?7 - ?6, ?8)", phases)
    times = [rng.randrange(0, 2_100_000) for _ in range(nsamples)]
    times += [p[5] for p in phases[:200]] + [p[6] for p in phases[:200] if p[6] is not None]
    want = {}
    for i, tm in enumerate(times):
        tid = 1 + i % 2
        cls = 'compute' if i % 3 else 'dispatch'
        db.execute("INSERT INTO sample (time_ns, pid, tid, kind, kernel, stack, class)"
                   " VALUES (?, 42, ?, 0, 0, 1, ?)", (tm, tid, cls))
        db.execute("INSERT INTO sample (time_ns, pid, tid, kind, kernel, stack, class)"
                   " VALUES (?, 42, ?, 1, 0, 1, 'dispatch')", (tm, tid))   # switch-out: not counted
        open_ = [p for p in phases if p[1] == tid and p[7] == 1 and p[5] <= tm < p[6]]
        name = max(open_, key=lambda p: p[3])[2] if open_ else '(no phase)'
        want[(name, cls)] = want.get((name, cls), 0) + 1
    db.execute("INSERT INTO thread (tid, pid, cpu_ns) VALUES (1, 42, 1000000), (2, 42, 2000000)")
    db.commit()
    db.close()
    return want


class DispatchTest(ReportTest):
    def counts(self, path):
        got, _ = self.json('dispatch', db=path)
        return {(r['phase'], r['class']): r['samples'] for r in got}

    def test_samples_in_innermost_open_phase(self):
        # with the phase_tid_begin index (as a finished recording has it),
        # then without it (a recording whose recorder was killed): the same
        path = os.path.join(self.tmp, 'dispatch.sqlite')
        want = dispatch_fixture(path, 3)
        self.assertIn(('attn', 'compute'), want)
        self.assertIn(('train', 'dispatch'), want)
        self.assertIn(('inner', 'compute'), want)
        self.assertIn(('(no phase)', 'compute'), want)
        self.assertEqual(self.counts(path), want)
        db = sqlite3.connect(path)
        stmts = sql_statements(self.run_report('--sql', 'dispatch').stdout.decode())
        for st in stmts[:-1]:   # the views (analyses/views.sql): the lookup reads through them
            db.execute(st)
        plan = ' '.join(r[3] for r in db.execute('EXPLAIN QUERY PLAN ' + stmts[-1]))
        self.assertIn('USING INDEX phase_tid_begin', plan)
        db.execute('DROP INDEX phase_tid_begin')
        db.commit()
        db.close()
        self.assertEqual(self.counts(path), want)


class SqlByHandTest(ReportTest):
    def test_sql_prints_the_analysis(self):
        for section, cols in (('steps', STEP_COLUMNS), ('phases', PHASE_COLUMNS), ('summary', None)):
            r = self.run_report('--sql', section)
            sql = r.stdout.decode()
            self.assertTrue(sql.lstrip().startswith('--'), 'starts with its comment')
            # the views it reads, then the section's own SQL
            with open(os.path.join(ROOT, 'analyses', 'views.sql'), encoding='utf-8') as f:
                self.assertIn(f.read(), sql)
            with open(os.path.join(ROOT, 'analyses', section + '.sql'), encoding='utf-8') as f:
                self.assertTrue(sql.endswith(f.read()), section)
            db = sqlite3.connect('file:%s?mode=ro' % self.fx.path, uri=True)
            cur = run_sql(db, sql)
            names = [d[0] for d in cur.description]
            rows = [dict(zip(names, row)) for row in cur.fetchall()]
            db.close()
            if cols:
                self.assertEqual(names, cols)
            got, _ = self.json(section)
            self.assertEqual(len(rows), len(got))
            for a, b in zip(rows, got):
                for k in names:
                    self.assertValue(b[k], a[k], '%s.%s' % (section, k))

    def test_list(self):
        out = self.run_report('--list').stdout.decode()
        for s in ('summary', 'steps', 'phases', 'notes'):
            self.assertIn(s, out)
        # one column of names, the descriptions aligned after it
        lines = out.splitlines()
        starts = {len(l) - len(l.split(None, 1)[1]) for l in lines}
        self.assertEqual(len(starts), 1, out)
        self.assertIn('phase_breakdown  per phase', out)


class CsvTest(ReportTest):
    def test_steps_csv(self):
        r = self.run_report('--format', 'csv', 'steps')
        rows = list(csv.reader(io.StringIO(r.stdout.decode())))
        self.assertEqual(rows[0], STEP_COLUMNS)
        self.assertEqual(len(rows), 11)
        got, _ = self.json('steps')
        for line, js in zip(rows[1:], got):
            for k, cell in zip(STEP_COLUMNS, line):
                if js[k] is None:
                    self.assertEqual(cell, '', k)        # NULL is empty
                elif k in ('counts', 'flops_source'):
                    self.assertEqual(cell, js[k], k)
                else:
                    self.assertEqual(float(cell), float(js[k]), k)   # full precision

    def test_quoting(self):
        # csv escapes control bytes as the table does (the newline too) and
        # quotes by RFC 4180
        r = self.run_report('--format', 'csv', 'phases')
        text = r.stdout.decode()
        self.assertIn('"a,""b""\\nc"', text)
        self.assertNotIn('\x1b', text)
        rows = list(csv.reader(io.StringIO(text)))
        names = [row[0] for row in rows[1:]]
        self.assertIn('a,"b"\\nc', names)
        self.assertIn('x|y\\x1b[31m\\ttab\\\\z', names)
        for row in rows:
            self.assertEqual(len(row), len(PHASE_COLUMNS))
        # --raw: the names byte for byte, RFC 4180 quoting only
        text = self.run_report('--format', 'csv', '--raw', 'phases').stdout.decode()
        self.assertIn('"a,""b""\nc"', text)
        rows = list(csv.reader(io.StringIO(text)))
        names = [row[0] for row in rows[1:]]
        self.assertIn(ODD_NAME, names)
        self.assertIn(NASTY_NAME, names)
        for row in rows:
            self.assertEqual(len(row), len(PHASE_COLUMNS))

    def test_sections_separated_by_blank_line(self):
        r = self.run_report('--format', 'csv', 'summary', 'steps')
        text = r.stdout.decode()
        first, second = text.split('\n\n')
        s = list(csv.reader(io.StringIO(first)))
        self.assertEqual(s[0][:7], SUMMARY_COLUMNS[:7])
        self.assertEqual(len(s), 2)
        st = list(csv.reader(io.StringIO(second)))
        self.assertEqual(st[0], STEP_COLUMNS)
        self.assertEqual(len(st), 11)


class TableTest(ReportTest):
    def grid(self, text, title):
        """The lines of section @title's grid: header, dashes, rows (not
        the line under them that counts the columns left out)."""
        lines = text.split('\n')
        i = lines.index(title)
        out = []
        for line in lines[i + 1:]:
            if not line or line.startswith('('):
                break
            out.append(line)
        return out

    def test_steps_aligned(self):
        text = self.run_report('steps').stdout.decode()
        g = self.grid(text, 'steps')
        self.assertEqual(len(g), 12)                  # header, dashes, 10 steps
        self.assertEqual(len(set(len(l) for l in g)), 1, 'right-aligned numbers end together')
        header = g[0].split()
        for label in ('wall', 'ms', 'MFU', '%', 'FLOP'):
            self.assertIn(label, header)
        # MFU of step 0 in percent, 2 decimals; step 3 unknown
        cols = [c for c in g[1].split('  ') if c]
        mfu_col = g[0].index('MFU %') + len('MFU %')
        self.assertEqual(g[2][:mfu_col].split()[-1], '%.2f' % (100 * 1e9 / (0.010 * 2e12)))
        self.assertEqual(g[5][:mfu_col].split()[-1], '-')
        self.assertIn('1.00 G', g[2])
        self.assertTrue(cols)

    def test_phases_escaped(self):
        text = self.run_report('phases').stdout.decode()
        self.assertNotIn('\x1b', text)
        self.assertIn('a,"b"\\nc', text)
        self.assertIn('x|y\\x1b[31m\\ttab\\\\z', text)
        g = self.grid(text, 'phases')
        self.assertEqual(len(set(len(l) for l in g)), 1)

    def test_summary_notes(self):
        text = self.run_report().stdout.decode()
        self.assertTrue(text.startswith('summary\n'))
        self.assertRegex(text, r'\n  MFU +5\.00% of the fp32 peak \(2\.00 TFLOP/s\)\n')
        self.assertEqual(text.count('user: --peak-flops 2T'), 1)  # the peak source is named, once
        # the recorder's note, as the reason of what is unknown
        self.assertRegex(text, r'\nunknown here: HFU, library FLOP, HW FLOP, DRAM \(no hardware PMU on this machine;')
        self.assertIn('3 anomalies: 2 step_open_at_exit, 1 phase_end_mismatch', text)
        self.assertIn('3 marker records were lost', text)
        self.assertIn('1 step began but never ended', text)
        self.assertIn('mfu covers 9 of 10 steps', text)
        s = self.fx.summary_expect()
        self.assertIn('%.2f' % (100 * s['mfu']), text)

    def test_notes_header_is_its_columns(self):
        g = self.grid(self.run_report('notes').stdout.decode(), 'notes')
        self.assertEqual(g[0].split(), ['kind', 'text', 'missing', 'alert'])

    def test_steps_only_has_missing_notes(self):
        text = self.run_report('steps').stdout.decode()
        self.assertIn('no hardware PMU', text)
        self.assertNotIn('anomalies:', text)


class MarkdownTest(ReportTest):
    def test_markdown(self):
        text = self.run_report('--format', 'markdown', 'summary', 'phases').stdout.decode()
        self.assertIn('### summary', text)
        self.assertIn('### phases', text)
        table = [l for l in text.split('\n') if l.startswith('|')]
        self.assertTrue(table)
        for line in table:
            self.assertTrue(line.endswith('|'), line)
        # every row of the phases table has as many cells as its header
        i = text.index('### phases')
        rows = [l for l in text[i:].split('\n') if l.startswith('|')]
        ncell = len(rows[0].replace('\\|', '').split('|'))
        for line in rows:
            self.assertEqual(len(line.replace('\\|', '').split('|')), ncell, line)
        self.assertIn('x\\|y', text)
        self.assertNotIn('\x1b', text)
        self.assertIn('### notes', text)


class ErrorTest(ReportTest):
    def assertBadDb(self, path, exit_status=1):
        d = os.path.dirname(path)
        before = sorted(os.listdir(d))
        r = subprocess.run([REPORT, '--db', path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=60)
        err = r.stderr.decode()
        self.assertEqual(r.returncode, exit_status, err)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertTrue(err.startswith('mfu-report: '), err)
        self.assertEqual(r.stdout, b'')
        self.assertEqual(sorted(os.listdir(d)), before, 'mfu-report created files')
        return err

    def bad_dir(self):
        return tempfile.mkdtemp(dir=self.tmp)

    def test_missing(self):
        self.assertIn('no such file', self.assertBadDb(os.path.join(self.bad_dir(), 'nope.sqlite')))

    def test_empty_file(self):
        p = os.path.join(self.bad_dir(), 'empty.sqlite')
        open(p, 'wb').close()
        self.assertBadDb(p)

    def test_random_bytes(self):
        p = os.path.join(self.bad_dir(), 'random.sqlite')
        with open(p, 'wb') as f:
            f.write(random.Random(1).randbytes(10000))
        self.assertBadDb(p)

    def test_not_mfu(self):
        p = os.path.join(self.bad_dir(), 'other.sqlite')
        db = sqlite3.connect(p)
        db.execute('CREATE TABLE t (x)')
        db.commit()
        db.close()
        self.assertIn('not one written by mfu-record', self.assertBadDb(p))

    def test_newer_schema(self):
        p = os.path.join(self.bad_dir(), 'new.sqlite')
        Fixture(p, nsteps=2)
        db = sqlite3.connect(p)
        db.execute('PRAGMA user_version = 99')
        db.commit()
        db.close()
        self.assertIn('newer', self.assertBadDb(p))

    def truncated(self, wal):
        d = self.bad_dir()
        real = os.path.join(d, 'real.sqlite')
        Fixture(real, wal=wal)
        self.assertGreater(os.path.getsize(real), 3 * 4096)
        p = os.path.join(d, 'truncated.sqlite')
        with open(real, 'rb') as f, open(p, 'wb') as g:
            g.write(f.read(4096))
        os.unlink(real)
        return p

    def test_truncated(self):
        self.assertIn('corrupt', self.assertBadDb(self.truncated(wal=False)))

    def test_truncated_wal_mode(self):
        self.assertIn('corrupt', self.assertBadDb(self.truncated(wal=True)))

    def test_directory(self):
        self.assertBadDb(self.bad_dir())

    def test_usage(self):
        for args in (['nosuch'], ['--format', 'xml'], ['--bogus'], ['--db'], ['--sql', 'nosuch']):
            r = subprocess.run([REPORT, '--db', self.fx.path] + args, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=60)
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(r.stdout, b'', args)
            self.assertTrue(r.stderr.decode().startswith('mfu-report: '), args)
        r = subprocess.run([REPORT, 'nosuch'], stderr=subprocess.PIPE)
        self.assertIn('summary, steps, phases', r.stderr.decode())   # lists the valid ones

    def test_help_version(self):
        for opt in ('--help', '-h'):
            r = subprocess.run([REPORT, opt], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            self.assertEqual(r.returncode, 0)
            self.assertIn(b'usage: mfu-report', r.stdout)
            self.assertEqual(r.stderr, b'')
        r = subprocess.run([REPORT, '--version'], stdout=subprocess.PIPE)
        self.assertEqual(r.returncode, 0)
        self.assertTrue(r.stdout.startswith(b'mfu-report '))


class ReadOnlyTest(ReportTest):
    """A report changes nothing: no journal, -wal or -shm file appears, the
    file's bytes stay the same."""

    def check_untouched(self, wal):
        d = tempfile.mkdtemp(dir=self.tmp)
        p = os.path.join(d, 'run.sqlite')
        Fixture(p, wal=wal)
        with open(p, 'rb') as f:
            data = f.read()
        before = sorted(os.listdir(d))
        self.assertEqual(before, ['run.sqlite'])
        for fmt in ('table', 'csv', 'json', 'markdown'):
            self.run_report('--format', fmt, 'summary', 'steps', 'phases', 'notes', db=p)
            self.assertEqual(sorted(os.listdir(d)), before, 'after --format %s' % fmt)
        with open(p, 'rb') as f:
            self.assertEqual(f.read(), data)

    def test_rollback_journal_db(self):
        self.check_untouched(wal=False)

    def test_odd_path(self):
        d = tempfile.mkdtemp(dir=self.tmp)
        p = os.path.join(d, 'a run?#%20 x.sqlite')
        Fixture(p, nsteps=2, wal=True)     # WAL: opened through a file: URI
        got, _ = self.json('steps', db=p)
        self.assertEqual(len(got), 2)
        self.assertEqual(sorted(os.listdir(d)), ['a run?#%20 x.sqlite'])

    def test_wal_mode_db(self):
        # mfu-record writes its database in WAL mode; opening such a file
        # read-only makes SQLite create -wal and -shm unless it is opened
        # immutable (see db_open_readonly).
        self.check_untouched(wal=True)


def lib_fixture(path, steps, phases=(), dtype='fp32'):
    """A run whose steps are (wall_ns, model_flops, lib_flops, lib_flops_fp64)
    and phases (name, step, offset_ns, wall_ns, model_flops, lib_flops):
    library-call counts next to declarations."""
    db = sqlite3.connect(path)
    db.executescript(schema_sql())
    db.execute(
        "INSERT INTO run (id, mfu_version, command, start_unix_ns, start_ns, end_ns, ncpu, dtype,"
        " peak_flops, peak_flops_source, state, lib_counting)"
        " VALUES (1, '0.1.0', '[\"./app\"]', 0, ?, ?, ?, ?, ?, 'user: --peak-flops 2T', 'complete', 'on')",
        (START_NS, START_NS + 10_000_000_000, NCPU, dtype, PEAK_FLOPS))
    t = START_NS + 1000
    begins = []
    for i, (wall, model, lib, fp64) in enumerate(steps):
        db.execute(
            "INSERT INTO step (step, pid, tid, end_tid, begin_ns, end_ns, wall_ns, model_flops, cpu_ns,"
            " lib_flops, lib_flops_fp64, lib_flops_fp32, lib_calls, complete)"
            " VALUES (?, 42, 42, 42, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
            (i, t, t + wall, wall, model, wall, lib, fp64,
             None if lib is None else lib - (fp64 or 0), None if lib is None else 3))
        begins.append(t)
        t += wall + 1000
    for k, (name, step, off, wall, model, lib) in enumerate(phases):
        b = begins[step] + off
        db.execute(
            "INSERT INTO phase (id, step, name, pid, tid, depth, begin_ns, end_ns, wall_ns, model_flops,"
            " lib_flops, complete) VALUES (?, ?, ?, 42, 42, 0, ?, ?, ?, ?, ?, 1)",
            (k, step, name, b, b + wall, wall, model, lib))
    db.commit()
    db.close()


class LibFlopsTest(ReportTest):
    """MFU's numerator: the declared model FLOPs, else the library calls'
    FLOPs (step.flops, flops_source), and the notes that compare them."""

    def db(self, name, steps, phases=(), dtype='fp32'):
        p = os.path.join(self.tmp, name)
        lib_fixture(p, steps, phases, dtype)
        return p

    def test_steps_use_library_flops_when_none_declared(self):
        W = 10_000_000
        p = self.db('lib-steps.sqlite', [(W, 1e9, 1e9, 0), (2 * W, None, 2e9, 0), (W, None, 0, 0),
                                         (W, 4e9, None, None)])
        got, _ = self.json('steps', db=p)
        want = [
            dict(flops_source='declared', mfu=1e9 / (W / 1e9 * PEAK_FLOPS), lib_flops=1e9, lib_calls=3),
            dict(flops_source='library', mfu=2e9 / (2 * W / 1e9 * PEAK_FLOPS), lib_flops=2e9,
                 model_flops=None, model_flops_per_s=2e9 / (2 * W / 1e9)),
            # calls counted, none made: 0 library FLOPs, and MFU unknown (not 0)
            dict(flops_source=None, mfu=None, lib_flops=0, model_flops_per_s=None),
            # not counted at all: unknown
            dict(flops_source='declared', mfu=4e9 / (W / 1e9 * PEAK_FLOPS), lib_flops=None, lib_calls=None),
        ]
        for i, w in enumerate(want):
            self.assertRow(got[i], w, 'step %d' % i)
        summ, _ = self.json('summary', db=p)
        self.assertRow(summ[0], dict(
            flops_source='mixed', lib_flops=3e9, lib_ratio=1.0, lib_counting='on',
            mfu=(1e9 + 2e9 + 4e9) / ((W + 2 * W + W) / 1e9 * PEAK_FLOPS),
            e2e_mfu=None), 'summary')   # step 2 has no numerator
        notes, _ = self.json('notes', db=p)
        kinds = {n['kind']: n for n in notes}
        self.assertIn('flops_source', kinds)
        self.assertIn('1 of 3 steps uses the FLOPs of their library calls', kinds['flops_source']['text'])
        self.assertNotIn('flops_mismatch', kinds)
        self.assertIn('mfu covers 3 of 4 steps', kinds['model_flops']['text'])
        # the waterfall's MFU (all steps) needs every step's numerator
        wf, _ = self.json('waterfall', db=p)
        self.assertIsNone(wf[0]['mfu'])
        self.assertValue(wf[2]['mfu'], 2e9 / (2 * W / 1e9 * PEAK_FLOPS), 'waterfall step 1')

    def test_all_library(self):
        W = 5_000_000
        p = self.db('lib-only.sqlite', [(W, None, 3e9, 3e9), (W, None, 1e9, 1e9)])
        summ, _ = self.json('summary', db=p)
        self.assertRow(summ[0], dict(flops_source='library', lib_ratio=None,
                                     mfu=4e9 / (2 * W / 1e9 * PEAK_FLOPS),
                                     e2e_mfu=4e9 / ((2 * W + 1000) / 1e9 * PEAK_FLOPS)), 'summary')
        notes, _ = self.json('notes', db=p)
        kinds = {n['kind']: n for n in notes}
        self.assertIn('all 2 steps', kinds['flops_source']['text'])
        # fp64 work against the fp32 peak: the note names the --dtype to use
        self.assertIn('100% of the library FLOPs that mfu uses are fp64', kinds['lib_dtype']['text'])
        self.assertIn('--dtype fp64', kinds['lib_dtype']['text'])
        self.assertNotIn('model_flops', kinds)   # every step has a numerator
        p = self.db('lib-only64.sqlite', [(W, None, 3e9, 3e9)], dtype='fp64')
        notes, _ = self.json('notes', db=p)
        self.assertNotIn('lib_dtype', {n['kind'] for n in notes})

    def test_declaration_off_by_more_than_2x(self):
        W = 10_000_000
        for ratio, flagged in ((3.0, True), (1.9, False), (0.4, True), (0.6, False)):
            p = self.db('lib-mismatch-%g.sqlite' % ratio, [(W, ratio * 1e9, 1e9, 0), (W, ratio * 2e9, 2e9, 0)])
            summ, _ = self.json('summary', db=p)
            self.assertValue(summ[0]['lib_ratio'], ratio, 'lib_ratio')
            self.assertEqual(summ[0]['flops_source'], 'declared')
            notes, err = self.json('notes', db=p)
            got = {n['kind']: n for n in notes}
            self.assertEqual('flops_mismatch' in got, flagged, ratio)
            if flagged:
                self.assertEqual(got['flops_mismatch']['alert'], 1)
                self.assertIn('%.2fx the library calls' % ratio, got['flops_mismatch']['text'])
                self.assertIn('check mfu_step_model()', got['flops_mismatch']['text'])
        # declared by mfu.step(flops="count") (its note says so): the
        # mismatch note sends there, not to mfu_step_model() the program
        # never called; that note explains nothing missing, the other kind does
        p = self.db('lib-mismatch-count.sqlite', [(W, 0.3e9, 1e9, 0)])
        con = sqlite3.connect(p)
        con.execute("INSERT INTO note (kind, text) VALUES ('flops_count', 'mfu.step(flops=\"count\") at "
                    "t.py:3 declared 300000000 FLOPs per step'), ('flops_count_missing', 'mfu.step(flops="
                    "\"count\") at t.py:9 declared nothing')")
        con.commit()
        con.close()
        notes, err = self.json('notes', db=p)
        got = {n['kind']: n for n in notes}
        self.assertIn('check what mfu.step(flops="count") counted', got['flops_mismatch']['text'])
        self.assertNotIn('mfu_step_model', got['flops_mismatch']['text'])
        self.assertEqual(got['flops_count']['missing'], 0)
        self.assertEqual(got['flops_count_missing']['missing'], 1)

    def test_phases(self):
        W = 10_000_000
        p = self.db('lib-phases.sqlite', [(W, None, 3e9, 0), (W, None, 3e9, 0)], phases=[
            ('gemm', 0, 0, W // 2, None, 2e9), ('gemm', 1, 0, W // 4, None, 1e9),
            ('mix', 0, W // 2, W // 4, 5e8, 4e8), ('mix', 1, W // 2, W // 4, None, 6e8),
            ('none', 0, 0, W // 10, None, 0)])
        got, _ = self.json('phases', db=p)
        by = {r['phase']: r for r in got}
        self.assertRow(by['gemm'], dict(flops_source='library', lib_flops=3e9, model_flops=None,
                                        mfu=3e9 / ((W // 2 + W // 4) / 1e9 * PEAK_FLOPS)), 'gemm')
        self.assertRow(by['mix'], dict(flops_source='mixed', lib_flops=1e9, model_flops=5e8,
                                       mfu=(5e8 + 6e8) / ((W // 4 + W // 4) / 1e9 * PEAK_FLOPS)), 'mix')
        self.assertRow(by['none'], dict(flops_source=None, lib_flops=0, mfu=None), 'none')
        # the SQL run by hand gives the same (mfu-report computes phases in C)
        sql = self.run_report('--sql', 'phases', db=p).stdout.decode()
        con = sqlite3.connect(p)
        con.row_factory = sqlite3.Row
        by_sql = {r['phase']: dict(r) for r in run_sql(con, sql)}
        for name in by:
            for k in ('mfu', 'lib_flops', 'flops_source', 'model_flops_per_s'):
                self.assertValue(by_sql[name][k], by[name][k], '%s.%s by hand' % (name, k))


class StepLookupTest(ReportTest):
    """A sample's or an off-CPU interval's step (waterfall.sql, gaps.sql):
    the step its process had open at that instant, found in one sorted
    pass. Two processes with interleaved steps, an incomplete step, and
    samples and intervals at the edges (at a begin: inside; at an end:
    outside; between steps; in the other process's step), against a brute
    force over the rows."""

    def make(self, path):
        db = sqlite3.connect(path)
        db.executescript(schema_sql())
        db.execute("INSERT INTO run (id, mfu_version, command, cwd, start_unix_ns, start_ns, end_ns, host,"
                   " ncpu_affinity, ncpu, dtype, target_pid, state) VALUES (1, '0.1.0', '[\"./app\"]', '/tmp',"
                   " 0, 0, 10000000, 'host', 2, 2, 'fp32', 42, 'complete')")
        steps = []   # (step, pid, begin, end or None)
        n = 0
        for pid, t0 in ((42, 1000), (43, 1500)):
            t = t0
            for i in range(6):
                end = None if (pid, i) == (43, 3) else t + 700
                steps.append((n, pid, t, end))
                db.execute("INSERT INTO step (step, pid, tid, end_tid, begin_ns, end_ns, wall_ns, cpu_ns, complete)"
                           " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           (n, pid, pid, pid if end else None, t, end, end - t if end else None,
                            1400 if end else None, 1 if end else 0))
                n += 1
                t += 1000
        times = sorted({b + d for _, _, b, e in steps for d in (-1, 0, 1, 350, 699, 700, 701)})
        samples = []
        for pid in (42, 43):
            for t in times:
                samples.append((t, pid))
                db.execute("INSERT INTO sample (time_ns, pid, tid, kind, kernel, class)"
                           " VALUES (?, ?, ?, 0, 0, 'compute')", (t, pid, pid))
            for k, t in enumerate(times[::3]):
                db.execute("INSERT INTO offcpu (pid, tid, start_ns, end_ns, dur_ns, kind)"
                           " VALUES (?, ?, ?, ?, 5, ?)", (pid, pid, t, t + 5, ('blocked', 'runnable')[k % 2]))
        db.commit()
        db.close()
        return steps, samples, [(t, pid) for pid in (42, 43) for t in times[::3]]

    @staticmethod
    def step_at(steps, pid, t):
        """The complete step of @pid open at @t, by brute force."""
        begun = [s for s in steps if s[1] == pid and s[2] <= t]
        if not begun:
            return None
        last = max(begun, key=lambda s: s[2])
        return last[0] if last[3] is not None and t < last[3] else None

    def test_samples_and_intervals_fall_in_their_process_step(self):
        path = os.path.join(self.tmp, 'lookup.sqlite')
        steps, samples, offs = self.make(path)
        want = {}
        for t, pid in samples:
            s = self.step_at(steps, pid, t)
            if s is not None:
                want[s] = want.get(s, 0) + 1
        self.assertTrue(want and len(want) < len(steps))
        got, _ = self.json('waterfall', 'gaps', db=path)
        self.assertEqual({r['step']: r['samples'] for r in got['waterfall'] if r['step'] is not None and r['samples']},
                         want)
        want_offs = sorted((t, self.step_at(steps, pid, t)) for t, pid in offs
                           if self.step_at(steps, pid, t) is not None)
        got_offs = sorted((round(r['start_ms'] * 1e6), r['step']) for r in got['gaps']
                          if r['kind'] in ('blocked', 'runnable'))
        self.assertEqual(got_offs, want_offs)


if __name__ == '__main__':
    unittest.main(verbosity=int(os.environ.get('VERBOSE', '1')))
