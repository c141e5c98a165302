-- intervals: the counter groups over time, one row per reading of the
-- recorder (every -I ms; interval_reading), like `perf stat -I`: each
-- counter's increase since the previous reading, scaled by its group's
-- time_enabled / time_running when the kernel multiplexed it.
--   cpus       = task-clock ns / interval ns (CPUs busy on average)
--   cpu_util   = cpus / run.ncpu
--   hw_flops   = counted FLOPs (lane-weighted FP events) in the interval
--   hfu        = hw_flops / (interval seconds * run.peak_flops)
--   lib_flops  = FLOPs of the library calls (BLAS, oneDNN) of every process
--                of the target in the interval (lib_reading, read with the
--                groups); lib_calls the calls. The intervals' lib_flops add
--                up to run.lib_flops exactly. NULL when calls were not
--                counted, 0 when none was made
--   lib_flops_per_s = lib_flops / interval seconds
--   mfu        = lib_flops / (interval seconds * run.peak_flops): the MFU
--                of the interval from its library FLOPs; 0 in an interval
--                without calls of a run that made some, NULL in a run that
--                made none (its FLOPs, if any, came from elsewhere) and for
--                an emulated run (its times are the emulator's)
-- t_ms is the end of the interval, from run.start_ns (exec, or attach).
-- Counters that read 0 by construction (switches and migrations counted
-- in user mode only) are left out, like in the step table.
--
-- Run by hand: sqlite3 -header -column run.sqlite < analyses/intervals.sql
-- (run: analyses/views.sql; its peak_flops is NULL for an emulated run, and
-- native, 1 for a native run, NULL for an emulated one: no rates)
WITH r AS (SELECT start_ns, peak_flops, ncpu, native,
                  (SELECT max(lib_flops) FROM lib_reading) AS lib_total FROM run WHERE id = 1),
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
              WHEN den = 0 THEN draw * 1.0 END * coalesce(weight, 1) AS value,
         NULL AS calls
  FROM d
  WHERE dt > 0
  UNION ALL
  -- the library calls, read at the same times (cumulative integers): one
  -- row each, grouped with the counters in the one GROUP BY below
  SELECT time_ns, dt, 'lib', lib_flops, lib_calls
  FROM (SELECT time_ns,
               time_ns - lag(time_ns) OVER w     AS dt,
               lib_flops - lag(lib_flops) OVER w AS lib_flops,
               lib_calls - lag(lib_calls) OVER w AS lib_calls
        FROM lib_reading
        WINDOW w AS (ORDER BY time_ns))
  WHERE dt > 0),
t AS (
  SELECT time_ns, max(dt) AS dt,
         sum(CASE WHEN col = 'cpu_ns' THEN value END)          AS cpu_ns,
         sum(CASE WHEN col = 'ctx_switches' THEN value END)    AS ctx_switches,
         sum(CASE WHEN col = 'cpu_migrations' THEN value END)  AS cpu_migrations,
         sum(CASE WHEN col = 'page_faults' THEN value END)     AS page_faults,
         sum(CASE WHEN col = 'cycles' THEN value END)          AS cycles,
         sum(CASE WHEN col = 'instructions' THEN value END)    AS instructions,
         sum(CASE WHEN col LIKE 'hw_flops_%' THEN value END)   AS hw_flops,
         sum(CASE WHEN col = 'lib' THEN value END)             AS lib_flops,
         sum(calls)                                            AS lib_calls
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
  t.hw_flops / (t.dt / 1e9 * (SELECT peak_flops FROM r))       AS hfu,
  t.lib_flops                                                   AS lib_flops,
  t.lib_calls                                                   AS lib_calls,
  t.lib_flops / (t.dt / 1e9) * (SELECT native FROM r)          AS lib_flops_per_s,
  CASE WHEN (SELECT lib_total FROM r) > 0
       THEN t.lib_flops / (t.dt / 1e9 * (SELECT peak_flops FROM r)) END AS mfu
FROM t
ORDER BY t.time_ns;
