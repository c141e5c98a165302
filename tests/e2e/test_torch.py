"""PyTorch under mfu-record (issue 11): the on-CPU classes of a real
framework. A big MLP is compute-bound, a tiny one dispatch-bound, and with
two intra-op threads the OpenMP runtime's waiting threads are "sync" (idle
capacity), never dispatch overhead; no share or efficiency above 100% is
printed without a word.

Needs a Python with torch (Debian's python3-torch, which tools/install-deps
installs): MFU_TORCH_PYTHON, else this interpreter, else /usr/bin/python3.
Without one the test exits 77 (meson's "skipped") and says why."""
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from mfutest import SRCDIR, VM_SLACK_NS, TempDirTest, python_with, query, record  # noqa: E402
from test_sampling import analysis  # noqa: E402

SCRIPT = os.path.join(SRCDIR, 'tests', 'workloads', 'torch_mlp.py')
PY = python_with('torch')


def verdict(db, name):
    return list(analysis(db, name)[0].values())[0]


class Torch(TempDirTest):
    def run_mlp(self, *args, openblas_threads=1):
        db, self.clock = self.path('run.sqlite'), self.path('clock.txt')
        args += ('--clock', self.clock)
        env = dict(os.environ, PYTHONPATH=os.environ.get('MFU_PYTHON_DIR', ''))
        # meson test sets MALLOC_PERTURB_: glibc then fills every block it
        # hands out, and a big model's tensors cost as much memset as GEMM
        # (with OpenBLAS): not the program the test means to measure
        env.pop('MALLOC_PERTURB_', None)
        # torch's threads (--threads) are the parallelism under test: a
        # multithreaded OpenBLAS under them would add its own and preempt
        # the driver thread (the verdict then says oversubscribed, rightly)
        env['OPENBLAS_NUM_THREADS'] = str(openblas_threads)
        p = record(['-o', db], [PY, SCRIPT] + list(args), env=env, timeout=240)
        self.assertEqual(p.returncode, 0, p.stderr)
        return db

    def oncpu(self, db):
        rows = analysis(db, 'breakdown')
        return {k: sum(r[k + '_ms'] or 0 for r in rows)
                for k in ('kernel', 'sync', 'dispatch', 'unclassified', 'compute')}

    def check_verdict(self, db, on_cpu_top, text):
        """The verdict names the biggest part of step time: @on_cpu_top
        (saying @text), or, on a machine busy enough, the time the driver
        thread was runnable but not running, which the scheduler's own
        count for the thread confirms: at least its run_delay between
        readings just inside the markers, at most that between readings
        just outside them."""
        rows = analysis(db, 'breakdown')
        wall = sum(r['wall_ms'] for r in rows)
        parts = {k: sum(r[k + '_ms'] or 0 for r in rows)
                 for k in ('blocked', 'runnable', 'kernel', 'sync', 'dispatch', 'unclassified', 'compute')}
        with open(self.clock) as f:
            own = [[int(x) for x in line.split()] for line in f]
        inside, around = sum(o[1] for o in own) / 1e6, sum(o[2] for o in own) / 1e6
        slack = 0.01 * wall + VM_SLACK_NS / 1e6
        self.assertGreaterEqual(parts['runnable'], inside - slack, (parts, inside, around))
        self.assertLessEqual(parts['runnable'], around + slack, (parts, inside, around))
        top = max(parts, key=parts.get)
        self.assertIn(top, (on_cpu_top, 'runnable'), parts)
        self.assertIn(text if top == on_cpu_top else 'the CPUs are oversubscribed',
                      verdict(db, 'breakdown_verdict'), parts)

    def test_big_model_is_compute_bound(self):
        if os.environ.get('MFU_SANITIZED'):
            self.skipTest("ASan's allocator, preloaded into python, maps and faults in every big tensor: "
                          "the kernel's share is ASan's")
        # big enough to be compute-bound with a multithreaded OpenBLAS too
        db = self.run_mlp('--steps', '15', '--width', '1024', '--batch', '256')
        t = self.oncpu(db)
        self.assertEqual(max(t, key=t.get), 'compute', t)
        self.assertGreater(t['compute'], 3 * t['dispatch'], t)
        self.check_verdict(db, 'compute', 'compute kernels')

    def test_tiny_model_is_dispatch_bound(self):
        if os.environ.get('MFU_SANITIZED'):
            self.skipTest("ASan's runtime, preloaded into python, changes where a tiny model's time goes")
        db = self.run_mlp('--steps', '400', '--width', '8', '--batch', '4')
        t = self.oncpu(db)
        self.assertEqual(max(t, key=t.get), 'dispatch', t)
        self.check_verdict(db, 'dispatch', 'dispatch overhead')
        # the interpreter and PyTorch's layers are dispatch, not unclassified
        self.assertGreater(t['dispatch'], 2 * t['unclassified'], t)

    def test_two_threads_wait_is_sync_not_dispatch(self):
        db = self.run_mlp('--steps', '15', '--width', '512', '--batch', '64', '--threads', '2')
        w = [r for r in analysis(db, 'waterfall') if r['step'] is None][0]
        self.assertGreater(w['sync'], 0.02, w)
        for k in ('idle', 'sync', 'kernel', 'dispatch', 'unclassified', 'compute'):
            self.assertLessEqual(w[k], 1.0, (k, w))
        self.assertAlmostEqual(sum(w[k] for k in ('idle', 'sync', 'kernel', 'dispatch', 'unclassified', 'compute')),
                               1.0, delta=0.02)
        # the OpenMP runtime is never dispatch
        disp = analysis(db, 'dispatch')
        self.assertFalse([d for d in disp if d['class'] != 'sync' and 'libgomp' in (d['dso'] or '')], disp)
        self.assertTrue([d for d in disp if d['class'] == 'sync'], disp)
        wrong = query(db, "SELECT count(*) AS n FROM sample s JOIN stack st ON st.id = s.stack "
                          "JOIN symbol sy ON sy.id = st.class_symbol WHERE sy.dso LIKE '%libgomp%' "
                          "AND s.class NOT IN ('sync', 'kernel')")
        self.assertEqual(wrong[0]['n'], 0)
        text = verdict(db, 'waterfall_verdict')
        if w['compute_efficiency'] is None:
            self.assertIn('unknown', text)
        elif w['compute_efficiency'] > 1:
            self.assertIn('impossible', text)
        self.assertNotIn('efficiency 0.0%', text)

    def test_two_threads_compute_is_in_the_steps_phases(self):
        """Issue 23, item 4: the GEMM samples of the threads that mark
        nothing (OpenBLAS's second thread under torch's intra-op threads)
        are in the forward and backward phases the main thread marks, not
        in (no phase); the headline's top dispatch function has a name."""
        db = self.run_mlp('--steps', '10', '--width', '1024', '--batch', '256', '--threads', '2', '--phases',
                          openblas_threads=2)
        disp = analysis(db, 'dispatch')
        comp = [d for d in disp if d['class'] == 'compute']
        total = sum(d['samples'] for d in comp)
        outside = sum(d['samples'] for d in comp if d['phase'] == '(no phase)')
        # 10 steps of 6 x 256 x 1.06M FLOPs: about 200 compute samples
        self.assertGreater(total, 50, comp)
        self.assertLess(outside, 0.1 * total, comp)
        # OpenBLAS's own thread took part of every GEMM, in both phases
        for phase in ('forward', 'backward'):
            self.assertGreater(sum(d['via_process'] for d in comp if d['phase'] == phase), 0, (phase, comp))
        text = verdict(db, 'dispatch_verdict')
        m = re.match(r'The top dispatch function is (.*)\(\) in phase (\S+):', text)
        self.assertTrue(m, text)
        # the top of the phases the program marked (start-up is (no
        # phase)), as the dispatch section ranks them
        top = max((d for d in disp if d['class'] == 'dispatch' and d['phase'] != '(no phase)'),
                  key=lambda d: d['est_ms'])
        self.assertEqual((m.group(1), m.group(2)), (top['symbol'], top['phase']), text)
        # never [unknown]: a function's name, or where no symbol names it
        # (libtorch_cpu's local functions: Debian ships no debug symbols for
        # it) its library and offset, libtorch_cpu.so.1.13.0+0x4694fa0
        self.assertNotRegex(m.group(1), r'^\[', text)
        if '+0x' in m.group(1):
            self.assertRegex(m.group(1), r'^[^/\s]+\.so[.0-9]*\+0x[0-9a-f]+$', text)



if __name__ == '__main__':
    if PY is None:
        print('SKIP: no Python with torch (install python3-torch, or set MFU_TORCH_PYTHON)', file=sys.stderr)
        sys.exit(77)
    unittest.main()
