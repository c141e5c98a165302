"""Symbols of programs as they come (issue 23, item 5). Debian strips its
python3, numpy, OpenBLAS, libgomp and PyTorch down to .dynsym, so their
internal functions have no name; mfu-record names them after their bounds
in .eh_frame ("libgomp.so.1.0.0+0x1f5e0", docs/symbols.md).

What is checked holds whatever the CPU and the timing: every user-mode
sample whose address lies in a function that .eh_frame describes has a
name, and every such name agrees with binutils' own reading of .eh_frame
(readelf --debug-dump=frames: the function's first address). The
workloads need numpy, or torch: without them the test is skipped
(meson's 77) and says why."""
import bisect
import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from mfutest import SRCDIR, TempDirTest, python_with, query, record  # noqa: E402

NUMPY_PY = python_with('numpy')
TORCH_PY = python_with('torch')

# matmul through OpenBLAS's threads, then numpy's own loops (tanh, exp,
# sort): about a second of each on any machine
NUMPY_WORK = r'''
import time
import numpy as np
rng = np.random.default_rng(0)
a = rng.standard_normal((256, 256))
b = rng.standard_normal((256, 256))
for part in ('blas', 'loops'):
    t0 = time.monotonic()
    while time.monotonic() - t0 < 0.7:
        if part == 'blas':
            c = a @ b
        else:
            c = np.tanh(a * 0.01) + np.exp(-np.abs(b) * 0.001)
            np.sort(c, axis=0)
'''


def readelf(args, path):
    p = subprocess.run(['readelf'] + args + [path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       text=True)
    return p.stdout


class Elf:
    """A file's PT_LOAD segments and FDEs, as binutils reads them."""

    def __init__(self, path):
        self.loads = []
        for line in readelf(['-lW'], path).splitlines():
            f = line.split()
            if f and f[0] == 'LOAD':
                self.loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
        self.fdes = sorted((int(a, 16), int(b, 16)) for a, b in
                           re.findall(r'FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)',
                                      readelf(['--debug-dump=frames'], path)))
        self.starts = [a for a, _ in self.fdes]

    def vaddr(self, off):
        for o, v, size in self.loads:
            if o <= off < o + size:
                return off - o + v
        return None

    def fde(self, vaddr):
        i = bisect.bisect_right(self.starts, vaddr) - 1
        if i >= 0 and vaddr < self.fdes[i][1]:
            return self.fdes[i]
        return None


def leaf_samples(db):
    """User-mode samples' leaves (exact IPs, not return addresses): one row
    per distinct (pid, ip) with its mapping, symbol and sample count."""
    return query(db, """
        SELECT st.pid, f.ip, sy.dso, sy.name, sy.class, count(*) AS n,
               (SELECT m.start FROM mapping m WHERE m.pid = st.pid AND m.start <= f.ip AND f.ip < m.start + m.len
                ORDER BY m.time_ns DESC LIMIT 1) AS mstart,
               (SELECT m.pgoff FROM mapping m WHERE m.pid = st.pid AND m.start <= f.ip AND f.ip < m.start + m.len
                ORDER BY m.time_ns DESC LIMIT 1) AS pgoff
        FROM sample s JOIN stack st ON st.id = s.stack
        JOIN stack_frame f ON f.stack = st.id AND f.depth = 0
        JOIN symbol sy ON sy.id = f.symbol
        WHERE s.kind = 0 AND NOT s.kernel AND sy.kind = 'user'
        GROUP BY st.pid, f.ip""")


class Symbols(TempDirTest):
    def check_names(self, db):
        """Every sampled address inside an FDE has a name; a name made from
        .eh_frame is the DSO's file name and the start of the FDE readelf
        finds there. Returns {dso base name: {name: samples}}."""
        elves, names, checked = {}, {}, 0
        for r in leaf_samples(db):
            dso = r['dso']
            if not dso.startswith('/') or r['mstart'] is None or not os.path.isfile(dso):
                continue
            if dso not in elves:
                elves[dso] = Elf(dso)
            e = elves[dso]
            vaddr = e.vaddr(r['ip'] - r['mstart'] + r['pgoff'])
            fde = e.fde(vaddr) if vaddr is not None else None
            base = os.path.basename(dso)
            names.setdefault(base, {})
            names[base][r['name']] = names[base].get(r['name'], 0) + r['n']
            if fde is None:
                continue
            checked += 1
            self.assertIsNotNone(r['name'], '%s+%#x is in the FDE %#x..%#x but has no name' %
                                 (dso, vaddr, fde[0], fde[1]))
            m = re.fullmatch(r'(.+)\+0x([0-9a-f]+)', r['name'])
            if m:
                self.assertEqual(m.group(1), base, r)
                self.assertEqual(int(m.group(2), 16), fde[0],
                                 '%s: %s, but readelf puts %#x in the FDE %#x..%#x' %
                                 (dso, r['name'], vaddr, fde[0], fde[1]))
        self.assertGreater(checked, 0, 'no user-mode sample in a function with an FDE')
        return names

    @unittest.skipUnless(NUMPY_PY, 'no Python with numpy (python3-numpy)')
    def test_numpy_internal_functions_are_named(self):
        db, script = self.path('run.sqlite'), self.path('work.py')
        with open(script, 'w') as f:
            f.write(NUMPY_WORK)
        env = dict(os.environ, OPENBLAS_NUM_THREADS='2')
        env.pop('MALLOC_PERTURB_', None)
        p = record(['-o', db], [NUMPY_PY, script], env=env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        names = self.check_names(db)
        # numpy's loops are static functions: named after their bounds, and
        # two of them apart (tanh's, exp's, sort's are different functions)
        umath = [n for base, ns in names.items() if base.startswith('_multiarray_umath')
                 for n in ns if n and '+0x' in n]
        self.assertGreaterEqual(len(set(umath)), 2, names)
        # OpenBLAS's functions without a symbol are its threading layer:
        # sync, never compute (code_class.c)
        for r in query(db, "SELECT name, class FROM symbol WHERE dso LIKE '%blas%' AND name LIKE '%+0x%'"):
            self.assertEqual(r['class'], 'sync', r)

    @unittest.skipUnless(TORCH_PY, 'no Python with torch (python3-torch)')
    def test_torch_two_threads_gomp_is_named(self):
        db = self.path('run.sqlite')
        env = dict(os.environ, PYTHONPATH=os.environ.get('MFU_PYTHON_DIR', ''), OPENBLAS_NUM_THREADS='1')
        env.pop('MALLOC_PERTURB_', None)
        p = record(['-o', db], [TORCH_PY, os.path.join(SRCDIR, 'tests', 'workloads', 'torch_mlp.py'),
                                '--steps', '10', '--width', '512', '--batch', '64', '--threads', '2'],
                   env=env, timeout=240)
        self.assertEqual(p.returncode, 0, p.stderr)
        names = self.check_names(db)
        # the OpenMP runtime's waiting thread: its internal functions by
        # their bounds, and still sync
        gomp = {n: c for base, ns in names.items() if base.startswith('libgomp') for n, c in ns.items()}
        self.assertTrue(gomp, names)
        self.assertNotIn(None, gomp)
        rows = query(db, "SELECT DISTINCT class FROM symbol WHERE dso LIKE '%/libgomp%' AND kind = 'user'")
        self.assertEqual([r['class'] for r in rows], ['sync'])


if __name__ == '__main__':
    if NUMPY_PY is None and TORCH_PY is None:
        print('SKIP: no Python with numpy or torch (install python3-numpy, python3-torch)', file=sys.stderr)
        sys.exit(77)
    unittest.main()
