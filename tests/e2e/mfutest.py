"""Shared helpers for the end-to-end tests: where the programs are, running
the recorder, and reading a run database."""
import os
import pwd
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


def record(args, cmd, cwd=None, env=None, timeout=120, recorder=None, **kw):
    """Run mfu-record ARGS -- CMD (@recorder: a copy of it); returns the
    CompletedProcess."""
    full = [recorder or prog('MFU_RECORD')] + list(args) + ['--'] + list(cmd)
    return subprocess.run(full, cwd=cwd, env=env, timeout=timeout,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def query(db, sql, args=(), views=False):
    """Rows of SQL on DB, as dicts; @views: over the report's views
    (analyses/views.sql: step.mfu, run_flops...), as mfu-report reads it."""
    con = sqlite3.connect('file:%s?mode=ro' % db, uri=True)
    try:
        con.row_factory = sqlite3.Row
        if views:
            with open(os.path.join(SRCDIR, 'analyses', 'views.sql'), encoding='utf-8') as f:
                con.executescript(f.read())
        return [dict(r) for r in con.execute(sql, args)]
    finally:
        con.close()


class Own(tuple):
    """A workload's own readings around a marked interval, (t0, t1, cpu0,
    cpu1) in ns, and how long its thread waited for a CPU (runnable, not
    running: tests/workloads/run_delay.h) .outside, between the readings and
    the markers, and .inside, between the markers."""
    outside = inside = 0


def read_clock(path):
    """The steps workload's own readings: {step: Own} (--clock FILE)."""
    out = {}
    with open(path) as f:
        for line in f:
            v = [int(x) for x in line.split()]
            out[v[0]] = own = Own(v[1:5])
            own.outside, own.inside = (v[5], v[6]) if len(v) > 6 else (0, 0)
    return out


def read_phase_clock(path):
    """The steps workload's own readings per phase (--phase-clock FILE):
    {(step, name): Own}."""
    out = {}
    with open(path) as f:
        for line in f:
            step, name, *v = line.split()
            own = out[(int(step), name)] = Own(int(x) for x in v[:4])
            own.outside, own.inside = int(v[4]), int(v[5])
    return out


def wall_slack(own_wall, outside, rel=0.01, floor=50_000):
    """How much shorter than the program's own reading around it (@own_wall
    ns) a recorded interval may be: @rel of it, at least @floor ns (the
    readings sit microseconds outside the markers; a sample interrupt there
    costs 50-65 us on a VM), plus @outside, the time the program's thread
    waited for a CPU between its readings and the markers (a preemption
    there is the busy machine's, not the recorder's: exactly that much is
    allowed, 0 on an idle machine), plus VM_SLACK_NS for a stall of the
    vCPU by its host, which the guest does not see."""
    return max(rel * own_wall, floor) + outside + VM_SLACK_NS


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


def perf_event_paranoid():
    with open('/proc/sys/kernel/perf_event_paranoid') as f:
        return int(f.read())


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
# /proc/stat counts steal in whole clock ticks per CPU (10 ms at USER_HZ
# 100): up to a tick of each CPU's steal is not shown yet when it is read.
STEAL_TICK_NS = 1_000_000_000 // os.sysconf('SC_CLK_TCK') if _hypervisor() else 0


# Running things as user nobody. The build tree may be out of nobody's reach
# (a clone under /root, or in any directory of mode 0700 made by mktemp -d):
# every test that runs a program of this build as nobody runs a copy made
# by nobody_reachable(), in a directory nobody can reach, or is skipped
# and says why. setpriv itself gets to exec a program nobody could not
# reach (it keeps root's capabilities up to the execve), but nothing
# that program then runs or loads: never rely on that.

def nobody():
    """User nobody's passwd entry, or None."""
    try:
        return pwd.getpwnam('nobody')
    except KeyError:
        return None


def as_nobody(cmd, user=None):
    """@cmd as an argv run as user nobody (or @user): real and effective
    ids, no supplementary group."""
    nb = user or nobody()
    return ['setpriv', '--reuid=%d' % nb.pw_uid, '--regid=%d' % nb.pw_gid, '--clear-groups'] + list(cmd)


_nobody_tmp = []


def nobody_tmp():
    """A directory under which user nobody can enter, read and execute what
    root puts there with mode 0755: the first of $TMPDIR, /tmp, /var/tmp and
    /dev/shm where a script made so runs as nobody (which a directory of
    mode 0700 on the way, or a noexec mount, prevents). None if none, or
    without root, nobody or setpriv. Probed once per process."""
    if _nobody_tmp:
        return _nobody_tmp[0]
    found = None
    if os.geteuid() == 0 and nobody() and shutil.which('setpriv'):
        seen = set()
        for cand in (tempfile.gettempdir(), '/tmp', '/var/tmp', '/dev/shm'):
            cand = os.path.realpath(cand)
            if cand in seen or not os.path.isdir(cand):
                continue
            seen.add(cand)
            probe = tempfile.mkdtemp(prefix='mfu-probe-', dir=cand)
            try:
                os.chmod(probe, 0o755)
                script = os.path.join(probe, 'probe')
                with open(script, 'w') as f:
                    f.write('#!/bin/sh\nexit 0\n')
                os.chmod(script, 0o755)
                ok = subprocess.run(as_nobody([script]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    timeout=60).returncode == 0
            except OSError:
                ok = False
            finally:
                shutil.rmtree(probe, ignore_errors=True)
            if ok:
                found = cand
                break
    _nobody_tmp.append(found)
    return found


def skip_unless_nobody():
    """Raise SkipTest, saying why, where nothing can be run as user nobody."""
    if os.geteuid() != 0:
        raise unittest.SkipTest('needs root to become user nobody')
    if not nobody():
        raise unittest.SkipTest('there is no user nobody')
    if not shutil.which('setpriv'):
        raise unittest.SkipTest('needs setpriv (util-linux) to become user nobody')
    if not nobody_tmp():
        raise unittest.SkipTest('no directory user nobody can reach and execute from ($TMPDIR, /tmp, /var/tmp, '
                                '/dev/shm: each is out of reach or mounted noexec)')


def _installed(var, fallback_rel):
    """An installed file's path relative to the configured prefix (what an
    installed mfu-record looks for relative to itself: paths.c), from the
    MFU_INSTALLED_* paths tests/e2e/meson.build sets; None if it is outside
    the prefix (then a moved copy cannot find it)."""
    prefix = os.environ.get('MFU_INSTALLED_PREFIX')
    path = os.environ.get(var)
    if not prefix or not path:
        return fallback_rel
    rel = os.path.relpath(path, prefix)
    return None if rel.startswith('..') else rel


def _copy(src, dst):
    """@src (a file or a directory) to @dst, modes kept, readable by all. In a
    directory, a link to an absolute path stays a link (the emulator's tool
    directory links the system's Valgrind tools); a relative one is copied
    as what it points to."""
    os.makedirs(os.path.dirname(dst), mode=0o755, exist_ok=True)
    if os.path.isdir(src):
        os.makedirs(dst, mode=0o755, exist_ok=True)
        for name in sorted(os.listdir(src)):
            s, d = os.path.join(src, name), os.path.join(dst, name)
            if os.path.islink(s) and os.path.isabs(os.readlink(s)):
                os.symlink(os.readlink(s), d)
            elif os.path.isdir(s):
                if not name.endswith('.p') and name != '__pycache__':  # meson's object dirs
                    _copy(s, d)
            elif os.path.exists(s):
                shutil.copy2(s, d)
    else:
        shutil.copy2(src, dst)
        os.chmod(dst, os.stat(dst).st_mode | 0o444)
    for d, dirs, files in os.walk(dst):
        os.chmod(d, 0o755)
        for f in files:
            p = os.path.join(d, f)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode | 0o444)


class NobodyCopies(dict):
    """{original path: its copy} (see nobody_reachable()); .dir is the
    directory of the copies, .env the environment that points mfu.py and the
    e2e variables at them."""


def nobody_reachable(test, paths):
    """Copies of @paths that user nobody can execute and read, for a test
    that runs them as nobody: a directory of mode 0755 made under
    nobody_tmp() and removed when @test ends. Returns a NobodyCopies
    {path: copy}. Skips @test (saying why) where no such directory exists.

    What nobody executes or reads comes along with what is named:
    - a file of the build tree (a workload, a plugin) is copied to the same
      place relative to the build directory, under DIR/build, with libmfu
      and the counting library (src/lib): the workloads find libmfu by a
      RUNPATH relative to themselves ($ORIGIN/../../src/lib);
    - a file or directory of the source tree (the Python module's
      directory, a script) likewise under DIR/src;
    - the recorder (MFU_RECORD) is copied as an installed copy moved to
      DIR/inst: mfu-record in its bin directory, mfu-calibrate beside it,
      the counting library, libmfu, the Python module and hook and the
      emulator's tool directory where an installed mfu-record looks for
      them relative to itself (src/record/target/paths.c): the build
      tree's recorder names its files by their absolute build paths.
    .env: MFU_PYTHON_DIR (which the recorder prefers to its own) and
    MFU_LIBRARY (the libmfu mfu.py loads) name the copies, MFU_EMULATE_LIB
    too when the emulator is copied."""
    skip_unless_nobody()
    top = tempfile.mkdtemp(prefix='mfu-nobody-', dir=nobody_tmp())
    test.addCleanup(shutil.rmtree, top, True)
    os.chmod(top, 0o755)
    build = os.path.realpath(os.environ.get('MFU_BUILDDIR') or
                             os.path.join(os.path.dirname(prog('MFU_LIBMFU')), '..', '..'))
    src = os.path.realpath(SRCDIR)
    libdir = os.path.dirname(prog('MFU_LIBMFU'))
    out = NobodyCopies()
    out.dir = top
    out.env = dict(os.environ)

    def mirrored(path):
        real = os.path.realpath(path)
        for root, under in ((build, 'build'), (src, 'src')):
            if real == root or real.startswith(root + os.sep):
                return os.path.join(top, under, os.path.relpath(real, root))
        return os.path.join(top, 'other', os.path.basename(real))

    def lib_copies():
        dst = mirrored(libdir)
        if not os.path.exists(dst):
            os.makedirs(dst, mode=0o755)
            for name in os.listdir(libdir):
                if name.startswith('libmfu') and not name.endswith('.p'):
                    s = os.path.join(libdir, name)
                    if os.path.islink(s):
                        os.symlink(os.readlink(s), os.path.join(dst, name))
                    else:
                        _copy(s, os.path.join(dst, name))
        return dst

    record = prog('MFU_RECORD')
    for path in paths:
        if path in out:
            continue
        if os.path.realpath(path) == os.path.realpath(record):
            rel = {k: _installed(var, dflt) for k, var, dflt in (
                ('bin', 'MFU_INSTALLED_BINDIR', 'bin'),
                ('lib', 'MFU_INSTALLED_LIBDIR', 'lib'),
                ('data', 'MFU_INSTALLED_DATADIR', 'share'))}
            if None in rel.values():
                test.skipTest('this build installs outside its prefix: a moved copy of mfu-record cannot '
                              'find its files')
            inst = os.path.join(top, 'inst')
            out[path] = os.path.join(inst, rel['bin'], 'mfu-record')
            _copy(record, out[path])
            if os.environ.get('MFU_CALIBRATE'):
                _copy(prog('MFU_CALIBRATE'), os.path.join(inst, rel['bin'], 'mfu-calibrate'))
            _copy(prog('MFU_LIBFLOPS_SO'), os.path.join(inst, rel['lib'], 'mfu', 'libmfu-libflops.so'))
            _copy(prog('MFU_LIBMFU'), os.path.join(inst, rel['lib'], 'libmfu.so.0'))
            pydir = os.path.join(inst, rel['data'], 'mfu', 'python')
            _copy(prog('MFU_PYTHON_DIR'), pydir)
            out.env['MFU_PYTHON_DIR'] = pydir
            out[prog('MFU_PYTHON_DIR')] = pydir
            if os.environ.get('MFU_EMULATE_LIB'):
                emu = os.path.join(inst, rel['lib'], 'mfu', 'valgrind')
                _copy(prog('MFU_EMULATE_LIB'), emu)
                out.env['MFU_EMULATE_LIB'] = emu
                out[prog('MFU_EMULATE_LIB')] = emu
            continue
        dst = mirrored(path)
        if not os.path.exists(dst):
            _copy(path, dst)
        out[path] = dst
        if dst.startswith(os.path.join(top, 'build') + os.sep):
            lib_copies()
        if os.path.realpath(path) == os.path.realpath(prog('MFU_PYTHON_DIR')):
            out.env['MFU_PYTHON_DIR'] = dst
        if os.environ.get('MFU_EMULATE_LIB') and os.path.realpath(path) == os.path.realpath(
                prog('MFU_EMULATE_LIB')):
            out.env['MFU_EMULATE_LIB'] = dst
    out.env['MFU_LIBRARY'] = os.path.join(lib_copies(), os.path.basename(os.path.realpath(prog('MFU_LIBMFU'))))
    for path, dst in out.items():
        flag = '-r' if os.path.isdir(path) or not os.access(path, os.X_OK) else '-x'
        if subprocess.run(as_nobody(['test', flag, dst])).returncode != 0:
            test.fail('user nobody cannot reach the copy %s of %s' % (dst, path))
    return out


class TempDirTest(unittest.TestCase):
    def setUp(self):
        # under a directory user nobody can reach, where there is one: some
        # tests run programs as nobody that write here
        self._tmp = tempfile.TemporaryDirectory(prefix='mfu-test-', dir=nobody_tmp())
        self.dir = self._tmp.name
        os.chmod(self.dir, 0o777)

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)


def sql_statements(text):
    """The statements of @text (mfu-report --sql's output: the views, then
    the section's SELECT), each whole, as sqlite3 reads them."""
    out, start = [], 0
    for i, c in enumerate(text):
        if c == ';' and sqlite3.complete_statement(text[start:i + 1]):
            out.append(text[start:i + 1])
            start = i + 1
    tail = '\n'.join(line for line in text[start:].splitlines() if not line.lstrip().startswith('--'))
    if tail.strip():
        out.append(text[start:])   # a last statement without its ';'
    return out


def run_sql(con, text, args=()):
    """Run mfu-report --sql's output on @con as sqlite3 does: every statement
    in order; returns the cursor of the last one (the section's rows)."""
    stmts = sql_statements(text)
    for s in stmts[:-1]:
        con.execute(s)
    return con.execute(stmts[-1], args)


def section_verdict(text):
    """A table-format section's verdict paragraph (the lines under its
    title, indented two spaces and wrapped at 99 columns) as one line, and
    the lines after it: (verdict, [grid lines...])."""
    lines = text.splitlines()
    i = 1
    while i < len(lines) and lines[i].startswith('  '):
        i += 1
    return ' '.join(l.strip() for l in lines[1:i]), lines[i:]
