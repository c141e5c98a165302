"""A program as it comes (issue 23 item 1): no markers, no options, a
stripped executable that calls BLAS through the dynamic loader, as
Debian's hpcc does. `mfu-record -- ./app` must give what `perf stat ./app`
gives, in MFU: the whole run's library FLOPs and MFU, and the same over time.

tests/workloads/unmarked_blas.c (wl_unmarked_blas) prints the FLOPs (2mnk
per call) and calls it made; the test also computes them from its sizes.

- the whole run: run.lib_flops by precision and lib_calls equal to the
  program's own count exactly; run_lib_call per function; the summary's
  run_mfu and busy_mfu as docs/metrics.md defines them; lib_reading only
  grows, from zeros at the exec to the run's totals; at least 5 intervals
  with library FLOPs whose sum is the run's exactly, each with its MFU; the
  notes say what was measured and never advise --step FUNC for this
  stripped executable; the trace's interval tracks; the HTML page's MFU
  over time, drawn by headless Chromium (skipped without one), for an
  hour of readings too; on a terminal, the live line's library FLOPs so
  far;
- child processes that exit, more of them than the counting library has
  slots: none of their calls lost, with -I 10 and with -I 0 (no readings,
  the same totals);
- --no-lib-flops: the run's library FLOPs and MFU unknown (NULL), never 0,
  and a note that says so; a program that makes no call: 0 FLOPs, MFU
  unknown, and --step FUNC advised (it has a symbol table);
- a marked Python program (numpy) with calls outside its steps: the run's
  FLOPs vs the steps', and the note about those outside;
- as user nobody (root only: setpriv), the same exact totals: nothing here
  needs a privilege.

No CPU is assumed: an MFU is checked against the peak the run recorded,
and is NULL where no peak is known.
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mfutest  # noqa: E402
from mfutest import TempDirTest, as_nobody, nobody_reachable, prog, python_with, query, record  # noqa: E402
from test_html import ChromiumPage  # noqa: E402
from test_live import on_pty  # noqa: E402

ROOT = os.geteuid() == 0
NUMPY_PY = python_with('numpy')
PRECISIONS = ('fp64', 'fp32', 'bf16', 'fp16')


def workload():
    path = os.environ.get('MFU_WL_UNMARKED_BLAS')
    if not path or not os.path.exists(path):
        raise unittest.SkipTest('wl_unmarked_blas was not built: OpenBLAS (libopenblas-dev) is not installed '
                                '(tools/install-deps installs it)')
    return path


def expected(rounds, n, procs=0, child_rounds=2):
    """{function: (precision, calls, FLOPs)} of wl_unmarked_blas's calls:
    each round cblas_dgemm n x n x n, dgemm_ n x n/2 x n, cblas_sgemm
    n x n x n/2 (2mnk each)."""
    h = max(n // 2, 1)
    k = rounds + procs * child_rounds
    return {'cblas_dgemm': ('fp64', k, k * 2 * n * n * n),
            'dgemm_': ('fp64', k, k * 2 * n * h * n),
            'cblas_sgemm': ('fp32', k, k * 2 * n * n * h)}


def totals(calls):
    by = {p: sum(f for q, c, f in calls.values() if q == p) for p in PRECISIONS}
    return by, sum(by.values()), sum(c for q, c, f in calls.values())


def spans(rows):
    """(rate, span ms) of the interval ending at each lib_reading after the
    first (docs/metrics.md): the FLOPs over the time between the last
    reading before it and the first at or after its end with no call
    running (lib_calls_begun not above lib_calls, or NULL)."""
    ends = [r['lib_calls_begun'] is None or r['lib_calls_begun'] <= r['lib_calls'] for r in rows]
    ends[-1] = True
    out, b = [], 0
    for i in range(1, len(rows)):
        if ends[i]:
            dt = rows[i]['time_ns'] - rows[b]['time_ns']
            out += [((rows[i]['lib_flops'] - rows[b]['lib_flops']) / (dt / 1e9), dt / 1e6)] * (i - b)
            b = i
    return out


def report(db, *args):
    p = subprocess.run([prog('MFU_REPORT'), '--db', db] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError('mfu-report %s: %s' % (' '.join(args), p.stderr))
    return p.stdout


def section(db, name):
    return json.loads(report(db, '--format', 'json', name))


class Unmarked(ChromiumPage, TempDirTest):
    ROUNDS, SIZE = 40, 96

    def record(self, args=(), wl_args=(), env=None):
        db = self.path('run.sqlite')
        for suffix in ('', '-wal', '-shm', '.old'):
            if os.path.exists(db + suffix):
                os.unlink(db + suffix)
        p = record(['-o', db] + list(args), [workload()] + list(wl_args), env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        return db, p

    def printed(self, out):
        """The FLOPs and calls the program says it made."""
        m = re.search(r'^flops (\d+) calls (\d+)$', out, re.M)
        self.assertTrue(m, out)
        return int(m.group(1)), int(m.group(2))

    def check_totals(self, db, out, calls):
        """run.lib_* and run_lib_call: exactly the calls made."""
        by, flops, ncalls = totals(calls)
        self.assertEqual(self.printed(out), (flops, ncalls))
        run = query(db, 'SELECT * FROM run')[0]
        self.assertEqual(run['lib_counting'], 'on')
        self.assertEqual(run['lib_flops'], flops)
        self.assertEqual(run['lib_calls'], ncalls)
        for p in PRECISIONS:
            self.assertEqual(run['lib_flops_' + p], by[p], p)
        self.assertEqual(run['lib_ops_int8'], 0)
        got = {r['function']: (r['precision'], r['calls'], r['flops'])
               for r in query(db, 'SELECT * FROM run_lib_call')}
        self.assertEqual(got, calls)
        return run

    def check_readings(self, db, run):
        """lib_reading: zeros at the exec, only growing, the run's totals
        last; the intervals section's rows add up to them exactly."""
        rows = query(db, 'SELECT * FROM lib_reading ORDER BY time_ns')
        self.assertGreaterEqual(len(rows), 6)
        self.assertEqual(rows[0]['time_ns'], run['start_ns'])
        self.assertEqual(rows[0]['lib_flops'], 0)
        cols = ['lib_flops', 'lib_calls'] + ['lib_flops_' + p for p in PRECISIONS] + ['lib_ops_int8']
        for a, b in zip(rows, rows[1:]):
            for c in cols:
                self.assertLessEqual(a[c], b[c], c)
        for c in cols:
            self.assertEqual(rows[-1][c], run[c], c)
        self.assertEqual(rows[-1]['lib_flops'], sum(rows[-1]['lib_flops_' + p] for p in PRECISIONS)
                         + rows[-1]['lib_ops_int8'])
        iv = section(db, 'intervals')
        with_lib = [r for r in iv if r['lib_flops'] is not None]
        self.assertGreaterEqual(len(with_lib), 5)
        self.assertEqual(len(with_lib), len(rows) - 1)
        self.assertEqual(sum(r['lib_flops'] for r in with_lib), run['lib_flops'])
        self.assertEqual(sum(r['lib_calls'] for r in with_lib), run['lib_calls'])
        for a, b, r in zip(rows, rows[1:], with_lib):
            self.assertEqual(b['lib_flops'] - a['lib_flops'], r['lib_flops'])
        peak = run['peak_flops']
        for r, (rate, span_ms) in zip(with_lib, spans(rows)):
            self.assertLessEqual(r['interval_ms'], span_ms + 1e-6)
            self.assertAlmostEqual(r['rate_span_ms'], span_ms, delta=1e-6)
            self.assertAlmostEqual(r['lib_flops_per_s'], rate, delta=1e-6 * rate + 1e-9)
            if peak:
                self.assertAlmostEqual(r['mfu'], rate / peak, delta=1e-9)
            else:
                self.assertIsNone(r['mfu'])
        return with_lib

    def test_whole_run_exact(self):
        """No markers, no options: the whole run and its intervals, exact."""
        db, p = self.record()
        run = self.check_totals(db, p.stdout, expected(self.ROUNDS, self.SIZE))
        intervals = self.check_readings(db, run)
        # the summary: the run's FLOPs and the two MFUs of docs/metrics.md
        s = section(db, 'summary')[0]
        self.assertEqual(s['steps'], 0)
        self.assertIsNone(s['lib_flops'])       # no step: the steps' FLOPs unknown
        self.assertIsNone(s['lib_in_steps'])
        self.assertEqual(s['run_lib_flops'], run['lib_flops'])
        self.assertEqual(s['run_lib_calls'], run['lib_calls'])
        self.assertEqual(s['run_lib_flops_fp64'], run['lib_flops_fp64'])
        self.assertEqual(s['run_lib_flops_fp32'], run['lib_flops_fp32'])
        wall = (run['end_ns'] - run['start_ns']) / 1e9
        cpu = query(db, "SELECT total FROM counter WHERE name = 'task-clock'")[0]['total'] / 1e9
        self.assertGreater(cpu, 0)
        self.assertAlmostEqual(s['run_cpu_ms'], cpu * 1e3, delta=1e-6)
        self.assertAlmostEqual(s['run_lib_flops_per_s'], run['lib_flops'] / wall, delta=1e-3)
        self.assertAlmostEqual(s['busy_flops_per_s'], run['lib_flops'] / cpu, delta=1e-3)
        if run['peak_flops']:
            self.assertAlmostEqual(s['run_mfu'], run['lib_flops'] / (wall * run['peak_flops']), delta=1e-12)
            self.assertAlmostEqual(s['busy_mfu'], run['lib_flops'] / (cpu * run['peak_flops'] / run['ncpu']),
                                   delta=1e-12)
            self.assertGreater(s['run_mfu'], 0)
        else:
            self.assertIsNone(s['run_mfu'])
            self.assertIsNone(s['busy_mfu'])
        # the notes: what was measured, and advice that can work here
        self.assertEqual(run['exe_functions'], 0)   # stripped
        notes = {n['kind']: n for n in section(db, 'notes')}
        self.assertIn('stripped', notes['no_steps']['text'])
        self.assertNotIn('take steps from a function with --step FUNC', notes['no_steps']['text'])
        whole = notes['whole_run']
        self.assertIn('FLOP of library calls (%d calls: ' % run['lib_calls'], whole['text'])
        self.assertIn('75% fp64, 25% fp32', whole['text'])
        self.assertIn('mfu-report intervals', whole['text'])
        if run['peak_flops']:
            self.assertIn('run_mfu %.2f%%' % (s['run_mfu'] * 100), whole['text'])
        self.assertEqual(whole['missing'], 0)
        # the recorder said it too, as the run ended
        self.assertIn('no marker was seen', p.stderr)
        self.assertIn('stripped', p.stderr)
        # the table format shows the run's figures
        table = report(db)
        self.assertRegex(table, r'\n  library FLOP +[0-9.]+ [kMGT]? ?in the whole run \(\d+ calls?\)')
        self.assertRegex(table, r'\n  run MFU +[0-9.]+% of the fp32 peak')
        # the trace: a counter track per interval value
        trace = self.path('trace.json')
        report(db, '--trace', trace)
        with open(trace) as f:
            t = json.load(f)
        self.assertEqual(t['metadata']['events']['intervals'], len(intervals))
        mfu_track = [e for e in t['traceEvents'] if e.get('ph') == 'C' and e['name'] == 'MFU (intervals)']
        if run['peak_flops']:
            # one value per interval, and 0 after the last one
            self.assertEqual(len(mfu_track), len(intervals) + 1)
            self.assertEqual([e['args']['value'] for e in mfu_track[:-1]], [r['mfu'] for r in intervals])
            self.assertEqual(mfu_track[-1]['args']['value'], 0)
        flops_track = [e for e in t['traceEvents'] if e.get('ph') == 'C' and e['name'] == 'lib FLOP/s (intervals)']
        self.assertEqual(len(flops_track), len(intervals) + 1)
        self.check_html(db, run, intervals)

    def test_long_call_spread(self):
        """One call that runs across many readings (a field trial's hpcc:
        its 2308^3 DGEMM read 441% MFU in the 10 ms interval it returned in,
        0 in the 50 before): every interval it covers has its rate, not 0;
        no interval's rate is above the program's fastest call (timed by
        itself: MFU at most 1 against a peak just above it); the FLOPs still
        add up exactly; read as a database without lib_calls_begun, the
        intervals as before but no MFU above 1 (NULL there). A 2000^3 DGEMM (16 GFLOP) takes 125 ms or more even
        at 128 GFLOP/s, a core's AVX-512 peak: readings fall inside it
        however busy the machine; the bounds hold whatever its speed."""
        n = 2000
        db, p = self.record(['-I', '10', '--peak-flops', '1T'], ['--rounds', '1', '--size', str(n), '--sleep-us', '0'],
                            env=dict(os.environ, OPENBLAS_NUM_THREADS='1'))
        run = self.check_totals(db, p.stdout, expected(1, n))
        self.assertEqual(run['peak_flops'], 1e12)
        intervals = self.check_readings(db, run)
        m = re.search(r'^max_rate (\S+)$', p.stdout, re.M)
        self.assertTrue(m, p.stdout)
        # the reads' times are midpoints of reads taking microseconds: 5%
        # of a call of 125 ms or more is far beyond them
        just_above = 1.05 * float(m.group(1))
        rows = query(db, 'SELECT * FROM lib_reading ORDER BY time_ns')
        running = [i for i, r in enumerate(rows) if r['lib_calls_begun'] > r['lib_calls']]
        self.assertGreater(len(running), 0, rows)
        for i in running:
            # the intervals on both sides of a reading inside a call
            for r in intervals[i - 1:i + 1]:
                self.assertGreater(r['lib_flops_per_s'], 0, r)
                self.assertGreater(r['mfu'], 0, r)
                self.assertGreater(r['rate_span_ms'], r['interval_ms'], r)
        for r in intervals:
            self.assertLessEqual(r['lib_flops_per_s'] / just_above, 1, (r, just_above))
        self.assertEqual(sum(r['lib_flops'] for r in intervals), run['lib_flops'])
        # the recording cut at a reading inside the last call: the span it
        # ends has no rate (FLOPs of it not counted), the ones before theirs
        cut = self.path('cut.sqlite')
        shutil.copy(db, cut)
        k = running[-1]
        con = sqlite3.connect(cut)
        for table in ('lib_reading', 'interval_reading'):
            con.execute('DELETE FROM %s WHERE time_ns > ?' % table, (rows[k]['time_ns'],))
        con.commit()
        con.close()
        b = max(j for j in range(k) if rows[j]['lib_calls_begun'] <= rows[j]['lib_calls'])
        got = section(cut, 'intervals')
        self.assertEqual(len(got), k)
        for i, r in enumerate(got):
            if i < b:
                self.assertEqual((r['lib_flops_per_s'], r['mfu']), (intervals[i]['lib_flops_per_s'],
                                                                    intervals[i]['mfu']))
            else:
                self.assertIsNone(r['lib_flops_per_s'], r)
                self.assertIsNone(r['mfu'], r)
        # the same run as a database recorded before lib_calls_begun, with
        # that peak: each interval on its own, as then, and no MFU above 1
        old = self.path('old.sqlite')
        shutil.copy(db, old)
        con = sqlite3.connect(old)
        con.execute('ALTER TABLE lib_reading DROP COLUMN lib_calls_begun')
        con.execute('UPDATE run SET peak_flops = ?', (just_above,))
        con.commit()
        con.close()
        before = section(old, 'intervals')
        self.assertEqual([r['lib_flops'] for r in before], [r['lib_flops'] for r in intervals])
        for r in before:
            rate = r['lib_flops'] / (r['interval_ms'] / 1e3)
            self.assertAlmostEqual(r['lib_flops_per_s'], rate, delta=1e-6 * rate + 1e-9)
            self.assertAlmostEqual(r['rate_span_ms'], r['interval_ms'], delta=1e-9)
            if rate > just_above:
                self.assertIsNone(r['mfu'], r)
            else:
                self.assertAlmostEqual(r['mfu'], rate / just_above, delta=1e-9)

    def check_html(self, db, run, intervals):
        """The page's MFU over time: one step of the line per interval, the
        run's MFU, and an interval's exact values on hover."""
        if not mfutest.chromium():
            return  # the data is checked above; drawing needs Chromium
        out = self.path('report.html')
        report(db, '--html', out)
        dom, png, log = self.draw(out)
        got = self.check_drawn(dom, png, log)
        tl = got['timeline']
        self.assertEqual(int(tl['intervals']), len(intervals))
        self.assertEqual(tl['drawn'], 'intervals')
        if run['peak_flops']:
            self.assertGreater(tl['mfuPath'], 0)
            self.assertEqual(tl['runLine'], 1)
            m = re.search(r'MFU: ([0-9.]+) %', tl['tip'])
            self.assertTrue(m, tl['tip'])
            shown = float(m.group(1))
            self.assertTrue(any(abs(r['mfu'] * 100 - shown) <= 0.006 for r in intervals), (shown, tl['tip']))
        self.assertIn('the whole run: %d intervals' % len(intervals), tl['text'])

    def test_many_intervals_drawn(self):
        """An hour of 10 ms readings (a tenth of it under a sanitizer):
        more intervals than pixels, drawn as the mean and range per pixel
        column; the page stays small enough to open."""
        self.need_chromium()
        db, p = self.record(wl_args=['--rounds', '5'])
        n = 36_000 if mfutest.SANITIZED else 360_000
        con = sqlite3.connect(db)
        start = con.execute('SELECT start_ns FROM run').fetchone()[0]
        con.execute('DELETE FROM interval_reading')
        con.execute('DELETE FROM lib_reading')
        # cumulative: 1e9 FLOPs in each interval of 10 ms, but every 7th empty
        con.execute('WITH RECURSIVE i(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM i WHERE k < ?)'
                    ' INSERT INTO lib_reading SELECT ? + k * 10000000, (k - k / 7) * 1000000000,'
                    ' (k - k / 7) * 1000000000, 0, 0, 0, 0, k - k / 7, 0, k - k / 7 FROM i', (n, start))
        con.execute('UPDATE run SET end_ns = ?, lib_flops = ?, lib_flops_fp64 = ?, lib_calls = ?',
                    (start + n * 10_000_000, (n - n // 7) * 10 ** 9, (n - n // 7) * 10 ** 9, n - n // 7))
        con.commit()
        con.close()
        out = self.path('big.html')
        report(db, '--html', out)
        self.assertLess(os.path.getsize(out), 40 << 20)
        dom, png, log = self.draw(out)
        got = self.check_drawn(dom, png, log)
        self.assertEqual(int(got['timeline']['intervals']), n)
        self.assertEqual(got['timeline']['drawn'], 'buckets')
        self.assertIn('the whole run: %d intervals' % n, got['timeline']['text'])

    def test_live_line(self):
        """On a terminal, while no step has ended: the run's library FLOPs
        so far, which only grow, up to the run's total."""
        db = self.path('live.sqlite')
        out, status = on_pty([prog('MFU_RECORD'), '-o', db, '--', workload(), '--rounds', '400'], rows=40, cols=200)
        self.assertEqual(status, 0, out[-2000:])
        lines = re.findall(rb'no step yet, library ([0-9.e+-]+) GFLOP(, run MFU ([0-9.]+)%)?', out)
        self.assertGreaterEqual(len(lines), 1, out[-2000:])
        shown = [float(g) for g, _, _ in lines]
        self.assertEqual(shown, sorted(shown))
        total = query(db, 'SELECT lib_flops FROM run')[0]['lib_flops']
        self.assertLessEqual(shown[-1], total / 1e9 * 1.001)
        self.assertGreater(shown[-1], 0)

    def test_processes_that_exit(self):
        """80 child processes one after the other, more than the counting
        library's 64 slots: every call counted, with and without readings."""
        calls = expected(3, 48, procs=80, child_rounds=2)
        db, p = self.record(wl_args=['--rounds', '3', '--size', '48', '--procs', '80', '--sleep-us', '2000'])
        run = self.check_totals(db, p.stdout, calls)
        self.check_readings(db, run)
        self.assertEqual(query(db, "SELECT COUNT(*) AS n FROM note WHERE kind = 'lib_flops'")[0]['n'], 0)
        db, p = self.record(['-I', '0'], ['--rounds', '3', '--size', '48', '--procs', '80', '--sleep-us', '0'])
        self.check_totals(db, p.stdout, calls)
        self.assertEqual(query(db, 'SELECT COUNT(*) AS n FROM lib_reading')[0]['n'], 0)
        self.assertEqual(section(db, 'intervals'), [])
        self.assertNotIn("-I interval", p.stderr)

    def test_no_lib_flops_is_unknown(self):
        """Not counted: NULL, never 0, and a note that says so."""
        db, p = self.record(['--no-lib-flops'])
        self.printed(p.stdout)
        run = query(db, 'SELECT * FROM run')[0]
        self.assertEqual(run['lib_counting'], 'off')
        for c in ('lib_flops', 'lib_calls', 'lib_flops_fp64'):
            self.assertIsNone(run[c], c)
        self.assertEqual(query(db, 'SELECT COUNT(*) AS n FROM run_lib_call')[0]['n'], 0)
        s = section(db, 'summary')[0]
        for c in ('run_lib_flops', 'run_mfu', 'busy_mfu', 'run_lib_flops_per_s'):
            self.assertIsNone(s[c], c)
        self.assertGreater(s['run_cpu_ms'], 0)   # the CPU time is known
        iv = section(db, 'intervals')
        self.assertGreaterEqual(len(iv), 5)
        self.assertTrue(all(r['lib_flops'] is None and r['mfu'] is None for r in iv))
        notes = {n['kind']: n for n in section(db, 'notes')}
        self.assertIn('library FLOPs are unknown (not counted: --no-lib-flops)', notes['whole_run']['text'])
        self.assertEqual(notes['whole_run']['missing'], 1)

    def test_no_library_call(self):
        """Counted, and no call made (tests/workloads/nomark.c): 0 library
        FLOPs, and an MFU that is unknown, not 0, as a step's would be."""
        db = self.path('nomark.sqlite')
        p = record(['-o', db], [prog('MFU_WL_NOMARK'), '--calls', '3', '--busy-us', '20000'])
        self.assertEqual(p.returncode, 0, p.stderr)
        run = query(db, 'SELECT * FROM run')[0]
        self.assertEqual((run['lib_counting'], run['lib_flops'], run['lib_calls']), ('on', 0, 0))
        self.assertEqual(run['exe_functions'], 1)    # not stripped: --step FUNC works
        s = section(db, 'summary')[0]
        self.assertEqual(s['run_lib_flops'], 0)
        self.assertEqual(s['run_lib_flops_per_s'], 0)
        self.assertIsNone(s['run_mfu'])
        self.assertIsNone(s['busy_mfu'])
        iv = section(db, 'intervals')
        self.assertGreaterEqual(len(iv), 5)
        self.assertTrue(all(r['lib_flops'] == 0 and r['mfu'] is None for r in iv), iv)
        notes = {n['kind']: n for n in section(db, 'notes')}
        self.assertIn('no counted library call', notes['whole_run']['text'])
        self.assertEqual(notes['whole_run']['missing'], 1)
        self.assertIn('take steps from a function with --step FUNC', notes['no_steps']['text'])

    @unittest.skipUnless(NUMPY_PY, 'no Python with numpy (python3-numpy)')
    @unittest.skipUnless(ROOT, 'uprobes need root')
    def test_probe_steps_say_their_library_flops_are_unknown(self):
        """Steps from --step probes: the counting library's counters are
        read at marker boundaries, not at a uprobe's, so the steps' library
        FLOPs are unknown (NULL, never 0) and a note says why and what is
        known; the whole run's are exact. The probe names the library as
        the program links it (libopenblas.so.0, on Debian a link to
        libopenblasp-r0.3.21.so beside it)."""
        blas = [line.split('=>')[1].split()[0] for line in
                subprocess.run(['ldd', workload()], stdout=subprocess.PIPE, text=True).stdout.splitlines()
                if line.strip().startswith('libopenblas.so.0 =>')]
        if not blas:
            self.skipTest('wl_unmarked_blas does not link libopenblas.so.0')
        rounds, n = 4, 96
        db, p = self.record(['--step', 'libopenblas.so.0:cblas_dgemm'],
                            ['--rounds', str(rounds), '--size', str(n), '--sleep-us', '0'])
        flops, calls = self.printed(p.stdout)
        steps = query(db, 'SELECT lib_flops, lib_calls, flops FROM step WHERE complete = 1')
        self.assertEqual(len(steps), rounds)
        for row in steps:
            self.assertEqual(row, {'lib_flops': None, 'lib_calls': None, 'flops': None})
        run = query(db, 'SELECT lib_flops, lib_calls FROM run')[0]
        self.assertEqual((run['lib_flops'], run['lib_calls']), (flops, calls))
        notes = {r['kind']: r['text'] for r in section(db, 'notes')}
        self.assertIn('the steps come from --step probes', notes['model_flops'])
        self.assertIn('run_lib_flops', notes['model_flops'])

    def test_marked_run_outside_steps(self):
        """Steps of a marked program, and library calls outside them: the
        whole run's FLOPs, the steps' share and a note."""
        script = self.path('outside.py')
        with open(script, 'w') as f:
            f.write('import numpy as np\nimport mfu\n'
                    'a = np.ones((200, 300)); b = np.ones((300, 100))\n'
                    'for i in range(3):\n    a @ b\n'        # set-up: outside any step
                    'for i in range(2):\n    with mfu.step():\n        a @ b\n'
                    'a @ b\n')                             # after the steps
        env = dict(os.environ, PYTHONPATH=prog('MFU_PYTHON_DIR'))
        db = self.path('py.sqlite')
        p = record(['-o', db], [NUMPY_PY, script], env=env, timeout=180)
        self.assertEqual(p.returncode, 0, p.stderr)
        gemm = 2 * 200 * 300 * 100
        run = query(db, 'SELECT * FROM run')[0]
        # numpy's import makes a few level-1 calls of its own (a cblas_sdot
        # of 2 elements with Debian's numpy 1.24): in the run, not in steps
        calls = {r['function']: r for r in query(db, 'SELECT * FROM run_lib_call')}
        self.assertEqual(calls['cblas_dgemm']['calls'], 6)
        self.assertEqual(calls['cblas_dgemm']['flops'], 6 * gemm)
        others = sum(r['flops'] for f, r in calls.items() if f != 'cblas_dgemm')
        self.assertLess(others, 1000)
        self.assertEqual(run['lib_flops'], 6 * gemm + others)
        self.assertEqual(run['lib_calls'], sum(r['calls'] for r in calls.values()))
        s = section(db, 'summary')[0]
        self.assertEqual(s['steps'], 2)
        self.assertEqual(s['lib_flops'], 2 * gemm)
        self.assertEqual(s['run_lib_flops'], 6 * gemm + others)
        self.assertAlmostEqual(s['lib_in_steps'], 2 * gemm / (6 * gemm + others), delta=1e-12)
        notes = {n['kind']: n['text'] for n in section(db, 'notes')}
        self.assertIn('67% of the run\'s library FLOPs', notes['lib_outside_steps'])
        self.assertNotIn('whole_run', notes)
        iv = [r for r in section(db, 'intervals') if r['lib_flops'] is not None]
        self.assertEqual(sum(r['lib_flops'] for r in iv), 6 * gemm + others)

    @unittest.skipUnless(ROOT and shutil.which('setpriv'), 'needs root to become another user')
    def test_unprivileged(self):
        """As user nobody: the same exact totals (no privilege is needed).
        Copies of the recorder and the program that nobody can run (the
        clone may be in a directory nobody can enter)."""
        cp = nobody_reachable(self, [prog('MFU_RECORD'), workload()])
        db = self.path('nobody.sqlite')
        p = subprocess.run(as_nobody([cp[prog('MFU_RECORD')], '-o', db, '--', cp[workload()], '--rounds', '20']),
                           env=dict(cp.env, HOME=self.dir), cwd=self.dir,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        run = self.check_totals(db, p.stdout, expected(20, self.SIZE))
        self.check_readings(db, run)

if __name__ == '__main__':
    unittest.main()
