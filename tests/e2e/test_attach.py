#!/usr/bin/env python3
"""Programs as they come (issue 23, items 2 and 3).

Attach: mfu-record -p on a running program that uses libmfu (C, and Python
through libmfu) switches its markers on: the steps of the attached window
are recorded, each inside the program's own reading of it and within 1% of
its length, their counts interpolated; detaching switches them off and the
program runs on to its normal end; a second recorder, a killed one, a
forked child, a re-attach; and when nothing can be recorded, the note says
the real reason.

Launchers: a launcher between mfu-record and the program that closed the
recorder's descriptors (mpirun, `sh -c 'exec N>&-; ...'`) or reused their
numbers: the program gets them back over the recorder's socket and its
steps are recorded, and the recording says what the launcher did.
"""
import os
import shutil
import struct
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from mfutest import (SANITIZED, SRCDIR, TempDirTest, as_nobody, nobody, nobody_reachable, prog,  # noqa: E402
                     query, record)

ROOT = os.geteuid() == 0
PY_STEPS = os.path.join(SRCDIR, 'tests', 'workloads', 'py_steps.py')
MISUSE = ('step_end_without_begin', 'phase_end_without_begin', 'model_outside_step', 'model_outside_phase',
          'phase_end_mismatch', 'counter_read_failed')


def py_env(**kw):
    env = dict(os.environ, MFU_LIBRARY=prog('MFU_LIBMFU'),
               PYTHONPATH=os.environ.get('MFU_PYTHON_DIR', os.path.join(SRCDIR, 'src', 'python')))
    env.update(kw)
    return env


def attach_fd(pid):
    """The fd of @pid's attach page, or None."""
    try:
        for fd in os.listdir('/proc/%d/fd' % pid):
            try:
                if os.readlink('/proc/%d/fd/%s' % (pid, fd)) == '/memfd:mfu-attach (deleted)':
                    return int(fd)
            except OSError:
                pass
    except OSError:
        pass
    return None


def page(pid):
    """The attach page's recorder and libmfu words (attach_page.h). A
    program just started may not have made its page yet (libmfu's
    constructor, on a busy machine): waited for, up to 60 s."""
    fd, deadline = attach_fd(pid), time.monotonic() + 60
    while fd is None and time.monotonic() < deadline:
        time.sleep(0.02)
        fd = attach_fd(pid)
    if fd is None:
        raise AssertionError('process %d has no attach page' % pid)
    with open('/proc/%d/fd/%d' % (pid, fd), 'rb') as f:
        d = f.read(256)
    on, gen, owner = struct.unpack_from('<IIi', d, 128)
    accepted, refused = struct.unpack_from('<II', d, 192)
    return {'magic': d[:8], 'pid': struct.unpack_from('<i', d, 32)[0], 'on': on, 'gen': gen, 'owner': owner,
            'accepted': accepted, 'refused': refused}


def read_own(path):
    """The program's own clock: (t_before_begin, t_after_end, delay_outside)
    per step, the last how long its thread waited for a CPU between those
    readings and the markers (steps.c's and py_steps.py's --clock)."""
    rows = []
    with open(path) as f:
        for line in f:
            v = [int(x) for x in line.split()]
            rows.append((v[1], v[2], v[5] if len(v) >= 7 else v[3] if len(v) == 4 else 0))
    return sorted(rows)


