"""An installed copy works on its own: the source tree is configured with a
prefix in a temporary directory, its installed programs and libraries are
built and installed there, the build directory is removed, and then, from
another directory and with no MFU_* variable, LD_LIBRARY_PATH or PYTHONPATH
pointing anywhere: a marked C program is compiled with
`pkg-config --cflags --libs mfu` against the prefix, recorded with the
installed mfu-record (which calibrates with the installed mfu-calibrate and
preloads the installed counting library), reported with the installed
mfu-report and with the installed analyses; a Python program is recorded
with the installed mfu.py, and a plain one with `--step py:` (the installed
hook); the man pages render.

Then the prefix is moved to another directory (as a copy staged with
`meson install --destdir`, or a tree unpacked elsewhere, is): mfu-record
finds its files (libmfu-libflops.so, the Python hook and module, libmfu for
mfu.py, the emulator's tool) relative to itself, and the Python programs
are recorded again from there, counted and hooked, with --emulate too when
the tool is installed.

Only the installed targets are built (not the tests and workloads): about
25 s on 2 CPUs, the whole test about 40 s. Skipped in sanitizer builds: it
builds its own plain copy, the same check as in the normal build's suite."""
import glob
import json
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from mfutest import SANITIZED, SRCDIR, TempDirTest  # noqa: E402

HELLO_C = r'''
#include <math.h>
#include <mfu.h>
#include <stdio.h>

int main(void)
{
	for (int i = 0; i < 3; i++) {
		mfu_step_begin();
		mfu_step_model(mfu_flops_gemm(100, 100, 100), NAN);
		mfu_phase_begin("work");
		mfu_phase_model(mfu_flops_gemv(1000, 1000), 8e6);
		volatile double x = 0;
		for (int k = 0; k < 200000; k++)
			x = x * 0.5 + 1.0;
		mfu_phase_end("work");
		mfu_step_end();
	}
	printf("recording: %d\n", mfu_recording());
	return 0;
}
'''

MARKED_PY = '''
import mfu
for i in range(3):
    with mfu.step(flops=1e6):
        with mfu.phase("work"):
            sum(range(20000))
print("recording:", mfu.recording())
'''

PLAIN_PY = '''
def train_step(n):
    return sum(range(n))

for i in range(4):
    train_step(20000)
'''

# not the distribution's default, as a packager's --libdir would be
LIBDIR = 'lib/mfu-test'
MAN_PAGES = ['man1/mfu-record.1', 'man1/mfu-report.1', 'man1/mfu-calibrate.1', 'man3/mfu.3']


def tool(name):
    return shutil.which(name)


