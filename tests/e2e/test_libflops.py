"""Library-call FLOPs (issue 13): what the counting library that mfu-record
preloads (libmfu-libflops.so) counts, checked exactly against the FLOPs of
the calls each step made, computed here from their sizes (docs/flops.md has
the formulas).

- tests/workloads/blas.c with OpenBLAS (wl_blas) and with the reference BLAS
  (wl_blas_ref, whose cblas_dgemm calls dgemm_ through the dynamic loader,
  i.e. through the counting library: counted once); per step lib_flops by
  precision, lib_calls, flops, flops_source and the lib_call rows; a phase's
  lib_flops; a step without a call (0, no flops_source); a forked child's
  calls kept out of its parent's step; two threads calling at once in one
  step; the results bit for bit the same with and without mfu-record.
- tests/workloads/blas_dlopen.c: the BLAS only in the local scope of a
  library loaded with dlopen(RTLD_LOCAL), as a Python extension has it.
- tests/workloads/dnnl.c: oneDNN's dnnl_sgemm (fp32) and int8 GEMMs
  (lib_ops_int8); a call rejected with an error status is not counted.
- --no-lib-flops (NULL, lib_counting 'off'), a static program (lib_counting
  'unavailable' and a note), an unprivileged user (the same counts).
- tests/workloads/lib_calls.py: numpy's a @ b, and a PyTorch MLP's training
  steps (forward and backward GEMMs by hand), with /usr/bin/python3 or any
  Python that has them.
- LAPACK and BLAS level 1 (issue 24): tests/workloads/lapack.c against the
  system's LAPACK (OpenBLAS's own) and against the reference LAPACK and
  BLAS (wl_lapack_ref, whose routines call dgemm_, dgetrf_... through the
  counting library: each call counted once), LAPACKE where installed, as
  root and as user nobody; numpy.linalg and scipy.linalg steps (solve, inv,
  lu, cholesky, qr, least squares) against LAPACK Working Note 41's counts
  computed here (lawn() below), np.dot(x, x) exactly 2n; eigensolvers and
  SVD least squares counted as calls of unknown FLOPs: partial or NULL,
  never 0.

Each part is skipped, saying why, when its library or program is missing;
the whole file exits 77 (meson's "skipped") when none can run."""
import os
import re
import shutil
import subprocess
import sys
import unittest
from fractions import Fraction as Fr

sys.path.insert(0, os.path.dirname(__file__))
from mfutest import SRCDIR, TempDirTest, as_nobody, nobody_reachable, prog, python_with, query, record  # noqa: E402

ROOT = os.geteuid() == 0
CC = shutil.which(os.environ.get('CC', 'cc')) or shutil.which('gcc')
PY_SCRIPT = os.path.join(SRCDIR, 'tests', 'workloads', 'lib_calls.py')
NUMPY_PY = python_with('numpy')
SCIPY_PY = python_with('scipy.linalg')
TORCH_PY = python_with('torch')


def wl(name):
    """The workload's path, or None where meson did not build it (its
    library is not installed)."""
    path = os.environ.get('MFU_WL_' + name.upper())
    return path if path and os.path.exists(path) else None


def need(name, why):
    path = wl(name)
    if not path:
        raise unittest.SkipTest('%s was not built: %s (tools/install-deps installs it)' % (name, why))
    return path


# FLOPs of one call, as docs/flops.md gives them (LAPACK Working Note 41).
def gemm(m, n, k, cplx=False):
    return (8 if cplx else 2) * m * n * k


def syrk(n, k):
    return k * n * (n + 1)


def trsm(m, n, left):
    return n * m * m if left else m * n * n


def gemv(m, n):
    return 2 * m * n


# LAPACK Working Note 41: (multiplications, additions) of a routine, exact
# fractions; real FLOPs = mul + add, complex = 6 mul + 2 add.
def lu_ops(m, n):
    s, l = Fr(min(m, n)), Fr(max(m, n))
    return (s * s * l / 2 - s ** 3 / 6 + s * l / 2 - s * s / 2 + 2 * s / 3,
            s * s * l / 2 - s ** 3 / 6 - s * l / 2 + s / 6)


def solve_ops(n, nrhs):  # getrs, sytrs: two triangular solves per right-hand side
    return nrhs * n * n, nrhs * n * (n - 1)


def getri_ops(n):
    n = Fr(n)
    return 2 * n ** 3 / 3 + n * n / 2 + 5 * n / 6, 2 * n ** 3 / 3 - 3 * n * n / 2 + 5 * n / 6


def chol_ops(n):
    n = Fr(n)
    return n ** 3 / 6 + n * n / 2 + n / 3, n ** 3 / 6 - n / 6


def potrs_ops(n, nrhs):
    return nrhs * n * (n + 1), nrhs * n * (n - 1)


def qr_ops(m, n):
    m, n = Fr(m), Fr(n)
    if m >= n:
        return (m * n * n - n ** 3 / 3 + n * n / 2 + m * n + 23 * n / 6,
                m * n * n - n ** 3 / 3 + n * n / 2 + 5 * n / 6)
    return (n * m * m - m ** 3 / 3 - m * m / 2 + 2 * m * n + 23 * m / 6,
            n * m * m - m ** 3 / 3 - m * m / 2 + m * n + 5 * m / 6)


