"""BLAS linked into the executable itself (issue 13): calls that preloading
cannot interpose, counted with tracefs uprobes (src/record/probes/lib_probes.c).

tests/workloads/blas_static.c is built here with the system's static
OpenBLAS (libopenblas-dev) or reference BLAS (libblas-dev): fully static
with steps from --step train_step, and dynamic with libmfu's markers. Every
step's lib_flops must equal the FLOPs of the calls it made, each call counted
once (a reference CBLAS cblas_dgemm calls dgemm_ inside). Uprobes need root:
as another user the library FLOPs of such a program are unknown (NULL) and a
note says why. tests/workloads/lapack_static.c: LAPACK and BLAS level 1
linked in statically (OpenBLAS's, or the reference LAPACK and BLAS, whose
dgesv_ calls dgetrf_, dgemm_... inside): LAWN 41's counts read from the
Fortran arguments, some on the stack; workspace queries left out; dsyevd_
a call of unknown FLOPs. Exits 77 (skipped) when no static BLAS or no C
compiler is found."""
from fractions import Fraction as Fr
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from mfutest import SRCDIR, TempDirTest, as_nobody, nobody_reachable, nobody_tmp, prog, query, record  # noqa: E402

SRC = os.path.join(SRCDIR, 'tests', 'workloads', 'blas_static.c')
LAPACK_SRC = os.path.join(SRCDIR, 'tests', 'workloads', 'lapack_static.c')
ROOT = os.geteuid() == 0
CC = shutil.which(os.environ.get('CC', 'cc')) or shutil.which('gcc')
MULTIARCH = '/usr/lib/x86_64-linux-gnu'
OPENBLAS_A = os.path.join(MULTIARCH, 'openblas-pthread', 'libopenblas.a')
REFBLAS_A = os.path.join(MULTIARCH, 'blas', 'libblas.a')
REFLAPACK_A = os.path.join(MULTIARCH, 'lapack', 'liblapack.a')
OPENBLAS_INC = '/usr/include/x86_64-linux-gnu/openblas-pthread'


def step_flops(s):
    """FLOPs of step s of blas_static.c, per function."""
    return {'cblas_dgemm': ((s + 1), (s + 1) * 2 * 32 ** 3),
            'dgemm_': (1, 2 * 16 * 16 * 8),
            'cblas_dtrsm': (2, 4 * 8 ** 2 + 8 * 4 ** 2)}


def lapack_step_calls(s):
    """{function: (calls, FLOPs)} of step s of lapack_static.c (LAPACK
    Working Note 41; test_libflops.py has the formulas), FLOPs None for
    dsyevd_, whose FLOPs are unknown."""
    n, nrhs, m, k, c = Fr(32), 2, 40, 20, 3
    # GETRF(n, n) + GETRS(n, nrhs): multiplications + additions
    gesv = (n ** 3 / 3 + 2 * n / 3 + nrhs * n * n) + (n ** 3 / 3 - n * n / 2 + n / 6 + nrhs * n * (n - 1))
    # GEQRF(m, k), m >= k
    qr = 2 * (m * k * k - Fr(k ** 3, 3) + Fr(k * k, 2)) + m * k + Fr(23 * k, 6) + Fr(5 * k, 6)
    # ORMQR, Q^T from the left on m x c
    ormqr = c * k * (2 * m + 2 - k) + c * k * (2 * m + 1 - k)
    calls = {'dgesv_': (1, int(gesv)), 'dgeqrf_': (1, int(qr)), 'dormqr_': (1, ormqr), 'ddot_': (1, 200),
             'cblas_ddot': (1, 200)}
    if s == 1:
        calls['dsyevd_'] = (1, None)
    return calls


