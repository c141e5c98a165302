#!/usr/bin/env python3
"""Benchmark mfu-report on a large generated run database.

usage: bench_report.py [--report PATH] [--steps N] [--phases-per-step K]
                       [--intervals N] [--samples-per-step S]
                       [--keep FILE | --db FILE] [--repeat R]
                       [--skip-steps N] [--formats SECTIONS] [--baseline PATH]

Builds a database with N complete steps (default 1,000,000), each with K
complete phases (default 3: data, forward, backward), applying schema/NNN.sql,
then times `mfu-report --db FILE steps phases --format csv > /dev/null`
(and each section alone) R times (default 3) and prints the best wall time
and the CPU time of that run. The target is well under 3 s for 1,000,000
steps. --samples-per-step S (default 0) adds S cpu-clock samples per step
on the marking thread and S on a worker thread of the same process (which
marks nothing), spread over the step and the gap after it, for the sections
that read samples (dispatch, waterfall, breakdown). --skip-steps N times the same with `--skip-steps N` too (what the
TEMP views of that option cost). Not a registered test: it takes a while.

Then, for each section of --formats (default steps,breakdown), it times the
section in csv, table and markdown against the floor: the sqlite3 command-line
shell running the section's own SQL (`mfu-report --sql SECTION`) with -csv
into /dev/null, which is what reading the rows costs before any mfu-report
formatting. It prints the best wall and CPU time of each and their ratio to
the floor (CPU: the steadier on a busy machine), table and markdown over
csv, and each run's peak RSS. --baseline PATH times another mfu-report
binary (the commit before a change) on the same database in the same
session, alternating with --report, so both figures share the machine's
load. --formats '' leaves this part out.

--intervals N adds N interval readings 10 ms apart (the recorder's default
-I) of the four software counters and of the library calls (N = 360,000 is
an hour), for timing the intervals section and the whole-run figures.

It also times `steps phases --format csv` against the sqlite3 shell's csv
dump of the step table (`SELECT * FROM step`), the floor issue 27 sets
(target: at most 1.2x), with --baseline interleaved; medians. Then the
default summary (`mfu-report --db FILE`, target under 1 s wall) and the
HTML report (`--html`, target under 4 s), against the same floor, with
--baseline interleaved; medians of wall and CPU time.

The mfu-report binary comes from --report, else $MFU_REPORT, else
build/src/report/mfu-report under the source tree.
"""
import argparse
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import machine  # noqa: E402
PHASES = ['data', 'forward', 'backward', 'optimizer', 'comm', 'log']


def add_readings(db, n, start):
    """@n readings every 10 ms from @start: the software counters'
    cumulative values (interval_reading) and the library calls'
    (lib_reading), one GEMM-heavy second in every three idle."""
    db.executemany(
        "INSERT INTO counter (id, name, kind, unit, opened, encoding, grp, col) VALUES (?, ?, 'software', ?, 1, ?, 0, ?)",
        [(0, 'task-clock', 'ns', '1:1', 'cpu_ns'), (1, 'context-switches', 'count', '1:3', 'ctx_switches'),
         (2, 'cpu-migrations', 'count', '1:4', 'cpu_migrations'), (3, 'page-faults', 'count', '1:2', 'page_faults')])
    db.execute(
        "WITH RECURSIVE i(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM i WHERE k < ?),"
        " c(id, per) AS (VALUES (0, 15000000), (1, 3), (2, 1), (3, 40))"
        " INSERT INTO interval_reading SELECT ? + k * 10000000, c.id, k * c.per, k * 10000000, k * 10000000"
        " FROM i CROSS JOIN c ORDER BY 1, 2", (n, start))
    db.execute(
        "WITH RECURSIVE i(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM i WHERE k < ?),"
        " b AS (SELECT k, (k / 300) * 100 + min(k % 300, 100) AS busy FROM i)"
        " INSERT INTO lib_reading SELECT ? + k * 10000000, busy * 3000000000, busy * 2000000000,"
        " busy * 1000000000, 0, 0, 0, busy * 40, 0, busy * 40 FROM b", (n, start))
    last = db.execute("SELECT lib_flops, lib_flops_fp64, lib_flops_fp32, lib_calls FROM lib_reading"
                      " ORDER BY time_ns DESC LIMIT 1").fetchone()
    db.execute("UPDATE counter SET total = ? * 15000000 WHERE id = 0", (n,))
    db.execute("UPDATE run SET end_ns = ?, interval_ns = 10000000, lib_counting = 'on', lib_flops = ?,"
               " lib_flops_fp64 = ?, lib_flops_fp32 = ?, lib_flops_bf16 = 0, lib_flops_fp16 = 0,"
               " lib_ops_int8 = 0, lib_calls = ?", (start + n * 10_000_000,) + tuple(last))


