#!/usr/bin/env python3
"""mfu-report on fixture databases: --skip-steps and the warm-up note, the
end-to-end MFU, rates, phases run by several threads at once (union time),
impossible utilizations, a measured peak far above the spec, unknown bytes.
Every expected number is computed here from the rows."""
import csv
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mfutest import run_sql  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_report import REPORT, schema_sql  # noqa: E402

START = 1_000_000_000
PEAK = 2.0e12
PEAK_BW = 5.0e10
MS = 1_000_000


def make_db(path, steps, phases=(), peaks=(), dtype='fp32', state='complete'):
    """steps: (begin_ns, wall_ns, model_flops, model_bytes); phases: (step,
    name, tid, begin_ns, wall_ns, model_flops); peaks: (kind, dtype, scope,
    value, source)."""
    db = sqlite3.connect(path)
    db.executescript(schema_sql())
    db.execute("INSERT INTO run (id, mfu_version, command, start_unix_ns, start_ns, end_ns, ncpu_affinity,"
               " ncpu, ncores, dtype, peak_flops, peak_flops_source, peak_bw, peak_bw_source, peak_mode,"
               " state) VALUES (1, '0', '[]', 0, ?, ?, 2, 2, 2, ?, ?, 'spec: test', ?, 'spec: test',"
               " 'auto', ?)", (START, START + 10**12, dtype, PEAK, PEAK_BW, state))
    for i, (b, w, f, by) in enumerate(steps):
        db.execute("INSERT INTO step (step, pid, tid, begin_ns, end_ns, wall_ns, model_flops, model_bytes,"
                   " cpu_ns, complete) VALUES (?, 1, 1, ?, ?, ?, ?, ?, ?, 1)", (i, b, b + w, w, f, by, w))
    for k, (st, name, tid, b, w, f) in enumerate(phases):
        db.execute("INSERT INTO phase (id, step, name, pid, tid, depth, begin_ns, end_ns, wall_ns, model_flops,"
                   " cpu_ns, complete) VALUES (?, ?, ?, 1, ?, 0, ?, ?, ?, ?, ?, 1)",
                   (k, st, name, tid, b, b + w, w, f, w))
    for kind, dt, scope, value, source in peaks:
        db.execute("INSERT INTO peak (kind, dtype, scope, value, source, detail) VALUES (?, ?, ?, ?, ?, 'x')",
                   (kind, dt, scope, value, source))
    db.commit()
    db.close()


