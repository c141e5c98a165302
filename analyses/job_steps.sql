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
-- The figures are the view job_step's (analyses/job_views.sql).
--
-- Run by hand: sqlite3 -header -column job.sqlite < analyses/job_steps.sql
SELECT step, ranks, slowest_rank,
       max_ns / 1e6                          AS max_ms,
       median_ns / 1e6                       AS median_ms,
       min_ns / 1e6                          AS min_ms,
       max_ns / nullif(median_ns, 0)         AS spread,
       straggler_count, stragglers, job_flops, job_hw_flops, job_peak_flops, job_mfu
FROM job_step
ORDER BY step;
