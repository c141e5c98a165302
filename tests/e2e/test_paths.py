"""Paths a hostile target controls (issue 22): mfu-record runs as root, often
through sudo, while the program runs as the invoking user, who can plant
links and swap directories wherever that user writes. Root must read and
write nothing through them that the user could not, and leave nothing of
root's in the user's places. Also: a reader holding the database at the
finish, and stale side-file links. docs/reliability.md, "A hostile target".

A run "under sudo" is simulated as test_record.py does: SUDO_UID/SUDO_GID
of user nobody. What nobody executes is a system program or a copy that
mfutest.nobody_reachable() made where nobody can reach it (the build tree
may be out of nobody's reach): the recorder is such a copy, so that what it
preloads into its target (the counting library) and the emulator's tool
are within reach of the target's user, as in an installed mfu."""
import glob
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from mfutest import (SANITIZED, TempDirTest, as_nobody, nobody, nobody_reachable, nobody_tmp, prog,  # noqa: E402
                     query, record)

ROOT = os.geteuid() == 0
SECRET = 'TOPSECRET-6c1f'


def owned_by_others(top, uid):
    """Paths under @top (itself included) not owned by @uid."""
    bad = []
    for d, dirs, files in os.walk(top):
        for name in [''] + dirs + files:
            p = os.path.join(d, name) if name else d
            if os.lstat(p).st_uid != uid:
                bad.append(p)
    return bad


