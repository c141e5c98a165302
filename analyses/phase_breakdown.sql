-- phase_breakdown: breakdown's split for phases: per phase name, summed over
-- its complete occurrences, where the wall time of the thread that ran the
-- phase went: blocked and runnable (off-CPU, from context switches, exact),
-- then the on-CPU rest split into kernel, sync, dispatch, unclassified and
-- compute (docs/metrics.md, "Code classes") by the share
-- of that thread's cpu-clock samples inside the occurrences (NULL without
-- samples; *_lo/*_hi: 95% Wilson interval of the compute share).
-- Only that thread's own samples split its own on-CPU time (a sample of
-- the thread that ran the phase is always in its own open phase, also by
-- the process's phase timeline of dispatch.sql); the samples other threads
-- took during the phase are in dispatch.sql.
-- The names come in the order they first occur, as in the phases section.
WITH
-- mfu-report does not run the lines from "@computed" to "@end": it puts the
-- SQL after "@computed:" in their place, which reads the same g from
-- mfu_phase_split, computed in C in one scan of the occurrences (here SQLite
-- sorts them by name and probes offcpu and sample for each: about 1.7 s a
-- 3 million; src/report/time_split.h). In sqlite3 this file runs as it is.
-- @computed: g AS MATERIALIZED (SELECT * FROM mfu_phase_split),
ph AS (SELECT id, name, tid, begin_ns, end_ns, wall_ns FROM phase WHERE complete = 1),
lim AS (SELECT coalesce(max(dur_ns), 0) AS maxdur FROM offcpu),
-- The off-CPU time and the samples in the occurrences, summed per name
-- straight from the joined rows (what summing each occurrence's sums
-- gives: integers), not per occurrence and joined back to every one of
-- them: that took two lookups and a sort of every occurrence by name
-- (1.3 s of 3 million occurrences).
off AS (
  SELECT ph.name,
         sum(CASE WHEN o.kind = 'blocked' THEN min(o.end_ns, ph.end_ns) - max(o.start_ns, ph.begin_ns) ELSE 0 END) AS blocked_ns,
         sum(CASE WHEN o.kind = 'runnable' THEN min(o.end_ns, ph.end_ns) - max(o.start_ns, ph.begin_ns) ELSE 0 END) AS runnable_ns
  FROM ph, lim JOIN offcpu o
    ON o.tid = ph.tid AND o.start_ns < ph.end_ns AND o.start_ns > ph.begin_ns - lim.maxdur - 1
       AND o.end_ns > ph.begin_ns
  GROUP BY ph.name),
smp AS (
  SELECT ph.name, count(*) AS n, sum(s.class = 'kernel') AS nk, sum(s.class = 'sync') AS ns,
         sum(s.class = 'dispatch') AS nd, sum(s.class = 'unclassified') AS nu, sum(s.class = 'compute') AS nc
  FROM ph JOIN sample s ON s.tid = ph.tid AND s.kind = 0 AND s.time_ns >= ph.begin_ns AND s.time_ns < ph.end_ns
  GROUP BY ph.name),
has AS (SELECT (SELECT count(*) FROM sampling) AS sampling),
base AS (
  SELECT name, min(id) AS first_id, count(*) AS count, sum(wall_ns) AS wall_ns
  FROM ph GROUP BY name),
g AS (
  SELECT base.*,
         CASE WHEN has.sampling THEN coalesce(off.blocked_ns, 0) END AS blocked_ns,
         CASE WHEN has.sampling THEN coalesce(off.runnable_ns, 0) END AS runnable_ns,
         coalesce(smp.n, 0) AS n, coalesce(smp.nk, 0) AS nk, coalesce(smp.ns, 0) AS ns, coalesce(smp.nd, 0) AS nd,
         coalesce(smp.nu, 0) AS nu, coalesce(smp.nc, 0) AS nc
  FROM base CROSS JOIN has LEFT JOIN off ON off.name IS base.name LEFT JOIN smp ON smp.name IS base.name),
-- @end
c AS (SELECT *, wall_ns - blocked_ns - runnable_ns AS oncpu_ns, 3.8416 AS z2 FROM g)
SELECT name AS phase, count,
       wall_ns / 1e6 AS wall_ms,
       blocked_ns / 1e6 AS blocked_ms,
       runnable_ns / 1e6 AS runnable_ms,
       CASE WHEN n > 0 THEN oncpu_ns * nk / n / 1e6 END AS kernel_ms,
       CASE WHEN n > 0 THEN oncpu_ns * ns / n / 1e6 END AS sync_ms,
       CASE WHEN n > 0 THEN oncpu_ns * nd / n / 1e6 END AS dispatch_ms,
       CASE WHEN n > 0 THEN oncpu_ns * nu / n / 1e6 END AS unclassified_ms,
       CASE WHEN n > 0 THEN oncpu_ns * nc / n / 1e6 END AS compute_ms,
       n AS samples,
       CASE WHEN n > 0 THEN max(0.0, ((nc * 1.0 / n) + z2 / (2 * n) - 1.96 * sqrt((nc * 1.0 / n) * (1 - nc * 1.0 / n) / n + z2 / (4.0 * n * n))) / (1 + z2 / n)) END AS compute_lo,
       CASE WHEN n > 0 THEN min(1.0, ((nc * 1.0 / n) + z2 / (2 * n) + 1.96 * sqrt((nc * 1.0 / n) * (1 - nc * 1.0 / n) / n + z2 / (4.0 * n * n))) / (1 + z2 / n)) END AS compute_hi
FROM c
ORDER BY first_id;
