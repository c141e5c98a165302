-- The one-line verdict above the waterfall section (at-sign-wrapped names stand for those sections' queries).
-- Idle capacity is off-CPU (idle) plus spinning in synchronization (sync).
-- A share or an efficiency above 100% cannot be: it is never printed
-- without saying which class is likely undercounted; above 10000% (declared
-- FLOPs such as 1e300) it is "impossible", not 300 digits.
WITH w AS (SELECT *, CASE WHEN mfu > 100 THEN 'impossible (above 10000%)' ELSE printf('%.1f%%', 100.0 * mfu) END AS mfu_pct,
                  CASE WHEN compute_efficiency > 100 THEN 'impossible (above 10000%)'
                       ELSE printf('%.1f%%', 100.0 * compute_efficiency) END AS eff_pct
           FROM (@waterfall@) WHERE step IS NULL),
why AS (SELECT CASE WHEN w.unclassified > 0.05
                    THEN printf(' %.0f%% of capacity is unclassified code (neither a known compute kernel nor a runtime layer): if it is your math, name it with --compute ''REGEX'' and record again.', 100.0 * w.unclassified)
                    ELSE '' END AS hint FROM w)
SELECT CASE
  WHEN (SELECT count(*) FROM w) = 0 OR (SELECT capacity_ms FROM w) IS NULL THEN 'No complete step.'
  WHEN w.compute IS NULL THEN printf('%.0f%% of the CPUs'' capacity went unused (idle); no samples to split the rest.', 100.0 * w.idle)
  WHEN w.sync + w.kernel + w.dispatch + w.unclassified + w.compute > 1.02
    THEN printf('The target''s threads used %.0f%% of the capacity of its %d CPUs, which cannot be: the CPU count is too low (check run.ncpu and run.cpus_source); the shares below are not meaningful.',
                100.0 * (w.sync + w.kernel + w.dispatch + w.unclassified + w.compute), (SELECT ncpu FROM run))
  WHEN w.mfu IS NULL THEN printf('Of the CPUs'' capacity, %.0f%% was idle, %.0f%% sync wait, %.0f%% kernel, %.0f%% dispatch, %.0f%% unclassified and %.0f%% compute; MFU is unknown (no declared model FLOPs or no peak).',
       100.0 * w.idle, 100.0 * w.sync, 100.0 * w.kernel, 100.0 * w.dispatch, 100.0 * w.unclassified, 100.0 * w.compute)
  WHEN w.compute_efficiency IS NULL
    THEN printf('MFU %s, but no sample was in a known compute kernel, so the compute share and the kernels'' efficiency are unknown (%d samples).', w.mfu_pct, w.samples)
         || (SELECT hint FROM why)
  ELSE printf('MFU %s = compute share %.1f%% x compute-kernel efficiency %s; the largest loss is %s.',
       w.mfu_pct, 100.0 * w.compute, w.eff_pct,
       CASE max(w.idle + w.sync, w.kernel, w.dispatch, w.unclassified, w.compute * max(1 - w.compute_efficiency, 0))
            WHEN w.idle + w.sync THEN CASE WHEN w.sync > 0.005
                 THEN printf('idle capacity (%.0f%%: %.0f%% off-CPU, %.0f%% spinning in synchronization waits)', 100.0 * (w.idle + w.sync), 100.0 * w.idle, 100.0 * w.sync)
                 ELSE printf('idle CPU (%.0f%% of capacity)', 100.0 * w.idle) END
            WHEN w.dispatch THEN printf('dispatch overhead (%.0f%%)', 100.0 * w.dispatch)
            WHEN w.unclassified THEN printf('unclassified code (%.0f%%)', 100.0 * w.unclassified)
            WHEN w.kernel THEN printf('kernel time (%.0f%%)', 100.0 * w.kernel)
            ELSE printf('slow compute kernels (%.0f%% of capacity lost inside them)',
                        100.0 * w.compute * (1 - w.compute_efficiency)) END)
       || CASE WHEN w.compute_efficiency > 1
               THEN printf(' The compute-kernel efficiency above 100%% is impossible: compute time is undercounted (kernel code classified elsewhere%s), the per-core peak is too low for this machine, the declared FLOPs are too high, or too few samples (%d) place the compute share.',
                           CASE WHEN w.unclassified > 0.05
                                THEN printf(': %.0f%% of capacity is unclassified; name your kernels with --compute ''REGEX''', 100.0 * w.unclassified)
                                ELSE '' END, w.samples)
               WHEN w.mfu > 1 THEN ' MFU above 100% is impossible: the peak is too low for this machine or the declared FLOPs are too high.'
               ELSE (SELECT hint FROM why) END
END
FROM w;
