#!/usr/bin/env python3
"""The summary for people (issue 26 item 1): the demo workload recorded as
`make demo` records it; the summary mfu-record prints at exit and
`mfu-report --db FILE` are the same bytes; at most 25 lines, every line
under 100 columns, no line whose value is '-', each peak's source once, and
one line for what is unknown here that names exactly the figures the run
lacks (whether or not this machine has a PMU)."""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mfutest import nobody_tmp, prog, record  # noqa: E402

MAX_LINES = 25
MAX_COLUMNS = 99


def report(*args):
    p = subprocess.run([prog('MFU_REPORT')] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError('mfu-report %s exited %d: %s' % (' '.join(args), p.returncode, p.stderr))
    return p.stdout


class DemoSummary(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix='mfu-test-', dir=nobody_tmp())
        cls.db = os.path.join(cls.tmp.name, 'demo.sqlite')
        # what make demo runs
        cls.rec = record(['-o', cls.db], [prog('MFU_WL_MLP')], timeout=300)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        self.assertEqual(self.rec.returncode, 0, self.rec.stderr)

    def recap(self):
        """The end-of-run summary: from its title to the recorder's closing line."""
        err = self.rec.stderr
        start = err.index('\nsummary\n') + 1
        end = err.rindex('mfu-record: ')
        self.assertRegex(err[end:], r'^mfu-record: 200 steps, [0-9]+ marker records, 0 lost, 0 anomalies -> ')
        return err[start:end]

    def test_recap_is_the_reports_byte_for_byte(self):
        self.assertEqual(self.recap(), report('--db', self.db))

    def test_short_and_narrow(self):
        for fmt in ('table', 'markdown'):
            text = report('--db', self.db, '--format', fmt)
            lines = text.rstrip('\n').split('\n')
            if fmt == 'table':
                self.assertLessEqual(len(lines), MAX_LINES, text)
            for line in lines:
                self.assertLessEqual(len(line), MAX_COLUMNS, '%s: %r' % (fmt, line))

    def test_no_line_of_unknowns(self):
        for line in self.recap().split('\n'):
            self.assertNotRegex(line, r'(^|\s)-$', line)
            self.assertNotRegex(line, r'(^|\s)(null|None|nan)$', line)

    def test_each_peak_source_once(self):
        s = json.loads(report('--db', self.db, '--format', 'json'))[0]
        text = self.recap()
        for key in ('peak_source', 'peak_bw_source'):
            if s[key] is None:
                continue
            # the source's opening words (the whole text may be cut to
            # two lines; all of it is in json and the peaks section)
            head = s[key][:40]
            self.assertEqual(text.count(head), 1, '%s %r in:\n%s' % (key, head, text))
        # the peaks' own notes are not printed again under the summary
        self.assertNotIn('mfu and hfu use the', text)
        self.assertNotIn('mbu uses the memory bandwidth peak', text)

    def test_unknown_line_lists_what_is_unknown(self):
        s = json.loads(report('--db', self.db, '--format', 'json'))[0]
        text = self.recap()
        unknown = re.search(r'\nunknown here: (.*?) \(', text.replace('\n  ', ' '))
        listed = set(unknown.group(1).split(', ')) if unknown else set()
        for key, label in (('mfu', 'MFU'), ('hfu', 'HFU'), ('mbu', 'MBU'), ('hw_flops', 'HW FLOP'),
                           ('dram_bytes', 'DRAM'), ('model_flops', 'model FLOP'),
                           ('model_bytes', 'model bytes'), ('cpu_util', 'CPU util')):
            if s[key] is None:
                self.assertIn(label, listed, text)
            else:
                self.assertNotIn(label, listed, text)
        # the figures known have their lines, beside their peak
        self.assertRegex(text, r'\n  MFU +[0-9.]+%%!? of the %s peak \([0-9.]+ [kMGTP]?FLOP/s\)' % s['dtype'])
        if s['hfu'] is not None:
            self.assertRegex(text, r'\n  HFU +[0-9.]+%%!? of the %s peak' % s['dtype'])
        if s['mbu'] is not None:
            self.assertRegex(text, r'\n  MBU +[0-9.]+%!? of the memory bandwidth peak \([0-9.]+ [kMGT]?B/s\)')

    def test_groups_in_order(self):
        text = self.recap()
        titles = [l for l in text.split('\n') if l and not l.startswith(' ') and not l.startswith('unknown')]
        want = ['summary', 'result', 'where time went', 'work', 'machine', 'run health']
        self.assertEqual([t for t in titles if t in want], want, text)

    def test_csv_and_json_keep_every_column(self):
        head = report('--db', self.db, '--format', 'csv').split('\n')[0].split(',')
        s = json.loads(report('--db', self.db, '--format', 'json'))[0]
        self.assertEqual(head, list(s))
        for col in ('steps', 'wall_ms', 'mfu', 'peak_flops', 'peak_source', 'peak_bw', 'dtype', 'hfu',
                    'mbu', 'exit_signal', 'emulated', 'hw_flops_fp64', 'run_lib_ops_int8'):
            self.assertIn(col, head)


if __name__ == '__main__':
    unittest.main()
