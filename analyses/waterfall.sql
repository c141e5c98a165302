-- waterfall: from the peak to MFU, over all threads of the target (see
-- docs/metrics.md). Each step's CPU capacity is wall x ncpu (the CPUs the target
-- may use); what the target's threads did not use of it is idle; the CPU
-- time they used (task-clock, exact) splits into sync (spinning while
-- waiting for other threads: idle capacity too), kernel, dispatch,
-- unclassified and compute by the classes of all their cpu-clock samples in
-- the step (docs/metrics.md, "Code classes"). Then
--   compute_efficiency = FLOPs / (compute CPU-seconds x per-core peak)
--   mfu = compute_share x compute_efficiency = FLOPs / (wall x peak)
-- where FLOPs is the MFU numerator, step.flops: the model FLOPs the step
-- declared, else its library calls' FLOPs (step.flops_source).
-- All shares are fractions of the capacity. The first row (step NULL) is
-- all complete steps together. samples backs the kernel/dispatch/compute
-- split, and compute_lo/compute_hi is the 95% Wilson interval of the compute
-- share; NULL where there are no samples, no peak or no FLOPs;
-- compute_efficiency is NULL (unknown) when no sample was in a compute
-- kernel.
WITH
r AS (SELECT ncpu, peak_flops FROM run),
st AS (SELECT step, pid, begin_ns, end_ns, wall_ns, cpu_ns, flops FROM step WHERE complete = 1),
smp AS (
  SELECT st.step, count(*) AS n, sum(s.class = 'kernel') AS nk, sum(s.class = 'sync') AS ns,
         sum(s.class = 'dispatch') AS nd, sum(s.class = 'unclassified') AS nu, sum(s.class = 'compute') AS nc
  FROM st JOIN sample s ON s.pid = st.pid AND s.kind = 0 AND s.time_ns >= st.begin_ns AND s.time_ns < st.end_ns
  GROUP BY st.step),
per AS (
  SELECT st.step, st.wall_ns, st.cpu_ns, st.flops, coalesce(smp.n, 0) AS n, smp.nk, smp.ns, smp.nd, smp.nu, smp.nc
  FROM st LEFT JOIN smp ON smp.step = st.step),
rows AS (
  SELECT NULL AS step, sum(wall_ns) AS wall_ns, sum(cpu_ns) AS cpu_ns,
         sum(flops) AS flops, count(flops) AS declared, count(*) AS nsteps,
         sum(n) AS n, sum(nk) AS nk, sum(ns) AS ns, sum(nd) AS nd, sum(nu) AS nu, sum(nc) AS nc
  FROM per
  HAVING count(*) > 0  -- no all-steps row without a step
  UNION ALL
  SELECT step, wall_ns, cpu_ns, flops, flops IS NOT NULL, 1, n, nk, ns, nd, nu, nc FROM per),
w AS (
  SELECT rows.*, wall_ns * r.ncpu AS cap_ns, r.ncpu, r.peak_flops,
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
       CASE WHEN n > 0 AND compute_ns > 0 AND peak_flops > 0 AND declared = nsteps
            THEN flops / (compute_ns / 1e9 * peak_flops / ncpu) END AS compute_efficiency,
       CASE WHEN peak_flops > 0 AND declared = nsteps THEN flops / (wall_ns / 1e9 * peak_flops) END AS mfu,
       n AS samples,
       CASE WHEN n > 0 THEN cpu_ns * 1.0 / cap_ns * ((nc * 1.0 / n) + 1.9208 / n
            - 1.96 * sqrt((nc * 1.0 / n) * (1 - nc * 1.0 / n) / n + 0.9604 / (n * n))) / (1 + 3.8416 / n) END AS compute_lo,
       CASE WHEN n > 0 THEN cpu_ns * 1.0 / cap_ns * ((nc * 1.0 / n) + 1.9208 / n
            + 1.96 * sqrt((nc * 1.0 / n) * (1 - nc * 1.0 / n) / n + 0.9604 / (n * n))) / (1 + 3.8416 / n) END AS compute_hi
FROM w
ORDER BY step IS NOT NULL, step;