def clean_env(**kw):
    """The environment of a user who installed mfu: nothing of the test
    suite's (MFU_RECORD, MFU_PYTHON_DIR, MFU_NO_CALIBRATE...) nor any path
    to the build tree."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith('MFU_') and k not in ('LD_PRELOAD', 'LD_LIBRARY_PATH', 'PYTHONPATH',
                                                     'PKG_CONFIG_PATH', 'MALLOC_PERTURB_')}
    env.update(kw)
    return env


@unittest.skipIf(SANITIZED, 'builds and installs its own plain copy: the same check as in the normal build')
class Install(TempDirTest):
    def run_ok(self, args, timeout=300, **kw):
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout, **kw)
        self.assertEqual(p.returncode, 0, '%s: exit %d\n%s\n%s' % (
            ' '.join(args), p.returncode, p.stdout[-3000:], p.stderr[-3000:]))
        return p

    def install(self):
        """Configure as a packager would (a release build, a library
        directory of its own), build the installed targets, install into a
        staging directory (DESTDIR) and unpack that at the prefix; returns
        the install directories from meson's options."""
        build, prefix, stage = self.path('build'), self.path('prefix'), self.path('stage')
        env = clean_env()
        t0 = time.monotonic()
        self.run_ok(['meson', 'setup', build, SRCDIR, '--prefix', prefix, '--buildtype', 'release',
                     '--libdir', LIBDIR], env=env)
        opts = {o['name']: o['value'] for o in json.loads(self.run_ok(
            ['meson', 'introspect', build, '--buildoptions'], env=env).stdout)}
        targets = json.loads(self.run_ok(['meson', 'introspect', build, '--targets'], env=env).stdout)
        outputs = [os.path.relpath(f, build) for t in targets if t['installed'] for f in t['filename']]
        self.assertTrue(outputs, 'no installed target')
        self.run_ok(['ninja', '-C', build] + outputs, env=env)
        self.run_ok(['meson', 'install', '-C', build, '--no-rebuild', '--quiet', '--destdir', stage], env=env)
        # DESTDIR puts every file under STAGE/PREFIX and nothing at PREFIX
        self.assertFalse(os.path.exists(prefix), 'meson install --destdir wrote into the prefix')
        os.rename(stage + prefix, prefix)
        shutil.rmtree(stage)
        self.version = json.loads(self.run_ok(['meson', 'introspect', build, '--projectinfo'],
                                              env=env).stdout)['version']
        self.build_s = time.monotonic() - t0
        # nothing the installed copy does may need the build directory
        shutil.rmtree(build)
        return {k: os.path.join(prefix, opts[k]) for k in ('bindir', 'libdir', 'includedir', 'datadir', 'mandir')}

    def test_installed_copy_works_from_elsewhere(self):
        for prog in ('meson', 'ninja', 'pkg-config'):
            if not tool(prog):
                self.skipTest('%s not found' % prog)
        cc = os.environ.get('CC') or tool('cc') or tool('gcc')
        if not cc:
            self.skipTest('no C compiler (cc, gcc or $CC)')
        d = self.install()
        bindir, libdir, datadir, mandir = d['bindir'], d['libdir'], d['datadir'], d['mandir']

        # what is installed, and where
        self.assertEqual(libdir, os.path.join(self.path('prefix'), LIBDIR))
        for f in ('mfu-record', 'mfu-report', 'mfu-calibrate'):
            self.assertTrue(os.access(os.path.join(bindir, f), os.X_OK), f)
            # one version everywhere: the project's (meson.build)
            out = self.run_ok([os.path.join(bindir, f), '-V'], env=clean_env()).stdout
            self.assertEqual(out.strip(), '%s %s' % (f, self.version))
        for f in (os.path.join(d['includedir'], 'mfu.h'), os.path.join(libdir, 'libmfu.so.0'),
                  os.path.join(libdir, 'libmfu.so'), os.path.join(libdir, 'mfu', 'libmfu-libflops.so'),
                  os.path.join(libdir, 'pkgconfig', 'mfu.pc'),
                  os.path.join(datadir, 'mfu', 'python', 'mfu.py'),
                  os.path.join(datadir, 'mfu', 'python', 'mfu_flops.py'),
                  os.path.join(datadir, 'mfu', 'python', 'mfu_track.py'),
                  os.path.join(datadir, 'mfu', 'python', 'mfu_hook', 'sitecustomize.py')):
            self.assertTrue(os.path.isfile(f), f)
        for page in MAN_PAGES + ['man3/mfu_step_begin.3']:
            self.assertTrue(os.path.isfile(os.path.join(mandir, page)), page)
        # the SQL: every file of schema/ and analyses/, as in the source tree
        for sub in ('schema/*.sql', 'schema/derive/*.sql', 'analyses/*.sql'):
            src = sorted(glob.glob(os.path.join(SRCDIR, sub)))
            self.assertTrue(src, sub)
            for f in src:
                inst = os.path.join(datadir, 'mfu', os.path.relpath(f, SRCDIR))
                self.assertTrue(os.path.isfile(inst), inst)
                with open(f, 'rb') as a, open(inst, 'rb') as b:
                    self.assertEqual(a.read(), b.read(), inst)

        # another directory: a marked C program built with pkg-config
        work = self.path('elsewhere')
        os.mkdir(work)
        with open(os.path.join(work, 'hello.c'), 'w') as f:
            f.write(HELLO_C)
        env = clean_env(PKG_CONFIG_PATH=os.path.join(libdir, 'pkgconfig'),
                        XDG_CACHE_HOME=os.path.join(work, 'cache'), LC_ALL='C')
        flags = self.run_ok(['pkg-config', '--cflags', '--libs', 'mfu'], env=env).stdout
        self.assertIn('-I' + d['includedir'], flags)
        self.assertIn('-L' + libdir, flags)
        self.assertIn('-lmfu', flags)
        self.assertEqual(self.run_ok(['pkg-config', '--variable=libdir', 'mfu'], env=env).stdout.strip(),
                         libdir)
        self.assertEqual(self.run_ok(['pkg-config', '--modversion', 'mfu'], env=env).stdout.strip(),
                         self.version)
        self.assertTrue(os.path.isfile(os.path.join(libdir, 'libmfu.so.' + self.version)))
        self.run_ok([cc, '-std=c11', '-Wall', '-Werror', '-o', 'hello', 'hello.c'] + shlex.split(flags) +
                    ['-Wl,-rpath,' + libdir], cwd=work, env=env)

        # recorded by the installed mfu-record: no profile yet, so it runs
        # the installed mfu-calibrate first; the installed counting library
        # is preloaded
        rec = os.path.join(bindir, 'mfu-record')
        p = self.run_ok([rec, '-o', 'hello.sqlite', '--', './hello'], cwd=work, env=env)
        self.assertIn('recording: 1', p.stdout)
        self.assertIn("'%s --quick'" % os.path.join(bindir, 'mfu-calibrate'), p.stderr)
        db = os.path.join(work, 'hello.sqlite')
        con = sqlite3.connect('file:%s?mode=ro' % db, uri=True)
        try:
            run = con.execute('SELECT state, exit_status, lib_counting, peak_mode FROM run').fetchone()
            self.assertEqual(run, ('complete', 0, 'on', 'auto'))
            self.assertEqual(con.execute("SELECT count(*) FROM peak WHERE source = 'measured'").fetchone()[0] > 0,
                             True, 'no measured peak: mfu-calibrate did not run')
            steps = con.execute('SELECT step, model_flops, complete FROM step ORDER BY step').fetchall()
            self.assertEqual(steps, [(i, 2e6, 1) for i in range(3)])
            phases = con.execute("SELECT count(*), sum(model_flops), sum(model_bytes) FROM phase "
                                 "WHERE name = 'work' AND complete").fetchone()
            self.assertEqual(phases, (3, 6e6, 24e6))
            self.assertEqual(con.execute('SELECT count(*) FROM anomaly').fetchone()[0], 0)
            # the installed analyses run as they are, over the installed
            # views (what mfu-report --sql steps prints)
            with open(os.path.join(datadir, 'mfu', 'analyses', 'views.sql')) as f:
                con.executescript(f.read())
            with open(os.path.join(datadir, 'mfu', 'analyses', 'steps.sql')) as f:
                self.assertEqual(len(con.execute(f.read()).fetchall()), 3)
        finally:
            con.close()

        # reported by the installed mfu-report
        rep = os.path.join(bindir, 'mfu-report')
        out = self.run_ok([rep, '--db', 'hello.sqlite', '--format', 'csv', 'steps'], cwd=work, env=env).stdout
        self.assertEqual(len(out.strip().split('\n')), 4, out)
        out = self.run_ok([rep, '--db', 'hello.sqlite'], cwd=work, env=env).stdout
        self.assertIn('complete', out)

        # Python: the installed module, which finds the installed libmfu
        # through mfu-record (it is not on the loader's path)
        with open(os.path.join(work, 'marked.py'), 'w') as f:
            f.write(MARKED_PY)
        penv = dict(env, PYTHONPATH=os.path.join(datadir, 'mfu', 'python'))
        p = self.run_ok([rec, '-q', '-o', 'py.sqlite', '--', sys.executable, 'marked.py'], cwd=work, env=penv)
        self.assertIn('recording: True', p.stdout)
        self.assertEqual(self.count(os.path.join(work, 'py.sqlite'), 'step WHERE complete'), 3)
        self.assertEqual(self.count(os.path.join(work, 'py.sqlite'), "phase WHERE name = 'work'"), 3)
        # and --step py: (the installed hook), with no PYTHONPATH at all
        with open(os.path.join(work, 'plain.py'), 'w') as f:
            f.write(PLAIN_PY)
        self.run_ok([rec, '-q', '-o', 'plain.sqlite', '--step', 'py:plain.train_step', '--',
                     sys.executable, 'plain.py'], cwd=work, env=env)
        self.assertEqual(self.count(os.path.join(work, 'plain.sqlite'), 'step WHERE complete'), 4)

        # the prefix moved elsewhere: the recorder finds its files next to
        # itself (the counting library, libmfu for mfu.py, the Python hook)
        moved = self.path('moved')
        shutil.move(self.path('prefix'), moved)
        mv = {k: os.path.join(moved, os.path.relpath(v, self.path('prefix'))) for k, v in d.items()}
        rec = os.path.join(mv['bindir'], 'mfu-record')
        menv = dict(env, PYTHONPATH=os.path.join(mv['datadir'], 'mfu', 'python'))
        p = self.run_ok([rec, '-q', '-o', 'moved.sqlite', '--', sys.executable, 'marked.py'], cwd=work, env=menv)
        self.assertIn('recording: True', p.stdout)
        self.assertEqual(self.count(os.path.join(work, 'moved.sqlite'), "run WHERE lib_counting = 'on'"), 1)
        self.assertEqual(self.count(os.path.join(work, 'moved.sqlite'), 'step WHERE complete'), 3)
        self.run_ok([rec, '-q', '-o', 'moved_plain.sqlite', '--step', 'py:plain.train_step', '--',
                     sys.executable, 'plain.py'], cwd=work, env=env)
        self.assertEqual(self.count(os.path.join(work, 'moved_plain.sqlite'), 'step WHERE complete'), 4)
        if os.path.isfile(os.path.join(mv['libdir'], 'mfu', 'valgrind', 'mfufp-amd64-linux')) and tool('valgrind'):
            self.run_ok([rec, '--emulate', '-q', '-o', 'moved_emu.sqlite', '--', sys.executable, 'marked.py'],
                        cwd=work, env=menv)
            self.assertEqual(self.count(os.path.join(work, 'moved_emu.sqlite'),
                                        'step WHERE complete AND hw_flops IS NOT NULL'), 3)
        else:
            print('the emulator is not installed: --emulate from the moved prefix not tried', file=sys.stderr)
        mandir = mv['mandir']

        # the man pages render, without a warning
        if not tool('man'):
            print('man not found: the pages were not rendered', file=sys.stderr)
        else:
            menv = dict(env, MANWIDTH='80', MANPAGER='cat', PAGER='cat')
            for page in MAN_PAGES:
                p = self.run_ok(['man', '--warnings', '-l', os.path.join(mandir, page)], env=menv)
                self.assertEqual(p.stderr, '', page)
                self.assertIn(os.path.basename(page).rsplit('.', 1)[0].upper(), p.stdout, page)
            p = self.run_ok(['man', '--warnings', '-M', mandir, '3', 'mfu_phase_model'], env=menv)
            self.assertIn('MFU(3)', p.stdout)
            self.assertIn('mfu_phase_model(flops, bytes)', p.stdout)
        print('configure, build and install: %.1f s' % self.build_s, file=sys.stderr)

    def count(self, db, what):
        con = sqlite3.connect('file:%s?mode=ro' % db, uri=True)
        try:
            return con.execute('SELECT count(*) FROM ' + what).fetchone()[0]
        finally:
            con.close()


if __name__ == '__main__':
    unittest.main(verbosity=2)
