"""The results of each step in the program itself (issue 28 items 1-2).

Under mfu-record, the MFU a PyTorch loop reads from `with mfu.step(
flops="count") as s` (s.mfu) is the report's per-step MFU of the same step
(within 1e-6 relative: they are the same doubles). Without the recorder
(mfu.enable(), the in-process mode) the figures are computed from the same
peak (the machine profile's measured figure, the one mfu-record --peak
measured takes), the same FLOPs, and a wall time that lies between the
loop's own timings inside and outside the with block. Per-step MFU of two
runs on a shared 2-CPU VM differ by more than 5% from step to step (the
steps take 1-6 ms), so the two modes are compared on what is deterministic:
the peak, the FLOPs per step, the formula, and wall times bracketed by the
program's own clock; no timing bound.

Also: mfu.TrackedOptimizer's phases and results, mfu.MFUCallback driven
as transformers' Trainer calls its callbacks, and mfu.Every.

Needs torch (MFU_TORCH_PYTHON, this interpreter, or /usr/bin/python3) for
the PyTorch tests; they are skipped without it."""
import json
import os
import sqlite3
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from mfutest import SRCDIR, TempDirTest, prog, python_with, query, record  # noqa: E402

SCRIPT = os.path.join(SRCDIR, 'tests', 'workloads', 'torch_results.py')
PY = python_with('torch')


def lines(out):
    return [json.loads(l) for l in out.splitlines() if l.startswith('{')]


def env_py(**kw):
    env = dict(os.environ, PYTHONPATH=os.environ.get('MFU_PYTHON_DIR', ''),
               MFU_LIBRARY=os.environ.get('MFU_LIBMFU', ''))
    env.pop('MALLOC_PERTURB_', None)
    env['OPENBLAS_NUM_THREADS'] = '1'
    env.update(kw)
    return env


