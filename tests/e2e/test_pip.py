#!/usr/bin/env python3
"""pip install of the Python module (issue 28 item 3): a virtualenv, then
pip install of src/python offline (--no-index: nothing may be downloaded;
the build backend, src/python/_mfu_build.py, needs only the standard
library), with and without build isolation; the installed mfu imports with
mfu.flops, marks steps that mfu-record records, finds libmfu by the
mfu-record on PATH when nothing else names it, and the installed hook
serves --step py: through MFU_PYTHON_DIR.

Skipped when no Python here can make a virtualenv with pip (Debian:
python3-venv). Environment (meson test sets them): MFU_RECORD,
MFU_LIBMFU, MFU_PYTHON_DIR, MFU_SRCDIR.
"""
import os
import re
import shutil
import subprocess
import sys
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from mfutest import SRCDIR, TempDirTest, prog, query, record  # noqa: E402

PYDIR = os.environ.get('MFU_PYTHON_DIR') or os.path.join(SRCDIR, 'src', 'python')

STEPS = textwrap.dedent('''
    import mfu, mfu.flops
    for i in range(3):
        with mfu.step(flops=mfu.flops.matmul(8, 8, 8)):
            sum(range(1000))
    print("recording" if mfu.recording() else "not recording", mfu.library())
    ''')


def clean_env(**extra):
    """The environment without anything that would find mfu or libmfu for
    the venv (the suite's PYTHONPATH, MFU_LIBRARY...)."""
    e = {k: v for k, v in os.environ.items()
         if k not in ('PYTHONPATH', 'MFU_LIBRARY', 'MFU_RECORD_LIBMFU', 'LD_LIBRARY_PATH',
                      'MFU_RING_FD', 'MFU_PYTHON_DIR', 'VIRTUAL_ENV', 'PYTHONHOME')}
    e['PATH'] = '/usr/bin:/bin'
    e['PIP_NO_INDEX'] = '1'           # offline, whatever pip.conf says
    e['PIP_DISABLE_PIP_VERSION_CHECK'] = '1'
    e.update(extra)
    return e


