-- ranks: one row per rank of a job merged from several databases (the
-- rank from run.rank, or the database's position when the run had none:
-- job_rank.rank_from). Over the steps every rank completed (job_steps):
--   steps            the rank's own complete steps (all of them)
--   common_steps     the steps every rank completed, which the rest cover
--   mean_step_ms     the rank's mean step time (ms)
--   mean_lag_ms      its mean step time minus the steps' median (ms; > 0:
--                    slower than the typical rank)
--   slowest_steps    in how many steps it was the slowest rank
--   straggler_steps  in how many it was a straggler (more than the
--                    threshold above the step's median; job_setting)
--   mfu              its own MFU over those steps: sum(flops) /
--                    (sum(wall) x its peak), at its own pace (the peak
--                    from job_rank_step: none for an emulated rank)
--   peak_flops, peak_source  the rank's peak (FLOP/s) and where it came from
--   run_lib_flops, run_lib_calls  the library FLOPs and calls of the rank's
--                    whole run, in steps or not (NULL when not counted): a
--                    job without steps shows its load imbalance here
--
-- Run by hand: sqlite3 -header -column job.sqlite < analyses/ranks.sql
-- (the figures over the common steps: the view job_rank_totals,
-- analyses/job_views.sql)
WITH
own AS (SELECT rank, count(*) AS steps FROM step WHERE complete = 1 GROUP BY rank)
SELECT jr.rank                                            AS rank,
       r.host                                             AS host,
       coalesce(own.steps, 0)                             AS steps,
       coalesce(t.common_steps, 0)                        AS common_steps,
       t.mean_step_ms                                     AS mean_step_ms,
       t.mean_lag_ms                                      AS mean_lag_ms,
       coalesce(t.slowest_steps, 0)                       AS slowest_steps,
       coalesce(t.straggler_steps, 0)                     AS straggler_steps,
       t.mfu                                              AS mfu,
       r.peak_flops                                       AS peak_flops,
       r.peak_flops_source                                AS peak_source,
       r.ncpu                                             AS ncpu,
       jr.path                                            AS path,
       r.lib_flops                                        AS run_lib_flops,
       r.lib_calls                                        AS run_lib_calls
FROM job_rank AS jr
LEFT JOIN run AS r ON r.rank = jr.rank
LEFT JOIN own ON own.rank = jr.rank
LEFT JOIN job_rank_totals AS t ON t.rank = jr.rank
GROUP BY jr.rank
ORDER BY jr.rank;
