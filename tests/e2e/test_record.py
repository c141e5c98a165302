"""mfu-record end to end: real workloads, checked against their own clocks."""
import json
import os
import pwd
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from mfutest import (SANITIZED, STEAL_TICK_NS, VM_SLACK_NS, TempDirTest, as_nobody, nobody_reachable,  # noqa: E402
                     perf_event_paranoid, prog, query, read_clock, read_phase_clock, record, steal_ns,
                     wall_slack)


def wl(name):
    return prog('MFU_WL_' + name.upper())


def default_signals():
    """preexec_fn: default dispositions whatever this test inherited (under
    nohup SIGHUP is ignored, in a background job SIGINT: the target would
    rightly keep ignoring them)."""
    for s in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
        signal.signal(s, signal.SIG_DFL)


class RecordSteps(TempDirTest):
    def test_steps_wall_and_cpu_against_own_clock(self):
        db, clk = self.path('run.sqlite'), self.path('clock.txt')
        steal0 = steal_ns()
        # 30 ms steps: a cpu-clock sample interrupt between the program's
        # clock and a marker costs 50-65 us on a VM (docs/performance.md)
        p = record(['-o', db], [wl('steps'), '--steps', '20', '--busy-us', '30000',
                                '--sleep-us', '2000', '--clock', clk, '--flops', '123456789',
                                '--bytes', '4096'])
        self.assertEqual(p.returncode, 0, p.stderr)
        stolen = steal_ns() - steal0
        own = read_clock(clk)
        steps = query(db, 'SELECT * FROM step ORDER BY step')
        self.assertEqual(len(steps), 20)
        self.assertEqual(len(own), 20)
        for s in steps:
            o = own[s['step']]
            t0, t1, c0, c1 = o
            self.assertEqual(s['complete'], 1)
            self.assertEqual(s['wall_ns'], s['end_ns'] - s['begin_ns'])
            # the markers' times lie inside the workload's readings around them
            self.assertGreaterEqual(s['begin_ns'], t0)
            self.assertLessEqual(s['end_ns'], t1)
            # and within 1% of them, but for the time the workload's thread
            # waited for a CPU between a reading and its marker
            own_wall = t1 - t0
            self.assertLessEqual(own_wall - s['wall_ns'], wall_slack(own_wall, o.outside),
                                 'step %d: recorded %d ns, own clock %d ns, %d ns preempted outside the markers'
                                 % (s['step'], s['wall_ns'], own_wall, o.outside))
            # task-clock over all threads vs CLOCK_PROCESS_CPUTIME_ID
            own_cpu = c1 - c0
            self.assertLessEqual(abs(s['cpu_ns'] - own_cpu), max(0.02 * own_cpu, 100000) + stolen + VM_SLACK_NS,
                                 'step %d: cpu %d vs own %d, %d ns stolen' % (s['step'], s['cpu_ns'], own_cpu,
                                                                             stolen))
            # declared model values are stored exactly
            self.assertEqual(s['model_flops'], 123456789.0)
            self.assertEqual(s['model_bytes'], 4096.0)
        run = query(db, 'SELECT * FROM run')[0]
        self.assertEqual(run['state'], 'complete')
        self.assertEqual(run['exit_status'], 0)
        self.assertIsNone(run['exit_signal'])
        self.assertEqual(run['lost_records'], 0)
        self.assertEqual(json.loads(run['command'])[1:], ['--steps', '20', '--busy-us', '30000',
                                                          '--sleep-us', '2000', '--clock', clk,
                                                          '--flops', '123456789', '--bytes', '4096'])
        self.assertEqual(run['dtype'], 'fp32')
        self.assertGreater(run['ncpu'], 0)
        self.assertTrue(run['kernel'])
        self.assertLessEqual(run['start_ns'], steps[0]['begin_ns'])
        self.assertGreaterEqual(run['end_ns'], steps[-1]['end_ns'])
        counters = {c['name']: c for c in query(db, 'SELECT * FROM counter')}
        for name in ('task-clock', 'context-switches', 'cpu-migrations', 'page-faults'):
            self.assertEqual(counters[name]['opened'], 1, counters[name])
        # no PMU here: the hardware counters are missing, with a reason
        if not os.path.exists('/sys/bus/event_source/devices/cpu'):
            notes = query(db, "SELECT text FROM note WHERE kind = 'missing_counters'")
            self.assertTrue(any('no hardware PMU' in n['text'] for n in notes), notes)
            self.assertIsNone(steps[0]['hw_flops'])
            self.assertIsNone(steps[0]['cycles'])
            # said once in full; the summary at the end names it in its
            # "unknown here" line
            self.assertEqual(p.stderr.count('no hardware PMU:'), 1, p.stderr)

    def test_tiny_steps_hold_their_cpu_time(self):
        """A step's interval holds both counter snapshots (the begin's time
        is taken before its counters are read, the end's after), so one
        thread's CPU time in a step never exceeds the step's wall time, even
        for steps of a few microseconds (issue 11: CPU util 885%)."""
        db = self.path('run.sqlite')
        p = record(['-o', db, '-F', '0', '-I', '0'], [prog('MFU_WL_STEPS'), '--steps', '3000'])
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = query(db, 'SELECT step, wall_ns, cpu_ns FROM step WHERE complete AND cpu_ns IS NOT NULL')
        self.assertEqual(len(rows), 3000)
        over = [r for r in rows if r['cpu_ns'] > r['wall_ns']]
        self.assertEqual(over, [], '%d of 3000 steps hold more CPU time than wall time' % len(over))
        util = query(db, 'SELECT max(s.cpu_ns * 1.0 / (s.wall_ns * r.ncpu)) AS m FROM step s, run r')
        self.assertLessEqual(util[0]['m'], 1.0)

    def test_phases_and_sleep(self):
        """Each phase against the program's own readings around it: a
        compute phase spinning 2 ms of its thread's CPU time holds that CPU
        time, a 10 ms sleep is a wall of 10 ms (or more: an oversleep is in
        the program's own reading too) with hardly any CPU time."""
        db, pclk = self.path('run.sqlite'), self.path('phases.txt')
        steal0 = steal_ns()
        p = record(['-o', db], [wl('steps'), '--steps', '5', '--cpu-us', '2000', '--sleep-us', '10000',
                                '--phases', '--phase-clock', pclk])
        self.assertEqual(p.returncode, 0, p.stderr)
        stolen = steal_ns() - steal0
        own = read_phase_clock(pclk)
        phases = query(db, 'SELECT * FROM phase ORDER BY id')
        self.assertEqual(len(phases), 10)
        self.assertEqual([ph['name'] for ph in phases[:2]], ['compute', 'wait'])
        for ph in phases:
            self.assertEqual(ph['complete'], 1)
            self.assertIsNotNone(ph['step'])
            o = own[(ph['step'], ph['name'])]
            t0, t1, c0, c1 = o
            self.assertGreaterEqual(ph['begin_ns'], t0, ph)
            self.assertLessEqual(ph['end_ns'], t1, ph)
            self.assertLessEqual((t1 - t0) - ph['wall_ns'], wall_slack(t1 - t0, o.outside), (ph, o, o.outside))
            # task-clock vs CLOCK_PROCESS_CPUTIME_ID: the first also counts
            # what the hypervisor stole
            self.assertLessEqual(abs(ph['cpu_ns'] - (c1 - c0)), max(0.02 * (c1 - c0), 100_000) + stolen + VM_SLACK_NS,
                                 (ph, o, stolen))
            if ph['name'] == 'wait':
                self.assertGreaterEqual(ph['wall_ns'], 10_000_000)
                self.assertLess(ph['cpu_ns'], 2_000_000)
                self.assertGreaterEqual(ph['ctx_switches'], 1)
            else:
                # however busy the machine: the thread's 2 ms, and the
                # marker's own cost (ASan's runtime: more)
                self.assertGreaterEqual(ph['cpu_ns'], 2_000_000 - 100_000, ph)
                self.assertLess(ph['cpu_ns'], 2_000_000 + (2_000_000 if SANITIZED else 500_000) + stolen
                                + VM_SLACK_NS, ph)

    def test_two_threads_cpu_utilization(self):
        ncpu = len(os.sched_getaffinity(0))
        db, clk = self.path('run.sqlite'), self.path('clock.txt')
        steal0 = steal_ns()
        p = record(['-o', db], [wl('steps'), '--steps', '5', '--cpu-us', '50000', '--threads', '2',
                                '--clock', clk])
        stolen = steal_ns() - steal0
        self.assertEqual(p.returncode, 0, p.stderr)
        own = read_clock(clk)
        run = query(db, 'SELECT ncpu FROM run')[0]
        self.assertEqual(run['ncpu'], ncpu)
        for s in query(db, 'SELECT * FROM step'):
            o = own[s['step']]
            t0, t1, c0, c1 = o
            util = s['cpu_ns'] / (s['wall_ns'] * run['ncpu'])
            own_util = (c1 - c0) / ((t1 - t0) * ncpu)
            # the same as the workload's own clocks say (whose wall also
            # has the time the main thread waited for a CPU between its
            # readings and the markers)...
            self.assertAlmostEqual(util, own_util, delta=0.03 + (VM_SLACK_NS + o.outside) / s['wall_ns'],
                                   msg=str((s, o.outside)))
            # two threads each spun 50 ms of their own CPU time: the step's
            # CPU time is at least 100 ms, and at most what the process's
            # own CPU clock (CLOCK_PROCESS_CPUTIME_ID) read around the step's
            # markers, whatever else runs on the machine (beside stress-ng
            # on both CPUs a step took 106 ms of CPU: 91 context switches
            # and the threads' start and end, which both clocks count),
            # within 1%: perf's task-clock and the kernel's CPU clock
            # account each context switch a little differently (beside
            # stress-ng, 99 switches: task-clock 100.697 ms, the process
            # clock 100.468 ms); and in a VM, task-clock counts the time the
            # hypervisor took from a thread's vCPU while it was scheduled in
            # (steal), which the kernel's CPU clocks leave out
            # (CONFIG_PARAVIRT_TIME_ACCOUNTING), and stalls that /proc/stat
            # does not always show as steal (VM_SLACK_NS), or not yet (less
            # than a tick of a CPU's: STEAL_TICK_NS); each on both threads'
            # vCPUs (seen in a loaded make check: task-clock 106.1 ms, the
            # process clock 100.2 ms, /proc/stat's steal unchanged)...
            self.assertGreaterEqual(s['cpu_ns'], 2 * 50e6 - 100_000, msg=str(s))
            self.assertLessEqual(s['cpu_ns'],
                                 (c1 - c0) * 1.01 + 100_000 + stolen + 2 * (VM_SLACK_NS + STEAL_TICK_NS),
                                 msg=str((s, o, stolen)))
            # ...and, when nothing else took a CPU meanwhile (the step lasted
            # about 50 ms), the utilization is near 2/ncpu
            if ncpu >= 2 and s['wall_ns'] <= 1.2 * 50e6:
                self.assertGreater(util, 0.8 * 2 / ncpu, msg=str(s))
            self.assertLessEqual(util, 1.0 + 1e-6)

    def test_existing_file_kept_as_old(self):
        db = self.path('run.sqlite')
        with open(db, 'w') as f:
            f.write('precious')
        p = record(['-o', db], [wl('steps'), '--steps', '1'])
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(db + '.old') as f:
            self.assertEqual(f.read(), 'precious')
        self.assertEqual(len(query(db, 'SELECT * FROM step')), 1)

    def test_no_side_files_left(self):
        db = self.path('run.sqlite')
        record(['-o', db], [wl('steps'), '--steps', '1'])
        self.assertEqual(sorted(os.listdir(self.dir)), ['run.sqlite'])