@unittest.skipUnless(ROOT, 'needs root to act as sudo')
class UnderSudo(TempDirTest):
    """mfu-record as root for user nobody (SUDO_UID), the target as nobody."""

    def setUp(self):
        super().setUp()
        self.cp = nobody_reachable(self, [prog('MFU_RECORD')])
        self.user = nobody()
        self.rec = self.cp[prog('MFU_RECORD')]
        # a home of the user's own, and a directory of root's only
        self.home = tempfile.mkdtemp(prefix='mfu-home-', dir=nobody_tmp())
        os.chmod(self.home, 0o755)
        os.chown(self.home, self.user.pw_uid, self.user.pw_gid)
        self.rootonly = tempfile.mkdtemp(prefix='mfu-rootonly-', dir=nobody_tmp())
        os.chmod(self.rootonly, 0o700)
        self.secret = os.path.join(self.rootonly, 'secret')
        with open(self.secret, 'w') as f:
            f.write('error 7 %s\n' % SECRET)
        os.chmod(self.secret, 0o600)

    def tearDown(self):
        shutil.rmtree(self.home, ignore_errors=True)
        shutil.rmtree(self.rootonly, ignore_errors=True)
        super().tearDown()

    def env(self, **kw):
        env = dict(self.cp.env, SUDO_UID=str(self.user.pw_uid), SUDO_GID=str(self.user.pw_gid),
                   SUDO_USER=self.user.pw_name, HOME=self.home, TMPDIR=self.dir)
        for k in ('XDG_CACHE_HOME', 'XDG_CONFIG_HOME'):
            env.pop(k, None)
        env.update(kw)
        return env

    def record(self, args, cmd, **kw):
        return record(args, cmd, recorder=self.rec, **kw)

    def assert_nothing_of_roots(self):
        self.assertEqual(owned_by_others(self.home, self.user.pw_uid), [])
        self.assertEqual(os.listdir(self.rootonly), ['secret'])

    def test_status_file_replaced_by_a_link_is_not_read(self):
        """The Python hook's status file is in a directory the target's
        user writes: a link there to a root-only file must not bring a
        line of that file to stderr or into probe.detail."""
        db = self.path('run.sqlite')
        attack = 'rm -f "$MFU_PY_HOOK_STATUS" && ln -s %s "$MFU_PY_HOOK_STATUS"' % self.secret
        for env in (self.env(), dict(os.environ, TMPDIR=self.dir)):
            p = self.record(['-q', '-o', db, '--step', 'py:train_step'], ['sh', '-c', attack], env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertNotIn(SECRET, p.stderr)
            rows = query(db, 'SELECT * FROM probe')
            self.assertEqual(len(rows), 1)
            self.assertNotIn(SECRET, rows[0]['detail'])
            self.assertIn('could not be read', rows[0]['detail'])
            with open(db, 'rb') as f:
                self.assertNotIn(SECRET.encode(), f.read())
            # the hook's directory went, as its user removed it
            self.assertEqual(glob.glob(self.path('mfu-py-*')), [])
        with open(self.secret) as f:
            self.assertIn(SECRET, f.read())

    def test_compute_patterns_through_a_link_are_not_read(self):
        """~/.config/mfu/compute (the user's HOME, kept by sudo -E) as a
        link to a root-only file: not read (a bad pattern's text would
        be quoted in the error)."""
        with open(self.secret, 'w') as f:
            f.write('[%s\n' % SECRET)
        conf = os.path.join(self.home, '.config', 'mfu')
        os.makedirs(conf)
        os.symlink(self.secret, os.path.join(conf, 'compute'))
        p = self.record(['-q', '-o', self.path('run.sqlite')], ['true'], env=self.env())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn(SECRET, p.stderr)
        # the same file read as root, named on the command line by root
        p = self.record(['-q', '-o', self.path('run.sqlite'), '--compute-file', self.secret], ['true'])
        self.assertIn(SECRET, p.stderr)  # the check above would have seen it

    def test_attach_joins_only_the_users_own_processes(self):
        """-p under sudo: root could join any process, and the recording
        (samples, stacks, its command line) goes to the invoking user; so a
        process of another user is refused (one line, 125, no database),
        and one of the user's own is joined as without sudo."""
        other = subprocess.Popen(['sleep', '30'])   # root's
        mine = subprocess.Popen(['sleep', '30'], preexec_fn=lambda: (os.setgid(self.user.pw_gid),
                                                                      os.setuid(self.user.pw_uid)))
        try:
            db = self.path('attach.sqlite')
            p = self.record(['-q', '-o', db, '-p', str(other.pid), '--duration', '0.3'], [], env=self.env())
            self.assertEqual(p.returncode, 125, p.stderr)
            self.assertIn('process %d is not yours' % other.pid, p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertFalse(os.path.exists(db))
            p = self.record(['-q', '-o', db, '-p', str(mine.pid), '--duration', '0.3'], [], env=self.env())
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(query(db, 'SELECT target_pid, state FROM run')[0],
                             {'target_pid': mine.pid, 'state': 'detached'})
            self.assertEqual(os.stat(db).st_uid, self.user.pw_uid)
            # as root itself (no sudo), any process
            p = self.record(['-q', '-o', self.path('root.sqlite'), '-p', str(other.pid), '--duration', '0.3'], [])
            self.assertEqual(p.returncode, 0, p.stderr)
        finally:
            for proc in (other, mine):
                proc.kill()
                proc.wait()

    def test_output_is_made_as_the_user(self):
        """The database is the user's, made where they may write: in a
        directory of root's they cannot, refused (one line, 125, the
        target not started); where they can, nothing of root's is left."""
        out = os.path.join(self.rootonly, 'run.sqlite')
        os.chmod(self.rootonly, 0o755)
        marker = self.path('started')
        p = self.record(['-q', '-o', out], ['touch', marker], env=self.env())
        self.assertEqual(p.returncode, 125, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn('Permission denied', p.stderr)
        self.assertFalse(os.path.exists(marker))
        self.assertEqual(os.listdir(self.rootonly), ['secret'])

        work = os.path.join(self.home, 'work')
        os.mkdir(work)
        os.chown(work, self.user.pw_uid, self.user.pw_gid)
        p = self.record(['-q', '-o', os.path.join(work, 'run.sqlite')], ['true'], env=self.env())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(os.listdir(work)), ['run.sqlite'])
        self.assert_nothing_of_roots()

    @unittest.skipIf(SANITIZED, 'calibrating under a sanitizer takes minutes')
    def test_calibration_cache_belongs_to_the_user(self):
        """sudo -E keeps the user's HOME: the first calibration writes the
        profile there as the user (a planted ~/.cache link to a root-only
        directory gets nothing), and the user's own next run reads it. A
        profile planted as a link to root's is not read."""
        # the copy of mfu-record runs the mfu-calibrate beside it
        rec = self.rec
        env = self.env()
        env.pop('MFU_NO_CALIBRATE', None)

        def run(out, extra=(), env=env, as_user=False):
            # not -q, which would leave out the calibration's messages
            cmd = [rec, '-o', self.path(out)] + list(extra) + ['--', 'true']
            if as_user:
                cmd = as_nobody(cmd)
            return subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, timeout=300)

        cache = os.path.join(self.home, '.cache')
        os.symlink(self.rootonly, cache)
        os.lchown(cache, self.user.pw_uid, self.user.pw_gid)
        p = run('run1.sqlite')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('has not been calibrated', p.stderr)
        self.assertIn('calibration failed', p.stderr)
        self.assert_nothing_of_roots()

        os.unlink(cache)
        p = run('run2.sqlite')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('has not been calibrated', p.stderr)
        self.assertNotIn('calibration failed', p.stderr)
        profiles = glob.glob(os.path.join(cache, 'mfu', 'profile-*.sqlite'))
        self.assertEqual(len(profiles), 1, p.stderr)
        self.assert_nothing_of_roots()
        self.assertEqual(os.stat(self.path('run2.sqlite')).st_uid, self.user.pw_uid)

        # the user's own run, without sudo, reads the profile
        user_env = dict(env, HOME=self.home)
        for k in ('SUDO_UID', 'SUDO_GID', 'SUDO_USER'):
            user_env.pop(k)
        p = run('run3.sqlite', env=user_env, as_user=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn('has not been calibrated', p.stderr)
        self.assertNotIn('calibration failed', p.stderr)
        self.assertNotIn('cannot read the profile', p.stderr)
        # its measured peaks, or (a busy machine: other tests) its note
        # that the profile's figures were disturbed, which are never peaks
        self.assertTrue(query(self.path('run3.sqlite'), "SELECT * FROM peak WHERE source = 'measured'") or
                        query(self.path('run3.sqlite'), "SELECT * FROM note WHERE kind = 'profile'"))

        # a profile of root's, reached through a link the user planted
        os.rename(profiles[0], os.path.join(self.rootonly, 'root-profile.sqlite'))
        os.symlink(os.path.join(self.rootonly, 'root-profile.sqlite'), profiles[0])
        os.lchown(profiles[0], self.user.pw_uid, self.user.pw_gid)
        p = run('run4.sqlite', ['--no-calibrate'])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(query(self.path('run4.sqlite'), "SELECT * FROM peak WHERE source = 'measured'"), [])
        self.assertEqual(owned_by_others(self.home, self.user.pw_uid), [])

    @unittest.skipIf(os.environ.get('MFU_EMULATE_MISSING') or SANITIZED,
                     'the emulator is not built here, or runs no sanitized program')
    def test_emulator_directory_swapped_for_a_link(self):
        """--emulate's directory is the target's user's: swapped for a link
        to a directory of root's during the run, root's cleanup must not
        empty that directory."""
        victim = os.path.join(self.rootonly, 'victim')
        os.mkdir(victim)
        with open(os.path.join(victim, 'keep'), 'w') as f:
            f.write('keep')
        go = self.path('go')
        proc = subprocess.Popen([self.rec, '-q', '--emulate', '-o', self.path('run.sqlite'), '--',
                                 'sh', '-c', 'while [ ! -e %s ]; do sleep 0.05; done' % go],
                                env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            for _ in range(600):
                dirs = glob.glob(self.path('mfu-emulate.*'))
                if dirs or proc.poll() is not None:
                    break
                time.sleep(0.1)
            self.assertEqual(len(dirs), 1, dirs)
            os.rename(dirs[0], dirs[0] + '.moved')
            os.symlink(victim, dirs[0])
        finally:
            open(go, 'w').close()
            out, err = proc.communicate(timeout=300)
        self.assertEqual(os.listdir(victim), ['keep'], err)


@unittest.skipUnless(ROOT, 'the attacks are on a recorder running as root')
class SideFiles(TempDirTest):
    def test_stale_side_file_links_are_refused(self):
        """FILE-wal, -shm or -journal planted as a link, with or without
        FILE: one line naming it, 125 (mfu-report merge: 1), the target
        not started, nothing made or moved, the link's target untouched."""
        victim = self.path('victim')
        marker = self.path('started')
        src = self.path('rank.sqlite')
        p = record(['-q', '-o', src], ['true'])
        self.assertEqual(p.returncode, 0, p.stderr)
        for sfx in ('-wal', '-shm', '-journal'):
            for existing in (False, True):
                db = self.path('run.sqlite')
                if existing:
                    with open(db, 'w') as f:
                        f.write('old')
                os.symlink(victim, db + sfx)
                before = sorted(os.listdir(self.dir))
                p = record(['-q', '-o', db], ['touch', marker])
                self.assertEqual(p.returncode, 125, p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertIn('run.sqlite%s is a symbolic link' % sfx, p.stderr)
                self.assertFalse(os.path.exists(marker))
                if os.environ.get('MFU_REPORT'):
                    p = subprocess.run([prog('MFU_REPORT'), 'merge', '-o', db, src], stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True, timeout=60)
                    self.assertEqual(p.returncode, 1, p.stderr)
                    self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                    self.assertIn('run.sqlite%s is a symbolic link' % sfx, p.stderr)
                self.assertEqual(sorted(os.listdir(self.dir)), before)
                self.assertFalse(os.path.lexists(victim))
                if existing:
                    with open(db) as f:
                        self.assertEqual(f.read(), 'old')
                    os.unlink(db)
                os.unlink(db + sfx)


def recorder_sleeping(pid):
    """The recorder's main thread is in nanosleep (its finish waiting for the
    file), from /proc/PID/syscall: 35 nanosleep, 230 clock_nanosleep."""
    try:
        with open('/proc/%d/syscall' % pid) as f:
            return f.read().split()[0] in ('35', '230')
    except (OSError, IndexError):
        return False


READER = '''
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("BEGIN")
con.execute("SELECT count(*) FROM run").fetchall()
print("holding", flush=True)
sys.stdin.readline()
con.close()
'''


class Finish(TempDirTest):
    def start(self, db, go):
        rec = subprocess.Popen([prog('MFU_RECORD'), '-q', '-o', db, '--', 'sh', '-c',
                                'while [ ! -e %s ]; do sleep 0.05; done' % go],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # the run row is written before the target starts; then a reader
        # holds the file (an open read transaction) across the finish
        for _ in range(600):
            try:
                if query(db, 'SELECT * FROM run'):
                    break
            except sqlite3.Error:
                pass
            time.sleep(0.1)
        reader = subprocess.Popen([sys.executable, '-c', READER, db], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        self.assertEqual(reader.stdout.readline().strip(), 'holding')
        open(go, 'w').close()
        return rec, reader

    def test_reader_holding_the_file_at_the_finish(self):
        """The finish waits for the reader: once it goes, the file is in
        its finished form (rollback journal, no -wal), exit 0."""
        db, go = self.path('run.sqlite'), self.path('go')
        rec, reader = self.start(db, go)
        # let go only once the recorder waits for it (or has given up)
        for _ in range(600):
            if rec.poll() is not None or recorder_sleeping(rec.pid):
                break
            time.sleep(0.05)
        reader.communicate('\n', timeout=60)
        out, err = rec.communicate(timeout=120)
        self.assertEqual(rec.returncode, 0, err)
        self.assertNotIn('locked', err)
        with open(db, 'rb') as f:
            header = f.read(20)
        self.assertEqual((header[18], header[19]), (1, 1), 'left in WAL mode')
        self.assertFalse(os.path.exists(db + '-wal'))
        self.assertEqual(query(db, 'SELECT state FROM run')[0]['state'], 'complete')

    def test_reader_that_never_lets_go(self):
        """A reader that holds the file past the timeout: one line saying
        so and what to do, exit 125, the recording complete and readable."""
        db, go = self.path('run.sqlite'), self.path('go')
        rec, reader = self.start(db, go)
        try:
            out, err = rec.communicate(timeout=120)
        finally:
            reader.communicate('\n', timeout=60)
        self.assertEqual(rec.returncode, 125, err)
        lines = [l for l in err.splitlines() if 'cannot finish' in l]
        self.assertEqual(len(lines), 1, err)
        self.assertIn('left in WAL mode', lines[0])
        self.assertIn("PRAGMA journal_mode=DELETE", lines[0])
        self.assertEqual(query(db, 'SELECT state FROM run')[0]['state'], 'complete')


if __name__ == '__main__':
    unittest.main(verbosity=2)
