"""Where step time goes (issue 4): samples and context switches recorded by
mfu-record, turned into breakdowns by the SQL in analyses/, checked against
the workloads' own clocks."""
import os
import re
import sqlite3
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from mfutest import (SRCDIR, VM_SLACK_NS, TempDirTest, as_nobody, nobody_reachable,  # noqa: E402
                     perf_event_paranoid, prog, query, read_clock, record, steal_ns)


def analysis(db, name):
    """Rows of analyses/NAME.sql on DB (as mfu-report runs it: over the
    views of analyses/views.sql, which a section reads its figures from)."""
    with open(os.path.join(SRCDIR, 'analyses', name + '.sql')) as f:
        sql = f.read()
    sql = re.sub(r'@(\w+)@', lambda m: open(os.path.join(SRCDIR, 'analyses', m.group(1) + '.sql'))
                 .read().strip().rstrip(';'), sql)
    return query(db, sql, views=True)


def read_truth(path):
    """mix's own readings per step: compute, dispatch, sleep, pause, user (ns)."""
    out = {}
    with open(path) as f:
        for line in f:
            s, c, d, sl, p, u = (int(x) for x in line.split())
            out[s] = dict(compute=c, dispatch=d, sleep=sl, pause=p, user=u)
    return out


def wl(name):
    return prog('MFU_WL_' + name.upper())


