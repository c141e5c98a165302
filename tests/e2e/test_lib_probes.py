"""BLAS linked into the executable itself (issue 13): calls that preloading
cannot interpose, counted with tracefs uprobes (src/record/probes/lib_probes.c).

tests/workloads/blas_static.c is built here with the system's static
OpenBLAS (libopenblas-dev) or reference BLAS (libblas-dev): fully static
with steps from --step train_step, and dynamic with libmfu's markers. Every
step's lib_flops must equal the FLOPs of the calls it made, each call counted
once (a reference CBLAS cblas_dgemm calls dgemm_ inside). Uprobes need root:
as another user the library FLOPs of such a program are unknown (NULL) and a
note says why. Exits 77 (skipped) when no static BLAS or no C compiler is
found."""
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from mfutest import SRCDIR, TempDirTest, prog, query, record  # noqa: E402

SRC = os.path.join(SRCDIR, 'tests', 'workloads', 'blas_static.c')
ROOT = os.geteuid() == 0
CC = shutil.which(os.environ.get('CC', 'cc')) or shutil.which('gcc')
MULTIARCH = '/usr/lib/x86_64-linux-gnu'
OPENBLAS_A = os.path.join(MULTIARCH, 'openblas-pthread', 'libopenblas.a')
REFBLAS_A = os.path.join(MULTIARCH, 'blas', 'libblas.a')
OPENBLAS_INC = '/usr/include/x86_64-linux-gnu/openblas-pthread'


def step_flops(s):
    """FLOPs of step s of blas_static.c, per function."""
    return {'cblas_dgemm': ((s + 1), (s + 1) * 2 * 32 ** 3),
            'dgemm_': (1, 2 * 16 * 16 * 8),
            'cblas_dtrsm': (2, 4 * 8 ** 2 + 8 * 4 ** 2)}


def build(out, blas_a, static, markers):
    if not CC or not os.path.exists(blas_a):
        return None
    cmd = [CC, '-O1', '-o', out, SRC, '-I' + OPENBLAS_INC]
    if markers:
        lib = prog('MFU_LIBMFU')
        cmd += ['-DMARKERS', '-I' + os.path.join(SRCDIR, 'src', 'lib'), lib,
                '-Wl,-rpath,' + os.path.dirname(lib)]
    if static:
        cmd.append('-static')
    cmd += [blas_a, '-lgfortran', '-lpthread', '-lm']
    if os.environ.get('MFU_SANITIZED') and markers:
        cmd.insert(1, '-fsanitize=address')   # libmfu is built with ASan there
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return out if p.returncode == 0 else None


class LibProbes(TempDirTest):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='mfu-libprobes-')
        os.chmod(cls.tmp, 0o755)
        cls.static = build(os.path.join(cls.tmp, 'static'), OPENBLAS_A, True, False)
        cls.static_ref = build(os.path.join(cls.tmp, 'static_ref'), REFBLAS_A, True, False)
        cls.dynamic = build(os.path.join(cls.tmp, 'dynamic'), OPENBLAS_A, False, True)

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
        notes = [r['text'] for r in query(db, "SELECT text FROM note WHERE kind = 'lib_flops'")]
        self.assertTrue(any('counted with uprobes' in n for n in notes), notes)

    def assertNoEventsLeft(self):
        for d in ('/sys/kernel/tracing', '/sys/kernel/debug/tracing'):
            path = os.path.join(d, 'uprobe_events')
            if os.path.exists(path):
                with open(path) as f:
                    left = [l for l in f if l.startswith(('p:mfu_', 'r:mfu_'))]
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

    @unittest.skipUnless(ROOT and shutil.which('setpriv'), 'needs root to become another user')
    def test_unprivileged_says_unknown(self):
        if not self.dynamic:
            self.skipTest('no static OpenBLAS (%s) or no C compiler' % OPENBLAS_A)
        nb = pwd.getpwnam('nobody')
        db = self.path('run.sqlite')
        env = dict(os.environ, HOME=self.dir)
        p = subprocess.run(['setpriv', '--reuid=%d' % nb.pw_uid, '--regid=%d' % nb.pw_gid, '--clear-groups',
                            prog('MFU_RECORD'), '-o', db, '--', self.dynamic], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('uprobes need root', p.stderr)
        rows = query(db, 'SELECT lib_flops, lib_calls, flops FROM step WHERE complete = 1')
        self.assertEqual(len(rows), 3)
        for r in rows:
            self.assertEqual((r['lib_flops'], r['lib_calls'], r['flops']), (None, None, None), r)
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
