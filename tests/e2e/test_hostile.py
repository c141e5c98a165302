"""A hostile target: mfu-record runs as root while the program it records
runs as the user and writes the marker ring they share. Whatever the
program writes there, the recorder neither crashes, nor hangs, nor grows
without bound: it says what happened and finishes the run
(docs/reliability.md, "A hostile target")."""
import mmap
import os
import signal
import struct
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from mfutest import SANITIZED, TempDirTest, as_nobody, nobody_reachable, prog, query  # noqa: E402


def hostile():
    return prog('MFU_WL_HOSTILE')


def no_sanitizer_report(test, stderr):
    for word in ('AddressSanitizer', 'runtime error', 'LeakSanitizer'):
        test.assertNotIn(word, stderr)


class RingTampering(TempDirTest):
    """wl_hostile marks 5 steps, waits until the recorder has read them, then
    overwrites a field of the ring header and exits with status 3."""

    # the field, and a word of the anomaly's detail
    FIELDS = {
        'magic': 'magic',
        'version': 'version',
        'hdrsize': 'sizes',
        'recsize': 'sizes',
        'nslots0': 'slot count',
        'nslots_huge': 'slot count',
        'ngroups': 'group',
        'groups': 'group',
        'head_far': 'head',
        'head_back': 'head',
        'lost_down': 'lost count',
        'seq': 'head',
        'random': '',
    }

    def record(self, db, args, nobody=False):
        env = None
        rec, target = prog('MFU_RECORD'), hostile()
        if nobody:
            cp = nobody_reachable(self, [rec, target])
            rec, target, env = cp[rec], cp[target], cp.env
        cmd = [rec, '-o', db, '-F', '0', '--'] + [target] + args
        if nobody:
            cmd = as_nobody(cmd)
        # a hang is a failure, not a stuck suite
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120, env=env)

    def check_tampered(self, db, p, word, steps_before=5):
        no_sanitizer_report(self, p.stderr)
        # the target's exit status, a finished run
        self.assertEqual(p.returncode, 3, p.stderr)
        run = query(db, 'SELECT state, exit_status FROM run')[0]
        self.assertEqual(run['state'], 'complete')
        self.assertEqual(run['exit_status'], 3)
        # one anomaly and one note say what was tampered with
        rows = query(db, "SELECT detail FROM anomaly WHERE kind = 'ring_tampered'")
        self.assertEqual(len(rows), 1, p.stderr)
        self.assertIn(word, rows[0]['detail'])
        self.assertIn('stopped reading the marker ring', rows[0]['detail'])
        notes = query(db, "SELECT text FROM note WHERE kind = 'ring_tampered'")
        self.assertEqual(len(notes), 1)
        self.assertIn('tampered with its marker ring', notes[0]['text'])
        self.assertIn('tampered with its marker ring', p.stderr)
        # the steps before the tampering are kept, whole
        steps = query(db, 'SELECT step, complete, model_flops FROM step ORDER BY step')
        self.assertGreaterEqual(len([s for s in steps if s['complete']]), steps_before)
        for s in steps[:steps_before]:
            self.assertEqual((s['complete'], s['model_flops']), (1, 1e6))
        # and the report shows the note
        r = subprocess.run([prog('MFU_REPORT'), '--db', db, 'notes', '--format', 'csv'], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('tampered with its marker ring', r.stdout)

    def test_each_header_field(self):
        for field, word in self.FIELDS.items():
            with self.subTest(field=field):
                db = self.path('%s.sqlite' % field)
                p = self.record(db, ['scribble', field])
                self.check_tampered(db, p, word)

    def test_shared_tail_past_the_head_is_ignored(self):
        # the old consumer read its position from the header: tail = head + 1
        # made it skip "holes" towards 2^64 at the end, deaf to signals
        db = self.path('run.sqlite')
        p = self.record(db, ['scribble', 'tail_ahead'])
        no_sanitizer_report(self, p.stderr)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(query(db, 'SELECT state FROM run')[0]['state'], 'complete')
        self.assertEqual(query(db, "SELECT count(*) AS n FROM anomaly WHERE kind = 'ring_tampered'")[0]['n'], 0)
        self.assertEqual(query(db, 'SELECT count(*) AS n FROM step WHERE complete = 1')[0]['n'], 5)
        self.assertEqual(query(db, 'SELECT lost_records FROM run')[0]['lost_records'], 0)

    def test_tampering_during_a_burst(self):
        # a thread marks flat out while another clears the magic: the
        # recorder stops reading there, keeps what came before
        db = self.path('run.sqlite')
        p = self.record(db, ['burst-magic'])
        self.check_tampered(db, p, 'magic')

    def test_as_an_unprivileged_user(self):
        db = self.path('run.sqlite')
        p = self.record(db, ['scribble', 'nslots_huge'], nobody=os.geteuid() == 0)
        self.check_tampered(db, p, 'slot count')


class ForgedIds(TempDirTest):
    """Records with forged process and thread ids, written straight into the
    ring: the recorder keeps state for --max-procs processes and
    --max-threads threads at most, drops and counts the rest, and says so."""

    def record(self, db, args):
        proc = subprocess.Popen([prog('MFU_RECORD'), '-q', '-o', db, '-F', '0'] + args, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            _, err = proc.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        return proc.returncode, err

    def rss_mib(self, db, args):
        """Run mfu-record and return its peak resident memory (MiB) and stderr."""
        proc = subprocess.Popen([prog('MFU_RECORD'), '-q', '-o', db, '-F', '0'] + args,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        err = proc.stderr.read()  # until it ends: a full pipe would stop it
        proc.stderr.close()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        self.assertEqual(proc.returncode, 0, err)
        return usage.ru_maxrss / 1024, err

    def check_capped(self, db, kind, dropped, limit):
        rows = query(db, 'SELECT detail FROM anomaly WHERE kind = ?', (kind,))
        self.assertEqual(len(rows), 1)
        self.assertIn('%d marker records were dropped' % dropped, rows[0]['detail'])
        notes = query(db, 'SELECT text FROM note WHERE kind = ?', (kind,))
        self.assertEqual(len(notes), 1)
        self.assertIn('%d marker records were dropped' % dropped, notes[0]['text'])
        self.assertIn(limit, notes[0]['text'])

    def test_forged_thread_ids(self):
        db = self.path('run.sqlite')
        rc, err = self.record(db, ['--max-threads', '1000', '--', hostile(), 'forge-tids', '20000'])
        no_sanitizer_report(self, err)
        self.assertEqual(rc, 0, err)
        self.check_capped(db, 'too_many_threads', 19000, '--max-threads 1000')
        # the 1,000 kept are phases open at the end
        self.assertEqual(query(db, "SELECT count(*) AS n FROM phase WHERE name = 'forged'")[0]['n'], 1000)
        self.assertEqual(query(db, "SELECT state FROM run")[0]['state'], 'complete')
        # each thread nesting 64 deep: the open phases of all threads are
        # capped too, at 2 x --max-threads
        db = self.path('deep.sqlite')
        rc, err = self.record(db, ['--max-threads', '1000', '--', hostile(), 'forge-tids', '4000', '64'])
        no_sanitizer_report(self, err)
        self.assertEqual(rc, 0, err)
        self.check_capped(db, 'too_many_threads', 4000 * 64 - 2000, '--max-threads 1000')
        self.assertEqual(query(db, "SELECT count(*) AS n FROM phase WHERE name = 'forged'")[0]['n'], 2000)

    def test_forged_process_ids(self):
        db = self.path('run.sqlite')
        rc, err = self.record(db, ['--max-procs', '100', '--', hostile(), 'forge-pids', '20000'])
        no_sanitizer_report(self, err)
        self.assertEqual(rc, 0, err)
        self.check_capped(db, 'too_many_processes', 19900, '--max-procs 100')
        self.assertEqual(query(db, 'SELECT count(*) AS n FROM step')[0]['n'], 100)

    def test_default_caps_bound_memory(self):
        # 300,000 forged thread ids took 1.47 GB before the caps (about 4.9 KB
        # each), 300,000 process ids a minute of CPU in a linear search
        cases = [(['forge-tids', '300000'], 'too_many_threads', 300000 - 65536),
                 (['forge-pids', '300000'], 'too_many_processes', 300000 - 4096)]
        if not SANITIZED:
            # 65,536 threads 64 deep would hold 2.5 GB of open phases; 4.2M
            # records take about 3 s (too long under ASan)
            cases.append((['forge-tids', '65536', '64'], 'too_many_threads', 65536 * 64 - 2 * 65536))
        for args, kind, dropped in cases:
            with self.subTest(args=args):
                db = self.path('%s.sqlite' % '-'.join(args))
                mib, err = self.rss_mib(db, ['-I', '0', '--', hostile()] + args)
                no_sanitizer_report(self, err)
                self.check_capped(db, kind, dropped, '--max-')
                # the target maps the 75 MiB ring too; ASan's shadow memory
                # makes the figure meaningless in the sanitizer build
                if not SANITIZED:
                    self.assertLess(mib, 400, args)


class ForgedValues(TempDirTest):
    def test_values_the_database_would_refuse(self):
        # a phase across 2^63 ns (negative in SQLite's signed integers: the
        # CHECK end_ns >= begin_ns failed and the recording stopped, state
        # failed) and library-call counts that went down (a negative
        # lib_calls); then 3 honest steps
        db = self.path('run.sqlite')
        p = subprocess.run([prog('MFU_RECORD'), '-q', '-o', db, '-F', '0', '--', hostile(), 'forge-values'],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        no_sanitizer_report(self, p.stderr)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn('cannot write', p.stderr)
        self.assertEqual(query(db, 'SELECT state FROM run')[0]['state'], 'complete')
        bad = query(db, "SELECT detail FROM anomaly WHERE kind = 'bad_record'")
        self.assertEqual(len(bad), 1)
        self.assertIn('past 2^63 ns', bad[0]['detail'])
        steps = query(db, 'SELECT step, complete, lib_calls, lib_flops FROM step ORDER BY step')
        self.assertEqual(len(steps), 4)
        self.assertEqual((steps[0]['complete'], steps[0]['lib_calls'], steps[0]['lib_flops']), (1, None, None))
        self.assertEqual([s['complete'] for s in steps[1:]], [1, 1, 1])


class BurstCommits(TempDirTest):
    """A burst that keeps a 1M-record ring from ever emptying must not hold
    the commits back: kill -9 of the recorder during it loses only what was
    read in about the last commit interval (0.25 s)."""

    HEAD, TAIL = 64, 128  # offsets in struct mring_header

    def ring_of(self, pid):
        with open('/proc/%d/environ' % pid, 'rb') as f:
            env = f.read().split(b'\0')
        fd = int(dict(e.split(b'=', 1) for e in env if b'=' in e)[b'MFU_RING_FD'])
        with open('/proc/%d/fd/%d' % (pid, fd), 'rb') as f:
            return mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ)

    def u64(self, m, off):
        return struct.unpack_from('<Q', m, off)[0]

    def test_kill_during_a_burst_keeps_what_was_read_before(self):
        for when in (0.6, 0.9, 1.2):
            with self.subTest(when=when):
                db = self.path('run-%s.sqlite' % when)
                # 800,000 boundaries/s for 1.2 s fill at most 960,000 slots:
                # no loss, so each phase is two consecutive records
                rec = subprocess.Popen([prog('MFU_RECORD'), '-q', '-o', db, '-F', '0', '-I', '0',
                                        '--ring-records', '1048576', '--', prog('MFU_WL_STORM'), '--steps',
                                        '5000000', '--rate', '800000'], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
                target = None
                try:
                    deadline = time.monotonic() + 60
                    while target is None and time.monotonic() < deadline:
                        with open('/proc/%d/task/%d/children' % (rec.pid, rec.pid)) as f:
                            kids = f.read().split()
                        if kids:
                            try:
                                ring = self.ring_of(int(kids[0]))
                                target = int(kids[0])
                            except (OSError, KeyError, ValueError):
                                pass  # not exec'd yet
                        time.sleep(0.005)
                    self.assertIsNotNone(target)
                    while self.u64(ring, self.HEAD) == 0:
                        time.sleep(0.001)
                    t0 = time.monotonic()
                    samples = []  # (time, records the recorder had read)
                    while time.monotonic() < t0 + when:
                        samples.append((time.monotonic(), self.u64(ring, self.TAIL)))
                        time.sleep(0.02)
                    samples.append((time.monotonic(), self.u64(ring, self.TAIL)))
                    rec.kill()
                    rec.wait()
                finally:
                    if rec.poll() is None:
                        rec.kill()
                        rec.wait()
                    if target:
                        try:
                            os.kill(target, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
                ring.close()
                phases = query(db, 'SELECT count(*) AS n FROM phase')[0]['n']
                self.assertEqual(query(db, 'SELECT state FROM run')[0]['state'], 'recording')
                # What the recorder had read at a sample is in the file once
                # a commit was due (0.25 s later) and the recorder read more
                # than 256 records after that: it looks at the clock every
                # 256 records and commits before it reads on. This holds
                # however busy the host (a starved recorder reads less,
                # and the check then says less), and the commit before
                # this series fails it (no commit while the ring is full).
                read = 0
                for t, tail in samples:
                    later = [tl for t2, tl in samples if t2 >= t + 0.27]
                    if later and later[-1] > later[0] + 300:
                        read = max(read, tail)
                self.assertGreaterEqual(phases, read // 2 - 1, (when, read, phases, samples[-1]))
                if read:
                    self.assertGreater(phases, 0)


if __name__ == '__main__':
    unittest.main(verbosity=2)