class Sampling(TempDirTest):
    def test_known_sleep_is_a_blocked_gap_in_its_phase(self):
        db, truth = self.path('run.sqlite'), self.path('truth.txt')
        p = record(['-o', db], [wl('mix'), '--steps', '6', '--sleep-ms', '20', '--compute-ms', '5',
                                '--dispatch-ms', '2', '--truth', truth])
        self.assertEqual(p.returncode, 0, p.stderr)
        own = read_truth(truth)
        gaps = [g for g in analysis(db, 'gaps') if g['kind'] == 'blocked']
        by_step = {}
        for g in gaps:
            by_step.setdefault(g['step'], []).append(g)
        self.assertEqual(sorted(by_step), list(range(6)))
        for step, gs in by_step.items():
            big = max(gs, key=lambda g: g['dur_ms'])
            self.assertAlmostEqual(big['dur_ms'], own[step]['sleep'] / 1e6, delta=0.1 * 20, msg=big)
            self.assertEqual(big['phase'], 'load')
            self.assertIn('nanosleep', big['where'] or '')
        bd = {r['step']: r for r in analysis(db, 'breakdown')}
        for step in range(6):
            self.assertAlmostEqual(bd[step]['blocked_ms'], own[step]['sleep'] / 1e6, delta=2.0)
            parts = [bd[step][k] for k in ('blocked_ms', 'runnable_ms', 'kernel_ms', 'sync_ms', 'dispatch_ms',
                                           'unclassified_ms', 'compute_ms')]
            if None not in parts:
                self.assertAlmostEqual(sum(parts), bd[step]["wall_ms"], delta=1e-3)

    def shares(self, db, own):
        """On-CPU shares of each class, from the breakdown and from mix's clocks."""
        rows = analysis(db, 'breakdown')
        got = {k: sum(r[k + '_ms'] or 0 for r in rows) for k in ('compute', 'dispatch', 'unclassified', 'kernel', 'sync')}
        oncpu = sum(got.values())
        true = {k: sum(o[k] for o in own.values()) / 1e6 for k in ('compute', 'dispatch', 'user')}
        total = sum(true.values())
        self.assertGreater(sum(r['samples'] for r in rows), 1000)
        return {k: v / oncpu for k, v in got.items()}, {k: v / total for k, v in true.items()}

    def test_code_classes(self):
        """Compute kernels, runtime layers (libc's memcpy) and the program's own
        code each get their class: own code is not dispatch (issue 11)."""
        db, truth = self.path('run.sqlite'), self.path('truth.txt')
        p = record(['-o', db], [wl('mix'), '--steps', '20', '--sleep-ms', '0', '--compute-ms', '40',
                                '--dispatch-ms', '20', '--user-ms', '20', '--truth', truth])
        self.assertEqual(p.returncode, 0, p.stderr)
        got, true = self.shares(db, read_truth(truth))
        # shares of on-CPU time within 5 points of the workload's own clocks
        self.assertAlmostEqual(got['compute'], true['compute'], delta=0.05)
        self.assertAlmostEqual(got['dispatch'], true['dispatch'], delta=0.05)
        self.assertAlmostEqual(got['unclassified'], true['user'], delta=0.05)
        self.assertLess(got['sync'], 0.01)
        # the top symbols name the functions that decided each class
        disp = analysis(db, 'dispatch')
        top = {d['class']: d for d in disp if d['rank'] == 1 and d['phase'] == 'compute'}
        self.assertEqual(top['compute']['symbol'], 'toy_sgemm')
        # under ASan the copies run in its runtime (interceptors, shadow checks)
        self.assertRegex(top['dispatch']['symbol'] + ' ' + (top['dispatch']['dso'] or ''),
                         r'mem(cpy|move)|libasan' if os.environ.get('MFU_SANITIZED') else r'mem(cpy|move)')
        self.assertEqual(top['unclassified']['symbol'], 'toy_user')
        # classes are stored per symbol for SQL users
        self.assertEqual(query(db, "SELECT DISTINCT class FROM symbol WHERE name = 'toy_user'"), [{'class': 'user'}])
        self.assertEqual(query(db, "SELECT DISTINCT class FROM symbol WHERE name = 'toy_sgemm'"), [{'class': 'compute'}])
        # the verdicts name the unclassified function and the way to classify it
        verdict = analysis(db, 'dispatch_verdict')[0]
        text = list(verdict.values())[0]
        self.assertIn('toy_user()', text)
        self.assertIn('--compute', text)

    def test_compute_and_dispatch_patterns_classify_own_code(self):
        """--compute and --dispatch move the program's own functions out of
        "unclassified", as the verdict advises."""
        for opt, cls in (('--compute', 'compute'), ('--dispatch', 'dispatch')):
            with self.subTest(opt=opt):
                db, truth = self.path(cls + '.sqlite'), self.path(cls + '.txt')
                p = record(['-o', db, opt, ':toy_user$'],
                           [wl('mix'), '--steps', '20', '--sleep-ms', '0', '--compute-ms', '30',
                            '--dispatch-ms', '0', '--user-ms', '30', '--truth', truth])
                self.assertEqual(p.returncode, 0, p.stderr)
                got, true = self.shares(db, read_truth(truth))
                self.assertLess(got['unclassified'], 0.05)
                want = true['user'] + (true['compute'] if cls == 'compute' else 0)
                self.assertAlmostEqual(got[cls], want, delta=0.05)
                self.assertEqual(query(db, "SELECT DISTINCT class FROM symbol WHERE name = 'toy_user'"), [{'class': cls}])
        notes = query(db, "SELECT text FROM note WHERE kind = 'dispatch_patterns'")
        self.assertEqual(len(notes), 1)
        self.assertIn(':toy_user$', notes[0]['text'])

    def test_sync_wait_is_its_own_class(self):
        """OpenMP threads spinning at a barrier are waiting ("sync", idle
        capacity in the waterfall), not dispatch overhead (issue 11)."""
        db, truth = self.path('run.sqlite'), self.path('truth.txt')
        env = dict(os.environ, OMP_WAIT_POLICY='active')
        p = record(['-o', db], [wl('omp'), '--steps', '10', '--work-ms', '40', '--truth', truth], env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(truth) as f:
            wait_ms = sum(int(line.split()[1]) for line in f) / 1e6
        # every sample whose innermost user frame is in libgomp is sync (or
        # kernel time outside a wait), never dispatch or unclassified
        wrong = query(db, "SELECT s.class, count(*) AS n FROM sample s JOIN stack st ON st.id = s.stack "
                          "JOIN symbol sy ON sy.id = st.leaf WHERE sy.dso LIKE '%libgomp%' "
                          "AND s.class NOT IN ('sync', 'kernel') GROUP BY s.class")
        self.assertEqual(wrong, [])
        self.assertEqual(query(db, "SELECT DISTINCT class FROM symbol WHERE dso LIKE '%libgomp%'"),
                         [{'class': 'sync'}])
        # a good part of the waiting threads' on-CPU time is sync (about 3/4
        # on a quiet machine; less when other jobs take their CPU)
        main_tid = query(db, "SELECT DISTINCT tid FROM step")[0]['tid']
        other = query(db, "SELECT sum(s.class = 'sync') AS ns, count(*) AS n FROM sample s JOIN step st "
                          "ON s.time_ns >= st.begin_ns AND s.time_ns < st.end_ns WHERE s.kind = 0 AND s.tid != ?",
                      (main_tid,))[0]
        self.assertGreater(other['n'], 50)
        self.assertGreater(other['ns'] / other['n'], 0.15, other)
        # in the waterfall, at most the time the threads waited (they spin
        # only while on a CPU; sampling error allowed), and a real part of it
        w = [r for r in analysis(db, 'waterfall') if r['step'] is None][0]
        sync_ms = w['sync'] * w['capacity_ms']
        self.assertLess(sync_ms, wait_ms * 1.25 + 10, (sync_ms, wait_ms))
        self.assertGreater(sync_ms, wait_ms * 0.1, (sync_ms, wait_ms))
        self.assertLess(w['dispatch'], 0.02)
        # the dispatch section lists libgomp under sync, not dispatch
        disp = analysis(db, 'dispatch')
        self.assertFalse([d for d in disp if d['class'] == 'dispatch' and 'libgomp' in (d['dso'] or '')], disp)
        self.assertTrue([d for d in disp if d['class'] == 'sync' and 'libgomp' in (d['dso'] or '')], disp)
        verdict = list(analysis(db, 'waterfall_verdict')[0].values())[0]
        self.assertIn('sync wait', verdict)
        # CPU time beyond the capacity (as when the CPU count is too low):
        # shares above 100% are called impossible, not printed as they are
        con = sqlite3.connect(db)
        con.execute('UPDATE step SET cpu_ns = 2 * wall_ns * (SELECT ncpu FROM run)')
        con.commit()
        con.close()
        verdict = list(analysis(db, 'waterfall_verdict')[0].values())[0]
        self.assertIn('cannot be', verdict)

    def test_unnamed_frames_read_as_their_library(self):
        """A frame without a symbol shows as [library]; one whose library is
        itself bracketed ([unknown], [vdso]) as it is, never [[unknown]]."""
        db = self.path('run.sqlite')
        p = record(['-o', db], [wl('mix'), '--steps', '4', '--sleep-ms', '20', '--compute-ms', '2',
                                '--dispatch-ms', '0'])
        self.assertEqual(p.returncode, 0, p.stderr)
        con = sqlite3.connect(db)
        # the innermost user frame of every off-CPU interval loses its name:
        # half of them in a file, half in no mapping at all
        con.execute("UPDATE symbol SET name = NULL, dso = CASE WHEN id % 2 THEN '[unknown]' "
                    "ELSE '/usr/lib/libfoo.so.1' END WHERE id IN (SELECT st.leaf FROM offcpu o "
                    "JOIN stack st ON st.id = o.stack)")
        con.commit()
        con.close()
        wheres = [g['where'] for g in analysis(db, 'gaps') if g['where']]
        self.assertTrue(wheres)
        self.assertFalse([w for w in wheres if '[[' in w], wheres)
        self.assertTrue([w for w in wheres if w.startswith('[unknown]') or w.startswith('[libfoo.so.1]')], wheres)

    def test_pause_between_steps(self):
        db, truth = self.path('run.sqlite'), self.path('truth.txt')
        p = record(['-o', db], [wl('mix'), '--steps', '5', '--sleep-ms', '0', '--compute-ms', '3',
                                '--dispatch-ms', '1', '--pause-ms', '30', '--truth', truth])
        self.assertEqual(p.returncode, 0, p.stderr)
        own = read_truth(truth)
        btw = [g for g in analysis(db, 'gaps') if g['kind'] == 'between_steps']
        self.assertEqual(len(btw), 4)
        for g in btw:
            self.assertAlmostEqual(g['dur_ms'], own[g['step']]['pause'] / 1e6, delta=0.1 * 30)
            self.assertIn('nanosleep', g['where'] or '')

    def test_thread_cpu_time_from_switches(self):
        db, tc = self.path('run.sqlite'), self.path('thread-cpu.txt')
        steal0 = steal_ns()
        p = record(['-o', db], [wl('steps'), '--steps', '10', '--cpu-us', '30000', '--sleep-us', '5000',
                                '--thread-cpu', tc])
        self.assertEqual(p.returncode, 0, p.stderr)
        stolen = steal_ns() - steal0
        own = {int(f[0]): (int(f[1]), int(f[2])) for f in (line.split() for line in open(tc))}
        threads = {t['tid']: t for t in query(db, 'SELECT tid, cpu_ns FROM thread')}
        self.assertEqual(len(own), 1)
        for tid, (ns, at_main) in own.items():
            self.assertIn(tid, threads)
            # The switch records count from the exec; the thread's clock from
            # the fork, so it also has mfu-record's child before the exec
            # (0.1 ms natively, several ms under ASan), and the program's
            # own reading at main() misses the loader after the exec: the
            # truth lies between the two. Switch intervals are wall time on
            # the CPU: they include what the hypervisor stole, which
            # CLOCK_THREAD_CPUTIME_ID leaves out.
            got = threads[tid]['cpu_ns']
            self.assertGreaterEqual(got, 0.98 * (ns - at_main) - stolen, (threads[tid], ns, at_main, stolen))
            self.assertLessEqual(got, 1.02 * ns + stolen, (threads[tid], ns, at_main, stolen))
            if not os.environ.get('MFU_SANITIZED'):
                self.assertLessEqual(abs(got - ns), 0.02 * ns + stolen, (threads[tid], ns, stolen))

    @unittest.skipUnless(len(os.sched_getaffinity(0)) >= 1 and os.path.exists('/usr/bin/taskset'),
                         'needs taskset')
    def test_competing_process_on_one_cpu(self):
        """A process spinning on the workload's CPU: the time the workload's
        thread was runnable but not running, as the scheduler counted it
        for the thread itself (its run_delay, tests/workloads/run_delay.h,
        read around each step), is the breakdown's runnable time. Two busy
        processes on one CPU: each runs about half the time, less if the
        machine is busier still, so at least a third is runnable."""
        cpu = str(min(os.sched_getaffinity(0)))
        hog = subprocess.Popen(['taskset', '-c', cpu, wl('steps'), '--steps', '1', '--busy-us', '30000000'],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(0.2)
            db, clk = self.path('run.sqlite'), self.path('clock.txt')
            steal0 = steal_ns()
            p = record(['-o', db], ['taskset', '-c', cpu, wl('steps'), '--steps', '8', '--busy-us', '100000',
                                    '--clock', clk])
            self.assertEqual(p.returncode, 0, p.stderr)
            stolen = steal_ns() - steal0
        finally:
            hog.kill()
            hog.wait()
        own = read_clock(clk)
        rows = analysis(db, 'breakdown')
        self.assertEqual(len(rows), 8)
        wall = sum(r['wall_ms'] for r in rows)
        runnable = sum(r['runnable_ms'] for r in rows)
        own_runnable = sum(o.inside for o in own.values()) / 1e6
        self.assertGreater(own_runnable, wall / 3, (own_runnable, wall))
        # the scheduler's own figure, within 3% of the steps' time, and a
        # host's stall of the vCPU
        self.assertAlmostEqual(runnable, own_runnable, delta=0.03 * wall + (stolen + VM_SLACK_NS) / 1e6,
                               msg=(runnable, own_runnable, wall, stolen))

    def test_no_samples_with_F0(self):
        db = self.path('run.sqlite')
        p = record(['-o', db, '-F', '0'], [wl('mix'), '--steps', '3', '--sleep-ms', '10', '--compute-ms', '5'])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(query(db, 'SELECT count(*) AS n FROM sample WHERE kind = 0')[0]['n'], 0)
        rows = analysis(db, 'breakdown')
        self.assertTrue(all(r['compute_ms'] is None and r['blocked_ms'] >= 9 for r in rows), rows)


def open_phase(phases, tid, t):
    """The innermost complete phase of thread TID open at T, by brute force
    over every phase (of those open, the one begun last), or None."""
    open_ = [p for p in phases if p['tid'] == tid and p['complete'] == 1 and p['begin_ns'] <= t < p['end_ns']]
    return max(open_, key=lambda p: (p['begin_ns'], p['id']))['name'] if open_ else None


class ProcessPhases(TempDirTest):
    """Issue 23, item 4: a sample or off-CPU interval of a thread with no
    phase of its own open is in the phase open then on the process's marking
    thread. wl_workers (tests/workloads/workers.c) runs each worker_*()
    function on a thread that marks nothing (but "own") while the main
    thread holds a known phase open, or none: the ground truth by design."""
    WANT = {'worker_forward': ('forward', True), 'worker_backward': ('backward', True),
            'worker_own': ('own', False), 'worker_outside': ('(no phase)', False),
            'worker_between': ('(no phase)', False)}

    def test_worker_samples_land_in_the_marking_threads_phases(self):
        db = self.path('run.sqlite')
        p = record(['-o', db], [wl('workers'), '--steps', '4', '--work-ms', '30'])
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = analysis(db, 'dispatch')
        got = {}
        for r in rows:
            if r['symbol'] in self.WANT:
                got.setdefault(r['symbol'], []).append(r)
        for fn, (phase, via) in self.WANT.items():
            self.assertIn(fn, got, rows)
            # every sample of the function in the one phase open for it
            self.assertEqual([r['phase'] for r in got[fn]], [phase], got[fn])
            r = got[fn][0]
            # 4 x 30 ms of the worker's CPU time (twice for forward): about
            # 120 samples at the default rate, counted on the thread's CPU
            # clock, whatever the machine's load
            self.assertGreater(r['samples'], 30, r)
            self.assertEqual(r['via_process'], r['samples'] if via else 0, r)

        # gaps: each off-CPU interval's phase by the same rule, against a
        # brute-force search of the phase table
        phases = query(db, 'SELECT id, name, tid, begin_ns, end_ns, complete FROM phase')
        main_tid = query(db, 'SELECT tid FROM step ORDER BY step LIMIT 1')[0]['tid']
        start = query(db, 'SELECT start_ns FROM run')[0]['start_ns']
        want = {}
        for o in query(db, 'SELECT tid, start_ns FROM offcpu'):
            t = o['start_ns']
            want[(o['tid'], round((t - start) / 1e6, 6))] = \
                open_phase(phases, o['tid'], t) or open_phase(phases, main_tid, t)
        gaps = [g for g in analysis(db, 'gaps') if g['kind'] != 'between_steps']
        for g in gaps:
            self.assertEqual(g['phase'], want[(g['tid'], round(g['start_ms'], 6))], g)
        # worker_forward() sleeps 2 ms once a step while forward is open on
        # the main thread: a blocked interval of the worker, in forward
        sleeps = [g for g in gaps if g['tid'] != main_tid and g['kind'] == 'blocked'
                  and 'nanosleep' in (g['where'] or '')]
        self.assertEqual(len(sleeps), 4, gaps)
        self.assertEqual({g['phase'] for g in sleeps}, {'forward'}, sleeps)


class SamplingUnprivileged(TempDirTest):
    def test_same_blocked_and_runnable_figures(self):
        truth = self.path('truth.txt')
        db = self.path('run.sqlite')
        cp = nobody_reachable(self, [prog('MFU_RECORD'), wl('mix')])
        cmd = as_nobody([cp[prog('MFU_RECORD')], '-o', db, '--', cp[wl('mix')], '--steps', '5', '--sleep-ms', '20',
                         '--compute-ms', '10', '--dispatch-ms', '2', '--truth', truth])
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120, env=cp.env)
        self.assertEqual(p.returncode, 0, p.stderr)
        own = read_truth(truth)
        s = query(db, 'SELECT user_only FROM sampling')[0]
        paranoid = perf_event_paranoid()
        self.assertEqual(s['user_only'], 1 if paranoid >= 2 else 0)
        for r in analysis(db, 'breakdown'):
            self.assertAlmostEqual(r['blocked_ms'], own[r['step']]['sleep'] / 1e6, delta=2.0)
            self.assertIsNotNone(r['compute_ms'])


if __name__ == '__main__':
    unittest.main(verbosity=2)
