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
--   job_peak_flops the ranks' peaks summed (FLOP/s; run.peak_flops)
--   job_mfu        job_flops / (max_ms / 1e3 * job_peak_flops): the work of
--                  every rank over the job's capacity while the slowest rank
--                  ran (docs/metrics.md, "Jobs of several ranks")
--
-- Run by hand: sqlite3 -header -column job.sqlite < analyses/job_steps.sql
WITH
thr AS (SELECT coalesce((SELECT value FROM job_setting WHERE name = 'straggler_threshold'), 0.10) AS t),
nr AS (SELECT count(*) AS n FROM job_rank),
-- the steps every rank completed, matched by step index
common AS (SELECT step FROM step WHERE complete = 1 GROUP BY step HAVING count(*) = (SELECT n FROM nr)),
-- each rank's time in each common step, ranked within the step (up: from
-- the fastest, down: from the slowest; ties by rank)
cs AS MATERIALIZED (
  SELECT s.rank, s.step, s.wall_ns, s.flops, r.peak_flops,
         row_number() OVER (PARTITION BY s.step ORDER BY s.wall_ns, s.rank) AS up,
         row_number() OVER (PARTITION BY s.step ORDER BY s.wall_ns DESC, s.rank) AS down
  FROM step AS s JOIN run AS r ON r.rank = s.rank
  WHERE s.complete = 1 AND s.step IN (SELECT step FROM common)),
-- the median of the ranks' times in each step (the mean of the two middle
-- ones for an even number of ranks)
med AS MATERIALIZED (
  SELECT cs.step, avg(cs.wall_ns) AS median_ns FROM cs CROSS JOIN nr
  WHERE cs.up IN ((nr.n + 1) / 2, (nr.n + 2) / 2) GROUP BY cs.step),
-- straggler: more than the threshold slower than the step's median
fl AS MATERIALIZED (
  SELECT cs.*, med.median_ns, cs.wall_ns > med.median_ns * (1 + thr.t) AS straggler
  FROM cs JOIN med ON med.step = cs.step CROSS JOIN thr)
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
       CASE WHEN count(peak_flops) = count(*) THEN sum(peak_flops) END AS job_peak_flops,
       CASE WHEN count(flops) = count(*) AND count(peak_flops) = count(*)
            THEN sum(flops) / (max(wall_ns) / 1e9 * sum(peak_flops)) END AS job_mfu
FROM (SELECT * FROM fl ORDER BY step, rank)
GROUP BY step
ORDER BY step;