def build(path, nsteps, nphases, schema_version=None, nintervals=0, nsamples=0):
    if os.path.exists(path):
        os.unlink(path)
    db = sqlite3.connect(path)
    for name in sorted(os.listdir(os.path.join(ROOT, 'schema'))):
        if name.endswith('.sql') and name[:3].isdigit() and (schema_version is None or
                                                              int(name[:3]) <= schema_version):
            with open(os.path.join(ROOT, 'schema', name), encoding='utf-8') as f:
                db.executescript(f.read())
    db.execute('PRAGMA journal_mode=OFF')
    db.execute('PRAGMA synchronous=OFF')
    start = 1_000_000_000
    db.execute(
        "INSERT INTO run (id, mfu_version, command, start_unix_ns, start_ns, end_ns,"
        " ncpu_affinity, ncpu, dtype, peak_flops, peak_flops_source, peak_bw,"
        " peak_bw_source, exit_status, lost_records, state)"
        " VALUES (1, 'bench', '[\"./app\"]', 0, ?, NULL, 8, 8.0, 'fp32', 1.2e12,"
        " 'spec: 8 cores x 2.4 GHz x 64 FLOP/cycle', 5e10, 'measured: triad', 0, 0,"
        " 'complete')", (start,))
    # Generated in SQL (a recursive CTE), not row by row in Python: 10x faster.
    # Step i begins every 1.2 ms and lasts 0.9-1.1 ms (a fixed pseudo-random
    # sequence); phase j of K takes between 1/2K and 1/K of its step.
    db.execute(
        "WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM i WHERE n + 1 < ?)"
        " INSERT INTO step (step, pid, tid, end_tid, begin_ns, end_ns, wall_ns, model_flops,"
        "  model_bytes, cpu_ns, ctx_switches, cpu_migrations, page_faults, cycles, instructions,"
        "  hw_flops, complete)"
        " SELECT n, 100, 100, 100, ? + n * 1200000,"
        "  ? + n * 1200000 + 900000 + (n * 7919) % 200001, 900000 + (n * 7919) % 200001,"
        "  2.0e8, 4.0e7, (900000 + (n * 7919) % 200001) * 6, n % 4, 0, n % 11,"
        "  NULL, NULL, NULL, 1 FROM i", (nsteps, start, start))
    # Phases go in in id order, as a recording writes them (an out-of-order
    # insert would leave half-empty B-tree pages and slow every scan).
    k = nphases
    if k:
        db.execute("CREATE TEMP TABLE names (j INTEGER PRIMARY KEY, name TEXT)")
        db.executemany("INSERT INTO names VALUES (?, ?)", enumerate(PHASES[:k]))
        db.execute(
            "INSERT INTO phase (id, step, name, pid, tid, depth, parent, begin_ns, end_ns,"
            " wall_ns, model_flops, model_bytes, cpu_ns, ctx_switches, cpu_migrations,"
            " page_faults, cycles, instructions, hw_flops, complete)"
            " SELECT step * ? + j, step, name, 100, 100, 0, NULL,"
            "  begin_ns + j * (wall_ns / ?), begin_ns + j * (wall_ns / ?) + w, w,"
            "  CASE WHEN name <> 'data' THEN 2.0e8 / ? END, NULL, w * 6, 0, 0, 0,"
            "  NULL, NULL, NULL, 1"
            " FROM (SELECT step, begin_ns, wall_ns, j, name,"
            "        wall_ns / (2 * ?) + (step * 104729 + j * 31) % (wall_ns / (2 * ?)) AS w"
            "       FROM step CROSS JOIN names ORDER BY step, j)",
            (k, k, k, k, k, k))
    if nsamples:
        # Sample k of S of a step on thread 100 (the marking thread) and on
        # 101 (a worker) at begin + k * 1.2 ms / S + the thread's offset:
        # most fall in a phase, some in the gap between steps. 4 stacks, one
        # per class, so the dispatch section has rows.
        db.execute("INSERT INTO thread (tid, pid, comm, cpu_ns) VALUES"
                   " (100, 100, 'app', ?), (101, 100, 'worker', ?)",
                   (nsteps * 900000, nsteps * 700000))
        db.executemany("INSERT INTO symbol (id, dso, name, kind, class) VALUES (?, '/app', ?, 'user', ?)",
                       [(1, 'gemm', 'compute'), (2, 'PyEval_EvalFrame', 'dispatch'),
                        (3, 'spin', 'sync'), (4, 'loop', 'user')])
        db.executemany("INSERT INTO stack (id, pid, nframes, leaf, compute, class_symbol)"
                       " VALUES (?, 100, 1, ?, ?, ?)",
                       [(i, i, int(i == 1), i) for i in range(1, 5)])
        db.execute(
            "WITH RECURSIVE k(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM k WHERE n + 1 < ?),"
            " th(tid, off) AS (VALUES (100, 0), (101, 37000))"
            " INSERT INTO sample (time_ns, pid, tid, cpu, kind, kernel, stack, class)"
            " SELECT s.begin_ns + k.n * (1200000 / ?) + th.off, 100, th.tid, 0, 0, 0,"
            "  1 + (s.step + k.n + th.tid) % 4,"
            "  CASE (s.step + k.n + th.tid) % 4 WHEN 0 THEN 'compute' WHEN 1 THEN 'dispatch'"
            "   WHEN 2 THEN 'sync' ELSE 'unclassified' END"
            " FROM step s CROSS JOIN k CROSS JOIN th ORDER BY 1", (nsamples, nsamples))
    t = start + nsteps * 1200000
    if nintervals:
        add_readings(db, nintervals, start)
    db.execute("INSERT INTO note (kind, text) VALUES ('missing_counters',"
               " 'no hardware PMU: cycles, instructions and FP_ARITH are not counted')")
    db.commit()
    db.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--report', default=os.environ.get('MFU_REPORT',
                    os.path.join(ROOT, 'build', 'src', 'report', 'mfu-report')))
    ap.add_argument('--steps', type=int, default=1_000_000)
    ap.add_argument('--phases-per-step', type=int, default=3, choices=range(0, len(PHASES) + 1))
    ap.add_argument('--intervals', type=int, default=0, metavar='N',
                    help='add N interval readings (counters and library calls) 10 ms apart')
    ap.add_argument('--samples-per-step', type=int, default=0, metavar='S',
                    help='cpu-clock samples per step on the marking thread and on a worker each')
    ap.add_argument('--keep', metavar='FILE', help='build the database here and keep it')
    ap.add_argument('--db', metavar='FILE', help='time on this existing database, build none')
    ap.add_argument('--repeat', type=int, default=3)
    ap.add_argument('--skip-steps', type=int, metavar='N',
                    help='also time steps+phases with mfu-report --skip-steps N')
    ap.add_argument('--schema-version', type=int, metavar='N',
                    help='apply the schema files up to N.sql only (default: all), for an older mfu-report')
    ap.add_argument('--formats', default='steps,breakdown', metavar='SECTIONS',
                    help='time these sections in csv, table and markdown against the sqlite3 floor '
                         '(comma-separated; empty: none)')
    ap.add_argument('--baseline', metavar='PATH',
                    help='also time this mfu-report (e.g. built from the previous commit), alternating')
    args = ap.parse_args()
    print(machine())

    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or args.keep or os.path.join(tmp, 'bench.sqlite')
        if not args.db:
            t0 = time.monotonic()
            build(path, args.steps, args.phases_per_step, args.schema_version, args.intervals,
                  args.samples_per_step)
            print('built %s: %d steps, %d phases, %d samples each, %.1f MB in %.1f s' % (
                path, args.steps, args.phases_per_step, 2 * args.samples_per_step,
                os.path.getsize(path) / 1e6,
                time.monotonic() - t0))
        def timed(sections):
            """Best wall and CPU seconds of `mfu-report SECTIONS --format csv`."""
            cmd = [args.report, '--db', path] + sections + ['--format', 'csv']
            best = None
            for _ in range(args.repeat):
                ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.monotonic()
                with open(os.devnull, 'w') as devnull:
                    r = subprocess.run(cmd, stdout=devnull, stderr=subprocess.PIPE)
                wall = time.monotonic() - t0
                ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
                if r.returncode != 0:
                    sys.stderr.write(r.stderr.decode(errors='replace'))
                    sys.exit('bench_report: %s exited %d' % (' '.join(cmd), r.returncode))
                if best is None or wall < best[0]:
                    best = (wall, cpu)
            return best

        # The machine may be busy with other work: CPU time is the steadier
        # number, wall time the one a user waits for.
        print('load average: %.2f %.2f %.2f' % os.getloadavg())
        runs = [['steps'], ['phases'], ['steps', 'phases']]
        if args.skip_steps is not None:
            runs.append(['--skip-steps', str(args.skip_steps), 'steps', 'phases'])
        for sections in runs:
            if args.repeat <= 0:
                break
            wall, cpu = timed(sections)
            print('mfu-report %-14s --format csv > /dev/null: %6.3f s wall, %6.3f s CPU (best of %d)'
                  % (' '.join(sections), wall, cpu, args.repeat))
        if args.repeat > 0:
            time_against_dump(args, path)
            time_summary_html(args, path)
        formats = [x for x in args.formats.split(',') if x]
        if formats and args.repeat > 0:
            time_formats(args, path, formats)


