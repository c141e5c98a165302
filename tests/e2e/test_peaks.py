"""Peaks end to end: --peak auto and the first calibration, the target's own
CPUs (taskset, -p), impossible utilizations, and unknown model bytes."""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from mfutest import SANITIZED, TempDirTest, _hypervisor, prog, query, record  # noqa: E402


def wl(name):
    return prog('MFU_WL_' + name.upper())


def online_cpus():
    return len(os.sched_getaffinity(0))


def best(rows, source, kind='flops', dtype='fp32', scope='all'):
    for r in rows:
        if (r['source'], r['kind'], r['scope']) == (source, kind, scope) and \
                (kind != 'flops' or r['dtype'] == dtype):
            return r
    return None


class AutoPeak(TempDirTest):
    """The first recording on a machine calibrates it once; later ones reuse
    the profile; auto takes the higher of spec and measured."""

    def env(self, **kw):
        env = dict(os.environ, XDG_CACHE_HOME=self.path('cache'))
        env.pop('MFU_NO_CALIBRATE', None)
        env.update(kw)
        return env

    @unittest.skipIf(SANITIZED, 'calibrating under a sanitizer takes minutes')
    def test_first_run_calibrates_then_reuses(self):
        db = self.path('run.sqlite')
        # (how long the quick calibration takes: tests/bench/bench_calibrate.py)
        p = record(['-o', db], [wl('steps'), '--steps', '2'], env=self.env(), timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('has not been calibrated yet', p.stderr)
        self.assertIn('--no-calibrate', p.stderr)
        profiles = os.listdir(os.path.join(self.path('cache'), 'mfu'))
        self.assertEqual(len([f for f in profiles if f.startswith('profile')]), 1, profiles)

        run = query(db, 'SELECT * FROM run')[0]
        self.assertEqual(run['peak_mode'], 'auto')
        peaks = query(db, 'SELECT * FROM peak')
        spec, meas = best(peaks, 'spec'), best(peaks, 'measured')
        if meas is None:
            # a busy machine (other tests, other users): every fp32 figure
            # was disturbed, and a disturbed figure is never a peak; the
            # run says so and uses the spec
            prof = [os.path.join(self.path('cache'), 'mfu', f) for f in profiles][0]
            rows = query(prof, "SELECT * FROM measurement WHERE kind = 'flops' AND dtype = 'fp32'")
            self.assertTrue(rows and all(r['disturbed'] for r in rows), rows)
            note = query(db, "SELECT text FROM note WHERE kind = 'profile'")
            self.assertTrue(note and "re-measure on a quiet machine with 'mfu-calibrate'" in note[0]['text'],
                            note)
            self.assertIsNotNone(spec)
            meas = spec
        want = max(r['value'] for r in (spec, meas) if r)
        self.assertEqual(run['peak_flops'], want)
        winner = 'measured' if meas['value'] > (spec['value'] if spec else 0) else 'spec'
        self.assertTrue(run['peak_flops_source'].startswith(winner), run['peak_flops_source'])
        self.assertIn('auto', run['peak_flops_source'])
        if spec and meas is not spec:
            self.assertIn('%.2fx' % (meas['value'] / spec['value']), run['peak_flops_source'])
        self.assertGreater(run['clock_hz'] or 0, 1e8)  # the profile's measured clock

        p = record(['-o', db], [wl('steps'), '--steps', '2'], env=self.env())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn('calibrated', p.stderr)
        # (a profile whose fp32 figures were all disturbed is measured again
        # once the machine is quiet: then the peak is the new one)
        if 'measuring its peaks again' not in p.stderr:
            self.assertEqual(query(db, 'SELECT peak_flops FROM run')[0]['peak_flops'], want)

    def test_no_calibrate(self):
        db = self.path('run.sqlite')
        for args, env in ((['--no-calibrate'], self.env()), ([], self.env(MFU_NO_CALIBRATE='1')),
                          (['--peak', 'spec'], self.env())):
            p = record(['-o', db] + args, [wl('steps'), '--steps', '1'], env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            # no calibration started, nor said to start (the summary at the
            # end may still advise running mfu-calibrate)
            self.assertNotIn('not been calibrated', p.stderr, args)
            self.assertNotIn('calibration', p.stderr, args)
            self.assertFalse(os.path.exists(os.path.join(self.path('cache'), 'mfu')), args)
            run = query(db, 'SELECT * FROM run')[0]
            self.assertIsNone(query(db, "SELECT * FROM peak WHERE source = 'measured'") or None)
            if run['peak_flops'] is not None:
                self.assertTrue(run['peak_flops_source'].startswith('spec'), run['peak_flops_source'])

    def test_measured_without_a_profile_says_so(self):
        """--peak measured on a machine never calibrated: one plain line
        that the spec is used and what to do; the run's sources say it."""
        db = self.path('run.sqlite')
        p = record(['-o', db, '--no-calibrate', '--peak', 'measured'], [wl('steps'), '--steps', '1'],
                   env=self.env())
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = [l for l in p.stderr.splitlines() if '--peak measured, but' in l]
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn('this machine has no measured peaks (no profile at ', lines[0])
        self.assertIn('MFU, HFU and MBU use the spec peaks instead; run mfu-calibrate', lines[0])
        run = query(db, 'SELECT * FROM run')[0]
        self.assertEqual(run['peak_mode'], 'measured')
        if run['peak_flops'] is not None:
            self.assertIn('--peak measured asked for a measured peak, and there is none',
                          run['peak_flops_source'])

    def test_peak_mode_usage(self):
        p = record(['-o', self.path('r.sqlite'), '--peak', 'best'], ['true'])
        self.assertEqual(p.returncode, 2)
        self.assertIn("expected 'auto', 'spec' or 'measured'", p.stderr)

    def test_measured_far_above_spec_is_said(self):
        """A profile whose measured peak is 3x the spec (a masked CPU model):
        auto uses it and names the ratio in its source and the report's
        notes; a recording that did not measure it does not say it again
        on stderr (the same every run, and nothing the user can change)."""
        mk = self.path('mk.sqlite')
        p = record(['-o', mk, '--no-calibrate', '--peak', 'spec'], [wl('steps'), '--steps', '1'])
        self.assertEqual(p.returncode, 0, p.stderr)
        spec = best(query(mk, 'SELECT * FROM peak'), 'spec')
        if spec is None:
            self.skipTest('no fp32 spec peak is known for this CPU')
        cal = prog('MFU_CALIBRATE')
        prof = self.path('prof.sqlite')
        p = subprocess.run([cal, '--quick', '--profile', prof], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        con = sqlite3.connect(prof)
        with con:
            # (undisturbed, whatever else ran on the machine meanwhile)
            con.execute("UPDATE measurement SET value = ?, disturbed = 0, cpu_share = 1 "
                        "WHERE kind = 'flops' AND dtype = 'fp32' AND scope = 'all' AND best = 1",
                        (spec['value'] * 3,))
        con.close()
        db = self.path('run.sqlite')
        p = record(['-o', db, '--profile', prof], [wl('steps'), '--steps', '1'])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn('is 3.00x the spec peak', p.stderr)
        notes = subprocess.run([prog('MFU_REPORT'), '--db', db, 'notes'], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        self.assertIn('3.00x the spec', notes.stdout, notes.stderr)
        run = query(db, 'SELECT * FROM run')[0]
        self.assertAlmostEqual(run['peak_flops'] / spec['value'], 3.0, places=6)
        self.assertTrue(run['peak_flops_source'].startswith('measured (auto: 3.00x the spec peak'),
                        run['peak_flops_source'])


def calibrate(args, env=None, timeout=300):
    return subprocess.run([prog('MFU_CALIBRATE')] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout, env=env)


def profile_rows(path):
    return {(r['kind'], r['dtype'], r['scope'], r['kernel'].replace('_nt', ''), r['cpus']): r
            for r in query(path, 'SELECT * FROM measurement')}


@unittest.skipIf(SANITIZED, 'calibrating under a sanitizer takes minutes')
class DisturbedCalibration(TempDirTest):
    """Issue 24 item 6: a calibration run beside CPU-bound jobs on every
    CPU never lowers the ceiling a later recording uses. The profile keeps
    the earlier undisturbed figures in place of the disturbed ones, and the
    later recording says what happened."""

    def spin(self, n):
        procs = [subprocess.Popen(['sh', '-c', 'while :; do :; done']) for _ in range(n)]
        self.addCleanup(self.stop, procs)
        return procs

    @staticmethod
    def stop(procs):
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()

    def test_busy_calibration_keeps_the_earlier_figures(self):
        prof = self.path('profile.sqlite')
        p = calibrate(['--quick', '--profile', prof])
        self.assertEqual(p.returncode, 0, p.stderr)
        # Whatever else ran meanwhile (other tests), these are the earlier
        # figures, taken as undisturbed: what the busy calibration must not
        # lower. (The profile's rule is tested with fake figures in
        # tests/unit/test_profile.c; this is the programs end to end.)
        con = sqlite3.connect(prof)
        with con:
            con.execute('UPDATE measurement SET disturbed = 0, cpu_share = 1')
        con.close()
        before = profile_rows(prof)

        db1 = self.path('before.sqlite')
        p = record(['-o', db1, '--profile', prof], [wl('steps'), '--steps', '2'])
        self.assertEqual(p.returncode, 0, p.stderr)
        run1 = query(db1, 'SELECT * FROM run')[0]

        # two CPU-bound jobs per CPU: every thread of the calibration shares
        # its CPU (about a third of the time each)
        procs = self.spin(2 * online_cpus())
        try:
            p = calibrate(['--quick', '--format', 'json', '--profile', prof])
        finally:
            self.stop(procs)
        self.assertEqual(p.returncode, 0, p.stderr)
        fresh = json.loads(p.stdout)
        disturbed = [r for r in fresh if r['disturbed']]
        if not disturbed:
            self.skipTest('the spinning jobs disturbed no measurement (scheduler)')
        self.assertIn('other tasks shared the CPUs during %d of %d measurements' % (len(disturbed), len(fresh)),
                      p.stderr)
        self.assertIn('kept the earlier undisturbed figures', p.stderr)
        after = profile_rows(prof)
        cpus = run1['allowed_cpus']
        for r in disturbed:
            key = (r['kind'], r['dtype'], r['scope'], r['kernel'].replace('_nt', ''), cpus)
            self.assertIn(key, after)
            self.assertEqual(after[key]['value'], before[key]['value'], key)
            self.assertEqual(after[key]['disturbed'], 0, key)
            self.assertEqual(after[key]['calibration'], 1, key)
        cal = query(prof, 'SELECT * FROM calibration ORDER BY id')
        self.assertEqual(cal[-1]['disturbed'], len(disturbed))
        self.assertEqual(cal[-1]['kept'], len(disturbed))
        self.assertLess(cal[-1]['lowest_share'], 0.95)

        db2 = self.path('after.sqlite')
        p = record(['-o', db2, '--profile', prof], [wl('steps'), '--steps', '2'])
        self.assertEqual(p.returncode, 0, p.stderr)
        run2 = query(db2, 'SELECT * FROM run')[0]
        # the ceilings of the figures the busy calibration measured
        # undisturbed may move (a figure the threads ran undisturbed for is
        # as good as any); those it found disturbed stay as they were
        quiet = {(r['kind'], r['dtype'], r['scope']) for r in fresh if not r['disturbed']}
        if not quiet & {('flops', 'fp32', 'all'), ('flops', 'fp32', 'core')}:
            self.assertEqual(run2['peak_flops'], run1['peak_flops'])
            # the core clock is measured again each time and kept when
            # undisturbed: the source names the figure it has now
            def unclocked(src):
                return re.sub(r'measured \d+(\.\d+)? GHz', 'measured _ GHz', src)
            self.assertEqual(unclocked(run2['peak_flops_source']), unclocked(run1['peak_flops_source']))
        if not quiet & {('bandwidth', None, 'all'), ('bandwidth', None, 'core')}:
            self.assertEqual(run2['peak_bw'], run1['peak_bw'])
        # and it says what was done, on stderr and in the notes
        note = query(db2, "SELECT text FROM note WHERE kind = 'profile'")
        self.assertEqual(len(note), 1, query(db2, 'SELECT * FROM note'))
        self.assertIn("the machine profile's latest calibration", note[0]['text'])
        self.assertIn('was disturbed by other tasks in %d of its %d measurements' % (len(disturbed), len(fresh)),
                      note[0]['text'])
        self.assertIn('%d of those figures were not saved, the earlier undisturbed ones' % len(disturbed),
                      note[0]['text'])
        self.assertIn(note[0]['text'], p.stderr)
        self.assertNotIn('profile', ' '.join(r['text'] for r in query(db1, "SELECT text FROM note")))

    def test_nothing_earlier_is_never_a_ceiling(self):
        """The first calibration is the busy one: its disturbed figures are
        saved flagged, never used, and the recording says how to
        re-measure."""
        prof = self.path('profile.sqlite')
        procs = self.spin(2 * online_cpus())
        try:
            p = calibrate(['--quick', '--format', 'json', '--profile', prof])
        finally:
            self.stop(procs)
        self.assertEqual(p.returncode, 0, p.stderr)
        fresh = json.loads(p.stdout)
        if not any(r['disturbed'] for r in fresh):
            self.skipTest('the spinning jobs disturbed no measurement (scheduler)')
        self.assertIn('saved marked disturbed, which mfu-record never uses as a peak', p.stderr)
        # the figures the recording would have taken, had it trusted them:
        # fp32 and the triad, disturbed and above any undisturbed one
        relevant = []
        for kind, dtype, scope in (('flops', 'fp32', 'core'), ('flops', 'fp32', 'all'),
                                   ('bandwidth', None, 'core'), ('bandwidth', None, 'all')):
            group = [r for r in fresh if (r['kind'], r['dtype'], r['scope']) == (kind, dtype, scope)
                     and (kind == 'flops' or r['kernel'].startswith('triad'))]
            bad = [r['value'] for r in group if r['disturbed']]
            good = [r['value'] for r in group if not r['disturbed']]
            if bad and (not good or max(bad) > max(good)):
                relevant.append((kind, scope))
        db = self.path('run.sqlite')
        p = record(['-o', db, '--profile', prof], [wl('steps'), '--steps', '2'])
        self.assertEqual(p.returncode, 0, p.stderr)
        used = {r['value'] for r in query(db, 'SELECT value FROM peak')}
        run = query(db, 'SELECT * FROM run')[0]
        for r in fresh:
            if r['disturbed']:
                self.assertNotIn(r['value'], used, r)
                self.assertNotEqual(run['peak_flops'], r['value'])
                self.assertNotEqual(run['peak_bw'], r['value'])
        note = query(db, "SELECT text FROM note WHERE kind = 'profile'")
        if relevant:
            self.assertEqual(len(note), 1, relevant)
            self.assertIn('measured while other tasks ran, which are never used as peaks', note[0]['text'])
            self.assertIn("re-measure on a quiet machine with 'mfu-calibrate'", note[0]['text'])
            self.assertIn(note[0]['text'], p.stderr)
        else:
            self.assertEqual(note, [])


class TargetCpus(TempDirTest):
    """The peaks are for the CPUs the target may use, not the recorder's.
    An empty cache: no profile of this host, so the spec peaks stand."""

    def setUp(self):
        super().setUp()
        self.env = dict(os.environ, XDG_CACHE_HOME=self.path('cache'))

    @unittest.skipIf(not shutil.which('taskset'), 'no taskset')
    def test_taskset_one_cpu(self):
        if online_cpus() < 2:
            self.skipTest('one CPU online: nothing narrower to test')
        db = self.path('run.sqlite')
        cpu = sorted(os.sched_getaffinity(0))[-1]
        p = record(['-o', db, '--no-calibrate'],
                   ['taskset', '-c', str(cpu), wl('steps'), '--steps', '3', '--flops', '1000000'], env=self.env)
        self.assertEqual(p.returncode, 0, p.stderr)
        run = query(db, 'SELECT * FROM run')[0]
        self.assertEqual(run['allowed_cpus'], str(cpu))
        self.assertEqual(run['ncpu'], 1)
        self.assertEqual(run['ncores'], 1)
        self.assertTrue('first step' in run['cpus_source'] or 'when it ended' in run['cpus_source'],
                        run['cpus_source'])
        self.assertIn('the target runs on CPUs %d' % cpu, p.stderr)

    @unittest.skipIf(not shutil.which('taskset'), 'no taskset')
    def test_taskset_short_program(self):
        """Over before the recorder's first look: read from the zombie."""
        if online_cpus() < 2:
            self.skipTest('one CPU online')
        db = self.path('run.sqlite')
        cpu = sorted(os.sched_getaffinity(0))[0]
        p = record(['-o', db, '--no-calibrate'], ['taskset', '-c', str(cpu), wl('steps'), '--steps', '1'],
                   env=self.env)
        self.assertEqual(p.returncode, 0, p.stderr)
        run = query(db, 'SELECT * FROM run')[0]
        self.assertEqual((run['allowed_cpus'], run['ncpu']), (str(cpu), 1), run['cpus_source'])
        one = query(db, "SELECT value FROM peak WHERE source = 'spec' AND kind = 'flops' "
                        "AND dtype = 'fp32' AND scope = 'core'")
        if one:
            self.assertAlmostEqual(run['peak_flops'], one[0]['value'], delta=one[0]['value'] * 1e-9)
            self.assertIn(' 1 core', run['peak_flops_source'])

    @unittest.skipIf(SANITIZED, 'calibrating under a sanitizer takes minutes')
    def test_bandwidth_of_a_slice(self):
        """Issue 24 item 5: memory bandwidth is the socket's, shared. A
        target on one CPU of several (taskset) divides MBU by what one CPU
        was measured to reach, not by the socket's spec; on a VM the whole
        set of vCPUs is a slice too and gets its own measured figure. The
        source says which and why, with the spec beside it."""
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2 and not _hypervisor():
            self.skipTest('one CPU on bare metal: no slice to make')
        prof = self.path('profile.sqlite')
        p = calibrate(['--quick', '--profile', prof], env=self.env)
        self.assertEqual(p.returncode, 0, p.stderr)
        # whatever else ran meanwhile: the figures are taken as undisturbed
        con = sqlite3.connect(prof)
        with con:
            con.execute("UPDATE measurement SET disturbed = 0, cpu_share = 1 WHERE kind = 'bandwidth'")
        con.close()
        bw = {r['scope']: r['value'] for r in
              query(prof, "SELECT scope, value FROM measurement WHERE kind = 'bandwidth' AND best = 1")}
        if len(cpus) >= 2 and shutil.which('taskset'):
            db = self.path('one.sqlite')
            p = record(['-o', db, '--profile', prof], ['taskset', '-c', str(cpus[-1]), wl('steps'), '--steps', '2'],
                       env=self.env)
            self.assertEqual(p.returncode, 0, p.stderr)
            run = query(db, 'SELECT * FROM run')[0]
            self.assertEqual(run['ncpu'], 1)
            self.assertEqual(run['peak_bw'], bw['core'])
            src = run['peak_bw_source']
            self.assertTrue(src.startswith("measured (auto: memory bandwidth is shared by a socket, and the "
                                           "target's CPUs are a slice of theirs: "), src)
            self.assertIn("one thread's ", src)
            self.assertIn('measured alone on one CPU (the target\'s CPUs are %d, 1 CPU)' % cpus[-1], src)
            # the profile's figure of all the CPUs, which hold this one, is
            # kept beside it for a job's host ceiling (docs/ranks.md)
            allcpus = query(prof, "SELECT cpus FROM measurement WHERE kind = 'bandwidth' AND scope = 'all' "
                                  "AND best = 1")[0]['cpus']
            machine = query(db, "SELECT value, detail FROM peak WHERE scope = 'machine'")
            self.assertEqual(len(machine), 1, machine)
            self.assertEqual(machine[0]['value'], bw['all'])
            self.assertTrue(machine[0]['detail'].startswith('CPUs %s (%d threads together; the target\'s CPUs %d '
                                                            'are among them): ' % (allcpus, len(cpus), cpus[-1])),
                            machine[0]['detail'])
            spec = best(query(db, 'SELECT * FROM peak'), 'spec', kind='bandwidth')
            if spec:
                self.assertIn("not the socket's spec of", src)
                self.assertIn('(package', spec['detail'])
            # the notes say which peak MBU divides by, and why
            notes = query(db, "SELECT text FROM note")  # (the recorder's)
            p = subprocess.run([prog('MFU_REPORT'), '--db', db, 'notes', '-f', 'json'], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=60)
            texts = [n['text'] for n in json.loads(p.stdout) if n['kind'] == 'peak_bw']
            self.assertEqual(len(texts), 1, notes)
            self.assertIn(src, texts[0])
        if _hypervisor():
            db = self.path('all.sqlite')
            p = record(['-o', db, '--profile', prof], [wl('steps'), '--steps', '2'], env=self.env)
            self.assertEqual(p.returncode, 0, p.stderr)
            run = query(db, 'SELECT * FROM run')[0]
            self.assertEqual(run['peak_bw'], bw['all'])
            self.assertIn('a virtual machine (cpuid hypervisor bit)', run['peak_bw_source'])

    def test_whole_affinity_when_unrestricted(self):
        db = self.path('run.sqlite')
        p = record(['-o', db, '--no-calibrate'], [wl('steps'), '--steps', '2'], env=self.env)
        self.assertEqual(p.returncode, 0, p.stderr)
        run = query(db, 'SELECT * FROM run')[0]
        self.assertEqual(run['ncpu_affinity'], online_cpus())
        self.assertNotIn('the target runs on CPUs', p.stderr)
        self.assertIn("the target's", run['cpus_source'])

    def test_target_in_its_own_cgroup(self):
        """The target moves itself into a cgroup with a quota of half a CPU
        before its first step: the peaks are for 0.5 CPUs, the recorder's
        own cgroup has none."""
        base = None
        for d in ('/sys/fs/cgroup/cpu', '/sys/fs/cgroup/cpu,cpuacct'):
            if os.path.exists(os.path.join(d, 'cpu.cfs_quota_us')):
                base = d
                break
        if base is None or os.geteuid() != 0:
            self.skipTest('needs root and a cgroup v1 cpu controller to make a cgroup')
        cg = os.path.join(base, 'mfu-test-%d' % os.getpid())
        try:
            os.mkdir(cg)
        except OSError as e:
            self.skipTest('cannot create a cgroup: %s' % e)
        try:
            with open(os.path.join(cg, 'cpu.cfs_period_us'), 'w') as f:
                f.write('100000')
            with open(os.path.join(cg, 'cpu.cfs_quota_us'), 'w') as f:
                f.write('50000')
            db = self.path('run.sqlite')
            script = 'echo $$ > %s/cgroup.procs && exec %s --steps 5 --busy-us 20000' % (cg, wl('steps'))
            p = record(['-o', db, '--no-calibrate'], ['sh', '-c', script], env=self.env)
            self.assertEqual(p.returncode, 0, p.stderr)
            run = query(db, 'SELECT * FROM run')[0]
            self.assertAlmostEqual(run['cpu_quota'], 0.5)
            self.assertAlmostEqual(run['ncpu'], 0.5)
            self.assertAlmostEqual(run['ncores'], 0.5)
            one = query(db, "SELECT value FROM peak WHERE source = 'spec' AND kind = 'flops' "
                            "AND dtype = 'fp32' AND scope = 'core'")
            if one:
                self.assertAlmostEqual(run['peak_flops'], 0.5 * one[0]['value'], delta=one[0]['value'] * 1e-9)
        finally:
            for _ in range(50):
                try:
                    os.rmdir(cg)
                    break
                except OSError:
                    time.sleep(0.05)  # the process is still leaving it

    def test_attached_process_cpus(self):
        if online_cpus() < 2:
            self.skipTest('one CPU online')
        if os.geteuid() != 0:
            self.skipTest('attaching needs ptrace rights here (root)')
        cpu = sorted(os.sched_getaffinity(0))[0]
        proc = subprocess.Popen([wl('steps'), '--forever', '--busy-us', '2000'],
                                preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
        try:
            time.sleep(0.2)
            db = self.path('run.sqlite')
            p = subprocess.run([prog('MFU_RECORD'), '-o', db, '--no-calibrate', '-p', str(proc.pid),
                                '--duration', '0.3'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, timeout=60, env=self.env)
            self.assertEqual(p.returncode, 0, p.stderr)
            run = query(db, 'SELECT * FROM run')[0]
            self.assertEqual(run['allowed_cpus'], str(cpu))
            self.assertEqual(run['ncpu'], 1)
        finally:
            proc.kill()
            proc.wait()


class DtypeAtReport(TempDirTest):
    """mfu-report --dtype: the recording stores, for each dtype, the peak its
    --peak mode picks (peak rows of scope 'choice'); the report divides by
    the one asked for. Checked against a second recording made with
    mfu-record --dtype fp64 on the same machine and profile (none: the spec
    rows, deterministic), and against the MFU worked out by hand."""

    def rec(self, name, *args):
        db = self.path(name)
        env = dict(os.environ, XDG_CACHE_HOME=self.path('cache'))
        p = record(['-o', db, '--no-calibrate'] + list(args),
                   [wl('steps'), '--steps', '4', '--busy-us', '2000', '--flops', '1000000000'], env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        return db

    def report_json(self, db, *args):
        p = subprocess.run([prog('MFU_REPORT'), '--db', db, '--format', 'json'] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def test_another_dtype_s_peak(self):
        fp32 = self.rec('fp32.sqlite', '--dtype', 'fp32')
        fp64 = self.rec('fp64.sqlite', '--dtype', 'fp64')
        choice = {r['dtype']: r for r in query(fp32, "SELECT * FROM peak WHERE scope = 'choice'")}
        run32 = query(fp32, 'SELECT peak_flops, peak_flops_source FROM run')[0]
        run64 = query(fp64, 'SELECT peak_flops, peak_flops_source FROM run')[0]
        # the run's own dtype's choice is its peak
        if run32['peak_flops'] is None:
            self.assertNotIn('fp32', choice)
        else:
            self.assertEqual(choice['fp32']['value'], run32['peak_flops'])
            self.assertEqual(choice['fp32']['detail'], run32['peak_flops_source'][:639])
        # another dtype's choice is what recording with it picks
        if run64['peak_flops'] is None:
            self.assertNotIn('fp64', choice)
        else:
            self.assertEqual(choice['fp64']['value'], run64['peak_flops'])
            self.assertEqual(choice['fp64']['detail'], run64['peak_flops_source'][:639])
            self.assertEqual(choice['fp64']['source'], 'spec')
        out = self.report_json(fp32, '--dtype', 'fp64', 'summary', 'steps', 'notes')
        s = out['summary'][0]
        self.assertEqual(s['dtype'], 'fp64')
        if run64['peak_flops'] is None:
            self.assertIsNone(s['mfu'])
            note = [n['text'] for n in out['notes'] if n['kind'] == 'peak_flops'][0]
            self.assertIn('this recording holds no fp64 FLOP/s peak', note)
            return
        self.assertEqual(s['peak_flops'], run64['peak_flops'])
        self.assertTrue(s['peak_source'].startswith('--dtype fp64 (recorded with fp32): '), s['peak_source'])
        steps = query(fp32, 'SELECT step, wall_ns, model_flops FROM step WHERE complete = 1 ORDER BY step')
        self.assertEqual(len(out['steps']), len(steps))
        for got, st in zip(out['steps'], steps):
            want = st['model_flops'] / (st['wall_ns'] / 1e9 * run64['peak_flops'])
            self.assertAlmostEqual(got['mfu'], want, delta=1e-12 * want)
        want = sum(st['model_flops'] for st in steps) / (sum(st['wall_ns'] for st in steps) / 1e9
                                                          * run64['peak_flops'])
        self.assertAlmostEqual(s['mfu'], want, delta=1e-12 * want)

    def test_user_peak_and_refusals(self):
        db = self.rec('user.sqlite', '--peak-flops', '3T')
        choice = query(db, "SELECT * FROM peak WHERE scope = 'choice' AND dtype = 'fp32'")
        self.assertEqual([(c['value'], c['source']) for c in choice], [(3e12, 'user')])
        # the run's own dtype: the recorded peak, --peak-flops included
        s = self.report_json(db, '--dtype', 'fp32', 'summary')[0]
        self.assertEqual((s['peak_flops'], s['peak_source']), (3e12, 'user: --peak-flops 3e+12'))
        # the peaks section leaves the choice rows out
        self.assertFalse([r for r in self.report_json(db, 'peaks') if r['scope'] == 'choice'])
        for args, msg in ((['--dtype', 'fp8'], "--dtype 'fp8': expected fp64, fp32, bf16, fp16 or int8"),
                          (['--db', db, '--dtype', 'fp64'], '--dtype reads one run'),
                          (['--dtype', 'fp64', 'job'], '--dtype reads one run')):
            p = subprocess.run([prog('MFU_REPORT'), '--db', db] + args, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=60)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(msg, p.stderr)


class Impossible(TempDirTest):
    def test_mfu_above_100_is_said(self):
        db = self.path('run.sqlite')
        p = record(['-o', db, '--no-calibrate', '--peak-flops', '1G'],
                   [wl('steps'), '--steps', '3', '--busy-us', '2000', '--flops', '1000000000'])
        self.assertEqual(p.returncode, 0, p.stderr)
        # 1e9 FLOPs in ~2 ms against 1 GFLOP/s: about 500x the peak
        self.assertIn('3 steps have MFU above 100%', p.stderr)
        self.assertNotIn('MBU above', p.stderr)

    def test_possible_is_silent(self):
        db = self.path('run.sqlite')
        p = record(['-o', db, '--no-calibrate', '--peak-flops', '1P'],
                   [wl('steps'), '--steps', '3', '--busy-us', '2000', '--flops', '1000000'])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn('above 100%', p.stderr)


class UnknownBytes(TempDirTest):
    def test_c_flops_only_step(self):
        db = self.path('run.sqlite')
        p = record(['-o', db, '--no-calibrate'], [wl('steps'), '--steps', '2', '--flops', '1000000'])
        self.assertEqual(p.returncode, 0, p.stderr)
        steps = query(db, 'SELECT * FROM step WHERE complete = 1')
        self.assertEqual(len(steps), 2)
        self.assertTrue(all(s['model_flops'] == 1e6 and s['model_bytes'] is None for s in steps), steps)
        self.assertEqual(query(db, 'SELECT COUNT(*) AS n FROM anomaly')[0]['n'], 0)

    def test_python_flops_only_step_and_phase(self):
        script = self.path('t.py')
        with open(script, 'w') as f:
            f.write(textwrap.dedent('''
                import mfu
                for i in range(2):
                    with mfu.step(flops=1000):
                        with mfu.phase("p", bytes=64):
                            pass
                with mfu.step():
                    mfu.step_model(bytes=8)
            '''))
        env = dict(os.environ, MFU_LIBRARY=prog('MFU_LIBMFU'), PYTHONPATH=os.environ.get('MFU_PYTHON_DIR', ''))
        db = self.path('run.sqlite')
        p = record(['-o', db, '--no-calibrate'], [sys.executable, script], env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        steps = query(db, 'SELECT model_flops, model_bytes FROM step ORDER BY step')
        self.assertEqual(steps, [{'model_flops': 1000.0, 'model_bytes': None}] * 2 +
                         [{'model_flops': None, 'model_bytes': 8.0}])
        phases = query(db, 'SELECT model_flops, model_bytes FROM phase')
        self.assertEqual(phases, [{'model_flops': None, 'model_bytes': 64.0}] * 2)
        self.assertEqual(query(db, 'SELECT COUNT(*) AS n FROM anomaly')[0]['n'], 0)

    def test_python_finds_the_recorders_libmfu(self):
        """No MFU_LIBRARY, no LD_LIBRARY_PATH: under mfu-record the module
        falls back to the recorder's own libmfu."""
        script = self.path('t.py')
        with open(script, 'w') as f:
            f.write('import mfu\nfor i in range(3):\n    with mfu.step(flops=10):\n        pass\n')
        env = dict(os.environ, PYTHONPATH=os.environ.get('MFU_PYTHON_DIR', ''))
        for k in ('MFU_LIBRARY', 'LD_LIBRARY_PATH'):
            env.pop(k, None)
        if 'libasan' in env.get('LD_PRELOAD', ''):
            self.skipTest('sanitizer build: the library needs its runtime preloaded')
        db = self.path('run.sqlite')
        p = record(['-o', db, '--no-calibrate'], [sys.executable, script], env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn('cannot load libmfu', p.stderr)
        self.assertEqual(len(query(db, 'SELECT * FROM step WHERE complete = 1')), 3)


if __name__ == '__main__':
    unittest.main(verbosity=2)
