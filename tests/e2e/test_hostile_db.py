"""mfu-report on hostile databases (issue 22, items 4 and 8): a recording of
the demo MLP edited with sqlite3 the way a damaged file or a hostile user
could leave it, read by every section in every format, --html, --trace,
--diff and merged as ranks, each under a timeout.

The edits: phase.parent in cycles (each phase its own parent, pairs, one
ring through every phase), pointing at missing rows, pointing down a chain
64 deep (the recorder's MAX_DEPTH); every number 0 (with and without the
keys); every number at INT64_MAX / 1e308, at INT64_MIN / -1e308; negative
durations; and random cells from a list of extreme values (fixed seeds).
The schema's CHECKs are set aside for the edits (PRAGMA
ignore_check_constraints), as a hand-edited copy would have them. Samples
are added after each phase's end so that the dispatch section walks up
phase.parent for every phase, whatever the recording sampled.

Each run must end within the timeout with exit 0, or exit 1 and one line
(a refused database: a sum that leaves 64 bits is SQLite's "integer
overflow"); no sanitizer report (the suite runs this in the ASan + UBSan
build too, where UBSan aborts on signed overflow); the json and the trace
parse. The phases section computed in C (mfu_phase_stats) equals its plain
SQL (mfu-report --sql phases run by Python's sqlite3) on every database,
extreme values included. The HTML pages are drawn by headless Chromium
when there is one: the page's script ends. A merge of more ranks than the
open file limit allows at once works, and a limit too low for even one
names the limit and the number of files.

Run through meson (`meson test -C BUILD hostile_db`) or by hand with
MFU_RECORD, MFU_REPORT and MFU_WL_MLP set (see build/meson-logs/testlog.txt).
"""
import json
import math
import os
import random
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mfutest import SRCDIR, chromium, prog, run_chromium, run_sql  # noqa: E402

I64MAX = 2**63 - 1
I64MIN = -2**63
TIMEOUT = 60          # s per mfu-report run; each takes well under 1 s (ASan: 2 s)
SANITIZER_MARKS = ('runtime error:', 'AddressSanitizer', 'LeakSanitizer', 'UndefinedBehaviorSanitizer')
EXTREMES = [0, -1, 1, I64MAX, I64MIN, I64MAX - 1, 2**62, -2**62, 2**53 + 1, 1e308, -1e308, 5e-324, 1e19,
            -1e19, 0.5, 1e-300]
MAX_DEPTH = 64        # src/record/markers/markers_impl.h; test_max_depth_agrees checks it


def numeric_columns(db, table):
    """(name, is_key) of the INTEGER and REAL columns, generated ones left out."""
    out = []
    for _cid, name, typ, _nn, _dflt, pk, hidden in db.execute('PRAGMA table_xinfo("%s")' % table):
        if not hidden and typ.upper() in ('INTEGER', 'REAL'):
            out.append((name, typ.upper(), bool(pk)))
    return out


def tables(db):
    return [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"
                                     " AND name NOT LIKE 'sqlite_%'")]


def set_every(db, value, keys=False):
    """Every numeric cell to value(type) (run.id stays 1: else the run is
    simply missing); keys too with @keys (rows that collide are replaced: a
    table whose keys are all 0 keeps one row)."""
    for t in tables(db):
        for col, typ, pk in numeric_columns(db, t):
            if (pk and not keys) or (t == 'run' and col == 'id'):
                continue
            db.execute('UPDATE OR REPLACE "%s" SET "%s" = ?' % (t, col), (value(typ),))


def set_random(seed, share=0.3):
    """About @share of the numeric cells of every row from EXTREMES."""
    def edit(db):
        r = random.Random(seed)
        for t in tables(db):
            cols = [c for c in numeric_columns(db, t) if not (t == 'run' and c[0] == 'id')]
            sql = db.execute('SELECT upper(sql) FROM sqlite_master WHERE name = ?', (t,)).fetchone()[0]
            if 'WITHOUT ROWID' in sql:
                for col, _typ, pk in cols:
                    if not pk:
                        db.execute('UPDATE OR IGNORE "%s" SET "%s" = ?' % (t, col), (r.choice(EXTREMES),))
                continue
            for (rowid,) in db.execute('SELECT rowid FROM "%s"' % t).fetchall():
                for col, _typ, pk in cols:
                    if not pk and r.random() < share:
                        db.execute('UPDATE OR IGNORE "%s" SET "%s" = ? WHERE rowid = ?' % (t, col),
                                   (r.choice(EXTREMES), rowid))
    return edit