class Pip(TempDirTest):
    @classmethod
    def setUpClass(cls):
        cls.base = None
        for py in ('/usr/bin/python3', sys.executable):
            if py and os.path.exists(py) and subprocess.run(
                    [py, '-c', 'import venv, ensurepip'], stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL).returncode == 0:
                cls.base = py
                break
        if cls.base is None:
            raise unittest.SkipTest('no Python here has venv and ensurepip (Debian: apt-get install '
                                    'python3-venv)')

    def venv(self, name='v'):
        v = self.path(name)
        r = subprocess.run([self.base, '-m', 'venv', v], env=clean_env(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=300)
        if r.returncode != 0:
            self.skipTest('%s -m venv failed (no pip for virtualenvs?): %s' % (self.base, r.stderr))
        return v

    def pip_install(self, v, *args):
        # A copy of the source directory: the build must not need to write
        # into the tree (nor leave anything there that this test relies on).
        src = self.path('src-python')
        if not os.path.exists(src):
            shutil.copytree(PYDIR, src, ignore=shutil.ignore_patterns('__pycache__'))
        r = subprocess.run([os.path.join(v, 'bin', 'pip'), 'install', '--no-index'] + list(args) + [src],
                           cwd=self.dir, env=clean_env(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r

    def vpython(self, v, code, **env):
        return subprocess.run([os.path.join(v, 'bin', 'python'), '-c', code], cwd=self.dir,
                              env=clean_env(**env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=120)

    def site(self, v):
        r = self.vpython(v, 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.strip()

    def test_install_import_and_record(self):
        v = self.venv()
        self.pip_install(v)                      # isolated build: nothing to fetch
        self.pip_install(v, '--no-build-isolation', '--force-reinstall')
        site = self.site(v)
        for rel in ('mfu.py', 'mfu_flops.py', 'mfu_track.py', os.path.join('mfu_hook', 'sitecustomize.py')):
            self.assertTrue(os.path.isfile(os.path.join(site, rel)), rel)
        self.assertFalse(os.path.exists(os.path.join(site, '_mfu_build.py')))

        r = self.vpython(v, 'import mfu, mfu.flops; from mfu.flops import train\n'
                            'print(mfu.__file__); print(mfu.flops.__file__); print(train(7, 11))')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split('\n')[:3], [os.path.join(site, 'mfu.py'),
                                                    os.path.join(site, 'mfu_flops.py'), '462'])
        r = self.vpython(v, 'import importlib.metadata as m; print(m.version("mfu"))')
        self.assertEqual(r.stdout.strip(), meson_version())

        # Marked steps under mfu-record, from the venv: libmfu is the one the
        # recorder names (MFU_RECORD_LIBMFU), nothing set by hand.
        prog_py = self.path('steps.py')
        with open(prog_py, 'w') as f:
            f.write(STEPS)
        db = self.path('run.sqlite')
        r = record(['-o', db], [os.path.join(v, 'bin', 'python'), prog_py], cwd=self.dir,
                   env=clean_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('recording ' + os.path.realpath(prog('MFU_LIBMFU')), r.stdout)
        rows = query(db, 'SELECT model_flops FROM step ORDER BY 1')
        self.assertEqual([x['model_flops'] for x in rows], [1024.0] * 3)

    def test_library_from_the_recorder_on_path(self):
        """Not recorded, nothing naming libmfu: the one of the mfu-record
        first on PATH (here the build directory's)."""
        v = self.venv()
        self.pip_install(v)
        probe = 'import mfu; print(mfu.available(), mfu.library())'
        r = self.vpython(v, probe)
        self.assertEqual(r.returncode, 0, r.stderr)
        if r.stdout.split()[-1] == 'libmfu.so.0':
            self.skipTest('a libmfu.so.0 is installed where the dynamic loader finds it')
        self.assertEqual(r.stdout.split(), ['False', 'None'])
        bindir = os.path.dirname(os.path.realpath(prog('MFU_RECORD')))
        r = self.vpython(v, probe, PATH=bindir + ':/usr/bin:/bin')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), ['True', os.path.join(os.path.dirname(bindir), 'lib',
                                                                 'libmfu.so.0')])

    def test_installed_hook_serves_py_steps(self):
        """MFU_PYTHON_DIR=<site-packages>: mfu-record's --step py: takes the
        venv's mfu.py and hook."""
        v = self.venv()
        self.pip_install(v)
        script = self.path('work.py')
        with open(script, 'w') as f:
            f.write('def work(n):\n    return sum(range(n))\n\nfor i in range(4):\n    work(1000)\n')
        db = self.path('py.sqlite')
        r = record(['-o', db, '--step', 'py:work'], [os.path.join(v, 'bin', 'python'), script],
                   cwd=self.dir, env=clean_env(MFU_PYTHON_DIR=self.site(v)))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(query(db, 'SELECT count(*) AS n FROM step')[0]['n'], 4)

    def test_editable(self):
        v = self.venv()
        self.pip_install(v, '-e')
        r = self.vpython(v, 'import mfu, mfu.flops; print(mfu.__file__)')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), os.path.join(self.path('src-python'), 'mfu.py'))


def meson_version():
    with open(os.path.join(SRCDIR, 'meson.build')) as f:
        return re.search(r"version:\s*'([^']+)'", f.read()).group(1)


class Version(unittest.TestCase):
    def test_pyproject_has_the_project_version(self):
        with open(os.path.join(PYDIR, 'pyproject.toml')) as f:
            m = re.search(r'^version = "([^"]+)"$', f.read(), re.M)
        self.assertEqual(m.group(1), meson_version())


if __name__ == '__main__':
    unittest.main()
