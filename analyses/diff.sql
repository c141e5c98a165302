-- diff: the per-step values mfu-report --diff BASE NEW compares, for one
-- run: one row per complete step and quantity (kind, name, step, value).
-- mfu-report runs it on each database and compares the two distributions
-- of each (kind, name) in C (src/report/diff.c: the series in step order
-- net of preemption, batch means, log-scale intervals, verdict;
-- docs/report.md, "--diff").
--   step  wall_ms       the step's wall time (ms)
--   step  mfu           its MFU (step.mfu, analyses/views.sql: NULL without a
--                       numerator or a peak, and for an emulated run)
--   step  hw_flops, hw_flops_fp64, hw_flops_fp32   its counted FLOPs (PMU
--                       or emulator), only in runs that counted them: how
--                       an emulated run's counts are compared with a
--                       PMU-counted run's (mfu-report compares only these
--                       when either run is emulated: run.emulated)
--   phase NAME          the wall time of the phase NAME in the step: the sum
--                       of its complete occurrences in that step, all
--                       threads (ms). Only the steps where it ran have a
--                       row: mfu-report counts each other complete step as
--                       0 ms of it (so the phase's mean is the sum of
--                       these values over the number of complete steps).
--                       Phases outside steps are not compared.
--   breakdown blocked_ms ... compute_ms   the breakdown section's split of
--                       the step (ms); NULL where it has none (no samples);
--                       no rows at all in a run recorded without sampling
--   preempted_step wall_ms, preempted_phase NAME   the time in the step, and
--                       in the phase NAME in it, that the thread was
--                       runnable but another task had the CPU (offcpu
--                       kind 'runnable', from context-switch records; ms):
--                       mfu-report compares times net of it (another
--                       program's doing, not this one's). Only steps and
--                       phases that were preempted have a row.
--   switches recorded   one row when the run recorded context switches
--                       (sampling on): its preemption is known, 0 where
--                       there is no preempted row
-- ord orders the rows of the comparison: a phase's first occurrence (the
-- least id), the breakdown's parts in its column order.
-- The at-sign-wrapped name stands for analyses/breakdown.sql; mfu-report --sql diff
-- prints this file with it written out, to run in sqlite3.
WITH
st AS (SELECT step, wall_ns, mfu, hw_flops, hw_flops_fp64, hw_flops_fp32 FROM step WHERE complete = 1),
sw AS (SELECT EXISTS (SELECT 1 FROM sampling) AS recorded),
lim AS (SELECT coalesce(max(dur_ns), 0) AS maxdur FROM offcpu WHERE kind = 'runnable'),
-- without sampling every part is NULL: not worth a pass over the steps
bd AS MATERIALIZED (SELECT * FROM (@breakdown@) WHERE EXISTS (SELECT 1 FROM sampling)),
part(name, ord) AS (VALUES ('blocked_ms', 0), ('runnable_ms', 1), ('kernel_ms', 2), ('sync_ms', 3),
                           ('dispatch_ms', 4), ('unclassified_ms', 5), ('compute_ms', 6))
SELECT 'step' AS kind, 'wall_ms' AS name, 0 AS ord, step, wall_ns / 1e6 AS value FROM st
UNION ALL
SELECT 'step', 'mfu', 1, step, mfu FROM st
UNION ALL
SELECT 'step', 'hw_flops', 2, step, hw_flops FROM st WHERE hw_flops IS NOT NULL
UNION ALL
SELECT 'step', 'hw_flops_fp64', 3, step, hw_flops_fp64 FROM st WHERE hw_flops_fp64 IS NOT NULL
UNION ALL
SELECT 'step', 'hw_flops_fp32', 4, step, hw_flops_fp32 FROM st WHERE hw_flops_fp32 IS NOT NULL
UNION ALL
SELECT 'phase', name, min(id), step, sum(wall_ns) / 1e6
FROM phase WHERE complete = 1 AND step IN (SELECT step FROM st)
GROUP BY step, name
UNION ALL
SELECT 'breakdown', part.name, part.ord, bd.step,
       CASE part.name WHEN 'blocked_ms' THEN bd.blocked_ms WHEN 'runnable_ms' THEN bd.runnable_ms
                      WHEN 'kernel_ms' THEN bd.kernel_ms WHEN 'sync_ms' THEN bd.sync_ms
                      WHEN 'dispatch_ms' THEN bd.dispatch_ms WHEN 'unclassified_ms' THEN bd.unclassified_ms
                      ELSE bd.compute_ms END
FROM bd CROSS JOIN part
UNION ALL
SELECT 'switches', 'recorded', 0, NULL, 1 FROM sw WHERE recorded
UNION ALL
SELECT 'preempted_step', 'wall_ms', 0, bd.step, bd.runnable_ms FROM bd WHERE bd.runnable_ms > 0
UNION ALL
SELECT 'preempted_phase', p.name, min(p.id), p.step,
       sum(min(o.end_ns, p.end_ns) - max(o.start_ns, p.begin_ns)) / 1e6
FROM sw, lim, phase p JOIN offcpu o
  ON o.tid = p.tid AND o.kind = 'runnable' AND o.start_ns < p.end_ns
     AND o.start_ns > p.begin_ns - lim.maxdur - 1 AND o.end_ns > p.begin_ns
WHERE sw.recorded AND p.complete = 1 AND p.step IN (SELECT step FROM st)
GROUP BY p.step, p.name;