def long_cycle(db):
    ids = [r[0] for r in db.execute('SELECT id FROM phase ORDER BY id')]
    for a, b in zip(ids, ids[1:] + ids[:1]):
        db.execute('UPDATE phase SET parent = ? WHERE id = ?', (b, a))


def negative(db):
    for t in ('step', 'phase'):
        db.execute('UPDATE "%s" SET end_ns = begin_ns - 1000, wall_ns = -1000, cpu_ns = -5' % t)
    db.execute('UPDATE offcpu SET end_ns = start_ns - 7, dur_ns = -7')
    db.execute('UPDATE thread SET cpu_ns = -1')


# name -> the edit; None: the recording as it is
VARIANTS = {
    'recorded': None,
    'no_parents': lambda db: db.execute('UPDATE phase SET parent = NULL'),
    'self_loop': lambda db: db.execute('UPDATE phase SET parent = id'),
    'two_cycle': lambda db: db.execute('UPDATE phase SET parent = CASE WHEN id % 2 = 0 THEN id + 1 ELSE id - 1 END'),
    'long_cycle': long_cycle,
    'missing_parent': lambda db: db.execute('UPDATE phase SET parent = id + 1000000'),
    'zeros': lambda db: set_every(db, lambda typ: 0),
    'zero_keys': lambda db: set_every(db, lambda typ: 0, keys=True),
    'int64_max': lambda db: set_every(db, lambda typ: I64MAX if typ == 'INTEGER' else 1e308),
    'int64_min': lambda db: set_every(db, lambda typ: I64MIN if typ == 'INTEGER' else -1e308),
    'negative': negative,
}
# MFU_HOSTILE_SEEDS=N: N random databases instead of 4, for a longer fuzz
# by hand (docs/testing.md); seeds from 4 on vary the share of cells edited.
for _seed in range(int(os.environ.get('MFU_HOSTILE_SEEDS', '4'))):
    VARIANTS['random%d' % _seed] = set_random(_seed, 0.3 if _seed < 4 else (0.02, 0.1, 0.5, 0.9)[_seed % 4])


