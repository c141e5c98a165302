"""The recording's file and what mfu-record says (issue 26, item 4):

- -q prints nothing on a successful run (the notes stay in the database:
  the same kinds as without -q);
- -o is checked before anything slow or started: a directory, another
  database's side file, a directory the user may not write (as user
  nobody, root only) fail at once, with one line, no calibration started
  and no target run;
- an existing recording at -o is kept, as FILE.old, then FILE.old.2 ...:
  a later recording never destroys an earlier one, and one line says
  where it went.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mfutest import TempDirTest, as_nobody, nobody_reachable, nobody_tmp, prog, query, record  # noqa: E402

ROOT = os.geteuid() == 0


def steps_cmd(n=3):
    return [prog('MFU_WL_STEPS'), '--steps', str(n), '--busy-us', '1000']


class Output(TempDirTest):
    def test_quiet_prints_nothing(self):
        db, loud = self.path('q.sqlite'), self.path('loud.sqlite')
        p = record(['-q', '-o', db], steps_cmd())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, '')
        p2 = record(['-o', loud], steps_cmd())
        self.assertEqual(p2.returncode, 0, p2.stderr)
        kinds = sorted(r['kind'] for r in query(db, 'SELECT kind FROM note'))
        self.assertEqual(kinds, sorted(r['kind'] for r in query(loud, 'SELECT kind FROM note')))
        self.assertEqual(len(query(db, 'SELECT step FROM step WHERE complete = 1')), 3)

    def fails_at_once(self, out, want, env=None):
        """mfu-record -o OUT fails with @want in its one line, before a
        calibration (a fresh cache: one would start) or the target."""
        cache = self.path('cache')
        env = dict(env or os.environ, XDG_CACHE_HOME=cache)
        env.pop('MFU_NO_CALIBRATE', None)
        marker = self.path('ran')
        p = record(['-o', out], ['sh', '-c', 'touch %s' % marker], env=env, timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn(want, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertNotIn('calibrat', p.stderr)
        self.assertFalse(os.path.exists(cache) and os.listdir(cache), 'a calibration started')
        self.assertFalse(os.path.exists(marker), 'the target ran')
        return p

    def test_output_in_a_missing_directory(self):
        self.fails_at_once(self.path('no/such/dir/run.sqlite'), 'cannot write the recording')

    def test_output_is_a_directory(self):
        os.mkdir(self.path('d'))
        self.fails_at_once(self.path('d'), 'is a directory')

    def test_output_is_a_directory_in_a_job(self):
        """A rank of a job makes its own name from -o: from a directory
        that would be DIR/.1, a hidden file; it is refused, with the name
        to give instead."""
        os.mkdir(self.path('d'))
        env = dict(os.environ, OMPI_COMM_WORLD_RANK='1', OMPI_COMM_WORLD_SIZE='2')
        for out in (self.path('d'), self.path('d') + '/'):
            marker = self.path('ran')
            p = record(['-o', out], ['sh', '-c', 'touch %s' % marker], env=env, timeout=60)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn('is a directory', p.stderr)
            self.assertIn(self.path('d') + '/run.%r.sqlite', p.stderr)
            self.assertFalse(os.path.exists(marker), 'the target ran')
            self.assertEqual(os.listdir(self.path('d')), [])

    def test_output_is_a_side_file(self):
        p = record(['-q', '-o', self.path('a.sqlite')], steps_cmd(1))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.fails_at_once(self.path('a.sqlite-wal'), 'is the wal file of the database')

    @unittest.skipUnless(ROOT and shutil.which('setpriv'), 'needs root to become another user')
    def test_directory_the_user_cannot_write(self):
        # a copy of mfu-record nobody can run (the clone may be in a
        # directory nobody can enter), writing into a directory of root's
        cp = nobody_reachable(self, [prog('MFU_RECORD')])
        d = tempfile.mkdtemp(prefix='mfu-root-only-', dir=nobody_tmp())
        self.addCleanup(shutil.rmtree, d, True)
        os.chmod(d, 0o755)
        cache = os.path.join(d, 'cache')
        env = dict(cp.env, XDG_CACHE_HOME=cache, HOME=d)
        env.pop('MFU_NO_CALIBRATE', None)
        p = subprocess.run(as_nobody([cp[prog('MFU_RECORD')], '-o', os.path.join(d, 'run.sqlite'), '--', 'true']),
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('cannot write the recording', p.stderr)
        self.assertIn('Permission denied', p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertNotIn('calibrat', p.stderr)
        self.assertFalse(os.path.exists(cache), 'a calibration started')

    def test_earlier_recordings_are_kept(self):
        db = self.path('run.sqlite')
        starts = []
        for i in range(3):
            p = record(['-o', db], steps_cmd(i + 1))
            self.assertEqual(p.returncode, 0, p.stderr)
            starts.append(query(db, 'SELECT start_unix_ns FROM run')[0]['start_unix_ns'])
            kept = [line for line in p.stderr.splitlines() if 'existed: kept as' in line]
            if i == 0:
                self.assertEqual(kept, [])
            else:
                self.assertEqual(len(kept), 1, p.stderr)
                self.assertTrue(kept[0].endswith(db + '.old' + ('' if i == 1 else '.2')), kept)
        # each recording where the rule put it, none overwritten
        self.assertEqual(query(db + '.old', 'SELECT start_unix_ns FROM run')[0]['start_unix_ns'], starts[0])
        self.assertEqual(query(db + '.old.2', 'SELECT start_unix_ns FROM run')[0]['start_unix_ns'], starts[1])
        self.assertEqual(len(query(db + '.old', 'SELECT step FROM step WHERE complete = 1')), 1)
        self.assertEqual(len(query(db + '.old.2', 'SELECT step FROM step WHERE complete = 1')), 2)
        self.assertEqual(len(query(db, 'SELECT step FROM step WHERE complete = 1')), 3)
        # -q says nothing of it
        p = record(['-q', '-o', db], steps_cmd(1))
        self.assertEqual((p.returncode, p.stderr), (0, ''))
        self.assertTrue(os.path.exists(db + '.old.3'))


if __name__ == '__main__':
    unittest.main(verbosity=2)