class AttachTest(TempDirTest):
    def start(self, cmd, env=None, user=None):
        """Start @cmd and wait until its libmfu made its attach page."""
        if user:
            cmd = as_nobody(cmd, user)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.addCleanup(self.reap, proc)
        deadline = time.monotonic() + 30
        while attach_fd(proc.pid) is None:
            self.assertIsNone(proc.poll(), 'the program ended before its libmfu made its page')
            self.assertLess(time.monotonic(), deadline, 'no attach page in 30 s')
            time.sleep(0.02)
        return proc

    @staticmethod
    def reap(proc):
        if proc.poll() is None:
            proc.kill()
        proc.communicate()

    def attach(self, pid, seconds, args=(), user=None, db=None, recorder=None):
        db = db or self.path('a.sqlite')
        cmd = [recorder or prog('MFU_RECORD'), '-o', db, '-p', str(pid), '--duration', str(seconds)] + list(args)
        if user:
            cmd = as_nobody(cmd, user)
        env = dict(os.environ, HOME=self.dir) if user else None
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=180, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p, db

    def check_steps(self, db, own, pid):
        """Every complete step of @pid lies inside the program's own reading
        of it, within 1% of its length for nearly all, but for the time the
        program's thread waited for a CPU between a reading and its marker
        (a busy machine's, not the recorder's; a VM's host stall, which
        the guest does not see, is allowed the VM's slack); counts
        interpolated."""
        steps = query(db, 'SELECT * FROM step WHERE complete = 1 ORDER BY begin_ns')
        self.assertTrue(steps)
        within = 0
        for s in steps:
            self.assertEqual(s['pid'], pid)
            row = next((r for r in own if r[0] <= s['begin_ns'] <= r[1]), None)
            self.assertIsNotNone(row, 'step %d is inside none of the program\'s own steps' % s['step'])
            self.assertLessEqual(s['end_ns'], row[1], s)
            own_wall = row[1] - row[0]
            self.assertLessEqual(s['wall_ns'], own_wall)
            within += own_wall - s['wall_ns'] - row[2] <= 0.01 * own_wall
            if not SANITIZED:
                self.assertLessEqual(own_wall - s['wall_ns'], max(0.1 * own_wall, 2_000_000) + row[2], (s, row))
            self.assertEqual(s['counts'], 'interpolated')
            self.assertIsNotNone(s['cpu_ns'])
        self.assertGreaterEqual(within, 0.9 * len(steps), '%d of %d steps within 1%%' % (within, len(steps)))
        kinds = {r['kind'] for r in query(db, 'SELECT kind FROM anomaly')}
        self.assertFalse(kinds & set(MISUSE), kinds)
        return steps


