#!/usr/bin/env python3
"""mfu-report --diff on real recordings: does it cry wolf, does it find the
phase that changed, does --fail-on gate a CI job.

The workload is wl_steps with two phases per step, "compute" and "update",
each spinning for a fixed amount of the thread's CPU time (--cpu-us,
--update-us): the same work however busy the machine is. Their wall time
still grows when another task takes the CPU: --diff compares times net of
that preemption (from the context-switch records) and reports it apart as
the machine's contention. No sleeping phase: a wake-up's wait for a CPU
is in the blocked time, which the records cannot tell from the sleep.
150 steps of about 3 ms: 0.45 s a recording on an idle machine.

- A/A: 10 pairs of recordings of the same command must give "no
  significant change" in at least 9 (the count is printed). The intervals
  are batch means' (docs/report.md, "--diff"), and a change under 2% of
  the step time is never named: one run of each shows the variation within
  a run, not between runs, and this machine is shared. If the count falls
  on a busy machine, the statistics are too optimistic: fix them, not this
  bound.
- A/B: "compute" made 20% slower (--cpu-us 1800 against 1500): the verdict
  line names it first after the step time, with most of the step's change;
  "update" is not named.
- --fail-on: exit 3 when a named figure got significantly worse by more
  than its threshold, 0 when not, 2 for bad syntax; the warning when the
  runs are of different programs, machines or peaks.
- --columns: the default table (breakdown rows and all) is at most 120
  columns wide and says how many columns it left out; --columns all shows
  every csv column; a name the diff has not is one line and exit status 2.

Run through meson (`meson test -C BUILD diff_runs`) or by hand with the
MFU_* variables meson sets (tests/e2e/meson.build).
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mfutest import prog, record, section_verdict  # noqa: E402

STEPS = 150
BASE_CPU_US, SLOW_CPU_US, UPDATE_US = 1500, 1800, 1500   # compute +20%
PAIRS, NEED = 10, 9
NO_CHANGE = 'no significant change'
SMALL = 'too small to name'


def report(*args):
    return subprocess.run([prog('MFU_REPORT')] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=120)


def workload(cpu_us):
    return [prog('MFU_WL_STEPS'), '--steps', str(STEPS), '--phases', '--cpu-us', str(cpu_us),
            '--update-us', str(UPDATE_US), '--flops', '1000000']


class DiffRuns(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='mfu-diff-runs-')

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def rec(self, name, cpu_us):
        path = os.path.join(self.tmp, name)
        p = record(['-q', '-o', path], workload(cpu_us))
        self.assertEqual(p.returncode, 0, p.stderr)
        db = sqlite3.connect(path)
        switches = db.execute('SELECT count(*) FROM sampling').fetchone()[0]
        db.close()
        if not switches:
            # without them the times cannot be taken net of preemption,
            # and on a shared machine an A/A of wall times is a lottery
            self.skipTest('mfu-record recorded no context switches here (perf_event_paranoid?)')
        return path

    def rows(self, base, new, *args):
        p = report('--diff', base, new, '-f', 'json', *args)
        self.assertEqual(p.returncode, 0, p.stderr)
        return {(r['kind'], r['name']): r for r in json.loads(p.stdout)}

    def verdict_line(self, base, new):
        p = report('--diff', base, new)
        self.assertEqual(p.returncode, 0, p.stderr)
        return section_verdict(p.stdout)[0]

    def test_aa_no_change(self):
        quiet, lines = 0, []
        for i in range(PAIRS):
            a = self.rec('a%d.sqlite' % i, BASE_CPU_US)
            b = self.rec('b%d.sqlite' % i, BASE_CPU_US)
            rows = self.rows(a, b)
            # the contention row is the machine's, not the program's change
            changed = {k: r['verdict'] for k, r in rows.items()
                       if r['verdict'] not in (NO_CHANGE, SMALL, 'more contention', 'less contention')}
            line = self.verdict_line(a, b)
            # the line says what the rows say
            self.assertEqual(NO_CHANGE + ' in any of the' in line, not changed, line)
            if not changed:
                quiet += 1
            wall = rows[('step', 'wall_ms')]
            lines.append('  pair %d: step %+.2f%% (CI %+.2f%% to %+.2f%%), preempted %+.3f ms per step%s' % (
                i, 100 * wall['change'], 100 * wall['change_lo'], 100 * wall['change_hi'], wall['preempted'] or 0,
                '' if not changed else ': ' + ', '.join('%s %s %s' % (k[0], k[1], v) for k, v in changed.items())))
        print('\nA/A: %d of %d pairs of the same command gave "%s" (need %d)' % (quiet, PAIRS, NO_CHANGE, NEED))
        print('\n'.join(lines))
        self.assertGreaterEqual(quiet, NEED, '\n'.join(lines))

    def test_ab_names_the_slower_phase_first(self):
        base = self.rec('base.sqlite', BASE_CPU_US)
        new = self.rec('slow.sqlite', SLOW_CPU_US)
        rows = self.rows(base, new)
        compute, update, step = rows[('phase', 'compute')], rows[('phase', 'update')], rows[('step', 'wall_ms')]
        self.assertEqual(step['verdict'], 'slower', step)
        self.assertEqual(compute['verdict'], 'slower', compute)
        self.assertIn(update['verdict'], (NO_CHANGE, SMALL), update)
        # about 0.3 ms more per step: the whole of the step's change
        self.assertTrue(0.2 < compute['delta'] < 0.6, compute)
        self.assertTrue(0.7 < compute['share'] < 1.3, compute)
        self.assertTrue(compute['change_lo'] < 0.3 and compute['change_hi'] > 0.1, compute)
        self.assertEqual(rows[('step', 'mfu')]['verdict'], 'lower')
        line = self.verdict_line(base, new)
        print('\nA/B verdict: ' + line.strip())
        # ranked by contribution: the step time, then the phase that did it
        named = sorted((line.index(w), w) for w in ('phase compute', 'phase update', 'breakdown ') if w in line)
        named = [w for _, w in named]
        self.assertTrue(named and named[0] == 'phase compute', line)
        self.assertLess(line.index('step time slower'), line.index('phase compute slower'), line)
        self.assertIn('ms per step', line)
        self.assertIn("of the step's change", line)
        self.assertIn('record again', line)          # one run each: said
        self.assertIn("arguments differ", line)       # the A/B is another command line

        # --fail-on: the step and compute got worse by more than these
        for spec, want in (('step>2%', 3), ('step>50%', 0), ('phase:compute>10%', 3), ('phase:compute>1ms', 0),
                           ('phase:compute>0.1ms', 3), ('phase:update>1%', 0), ('mfu>5%', 3), ('mfu>50%', 0),
                           ('step>50%, phase:compute>0.1ms', 3), ('breakdown:blocked>1%', 0), ('breakdown:sync>1ms', 0)):
            p = report('--diff', base, new, '--fail-on', spec)
            self.assertEqual(p.returncode, want, (spec, p.stderr))
            self.assertIn('diff', p.stdout)                       # the comparison is printed all the same
            if want == 3:
                self.assertRegex(p.stderr, r"--fail-on '[^']*': .* (slower|lower) ", spec)
        # better is never worse; the same run is never worse
        self.assertEqual(report('--diff', new, base, '--fail-on', 'step>0%,phase:compute>0%').returncode, 0)
        self.assertEqual(report('--diff', base, base, '--fail-on', 'step>0%,mfu>0%').returncode, 0)
        # a figure neither run has: said, exit 2
        p = report('--diff', base, new, '--fail-on', 'phase:nosuch>1%')
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("phase nosuch is in neither run", p.stderr)
        # bad syntax: exit 2 before reading, nothing on stdout
        for spec in ('', 'step', 'step>2', 'step>x%', 'step>-1%', 'mfu>1ms', 'phase:>1%', 'wall>2%',
                     'breakdown:idle>1%', 'step>2%,'):
            p = report('--diff', base, new, '--fail-on', spec)
            self.assertEqual(p.returncode, 2, (spec, p.stderr))
            self.assertEqual(p.stdout, '', spec)
            self.assertTrue(p.stderr.startswith("mfu-report: --fail-on "), (spec, p.stderr))
        p = report('--db', base, '--fail-on', 'step>2%')
        self.assertEqual(p.returncode, 2, p.stderr)

    def test_warns_when_the_runs_differ(self):
        a = self.rec('w.sqlite', BASE_CPU_US)
        other = os.path.join(self.tmp, 'other.sqlite')
        shutil.copy(a, other)
        db = sqlite3.connect(other)
        db.execute("UPDATE run SET command = '[\"./other\", \"--x\"]', host = 'elsewhere', peak_flops = peak_flops * 3")
        db.commit()
        db.close()
        p = report('--diff', a, other)
        self.assertEqual(p.returncode, 0, p.stderr)
        for what in ('different programs', 'different machines', 'different peaks'):
            self.assertIn(what, p.stderr)
            self.assertIn(what, section_verdict(p.stdout)[0])
        self.assertIn('Warning: the runs differ', p.stdout)
        # the same run: no warning
        p = report('--diff', a, a)
        self.assertNotIn('warning', p.stderr)
        self.assertNotIn('Warning', p.stdout)
        # one program spelled two ways (./app from /w, /w/app, /w/x/../app):
        # no warning, no "arguments differ"; /elsewhere/app is another one
        def spelled(name, argv0, cwd):
            path = os.path.join(self.tmp, name)
            shutil.copy(a, path)
            db = sqlite3.connect(path)
            db.execute("UPDATE run SET command = json_array(?, '--steps', '5'), cwd = ?", (argv0, cwd))
            db.commit()
            db.close()
            return path
        rel = spelled('rel.sqlite', './app', '/w')
        for other in (spelled('abs.sqlite', '/w/app', '/'), spelled('dots.sqlite', 'x/../app', '/w')):
            p = report('--diff', rel, other)
            self.assertNotIn('warning', p.stderr, other)
            self.assertNotIn('arguments differ', section_verdict(p.stdout)[0], other)
        p = report('--diff', rel, spelled('else.sqlite', '/elsewhere/app', '/w'))
        self.assertIn('different programs (BASE /w/app, NEW /elsewhere/app)', p.stderr)

    def test_columns(self):
        a, b = self.rec('c1.sqlite', BASE_CPU_US), self.rec('c2.sqlite', SLOW_CPU_US)
        header = report('--diff', a, b, '--format', 'csv').stdout.splitlines()[0].split(',')
        verdict, lines = section_verdict(report('--diff', a, b).stdout)
        self.assertLessEqual(max(len(line) for line in report('--diff', a, b).stdout.splitlines()[1:3]), 99)
        # the grid: from the header (under the verdict paragraph) to the rows' end
        grid = [line for line in lines if line and not line.startswith('(')]
        self.assertTrue(any(line.startswith('breakdown') for line in grid), grid)
        widest = max(len(line) for line in grid)
        print('default diff table: %d columns wide' % widest)
        self.assertLessEqual(widest, 120, '\n'.join(grid))
        left = len(header) - len(re.split(r'  +', grid[0].strip()))
        self.assertGreater(left, 0, grid[0])
        self.assertIn('(%d more columns: --columns all; csv and json carry every column)' % left, lines)
        grid_all = [line for line in section_verdict(report('--diff', a, b, '--columns', 'all').stdout)[1] if line]
        self.assertEqual(len(re.split(r'  +', grid_all[0].strip())), len(header))
        self.assertFalse(any('more column' in line for line in grid_all))
        md = report('--diff', a, b, '--format', 'markdown', '--columns', 'verdict,name').stdout
        self.assertIn('| verdict', md)
        self.assertIn('(18 more columns: --columns all', md)
        p = report('--diff', a, b, '--columns', 'name,walltime')
        self.assertEqual((p.returncode, p.stdout), (2, ''))
        self.assertEqual(p.stderr.count('\n'), 1, p.stderr)
        self.assertIn("mfu-report: --columns: no column 'walltime' in diff", p.stderr)
        p = report('--diff', a, b, '--format', 'csv', '--columns', 'all')
        self.assertEqual((p.returncode, p.stdout), (2, ''))


if __name__ == '__main__':
    unittest.main(verbosity=2)