def lq_ops(m, n):
    m, n = Fr(m), Fr(n)
    if m >= n:
        return (m * n * n - n ** 3 / 3 + n * n / 2 + m * n + 29 * n / 6,
                m * n * n - n ** 3 / 3 - n * n / 2 + m * n + 5 * n / 6)
    return (n * m * m - m ** 3 / 3 - m * m / 2 + 2 * m * n + 29 * m / 6,
            n * m * m - m ** 3 / 3 + m * m / 2 + 5 * m / 6)


def orgqr_ops(m, n, k):
    m, n, k = Fr(m), Fr(n), Fr(k)
    return (2 * m * n * k - (m + n) * k * k + 2 * k ** 3 / 3 + 2 * n * k - k * k - 5 * k / 3,
            2 * m * n * k - (m + n) * k * k + 2 * k ** 3 / 3 + n * k - m * k + k / 3)


def ormqr_left_ops(m, n, k):  # Q (k reflectors of length m) applied to m x n
    return n * k * (2 * m + 2 - k), n * k * (2 * m + 1 - k)


def trtrs_ops(n, nrhs):
    return Fr(nrhs * n * (n + 1), 2), Fr(nrhs * n * (n - 1), 2)


def trtri_ops(n):
    n = Fr(n)
    return n ** 3 / 6 + n * n / 2 + n / 3, n ** 3 / 6 - n * n / 2 + n / 3


def sytrf_ops(n):
    n = Fr(n)
    return n ** 3 / 6 + n * n / 2 + 10 * n / 3, n ** 3 / 6 - n / 6


def gels_ops(m, n, nrhs):
    s, l = min(m, n), max(m, n)
    return plus(qr_ops(m, n) if m >= n else lq_ops(m, n), ormqr_left_ops(l, nrhs, s), trtrs_ops(s, nrhs))


def plus(*ops):
    return sum(o[0] for o in ops), sum(o[1] for o in ops)


def lawn(ops, cplx=False):
    mul, add = ops
    f = 6 * mul + 2 * add if cplx else mul + add
    assert f.denominator == 1, ops
    return int(f)


def prim(kind, dtype='f32'):
    """The lib_call name of a oneDNN primitive's executions."""
    return 'dnnl_primitive_execute:' + kind + (':' + dtype if dtype else '')