def run_once(cmd, stdin=None):
    """Wall seconds, CPU seconds and peak RSS (MB) of one run of @cmd, its
    output to /dev/null."""
    with open(os.devnull, 'w') as devnull:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdin=stdin, stdout=devnull, stderr=subprocess.PIPE)
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.stderr.write(err.decode(errors='replace'))
        sys.exit('bench_report: %s exited %d' % (' '.join(cmd), p.returncode))
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def time_against_dump(args, path):
    """`steps phases --format csv` against the sqlite3 shell's csv dump of
    the step table (issue 27's floor: the rows the report reads, before any
    of its work), and against --baseline, interleaved in every round; median
    CPU seconds of --repeat rounds and the ratio to the floor."""
    sqlite = shutil.which('sqlite3')
    configs = []
    if sqlite:
        configs.append(('sqlite3 -csv select * from step', [sqlite, '-readonly', '-csv', '-header', path,
                                                            'SELECT * FROM step']))
    configs.append(('mfu-report steps phases', [args.report, '--db', path, 'steps', 'phases',
                                                '--format', 'csv']))
    if args.baseline:
        configs.append(('baseline steps phases', [args.baseline, '--db', path, 'steps', 'phases',
                                                  '--format', 'csv']))
    got = {label: [] for label, _ in configs}
    for _ in range(args.repeat):
        for label, cmd in configs:
            got[label].append(run_once(cmd)[:2])
    floor = median([c for _, c in got[configs[0][0]]]) if sqlite else None
    print('steps phases against the dump of the step table, median of %d (load %.2f):'
          % (args.repeat, os.getloadavg()[0]))
    for label, _ in configs:
        cpu = median([c for _, c in got[label]])
        wall = median([w for w, _ in got[label]])
        ratio = '  %5.2fx the floor (CPU; target <= 1.2)' % (cpu / floor) if floor else ''
        print('  %-32s %6.3f s wall, %6.3f s CPU%s' % (label, wall, cpu, ratio))


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2