class HostileDb(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.report = prog('MFU_REPORT')
        cls.tmp = tempfile.mkdtemp(prefix='mfu-hostile-')
        rec = os.path.join(cls.tmp, 'recorded.sqlite')
        p = subprocess.run([prog('MFU_RECORD'), '-q', '--no-calibrate', '-o', rec, '--',
                            prog('MFU_WL_MLP'), '--steps', '12'],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        db = sqlite3.connect(rec)
        if db.execute('SELECT count(*) FROM stack').fetchone()[0] == 0:
            # no callchain sampled (no privilege): one, so that samples count
            db.execute('INSERT INTO stack (id, pid, nframes) SELECT 1, pid, 0 FROM phase LIMIT 1')
        # A sample of each phase's thread just after the phase ended: its
        # innermost phase is closed, and dispatch walks up phase.parent.
        db.execute("INSERT INTO sample (time_ns, pid, tid, cpu, kind, kernel, stack, class)"
                   " SELECT end_ns + 1, pid, tid, 0, 0, 0,"
                   "  (SELECT min(id) FROM stack), 'compute' FROM phase WHERE end_ns IS NOT NULL")
        db.commit()
        db.close()
        cls.dbs = {}
        for name, edit in VARIANTS.items():
            path = os.path.join(cls.tmp, name + '.sqlite')
            if name != 'recorded':
                shutil.copy(rec, path)
                db = sqlite3.connect(path)
                db.execute('PRAGMA ignore_check_constraints = ON')
                edit(db)
                db.commit()
                db.close()
            cls.dbs[name] = path
        cls.sections = [l.split()[0] for l in
                        subprocess.run([cls.report, '--list'], stdout=subprocess.PIPE, text=True,
                                       check=True).stdout.splitlines() if l.strip()]
        usage = subprocess.run([cls.report, '--help'], stdout=subprocess.PIPE, text=True, check=True).stdout
        cls.formats = re.search(r'--format FORMAT\s+([a-z|]+)', usage).group(1).split('|')

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_report(self, args, **kw):
        """mfu-report ARGS: (exit status, stdout bytes, stderr text); fails on
        a timeout, a sanitizer's report, an exit other than 0 or 1, or an
        exit 1 that is not one line."""
        try:
            p = subprocess.run([self.report] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=TIMEOUT, **kw)
        except subprocess.TimeoutExpired:
            self.fail('mfu-report %s: still running after %d s' % (' '.join(args), TIMEOUT))
        err = p.stderr.decode(errors='replace')
        bad = p.returncode not in (0, 1) or any(m in err for m in SANITIZER_MARKS)
        self.assertFalse(bad, 'mfu-report %s: exit %d\n%s' % (' '.join(args), p.returncode, err[-3000:]))
        if p.returncode == 1:
            lines = err.strip().split('\n')
            self.assertEqual(len(lines), 1, 'mfu-report %s: exit 1 with\n%s' % (' '.join(args), err))
            self.assertTrue(lines[0].startswith('mfu-report'), lines[0])
        return p.returncode, p.stdout, err

    def test_every_section_every_format(self):
        for name, path in self.dbs.items():
            for fmt in self.formats:
                with self.subTest(db=name, format=fmt):
                    rc, out, _ = self.run_report(['--db', path, '-f', fmt] + self.sections)
                    if rc == 0 and fmt == 'json':
                        self.assertEqual(sorted(json.loads(out)), sorted(self.sections))
            # alone, so that a section refused does not hide the others
            for section in self.sections:
                with self.subTest(db=name, section=section):
                    rc, out, _ = self.run_report(['--db', path, '-f', 'json', section])
                    if rc == 0:
                        self.assertIsInstance(json.loads(out), list)
            with self.subTest(db=name, option='--skip-steps'):
                self.run_report(['--db', path, '--skip-steps', '2', '-f', 'csv'] + self.sections)

    def test_html_trace_diff(self):
        for name, path in self.dbs.items():
            with self.subTest(db=name, option='--html'):
                self.run_report(['--db', path, '--html', os.path.join(self.tmp, name + '.html')])
            with self.subTest(db=name, option='--trace'):
                trace = os.path.join(self.tmp, name + '.json')
                rc, _, _ = self.run_report(['--db', path, '--trace', trace])
                if rc == 0:
                    with open(trace, encoding='utf-8') as f:
                        self.assertIn('traceEvents', json.load(f))
            with self.subTest(db=name, option='--diff'):
                for fmt in self.formats:
                    self.run_report(['--diff', path, path, '-f', fmt])

    def test_merged_as_ranks(self):
        """Each database twice as ranks 0 and 1 of a job: the job sections,
        and mfu-report merge -o."""
        for name, path in self.dbs.items():
            with self.subTest(db=name):
                pair = []
                for rank in (0, 1):
                    p = os.path.join(self.tmp, 'job-%s.%d.sqlite' % (name, rank))
                    shutil.copy(path, p)
                    db = sqlite3.connect(p)
                    db.execute('PRAGMA ignore_check_constraints = ON')
                    db.execute('UPDATE run SET rank = ?, world_size = 2', (rank,))
                    db.commit()
                    db.close()
                    pair.append(p)
                self.run_report(['--db', pair[0], '--db', pair[1], '-f', 'json'] + self.sections)
                self.run_report(['merge', '-o', os.path.join(self.tmp, 'job-%s.sqlite' % name)] + pair)

    def test_phase_stats_equal_plain_sql(self):
        """mfu_phase_stats (C) and analyses/phases.sql as sqlite3 runs it
        agree on every database: the same rows; or sqlite3 refuses (SUM()'s
        integer overflow) and mfu-report refuses too, or gives rows when
        the sum that overflowed is one its section does not read."""
        sql = subprocess.run([self.report, '--sql', 'phases'], stdout=subprocess.PIPE, text=True,
                             check=True).stdout
        for name, path in self.dbs.items():
            with self.subTest(db=name):
                rc, out, err = self.run_report(['--db', path, '-f', 'json', 'phases'])
                con = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
                try:
                    cur = run_sql(con, sql)
                    cols = [d[0] for d in cur.description]
                    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
                except sqlite3.OperationalError as e:
                    rows = None
                    self.assertIn('integer overflow', str(e))
                finally:
                    con.close()
                if rows is None:
                    # sqlite3 materialises every sum of the CTE g and stops at
                    # the first that overflows; mfu_phase_stats computes only
                    # the columns the section reads (dram_ns is summed for
                    # nothing it prints), so it may still give the rows
                    if rc == 1:
                        self.assertIn('integer overflow', err)
                    continue
                self.assertEqual(rc, 0, err)
                got = json.loads(out)
                self.assertEqual(len(got), len(rows))
                for g, w in zip(got, rows):
                    for col in cols:
                        a, b = g[col], w[col]
                        if isinstance(b, float) and not math.isfinite(b):
                            b = None      # mfu-report writes null for what JSON cannot hold
                        if isinstance(a, float) or isinstance(b, float):
                            if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)):
                                self.assertEqual(a, b, (name, col))
                            else:
                                self.assertTrue(math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300),
                                                (name, g['phase'], col, a, b))
                        else:
                            self.assertEqual(a, b, (name, g['phase'], col))

    def test_cycles_change_nothing_acyclic_data_would_give(self):
        """A phase that is its own parent, or whose parent is missing, ends
        the walk where no parent would: dispatch as without parents."""
        base = self.run_report(['--db', self.dbs['no_parents'], '-f', 'csv', 'dispatch'])[1]
        for name in ('self_loop', 'missing_parent', 'recorded'):
            with self.subTest(db=name):
                self.assertEqual(self.run_report(['--db', self.dbs[name], '-f', 'csv', 'dispatch'])[1], base)

    def test_deepest_nesting_still_found(self):
        """A chain of MAX_DEPTH nested phases (the deepest the recorder
        writes): a sample after the innermost 63 ended belongs to the
        outermost, 63 parents up; the bound on the walk does not cut it."""
        path = os.path.join(self.tmp, 'deep.sqlite')
        shutil.copy(self.dbs['recorded'], path)
        db = sqlite3.connect(path)
        pid, tid, t0 = db.execute('SELECT pid, tid, max(end_ns) + 1000000 FROM phase').fetchone()
        first = db.execute('SELECT max(id) + 1 FROM phase').fetchone()[0]
        for d in range(MAX_DEPTH):
            db.execute("INSERT INTO phase (id, name, pid, tid, depth, parent, begin_ns, end_ns, wall_ns, complete)"
                       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
                       (first + d, 'deep%d' % d, pid, tid, d, first + d - 1 if d else None, t0 + d,
                        t0 + (1000000 if d == 0 else d + 1), 1000000 if d == 0 else 1))
        db.execute("INSERT INTO sample (time_ns, pid, tid, cpu, kind, kernel, stack, class)"
                   " VALUES (?, ?, ?, 0, 0, 0, (SELECT min(id) FROM stack), 'compute')", (t0 + 5000, pid, tid))
        db.commit()
        db.close()
        rc, out, err = self.run_report(['--db', path, '-f', 'json', 'dispatch'])
        self.assertEqual(rc, 0, err)
        self.assertIn('deep0', {r['phase'] for r in json.loads(out)})

    def test_max_depth_agrees(self):
        """dispatch.sql's bound is the recorder's nesting limit."""
        with open(os.path.join(SRCDIR, 'src', 'record', 'markers', 'markers_impl.h'), encoding='utf-8') as f:
            rec = int(re.search(r'#define MAX_DEPTH (\d+)', f.read()).group(1))
        with open(os.path.join(SRCDIR, 'analyses', 'dispatch.sql'), encoding='utf-8') as f:
            sql = int(re.search(r'(\d+) AS max_depth', f.read()).group(1))
        self.assertEqual((rec, sql), (MAX_DEPTH, MAX_DEPTH))

    def test_html_pages_are_drawn(self):
        """The page's script ends on every database (a database of zeros
        made its axis and roofline loops endless)."""
        head = chromium()
        if not head:
            self.skipTest('no headless Chromium (chromium-headless-shell)')
        common = ['--disable-gpu', '--no-first-run', '--disable-extensions', '--disable-sync',
                  '--disable-background-networking', '--disable-component-update',
                  '--host-resolver-rules=MAP * ~NOTFOUND', '--proxy-server=127.0.0.1:9',
                  '--window-size=1280,2000', '--virtual-time-budget=5000', '--dump-dom']
        if os.geteuid() == 0:
            common.append('--no-sandbox')
        # Chromium is not ours: no sanitizer runtime preloaded into it
        env = {k: v for k, v in os.environ.items() if k not in ('LD_PRELOAD', 'ASAN_OPTIONS', 'UBSAN_OPTIONS')}
        for name in ('recorded', 'zeros', 'zero_keys', 'int64_max', 'int64_min', 'negative', 'random0', 'random1'):
            with self.subTest(db=name):
                page = os.path.join(self.tmp, 'draw-%s.html' % name)
                rc, _, _ = self.run_report(['--db', self.dbs[name], '--html', page])
                if rc != 0:
                    continue
                with tempfile.TemporaryDirectory(prefix='mfu-chromium-') as prof:
                    try:
                        p = run_chromium(head + common + ['--user-data-dir=' + prof, 'file://' + page],
                                         timeout=60, env=env)
                    except subprocess.TimeoutExpired:
                        self.fail('%s: Chromium still drawing the page after 60 s' % name)
                self.assertEqual(p.returncode, 0, p.stderr.decode(errors='replace')[-2000:])
                self.assertIn(b'</html>', p.stdout)