class Base(unittest.TestCase):
    def setUp(self):
        if not os.access(REPORT, os.X_OK):
            self.skipTest('mfu-report not found at %s (set MFU_REPORT)' % REPORT)
        self.tmp = tempfile.mkdtemp(prefix='mfu-steady-')
        self.db = os.path.join(self.tmp, 'run.sqlite')

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def report(self, *args, code=0):
        p = subprocess.run([REPORT, '--db', self.db] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(p.returncode, code, p.stderr)
        return p

    def json(self, *args):
        out = json.loads(self.report('--format', 'json', *args).stdout)
        return out

    def notes(self, *args):
        return [(n['kind'], n['text']) for n in self.json(*args, 'notes')]


class SkipSteps(Base):
    """10 steps of 10 ms, the first 3 of 50 ms (warm-up), one phase each."""

    def setUp(self):
        super().setUp()
        steps, phases, t = [], [], START
        for i in range(10):
            w = (50 if i < 3 else 10) * MS
            steps.append((t, w, 1e9, None))
            phases.append((i, 'fwd', 1, t, w // 2, 5e8))
            t += w + MS
        self.steps = steps
        make_db(self.db, steps, phases)

    def test_summary_steps_phases_leave_out_the_first(self):
        s = self.json('--skip-steps', '3', 'summary')[0]
        self.assertEqual((s['steps'], s['skipped_steps']), (7, 3))
        self.assertAlmostEqual(s['wall_ms'], 70.0)
        self.assertAlmostEqual(s['mfu'], 7e9 / (0.070 * PEAK))
        rows = self.json('--skip-steps', '3', 'steps')
        self.assertEqual([r['step'] for r in rows], list(range(3, 10)))
        ph = self.json('--skip-steps', '3', 'phases')
        self.assertEqual(ph[0]['count'], 7)
        self.assertAlmostEqual(ph[0]['total_ms'], 35.0)
        bd = self.json('--skip-steps', '3', 'breakdown')
        self.assertEqual([r['step'] for r in bd], list(range(3, 10)))
        # without: all of them
        s = self.json('summary')[0]
        self.assertEqual((s['steps'], s['skipped_steps']), (10, 0))

    def test_gaps_from_a_skipped_step_go_too(self):
        # 10 steps, 1 ms apart: 9 gaps between steps; from step 3 on, 6
        gaps = [r for r in self.json('gaps') if r['kind'] == 'between_steps']
        self.assertEqual(len(gaps), 9)
        gaps = [r for r in self.json('--skip-steps', '3', 'gaps') if r['kind'] == 'between_steps']
        self.assertEqual(sorted(r['step'] for r in gaps), list(range(3, 9)))
        wf = self.json('--skip-steps', '3', 'waterfall')
        self.assertEqual([r['step'] for r in wf], [None] + list(range(3, 10)))

    def test_sql_with_skip_steps_runs_in_sqlite3(self):
        """--sql SECTION --skip-steps N prints the views too: run as it is,
        the file gives mfu-report's rows."""
        for section in ('summary', 'steps', 'phases', 'notes', 'gaps'):
            sql = self.report('--sql', section, '--skip-steps', '3').stdout
            self.assertIn('CREATE TEMP VIEW step', sql)
            con = sqlite3.connect('file:%s?mode=ro' % self.db, uri=True)
            con.row_factory = sqlite3.Row
            i = sql.index('-- %s:' % section)    # the section's own SQL starts there
            con.executescript(sql[:i])
            body = sql[i:]
            rows = [dict(r) for r in con.execute(body)]
            con.close()
            want = self.json('--skip-steps', '3', section)
            self.assertEqual(len(rows), len(want), section)
            for got, exp in zip(rows, want):
                for k, v in exp.items():
                    if isinstance(v, float):
                        self.assertAlmostEqual(got[k], v, msg='%s %s' % (section, k))
                    else:
                        self.assertEqual(got[k], v, '%s %s' % (section, k))
        # the option is a value in SQL: without it, the same views skip none
        self.assertIn('SELECT 3 AS skip_steps', self.report('--sql', 'steps', '--skip-steps', '3').stdout)
        self.assertIn('SELECT 0 AS skip_steps', self.report('--sql', 'steps').stdout)

    def test_more_than_there_are(self):
        s = self.json('--skip-steps', '50', 'summary')[0]
        self.assertEqual((s['steps'], s['skipped_steps']), (0, 10))
        self.assertEqual(self.json('--skip-steps', '50', 'phases'), [])

    def test_bad_values_are_usage_errors(self):
        for bad in ('-1', 'x', '1.5', '', '99999999999999999999'):
            p = self.report('--skip-steps', bad, code=2)
            self.assertIn('--skip-steps', p.stderr)

    def test_warmup_note_names_the_option(self):
        notes = [t for k, t in self.notes() if k == 'warmup']
        self.assertEqual(len(notes), 1, notes)
        self.assertIn('the first 3 steps took more than 2x the median step (10.000 ms)', notes[0])
        self.assertIn('--skip-steps 3 ', notes[0])
        # covered: no note
        self.assertEqual([t for k, t in self.notes('--skip-steps', '3') if k == 'warmup'], [])
        # partly covered: the option that covers them all
        notes = [t for k, t in self.notes('--skip-steps', '1') if k == 'warmup']
        self.assertEqual(len(notes), 1, notes)
        self.assertIn('--skip-steps 3 ', notes[0])
        # the table summary shows it too
        self.assertIn('warm-up: the first 3 steps', self.report('summary').stdout)

    def test_no_warmup_note_when_steps_differ_in_size(self):
        """Steps of very different sizes (a library function's calls as
        steps: HPL's dgemm calls) whose first ones are large: no warm-up."""
        other = os.path.join(self.tmp, 'sizes.sqlite')
        steps, t = [], START
        for i in range(40):
            w = (50 if i < 3 or i % 4 == 0 else 10) * MS
            steps.append((t, w, 1e9, None))
            t += w + MS
        make_db(other, steps, [])
        p = subprocess.run([REPORT, '--db', other, '--format', 'json', 'notes'], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([n for n in json.loads(p.stdout) if n['kind'] == 'warmup'], [])

    def test_e2e_mfu_counts_the_gaps(self):
        s = self.json('summary')[0]
        first, last = self.steps[0], self.steps[-1]
        span = last[0] + last[1] - first[0]
        self.assertAlmostEqual(s['e2e_wall_ms'], span / 1e6)
        self.assertAlmostEqual(s['e2e_mfu'], 10e9 / (span / 1e9 * PEAK))
        self.assertLess(s['e2e_mfu'], s['mfu'])  # 9 gaps of 1 ms
        self.assertAlmostEqual(s['model_flops_per_s'], 10e9 / (s['wall_ms'] / 1e3))


class ThreadedPhases(Base):
    def test_overlapping_threads_count_once(self):
        # step 0: two threads run "fwd" over [0, 10] and [2, 12] ms: union 12 ms
        # step 1: "fwd" over [100, 105] and [106, 110] ms: union 9 ms = total
        steps = [(START, 20 * MS, None, None), (START + 100 * MS, 20 * MS, None, None)]
        phases = [(0, 'fwd', 1, START, 10 * MS, 1e9), (0, 'fwd', 2, START + 2 * MS, 10 * MS, 1e9),
                  (1, 'fwd', 1, START + 100 * MS, 5 * MS, 1e9), (1, 'fwd', 2, START + 106 * MS, 4 * MS, 1e9)]
        make_db(self.db, steps, phases)
        ph = self.json('phases')[0]
        self.assertAlmostEqual(ph['total_ms'], 29.0)
        self.assertAlmostEqual(ph['union_ms'], 21.0)
        self.assertAlmostEqual(ph['mfu'], 4e9 / (0.021 * PEAK))
        self.assertAlmostEqual(ph['model_flops_per_s'], 4e9 / 0.021)
        # the SQL a user runs by hand gives the same
        sql = self.report('--sql', 'phases').stdout
        con = sqlite3.connect(self.db)
        con.row_factory = sqlite3.Row
        row = dict(run_sql(con, sql).fetchone())
        con.close()
        self.assertAlmostEqual(row['union_ms'], 21.0)
        self.assertAlmostEqual(row['mfu'], ph['mfu'])

    def test_only_declared_occurrences_time_the_mfu(self):
        steps = [(START, 20 * MS, None, None)]
        phases = [(0, 'fwd', 1, START, 10 * MS, 1e9), (0, 'fwd', 2, START + 5 * MS, 10 * MS, None)]
        make_db(self.db, steps, phases)
        ph = self.json('phases')[0]
        self.assertAlmostEqual(ph['union_ms'], 15.0)
        self.assertAlmostEqual(ph['mfu'], 1e9 / (0.010 * PEAK))


class Impossible(Base):
    def test_mfu_above_100_is_flagged(self):
        steps = [(START + i * 20 * MS, 10 * MS, f, None) for i, f in enumerate((1e9, 1e12, 3e11))]
        make_db(self.db, steps)
        notes = [t for k, t in self.notes() if k == 'impossible']
        self.assertEqual(len(notes), 1, notes)
        self.assertIn('2 steps have MFU above 100% (the highest 5000%, step 1)', notes[0])
        table = self.report('steps').stdout
        self.assertIn('5000.00!', table)
        self.assertIn('1500.00!', table)
        self.assertNotIn('5.00!', table.replace('5000.00!', ''))
        # csv keeps the number, a fraction
        rows = list(csv.DictReader(io.StringIO(self.report('--format', 'csv', 'steps').stdout)))
        self.assertAlmostEqual(float(rows[1]['mfu']), 50.0)
        self.assertIn('impossible', self.report('summary').stdout)

    def test_alerts_reach_stderr_and_every_table(self):
        """A number that cannot be right is never silent: on stderr for csv
        and json, under the table of any section, not only the summary."""
        steps = [(START + i * 20 * MS, 10 * MS, f, None) for i, f in enumerate((1e9, 1e12))]
        make_db(self.db, steps)
        for fmt in ('csv', 'json'):
            err = self.report('--format', fmt, 'steps').stderr
            self.assertIn('mfu-report: note: 1 step has MFU above 100% (the highest 5000%, step 1)', err)
            self.assertIn('the fp32 FLOP peak (spec: test)', err)
        self.assertIn('1 step has MFU above 100%', self.report('steps').stdout)
        self.assertIn('1 step has MFU above 100%', self.report('--format', 'markdown', 'phases').stdout)
        # left out with the step: silent again
        self.assertNotIn('above 100%', self.report('--skip-steps', '2', 'steps').stdout)
        self.assertNotIn('above 100%', self.report('--format', 'csv', '--skip-steps', '2', 'steps').stderr)

    def test_phase_union_above_100(self):
        """Two threads each at 80% of the peak over the same 10 ms: each
        occurrence is possible, the phase (union time 10 ms) is at 160%."""
        steps = [(START, 20 * MS, None, None)]
        f = 0.8 * PEAK * 0.010
        phases = [(0, 'fwd', 1, START, 10 * MS, f), (0, 'fwd', 2, START, 10 * MS, f)]
        make_db(self.db, steps, phases)
        ph = self.json('phases')[0]
        self.assertAlmostEqual(ph['mfu'], 1.6)
        notes = [t for k, t in self.notes() if k == 'impossible']
        self.assertEqual(len(notes), 1, notes)
        self.assertIn("1 phase has MFU above 100% (the highest 160%, phase 'fwd')", notes[0])
        self.assertIn('160.00!', self.report('phases').stdout)
        # the plain SQL of notes.sql says the same
        sql = self.report('--sql', 'notes').stdout
        con = sqlite3.connect(self.db)
        texts = [r[1] for r in run_sql(con, sql) if r[0] == 'impossible']
        con.close()
        self.assertEqual(texts, notes)

    def test_summary_above_100_marked(self):
        make_db(self.db, [(START, 10 * MS, 1e12, None)])
        out = self.report('summary').stdout
        self.assertRegex(out, r'\n  MFU +5000\.00%! of the fp32 peak')

    def test_measured_far_above_spec(self):
        make_db(self.db, [(START, 10 * MS, 1e9, None)],
                peaks=[('flops', 'fp32', 'all', 1e12, 'spec'), ('flops', 'fp32', 'all', 3e12, 'measured'),
                       ('bandwidth', None, 'all', 1e11, 'spec'), ('bandwidth', None, 'all', 0.5e11, 'measured')])
        notes = [t for k, t in self.notes() if k == 'spec_low']
        self.assertEqual(len(notes), 1, notes)
        self.assertIn('the measured fp32 FLOP/s peak is 3.00x the spec one', notes[0])

    def test_possible_is_silent(self):
        make_db(self.db, [(START, 10 * MS, 1e9, 1e6)])
        self.assertEqual([t for k, t in self.notes() if k in ('impossible', 'spec_low', 'warmup')], [])
        self.assertNotIn('!', self.report('steps', 'summary').stdout)


class UnknownBytes(Base):
    def test_flops_only(self):
        make_db(self.db, [(START, 10 * MS, 1e9, None)],
                phases=[(0, 'fwd', 1, START, 5 * MS, 1e9)])
        s = self.json('steps')[0]
        self.assertIsNone(s['model_bytes'])
        self.assertIsNone(s['mbu'])
        self.assertIsNone(s['model_bytes_per_s'])
        self.assertAlmostEqual(s['model_flops_per_s'], 1e11)
        ph = self.json('phases')[0]
        self.assertIsNone(ph['mbu'])
        self.assertIsNone(ph['model_bytes_per_s'])
        summ = self.json('summary')[0]
        self.assertIsNone(summ['mbu'])
        self.assertIsNone(summ['model_bytes_per_s'])

    def test_int8_says_ops(self):
        make_db(self.db, [(START, 10 * MS, 1e9, None)], dtype='int8')
        text = [t for k, t in self.notes() if k == 'peak_flops'][0]
        self.assertIn('int8 peak of 2 Top/s for 2 cores', text)


class Live(Base):
    def test_a_recording_still_going_on(self):
        """Samples are classified when a recording ends: a live one says so
        instead of 'recorded without sampling'."""
        make_db(self.db, [(START, 10 * MS, 1e9, None)], state='recording')
        out = self.report('breakdown').stdout
        self.assertIn('still going on', out)
        self.assertNotIn('recorded without sampling', out)
        make_db_path = os.path.join(self.tmp, 'done.sqlite')
        make_db(make_db_path, [(START, 10 * MS, 1e9, None)])
        p = subprocess.run([REPORT, '--db', make_db_path, 'breakdown'], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertIn('recorded without sampling', p.stdout)


class Usage(Base):
    def test_a_database_given_as_a_section(self):
        make_db(self.db, [(START, 10 * MS, 1e9, None)])
        p = subprocess.run([REPORT, self.db], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn('--db %s' % self.db, p.stderr)

    def test_a_misspelled_section(self):
        make_db(self.db, [(START, 10 * MS, 1e9, None)])
        p = self.report('sumary', code=2)
        self.assertIn("unknown section 'sumary'; did you mean summary?", p.stderr)


if __name__ == '__main__':
    unittest.main(verbosity=2)
