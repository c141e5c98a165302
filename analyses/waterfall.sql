-- waterfall: from the peak to MFU, over all threads of the target (see
-- docs/metrics.md). Each step's CPU capacity is wall x ncpu (the CPUs the target
-- may use); what the target's threads did not use of it is idle; the CPU
-- time they used (task-clock, exact) splits into sync (spinning while
-- waiting for other threads: idle capacity too), kernel, dispatch,
-- unclassified and compute by the classes of all their cpu-clock samples in
-- the step (docs/metrics.md, "Code classes"): the step open in their
-- process at the sample, whichever thread marked it. Then
--   mfu = compute_share x compute_efficiency: the step's MFU (view step;
--         the all-steps row's is step_totals.mfu, when every step has an
--         MFU numerator)
--   compute_efficiency = mfu / compute_share: the MFU numerator's FLOPs
--         over the compute CPU-seconds' share of the peak
-- All shares are fractions of the capacity. The first row (step NULL) is
-- all complete steps together. samples backs the kernel/dispatch/compute
-- split, and compute_lo/compute_hi is the 95% Wilson interval of the compute
-- share; NULL where there are no samples, no peak or no FLOPs;
-- compute_efficiency is NULL (unknown) when no sample was in a compute
-- kernel.
WITH
r AS (SELECT ncpu FROM mfu_peak),
st AS (SELECT step, pid, begin_ns, end_ns, wall_ns, cpu_ns, mfu FROM step WHERE complete = 1),
-- mfu-report does not run the lines from "@computed" to "@end": it reads
-- the same smp from mfu_step_samples, computed in C from one sorted array
-- of the step begins (src/report/time_split.h), and per joins that table
-- itself (SQLite looks a virtual table up by step, not a subquery of one).
-- @computed: smp AS (SELECT * FROM mfu_step_samples), per AS (SELECT st.step, st.wall_ns, st.cpu_ns, st.mfu, coalesce(smp.n, 0) AS n, smp.nk, smp.ns, smp.nd, smp.nu, smp.nc FROM st LEFT JOIN mfu_step_samples AS smp ON smp.step = st.step),
-- A sample's step: the last one its process began at or before the
-- sample, if complete and not yet ended then (a process's steps follow one
-- another). Found in one sorted pass over steps and samples, whatever the
-- indexes (a join of each sample with its process's steps took minutes for
-- 1M steps): b is the latest step begin up to each row of the process.
ev AS (
  SELECT pid, begin_ns AS t, 0 AS is_sample, NULL AS class FROM step
  UNION ALL
  SELECT pid, time_ns, 1, class FROM sample WHERE kind = 0),
evb AS (
  SELECT pid, t, is_sample, class,
         max(CASE WHEN is_sample = 0 THEN t END)
           OVER (PARTITION BY pid ORDER BY t, is_sample ROWS UNBOUNDED PRECEDING) AS b
  FROM ev),
-- CROSS JOIN: samples outside, their step looked up by (pid, begin_ns)
smp AS (
  SELECT st.step, count(*) AS n, sum(e.class = 'kernel') AS nk, sum(e.class = 'sync') AS ns,
         sum(e.class = 'dispatch') AS nd, sum(e.class = 'unclassified') AS nu, sum(e.class = 'compute') AS nc
  FROM evb e CROSS JOIN st ON st.pid = e.pid AND st.begin_ns = e.b
  WHERE e.is_sample = 1 AND e.t < st.end_ns
  GROUP BY st.step),
per AS (
  SELECT st.step, st.wall_ns, st.cpu_ns, st.mfu, coalesce(smp.n, 0) AS n, smp.nk, smp.ns, smp.nd, smp.nu, smp.nc
  FROM st LEFT JOIN smp ON smp.step = st.step),
-- @end
rows AS (
  SELECT NULL AS step, sum(wall_ns) AS wall_ns, sum(cpu_ns) AS cpu_ns,
         (SELECT CASE WHEN all_flops THEN mfu END FROM step_totals) AS mfu,
-- The HTML report reads the all-steps row only (analysis_prepare_summary):
-- without the steps' rows, that row is not held back by the sort below,
-- and it sums the steps and their samples apart: what summing per gives
-- (each smp row is one step's), without a join of every step.
-- @summary: coalesce((SELECT sum(n) FROM smp), 0) AS n, (SELECT sum(nk) FROM smp) AS nk, (SELECT sum(ns) FROM smp) AS ns, (SELECT sum(nd) FROM smp) AS nd, (SELECT sum(nu) FROM smp) AS nu, (SELECT sum(nc) FROM smp) AS nc FROM st HAVING count(*) > 0),
         sum(n) AS n, sum(nk) AS nk, sum(ns) AS ns, sum(nd) AS nd, sum(nu) AS nu, sum(nc) AS nc
  FROM per
  HAVING count(*) > 0  -- no all-steps row without a step
  UNION ALL
  SELECT step, wall_ns, cpu_ns, mfu, n, nk, ns, nd, nu, nc FROM per),
-- @end
w AS (
  SELECT rows.*, wall_ns * r.ncpu AS cap_ns,
         CASE WHEN n > 0 THEN cpu_ns * 1.0 * nc / n END AS compute_ns
  FROM rows CROSS JOIN r)
SELECT step,
       cap_ns / 1e6 AS capacity_ms,
       CASE WHEN cpu_ns IS NOT NULL THEN max(cap_ns - cpu_ns, 0) * 1.0 / cap_ns END AS idle,
       CASE WHEN n > 0 THEN cpu_ns * 1.0 * ns / n / cap_ns END AS sync,
       CASE WHEN n > 0 THEN cpu_ns * 1.0 * nk / n / cap_ns END AS kernel,
       CASE WHEN n > 0 THEN cpu_ns * 1.0 * nd / n / cap_ns END AS dispatch,
       CASE WHEN n > 0 THEN cpu_ns * 1.0 * nu / n / cap_ns END AS unclassified,
       CASE WHEN n > 0 THEN compute_ns / cap_ns END AS compute,
       CASE WHEN n > 0 AND compute_ns > 0 THEN mfu * cap_ns / compute_ns END AS compute_efficiency,
       mfu,
       n AS samples,
       CASE WHEN n > 0 THEN max(0.0, cpu_ns * 1.0 / cap_ns * ((nc * 1.0 / n) + 1.9208 / n
            - 1.96 * sqrt((nc * 1.0 / n) * (1 - nc * 1.0 / n) / n + 0.9604 / (n * n))) / (1 + 3.8416 / n)) END AS compute_lo,
       CASE WHEN n > 0 THEN min(cpu_ns * 1.0 / cap_ns, cpu_ns * 1.0 / cap_ns * ((nc * 1.0 / n) + 1.9208 / n
            + 1.96 * sqrt((nc * 1.0 / n) * (1 - nc * 1.0 / n) / n + 0.9604 / (n * n))) / (1 + 3.8416 / n)) END AS compute_hi
FROM w
ORDER BY step IS NOT NULL, step;