class FdLimit(unittest.TestCase):
    """More ranks than the open file limit allows at once (issue 22 item
    8): the merge reads them one at a time; a limit too low for that is
    named, with the number of files."""
    NRANKS = 24

    @classmethod
    def setUpClass(cls):
        cls.report = prog('MFU_REPORT')
        cls.tmp = tempfile.mkdtemp(prefix='mfu-fdlimit-')
        rec = os.path.join(cls.tmp, 'rec.sqlite')
        p = subprocess.run([prog('MFU_RECORD'), '-q', '--no-calibrate', '-o', rec, '--',
                            prog('MFU_WL_MLP'), '--steps', '3'],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        for i in range(cls.NRANKS):
            path = os.path.join(cls.tmp, 'run.%d.sqlite' % i)
            shutil.copy(rec, path)
            db = sqlite3.connect(path)
            db.execute('UPDATE run SET rank = ?, world_size = ?', (i, cls.NRANKS))
            db.commit()
            if i % 2:
                # as a killed recorder leaves it: WAL mode with its -wal
                # file (three descriptors open while it is read)
                db.execute('PRAGMA journal_mode = WAL')
                db.execute("INSERT INTO note (kind, text) VALUES ('test', 'in the WAL')")
                db.commit()
                shutil.copy(path + '-wal', path + '-wal.keep')
            db.close()
            if i % 2:
                os.rename(path + '-wal.keep', path + '-wal')
        os.unlink(rec)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_limited(self, args, soft, hard):
        def limit():
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        return subprocess.run([self.report] + args, cwd=self.tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=TIMEOUT, preexec_fn=limit)

    def test_more_ranks_than_descriptors(self):
        # 24 ranks, 12 of them with WAL and shared memory: 60 descriptors
        # if all were open at once
        p = self.run_limited(['--db', 'run.*.sqlite', '-f', 'json', 'job', 'ranks'], 16, 16)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = json.loads(p.stdout)
        self.assertEqual(out['job'][0]['ranks'], self.NRANKS)
        self.assertEqual(len(out['ranks']), self.NRANKS)
        merged = os.path.join(self.tmp, 'job.sqlite')
        p = self.run_limited(['merge', '-o', merged, 'run.*.sqlite'], 16, 16)
        self.assertEqual(p.returncode, 0, p.stderr)
        con = sqlite3.connect(merged)
        self.assertEqual(con.execute('SELECT count(*) FROM job_rank').fetchone()[0], self.NRANKS)
        self.assertEqual(con.execute("SELECT count(*) FROM note WHERE kind = 'test'").fetchone()[0],
                         self.NRANKS // 2)
        con.close()

    def test_soft_limit_raised_to_the_hard_one(self):
        p = self.run_limited(['--db', 'run.*.sqlite', '-f', 'csv', 'job'], 6, 64)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_limit_too_low_is_named(self):
        for args, prefix in ((['--db', 'run.*.sqlite', 'job'], 'mfu-report: '),
                             (['merge', '-o', os.path.join(self.tmp, 'no.sqlite'), 'run.*.sqlite'],
                              'mfu-report merge: ')):
            with self.subTest(args=args[0]):
                p = self.run_limited(args, 6, 6)
                self.assertEqual(p.returncode, 1, p.stderr)
                lines = p.stderr.strip().split('\n')
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertTrue(lines[0].startswith(prefix + 'cannot read %d databases' % self.NRANKS), lines[0])
                self.assertIn('ulimit -n', lines[0])
                self.assertIn(' 6,', lines[0])
        self.assertEqual([f for f in os.listdir(self.tmp) if f.startswith('no.sqlite')], [])


if __name__ == '__main__':
    unittest.main(verbosity=2)
