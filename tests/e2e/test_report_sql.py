#!/usr/bin/env python3
"""mfu-report --sql SECTION is what the report runs: for every section and
every kind of run (native, emulated, a merged file of ranks, --skip-steps,
--hw-flops-from, --dtype), the printed SQL piped into the sqlite3 program gives the
same rows as mfu-report --format csv. The views (analyses/views.sql) come
first in that SQL; an emulated run's hand-run steps have no MFU.

    MFU_REPORT=build/src/report/mfu-report python3 tests/e2e/test_report_sql.py -v
"""
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
from test_report import REPORT, Fixture  # noqa: E402
from test_trace_diff import trace_fixture  # noqa: E402

SQLITE3 = shutil.which('sqlite3')
JOB_SECTIONS = ('job', 'ranks', 'job_steps', 'job_notes')


def report(*args, check=True):
    p = subprocess.run([REPORT] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=120)
    if check and p.returncode != 0:
        raise AssertionError('mfu-report %s exited %d: %s' % (' '.join(args), p.returncode, p.stderr))
    return p


def rows_of(text):
    return list(csv.reader(io.StringIO(text)))


def same_cell(a, b):
    """csv cells: text equal, or numbers equal to 1e-9 (sqlite3 prints 15
    digits, mfu-report 17)."""
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return abs(x - y) <= 1e-9 * max(abs(x), abs(y)) + 1e-300


