#!/usr/bin/env python3
"""The default columns of the wide sections (docs/report.md, "Default
columns"), on a recorded demo run (wl_mlp, as `make demo` records it):

- the default steps, phases and breakdown tables are at most 120 columns
  wide (the notes under them are prose, not table);
- `--columns all` shows every column csv has, in the same order;
- csv and json carry every column of the section's SQL, whatever the table
  shows (run by hand from `mfu-report --sql`);
- an unknown name in `--columns` is one line on stderr and exit status 2.

Run through meson (`meson test -C BUILD report_columns`) or by hand with
MFU_RECORD, MFU_REPORT and MFU_WL_MLP set.
"""
import csv
import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mfutest import prog, record  # noqa: E402

WIDE = ('steps', 'phases', 'breakdown')


class Columns(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='mfu-columns-')
        cls.db = os.path.join(cls.tmp, 'demo.sqlite')
        r = record(['--no-calibrate', '-q', '-o', cls.db], [prog('MFU_WL_MLP'), '--steps', '40'])
        if r.returncode != 0:
            raise AssertionError('mfu-record failed: %s' % r.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def report(self, *args, check=True):
        r = subprocess.run([prog('MFU_REPORT'), '--db', self.db] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if check:
            self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def grid(self, text, title):
        """Section @title's header, dashes and rows (table format)."""
        lines = text.split('\n')
        i = lines.index(title)
        if not lines[i + 2].startswith('-'):   # a verdict comes first: not the table
            i += 1
        out = []
        for line in lines[i + 1:]:
            if not line or line.startswith('('):
                break
            out.append(line)
        return out

    def csv_header(self, section):
        return next(csv.reader(io.StringIO(self.report('--format', 'csv', section).stdout)))

    def sql_columns(self, section):
        """The column names of the section's SQL as mfu-report --sql prints
        it, run by Python's sqlite3."""
        sql = self.report('--sql', section).stdout
        con = sqlite3.connect('file:%s?mode=ro' % self.db, uri=True)
        try:
            # the views are statements of their own; the section is the last
            stmts = [s for s in _split(sql) if s.strip()]
            for s in stmts[:-1]:
                con.execute(s)
            cur = con.execute(stmts[-1])
            return [d[0] for d in cur.description]
        finally:
            con.close()

    def test_default_tables_fit_120_columns(self):
        text = self.report(*WIDE).stdout
        for section in WIDE:
            g = self.grid(text, section)
            self.assertGreaterEqual(len(g), 3, section)        # header, dashes, a row
            widest = max(len(line) for line in g)
            print('%s: default table %d columns wide' % (section, widest))
            self.assertLessEqual(widest, 120, section)
            left = len(self.csv_header(section)) - len(re.split(r'  +', g[0].strip()))
            self.assertGreater(left, 0, section)
            self.assertIn('(%d more columns: --columns all; csv and json carry every column)' % left,
                          text.split('\n'), section)
        md = self.report('--format', 'markdown', *WIDE).stdout
        self.assertEqual(md.count('more columns: --columns all'), 3)

    def test_columns_all_is_every_csv_column(self):
        text = self.report('--columns', 'all', *WIDE).stdout
        self.assertNotIn('more column', text)
        for section in WIDE:
            labels = re.split(r'  +', self.grid(text, section)[0].strip())
            self.assertEqual(len(labels), len(self.csv_header(section)), section)

    def test_csv_and_json_carry_every_column(self):
        for section in WIDE:
            want = self.sql_columns(section)
            self.assertEqual(self.csv_header(section), want, section)
            rows = json.loads(self.report('--format', 'json', section).stdout)
            self.assertTrue(rows, section)
            self.assertEqual(list(rows[0].keys()), want, section)

    def test_chosen_columns(self):
        text = self.report('--columns', 'mfu,step', 'steps').stdout
        g = self.grid(text, 'steps')
        self.assertEqual(g[0].split(), ['MFU', '%', 'step'])
        self.assertIn('(28 more columns: --columns all; csv and json carry every column)', text)
        # phases has mfu but no step: its mfu only
        g = self.grid(self.report('--columns', 'mfu,step', 'steps', 'phases').stdout, 'phases')
        self.assertEqual(g[0].split(), ['MFU', '%'])

    def test_unknown_column(self):
        r = self.report('--columns', 'step,walltime', 'steps', check=False)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stdout, '')
        self.assertEqual(r.stderr.count('\n'), 1, r.stderr)
        self.assertIn("mfu-report: --columns: no column 'walltime' in steps", r.stderr)
        for args in (['--format', 'csv', '--columns', 'all', 'steps'], ['--columns', '', 'steps'],
                     ['--columns', 'step,,mfu', 'steps']):
            r = self.report(*args, check=False)
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(r.stdout, '', args)


def _split(sql):
    """@sql cut into statements at the semicolons sqlite3.complete_statement
    accepts (triggers and strings with ';' stay whole)."""
    out, cur = [], ''
    for line in sql.splitlines(keepends=True):
        cur += line
        if sqlite3.complete_statement(cur):
            out.append(cur)
            cur = ''
    if cur.strip():
        out.append(cur)
    return out


if __name__ == '__main__':
    unittest.main()
