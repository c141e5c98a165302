-- job_steps: one row per step of a job of several ranks, matched by step
-- index across the ranks' databases, for the steps every rank completed.
-- Runs on a merged database (mfu-report merge -o job.sqlite run.*.sqlite;
-- mfu-report with several --db merges into a temporary one):
--   ranks          ranks in the step (all of them: only common steps)
--   slowest_rank   the rank with the longest step time (ties: the lowest)
--   max_ms, median_ms, min_ms   the ranks' step times (ms); the median of
--                  an even number of ranks is the mean of the middle two
--   spread         max_ms / median_ms (1: balanced)
--   stragglers     the ranks whose step time is more than the straggler
--                  threshold (job_setting, default 0.10: 10%) above the
--                  median, space-separated; straggler_count their number
--   job_flops      the ranks' MFU numerators summed (step.flops: model
--                  FLOPs declared, else library FLOPs); NULL if a rank has none
--   job_hw_flops   the ranks' counted FLOPs summed (step.hw_flops: the PMU's
--                  or the emulator's); NULL if a rank has none
--   job_peak_flops the job's FLOP/s ceiling: the ranks' peaks summed, CPUs
--                  two ranks of a host share counted once
--                  (job_rank_step.job_peak_flops)
--   job_mfu        job_flops / (max_ms / 1e3 * job_peak_flops): the work of
--                  every rank over the job's capacity while the slowest rank
--                  ran (docs/metrics.md, "Jobs of several ranks")
--
-- Run by hand: sqlite3 -header -column job.sqlite < analyses/job_steps.sql
WITH
-- each rank's time in each step every rank completed, the step's median,
-- straggler or not: the merged database's view job_rank_step
fl AS MATERIALIZED (SELECT * FROM job_rank_step)
SELECT step,
       count(*)                                           AS ranks,
       max(CASE WHEN down = 1 THEN rank END)              AS slowest_rank,
       max(wall_ns) / 1e6                                 AS max_ms,
       max(median_ns) / 1e6                               AS median_ms,
       min(wall_ns) / 1e6                                 AS min_ms,
       max(wall_ns) / nullif(max(median_ns), 0)           AS spread,
       sum(straggler)                                     AS straggler_count,
       group_concat(CASE WHEN straggler THEN rank END, ' ') AS stragglers,
       CASE WHEN count(flops) = count(*) THEN sum(flops) END AS job_flops,
       CASE WHEN count(hw_flops) = count(*) THEN sum(hw_flops) END AS job_hw_flops,
       CASE WHEN count(job_peak_flops) = count(*) THEN sum(job_peak_flops) END AS job_peak_flops,
       CASE WHEN count(flops) = count(*) AND count(job_peak_flops) = count(*)
            THEN sum(flops) / (max(wall_ns) / 1e9 * sum(job_peak_flops)) END AS job_mfu
FROM (SELECT * FROM fl ORDER BY step, rank)
GROUP BY step
ORDER BY step;