def report_steps(db):
    p = subprocess.run([prog('MFU_REPORT'), '--db', db, 'steps', '--format', 'json'],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.returncode == 0, p.stderr
    return {r['step']: r for r in json.loads(p.stdout)}


class Results(TempDirTest):
    def calibrate(self):
        """A machine profile of this machine in a cache of its own (its
        figures taken as undisturbed, as test_record.py does)."""
        cache = self.path('cache')
        env = dict(os.environ, XDG_CACHE_HOME=cache)
        p = subprocess.run([prog('MFU_CALIBRATE'), '--quick'], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        for name in os.listdir(os.path.join(cache, 'mfu')):
            con = sqlite3.connect(os.path.join(cache, 'mfu', name))
            with con:
                con.execute('UPDATE measurement SET disturbed = 0, cpu_share = 1')
            con.close()
        return cache

    @unittest.skipIf(PY is None, 'no Python with torch')
    def test_recorded_mfu_is_the_reports(self):
        db = self.path('run.sqlite')
        p = record(['-o', db], [PY, SCRIPT, '--steps', '10'], env=env_py(), timeout=240)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = lines(p.stdout)
        self.assertEqual(got[-1]['last_step'], 9)
        steps = report_steps(db)
        run = query(db, 'SELECT peak_flops, peak_flops_source, dtype FROM run')[0]
        self.assertEqual(len(got) - 1, 10)
        for r in got[:-1]:
            rep = steps[r['step']]
            self.assertEqual(r['measured_by'], 'recorder')
            self.assertEqual(r['flops_source'], 'counted')  # the report says declared
            self.assertEqual(rep['flops_source'], 'declared')
            self.assertEqual(r['flops'], rep['model_flops'])
            self.assertEqual(r['peak_flops'], run['peak_flops'])
            self.assertEqual(r['peak_source'], run['peak_flops_source'])
            self.assertEqual(r['dtype'], run['dtype'])
            self.assertIsNotNone(r['mfu'])
            self.assertLessEqual(abs(r['mfu'] - rep['mfu']), 1e-6 * rep['mfu'], (r, rep))
            self.assertLessEqual(abs(r['wall_ms'] - rep['wall_ms']), 1e-9 * rep['wall_ms'])
            self.assertEqual(r['lib_flops'], rep['lib_flops'])
            self.assertEqual(repr(r['mfu']), r['mfu_repr'])

    @unittest.skipIf(PY is None, 'no Python with torch')
    def test_inprocess_against_recorded(self):
        cache = self.calibrate()
        db = self.path('run.sqlite')
        p = record(['-o', db, '--peak', 'measured'], [PY, SCRIPT, '--steps', '10'],
                   env=env_py(XDG_CACHE_HOME=cache), timeout=240)
        self.assertEqual(p.returncode, 0, p.stderr)
        rec = lines(p.stdout)[:-1]
        run = query(db, 'SELECT peak_flops FROM run')[0]
        p = subprocess.run([PY, SCRIPT, '--steps', '10', '--inprocess'], env=env_py(XDG_CACHE_HOME=cache),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=240)
        self.assertEqual(p.returncode, 0, p.stderr)
        inp = lines(p.stdout)[:-1]
        # the peak and its source, said once
        said = [l for l in p.stderr.splitlines() if l.startswith('mfu: in-process mode:')]
        self.assertEqual(len(said), 1, p.stderr)
        self.assertIn('measured', said[0])
        self.assertEqual(len(inp), 10)
        for a, b in zip(inp, rec):
            self.assertEqual(a['measured_by'], 'in-process')
            self.assertEqual(a['step'], b['step'])
            self.assertEqual(a['peak_flops'], run['peak_flops'])  # the profile's, as the recorder took it
            self.assertEqual(a['flops'], b['flops'])
            self.assertEqual(a['flops_source'], 'counted')
            self.assertIsNone(a['lib_flops'])  # counted under mfu-record only
            wall_ns = a['wall_ms'] * 1e6
            self.assertLessEqual(a['inner_ns'], wall_ns + 1)
            self.assertLessEqual(wall_ns, a['outer_ns'] + 1)
            self.assertAlmostEqual(a['mfu'], a['flops'] / (a['wall_ms'] / 1e3 * a['peak_flops']), delta=1e-12)

    def test_inprocess_without_a_profile_says_how(self):
        code = ('import mfu\nmfu.enable()\n'
                'with mfu.step(flops=1e6) as s:\n    pass\n'
                'r = s.result\nprint(r.mfu, r.flops, r.flops_source, r.peak_flops, r.measured_by)\n'
                'print(r.why)\n')
        p = subprocess.run([sys.executable, '-c', code], env=env_py(XDG_CACHE_HOME=self.path('empty')),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = p.stdout.splitlines()
        self.assertEqual(out[0], 'None 1000000.0 declared None in-process')
        self.assertIn('mfu-calibrate', out[1])
        self.assertIn('no machine profile at %s' % self.path('empty'), p.stderr)
        self.assertIn('mfu-calibrate', p.stderr)

    def test_not_measured_by_default(self):
        code = ('import mfu\nwith mfu.step(flops=1e6) as s:\n    pass\n'
                'print(s.result, s.mfu, mfu.last_step(), mfu.recording())\n')
        p = subprocess.run([sys.executable, '-c', code], env=env_py(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), 'None None None False')
        self.assertEqual(p.stderr, '')

    def test_env_inprocess_with_a_given_peak(self):
        code = ('import mfu, time\nwith mfu.step(flops=1e6, bytes=2e6) as s:\n    time.sleep(0.01)\n'
                'r = s.result\nclose = lambda a, b: abs(a - b) <= 1e-12 * abs(b)\n'
                'print(r.peak_flops, r.peak_bw, close(r.mfu, 1e6 / (r.wall_ms / 1e3 * 1e9)), '
                'close(r.mbu, 2e6 / (r.wall_ms / 1e3 * 1e10)), r.wall_ms >= 10)\n')
        p = subprocess.run([sys.executable, '-c', code],
                           env=env_py(MFU_INPROCESS='1', MFU_PEAK_FLOPS='1e9', MFU_PEAK_BW='1e10'),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), '1000000000.0 10000000000.0 True True True')
        self.assertEqual(p.stderr.count('MFU against 1e+09'), 1, p.stderr)

    def test_profile_reader(self):
        # a profile of this host and CPU set, made by hand (format 3)
        import socket
        path = self.path('profile.sqlite')
        sys.path.insert(0, os.environ.get('MFU_PYTHON_DIR', ''))
        import mfu
        cpus = mfu._cpu_list()
        con = sqlite3.connect(path)
        con.executescript(
            'PRAGMA user_version = 3;'
            'CREATE TABLE machine (id INTEGER PRIMARY KEY, host TEXT, cpu_name TEXT, allowed_cpus TEXT);'
            'CREATE TABLE measurement (kind TEXT, dtype TEXT, scope TEXT, kernel TEXT, value REAL, best INTEGER,'
            ' detail TEXT, measured_unix_s INTEGER, cpus TEXT, disturbed INTEGER);')
        rows = [('flops', 'fp32', 'all', 'a', 3e11, 1, 'measured: a', 0, cpus, 1),   # disturbed: never
                ('flops', 'fp32', 'all', 'b', 2e11, 1, 'measured: b', 0, cpus, 0),
                ('flops', 'fp32', 'all', 'c', 2.5e11, 0, 'measured: c', 0, cpus, 0),  # the fastest: taken
                ('flops', 'fp32', 'all', 'd', 8e11, 1, 'measured: d', 0, cpus + ',99', 0),  # another set
                ('flops', 'fp32', 'core', 'e', 7e11, 1, 'measured: e', 0, cpus, 0),
                ('flops', 'fp64', 'all', 'f', 1e11, 1, 'measured: f', 0, cpus, 0),
                ('bandwidth', None, 'all', 'triad', 5e10, 1, 'measured: triad', 0, cpus, 0),
                ('bandwidth', None, 'all', 'copy', 6e10, 0, 'measured: copy', 0, cpus, 0)]  # not the triad
        con.execute('INSERT INTO machine VALUES (1, ?, ?, ?)', (socket.gethostname(), mfu._cpu_name(), cpus))
        con.executemany('INSERT INTO measurement VALUES (?,?,?,?,?,?,?,?,?,?)', rows)
        con.commit()
        pk = mfu.read_profile('fp32', path)
        self.assertEqual((pk.flops, pk.bw, pk.why), (2.5e11, 5e10, None))
        self.assertTrue(pk.flops_source.startswith('measured (%s, 1970-01-01): c' % path), pk.flops_source)
        self.assertEqual(mfu.read_profile('fp64', path).flops, 1e11)
        pk = mfu.read_profile('bf16', path)
        self.assertIsNone(pk.flops)
        self.assertIn('no undisturbed bf16 FLOP/s', pk.why)
        con.execute("UPDATE machine SET host = 'elsewhere'")
        con.commit()
        con.close()
        pk = mfu.read_profile('fp32', path)
        self.assertIsNone(pk.flops)
        self.assertIn('is for host elsewhere', pk.why)


class Integrations(TempDirTest):
    @unittest.skipIf(PY is None, 'no Python with torch')
    def test_tracked_optimizer_phases_and_results(self):
        db = self.path('run.sqlite')
        p = record(['-o', db], [PY, SCRIPT, '--steps', '6', '--optimizer'], env=env_py(), timeout=240)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = lines(p.stdout)[:-1]
        steps = report_steps(db)
        self.assertEqual(len(steps), 6)
        for r in got:
            self.assertLessEqual(abs(r['mfu'] - steps[r['step']]['mfu']), 1e-6 * steps[r['step']]['mfu'])
            self.assertEqual(r['flops_source'], 'counted')
        phases = query(db, 'SELECT step, name FROM phase ORDER BY begin_ns')
        for s in range(6):
            names = [ph['name'] for ph in phases if ph['step'] == s]
            # zero_grad, forward, backward (from the output's gradient), step
            self.assertEqual(names, ['optimizer', 'forward', 'backward', 'optimizer'], (s, names))

    def test_trainer_callback_driven_like_the_trainer(self):
        # transformers' Trainer calls every callback in its list with
        # (args, state, control, model=..., optimizer=..., ...) and, at a
        # logging step, on_log(args, state, control, logs=logs) with one
        # dict that each callback may change and the next one sees; the
        # reporting callbacks (WandB...) come first in that list unless
        # the callback is moved to the front (install()).
        code = r'''
import time, mfu

class Control:
    should_log = False

class State:
    global_step = 0

class Reporter:
    """A report_to callback: records what it is given."""
    def __init__(self): self.seen = []
    def on_log(self, args, state, control, logs=None, **kw): self.seen.append(dict(logs))

class Handler:
    def __init__(self, callbacks): self.callbacks = list(callbacks)
    def call(self, event, args, state, control, **kw):
        for cb in self.callbacks:
            f = getattr(cb, event, None)
            if f is None:
                continue
            r = f(args, state, control, model=None, optimizer=None, lr_scheduler=None,
                  train_dataloader=None, eval_dataloader=None, **kw)
            if r is not None:
                control = r
        return control

class Trainer:
    def __init__(self, callbacks):
        self.reporter = Reporter()
        self.callback_handler = Handler([self.reporter] + callbacks)

mfu.enable(peak_flops=1e9, peak_bw=1e10, quiet=True)
cb = mfu.MFUCallback(flops=2e6, bytes=4e6, prefix="throughput/")
t = Trainer([cb])
cb.install(t)
assert t.callback_handler.callbacks[0] is cb
args, state, control = object(), State(), Control()
h = t.callback_handler
walls = []
for step in range(6):
    control = h.call("on_step_begin", args, state, control)
    time.sleep(0.005)
    control = h.call("on_pre_optimizer_step", args, state, control)
    control = h.call("on_optimizer_step", args, state, control)
    control = h.call("on_step_end", args, state, control)
    walls.append(mfu.last_step().wall_ms)
    state.global_step += 1
    if state.global_step % 3 == 0:
        logs = {"loss": 1.0, "learning_rate": 0.1}
        control = h.call("on_log", args, state, control, logs=logs)
pf, pb = mfu.last_step().peak_flops, mfu.last_step().peak_bw  # mfu-record's, when recorded
for logs, w in zip(t.reporter.seen, (walls[:3], walls[3:])):
    secs = sum(w) / 1e3
    assert abs(logs["throughput/mfu"] - 3 * 2e6 / (secs * pf)) < 1e-12, logs
    assert abs(logs["throughput/mbu"] - 3 * 4e6 / (secs * pb)) < 1e-12, logs
    assert abs(logs["throughput/step_ms"] - sum(w) / 3) < 1e-9, logs
    assert logs["loss"] == 1.0
print(len(t.reporter.seen), sorted(t.reporter.seen[0]))
'''
        env = env_py()
        p = subprocess.run([sys.executable, '-c', code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), "2 ['learning_rate', 'loss', 'throughput/flops_per_s', "
                         "'throughput/mbu', 'throughput/mfu', 'throughput/step_ms']")
        # the same driver, recorded: the optimizer phases are in the run
        db = self.path('run.sqlite')
        p = record(['-o', db], [sys.executable, '-c', code.replace('mfu.enable(', 'dict(')], env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(query(db, "SELECT * FROM phase WHERE name = 'optimizer'")), 6)
        self.assertEqual(len(query(db, 'SELECT * FROM step WHERE complete = 1')), 6)

    def test_every(self):
        code = r'''
import mfu
mfu.enable(peak_flops=1e9, quiet=True)
out = []
hook = mfu.Every(2, log=out.append, prefix="t/")
for i in range(5):
    with mfu.step(flops=1e6) as s:
        pass
    hook(s.result)
with mfu.step(bytes=10):
    pass
hook()  # last_step(): no FLOPs known in the window, so no mfu (never 0)
print(len(out), [sorted(d) for d in out], [d["step"] for d in out])
'''
        p = subprocess.run([sys.executable, '-c', code], env=env_py(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(),
                         "3 [['step', 't/flops_per_s', 't/mfu', 't/step_ms'], "
                         "['step', 't/flops_per_s', 't/mfu', 't/step_ms'], ['step', 't/step_ms']] [1, 3, 5]")


if __name__ == '__main__':
    unittest.main()
