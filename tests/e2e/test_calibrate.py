"""End-to-end tests of mfu-calibrate: real measurements on the machine the
tests run on, checked against the spec peaks of the machine model, plus the
command line and the profile it saves.

Run through meson (meson test -C BUILD calibrate), or by hand with
MFU_CALIBRATE=BUILD/src/calibrate/mfu-calibrate python3 tests/e2e/test_calibrate.py
"""
import json
import os
import socket
import re
import sqlite3
import stat
import subprocess
import tempfile
import unittest

CALIBRATE = os.environ.get('MFU_CALIBRATE')
SPEC_KEYS = ('kind', 'dtype', 'scope', 'kernel', 'value', 'spec')
PROFILE_APPLICATION_ID = 0x6d667570  # 'mfup', src/common/profile.h
SHARE_OK = 0.95  # TEAM_SHARE_OK, src/calibrate/team.h: below, another task shared a CPU


def run(args, env=None, timeout=60):
    if not CALIBRATE or not os.path.exists(CALIBRATE):
        raise RuntimeError('MFU_CALIBRATE is not set or missing: run through meson test')
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([CALIBRATE] + list(args), env=full_env, timeout=timeout,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def row(rows, kind, scope, dtype=None, kernel=None, best=None):
    for r in rows:
        if (r['kind'] == kind and r['scope'] == scope and r['dtype'] == dtype
                and (kernel is None or r['kernel'] == kernel)
                and (best is None or r.get('best') == best)):
            return r
    return None


# In a sanitizer build (AddressSanitizer, UBSan) every kernel is
# instrumented: speed figures say nothing about the machine, so the checks of
# speed against the spec peak and repeatability are skipped there (total
# time is a benchmark's, tests/bench/bench_calibrate.py);
# the rest (output contract, profile, errors) still runs.
SANITIZED = os.environ.get('MFU_SANITIZED') == '1'
perf_only = unittest.skipIf(SANITIZED, 'speed is meaningless in a sanitizer build')


class Calibrate(unittest.TestCase):
    """Two full runs in JSON (shared by the tests below: each takes seconds)."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix='mfu-cal-')
        cls.tmp = cls._tmp.name
        cls.cache = os.path.join(cls.tmp, 'cache')
        cls.home = os.path.join(cls.tmp, 'home')
        os.mkdir(cls.home)
        env = {'XDG_CACHE_HOME': cls.cache, 'HOME': cls.home}
        # (how long a calibration takes is measured by
        # tests/bench/bench_calibrate.py, not here: a busy machine slows it)
        cls.p1 = run(['--format', 'json'], env=env)
        cls.env2 = {'XDG_CACHE_HOME': os.path.join(cls.tmp, 'cache2'), 'HOME': cls.home}
        cls.p2 = run(['--format', 'json', '--no-save'], env=cls.env2)
        cls.rows1 = json.loads(cls.p1.stdout) if cls.p1.returncode == 0 else None
        cls.rows2 = json.loads(cls.p2.stdout) if cls.p2.returncode == 0 else None

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def test_runs(self):
        self.assertEqual(self.p1.returncode, 0, self.p1.stderr)
        self.assertEqual(self.p2.returncode, 0, self.p2.stderr)

    def test_json_contract(self):
        rows = self.rows1
        self.assertIsInstance(rows, list)
        self.assertTrue(rows)
        for r in rows:
            for k in SPEC_KEYS:
                self.assertIn(k, r, r)
            self.assertIn(r['kind'], ('flops', 'bandwidth'))
            self.assertIn(r['scope'], ('core', 'all'))
            self.assertIsInstance(r['kernel'], str)
            self.assertGreater(r['value'], 0, r)
            if r['kind'] == 'bandwidth':
                self.assertIsNone(r['dtype'], r)
            else:
                self.assertIn(r['dtype'], ('fp64', 'fp32', 'bf16', 'fp16', 'int8'))
            if r['spec'] is not None:
                self.assertGreater(r['spec'], 0)
                self.assertAlmostEqual(r['ratio'], r['value'] / r['spec'], places=3)
        # Both scopes of every kind, and the three STREAM kernels.
        for scope in ('core', 'all'):
            self.assertIsNotNone(row(rows, 'flops', scope, 'fp64'))
            self.assertIsNotNone(row(rows, 'flops', scope, 'fp32'))
            names = sorted(r['kernel'].replace('_nt', '') for r in rows
                           if r['kind'] == 'bandwidth' and r['scope'] == scope)
            self.assertEqual(names, ['copy', 'read', 'triad'])

    @perf_only
    def test_fp64_fma_core_vs_spec(self):
        """One core's fp64 FMA rate is at least 50% of the spec peak of one
        core (nominal GHz x FLOPs/cycle) and at most 105% of it, scaled by
        the clock measured around the kernel over the nominal clock: a core
        running above its nominal frequency (turbo, the host of a VM: on the
        development VM the kernel reaches 1.2x the nominal spec at ~2.45 GHz)
        goes further, but its FLOPs per cycle cannot beat the spec's. The
        clock is measured next to the kernel, not during it; 5% more covers
        that (seen: up to 3%). A FLOP miscounted twice fails by far."""
        rows = self.rows1
        fp64 = [r for r in rows if r['kind'] == 'flops' and r['dtype'] == 'fp64'
                and r['scope'] == 'core']
        best = max(fp64, key=lambda r: r['value'])
        if best['spec'] is None:
            self.skipTest('no spec fp64 peak for this CPU (unknown microarchitecture)')
        ratio = best['value'] / best['spec']
        nominal = best['spec'] / self.fpc(best)
        turbo = max(1.0, (best.get('clock_hz') or 0) / nominal)
        msg = '%s: %.1f GFLOP/s vs spec %.1f GFLOP/s (ratio %.3f, clock %.2f GHz, nominal ' \
              '%.2f GHz, cpu share %.2f)' % (best['kernel'], best['value'] / 1e9,
                                              best['spec'] / 1e9, ratio,
                                              (best.get('clock_hz') or 0) / 1e9, nominal / 1e9,
                                              best['cpu_share'])
        self.assertLessEqual(ratio, 1.05 * 1.05 * turbo, msg)
        if best['cpu_share'] < SHARE_OK:
            self.skipTest('the CPU was shared with another task: ' + msg)
        self.assertGreaterEqual(ratio, 0.50, msg)

    @staticmethod
    def fpc(r):
        """FLOPs per cycle from the spec detail ('... x 32 FLOP/cycle ...')."""
        words = r['spec_detail'].split()
        return float(words[words.index('FLOP/cycle') - 1])

    @perf_only
    def test_flops_counted_per_scope(self):
        """The all-CPUs figure is never more than ncpu times the core figure
        (+ noise): FLOPs are not double counted; on an idle machine it is
        at least the core figure. Either holds only where the figures it
        divides by had their CPU (mfu-calibrate's cpu_share): a core
        kernel that ran 57% of the time, beside two busy loops, measured
        under half its rate."""
        rows = self.rows1
        n = len(os.sched_getaffinity(0))
        for r in rows:
            if r['kind'] != 'flops' or r['scope'] != 'core':
                continue
            a = row(rows, 'flops', 'all', r['dtype'], r['kernel'])
            self.assertIsNotNone(a)
            if r['cpu_share'] >= SHARE_OK:
                self.assertLessEqual(a['value'], n * r['value'] * 1.15, (r, a))
            if a['cpu_share'] >= SHARE_OK and r['cpu_share'] >= SHARE_OK:
                self.assertGreaterEqual(a['value'], r['value'] * 0.85, (r, a))

    def test_bandwidth_positive(self):
        """Bandwidth figures are positive, in both runs. How repeatable they
        are is the benchmark's to say (tests/bench/bench_calibrate.py prints
        two runs side by side): memory bandwidth on a VM moves with the
        host's other guests (20-30% between runs seen here, 2.2x with other
        jobs on the machine whose CPU share mfu-calibrate does not see), and
        two runs of the same code count their bytes alike, right or wrong."""
        for rows in (self.rows1, self.rows2):
            bw = [r for r in rows if r['kind'] == 'bandwidth']
            self.assertEqual(sorted({(r['scope'], r['kernel'].replace('_nt', '')) for r in bw}),
                             [(s, k) for s in ('all', 'core') for k in ('copy', 'read', 'triad')], bw)
            for r in bw:
                self.assertGreater(r['value'], 1e8, r)

    def test_best_rows(self):
        """One best row per (kind, dtype, scope): the fastest FLOP kernel
        whose threads had their CPUs (a disturbed figure only when all
        are), the triad for bandwidth."""
        rows = self.rows1
        keys = {(r['kind'], r['dtype'], r['scope']) for r in rows}
        for k in keys:
            group = [r for r in rows if (r['kind'], r['dtype'], r['scope']) == k]
            best = [r for r in group if r['best']]
            self.assertEqual(len(best), 1, group)
            for r in group:  # (cpu_share is printed to 3 decimals)
                if abs(r['cpu_share'] - SHARE_OK) > 0.001:
                    self.assertEqual(r['disturbed'], r['cpu_share'] < SHARE_OK, r)
            if k[0] == 'flops':
                quiet = [r for r in group if not r['disturbed']] or group
                self.assertEqual(best[0]['value'], max(r['value'] for r in quiet))
            else:
                self.assertTrue(best[0]['kernel'].startswith('triad'))

    def test_int8_kernels_where_the_cpu_has_them(self):
        """VNNI int8 dot products are measured where the CPU has them, as
        integer ops: never above the spec's ops per cycle at the measured
        clock (+10%), and with the core idle at least half of it."""
        with open('/proc/cpuinfo') as f:
            flags = next((l.split(':', 1)[1].split() for l in f if l.startswith('flags')), [])
        want = [k for k, flag in (('avx512_vnni', 'avx512_vnni'), ('avx_vnni', 'avx_vnni'))
                if flag in flags and (k != 'avx512_vnni' or 'avx512f' in flags)]
        rows = [r for r in self.rows1 if r['dtype'] == 'int8']
        if not want:
            self.assertEqual([r for r in rows if 'vnni' in r['kernel']], [])
            self.skipTest('this CPU has no VNNI')
        for k in want:
            for scope in ('core', 'all'):
                self.assertIsNotNone(row(self.rows1, 'flops', scope, 'int8', k), (k, scope))
        best = max((r for r in rows if r['scope'] == 'core'), key=lambda r: r['value'])
        self.assertIn('op/s', self.run_table_int8())
        if best['spec'] is None or SANITIZED:
            return
        words = best['spec_detail'].split()
        per_cycle = float(words[words.index('op/cycle') - 1])
        clock = best.get('clock_hz') or 0
        if clock <= 0:
            self.skipTest('no clock measured')
        achieved = best['value'] / clock
        self.assertLessEqual(achieved, per_cycle * 1.1, best)
        # the lower bound is the widest kernel's (the spec's op/cycle is
        # its width): on a busy machine a disturbed wide run can lose to a
        # narrower kernel, which cannot reach half of it by construction
        widest = row(self.rows1, 'flops', 'core', 'int8', want[0])
        if widest['cpu_share'] >= SHARE_OK and not widest.get('disturbed') and widest.get('clock_hz'):
            self.assertGreaterEqual(widest['value'] / widest['clock_hz'], per_cycle * 0.5, widest)

    def run_table_int8(self):
        p = run(['--quick', '--no-save'], env=self.env2)
        self.assertEqual(p.returncode, 0, p.stderr)
        return '\n'.join(l for l in p.stdout.splitlines() if ' int8 ' in l)

    def test_profile_written_to_xdg_cache(self):
        host = re.sub(r'[^A-Za-z0-9._-]', '_', socket.gethostname())
        path = os.path.join(self.cache, 'mfu', 'profile-%s.sqlite' % host)
        self.assertTrue(os.path.exists(path), self.p1.stderr)
        self.assertIn(path, self.p1.stderr)
        self.assertEqual(stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode), 0o700)
        self.assertFalse(os.path.exists(os.path.join(self.home, '.cache')))
        con = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
        try:
            self.assertEqual(con.execute('PRAGMA application_id').fetchone()[0],
                             PROFILE_APPLICATION_ID)
            m = con.execute('SELECT vendor, allowed_cpus, ncpu FROM machine').fetchone()
            self.assertTrue(m[0])
            self.assertEqual(int(m[2]), len(os.sched_getaffinity(0)))
            n = con.execute("SELECT count(*) FROM measurement WHERE kind != 'clock'").fetchone()[0]
            self.assertEqual(n, len(self.rows1))
            # one profile per host, and the measured core clock for the peak texts
            self.assertEqual(con.execute('SELECT host FROM machine').fetchone()[0], socket.gethostname())
            clock = con.execute("SELECT value, scope, best FROM measurement WHERE kind = 'clock'").fetchall()
            self.assertEqual(len(clock), 1)
            self.assertEqual(clock[0][1:], ('core', 1))
            self.assertGreater(clock[0][0], 2e8)
            self.assertLess(clock[0][0], 1e10)
            stored = con.execute("SELECT value FROM measurement WHERE kind = 'flops' AND "
                                 "dtype = 'fp64' AND scope = 'core' AND best = 1").fetchone()
            group = [r for r in self.rows1 if r['kind'] == 'flops' and r['dtype'] == 'fp64'
                     and r['scope'] == 'core']
            want = max(r['value'] for r in ([r for r in group if not r['disturbed']] or group))
            self.assertAlmostEqual(stored[0] / want, 1.0, places=4)
            # format 3: when, on which CPUs, with how many threads and
            # under what load each figure was taken
            self.assertEqual(con.execute('PRAGMA user_version').fetchone()[0], 3)
            cpus = m[1]
            for kind, scope, threads, share, load, dist, cal, rcpus in con.execute(
                    "SELECT kind, scope, threads, cpu_share, loadavg, disturbed, calibration, cpus "
                    "FROM measurement"):
                self.assertEqual(rcpus, cpus)
                self.assertEqual(threads, 1 if scope == 'core' else len(os.sched_getaffinity(0)))
                self.assertEqual(cal, 1)
                self.assertTrue(share is not None and 0 < share <= 1.5, share)
                self.assertEqual(dist, 1 if share < SHARE_OK else 0, (kind, scope, share))
                self.assertTrue(load is None or load >= 0, load)
            cal = con.execute('SELECT id, cpus, measurements, disturbed, kept FROM calibration').fetchall()
            self.assertEqual(cal, [(1, cpus, len(self.rows1), sum(r['disturbed'] for r in self.rows1), 0)])
        finally:
            con.close()
        # No temporary file left behind.
        self.assertEqual(os.listdir(os.path.dirname(path)), [os.path.basename(path)])

    def test_no_save_writes_nothing(self):
        self.assertFalse(os.path.exists(self.env2['XDG_CACHE_HOME']))
        self.assertNotIn('saved', self.p2.stderr)


class CommandLine(unittest.TestCase):
    def test_help(self):
        p = run(['--help'])
        self.assertEqual(p.returncode, 0)
        self.assertIn('usage: mfu-calibrate', p.stdout)
        self.assertIn('--format', p.stdout)
        self.assertEqual(p.stderr, '')

    def test_bad_usage(self):
        for args in (['--bogus'], ['--format', 'xml'], ['--format'], ['extra'],
                     ['--profile', ''], ['-x']):
            p = run(args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertEqual(p.stdout, '', args)
            self.assertTrue(p.stderr.startswith('mfu-calibrate: '), (args, p.stderr))

    def test_quick_table_and_profile_option(self):
        with tempfile.TemporaryDirectory(prefix='mfu-cal-') as tmp:
            prof = os.path.join(tmp, 'sub', 'p.sqlite')
            # (how long it takes is a benchmark's: tests/bench/bench_calibrate.py)
            p = run(['--quick', '--profile', prof], env={'XDG_CACHE_HOME': os.path.join(tmp, 'x')})
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(os.path.exists(prof))
            self.assertFalse(os.path.exists(os.path.join(tmp, 'x')))
            lines = p.stdout.splitlines()
            header = [l for l in lines if l.startswith('kind ')]
            self.assertEqual(len(header), 1, p.stdout)
            body = [l for l in lines if l.startswith('flops ') or l.startswith('bandwidth ')]
            self.assertTrue(body)
            # Aligned: every row as wide as the header, units on every figure.
            for l in body:
                self.assertEqual(len(l.rstrip()), len(header[0].rstrip()), l)
                self.assertTrue('GFLOP/s' in l or 'GB/s' in l or (' int8 ' in l and 'Gop/s' in l), l)
            self.assertIn('calibration took', p.stdout)

    def test_unwritable_profile_fails(self):
        with tempfile.TemporaryDirectory(prefix='mfu-cal-') as tmp:
            blocker = os.path.join(tmp, 'file')
            open(blocker, 'w').close()
            p = run(['--quick', '--format', 'json', '--profile', os.path.join(blocker, 'p.sqlite')])
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn('mfu-calibrate: cannot save the profile', p.stderr)
            json.loads(p.stdout)  # the results were still printed


if __name__ == '__main__':
    unittest.main(verbosity=2)
