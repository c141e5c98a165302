"""Shared helpers for the end-to-end tests: where the programs are, running
the recorder, and reading a run database."""
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import unittest

SRCDIR = os.environ.get('MFU_SRCDIR', os.path.join(os.path.dirname(__file__), '..', '..'))


def prog(var):
    path = os.environ.get(var)
    if not path or not os.path.exists(path):
        raise unittest.SkipTest('%s is not set (run through meson test)' % var) if False else \
            RuntimeError('%s is not set or missing: run the tests through meson test' % var)
    return path


def python_with(module):
    """A Python that can import @module: MFU_TORCH_PYTHON, this interpreter,
    or Debian's /usr/bin/python3 (the first python3 on PATH may be another
    one, without Debian's python3-torch or python3-numpy); None if none can."""
    for py in (os.environ.get('MFU_TORCH_PYTHON'), sys.executable, '/usr/bin/python3'):
        if py and subprocess.run([py, '-c', 'import ' + module], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL).returncode == 0:
            return py
    return None


def chromium():
    """The headless Chromium to draw with, as an argv prefix, or None."""
    for name in (os.environ.get('MFU_CHROMIUM'), 'chromium-headless-shell', 'chromium', 'chromium-browser'):
        path = name and shutil.which(name)
        if path:
            return [path] if 'headless-shell' in os.path.basename(path) else [path, '--headless']
    return None


def run_chromium(argv, timeout, env=None):
    """Run Chromium's ARGV in a session of its own and return the
    CompletedProcess (bytes). Its renderers and GPU process are its
    children: on a timeout the whole session is killed (a page whose script
    never ends once left renderers holding 10 GB each, long after the test),
    and TimeoutExpired is raised."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)  # anything it left behind
        except ProcessLookupError:
            pass
    return subprocess.CompletedProcess(argv, p.returncode, out, err)


def record(args, cmd, cwd=None, env=None, timeout=120, **kw):
    """Run mfu-record ARGS -- CMD; returns the CompletedProcess."""
    full = [prog('MFU_RECORD')] + list(args) + ['--'] + list(cmd)
    return subprocess.run(full, cwd=cwd, env=env, timeout=timeout,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def query(db, sql, args=()):
    con = sqlite3.connect('file:%s?mode=ro' % db, uri=True)
    try:
        con.row_factory = sqlite3.Row
        return [dict(r) for r in con.execute(sql, args)]
    finally:
        con.close()


def read_clock(path):
    """The steps workload's own readings: {step: (t0, t1, cpu0, cpu1)} in ns."""
    out = {}
    with open(path) as f:
        for line in f:
            s, t0, t1, c0, c1 = (int(x) for x in line.split())
            out[s] = (t0, t1, c0, c1)
    return out


def steal_ns():
    """CPU time the hypervisor took from this VM's CPUs so far (all CPUs, ns,
    from /proc/stat; 10 ms resolution). Wall-clock based counts (task-clock,
    switch intervals) include it, CLOCK_*_CPUTIME_ID do not: CPU-time checks
    allow for what was stolen during the test."""
    with open('/proc/stat') as f:
        fields = f.readline().split()
    hz = os.sysconf('SC_CLK_TCK')
    steal = int(fields[8]) if len(fields) > 8 else 0
    return steal * 1_000_000_000 // hz


SANITIZED = os.environ.get('MFU_SANITIZED') == '1' or bool(os.environ.get('MFU_SANITIZE'))


def _hypervisor():
    try:
        with open('/proc/cpuinfo') as f:
            return any(l.startswith('flags') and ' hypervisor' in l for l in f)
    except OSError:
        return False


# Under a hypervisor the host stalls a vCPU now and then for milliseconds
# (seen: 1-10 ms on 2026-11-24) without it always showing as steal time in
# /proc/stat: clock comparisons on a VM allow this much more. On bare metal
# it is 0 and the 1-2% claims are checked as they stand.
VM_SLACK_NS = 2_000_000 if _hypervisor() else 0


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix='mfu-test-')
        self.dir = self._tmp.name
        os.chmod(self.dir, 0o777)

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)
