#!/usr/bin/env python3
"""A hostile target never harms the report (issue 22, items 2, 7 and 8).

What a recorded program controls ends up in the report: the FLOPs and
bytes it declares (mfu_step_model(1e300, 1e300) is accepted as valid) and
the names of its phases (terminal escapes, spreadsheet formulas, bytes that
are not UTF-8). Checked here, on a fixture database and on a real
recording:

- every section in every format, --html, --trace and --diff finish with
  bounded, readable numbers (no bytes of the stack: the ASan build runs this
  file too) and the summary says the MFU is impossible;
- csv (and --diff's csv) carries no control byte and no live formula,
  numbers stay numbers, and --raw gives the stored bytes back exactly;
- the recorder's own end-of-run summary, on stderr, is as safe.

Run through meson (`meson test -C BUILD report_hostile`) or by hand with
MFU_REPORT (and MFU_RECORD, MFU_LIBMFU, MFU_PYTHON_DIR for the recording).
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
import unittest.mock

ROOT = os.environ.get('MFU_SRCDIR') or os.environ.get('MFU_SOURCE_ROOT') or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT = os.environ.get('MFU_REPORT') or os.path.join(ROOT, 'build', 'src', 'report', 'mfu-report')

START_NS = 1_000_000_000
HUGE = 1e300

# The names a hostile program gives its phases, as stored (bytes), with what
# csv must show: escaped as the table escapes them, a "'" before a formula,
# numbers left alone. (name, csv cell as read back by a CSV parser)
NAMES = [
    (b'\x1b]0;pwned\x07', '\\x1b]0;pwned\\x07'),         # sets the terminal's title
    (b'ok\rgone', 'ok\\rgone'),                           # CR hides what came before
    (b'\x1b[2J\x1b[31mred', '\\x1b[2J\\x1b[31mred'),      # clears the screen
    (b'c1\xc2\x9b2J', 'c1\\u009b2J'),                     # U+009B: a C1 CSI
    (b'rtl\xe2\x80\xaeevil', 'rtl\\u202eevil'),           # bidi override (Trojan Source)
    (b'tab\tname\nnext', 'tab\\tname\\nnext'),
    (b'bad\xff\xfe', 'bad\\xff\\xfe'),                    # not UTF-8
    (b'back\\slash', 'back\\\\slash'),
    (b'=HYPERLINK("http://x","y")', '\'=HYPERLINK("http://x","y")'),
    (b'+1+2', "'+1+2"),
    (b'@SUM(A1)', "'@SUM(A1)"),
    (b'-2+3', "'-2+3"),
    (b'=cmd|\' /C calc\'!A0', "'=cmd|' /C calc'!A0"),
    (b'\t=1+1', '\\t=1+1'),                               # escaped: no longer leading
    (b'-1.5', '-1.5'),                                    # a number stays a number
    (b'+2e3', '+2e3'),
    (b'a,"b"', 'a,"b"'),                                  # RFC 4180 quoting only
]

ANALYSIS_SECTIONS = ['summary', 'steps', 'phases', 'notes', 'breakdown', 'phase_breakdown', 'gaps',
                     'dispatch', 'waterfall', 'events', 'intervals', 'peaks']
FORMATS = ['table', 'csv', 'json', 'markdown']


def schema_sql():
    parts = []
    # the run database's schema, NNN.sql (profile.sql is the machine profile's)
    for name in sorted(os.listdir(os.path.join(ROOT, 'schema'))):
        if name.endswith('.sql') and name[:3].isdigit():
            with open(os.path.join(ROOT, 'schema', name), encoding='utf-8') as f:
                parts.append(f.read())
    return '\n'.join(parts)


def make_db(path, nsteps=5, huge=True, wall=5_000_000, flops=None):
    """A run whose steps declare 1e300 FLOPs and bytes (when @huge; else 1e9
    FLOPs, or @flops) and whose phases carry every name of NAMES, once per
    step."""
    if flops is None:
        flops = HUGE if huge else 1e9
    db = sqlite3.connect(path)
    db.executescript(schema_sql())
    db.execute(
        "INSERT INTO run (id, mfu_version, command, cwd, start_unix_ns, start_ns, end_ns, host,"
        " ncpu_affinity, ncpu, dtype, peak_flops, peak_flops_source, peak_bw, peak_bw_source,"
        " target_pid, exit_status, lost_records, state)"
        " VALUES (1, '0.1.0', '[\"./app\"]', '/tmp', 0, ?, ?, 'host', 2, 2.0, 'fp32', 1e12,"
        " 'user: --peak-flops 1T', 1e11, 'user: --peak-bw 100G', 42, 0, 0, 'complete')",
        (START_NS, START_NS + (nsteps + 1) * 10_000_000))
    t = START_NS + 1_000_000
    pid = 0
    for i in range(nsteps):
        w = wall + i * 1000
        db.execute(
            "INSERT INTO step (step, pid, tid, end_tid, begin_ns, end_ns, wall_ns, model_flops,"
            " model_bytes, cpu_ns, ctx_switches, cpu_migrations, page_faults, complete)"
            " VALUES (?, 42, 42, 42, ?, ?, ?, ?, ?, ?, 1, 0, 3, 1)",
            (i, t, t + w, w, flops, HUGE if huge else 1e8, w))
        for k, (name, _) in enumerate(NAMES):
            b = t + k * 100_000
            db.execute(
                "INSERT INTO phase (id, step, name, pid, tid, depth, begin_ns, end_ns, wall_ns,"
                " model_flops, cpu_ns, complete) VALUES (?, ?, CAST(? AS TEXT), 42, 42, 0, ?, ?, 50000,"
                " ?, 50000, 1)", (pid, i, name, b, b + 50_000, HUGE if huge and k == 0 else None))
            pid += 1
        t += w + 1_000_000
    db.commit()
    db.close()


def run(args, timeout=120):
    return subprocess.run([REPORT] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=timeout)


def csv_rows(data):
    """The records of csv bytes (text that is not UTF-8 kept as surrogates)."""
    return list(csv.reader(io.StringIO(data.decode('utf-8', 'surrogateescape'), newline='')))


class Hostile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(REPORT, os.X_OK):
            raise unittest.SkipTest('mfu-report not found at %s (set MFU_REPORT)' % REPORT)
        cls.tmp = tempfile.mkdtemp(prefix='mfu-report-hostile-')
        cls.db = os.path.join(cls.tmp, 'hostile.sqlite')
        make_db(cls.db)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def report(self, *args, db=None):
        r = run(['--db', db or self.db] + list(args))
        self.assertEqual(r.returncode, 0, '%s: %s' % (' '.join(args), r.stderr.decode(errors='replace')))
        return r

    def assertSafeText(self, data, what, newline_ok=True):
        """Nothing a terminal would obey: no C0 control but LF, no DEL, no
        C1 control or bidi override, no NUL (nor anything of the stack), and
        valid UTF-8."""
        text = data.decode('utf-8')   # raises on stack bytes or raw invalid UTF-8
        bad = [c for c in text if (ord(c) < 0x20 and not (newline_ok and c == '\n')) or
               0x7f <= ord(c) <= 0x9f or 0x202a <= ord(c) <= 0x202e or 0x2066 <= ord(c) <= 0x2069]
        self.assertEqual(bad, [], '%s: control characters %r' % (what, bad[:5]))

    def assertNumbersBounded(self, text, what):
        """No run of significant digits longer than a double has (17): 1e300
        is never written out as 300 digits, nor cut."""
        longest = max((len(m.lstrip('0')) for m in re.findall(r'[0-9]+', text)), default=0)
        self.assertLessEqual(longest, 17, '%s: a number of %d digits' % (what, longest))

    # ---- item 2: bounded numbers, in every section and format ----

    def test_every_section_every_format_finishes(self):
        for fmt in FORMATS:
            for section in ANALYSIS_SECTIONS:
                with self.subTest(fmt=fmt, section=section):
                    r = self.report('--format', fmt, section)
                    self.assertSafeText(r.stdout, '%s %s' % (fmt, section))
                    self.assertSafeText(r.stderr, '%s %s stderr' % (fmt, section))
                    self.assertNumbersBounded(r.stdout.decode(), '%s %s' % (fmt, section))
                    if fmt == 'json':
                        json.loads(r.stdout)
            with self.subTest(fmt=fmt, section='all'):
                r = self.report('--format', fmt, *ANALYSIS_SECTIONS)
                self.assertSafeText(r.stdout, fmt)

    def test_html_trace_diff_finish(self):
        html = os.path.join(self.tmp, 'r.html')
        self.report('--html', html)
        with open(html, 'rb') as f:
            data = f.read()
        self.assertIn(b'</html>', data)
        self.assertNotIn(b'\x1b', data)
        r = self.report('--trace', '-')
        json.loads(r.stdout)
        for fmt in FORMATS:
            with self.subTest(fmt=fmt):
                r = run(['--diff', self.db, self.db, '--format', fmt])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertSafeText(r.stdout, 'diff ' + fmt)
                self.assertNumbersBounded(r.stdout.decode(), 'diff ' + fmt)

    def test_diff_of_an_absurd_change(self):
        # MFU from 1e9 FLOPs per step to 1e150: a significant change of
        # about 1e143%, which the verdict line wrote out in 144 digits
        base = os.path.join(self.tmp, 'sane.sqlite')
        new = os.path.join(self.tmp, 'absurd.sqlite')
        make_db(base, huge=False, nsteps=8)
        make_db(new, huge=False, nsteps=8, flops=1e150)
        for fmt in FORMATS:
            with self.subTest(fmt=fmt):
                r = run(['--diff', base, new, '--format', fmt])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertNumbersBounded(r.stdout.decode(), 'diff ' + fmt)
        text = run(['--diff', base, new]).stdout.decode()
        self.assertRegex(text, r'MFU higher \+[0-9.]+e\+1[0-9][0-9]% \(CI \+[0-9.]+e\+')

    def test_summary_says_the_mfu_is_impossible(self):
        for fmt in ('table', 'markdown'):
            text = self.report('--format', fmt).stdout.decode()
            self.assertRegex(text, r'MFU:?\s+impossible of the fp32 peak')
            self.assertRegex(text, r'MBU:?\s+impossible of the memory bandwidth peak')
            self.assertIn('model FLOP', text)
            self.assertIn('5e+300', text)               # the sum of 5 steps' 1e300, bounded
            self.assertIn('5 steps have MFU above 100% (the highest above 10000%', text)
        # machines get the number as it is
        got = json.loads(self.report('--format', 'json').stdout)[0]
        self.assertGreater(got['mfu'], 1e280)
        r = self.report('--format', 'csv')
        rows = csv_rows(r.stdout)
        self.assertGreater(float(rows[1][rows[0].index('mfu')]), 1e280)
        self.assertIn('the highest above 10000%', r.stderr.decode())

    # ---- item 7: csv safe for terminals and spreadsheets ----

    def check_phase_cells(self, names):
        want = [cell for _, cell in NAMES]
        for w in want:
            self.assertIn(w, names)
        for cell in names:
            if cell[:1] in ('=', '+', '-', '@'):
                # a formula-leading cell is a plain number, or was guarded
                self.assertRegex(cell, r'^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$')

    def test_csv_escapes_and_guards(self):
        r = self.report('--format', 'csv', 'phases')
        self.assertSafeText(r.stdout, 'csv phases')
        rows = csv_rows(r.stdout)
        self.check_phase_cells([row[0] for row in rows[1:]])
        # numeric columns are numbers, never guarded
        for row in rows[1:]:
            for k in ('count', 'total_ms', 'share'):
                float(row[rows[0].index(k)])

    def test_csv_negative_numbers_stay_numbers(self):
        r = self.report('--format', 'csv', 'phases')
        rows = csv_rows(r.stdout)
        self.assertIn('-1.5', [row[0] for row in rows[1:]])
        # negative values (a faster NEW) are printed as numbers
        base = os.path.join(self.tmp, 'slow.sqlite')
        make_db(base, huge=False, wall=8_000_000)
        r = run(['--diff', base, self.db, '--format', 'csv'])
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = csv_rows(r.stdout)
        negative = 0
        for row in rows[1:]:
            for k in ('base', 'new', 'change', 'change_lo', 'change_hi'):
                cell = row[rows[0].index(k)]
                self.assertFalse(cell.startswith("'"), (k, cell))
                if cell:
                    negative += float(cell) < 0
        self.assertGreater(negative, 0)

    def test_diff_csv_escapes_and_guards(self):
        r = run(['--diff', self.db, self.db, '--format', 'csv'])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertSafeText(r.stdout, 'diff csv')
        rows = csv_rows(r.stdout)
        names = [row[rows[0].index('name')] for row in rows[1:] if row[0] == 'phase']
        self.check_phase_cells(names)

    def test_raw_gives_the_stored_bytes(self):
        stored = [n for n, _ in NAMES]
        r = self.report('--format', 'csv', '--raw', 'phases')
        names = [row[0].encode('utf-8', 'surrogateescape') for row in csv_rows(r.stdout)[1:]]
        self.assertEqual(sorted(names), sorted(stored))
        self.assertIn(b'\x1b]0;pwned\x07', r.stdout)
        r = run(['--diff', self.db, self.db, '--format', 'csv', '--raw'])
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = csv_rows(r.stdout)
        names = [row[rows[0].index('name')].encode('utf-8', 'surrogateescape') for row in rows[1:]
                 if row[0] == 'phase']
        self.assertEqual(sorted(names), sorted(stored))
        # json: the same text once decoded, for names that are UTF-8
        got = json.loads(self.report('--format', 'json', 'phases').stdout)
        decoded = [row['phase'] for row in got]
        for n in stored:
            try:
                self.assertIn(n.decode('utf-8'), decoded)
            except UnicodeDecodeError:
                pass

    def test_raw_only_with_csv(self):
        for args in (['--raw'], ['--raw', '--format', 'table'], ['--raw', '--format', 'json']):
            r = run(['--db', self.db] + args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(b'--raw goes with --format csv', r.stderr)
            self.assertEqual(r.stdout, b'')

    # ---- item 8: many rows stream ----

    def test_table_of_many_steps(self):
        path = os.path.join(self.tmp, 'many.sqlite')
        db = sqlite3.connect(path)
        db.executescript(schema_sql())
        db.execute("INSERT INTO run (id, mfu_version, command, start_unix_ns, start_ns, ncpu, dtype,"
                   " peak_flops, lost_records, state) VALUES (1, 't', '[]', 0, 0, 1, 'fp32', 1e12, 0,"
                   " 'complete')")
        db.execute("WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM i WHERE n + 1 < 25000)"
                   " INSERT INTO step (step, pid, tid, begin_ns, end_ns, wall_ns, model_flops, complete)"
                   " SELECT n, 1, 1, n * 1000, n * 1000 + 900, 900, 1e6, 1 FROM i")
        db.commit()
        db.close()
        for fmt in ('table', 'markdown'):
            out = self.report('--format', fmt, 'steps', db=path).stdout.decode()
            lines = [l for l in out.split('\n') if re.match(r'^\|? *[0-9]+ ', l)]
            self.assertEqual(len(lines), 25000, fmt)
            self.assertEqual([int(l.strip('| ').split()[0]) for l in lines], list(range(25000)))
            # the rows that sized the columns line up with the header
            header = [l for l in out.split('\n') if 'wall ms' in l][0]
            self.assertEqual({len(l) for l in lines[:10000]}, {len(header)})


class Recorded(unittest.TestCase):
    """A real program declaring 1e300 FLOPs with hostile phase names: the
    recorder's end-of-run summary (the report's table, on stderr, printed by
    mfu-record as root) and its live line are bounded and escaped."""

    def setUp(self):
        self.record = os.environ.get('MFU_RECORD')
        self.libmfu = os.environ.get('MFU_LIBMFU')
        if not self.record or not self.libmfu:
            self.skipTest('MFU_RECORD and MFU_LIBMFU are set by meson test')
        self.tmp = tempfile.mkdtemp(prefix='mfu-hostile-rec-')
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.env = dict(os.environ, MFU_LIBRARY=self.libmfu, MFU_NO_CALIBRATE='1',
                        PYTHONPATH=os.environ.get('MFU_PYTHON_DIR') or os.path.join(ROOT, 'src', 'python'))

    @staticmethod
    def script(steps, seconds=0.0):
        return ("import mfu, time\n"
                "for i in range(%d):\n"
                "    with mfu.step(flops=1e300, bytes=1e300):\n"
                "        with mfu.phase('\\x1b]0;pwned\\x07'):\n"
                "            sum(range(20000))\n"
                "            time.sleep(%r)\n"
                "        with mfu.phase('=HYPERLINK(\"http://x\",\"y\")'):\n"
                "            pass\n" % (steps, seconds))

    def test_live_line(self):
        import pty  # noqa: F401  (the live line needs a terminal)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from test_live import on_pty
        db = os.path.join(self.tmp, 'live.sqlite')
        # about 2.5 s of steps: the line is redrawn about once a second
        argv = [self.record, '-o', db, '--', sys.executable, '-c', self.script(50, 0.05)]
        with unittest.mock.patch.dict(os.environ, self.env):
            out, code = on_pty(argv, rows=24, cols=200)
        self.assertEqual(code, 0, out[-2000:])
        lines = re.findall(rb'mfu-record: [0-9]+ s, [0-9]+ steps[^\x1b\r\n]*', out)
        self.assertTrue(lines, out[-2000:])
        for line in lines:
            self.assertIn(b'MFU impossible', line)
            self.assertNotRegex(line, rb'[0-9]{18}')
        self.assertNotIn(b'pwned\x07', out)

    def test_recorder_summary(self):
        record, db, env = self.record, os.path.join(self.tmp, 'run.sqlite'), self.env
        p = subprocess.run([record, '-o', db, '--', sys.executable, '-c', self.script(5)], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors='replace'))
        Hostile.assertSafeText(self, p.stderr, 'mfu-record stderr')
        err = p.stderr.decode()
        self.assertRegex(err, r'\n  MFU +impossible')
        self.assertNotRegex(err, r'[0-9]{18}')
        con = sqlite3.connect('file:%s?mode=ro' % db, uri=True)
        n = con.execute('SELECT count(*) FROM step WHERE complete = 1 AND model_flops = 1e300').fetchone()[0]
        con.close()
        self.assertEqual(n, 5)
        if os.access(REPORT, os.X_OK):
            r = run(['--db', db, '--format', 'csv', 'phases'])
            self.assertEqual(r.returncode, 0, r.stderr)
            Hostile.assertSafeText(self, r.stdout, 'csv of the recording')
            self.assertIn(b'\\x1b]0;pwned\\x07', r.stdout)
            self.assertIn(b'"\'=HYPERLINK(""http://x"",""y"")"', r.stdout)


if __name__ == '__main__':
    unittest.main(verbosity=2)