class RecordAndReport(TempDirTest):
    """mfu-record then mfu-report: the report's numbers are the database's."""

    def report(self, *args):
        p = subprocess.run([prog('MFU_REPORT')] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def test_mfu_recomputed_from_database_equals_report(self):
        db = self.path('run.sqlite')
        p = record(['-o', db, '--peak-flops', '50G'], [wl('mlp'), '--steps', '15', '--quiet'])
        self.assertEqual(p.returncode, 0, p.stderr)
        steps = json.loads(self.report('--db', db, 'steps', '--format', 'json'))
        rows = {r['step']: r for r in query(db, 'SELECT * FROM step')}
        self.assertEqual(len(steps), 15)
        for s in steps:
            r = rows[s['step']]
            self.assertEqual(s['model_flops'], r['model_flops'])
            self.assertAlmostEqual(s['mfu'], r['model_flops'] / (r['wall_ns'] / 1e9 * 50e9), delta=1e-12)
            self.assertAlmostEqual(s['wall_ms'], r['wall_ns'] / 1e6, delta=1e-9)
            self.assertIsNone(s['hfu'] if r['hw_flops'] is None else None)
        summary = json.loads(self.report('--db', db, '--format', 'json'))[0]
        total_f = sum(r['model_flops'] for r in rows.values())
        total_w = sum(r['wall_ns'] for r in rows.values()) / 1e9
        self.assertAlmostEqual(summary['mfu'], total_f / (total_w * 50e9), delta=1e-12)
        self.assertEqual(summary['peak_flops'], 50e9)
        self.assertTrue(summary['peak_source'].startswith('user'))

    def test_every_section_and_verdicts(self):
        db = self.path('run.sqlite')
        p = record(['-o', db], [wl('mix'), '--steps', '4', '--sleep-ms', '10', '--compute-ms', '10',
                                '--dispatch-ms', '5'])
        self.assertEqual(p.returncode, 0, p.stderr)
        sections = ['summary', 'steps', 'phases', 'breakdown', 'phase_breakdown', 'gaps', 'dispatch',
                    'waterfall', 'events', 'peaks', 'notes']
        for fmt in ('table', 'csv', 'json', 'markdown'):
            out = self.report('--db', db, '--format', fmt, *sections)
            if fmt == 'json':
                data = json.loads(out)
                self.assertEqual(sorted(data), sorted(sections))
                self.assertEqual(len(data['breakdown']), 4)
            if fmt == 'table':
                self.assertRegex(out, r'\n  \d+% of step time ')
                self.assertIn('blocked intervals', out)
                self.assertRegex(out, r"Of the CPUs'? capacity, \d+% was idle")


class RecordExit(TempDirTest):
    def test_exit_code_propagates(self):
        db = self.path('run.sqlite')
        p = record(['-o', db], [wl('steps'), '--steps', '2', '--exit', '7'])
        self.assertEqual(p.returncode, 7)
        run = query(db, 'SELECT * FROM run')[0]
        self.assertEqual(run['exit_status'], 7)
        self.assertEqual(run['state'], 'complete')

    def test_killing_signal_propagates(self):
        for sig in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT, signal.SIGTERM):
            db = self.path('run-%d.sqlite' % sig)
            p = record(['-o', db], [wl('steps'), '--steps', '2', '--raise', str(int(sig))])
            self.assertEqual(p.returncode, 128 + sig, p.stderr)
            run = query(db, 'SELECT * FROM run')[0]
            self.assertEqual(run['exit_signal'], sig)
            self.assertIsNone(run['exit_status'])
            self.assertEqual(len(query(db, 'SELECT * FROM step WHERE complete = 1')), 2)

    def test_command_not_found(self):
        db = self.path('run.sqlite')
        with open(db, 'w') as f:
            f.write('precious')
        p = record(['-o', db], [self.path('no-such-program')])
        self.assertEqual(p.returncode, 127)
        self.assertIn("cannot run", p.stderr)
        self.assertEqual(p.stderr.count('\n'), 1, p.stderr)
        # nothing ran: the previous file is back in place
        with open(db) as f:
            self.assertEqual(f.read(), 'precious')
        self.assertFalse(os.path.exists(db + '.old'))

    def test_command_not_executable(self):
        script = self.path('not-exec')
        with open(script, 'w') as f:
            f.write('#!/bin/sh\n')
        p = record(['-o', self.path('run.sqlite')], [script])
        self.assertEqual(p.returncode, 126)

    def test_sigint_to_recorder_completes_database(self):
        db = self.path('run.sqlite')
        proc = subprocess.Popen([prog('MFU_RECORD'), '-o', db, '--', wl('steps'), '--forever',
                                 '--busy-us', '1000'], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, preexec_fn=default_signals)
        time.sleep(0.6)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 128 + signal.SIGINT, err)
        con = sqlite3.connect('file:%s?mode=ro' % db, uri=True)
        self.assertEqual(con.execute('PRAGMA integrity_check').fetchone()[0], 'ok')
        con.close()
        run = query(db, 'SELECT * FROM run')[0]
        self.assertEqual(run['state'], 'interrupted')
        self.assertEqual(run['exit_signal'], signal.SIGINT)
        self.assertIsNotNone(run['end_ns'])
        steps = query(db, 'SELECT complete, count(*) AS n FROM step GROUP BY complete')
        complete = sum(r['n'] for r in steps if r['complete'] == 1)
        self.assertGreater(complete, 50)
        # the step cut by the signal is kept, flagged, with its anomaly:
        # step_open_at_exit; or step_broken_by_loss when the signal killed
        # the program while it wrote a marker record (a slot claimed and
        # never published: a hole in the ring, counted in lost_records)
        incomplete = sum(r['n'] for r in steps if r['complete'] == 0)
        self.assertLessEqual(incomplete, 1)
        cut = query(db, "SELECT * FROM anomaly WHERE kind IN ('step_open_at_exit', 'step_broken_by_loss')")
        self.assertEqual(incomplete, len(cut), cut)
        if any(a['kind'] == 'step_broken_by_loss' for a in cut):
            self.assertGreaterEqual(run['lost_records'], 1, cut)

    def test_sigkill_of_recorder_leaves_readable_database(self):
        """What a reader saw committed before the kill is still there after
        it: the recorder commits in batches (every 0.25 s at most), and a
        SIGKILL loses only the batch it was building. No figure here depends
        on how fast the machine is: the test waits for committed steps."""
        db = self.path('run.sqlite')
        proc = subprocess.Popen([prog('MFU_RECORD'), '-o', db, '--', wl('steps'), '--steps', '100000',
                                 '--busy-us', '1000'], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        seen = 0
        deadline = time.monotonic() + 120
        while seen < 100 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            try:
                seen = query(db, 'SELECT count(*) AS n FROM step')[0]['n']
            except (sqlite3.Error, IndexError):
                seen = 0  # the schema is not there yet
        self.assertIsNone(proc.poll(), 'the recording ended before the kill')
        self.assertGreaterEqual(seen, 100, 'no steps committed in 120 s')
        # the target is the recorder's child: find it before killing the recorder
        with open('/proc/%d/task/%d/children' % (proc.pid, proc.pid)) as f:
            children = f.read().split()
        proc.kill()
        proc.wait()
        for c in children:
            try:
                os.kill(int(c), signal.SIGKILL)
            except ProcessLookupError:
                pass
        run = query(db, 'SELECT * FROM run')[0]
        self.assertEqual(run['state'], 'recording')
        self.assertEqual(query(db, 'PRAGMA integrity_check')[0]['integrity_check'], 'ok')
        n = query(db, 'SELECT count(*) AS n FROM step')[0]['n']
        self.assertGreaterEqual(n, seen)

    def test_sigkill_leaves_the_sqlite_file_alone_usable(self):
        """Committed rows sit in the -wal file until a checkpoint: one every
        2 s, so a user who copies just the .sqlite of a killed recording
        gets all but the last seconds. Checked without a rate: the main file
        alone gets steps while the recording runs (a checkpoint happened),
        and after SIGKILL it still reads, with at least those steps."""
        db = self.path('run.sqlite')
        alone = self.path('copy.sqlite')
        proc = subprocess.Popen([prog('MFU_RECORD'), '-o', db, '--', wl('steps'), '--steps', '100000',
                                 '--busy-us', '1000'], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)

        def steps_alone():
            """Complete steps in a copy of the main file only, as a user's
            cp would take it if the -wal were lost (0 before a checkpoint)."""
            try:
                shutil.copyfile(db, alone)
                return query(alone, 'SELECT count(*) AS n FROM step WHERE complete = 1')[0]['n']
            except (OSError, sqlite3.Error):
                return 0

        seen, deadline = 0, time.monotonic() + 120
        while seen == 0 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.5)
            seen = steps_alone()
        self.assertGreater(seen, 0, 'no checkpoint put a step into the main file in 120 s')
        children = open('/proc/%d/task/%d/children' % (proc.pid, proc.pid)).read().split()
        proc.kill()
        proc.wait()
        for c in children:
            try:
                os.kill(int(c), signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.copyfile(db, alone)
        p = subprocess.run([prog('MFU_REPORT'), '--db', alone, '--format', 'json', 'summary'],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertGreaterEqual(json.loads(p.stdout)[0]['steps'], seen)


class RecordFaults(TempDirTest):
    def test_sigterm_and_sighup_are_passed_on(self):
        for sig in (signal.SIGTERM, signal.SIGHUP):
            db = self.path('run-%d.sqlite' % sig)
            proc = subprocess.Popen([prog('MFU_RECORD'), '-o', db, '--', wl('steps'), '--forever',
                                     '--busy-us', '1000'], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    preexec_fn=default_signals)
            time.sleep(0.4)
            proc.send_signal(sig)
            proc.communicate(timeout=30)
            self.assertEqual(proc.returncode, 128 + sig)
            run = query(db, 'SELECT state, exit_signal FROM run')[0]
            self.assertEqual((run['state'], run['exit_signal']), ('interrupted', sig))

    def test_child_processes_mark_steps(self):
        db = self.path('run.sqlite')
        p = record(['-o', db], [wl('steps'), '--procs', '3', '--steps', '10', '--busy-us', '200'])
        self.assertEqual(p.returncode, 0, p.stderr)
        per_pid = query(db, 'SELECT pid, count(*) AS n, sum(complete) AS c FROM step GROUP BY pid')
        self.assertEqual(len(per_pid), 3)
        self.assertTrue(all(r['n'] == 10 and r['c'] == 10 for r in per_pid), per_pid)
        # Known issue (about 1 run in 40): a forked child's read of the
        # inherited counter group can fail once; the step is still recorded
        # and its counts are unknown, with a counter_read_failed anomaly.
        self.assertEqual(query(db, "SELECT count(*) AS n FROM anomaly WHERE kind != 'counter_read_failed'")[0]['n'], 0)
        self.assertLessEqual(query(db, "SELECT count(*) AS n FROM anomaly")[0]['n'], 2)

    def test_exec_of_another_program_keeps_recording(self):
        db = self.path('run.sqlite')
        p = record(['-o', db], [wl('steps'), '--steps', '2', '--then', wl('steps'), '--steps', '3'])
        self.assertEqual(p.returncode, 0, p.stderr)
        steps = query(db, 'SELECT pid, complete FROM step')
        self.assertEqual(len(steps), 5)
        self.assertEqual(len({s['pid'] for s in steps}), 1)

    @unittest.skipIf(SANITIZED, 'memory and drain speed are not the product\'s under a sanitizer')
    def test_memory_stays_bounded(self):
        # 1,000,000 boundaries: the recorder streams to disk and keeps
        # nothing per step or phase, so its peak memory does not grow with them
        db = self.path('run.sqlite')
        proc = subprocess.Popen([prog('MFU_RECORD'), '-q', '-o', db, '-F', '0', '--ring-records', '32768', '--',
                                 wl('storm'), '--steps', '500000', '--rate', '150000'],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        self.assertEqual(proc.returncode, 0)
        # ru_maxrss (KiB) is the largest of mfu-record and the target (which
        # maps the marker ring: 18 MiB here, not the default 75 MiB); AddressSanitizer's shadow memory and
        # quarantine make it meaningless in the sanitizer build
        if 'detect_leaks' not in os.environ.get('ASAN_OPTIONS', ''):
            self.assertLess(usage.ru_maxrss, 100 * 1024, usage.ru_maxrss)
        # Every phase is kept, unless the host starved the recorder so long
        # that the ring filled (a VM under load): then what was lost is
        # counted, never silent (a phase is two records)
        n = query(db, 'SELECT count(*) AS n FROM phase')[0]['n']
        lost = query(db, 'SELECT lost_records FROM run')[0]['lost_records']
        if not VM_SLACK_NS or lost == 0:
            self.assertEqual(n, 500000)
        else:
            self.assertGreaterEqual(n, 500000 - lost)
            self.assertLess(n, 500000)

    def test_thousand_threads(self):
        db, clk = self.path('run.sqlite'), self.path('clock.txt')
        p = record(['-o', db], [wl('steps'), '--steps', '2', '--threads', '1000', '--cpu-us', '200',
                                '--clock', clk], timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        own = read_clock(clk)
        steps = query(db, 'SELECT * FROM step ORDER BY step')
        self.assertEqual(len(steps), 2)
        # A thread's last CPU time reaches the inherited counter a moment
        # after pthread_join() returns (the kernel folds it in later in
        # exit), so compare the two steps together, threads created and
        # exited inside them: 2 x 1000 x 0.2 ms of spinning at least.
        own_cpu = sum(own[s['step']][3] - own[s['step']][2] for s in steps)
        cpu = sum(s['cpu_ns'] for s in steps)
        self.assertGreater(cpu, 2 * 1000 * 200000)
        self.assertLessEqual(abs(cpu - own_cpu), 0.1 * own_cpu, (cpu, own_cpu))

    @unittest.skipUnless(os.geteuid() == 0, 'needs root to mount a small tmpfs')
    @unittest.skipIf(SANITIZED, 'how fast the disk fills against the first commit is not the product\'s under '
                     'a sanitizer (the plain build checks it)')
    def test_disk_full(self):
        small = self.path('small')
        os.mkdir(small)
        # room for the first commits (about 25,000 phases each, 250 ms apart,
        # more when the recorder is slowed: under ASan, on a busy machine)
        # and the checkpoint's copy, then full
        subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', small], check=True)
        try:
            for action, code in (('continue', 0), ('kill', 128 + signal.SIGTERM)):
                db = os.path.join(small, 'run-%s.sqlite' % action)
                p = record(['-o', db, '--on-error', action], [wl('storm'), '--steps', '400000', '--rate', '100000'])
                self.assertEqual(p.returncode, code, p.stderr)
                self.assertIn('the disk is full', p.stderr)
                self.assertEqual(p.stderr.count('cannot write'), 1, p.stderr)
                # what was committed before the failure still opens
                con = sqlite3.connect('file:%s?mode=ro' % db, uri=True)
                try:
                    self.assertGreater(con.execute('SELECT count(*) FROM phase').fetchone()[0], 0)
                finally:
                    con.close()
                for f in os.listdir(small):
                    os.unlink(os.path.join(small, f))
        finally:
            if subprocess.run(['umount', small]).returncode != 0:
                subprocess.run(['umount', '-l', small])

    @unittest.skipUnless(os.geteuid() == 0, 'needs root to act as sudo')
    def test_under_sudo_target_runs_as_invoking_user(self):
        nobody = pwd.getpwnam('nobody')
        env = dict(os.environ, SUDO_UID=str(nobody.pw_uid), SUDO_GID=str(nobody.pw_gid), SUDO_USER='nobody')
        for extra, uid in (([], nobody.pw_uid), (['--as-root'], 0)):
            db = self.path('run%d.sqlite' % uid)
            p = record(['-o', db] + extra, ['id', '-u'], env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout.strip(), str(uid))
        self.assertEqual(os.stat(self.path('run%d.sqlite' % nobody.pw_uid)).st_uid, nobody.pw_uid)


class RecordMisuse(TempDirTest):
    def test_misuse_becomes_anomalies(self):
        db = self.path('run.sqlite')
        p = record(['-o', db], [wl('misuse')])
        self.assertEqual(p.returncode, 0, p.stderr)
        kinds = [a['kind'] for a in query(db, 'SELECT kind FROM anomaly ORDER BY id')]
        self.assertEqual(kinds, [
            'step_end_without_begin', 'model_outside_step', 'phase_end_without_begin',
            'bad_model_value', 'bad_model_value', 'step_begin_while_open', 'phase_end_mismatch',
            'phase_null_name', 'name_truncated', 'model_outside_phase', 'phase_open_at_exit',
            'step_open_at_exit'])
        steps = query(db, 'SELECT * FROM step ORDER BY step')
        self.assertEqual([s['complete'] for s in steps], [0, 1, 0])
        self.assertEqual(steps[0]['model_flops'], 100.0)
        names = [ph['name'] for ph in query(db, 'SELECT name FROM phase ORDER BY id')]
        self.assertIn('(null)', names)
        self.assertIn('x' * 63, names)


class RecordRing(TempDirTest):
    def test_overflow_is_counted_exactly(self):
        db = self.path('run.sqlite')
        p = record(['-o', db, '--ring-records', '64'], [wl('storm'), '--threads', '2', '--steps', '200000'])
        self.assertEqual(p.returncode, 0, p.stderr)
        m = re.search(r'(\d+) marker records, (\d+) lost', p.stderr)
        self.assertTrue(m, p.stderr)
        got, lost = int(m.group(1)), int(m.group(2))
        self.assertEqual(got + lost, 2 * 2 * 200000)
        self.assertGreater(lost, 0)
        run = query(db, 'SELECT lost_records, marker_records FROM run')[0]
        self.assertEqual(run['lost_records'], lost)
        # from the database alone: what arrived + what was lost = what was written
        self.assertEqual(run['marker_records'], got)
        self.assertEqual(run['marker_records'] + run['lost_records'], 2 * 2 * 200000)
        # a row takes one or two of the records that arrived (an end whose
        # begin was lost makes none)
        n = query(db, 'SELECT count(*) AS n FROM phase')[0]['n']
        self.assertLessEqual(n, got)

    MISUSE = ('step_end_without_begin', 'step_begin_while_open', 'model_outside_step',
              'phase_end_without_begin', 'phase_end_mismatch', 'model_outside_phase',
              'step_open_at_exit', 'phase_open_at_exit')

    def test_loss_reads_as_loss_not_misuse(self):
        # The smallest ring (64 records) and two threads marking unthrottled:
        # loss is certain on any machine. storm's markers are well paired, so
        # every unpaired boundary comes from the loss: it must show as
        # records_lost (which thread, how many), never as misuse, and nothing
        # is paired across a gap.
        db = self.path('run.sqlite')
        p = record(['-o', db, '--ring-records', '64'], [wl('storm'), '--threads', '2', '--steps', '200000'])
        self.assertEqual(p.returncode, 0, p.stderr)
        lost = query(db, 'SELECT lost_records FROM run')[0]['lost_records']
        self.assertGreater(lost, 0)
        anomalies = query(db, 'SELECT kind, pid, tid, detail FROM anomaly')
        self.assertEqual([a for a in anomalies if a['kind'] in self.MISUSE], [])
        told = [a for a in anomalies if a['kind'] == 'records_lost']
        self.assertGreaterEqual(len(told), 1, anomalies)
        self.assertLessEqual(len(told), 2, anomalies)  # one per thread that lost
        # Each thread tells what it dropped; together, what the ring counted
        # (a thread's loss notice at exit can only fail on a starved host:
        # then what it had open is broken by the loss no thread told of,
        # never misuse)
        dropped = [int(re.search(r'dropped (\d+) marker record', a['detail']).group(1)) for a in told]
        self.assertLessEqual(sum(dropped), lost)
        if not VM_SLACK_NS:
            self.assertEqual(sum(dropped), lost)
        broken = [a for a in anomalies if a['kind'] != 'records_lost']
        self.assertEqual({a['kind'] for a in broken} - {'phase_broken_by_loss', 'step_broken_by_loss'}, set(),
                         anomalies)
        if sum(dropped) == lost:
            self.assertEqual(broken, [])
        for a in broken:
            self.assertIn('%d marker records were lost that no thread told of' % (lost - sum(dropped)),
                          a['detail'])
        target = query(db, 'SELECT target_pid FROM run')[0]['target_pid']
        self.assertEqual({a['pid'] for a in told}, {target})
        self.assertNotIn(target, {a['tid'] for a in told})  # storm's own threads, not main
        # no phase paired over a gap: storm's phases are back to back, so a
        # complete one spans no other boundary of its thread
        n = query(db, 'SELECT count(*) AS n FROM phase AS a JOIN phase AS b ON a.tid = b.tid AND a.id <> b.id'
                      ' WHERE a.complete = 1 AND b.begin_ns > a.begin_ns AND b.begin_ns < a.end_ns')[0]['n']
        self.assertEqual(n, 0)
        # the report says what happened and what to do
        r = subprocess.run([prog('MFU_REPORT'), '--db', db, 'notes', '--format', 'csv'], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('%d marker records were lost because the marker ring was full' % lost, r.stdout)
        self.assertIn('--ring-records', r.stdout)
        self.assertIn('not counted as marker misuse', r.stdout)

    def test_misuse_under_a_small_ring_is_still_misuse(self):
        # the same tiny ring, no loss: every misuse is reported, no loss row
        db = self.path('run.sqlite')
        p = record(['-o', db, '--ring-records', '64'], [wl('misuse')])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(query(db, 'SELECT lost_records FROM run')[0]['lost_records'], 0)
        kinds = [a['kind'] for a in query(db, 'SELECT kind FROM anomaly ORDER BY id')]
        self.assertNotIn('records_lost', kinds)
        self.assertEqual(len([k for k in kinds if k in self.MISUSE]), 8, kinds)

    @unittest.skipIf(SANITIZED, 'drain speed is not the product\'s under a sanitizer (the plain build checks '
                     'the rate): ASan\'s recorder lost 700-1200 of 100,000 records a second on this VM')
    def test_sustained_rate_without_loss(self):
        db = self.path('run.sqlite')
        # 100,000 boundaries per second for 1 s (the 200k/s figure is a benchmark)
        p = record(['-o', db], [wl('storm'), '--steps', '50000', '--rate', '100000'])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(query(db, 'SELECT lost_records FROM run')[0]['lost_records'], 0)
        self.assertEqual(query(db, 'SELECT count(*) AS n FROM phase WHERE complete = 1')[0]['n'], 50000)


class RecordUsage(TempDirTest):
    def run_rec(self, *args):
        return subprocess.run([prog('MFU_RECORD')] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=self.dir, timeout=60)

    def test_help(self):
        p = self.run_rec('--help')
        self.assertEqual(p.returncode, 0)
        self.assertIn('usage: mfu-record', p.stdout)
        self.assertEqual(p.stderr, '')

    def test_bad_options(self):
        for args in (['--dtype', 'fp8', 'true'], ['--peak-flops', '-1', 'true'],
                     ['--peak-flops', '1e400', 'true'], ['--peak-bw', '12X', 'true'],
                     ['--ring-records', '100', 'true'], ['--nope', 'true'], []):
            p = self.run_rec(*args)
            self.assertEqual(p.returncode, 2, args)
            self.assertTrue(p.stderr.startswith('mfu-record: ') or 'Try' in p.stderr, p.stderr)
            self.assertFalse(os.path.exists(self.path('run.sqlite')), args)
        p = self.run_rec('--on-error', 'explode', 'true')
        self.assertEqual(p.returncode, 2)

    def test_measured_peaks_from_the_profile(self):
        env = dict(os.environ, XDG_CACHE_HOME=self.path('cache'))
        p = subprocess.run([prog('MFU_CALIBRATE'), '--quick'], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        # figures measured while other tests ran are never peaks
        # (test_peaks.py checks that): here they are taken as undisturbed
        cache = os.path.join(self.path('cache'), 'mfu')
        for name in os.listdir(cache):
            con = sqlite3.connect(os.path.join(cache, name))
            with con:
                con.execute('UPDATE measurement SET disturbed = 0, cpu_share = 1')
            con.close()
        db = self.path('run.sqlite')
        p = record(['-o', db], [wl('steps'), '--steps', '1'], env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        run = query(db, 'SELECT * FROM run')[0]
        # auto, the default: the higher of spec and measured
        self.assertEqual(run['peak_mode'], 'auto')
        both = query(db, "SELECT value FROM peak WHERE kind = 'flops' AND dtype = 'fp32' AND scope = 'all' "
                         "AND source IN ('spec', 'measured')")
        self.assertEqual(run['peak_flops'], max(r['value'] for r in both))
        measured = query(db, "SELECT * FROM peak WHERE source = 'measured'")
        self.assertTrue(any(m['kind'] == 'flops' and m['dtype'] == 'fp32' and m['scope'] == 'all' for m in measured))
        self.assertTrue(any(m['kind'] == 'bandwidth' for m in measured))
        p = record(['-o', db, '--peak', 'measured'], [wl('steps'), '--steps', '1'], env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        run = query(db, 'SELECT * FROM run')[0]
        fp32 = [m for m in query(db, "SELECT * FROM peak WHERE source = 'measured' AND kind = 'flops' "
                                     "AND dtype = 'fp32' AND scope = 'all'")][0]
        self.assertEqual(run['peak_flops'], fp32['value'])
        self.assertTrue(run['peak_flops_source'].startswith('measured'), run['peak_flops_source'])

    def test_list_events_here(self):
        p = self.run_rec('--list-events')
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = {l.split()[0]: l for l in p.stdout.splitlines() if l and not l.startswith(('#', 'event '))}
        for name in ('task-clock', 'context-switches', 'cpu-migrations', 'page-faults'):
            self.assertTrue(rows[name].rstrip().endswith(('ok', '(user mode only)')), rows[name])
        if not os.path.exists('/sys/bus/event_source/devices/cpu'):
            self.assertIn('# no hardware PMU', p.stdout)
            self.assertEqual(len(rows), 4)

    def test_list_events_forced_pmu(self):
        # encodings for other CPUs, against the vendors' raw codes
        cases = {'spr': [('FP_ARITH_INST_RETIRED:SCALAR_DOUBLE', '4:0x1c7', '1', 'hw_flops_fp64'),
                         ('FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE', '4:0x80c7', '16', 'hw_flops_fp32'),
                         ('FP_ARITH_INST_RETIRED2:512B_PACKED_HALF', '4:0x10cf', '32', 'hw_flops_fp16'),
                         ('AMX_OPS_RETIRED:BF16', '4:0x2ce', '1', 'amx_ops')],
                 'amd64_fam19h_zen4': [('RETIRED_SSE_AVX_FLOPS:ANY', '4:0x1f03', '1', 'hw_flops_any')]}
        for pmu, expect in cases.items():
            p = subprocess.run([prog('MFU_RECORD'), '--list-events'], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=dict(os.environ, LIBPFM_FORCE_PMU=pmu))
            self.assertEqual(p.returncode, 0, p.stderr)
            rows = {l.split()[0]: l.split() for l in p.stdout.splitlines() if l and not l.startswith('#')}
            for name, enc, weight, col in expect:
                self.assertIn(name, rows, p.stdout)
                self.assertEqual(rows[name][2:4] + [rows[name][5]], [enc, weight, col], rows[name])

    def test_list_events_aligned(self):
        # every column starts where its header does, whatever the names' lengths
        for env, extra in (({}, []), ({'LIBPFM_FORCE_PMU': 'spr'}, ['-e', 'INST_RETIRED:ANY'])):
            p = subprocess.run([prog('MFU_RECORD'), '--list-events'] + extra,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=dict(os.environ, **env), timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            lines = [l for l in p.stdout.splitlines() if l and not l.startswith('#')]
            header = lines[0]
            for label in ('group', 'weight', 'column', 'status'):
                at = header.index(label)
                for line in lines[1:]:
                    if label in ('group', 'weight'):     # right-aligned numbers end with the label
                        end = at + len(label)
                        self.assertNotEqual(line[end - 1], ' ', (label, line))
                        self.assertEqual(line[end], ' ', (label, line))
                    else:                               # left-aligned text starts under it
                        self.assertEqual(line[at - 1], ' ', (label, line))
                        self.assertNotEqual(line[at], ' ', (label, line))

    def test_unknown_event(self):
        p = self.run_rec('-e', 'NO_SUCH_EVENT', '--', 'true')
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown event 'NO_SUCH_EVENT'", p.stderr)
        self.assertFalse(os.path.exists(self.path('run.sqlite')))

    def test_unknown_event_suggests_close_matches(self):
        # SPR forced: libpfm4 knows its events whatever CPU runs the test
        env = dict(os.environ, LIBPFM_FORCE_PMU='spr')

        def rec(ev):
            p = subprocess.run([prog('MFU_RECORD'), '-e', ev, '--', 'true'], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=self.dir, timeout=60, env=env)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertFalse(os.path.exists(self.path('run.sqlite')))
            self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
            return p.stderr
        err = rec('FP_ARITH_INST_RETIRD:SCALAR_DOUBLE')
        self.assertIn("mfu-record: unknown event 'FP_ARITH_INST_RETIRD:SCALAR_DOUBLE'; "
                      "did you mean FP_ARITH_INST_RETIRED:SCALAR_DOUBLE?", err)
        self.assertNotIn('SCALAR_SINGLE', err)     # the fix, not its neighbours
        err = rec('spr::fp_arith_inst_retired:scalar_dubble')
        self.assertIn('did you mean spr::FP_ARITH_INST_RETIRED:SCALAR_DOUBLE?', err)
        err = rec('INST_RETIRED:AN')
        self.assertRegex(err, r'did you mean INST_RETIRED:ANY[ ,?]')
        self.assertNotIn('did you mean', rec('NO_SUCH_EVENT'))
        # perf's sysfs form: the PMU names, and a PMU's event aliases
        err = rec('softwar/cpu-clock/')
        self.assertIn("no PMU 'softwar'", err)
        self.assertIn('did you mean software/cpu-clock/?', err)
        if os.path.exists('/sys/bus/event_source/devices/msr/events/tsc'):
            err = rec('msr/tscc/')
            self.assertIn("'tscc' is not an event of the msr PMU", err)
            self.assertIn('did you mean msr/tsc/?', err)

    def test_user_event_recorded_with_reason(self):
        db = self.path('run.sqlite')
        # a PMU named for libpfm4, so the event is known whatever CPU runs the test
        p = record(['-o', db, '-e', 'INST_RETIRED:ANY'], [wl('steps'), '--steps', '2'],
                   env=dict(os.environ, LIBPFM_FORCE_PMU='spr'))
        self.assertEqual(p.returncode, 0, p.stderr)
        c = query(db, "SELECT * FROM counter WHERE name = 'INST_RETIRED:ANY'")[0]
        self.assertEqual(c['kind'], 'user')
        if not os.path.exists('/sys/bus/event_source/devices/cpu'):
            self.assertEqual(c['opened'], 0)
            self.assertTrue(c['reason'])
            self.assertEqual(len(query(db, 'SELECT * FROM step')), 2)

    def test_unwritable_output(self):
        p = self.run_rec('-o', '/proc/no/such/dir/run.sqlite', 'true')
        self.assertEqual(p.returncode, 125)
        self.assertIn('cannot write the recording', p.stderr)

    def test_symlink_not_followed(self):
        target = self.path('victim')
        with open(target, 'w') as f:
            f.write('keep')
        os.symlink(target, self.path('run.sqlite'))
        p = self.run_rec('-o', 'run.sqlite', '--', wl('steps'), '--steps', '1')
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(target) as f:
            self.assertEqual(f.read(), 'keep')
        self.assertTrue(os.path.islink(self.path('run.sqlite.old')))

    def test_user_peak_overrides(self):
        db = self.path('run.sqlite')
        p = record(['-o', db, '--peak-flops', '2.5T', '--peak-bw', '100G', '--dtype', 'fp64'],
                   [wl('steps'), '--steps', '1'])
        self.assertEqual(p.returncode, 0, p.stderr)
        run = query(db, 'SELECT * FROM run')[0]
        self.assertEqual(run['peak_flops'], 2.5e12)
        self.assertEqual(run['peak_bw'], 100e9)
        self.assertEqual(run['dtype'], 'fp64')
        self.assertTrue(run['peak_flops_source'].startswith('user'))
        spec = query(db, "SELECT * FROM peak WHERE source = 'spec' AND kind = 'flops' AND dtype = 'fp64' AND scope = 'all'")
        if run['uarch'] != 'unknown':
            self.assertEqual(len(spec), 1)


class RecordPrograms(TempDirTest):
    """The demo MLP (C) and the Python training loop, recorded end to end."""

    def test_mlp_demo(self):
        db = self.path('run.sqlite')
        p = record(['-o', db], [wl('mlp'), '--steps', '12', '--quiet'])
        self.assertEqual(p.returncode, 0, p.stderr)
        m = re.search(r'model_flops_per_step=(\d+) model_bytes_per_step=(\d+)', p.stderr)
        flops, nbytes = float(m.group(1)), float(m.group(2))
        steps = query(db, 'SELECT * FROM step ORDER BY step')
        self.assertEqual(len(steps), 12)
        self.assertTrue(all(s['model_flops'] == flops and s['model_bytes'] == nbytes for s in steps))
        phases = query(db, 'SELECT name, count(*) AS n, sum(model_flops) AS f FROM phase GROUP BY name')
        self.assertEqual({r['name']: r['n'] for r in phases},
                         {'data': 12, 'forward': 12, 'backward': 12, 'optimizer': 12})
        # the phases' declared FLOPs add up to the steps' exactly
        self.assertEqual(sum(r['f'] or 0 for r in phases), 12 * flops)
        self.assertEqual(query(db, 'SELECT count(*) AS n FROM anomaly')[0]['n'], 0)

    def test_python_training_loop(self):
        db = self.path('run.sqlite')
        env = dict(os.environ, MFU_LIBRARY=prog('MFU_LIBMFU'), PYTHONPATH=os.environ.get('MFU_PYTHON_DIR', ''))
        script = os.path.join(os.environ['MFU_SRCDIR'], 'tests/workloads/train.py')
        p = record(['-o', db], [sys.executable, script, '--steps', '15', '--quiet'], env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        m = re.search(r'model_flops_per_step=(\d+)', p.stderr)
        steps = query(db, 'SELECT * FROM step WHERE complete = 1')
        self.assertEqual(len(steps), 15)
        self.assertTrue(all(s['model_flops'] == float(m.group(1)) for s in steps))
        names = {r['name'] for r in query(db, 'SELECT DISTINCT name FROM phase')}
        self.assertEqual(names, {'data', 'forward', 'backward', 'optimizer'})

    def test_python_without_library_warns_once(self):
        db = self.path('run.sqlite')
        env = dict(os.environ, MFU_LIBRARY=self.path('missing-libmfu.so'),
                   PYTHONPATH=os.environ.get('MFU_PYTHON_DIR', ''))
        script = os.path.join(os.environ['MFU_SRCDIR'], 'tests/workloads/train.py')
        p = record(['-o', db], [sys.executable, script, '--steps', '3', '--quiet'], env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr.count('mfu: cannot load libmfu'), 1, p.stderr)
        self.assertEqual(query(db, 'SELECT count(*) AS n FROM step')[0]['n'], 0)


class LibraryProbes(unittest.TestCase):
    def test_each_marker_is_a_usdt_probe(self):
        out = subprocess.run(['readelf', '-n', prog('MFU_LIBMFU')], stdout=subprocess.PIPE,
                             text=True, check=True).stdout
        probes = set(re.findall(r'Provider: (\w+)\s+Name: (\w+)', out))
        self.assertEqual(probes, {('mfu', n) for n in ('step_begin', 'step_end', 'step_model',
                                                        'phase_begin', 'phase_end', 'phase_model')})

    def test_only_the_api_is_exported(self):
        out = subprocess.run(['nm', '-D', '--defined-only', prog('MFU_LIBMFU')], stdout=subprocess.PIPE,
                             text=True, check=True).stdout
        syms = {l.split()[-1].split('@')[0] for l in out.splitlines() if ' T ' in l}
        self.assertEqual(syms, {'mfu_step_begin', 'mfu_step_end', 'mfu_step_model', 'mfu_phase_begin',
                                'mfu_phase_end', 'mfu_phase_model', 'mfu_recording', 'mfu_last_step',
                                'mfu_enable', 'mfu_disable'})


@unittest.skipUnless(os.geteuid() == 0, 'needs root to switch to an unprivileged user')
class HelpText(unittest.TestCase):
    def test_help_fits_80_columns(self):
        for var in ('MFU_RECORD', 'MFU_REPORT', 'MFU_CALIBRATE'):
            if not os.environ.get(var):
                continue
            p = subprocess.run([prog(var), '--help'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, timeout=30)
            self.assertEqual(p.returncode, 0, p.stderr)
            for line in p.stdout.splitlines():
                self.assertLessEqual(len(line), 79, '%s --help: %r' % (var, line))
                self.assertEqual(line, line.rstrip(), '%s --help: trailing blank in %r' % (var, line))
            v = subprocess.run([prog(var), '-V'], stdout=subprocess.PIPE, text=True, timeout=30)
            self.assertEqual(v.returncode, 0)
            self.assertTrue(v.stdout.startswith(os.path.basename(prog(var))), v.stdout)


class RecordNoSteps(TempDirTest):
    def test_a_run_without_markers_says_why(self):
        db = self.path('run.sqlite')
        p = record(['-o', db], ['sh', '-c', 'exit 0'])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('no marker was seen', p.stderr)
        notes = query(db, "SELECT text FROM note WHERE kind = 'no_steps'")
        self.assertEqual(len(notes), 1)
        self.assertIn('--step FUNC', notes[0]['text'])

    def test_a_marked_run_has_no_such_note(self):
        db = self.path('run.sqlite')
        p = record(['-o', db], [wl('steps'), '--steps', '1'])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn('no marker was seen', p.stderr)
        self.assertEqual(query(db, "SELECT count(*) AS n FROM note WHERE kind = 'no_steps'")[0]['n'], 0)


class RecordRecap(TempDirTest):
    """The summary at exit, as perf stat prints one: mfu-report's summary
    section from the finished database, on stderr, unless -q."""

    def test_summary_at_exit_is_the_reports(self):
        db = self.path('run.sqlite')
        p = record(['-o', db, '--peak-flops', '50G'],
                   [wl('steps'), '--steps', '4', '--busy-us', '2000', '--flops', '1000000', '--exit', '5'])
        self.assertEqual(p.returncode, 5, p.stderr)     # still the target's status
        self.assertEqual(p.stdout, '')                  # the program's stdout is its own
        err = p.stderr
        self.assertIn('\nsummary\n', err)
        self.assertRegex(err, r'\n  steps +4 in ')
        self.assertRegex(err, r'\n  run +[0-9.]+ ms exec to exit, exit status 5, recording complete\n')
        # the breakdown's verdict has its group
        self.assertRegex(err, r'\nwhere time went\n  (\d+% of step time|No sampling data)')
        # it is mfu-report's output, byte for byte
        rep = subprocess.run([prog('MFU_REPORT'), '--db', db], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, timeout=60)
        self.assertEqual(rep.returncode, 0, rep.stderr)
        start = err.index('\nsummary\n') + 1
        self.assertEqual(err[start:err.rindex('mfu-record: 4 steps')], rep.stdout)
        self.assertIn('  - the target exited with status 5\n', err)
        # the recorder's notes were said once in full, as they came
        for said in ('no hardware PMU:', 'no memory-controller PMU in'):
            self.assertLessEqual(err.count(said), 1, err)
        # and the closing line comes last
        self.assertRegex(err, r'mfu-record: 4 steps, 12 marker records, 0 lost, 0 anomalies -> .*run\.sqlite\n$')

    def test_quiet_prints_no_summary(self):
        db = self.path('run.sqlite')
        p = record(['-q', '-o', db], [wl('steps'), '--steps', '2', '--exit', '3'])
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertNotIn('summary', p.stderr)
        self.assertNotIn('where time went', p.stderr)
        self.assertNotIn('marker records', p.stderr)

    def test_a_run_without_steps_says_so_once(self):
        db = self.path('run.sqlite')
        p = record(['-o', db], ['sh', '-c', 'exit 0'])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stderr, r'\n  steps +0 complete\n')
        # said once by the recorder as it found it, and once in the summary
        # at exit (mfu-report's own text, which shows the run's notes)
        self.assertEqual(p.stderr.count('mfu-record: note: no marker was seen'), 1, p.stderr)
        self.assertEqual(p.stderr.count('  - no marker was seen'), 1, p.stderr)


class RecordUnprivileged(TempDirTest):
    def test_as_nobody(self):
        db = self.path('run.sqlite')
        clk = self.path('clock.txt')
        cp = nobody_reachable(self, [prog('MFU_RECORD'), wl('steps')])
        cmd = as_nobody([cp[prog('MFU_RECORD')], '-o', db, '--', cp[wl('steps')], '--steps', '5', '--busy-us',
                         '30000', '--sleep-us', '1000', '--clock', clk])
        steal0 = steal_ns()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60, env=cp.env)
        self.assertEqual(p.returncode, 0, p.stderr)
        stolen = steal_ns() - steal0
        steps = query(db, 'SELECT * FROM step ORDER BY step')
        own = read_clock(clk)
        self.assertEqual(len(steps), 5)
        for s in steps:
            o = own[s['step']]
            t0, t1, c0, c1 = o
            self.assertGreaterEqual(s['begin_ns'], t0)
            self.assertLessEqual(s['end_ns'], t1)
            self.assertLessEqual((t1 - t0) - s['wall_ns'], wall_slack(t1 - t0, o.outside), (s, o.outside))
            self.assertLessEqual(abs(s['cpu_ns'] - (c1 - c0)), max(0.02 * (c1 - c0), 100000) + stolen + VM_SLACK_NS)
        paranoid = perf_event_paranoid()
        if paranoid >= 2:
            # user-mode-only switch counts would read 0: unknown, not 0
            self.assertIsNone(steps[0]['ctx_switches'])
            notes = [n['text'] for n in query(db, 'SELECT text FROM note')]
            self.assertTrue(any('context-switches' in n for n in notes), notes)


if __name__ == '__main__':
    unittest.main(verbosity=2)