def build(out, blas_a, static, markers, src=SRC, extra=()):
    if not CC or not os.path.exists(blas_a) or not all(os.path.exists(x) for x in extra):
        return None
    cmd = [CC, '-O1', '-o', out, src, '-I' + OPENBLAS_INC]
    if markers:
        lib = prog('MFU_LIBMFU')
        cmd += ['-DMARKERS', '-I' + os.path.join(SRCDIR, 'src', 'lib'), lib,
                '-Wl,-rpath,' + os.path.dirname(lib)]
    if static:
        cmd.append('-static')
    cmd += list(extra) + [blas_a, '-lgfortran']
    if src == LAPACK_SRC:
        cmd.append('-lquadmath')  # LAPACK's error messages: gfortran's formatted output
    cmd += ['-lpthread', '-lm']
    if os.environ.get('MFU_SANITIZED') and markers:
        cmd.insert(1, '-fsanitize=address')   # libmfu is built with ASan there
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return out if p.returncode == 0 else None


class LibProbes(TempDirTest):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='mfu-libprobes-', dir=nobody_tmp())
        os.chmod(cls.tmp, 0o755)
        cls.static = build(os.path.join(cls.tmp, 'static'), OPENBLAS_A, True, False)
        cls.static_ref = build(os.path.join(cls.tmp, 'static_ref'), REFBLAS_A, True, False)
        cls.dynamic = build(os.path.join(cls.tmp, 'dynamic'), OPENBLAS_A, False, True)
        cls.lapack = build(os.path.join(cls.tmp, 'lapack'), OPENBLAS_A, True, False, LAPACK_SRC)
        cls.lapack_ref = build(os.path.join(cls.tmp, 'lapack_ref'), REFBLAS_A, True, False, LAPACK_SRC,
                               [REFLAPACK_A])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def check_steps(self, db, expect_funcs):
        steps = query(db, 'SELECT step, lib_flops, lib_flops_fp64, lib_calls, flops, flops_source '
                          'FROM step WHERE complete = 1 ORDER BY step')
        self.assertEqual(len(steps), 3, steps)
        for row in steps:
            want = step_flops(row['step'])
            total = sum(f for n, f in want.values())
            self.assertEqual(row['lib_flops'], total, row)
            self.assertEqual(row['lib_flops_fp64'], total, row)
            self.assertEqual(row['lib_calls'], sum(n for n, f in want.values()), row)
            self.assertEqual(row['flops'], total, row)
            self.assertEqual(row['flops_source'], 'library', row)
            calls = {r['function']: (r['calls'], r['flops']) for r in
                     query(db, 'SELECT function, calls, flops FROM lib_call WHERE step = ?', (row['step'],))}
            self.assertEqual(calls, {k: (n, float(f)) for k, (n, f) in want.items() if k in expect_funcs},
                             'step %d' % row['step'])
        self.assertEqual(query(db, 'SELECT lib_counting FROM run')[0]['lib_counting'], 'on')
        # the whole run (issue 23 item 1): every call, all of them in the
        # three steps here, in run.lib_*, run_lib_call, and the readings,
        # whose last is the run's totals
        run = query(db, 'SELECT lib_flops, lib_flops_fp64, lib_calls FROM run')[0]
        total = sum(f for s in range(3) for n, f in step_flops(s).values())
        ncalls = sum(n for s in range(3) for n, f in step_flops(s).values())
        self.assertEqual(run, {'lib_flops': total, 'lib_flops_fp64': total, 'lib_calls': ncalls})
        by_func = {r['function']: (r['calls'], r['flops']) for r in query(db, 'SELECT * FROM run_lib_call')}
        self.assertEqual(sum(c for c, f in by_func.values()), ncalls)
        self.assertEqual({k for k in by_func}, set(expect_funcs))
        last = query(db, 'SELECT lib_flops, lib_calls FROM lib_reading ORDER BY time_ns DESC LIMIT 1')
        self.assertEqual(last, [{'lib_flops': total, 'lib_calls': ncalls}])
        notes = [r['text'] for r in query(db, "SELECT text FROM note WHERE kind = 'lib_flops'")]
        self.assertTrue(any('counted with uprobes' in n for n in notes), notes)

    def assertNoEventsLeft(self):
        """No uprobe event of a recorder that has ended (group mfu_PID, PID
        the recorder's). Another mfu-record running on the machine meanwhile
        (another clone's suite) has its own, live ones: not left behind."""
        for d in ('/sys/kernel/tracing', '/sys/kernel/debug/tracing'):
            path = os.path.join(d, 'uprobe_events')
            if os.path.exists(path):
                with open(path) as f:
                    left = [l for l in f if l.startswith(('p:mfu_', 'r:mfu_'))
                            and not os.path.exists('/proc/%s' % l[len('p:mfu_'):].split('/', 1)[0])]
                self.assertEqual(left, [], 'uprobe events left behind')

    @unittest.skipUnless(ROOT, 'uprobes need root')
    def test_static_program_with_probe_steps(self):
        if not self.static:
            self.skipTest('no static OpenBLAS (%s) or no C compiler' % OPENBLAS_A)
        db = self.path('run.sqlite')
        p = record(['-o', db, '--step', 'train_step'], [self.static])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.check_steps(db, ('cblas_dgemm', 'dgemm_', 'cblas_dtrsm'))
        # the program's results are its own: the same checksum without mfu-record
        bare = subprocess.run([self.static], stdout=subprocess.PIPE, text=True)
        self.assertEqual(p.stdout, bare.stdout)
        self.assertNoEventsLeft()

    @unittest.skipUnless(ROOT, 'uprobes need root')
    def test_nested_calls_count_once(self):
        # the reference CBLAS's cblas_dgemm calls dgemm_: one call, not two
        if not self.static_ref:
            self.skipTest('no static reference BLAS (%s) or no C compiler' % REFBLAS_A)
        db = self.path('run.sqlite')
        p = record(['-o', db, '--step', 'train_step'], [self.static_ref])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.check_steps(db, ('cblas_dgemm', 'dgemm_', 'cblas_dtrsm'))

    @unittest.skipUnless(ROOT, 'uprobes need root')
    def test_dynamic_program_with_static_blas_and_markers(self):
        # the counting library is loaded too: no call counted twice
        if not self.dynamic:
            self.skipTest('no static OpenBLAS (%s) or no C compiler' % OPENBLAS_A)
        db = self.path('run.sqlite')
        p = record(['-o', db], [self.dynamic])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.check_steps(db, ('cblas_dgemm', 'dgemm_', 'cblas_dtrsm'))
        self.assertNoEventsLeft()

    def check_lapack_steps(self, exe, nested_ok):
        db = self.path('run.sqlite')
        p = record(['-o', db, '--step', 'train_step'], [exe])
        self.assertEqual(p.returncode, 0, p.stderr)
        bare = subprocess.run([exe], stdout=subprocess.PIPE, text=True)
        self.assertEqual(p.stdout, bare.stdout)
        steps = query(db, 'SELECT step, lib_flops, lib_calls, lib_calls_unknown FROM step WHERE complete = 1 '
                          'ORDER BY step')
        self.assertEqual(len(steps), 2, steps)
        for row in steps:
            want = lapack_step_calls(row['step'])
            calls = {r['function']: (r['calls'], r['flops']) for r in
                     query(db, 'SELECT function, calls, flops FROM lib_call WHERE step = ?', (row['step'],))}
            # what dsyevd_ called (its tridiagonal reduction's BLAS, the
            # dormqr_ of its back-transformation...) counts too, and nothing
            # else: dgesv_'s own dgetrf_ and dgemm_ (a reference LAPACK's)
            # are inside a counted call
            inside = {}
            for fn, (n, f) in want.items():
                got = calls.pop(fn)
                if got != (n, None if f is None else float(f)) and row['step'] == 1 and fn in nested_ok:
                    inside[fn] = (got[0] - n, got[1] - f)
                    got = (n, float(f))
                self.assertEqual(got, (n, None if f is None else float(f)), (row, fn))
            calls.update(inside)
            self.assertTrue(row['step'] == 1 or not calls, calls)
            self.assertTrue(set(calls) <= nested_ok, calls)
            self.assertEqual(row['lib_calls_unknown'], 1 if row['step'] == 1 else 0, row)
            self.assertEqual(row['lib_calls'], sum(n for n, f in want.values()) + sum(n for n, f in calls.values()))
            known = sum(f for n, f in want.values() if f is not None) + sum(f for n, f in calls.values())
            self.assertEqual(row['lib_flops'], known, row)
        self.assertNoEventsLeft()

    @unittest.skipUnless(ROOT, 'uprobes need root')
    def test_static_lapack(self):
        if not self.lapack:
            self.skipTest('no static OpenBLAS (%s) or no C compiler' % OPENBLAS_A)
        self.check_lapack_steps(self.lapack, {'dgemm_', 'dgemv_', 'dsymv_', 'dsyr2k_', 'ddot_', 'daxpy_',
                                              'dscal_', 'dnrm2_', 'dormqr_', 'dgeqrf_', 'dtrmm_', 'dtrmv_',
                                              'dger_', 'drot_'})

    @unittest.skipUnless(ROOT, 'uprobes need root')
    def test_static_reference_lapack_nested_calls_count_once(self):
        if not self.lapack_ref:
            self.skipTest('no static reference LAPACK and BLAS (%s, %s) or no C compiler' % (REFLAPACK_A, REFBLAS_A))
        self.check_lapack_steps(self.lapack_ref, {'dgemm_', 'dgemv_', 'dsymv_', 'dsyr2k_', 'ddot_', 'daxpy_',
                                                  'dscal_', 'dnrm2_', 'dormqr_', 'dgeqrf_', 'dtrmm_', 'dtrmv_',
                                                  'dger_', 'drot_'})

    def test_unprivileged_says_unknown(self):
        if not self.dynamic:
            self.skipTest('no static OpenBLAS (%s) or no C compiler' % OPENBLAS_A)
        cp = nobody_reachable(self, [prog('MFU_RECORD')])
        db = self.path('run.sqlite')
        # the program's RUNPATH names the build's libmfu: nobody loads the copy
        env = dict(cp.env, HOME=self.dir, LD_LIBRARY_PATH=os.path.dirname(cp.env['MFU_LIBRARY']))
        p = subprocess.run(as_nobody([cp[prog('MFU_RECORD')], '-o', db, '--', self.dynamic]), env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('uprobes need root', p.stderr)
        rows = query(db, 'SELECT lib_flops, lib_calls, flops FROM step WHERE complete = 1')
        self.assertEqual(len(rows), 3)
        for r in rows:
            self.assertEqual((r['lib_flops'], r['lib_calls'], r['flops']), (None, None, None), r)
        # nor the whole run's: the counting library saw only part of it
        self.assertEqual(query(db, 'SELECT lib_flops, lib_calls FROM run'), [{'lib_flops': None, 'lib_calls': None}])
        self.assertEqual(query(db, 'SELECT COUNT(*) AS n FROM lib_call')[0]['n'], 0)

    @unittest.skipUnless(ROOT, 'uprobes need root')
    def test_no_lib_flops_places_no_probe(self):
        if not self.static:
            self.skipTest('no static OpenBLAS (%s) or no C compiler' % OPENBLAS_A)
        db = self.path('run.sqlite')
        p = record(['-o', db, '--no-lib-flops', '--step', 'train_step'], [self.static])
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = query(db, 'SELECT lib_flops FROM step WHERE complete = 1')
        self.assertEqual([r['lib_flops'] for r in rows], [None] * 3)
        self.assertEqual(query(db, 'SELECT lib_counting FROM run')[0]['lib_counting'], 'off')


if __name__ == '__main__':
    if not CC or not (os.path.exists(OPENBLAS_A) or os.path.exists(REFBLAS_A)):
        print('skipped: needs a C compiler and a static BLAS (libopenblas-dev or libblas-dev)')
        sys.exit(77)
    unittest.main(verbosity=2)
