-- intervals: the counter groups over time, one row per reading of the
-- recorder (every -I ms; interval_reading), like `perf stat -I`: each
-- counter's increase since the previous reading, scaled by its group's
-- time_enabled / time_running when the kernel multiplexed it.
--   cpus       = task-clock ns / interval ns (CPUs busy on average)
--   cpu_util   = cpus / run.ncpu
--   hw_flops   = counted FLOPs (lane-weighted FP events) in the interval
--   hfu        = hw_flops / (interval seconds * run.peak_flops)
-- t_ms is the end of the interval, from run.start_ns (exec, or attach).
-- Counters that read 0 by construction (switches and migrations counted
-- in user mode only) are left out, like in the step table.
--
-- Run by hand: sqlite3 -header -column run.sqlite < analyses/intervals.sql
WITH r AS (SELECT start_ns, peak_flops, ncpu FROM run WHERE id = 1),
d AS (
  SELECT ir.time_ns, c.col, c.weight,
         ir.raw - lag(ir.raw) OVER w AS draw,
         ir.time_enabled - lag(ir.time_enabled) OVER w AS den,
         ir.time_running - lag(ir.time_running) OVER w AS drun,
         ir.time_ns - lag(ir.time_ns) OVER w AS dt
  FROM interval_reading ir
  JOIN counter c ON c.id = ir.counter
  WHERE c.reason IS NULL OR c.reason NOT LIKE '%not reported%'
  WINDOW w AS (PARTITION BY ir.counter ORDER BY ir.time_ns)),
v AS (
  SELECT time_ns, dt, col,
         CASE WHEN drun > 0 THEN draw * 1.0 * den / drun
              WHEN den = 0 THEN draw * 1.0 END * coalesce(weight, 1) AS value
  FROM d
  WHERE dt > 0),
t AS (
  SELECT time_ns, max(dt) AS dt,
         sum(CASE WHEN col = 'cpu_ns' THEN value END)          AS cpu_ns,
         sum(CASE WHEN col = 'ctx_switches' THEN value END)    AS ctx_switches,
         sum(CASE WHEN col = 'cpu_migrations' THEN value END)  AS cpu_migrations,
         sum(CASE WHEN col = 'page_faults' THEN value END)     AS page_faults,
         sum(CASE WHEN col = 'cycles' THEN value END)          AS cycles,
         sum(CASE WHEN col = 'instructions' THEN value END)    AS instructions,
         sum(CASE WHEN col LIKE 'hw_flops_%' THEN value END)   AS hw_flops
  FROM v
  GROUP BY time_ns)
SELECT
  (t.time_ns - (SELECT start_ns FROM r)) / 1e6                  AS t_ms,
  t.dt / 1e6                                                    AS interval_ms,
  t.cpu_ns / t.dt                                               AS cpus,
  t.cpu_ns / t.dt / (SELECT ncpu FROM r)                        AS cpu_util,
  t.ctx_switches                                                AS ctx_switches,
  t.cpu_migrations                                              AS cpu_migrations,
  t.page_faults                                                 AS page_faults,
  t.cycles                                                      AS cycles,
  t.instructions                                                AS instructions,
  t.instructions / t.cycles                                     AS ipc,
  t.hw_flops                                                    AS hw_flops,
  t.hw_flops / (t.dt / 1e9 * (SELECT peak_flops FROM r))        AS hfu
FROM t
ORDER BY t.time_ns;
