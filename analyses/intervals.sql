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
--                (a call's FLOPs count in the interval in which it returned)
--   lib_flops_per_s = the library FLOP rate of the span of time the interval
--                lies in: a call's FLOPs are counted when it returns, so
--                from one reading with no call running (lib_reading.
--                lib_calls_begun = lib_calls) to the next such reading (a
--                "span": one interval, or all those a long call covers),
--                the FLOPs are exact but not when in the span they were
--                done. Every interval of a span gets the span's lib FLOPs /
--                span seconds: a 0.2 s call read every 10 ms shows its rate
--                in its 20 intervals, not all of it in the one where it
--                returned and 0 in the others
--   rate_span_ms = the span's length: over how many ms lib_flops_per_s and
--                mfu are averaged (interval_ms when no call ran across a
--                reading). lib_flops_per_s and mfu are NULL in a span that
--                begins or ends with a call running (the first reading kept
--                by --skip-steps fell inside a call; the recording stopped
--                inside one): FLOPs of it were done outside the span, or
--                are not counted
--   mfu        = lib_flops_per_s / run.peak_flops: the MFU of the interval
--                from its library FLOPs; 0 in an interval (span) without
--                calls of a run that made some, NULL in a run that made
--                none (its FLOPs, if any, came from elsewhere) and for an
--                emulated run (its times are the emulator's)
-- A reading without lib_calls_begun (a database recorded before it
-- existed; calls counted with uprobes) cannot tell a running call: its
-- interval is a span of its own, as before, and its mfu is NULL where
-- lib_flops_per_s is above the peak (a call that ran across earlier
-- readings, booked whole where it returned: not a rate that was reached).
-- t_ms is the end of the interval, from run.start_ns (exec, or attach).
-- Counters that read 0 by construction (switches and migrations counted
-- in user mode only) are left out, like in the step table.
--
-- Run by hand: sqlite3 -header -column run.sqlite < analyses/intervals.sql
-- (run: analyses/views.sql; its peak_flops is NULL for an emulated run, and
-- native, 1 for a native run, NULL for an emulated one: no rates)
WITH r AS (SELECT start_ns, peak_flops, ncpu, native,
                  (SELECT max(lib_flops) FROM lib_reading) AS lib_total FROM run WHERE id = 1),
-- the library readings; "*, NULL AS lib_calls_begun" reads as NULL a
-- database without that column (SQLite names the second one
-- lib_calls_begun:1 when the first exists). A span ends at a reading with
-- no call running, or unknown.
lr AS (
  SELECT time_ns, lib_flops, lib_calls,
         coalesce(lib_calls_begun <= lib_calls, 1) AS span_end,
         lib_calls_begun IS NULL AS unknown
  FROM (SELECT *, NULL AS lib_calls_begun FROM lib_reading)),
li AS (
  SELECT time_ns,
         time_ns - lag(time_ns) OVER w     AS dt,
         lib_flops - lag(lib_flops) OVER w AS lib_flops,
         lib_calls - lag(lib_calls) OVER w AS lib_calls,
         unknown, span_end,
         first_value(span_end) OVER w AS first_end,
         coalesce(sum(span_end) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS span
  FROM lr
  WINDOW w AS (ORDER BY time_ns)),
-- a span that begins or ends with a call running (the first reading of
-- --skip-steps inside a call; a recording that stopped inside one) holds
-- FLOPs done outside it, or misses some: its rate is unknown
ls AS (
  SELECT time_ns, dt, lib_flops, lib_calls, unknown,
         CASE WHEN max(span_end) OVER s AND (span > 0 OR first_end)
              THEN sum(lib_flops) OVER s END AS span_flops,
         sum(dt) OVER s                      AS span_ns
  FROM li
  WHERE dt > 0
  WINDOW s AS (PARTITION BY span)),
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
         NULL AS calls, NULL AS span_flops, NULL AS span_ns, NULL AS unknown
  FROM d
  WHERE dt > 0
  UNION ALL
  -- the library calls, read at the same times (cumulative integers): one
  -- row each, grouped with the counters in the one GROUP BY below
  SELECT time_ns, dt, 'lib', lib_flops, lib_calls, span_flops, span_ns, unknown
  FROM ls),
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
         sum(calls)                                            AS lib_calls,
         max(span_flops)                                       AS span_flops,
         max(span_ns)                                          AS span_ns,
         max(unknown)                                          AS unknown
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
  t.span_flops / (t.span_ns / 1e9) * (SELECT native FROM r)   AS lib_flops_per_s,
  CASE WHEN (SELECT lib_total FROM r) > 0
        AND NOT (t.unknown AND t.span_flops / (t.span_ns / 1e9) > (SELECT peak_flops FROM r))
       THEN t.span_flops / (t.span_ns / 1e9 * (SELECT peak_flops FROM r)) END AS mfu,
  t.span_ns / 1e6                                               AS rate_span_ms
FROM t
ORDER BY t.time_ns;