def time_summary_html(args, path):
    """The default summary and --html (issue 27: under 1 s and 4 s wall
    on a million steps), against the sqlite3 dump of the step table and
    --baseline, interleaved in every round; medians of --repeat rounds."""
    sqlite = shutil.which('sqlite3')
    page = os.path.join(os.path.dirname(path) or '.', '.bench-report.html')
    configs = []
    if sqlite:
        configs.append(('sqlite3 -csv select * from step', [sqlite, '-readonly', '-csv', '-header', path,
                                                            'SELECT * FROM step']))
    for label, binary in [('', args.report)] + ([('baseline ', args.baseline)] if args.baseline else []):
        configs.append(('%smfu-report (summary)' % label, [binary, '--db', path]))
        configs.append(('%smfu-report --html' % label, [binary, '--db', path, '--html', page]))
    got = {label: [] for label, _ in configs}
    for _ in range(args.repeat):
        for label, cmd in configs:
            got[label].append(run_once(cmd)[:2])
    if os.path.exists(page):
        os.unlink(page)
    floor = median([c for _, c in got[configs[0][0]]]) if sqlite else None
    print('summary and --html, median of %d (load %.2f; targets: summary < 1 s, html < 4 s wall):'
          % (args.repeat, os.getloadavg()[0]))
    for label, _ in configs:
        cpu = median([c for _, c in got[label]])
        wall = median([w for w, _ in got[label]])
        ratio = '  %5.2fx the floor (CPU)' % (cpu / floor) if floor else ''
        print('  %-32s %6.3f s wall, %6.3f s CPU%s' % (label, wall, cpu, ratio))