class AttachMarked(AttachTest):
    def check_attached_run(self, proc, rec, db, clock, seconds, step_ms, out_text):
        self.assertIn('attached to process %d (1 thread), its libmfu markers switched on' % proc.pid, rec.stderr)
        self.assertIsNone(proc.poll(), 'the program must still run after the recorder left')
        self.assertEqual(page(proc.pid)['on'], 0, 'detaching switches the markers off')
        self.assertEqual(page(proc.pid)['owner'], 0)
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, err)
        if out_text:
            self.assertIn(out_text, out)
        steps = self.check_steps(db, read_own(clock), proc.pid)
        expect = seconds * 1000 / step_ms
        self.assertGreater(len(steps), 0.5 * expect)
        self.assertLessEqual(len(steps), expect + 1)
        # the phases of those steps, each inside its step
        phases = query(db, "SELECT p.begin_ns, p.end_ns, s.begin_ns AS sb, s.end_ns AS se FROM phase p "
                           "JOIN step s ON s.step = p.step WHERE p.complete = 1 AND s.complete = 1 AND "
                           "p.name = 'compute'")
        self.assertGreaterEqual(len(phases), len(steps) - 1)
        for ph in phases:
            self.assertTrue(ph['sb'] <= ph['begin_ns'] <= ph['end_ns'] <= ph['se'], ph)
        run = query(db, 'SELECT mode, state FROM run')[0]
        self.assertEqual((run['mode'], run['state']), ('attach', 'detached'))
        # the whole run's CPU time is the one thread's between attach and
        # detach: never more than that wall time (the counters count from
        # the attach, before the run's start, and on after the detach)
        rf = query(db, 'SELECT wall_ns, cpu_ns FROM run_flops', views=True)[0]
        self.assertGreater(rf['cpu_ns'], 0.3 * rf['wall_ns'], rf)
        self.assertLessEqual(rf['cpu_ns'], rf['wall_ns'], rf)
        notes = {r['kind']: r['text'] for r in query(db, 'SELECT kind, text FROM note')}
        self.assertIn('interpolated from the recorder', notes['attach'])
        self.assertNotIn('no_steps', notes)

    def test_c_program_for_two_seconds(self):
        clock = self.path('clock.txt')
        proc = self.start([prog('MFU_WL_STEPS'), '--steps', '800', '--busy-us', '10000', '--phases',
                           '--clock', clock])
        rec, db = self.attach(proc.pid, 2)
        self.check_attached_run(proc, rec, db, clock, 2, 10, None)

    def test_python_program_for_two_seconds(self):
        clock = self.path('clock.txt')
        proc = self.start([sys.executable, PY_STEPS, '--steps', '800', '--busy-ms', '10', '--phases',
                           '--clock', clock], env=py_env())
        rec, db = self.attach(proc.pid, 2)
        self.check_attached_run(proc, rec, db, clock, 2, 10, 'py_steps: done 800')

    def test_reattach(self):
        clock = self.path('clock.txt')
        proc = self.start([prog('MFU_WL_STEPS'), '--steps', '600', '--busy-us', '5000', '--clock', clock])
        _, db1 = self.attach(proc.pid, 0.5, db=self.path('1.sqlite'))
        _, db2 = self.attach(proc.pid, 0.5, db=self.path('2.sqlite'))
        pg = page(proc.pid)
        self.assertEqual((pg['on'], pg['owner'], pg['gen'], pg['accepted']), (0, 0, 2, 2))
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, err)
        own = read_own(clock)
        a, b = self.check_steps(db1, own, proc.pid), self.check_steps(db2, own, proc.pid)
        self.assertLess(a[-1]['end_ns'], b[0]['begin_ns'])

    def test_own_process_without_privilege(self):
        """A user joins their own process: the page is reached through
        /proc/PID/fd, which perf's rules for the same user allow."""
        cp = nobody_reachable(self, [prog('MFU_RECORD'), prog('MFU_WL_STEPS')])
        os.chmod(self.dir, 0o777)
        clock = self.path('clock.txt')
        proc = self.start([cp[prog('MFU_WL_STEPS')], '--steps', '400', '--busy-us', '10000', '--clock', clock],
                          user=nobody())
        rec, db = self.attach(proc.pid, 1, user=nobody(), recorder=cp[prog('MFU_RECORD')])
        self.assertIn('its libmfu markers switched on', rec.stderr)
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, err)
        self.assertGreater(len(self.check_steps(db, read_own(clock), proc.pid)), 40)

    def test_forked_child_keeps_running_unrecorded(self):
        """A child the attached process forks makes a page of its own: it is
        not recorded (the recorder joined one process) and runs normally;
        the parent's steps go on being recorded across the fork."""
        clock = self.path('clock.txt')
        proc = self.start([sys.executable, PY_STEPS, '--steps', '300', '--busy-ms', '10', '--fork',
                           '--clock', clock], env=py_env())
        rec, db = self.attach(proc.pid, 2.5)
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, err)
        self.assertIn('py_steps: done 300', out)
        steps = self.check_steps(db, read_own(clock), proc.pid)
        self.assertEqual({s['pid'] for s in query(db, 'SELECT DISTINCT pid FROM step')}, {proc.pid})
        self.assertGreater(len(steps), 60)

    def test_recorder_killed_then_another_joins(self):
        """A recorder killed while attached cannot switch the markers off:
        once its ring is full the program sees it is gone and does it
        itself, runs on at full speed, and a later recorder takes the page.
        Each step spins 1 us of CPU: the program outlives the second
        recorder and the page check after it however fast the machine (empty
        steps ended within milliseconds of the markers going off, and the
        check found no page, in .ci/run on 2026-11-28)."""
        proc = self.start([prog('MFU_WL_STEPS'), '--steps', '5000000', '--busy-us', '1'])
        rec = subprocess.Popen([prog('MFU_RECORD'), '-q', '-o', self.path('k.sqlite'), '-p', str(proc.pid)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while page(proc.pid)['accepted'] != 1:
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.02)
        rec.kill()
        rec.communicate()
        deadline = time.monotonic() + 10
        while page(proc.pid)['on']:
            self.assertLess(time.monotonic(), deadline, 'the markers of a killed recorder stay on')
            time.sleep(0.05)
        _, db = self.attach(proc.pid, 0.5, args=['-q'])
        self.assertGreater(query(db, 'SELECT count(*) AS n FROM step')[0]['n'], 0)
        self.assertEqual(page(proc.pid)['gen'], 2)
        proc.communicate(timeout=300)
        self.assertEqual(proc.returncode, 0)

    def test_second_recorder_gets_no_markers(self):
        proc = self.start([prog('MFU_WL_STEPS'), '--steps', '600', '--busy-us', '5000'])
        first = subprocess.Popen([prog('MFU_RECORD'), '-q', '-o', self.path('1.sqlite'), '-p', str(proc.pid),
                                  '--duration', '3'], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while page(proc.pid)['accepted'] != 1:
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.02)
        _, db2 = self.attach(proc.pid, 0.3, db=self.path('2.sqlite'))
        first.communicate(timeout=120)
        self.assertEqual(first.returncode, 0)
        self.assertGreater(query(self.path('1.sqlite'), 'SELECT count(*) AS n FROM step')[0]['n'], 0)
        self.assertEqual(query(db2, 'SELECT count(*) AS n FROM step')[0]['n'], 0)
        note = query(db2, "SELECT text FROM note WHERE kind = 'no_steps'")[0]['text']
        self.assertIn('go to another mfu-record already (pid %d)' % first.pid, note)


class AttachNothing(AttachTest):
    """No steps, and the note says why: never "attach for longer" when
    longer would not help."""

    def no_steps(self, pid):
        rec, db = self.attach(pid, 0.3)
        notes = [r['text'] for r in query(db, "SELECT text FROM note WHERE kind = 'no_steps'")]
        self.assertEqual(len(notes), 1, notes)
        self.assertIn('no steps: ' + notes[0][len('no steps: '):], rec.stderr)
        r = subprocess.run([prog('MFU_REPORT'), '--db', db, 'notes', '--format', 'csv'], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        self.assertNotIn('attach for longer', r.stdout)
        # the whole run's figures are from the attach, not the exec
        whole = [l for l in r.stdout.splitlines() if l.startswith('whole_run,')]
        self.assertEqual(len(whole), 1, r.stdout)
        self.assertIn("the whole run's, attach to end (", whole[0])
        return notes[0]

    def test_program_without_libmfu(self):
        proc = subprocess.Popen(['sleep', '30'])
        self.addCleanup(self.reap, proc)
        time.sleep(0.1)
        self.assertIn('process %d does not use libmfu' % proc.pid, self.no_steps(proc.pid))

    def test_attach_page_turned_off(self):
        env = dict(os.environ, MFU_NO_ATTACH='1')
        proc = subprocess.Popen([prog('MFU_WL_STEPS'), '--steps', '300', '--busy-us', '10000'], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(self.reap, proc)
        time.sleep(0.3)
        self.assertIsNone(attach_fd(proc.pid))
        self.assertIn('was started with MFU_NO_ATTACH set', self.no_steps(proc.pid))

    def test_program_recorded_already(self):
        proc = subprocess.Popen([prog('MFU_RECORD'), '-q', '-o', self.path('l.sqlite'), '--', prog('MFU_WL_STEPS'),
                                 '--steps', '300', '--busy-us', '10000'], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(self.reap, proc)
        deadline = time.monotonic() + 60
        child = None
        while child is None:
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.05)
            with open('/proc/%d/task/%d/children' % (proc.pid, proc.pid)) as f:
                pids = f.read().split()
            if pids:
                with open('/proc/%s/comm' % pids[0]) as f:
                    child = int(pids[0]) if 'wl_steps' in f.read() else None
        self.assertIn('is recorded already, by the mfu-record that started it', self.no_steps(child))

    def test_step_longer_than_the_window(self):
        """Steps of 0.8 s, attached for 0.5 s: whatever the window caught
        (an end, a begin, nothing), the note says to attach longer or that
        nothing was marked meanwhile, never that the program has no steps."""
        proc = self.start([prog('MFU_WL_STEPS'), '--steps', '4', '--busy-us', '800000'])
        rec, db = self.attach(proc.pid, 0.5)
        self.assertEqual(query(db, 'SELECT count(*) AS n FROM step WHERE complete = 1')[0]['n'], 0)
        r = subprocess.run([prog('MFU_REPORT'), '--db', db, 'notes', '--format', 'csv'], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        no_steps = [l for l in r.stdout.splitlines() if l.startswith('no_steps,')]
        self.assertEqual(len(no_steps), 1, r.stdout)
        self.assertTrue('attach for longer' in no_steps[0] or 'called no step or phase marker' in no_steps[0],
                        no_steps[0])
        self.assertNotIn('never ended (the program exited', no_steps[0])
        proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 0)

    def test_marked_program_that_marks_nothing_meanwhile(self):
        """libmfu is there and switched on, but the program sits outside its
        marked loop: that is what the note says."""
        proc = self.start([sys.executable, '-c', 'import mfu, time; time.sleep(30)'], env=py_env())
        note = self.no_steps(proc.pid)
        self.assertIn('called no step or phase marker in the', note)


# A process that makes an attach page of its own design (no libmfu at all):
# VARIANT picks what is wrong with it. It then scribbles over the ring's
# header while the recorder reads it, until killed.
FORGER = r"""
import fcntl, mmap, os, struct, sys, time
variant = sys.argv[1]
nslots = {'huge_ring': 1 << 40, 'many_slots': 1 << 20}.get(variant, 16384)
size = 4096 + 192 + 576 * 16384
fd = os.memfd_create('mfu-attach', os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
os.ftruncate(fd, size)
if variant != 'unsealed':
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW)
m = mmap.mmap(fd, size)
pid = os.getpid() + (1 if variant == 'other_pid' else 0)
struct.pack_into('<8sII QQ i', m, 0, b'mfmApage', 1, 4096, nslots, size, pid)
open(sys.argv[2], 'w').close()
while True:
    if variant == 'scribbler' and struct.unpack_from('<I', m, 128)[0]:
        for off in range(4096, 4096 + 192, 8):
            struct.pack_into('<Q', m, off, 0xffffffffffffffff)
    time.sleep(0.01)
"""


class HostilePage(AttachTest):
    """The attach page is the joined process's memory, all of it: a page
    that is not libmfu's (unsealed, another pid, a ring too large) is not
    used; one rewritten while the recorder reads it stops the reading. The
    recorder never crashes, and says what it found."""

    def join_forger(self, variant):
        ready = self.path('ready-' + variant)
        proc = subprocess.Popen([sys.executable, '-c', FORGER, variant, ready])
        self.addCleanup(self.reap, proc)
        deadline = time.monotonic() + 30
        while not os.path.exists(ready):
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.02)
        rec, db = self.attach(proc.pid, 0.5, db=self.path(variant + '.sqlite'))
        self.assertIsNone(proc.poll())
        return rec, db

    def test_pages_that_are_not_libmfus(self):
        for variant in ('unsealed', 'other_pid', 'huge_ring', 'many_slots'):
            rec, db = self.join_forger(variant)
            self.assertNotIn('markers switched on', rec.stderr, variant)
            note = query(db, "SELECT text FROM note WHERE kind = 'no_steps'")[0]['text']
            self.assertIn('does not use libmfu', note, variant)

    def test_ring_header_rewritten_while_read(self):
        rec, db = self.join_forger('scribbler')
        self.assertIn('markers switched on', rec.stderr)
        self.assertIn('tampered with its marker ring', rec.stderr)
        self.assertEqual(query(db, "SELECT count(*) AS n FROM note WHERE kind = 'ring_tampered'")[0]['n'], 1)


class Launchers(TempDirTest):
    """Something between mfu-record and the marked program closes the
    descriptors mfu-record passes down, or puts other files at their
    numbers: the program asks for them again and is recorded as usual; the
    recording says who lost what; a process that may not have them, or
    cannot ask, is never blamed for not marking."""

    def run_under(self, launcher, args=(), steps=20, env=None, program=None):
        db = self.path('run.sqlite')
        program = program or [prog('MFU_WL_STEPS'), '--steps', str(steps), '--busy-us', '5000']
        p = record(['-o', db] + list(args), launcher + program, env=env, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn('never called', p.stderr)
        return p, db

    def check_recorded(self, db, steps, processes=1):
        rows = query(db, 'SELECT pid, count(*) AS n, sum(complete) AS c, min(counts) AS lo, max(counts) AS hi, '
                         'count(cpu_ns) AS cpu FROM step GROUP BY pid')
        self.assertEqual(len(rows), processes, rows)
        for r in rows:
            self.assertEqual((r['n'], r['c'], r['cpu']), (steps, steps, steps), r)
            self.assertEqual((r['lo'], r['hi']), ('exact', 'exact'), r)
        self.assertEqual(query(db, "SELECT count(*) AS n FROM note WHERE kind = 'no_steps'")[0]['n'], 0)
        notes = [r['text'] for r in query(db, "SELECT text FROM note WHERE kind = 'launcher_fds'")]
        self.assertEqual(len(notes), 1, notes)
        self.assertIn('got them again over mfu-record\'s socket', notes[0])
        return notes[0]

    @unittest.skipUnless(shutil.which('mpirun'), 'no mpirun (Open MPI) installed')
    def test_mpirun_between(self):
        """Open MPI's mpirun closes every descriptor above 2 in the ranks it
        starts: mfu-record -- mpirun -np 2 ./marked records both ranks."""
        root = ['--allow-run-as-root'] if ROOT else []
        env = dict(os.environ, OMPI_MCA_plm_rsh_agent='false', OMPI_MCA_rmaps_base_oversubscribe='1')
        p, db = self.run_under(['mpirun'] + root + ['-np', '2'], env=env)
        note = self.check_recorded(db, 20, processes=2)
        self.assertIn('2 processes of the command', note)
        self.assertRegex(note, r'MFU_RING_FD=\d+ is closed')
        self.assertIn('MFU_LIBFLOPS_FD', note)  # the counting library asked too

    def test_shell_closes_the_ring(self):
        p, db = self.run_under(['sh', '-c', 'eval "exec ${MFU_RING_FD}>&-"; exec "$@"', 'sh'])
        note = self.check_recorded(db, 20)
        self.assertRegex(note, r'^1 process of the command .*: MFU_RING_FD=\d+ is closed\)')
        self.assertNotIn('MFU_GROUP_FD', note)

    def test_shell_reuses_every_number(self):
        """Other files at the numbers (open, so "is it open?" would say
        yes): each is told apart by what it is."""
        script = ('import os, sys\n'
                  'n = os.open("/dev/null", os.O_WRONLY)\n'
                  'for v in ("MFU_RING_FD", "MFU_GROUP_FD", "MFU_LIBFLOPS_FD"):\n'
                  '    for fd in os.environ[v].split(","):\n'
                  '        if fd.isdigit():\n'
                  '            os.dup2(n, int(fd))\n'
                  'os.execvp(sys.argv[1], sys.argv[1:])\n')
        p, db = self.run_under([sys.executable, '-c', script])
        note = self.check_recorded(db, 20)
        self.assertRegex(note, r'MFU_RING_FD=\d+ is another file \(/dev/null\)')
        self.assertRegex(note, r'MFU_GROUP_FD \d+ is another file \(/dev/null\)')
        self.assertRegex(note, r'MFU_LIBFLOPS_FD=\d+ is another file \(/dev/null\)')

    def test_python_program_behind_a_shell(self):
        p, db = self.run_under(['sh', '-c', 'eval "exec ${MFU_RING_FD}>&-"; exec "$@"', 'sh'], env=py_env(),
                               program=[sys.executable, PY_STEPS, '--steps', '15', '--busy-ms', '5'])
        self.check_recorded(db, 15)

    def test_a_stranger_is_refused(self):
        """A process that is not the command's (here: given the command's
        environment by hand) is refused the descriptors; its steps are not
        recorded, and the note says so instead of blaming the program."""
        envfile, go = self.path('env'), self.path('go')
        rec = subprocess.Popen([prog('MFU_RECORD'), '-o', self.path('run.sqlite'), '--', 'sh', '-c',
                                'env > %s.tmp && mv %s.tmp %s; while [ ! -e %s ]; do sleep 0.05; done'
                                % (envfile, envfile, envfile, go)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not os.path.exists(envfile):
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.05)
        env = dict(os.environ)
        with open(envfile) as f:
            env.update(l.rstrip('\n').split('=', 1) for l in f if l.startswith('MFU_'))
        stranger = subprocess.run([prog('MFU_WL_STEPS'), '--steps', '5'], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(stranger.returncode, 0, stranger.stderr)
        open(go, 'w').close()
        _, err = rec.communicate(timeout=120)
        self.assertEqual(rec.returncode, 0, err)
        db = self.path('run.sqlite')
        self.assertEqual(query(db, 'SELECT count(*) AS n FROM step')[0]['n'], 0)
        notes = [r['text'] for r in query(db, "SELECT text FROM note WHERE kind = 'no_steps'")]
        self.assertEqual(len(notes), 1, notes)
        self.assertIn('wl_steps, child of', notes[0])
        self.assertIn('refused them again because it is not one of the command\'s processes', notes[0])
        self.assertIn('mpirun -n N mfu-record -o run.%r.sqlite -- app', notes[0])
        self.assertNotIn('never called', err)

    @unittest.skipUnless(ROOT and shutil.which('unshare'), 'needs root for a network namespace')
    def test_socket_out_of_reach(self):
        """In another network namespace the program cannot reach the
        recorder's socket: nothing is recorded, and the note says that the
        program loaded libmfu, not that it never marked."""
        p, db = self.run_under(['unshare', '-n', 'sh', '-c', 'eval "exec ${MFU_RING_FD}>&-"; exec "$@"', 'sh'],
                               steps=5)
        self.assertEqual(query(db, 'SELECT count(*) AS n FROM step')[0]['n'], 0)
        note = query(db, "SELECT text FROM note WHERE kind = 'no_steps'")[0]['text']
        self.assertRegex(note, r'no marker reached mfu-record, although process \d+ loaded libmfu')
        self.assertIn('could not reach mfu-record\'s socket', note)


if __name__ == '__main__':
    unittest.main()