@unittest.skipIf(not SQLITE3, 'the sqlite3 program is not installed')
class SqlIsTheReport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='mfu-report-sql-')
        cls.native = os.path.join(cls.tmp, 'native.sqlite')
        Fixture(cls.native, hw=True)
        cls.traced = os.path.join(cls.tmp, 'traced.sqlite')  # samples, off-CPU intervals
        trace_fixture(cls.traced)
        # the same run marked emulated: its counts, not its speed
        cls.emulated = os.path.join(cls.tmp, 'emulated.sqlite')
        shutil.copy(cls.native, cls.emulated)
        db = sqlite3.connect(cls.emulated)
        db.execute("UPDATE run SET emulated = 'valgrind-3.19.0 --tool=mfufp'")
        db.execute("UPDATE step SET hw_flops = hw_flops * 2")   # counts of its own, to tell them apart
        db.execute("UPDATE phase SET hw_flops = 7e9 WHERE complete = 1")
        db.commit()
        db.close()
        # the peaks mfu-record chose for other dtypes (mfu-report --dtype)
        cls.dtyped = os.path.join(cls.tmp, 'dtyped.sqlite')
        shutil.copy(cls.native, cls.dtyped)
        db = sqlite3.connect(cls.dtyped)
        db.execute("INSERT INTO peak (kind, dtype, scope, value, source, detail) VALUES "
                   "('flops', 'fp64', 'choice', 1e12, 'spec', 'spec: half the fp32 peak, by hand')")
        db.commit()
        db.close()
        other = os.path.join(cls.tmp, 'native.1.sqlite')
        shutil.copy(cls.native, other)
        cls.merged = os.path.join(cls.tmp, 'job.sqlite')
        report('merge', '-o', cls.merged, cls.native, other)
        cls.sections = [line.split()[0] for line in report('--list').stdout.splitlines() if line.strip()]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def cases(self):
        """(what, database, options, sections)"""
        runs = [s for s in self.sections if s not in JOB_SECTIONS]
        return [
            ('native', self.native, [], runs),
            ('traced', self.traced, [], runs),
            ('emulated', self.emulated, [], runs),
            ('merged', self.merged, [], list(JOB_SECTIONS)),
            ('skip-steps', self.native, ['--skip-steps', '3'], runs),
            ('skip-steps traced', self.traced, ['--skip-steps', '1'], runs),
            ('quiet', self.native, ['-q'], runs),
            ('hw-flops-from', self.native, ['--hw-flops-from', self.emulated], runs),
            ('dtype', self.dtyped, ['--dtype', 'fp64'], runs),
            ('dtype not recorded', self.native, ['--dtype', 'int8'], runs),
        ]

    def by_hand(self, db, sql):
        p = subprocess.run([SQLITE3, '-bail', '-readonly', '-csv', '-header', db], input=sql,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, '')
        return rows_of(p.stdout)

    def test_every_section_every_run(self):
        self.compared = 0
        for what, db, opts, sections in self.cases():
            for section in sections:
                with self.subTest(run=what, section=section):
                    sql = report('--sql', section, *opts).stdout
                    want = rows_of(report('--db', db, '--format', 'csv', '--raw', *opts, section).stdout)
                    got = self.by_hand(db, sql)
                    # sqlite3 prints no header for no rows
                    if len(want) == 1 and not got:
                        continue
                    self.compared += len(want) - 1
                    self.assertEqual(got[0], want[0], 'columns')
                    self.assertEqual(len(got), len(want), 'rows')
                    for n, (g, w) in enumerate(zip(got[1:], want[1:])):
                        bad = [(k, a, b) for k, a, b in zip(want[0], g, w) if not same_cell(a, b)]
                        self.assertEqual(bad, [], 'row %d' % n)
        self.assertGreater(self.compared, 300)   # rows compared, not only headers

    def test_dtype_divides_by_its_peak(self):
        """--dtype fp64 on a run recorded at fp32 (peak 2 TFLOP/s) whose fp64
        choice is 1 TFLOP/s: every MFU and HFU doubles, by hand as in the
        report; a dtype without a choice has none."""
        base = json.loads(report('--db', self.dtyped, '--format', 'json', 'steps').stdout)
        half = json.loads(report('--db', self.dtyped, '--format', 'json', '--dtype', 'fp64', 'steps').stdout)
        rows = self.by_hand(self.dtyped, report('--sql', 'steps', '--dtype', 'fp64').stdout)
        hand = [dict(zip(rows[0], r)) for r in rows[1:]]
        self.assertTrue(any(b['mfu'] for b in base))
        for b, h, s in zip(base, half, hand):
            for c in ('mfu', 'hfu'):
                if b[c] is None:
                    self.assertIsNone(h[c])
                else:
                    self.assertAlmostEqual(h[c], 2 * b[c], delta=1e-12 * b[c])
                    self.assertAlmostEqual(float(s[c]), 2 * b[c], delta=1e-9 * b[c])
        none = json.loads(report('--db', self.dtyped, '--format', 'json', '--dtype', 'int8', 'steps').stdout)
        self.assertTrue(all(r['mfu'] is None and r['hfu'] is None for r in none))

    def test_dtype_on_odd_databases(self):
        """A database edited to hold two fp64 choices gets the first, not a
        run row each; a run without any peak, --dtype its own: the note
        still says the peak is unknown (not a NULL note)."""
        two = os.path.join(self.tmp, 'two_choices.sqlite')
        shutil.copy(self.dtyped, two)
        db = sqlite3.connect(two)
        db.execute("INSERT INTO peak (kind, dtype, scope, value, source, detail) VALUES "
                   "('flops', 'fp64', 'choice', 3e12, 'spec', 'a second one')")
        db.commit()
        db.close()
        out = json.loads(report('--db', two, '--format', 'json', '--dtype', 'fp64', 'summary').stdout)
        self.assertEqual(len(out), 1)
        self.assertEqual(out[0]['peak_flops'], 1e12)
        self.assertTrue(out[0]['peak_source'].endswith('spec: half the fp32 peak, by hand'), out[0])
        self.assertIsNotNone(out[0]['mfu'])
        nopeak = os.path.join(self.tmp, 'nopeak.sqlite')
        Fixture(nopeak, peak=False)
        notes = json.loads(report('--db', nopeak, '--format', 'json', '--dtype', 'fp32', 'notes').stdout)
        text = [n['text'] for n in notes if n['kind'] == 'peak_flops']
        self.assertEqual(text, ['no fp32 FLOP/s peak is known for this run, so mfu and hfu are unknown'])

    def test_emulated_steps_by_hand_have_no_mfu(self):
        for section, cols in (('steps', ('mfu', 'hfu', 'mbu', 'model_flops_per_s', 'hw_flops_per_s')),
                              ('summary', ('mfu', 'hfu', 'mbu', 'peak_flops', 'hw_flops_per_s')),
                              ('phases', ('mfu', 'hfu', 'mbu', 'hw_flops_per_s'))):
            rows = self.by_hand(self.emulated, report('--sql', section).stdout)
            self.assertGreater(len(rows), 1, section)
            for r in rows[1:]:
                row = dict(zip(rows[0], r))
                for c in cols:
                    self.assertEqual(row[c], '', (section, c, row))
            # the counts stay
            self.assertTrue(any(dict(zip(rows[0], r)).get('hw_flops') for r in rows[1:]), section)
        # the native run's do not: the test could fail
        rows = self.by_hand(self.native, report('--sql', 'steps').stdout)
        self.assertTrue(any(dict(zip(rows[0], r))['mfu'] for r in rows[1:]))


if __name__ == '__main__':
    unittest.main(verbosity=int(os.environ.get('VERBOSE', '1')))