def time_formats(args, path, sections):
    """Each section in csv, table and markdown, and the sqlite3 floor, best
    of --repeat, the configurations interleaved in every round."""
    sqlite = shutil.which('sqlite3')
    reports = [('', args.report)] + ([('baseline ', args.baseline)] if args.baseline else [])
    for section in sections:
        configs = []
        sql_file = None
        if sqlite:
            sql = subprocess.run([args.report, '--sql', section], stdout=subprocess.PIPE,
                                 check=True).stdout
            sql_file = os.path.join(os.path.dirname(path) or '.', '.bench-%s.sql' % section)
            with open(sql_file, 'wb') as f:
                f.write(sql)
            configs.append(('sqlite3 -csv (floor)', [sqlite, '-readonly', '-csv', '-header', path], sql_file))
        for label, binary in reports:
            for fmt in ('csv', 'table', 'markdown'):
                configs.append(('%smfu-report %s' % (label, fmt),
                                [binary, '--db', path, section, '--format', fmt], None))
        best = {}
        for _ in range(args.repeat):
            for label, cmd, stdin in configs:
                if stdin:
                    with open(stdin, 'rb') as f:
                        got = run_once(cmd, f)
                else:
                    got = run_once(cmd)
                prev = best.get(label)
                if prev is None or got[1] < prev[1]:
                    best[label] = (got[0], got[1], max(got[2], prev[2] if prev else 0))
        if sql_file:
            os.unlink(sql_file)
        floor = best.get('sqlite3 -csv (floor)')
        print('section %s, best of %d (load %.2f):' % (section, args.repeat, os.getloadavg()[0]))
        for label, _, _ in configs:
            wall, cpu, rss = best[label]
            ratio = ' %5.2fx the floor (CPU)' % (cpu / floor[1]) if floor else ''
            csv_label = label.replace('table', 'csv').replace('markdown', 'csv')
            vs_csv = ', %.2fx its csv' % (cpu / best[csv_label][1]) if csv_label != label else ''
            print('  %-30s %6.3f s wall, %6.3f s CPU, %6.1f MB peak RSS%s%s'
                  % (label, wall, cpu, rss, ratio, vs_csv))

if __name__ == '__main__':
    main()