def conv_flops(n, c_in, c_out, out_spatial, kernel, groups=1):
    """A convolution's products: 2 N C_out prod(out) (C_in / G) prod(kernel)."""
    f = 2 * n * c_out * (c_in // groups)
    for x in list(out_spatial) + list(kernel):
        f *= x
    return f


def conv_out(size, kernel, stride=1, pad=0, dilation=1):
    """An output size, as PyTorch and oneDNN compute it (dilation 1 = dense)."""
    return (size + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1


# dnnl.c's convolution: 2 x 6 x 10 x 12, 8 outputs in 2 groups, 3x3, stride
# 2x1, dilation 1x2 (PyTorch's; oneDNN's 0x1), padding 1x0; its
# deconvolution: 2 x 4 x 5 x 5 to 6 channels, 3x3: every source point
# against all 6 x 4 x 9 weights
DNNL_CONV = conv_flops(2, 6, 8, (conv_out(10, 3, 2, 1), conv_out(12, 3, 1, 0, 2)), (3, 3), groups=2)
DNNL_DECONV = 2 * 2 * 25 * 6 * 4 * 9

# tests/workloads/blas.c --mode steps: step s does kind s % 4;
# {function: (precision, calls, FLOPs)}
SOLVE = {'cblas_dsyrk': ('fp64', 1, syrk(24, 16)),
         'cblas_dtrsm': ('fp64', 2, trsm(16, 8, True) + trsm(16, 8, False))}
BLAS_KINDS = [
    {'cblas_dgemm': ('fp64', 1, gemm(64, 48, 32)), 'cblas_sgemm': ('fp32', 1, gemm(40, 30, 20))},
    dict(SOLVE, cblas_dgemv=('fp64', 1, gemv(100, 50)), cblas_zgemm=('fp64', 1, gemm(8, 6, 4, True))),
    {},
    {'dgemm_': ('fp64', 2, 2 * gemm(20, 10, 5)), 'cblas_dgemm': ('fp64', 1, gemm(64, 48, 32))},
]


def sums(calls):
    """Expected columns of a step that made @calls ({function: (precision,
    calls, FLOPs)}, FLOPs None for a function whose FLOPs are unknown: the
    FLOP columns count the others, and are NULL when nothing else was)."""
    by = {p: sum(f for q, n, f in calls.values() if q == p and f is not None)
          for p in ('fp64', 'fp32', 'bf16', 'fp16', 'int8')}
    total = sum(by.values())
    unknown = sum(n for q, n, f in calls.values() if f is None)
    known = total > 0 or not unknown
    return {'lib_flops': total if known else None, 'lib_flops_fp64': by['fp64'] if known else None,
            'lib_flops_fp32': by['fp32'] if known else None, 'lib_flops_bf16': by['bf16'] if known else None,
            'lib_flops_fp16': by['fp16'] if known else None, 'lib_ops_int8': by['int8'] if known else None,
            'lib_calls': sum(n for q, n, f in calls.values()), 'lib_calls_unknown': unknown,
            'flops': total if total > 0 else None, 'flops_source': 'library' if total > 0 else None}


COLUMNS = ('lib_flops', 'lib_flops_fp64', 'lib_flops_fp32', 'lib_flops_bf16', 'lib_flops_fp16',
           'lib_ops_int8', 'lib_calls', 'lib_calls_unknown', 'flops', 'flops_source')


class LibTest(TempDirTest):
    def record(self, cmd, args=(), env=None, timeout=120):
        db = self.path('run.sqlite')
        if os.path.exists(db):
            os.unlink(db)
        p = record(['-o', db] + list(args), cmd, env=env, timeout=timeout)
        self.assertEqual(p.returncode, 0, p.stderr)
        return db, p

    def record_as_nobody(self, exe):
        """mfu-record -- @exe as user nobody, both from copies nobody can
        reach (mfutest.nobody_reachable()): nothing here needs a
        privilege, so the counts are the same."""
        cp = nobody_reachable(self, [prog('MFU_RECORD'), exe])
        db = self.path('run.sqlite')
        env = dict(cp.env, HOME=self.dir)
        p = subprocess.run(as_nobody([cp[prog('MFU_RECORD')], '-o', db, '--', cp[exe]]), env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        return db, p

    def steps(self, db):
        return query(db, 'SELECT step, pid, complete, %s FROM step ORDER BY step' % ', '.join(COLUMNS))

    def lib_calls(self, db, step):
        return {r['function']: (r['precision'], r['calls'], r['flops'])
                for r in query(db, 'SELECT function, precision, calls, flops FROM lib_call WHERE step = ?',
                               (step,))}

    def check_step(self, db, row, calls):
        """@row (a step row) made exactly @calls: its columns and lib_call rows."""
        want = sums(calls)
        self.assertEqual({k: row[k] for k in COLUMNS}, want, 'step %d' % row['step'])
        self.assertEqual(self.lib_calls(db, row['step']),
                         {f: (p, n, None if fl is None else float(fl)) for f, (p, n, fl) in calls.items()},
                         'step %d' % row['step'])

    def check_lib_counting(self, db, state='on'):
        self.assertEqual(query(db, 'SELECT lib_counting FROM run')[0]['lib_counting'], state)

    def bare(self, cmd, env=None):
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout


class Blas(LibTest):
    def check_blas_steps(self, exe, nsteps=8):
        db, p = self.record([exe, '--steps', str(nsteps)])
        rows = self.steps(db)
        self.assertEqual(len(rows), nsteps)
        for row in rows:
            self.assertEqual(row['complete'], 1)
            self.check_step(db, row, BLAS_KINDS[row['step'] % 4])
        # the phase "solve" of the kind-1 steps: its two solves and the SYRK
        phases = query(db, "SELECT step, %s FROM phase WHERE name = 'solve' ORDER BY step" % ', '.join(COLUMNS))
        self.assertEqual([r['step'] for r in phases], [s for s in range(nsteps) if s % 4 == 1])
        for r in phases:
            self.assertEqual({k: r[k] for k in COLUMNS}, sums(SOLVE), r)
        self.check_lib_counting(db)
        self.assertEqual(query(db, "SELECT text FROM note WHERE kind = 'lib_flops'"), [])
        # the program's results are its own, bit for bit
        self.assertEqual(p.stdout, self.bare([exe, '--steps', str(nsteps)]))
        self.assertRegex(p.stdout, r'^checksum [0-9a-f]{16}\n$')
        return db

    def test_openblas_steps(self):
        self.check_blas_steps(need('blas', 'OpenBLAS (libopenblas-dev) is not installed'))

    def test_reference_blas_counts_nested_call_once(self):
        exe = need('blas_ref', 'the reference BLAS (libblas-dev) is not installed')
        # lib_call shows cblas_dgemm only where the program called cblas_dgemm
        self.check_blas_steps(exe, 4)
        # ...although the reference cblas_dgemm's own dgemm_ call went
        # through the counting library: the nesting guard counted it once
        env = dict(os.environ, LD_DEBUG='bindings')
        env['LD_PRELOAD'] = ' '.join(x for x in (os.environ.get('LD_PRELOAD'), prog('MFU_LIBFLOPS_SO')) if x)
        p = subprocess.run([exe, '--steps', '1'], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=env, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertRegex(p.stderr, r"binding file \S*/blas/libblas\.so\.3 \[0\] to \S*libmfu-libflops\.so "
                                   r"\[0\]: normal symbol `dgemm_'")

    def test_forked_child_counts_apart(self):
        exe = need('blas', 'OpenBLAS (libopenblas-dev) is not installed')
        db, p = self.record([exe, '--mode', 'fork', '--calls', '5'])
        rows = self.steps(db)
        self.assertEqual(len(rows), 2, rows)
        parent, child = rows  # the child's step begins inside the parent's
        self.assertNotEqual(parent['pid'], child['pid'])
        # the parent's step: its own two calls, none of the child's five
        self.check_step(db, parent, {'cblas_dgemm': ('fp64', 1, gemm(32, 32, 32)),
                                     'cblas_sgemm': ('fp32', 1, gemm(16, 16, 16))})
        self.check_step(db, child, {'cblas_dgemm': ('fp64', 5, 5 * gemm(32, 32, 32))})
        self.assertEqual(p.stdout, self.bare([exe, '--mode', 'fork', '--calls', '5']))

    def test_two_threads_in_one_step(self):
        exe = need('blas', 'OpenBLAS (libopenblas-dev) is not installed')
        n = 200
        db, p = self.record([exe, '--mode', 'threads', '--calls', str(n)])
        rows = self.steps(db)
        self.assertEqual(len(rows), 1, rows)
        self.check_step(db, rows[0], {'cblas_dgemm': ('fp64', 2 * n, 2 * n * gemm(48, 48, 48)),
                                      'cblas_sgemm': ('fp32', n, n * gemm(24, 24, 24))})
        self.assertEqual(p.stdout, self.bare([exe, '--mode', 'threads', '--calls', str(n)]))

    def test_blas_in_a_local_scope(self):
        exe = need('blas_dlopen', 'OpenBLAS (libopenblas-dev) is not installed')
        plugin = prog('MFU_BLAS_PLUGIN')
        db, p = self.record([exe, plugin, '--steps', '3'])
        rows = self.steps(db)
        self.assertEqual(len(rows), 3, rows)
        for row in rows:
            s = row['step']
            self.check_step(db, row, {'cblas_dgemm': ('fp64', s + 1, (s + 1) * gemm(32, 24, 16))})
        self.check_lib_counting(db)
        self.assertEqual(p.stdout, self.bare([exe, plugin, '--steps', '3']))
        # the program itself has no BLAS: only the plugin's scope has one
        out = subprocess.run(['ldd', exe], stdout=subprocess.PIPE, text=True).stdout
        self.assertNotIn('blas', out)

    def check_dnnl(self, exe, db, stdout):
        rows = self.steps(db)
        self.assertEqual(len(rows), 10, rows)
        self.check_step(db, rows[0], {'dnnl_sgemm': ('fp32', 1, gemm(32, 24, 16))})
        self.check_step(db, rows[1], {'dnnl_gemm_u8s8s32': ('int8', 1, gemm(16, 8, 64))})
        # the rejected dnnl_sgemm (lda < k) did no work: not counted
        self.assertIn('status dnnl_sgemm_invalid 2\n', stdout)  # dnnl_invalid_arguments
        self.check_step(db, rows[2], {'dnnl_gemm_s8s8s32': ('int8', 1, gemm(8, 8, 8))})
        # primitives (dnnl_primitive_execute), each under its kind,
        # propagation and type, with the FLOPs of its shapes computed here
        # from the sizes dnnl.c gave (oneDNN agrees: its destination shapes)
        self.assertIn('dims conv_dst 2x8x5x8\n', stdout)
        conv = DNNL_CONV
        self.check_step(db, rows[3], {prim('convolution_forward'): ('fp32', 2, 2 * conv),
                                      prim('convolution_backward_data'): ('fp32', 1, conv),
                                      prim('convolution_backward_weights'): ('fp32', 1, conv)})
        self.assertIn('dims deconv_dst 2x6x9x9\n', stdout)
        self.check_step(db, rows[4], {prim('deconvolution_forward'): ('fp32', 1, DNNL_DECONV),
                                      prim('deconvolution_backward_data'): ('fp32', 1, DNNL_DECONV)})
        ip = 2 * 4 * 7 * (3 * 5 * 5)
        self.check_step(db, rows[5], {prim('inner_product_forward'): ('fp32', 1, ip),
                                      prim('inner_product_backward_data'): ('fp32', 1, ip),
                                      prim('inner_product_backward_weights'): ('fp32', 1, ip)})
        # 3x5x6 times 1x6x4 (the batch broadcast), and 9x6 times 6x4 from a
        # descriptor whose M is known at execution only
        self.check_step(db, rows[6], {prim('matmul'): ('fp32', 2, 2 * 3 * 5 * 4 * 6 + gemm(9, 4, 6))})
        # int8 and bf16, where this CPU has them
        want = {}
        if 'status matmul_int8 0\n' in stdout:
            want[prim('matmul', 'int8')] = ('int8', 1, gemm(4, 3, 8))
        if 'status matmul_bf16 0\n' in stdout:
            want[prim('matmul', 'bf16')] = ('bf16', 1, gemm(4, 3, 8))
        self.check_step(db, rows[7], want)
        # ReLU and max pooling: calls of unknown FLOPs (NULL, not 0); a
        # reorder moves data: a call of 0 FLOPs
        self.check_step(db, rows[8], {prim('eltwise', None): ('fp32', 1, None),
                                      prim('pooling', None): ('fp32', 1, None),
                                      prim('reorder', None): ('fp32', 1, 0)})
        # a primitive destroyed, another one created (at the same address
        # when "reused 1"): each counted with its own shapes
        self.check_step(db, rows[9], {prim('convolution_forward'): ('fp32', 2, 2 * 2 * 16 * 2 * 9 +
                                                                     2 * 4 * 36 * 4 * 9)})
        self.check_lib_counting(db)
        notes = [r['text'] for r in query(db, "SELECT text FROM note WHERE kind = 'lib_flops'")]
        self.assertEqual(len(notes), 1, notes)
        self.assertIn('1 step ' + UNKNOWN_NOTE, notes[0])
        self.assertIn('dnnl_primitive_execute:eltwise (1 call)', notes[0])
        self.assertIn('dnnl_primitive_execute:pooling (1 call)', notes[0])

    def test_dnnl(self):
        exe = need('dnnl', 'oneDNN (libdnnl-dev) is not installed')
        db, p = self.record([exe])
        self.check_dnnl(exe, db, p.stdout)
        # "reused": whether the allocator gave the second primitive the
        # first one's address, which the workload can only make likely
        def same(out):
            return [line for line in out.splitlines() if not line.startswith('reused ')]
        self.assertEqual(same(p.stdout), same(self.bare([exe])))

    def test_dnnl_unprivileged(self):
        exe = need('dnnl', 'oneDNN (libdnnl-dev) is not installed')
        db, p = self.record_as_nobody(exe)
        self.check_dnnl(exe, db, p.stdout)

    def test_no_lib_flops(self):
        exe = need('blas', 'OpenBLAS (libopenblas-dev) is not installed')
        db, p = self.record([exe], ['--no-lib-flops'])
        rows = self.steps(db)
        self.assertEqual(len(rows), 4)
        for row in rows:
            self.assertEqual({k: row[k] for k in COLUMNS}, dict.fromkeys(COLUMNS), row)
        self.assertEqual(query(db, 'SELECT COUNT(*) AS n FROM lib_call')[0]['n'], 0)
        self.check_lib_counting(db, 'off')
        self.assertEqual(p.stdout, self.bare([exe]))

    def test_unprivileged(self):
        # nothing here needs a privilege: the same counts as user nobody
        exe = need('blas', 'OpenBLAS (libopenblas-dev) is not installed')
        db, p = self.record_as_nobody(exe)
        rows = self.steps(db)
        self.assertEqual(len(rows), 4)
        for row in rows:
            self.check_step(db, row, BLAS_KINDS[row['step'] % 4])
        self.check_lib_counting(db)


# tests/workloads/lapack.c: step s does kind s % KINDS (10 with LAPACKE,
# else 9); {function: (precision, calls, FLOPs)}. Kind 5 (dsyevd_) is
# checked apart: its own BLAS and LAPACK calls vary with the library.
D, S = 'fp64', 'fp32'
LAPACK_KINDS = [
    {'dgesv_': (D, 1, lawn(plus(lu_ops(64, 64), solve_ops(64, 3))))},
    {'dpotrf_': (D, 1, lawn(chol_ops(48))), 'dpotrs_': (D, 1, lawn(potrs_ops(48, 2)))},
    # workspace queries (lwork = -1) are no calls
    {'dgeqrf_': (D, 1, lawn(qr_ops(80, 40))), 'dormqr_': (D, 1, lawn(ormqr_left_ops(80, 5, 40))),
     'dtrtrs_': (D, 1, lawn(trtrs_ops(40, 5)))},
    {'dgels_': (D, 1, lawn(gels_ops(80, 40, 5))), 'sgels_': (S, 1, lawn(gels_ops(30, 50, 2)))},
    {'zgetrf_': (D, 1, lawn(lu_ops(32, 32), True)), 'zgetri_': (D, 1, lawn(getri_ops(32), True)),
     'cpotrf_': (S, 1, lawn(chol_ops(24), True))},
    None,
    {'ddot_': (D, 1, 2000), 'daxpy_': (D, 1, 2000), 'dscal_': (D, 1, 1000), 'dnrm2_': (D, 1, 2000),
     'dasum_': (D, 1, 1000), 'drot_': (D, 1, 6000), 'zdotc_': (D, 1, 8 * 500), 'zdotu_': (D, 1, 8 * 500),
     'zaxpy_': (D, 1, 8 * 500), 'csscal_': (S, 1, 2 * 300), 'scnrm2_': (S, 1, 4 * 300),
     'cblas_ddot': (D, 1, 2000), 'cblas_zdotu_sub': (D, 1, 8 * 500)},
    # dgetrf_ with m = -1 (info -1) did nothing: not counted; dpotrf_ that
    # stopped at a minor that is not positive definite (info > 0) counts
    # the whole factorization
    {'dpotrf_': (D, 1, lawn(chol_ops(16)))},
    {'dtrtri_': (D, 1, lawn(trtri_ops(30))), 'dsytrf_': (D, 1, lawn(sytrf_ops(30))),
     'dgetrf_': (D, 1, lawn(lu_ops(30, 30))), 'dgetrs_': (D, 1, lawn(solve_ops(30, 4))),
     'dgeqrf_': (D, 1, lawn(qr_ops(50, 20))), 'dorgqr_': (D, 1, lawn(orgqr_ops(50, 20, 20)))},
    {'LAPACKE_dgesv': (D, 1, lawn(plus(lu_ops(64, 64), solve_ops(64, 3)))),
     'LAPACKE_dpotrf': (D, 1, lawn(chol_ops(48)))},
]
UNKNOWN_NOTE = 'called library functions whose FLOPs are unknown'


class Lapack(LibTest):
    def check_unknown_step(self, db, row, fn):
        """A step that called @fn, whose FLOPs are unknown, once: one call
        of unknown FLOPs, and lib_flops the sum of the calls it made that
        have a count (partial), or NULL when there were none."""
        calls = self.lib_calls(db, row['step'])
        self.assertEqual(calls.pop(fn), ('fp64', 1, None), row)
        self.assertEqual(row['lib_calls_unknown'], 1, row)
        self.assertEqual(row['lib_calls'], 1 + sum(n for p, n, f in calls.values()), row)
        known = sum(f for p, n, f in calls.values())
        self.assertEqual(row['lib_flops'], known if known > 0 else None, row)
        self.assertEqual(row['flops'], known if known > 0 else None, row)

    def check_lapack(self, exe, args=(), db=None, stdout=None):
        if db is None:
            db, p = self.record([exe] + list(args))
            stdout = p.stdout
            # the program's results are its own, bit for bit
            self.assertEqual(stdout, self.bare([exe] + list(args)))
        kinds = int(re.search(r'^kinds (\d+) rejected 1$', stdout, re.M).group(1))
        rows = self.steps(db)
        self.assertEqual(len(rows), kinds)
        for row in rows:
            self.assertEqual(row['complete'], 1)
            want = LAPACK_KINDS[row['step'] % kinds]
            if want is None:
                self.check_unknown_step(db, row, 'dsyevd_')
            else:
                self.check_step(db, row, want)
        self.check_lib_counting(db)
        notes = [r['text'] for r in query(db, "SELECT text FROM note WHERE kind = 'lib_flops'")]
        self.assertEqual(len(notes), 1, notes)
        self.assertIn('1 step ' + UNKNOWN_NOTE, notes[0])
        self.assertIn('dsyevd_ (1 call)', notes[0])
        return db

    def test_lapack_steps(self):
        # OpenBLAS's own LAPACK calls its kernels directly: the routines'
        # counts are the whole step
        self.check_lapack(need('lapack', 'OpenBLAS (libopenblas-dev) is not installed'))

    def test_reference_lapack_counts_nested_calls_once(self):
        exe = need('lapack_ref', 'the reference LAPACK and BLAS (liblapack-dev, libblas-dev) are not installed')
        # lib_call shows the routines the program called, only those...
        self.check_lapack(exe)
        # ...although the reference dgesv_ called dgetrf_ and dgetrs_, which
        # called dgemm_, dtrsm_..., all through the counting library
        env = dict(os.environ, LD_DEBUG='bindings')
        env['LD_PRELOAD'] = ' '.join(x for x in (os.environ.get('LD_PRELOAD'), prog('MFU_LIBFLOPS_SO')) if x)
        p = subprocess.run([exe, '--steps', '1'], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=env, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        for sym in ('dgetrf_', 'dgetrs_', 'dgemm_', 'dtrsm_'):
            self.assertRegex(p.stderr, r"binding file \S*/lapack/liblapack\.so\.3 \[0\] to \S*libmfu-libflops\.so "
                                       r"\[0\]: normal symbol `%s'" % sym)

    def test_unprivileged(self):
        exe = need('lapack', 'OpenBLAS (libopenblas-dev) is not installed')
        db, p = self.record_as_nobody(exe)
        self.check_lapack(exe, db=db, stdout=p.stdout)


class Static(LibTest):
    def test_static_program_is_unavailable(self):
        if not CC:
            self.skipTest('no C compiler')
        libc_a = subprocess.run([CC, '-print-file-name=libc.a'], stdout=subprocess.PIPE, text=True).stdout.strip()
        if not os.path.isabs(libc_a) or not os.path.exists(libc_a):
            self.skipTest('no static C library (libc.a) to link a static program with')
        src, exe = self.path('static.c'), self.path('static')
        with open(src, 'w') as f:
            f.write('#include <stdio.h>\nint main(void) { double x = 0; for (int i = 0; i < 1000; i++) '
                    'x += i * 0.5; printf("%g\\n", x); return 0; }\n')
        # no -fsanitize: a static program cannot have ASan's runtime
        c = subprocess.run([CC, '-static', '-O1', '-o', exe, src], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        if c.returncode != 0:
            self.skipTest('cannot link a static program: ' + c.stderr.strip()[-300:])
        db, p = self.record([exe])
        self.assertEqual(p.stdout, '249750\n')
        self.check_lib_counting(db, 'unavailable')
        notes = [r['text'] for r in query(db, "SELECT text FROM note WHERE kind = 'lib_flops'")]
        self.assertEqual(len(notes), 1, notes)
        self.assertIn('statically linked', notes[0])
        self.assertIn('library FLOPs are unknown', notes[0])


class Python(LibTest):
    def run_py(self, py, args):
        env = dict(os.environ, PYTHONPATH=prog('MFU_PYTHON_DIR'))
        env.pop('MALLOC_PERTURB_', None)  # as in test_torch.py: not the program's own cost
        db, p = self.record([py, PY_SCRIPT] + list(args), env=env, timeout=180)
        self.assertEqual(p.stdout, self.bare([py, PY_SCRIPT] + list(args), env=env))
        self.check_lib_counting(db)
        return db

    @unittest.skipUnless(NUMPY_PY, 'no Python with numpy (python3-numpy)')
    def test_numpy(self):
        db = self.run_py(NUMPY_PY, ['numpy', '--steps', '8'])
        rows = self.steps(db)
        self.assertEqual(len(rows), 8)
        for row in rows:
            kind, calls = row['step'] % 4, self.lib_calls(db, row['step'])
            self.assertEqual(len(calls), 1, calls)
            fn, = calls
            # numpy calls CBLAS or the Fortran BLAS, as it was built: either
            if kind == 0:
                self.assertIn(fn, ('cblas_dgemm', 'dgemm_'))
                want = ('fp64', gemm(200, 300, 100))
            elif kind == 1:
                self.assertIn(fn, ('cblas_sgemm', 'sgemm_'))
                want = ('fp32', gemm(200, 300, 100))
            elif kind == 2:
                self.assertIn(fn, ('cblas_dgemv', 'dgemv_'))
                want = ('fp64', gemv(200, 300))
            else:
                # a.T @ a (300x200 times 200x300): numpy 1.24 asks for a
                # SYRK (half the work); a GEMM would count the whole square
                self.assertIn(fn, ('cblas_dsyrk', 'dsyrk_', 'cblas_dgemm', 'dgemm_'))
                want = ('fp64', syrk(300, 200) if 'syrk' in fn else gemm(300, 300, 200))
            self.check_step(db, row, {fn: (want[0], 1, want[1])})

    def within(self, got, want, rel, what):
        self.assertGreaterEqual(got, want, what)
        self.assertLessEqual(got, want * (1 + rel), what)

    @unittest.skipUnless(NUMPY_PY, 'no Python with numpy (python3-numpy)')
    def test_numpy_linalg(self):
        n = 300
        db = self.run_py(NUMPY_PY, ['linalg', '--n', str(n)])
        rows = self.steps(db)
        self.assertEqual(len(rows), 8)
        gesv = lambda nrhs, cplx=False: lawn(plus(lu_ops(n, n), solve_ops(n, nrhs)), cplx)  # noqa: E731
        # numpy calls the Fortran LAPACK: solve and inv are one gesv each
        # (inv solves for the identity), cholesky one potrf, qr a geqrf and
        # an orgqr: each step exactly its LAWN 41 count
        self.check_step(db, rows[0], {'dgesv_': ('fp64', 1, gesv(4))})
        self.check_step(db, rows[1], {'dgesv_': ('fp64', 1, gesv(n))})
        self.check_step(db, rows[2], {'dpotrf_': ('fp64', 1, lawn(chol_ops(n)))})
        self.check_step(db, rows[3], {'dgeqrf_': ('fp64', 1, lawn(qr_ops(n + 100, n))),
                                      'dorgqr_': ('fp64', 1, lawn(orgqr_ops(n + 100, n, n)))})
        # lstsq is gelsd (SVD) and eigvalsh syevd: iterative, FLOPs unknown;
        # what they call through the dynamic loader counts (partial)
        Lapack.check_unknown_step(self, db, rows[4], 'dgelsd_')
        Lapack.check_unknown_step(self, db, rows[5], 'dsyevd_')
        # np.dot(x, x) on 2^20 doubles: exactly 2n
        calls = self.lib_calls(db, rows[6]['step'])
        self.assertEqual(len(calls), 1, calls)
        fn, = calls
        self.assertIn(fn, ('cblas_ddot', 'ddot_'))
        self.check_step(db, rows[6], {fn: ('fp64', 1, 2 << 20)})
        self.check_step(db, rows[7], {'zgesv_': ('fp64', 1, gesv(4, True))})
        notes = [r['text'] for r in query(db, "SELECT text FROM note WHERE kind = 'lib_flops'")]
        self.assertEqual(len(notes), 1, notes)
        self.assertIn('2 steps ' + UNKNOWN_NOTE, notes[0])

    @unittest.skipUnless(SCIPY_PY, 'no Python with scipy (python3-scipy)')
    def test_scipy_linalg(self):
        n, big = 300, 2000
        db = self.run_py(SCIPY_PY, ['scipy', '--n', str(n), '--big', str(big)])
        rows = self.steps(db)
        self.assertEqual(len(rows), 6)
        self.check_step(db, rows[0], {'dgetrf_': ('fp64', 1, lawn(lu_ops(n, n)))})
        # solve: getrf and getrs, then the condition estimate (gecon, not a
        # counted routine), whose triangular solves and level-1 calls count
        # too: about 10 big^2 here, under 1% of LAWN 41's count at this size
        calls = self.lib_calls(db, rows[1]['step'])
        lu, rs = lawn(lu_ops(big, big)), lawn(solve_ops(big, 4))
        self.assertEqual(calls.pop('dgetrf_'), ('fp64', 1, lu))
        self.assertEqual(calls.pop('dgetrs_'), ('fp64', 1, rs))
        self.assertTrue(set(calls) <= {'dtrsv_', 'ddot_', 'daxpy_', 'dasum_', 'dscal_', 'drscl_'}, calls)
        self.assertEqual(rows[1]['lib_calls_unknown'], 0)
        self.within(rows[1]['lib_flops'], lu + rs, 0.01, rows[1])
        # inv: getrf, then getri (not gesv as numpy)
        self.check_step(db, rows[2], {'dgetrf_': ('fp64', 1, lawn(lu_ops(n, n))),
                                      'dgetri_': ('fp64', 1, lawn(getri_ops(n)))})
        self.check_step(db, rows[3], {'dpotrf_': ('fp64', 1, lawn(chol_ops(n))),
                                      'dpotrs_': ('fp64', 1, lawn(potrs_ops(n, 4)))})
        # least squares by QR (LAPACK's gels), (n + 100) x n with 4 columns
        self.check_step(db, rows[4], {'dgels_': ('fp64', 1, lawn(gels_ops(n + 100, n, 4)))})
        self.check_step(db, rows[5], {'sgetrf_': ('fp32', 1, lawn(lu_ops(n, n)))})

    @unittest.skipUnless(TORCH_PY, 'no Python with torch (python3-torch)')
    def test_torch_mlp(self):
        db = self.run_py(TORCH_PY, ['torch', '--steps', '3', '--conv'])
        rows = self.steps(db)
        self.assertEqual(len(rows), 6)
        # PyTorch 1.13 on CPU computes a float32 Linear layer with one
        # sgemm_ (libblas.so.3) per product: forward addmm, and in backward
        # the weight gradient of every layer and the input gradient of every
        # layer but the first (whose input, the batch, needs none). Biases,
        # ReLU, the loss and SGD make no BLAS call.
        B, layers = 32, ((64, 128), (128, 10))
        fwd = [gemm(B, o, i) for i, o in layers]
        grad_w = [gemm(o, i, B) for i, o in layers]
        grad_x = [gemm(B, i, o) for i, o in layers[1:]]
        products = fwd + grad_w + grad_x
        for row in rows[:3]:
            calls = self.lib_calls(db, row['step'])
            self.assertEqual(set(calls), {'sgemm_'}, calls)
            self.check_step(db, row, {'sgemm_': ('fp32', len(products), sum(products))})
        # The convolutional network's training steps (lib_calls.py's
        # conv_net, batch 8): forward, the weight gradient of both
        # convolutions, the input gradient of the second one (the first
        # one's input needs none), each the forward's products; the Linear
        # layer's three GEMMs. PyTorch hands its convolutions to oneDNN's
        # primitives (its mkldnn path, the system's libdnnl.so.2), with
        # reorders to and from oneDNN's layouts (0 FLOPs).
        conv1 = conv_flops(8, 3, 16, (16, 16), (3, 3))
        conv2 = conv_flops(8, 16, 32, (conv_out(16, 3, 2, 1),) * 2, (3, 3), groups=4)
        linear = 3 * gemm(8, 10, 32 * 4 * 4)
        want = 2 * conv1 + 3 * conv2 + linear
        for row in rows[3:5]:
            calls = self.lib_calls(db, row['step'])
            self.assertEqual(row['lib_calls_unknown'], 0, calls)
            # within 1% (exact on this machine): another build could
            # compute a convolution otherwise (im2col and sgemm_ without
            # oneDNN), with the same products
            self.assertAlmostEqual(row['lib_flops'], want, delta=0.01 * want, msg=calls)
            self.assertEqual(row['flops_source'], 'library')
            if any(f.startswith('dnnl_primitive_execute:') for f in calls):
                self.assertEqual(calls[prim('convolution_forward')], ('fp32', 2, float(conv1 + conv2)))
                self.assertEqual(calls[prim('convolution_backward_weights')], ('fp32', 2, float(conv1 + conv2)))
                self.assertEqual(calls[prim('convolution_backward_data')], ('fp32', 1, float(conv2)))
                self.assertEqual(calls['sgemm_'], ('fp32', 3, float(linear)))
                self.assertEqual(row['lib_flops'], want)
        # Conv2d(3, 8, 3) forward on 4x3x16x16, without gradient
        want = conv_flops(4, 3, 8, (14, 14), (3, 3))
        self.assertAlmostEqual(rows[5]['lib_flops'], want, delta=0.01 * want)


if __name__ == '__main__':
    if not (wl('blas') or wl('blas_ref') or wl('dnnl') or wl('lapack') or wl('lapack_ref') or NUMPY_PY or
            TORCH_PY or CC):
        print('skipped: no BLAS workload was built (install libopenblas-dev, libblas-dev or libdnnl-dev: '
              'tools/install-deps), no Python with numpy or torch, and no C compiler')
        sys.exit(77)
    unittest.main(verbosity=2)
