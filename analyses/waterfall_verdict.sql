-- The one-line verdict above the waterfall section (at-sign-wrapped names stand for those sections' queries).
WITH w AS (SELECT * FROM (@waterfall@) WHERE step IS NULL)
SELECT CASE
  WHEN (SELECT count(*) FROM w) = 0 OR (SELECT capacity_ms FROM w) IS NULL THEN 'No complete step.'
  WHEN w.compute IS NULL THEN printf('%.0f%% of the CPUs'' capacity went unused (idle); no samples to split the rest.', 100.0 * w.idle)
  WHEN w.mfu IS NULL THEN printf('Of the CPUs'' capacity, %.0f%% was idle, %.0f%% kernel, %.0f%% dispatch and %.0f%% compute; MFU is unknown (no declared model FLOPs or no peak).',
       100.0 * w.idle, 100.0 * w.kernel, 100.0 * w.dispatch, 100.0 * w.compute)
  ELSE printf('MFU %.1f%% = compute share %.1f%% x compute-kernel efficiency %.1f%%; the largest loss is %s.',
       100.0 * w.mfu, 100.0 * w.compute, 100.0 * coalesce(w.compute_efficiency, 0),
       CASE max(w.idle, w.kernel, w.dispatch, w.compute * (1 - coalesce(w.compute_efficiency, 1)))
            WHEN w.idle THEN printf('idle CPU (%.0f%% of capacity)', 100.0 * w.idle)
            WHEN w.dispatch THEN printf('dispatch overhead (%.0f%%)', 100.0 * w.dispatch)
            WHEN w.kernel THEN printf('kernel time (%.0f%%)', 100.0 * w.kernel)
            ELSE printf('slow compute kernels (%.0f%% of capacity lost inside them)',
                        100.0 * w.compute * (1 - w.compute_efficiency)) END)
       -- above 100% cannot be: never silent
       || CASE WHEN w.compute_efficiency > 1
               THEN printf(' The compute-kernel efficiency above 100%% is impossible: the per-core peak is too low for this machine, the declared FLOPs too high, or too few samples (%d) place the compute share.', w.samples)
               ELSE '' END
END
FROM w;
