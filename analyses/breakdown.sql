-- breakdown: where each step's wall time went, for the thread that marked
-- the step (the driver thread). The parts are exclusive and add up to the
-- wall time (docs/metrics.md):
--   blocked_ms, runnable_ms  off-CPU, from context-switch records (exact)
--   kernel_ms, sync_ms, dispatch_ms, unclassified_ms, compute_ms  the on-CPU
--       rest, split by the share of the thread's cpu-clock samples in the
--       step of each class (docs/metrics.md, "Code classes"); NULL when the
--       step has no sample.
-- samples is that sample count, and each share has a 95% Wilson interval
-- (*_lo, *_hi, fractions of on-CPU time).
-- Only the driver thread's own samples split its own on-CPU time: the other
-- threads' samples are in waterfall.sql (by the step open in their process)
-- and dispatch.sql (by the process's phase timeline, where a thread with no
-- phase of its own open takes the marking thread's).
-- Needs SQLite's sqrt() (built in since 3.35 with math functions).
WITH
st AS (SELECT step, tid, begin_ns, end_ns, wall_ns FROM step WHERE complete = 1),
lim AS (SELECT coalesce(max(dur_ns), 0) AS maxdur FROM offcpu),
off AS (
  SELECT st.step,
         sum(CASE WHEN o.kind = 'blocked' THEN min(o.end_ns, st.end_ns) - max(o.start_ns, st.begin_ns) ELSE 0 END) AS blocked_ns,
         sum(CASE WHEN o.kind = 'runnable' THEN min(o.end_ns, st.end_ns) - max(o.start_ns, st.begin_ns) ELSE 0 END) AS runnable_ns
  FROM st, lim JOIN offcpu o
    ON o.tid = st.tid AND o.start_ns < st.end_ns AND o.start_ns > st.begin_ns - lim.maxdur - 1
       AND o.end_ns > st.begin_ns
  GROUP BY st.step),
smp AS (
  SELECT st.step, count(*) AS n,
         sum(s.class = 'kernel') AS nk, sum(s.class = 'sync') AS ns, sum(s.class = 'dispatch') AS nd,
         sum(s.class = 'unclassified') AS nu, sum(s.class = 'compute') AS nc
  FROM st JOIN sample s
    ON s.tid = st.tid AND s.kind = 0 AND s.time_ns >= st.begin_ns AND s.time_ns < st.end_ns
  GROUP BY st.step),
has AS (SELECT (SELECT count(*) FROM sampling) AS sampling),
b AS (
  SELECT st.step, st.wall_ns,
         CASE WHEN has.sampling THEN coalesce(off.blocked_ns, 0) END AS blocked_ns,
         CASE WHEN has.sampling THEN coalesce(off.runnable_ns, 0) END AS runnable_ns,
         coalesce(smp.n, 0) AS n, smp.nk, smp.ns, smp.nd, smp.nu, smp.nc
  FROM st CROSS JOIN has LEFT JOIN off ON off.step = st.step LEFT JOIN smp ON smp.step = st.step),
c AS (
  SELECT *, wall_ns - blocked_ns - runnable_ns AS oncpu_ns, 3.8416 AS z2 FROM b)
SELECT step,
       wall_ns / 1e6 AS wall_ms,
       blocked_ns / 1e6 AS blocked_ms,
       runnable_ns / 1e6 AS runnable_ms,
       CASE WHEN n > 0 THEN oncpu_ns * nk / n / 1e6 END AS kernel_ms,
       CASE WHEN n > 0 THEN oncpu_ns * ns / n / 1e6 END AS sync_ms,
       CASE WHEN n > 0 THEN oncpu_ns * nd / n / 1e6 END AS dispatch_ms,
       CASE WHEN n > 0 THEN oncpu_ns * nu / n / 1e6 END AS unclassified_ms,
       CASE WHEN n > 0 THEN oncpu_ns * nc / n / 1e6 END AS compute_ms,
       oncpu_ns / 1e6 AS oncpu_ms,
       n AS samples,
       CASE WHEN n > 0 THEN max(0.0, ((nk * 1.0 / n) + z2 / (2 * n) - 1.96 * sqrt((nk * 1.0 / n) * (1 - nk * 1.0 / n) / n + z2 / (4.0 * n * n))) / (1 + z2 / n)) END AS kernel_lo,
       CASE WHEN n > 0 THEN min(1.0, ((nk * 1.0 / n) + z2 / (2 * n) + 1.96 * sqrt((nk * 1.0 / n) * (1 - nk * 1.0 / n) / n + z2 / (4.0 * n * n))) / (1 + z2 / n)) END AS kernel_hi,
       CASE WHEN n > 0 THEN max(0.0, ((ns * 1.0 / n) + z2 / (2 * n) - 1.96 * sqrt((ns * 1.0 / n) * (1 - ns * 1.0 / n) / n + z2 / (4.0 * n * n))) / (1 + z2 / n)) END AS sync_lo,
       CASE WHEN n > 0 THEN min(1.0, ((ns * 1.0 / n) + z2 / (2 * n) + 1.96 * sqrt((ns * 1.0 / n) * (1 - ns * 1.0 / n) / n + z2 / (4.0 * n * n))) / (1 + z2 / n)) END AS sync_hi,
       CASE WHEN n > 0 THEN max(0.0, ((nd * 1.0 / n) + z2 / (2 * n) - 1.96 * sqrt((nd * 1.0 / n) * (1 - nd * 1.0 / n) / n + z2 / (4.0 * n * n))) / (1 + z2 / n)) END AS dispatch_lo,
       CASE WHEN n > 0 THEN min(1.0, ((nd * 1.0 / n) + z2 / (2 * n) + 1.96 * sqrt((nd * 1.0 / n) * (1 - nd * 1.0 / n) / n + z2 / (4.0 * n * n))) / (1 + z2 / n)) END AS dispatch_hi,
       CASE WHEN n > 0 THEN max(0.0, ((nu * 1.0 / n) + z2 / (2 * n) - 1.96 * sqrt((nu * 1.0 / n) * (1 - nu * 1.0 / n) / n + z2 / (4.0 * n * n))) / (1 + z2 / n)) END AS unclassified_lo,
       CASE WHEN n > 0 THEN min(1.0, ((nu * 1.0 / n) + z2 / (2 * n) + 1.96 * sqrt((nu * 1.0 / n) * (1 - nu * 1.0 / n) / n + z2 / (4.0 * n * n))) / (1 + z2 / n)) END AS unclassified_hi,
       CASE WHEN n > 0 THEN max(0.0, ((nc * 1.0 / n) + z2 / (2 * n) - 1.96 * sqrt((nc * 1.0 / n) * (1 - nc * 1.0 / n) / n + z2 / (4.0 * n * n))) / (1 + z2 / n)) END AS compute_lo,
       CASE WHEN n > 0 THEN min(1.0, ((nc * 1.0 / n) + z2 / (2 * n) + 1.96 * sqrt((nc * 1.0 / n) * (1 - nc * 1.0 / n) / n + z2 / (4.0 * n * n))) / (1 + z2 / n)) END AS compute_hi
FROM c
ORDER BY step;
