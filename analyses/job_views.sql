-- job_views: the steps of a job of several ranks as the job sections read
-- them (job, job_steps, job_notes, job_verdict, ranks). TEMP views over a
-- merged database (mfu-report merge -o job.sqlite run.*.sqlite; schema/job.sql
-- and each rank's tables with a leading rank column) that define the job's
-- figures once. mfu-report makes them when it reads a merged database, and
-- mfu-report merge stores the same two views in the file it writes (as
-- main.job_rank_step and main.job_step), so sqlite3 on a merged file reads
-- them as they are:
--
--   sqlite3 -header -column job.sqlite 'SELECT * FROM job_step'

-- job_rank_step: each rank's time, MFU numerator (flops) and counted FLOPs
-- (hw_flops) in each step every rank completed (matched by step index), its
-- own peak (peak_flops) and its part of the job's FLOP ceiling
-- (job_peak_flops: its peak, less the CPUs it shares with another rank of
-- its host; job_rank_peak), its place among the ranks in that step (up: from
-- the fastest, down: from the slowest; ties by rank), the step's median (the
-- mean of the two middle times for an even number of ranks) and whether it
-- straggled (more than job_setting's straggler_threshold, default 0.10,
-- above the median). An emulated rank's peaks are NULL here: its times are
-- the emulator's, no rate of them is the program's.
CREATE TEMP VIEW job_rank_step AS
WITH thr AS (SELECT coalesce((SELECT value FROM job_setting WHERE name = 'straggler_threshold'), 0.10) AS t),
nr AS (SELECT count(*) AS n FROM job_rank),
common AS (SELECT step FROM step WHERE complete = 1 GROUP BY step HAVING count(*) = (SELECT n FROM nr)),
cs AS (
  SELECT s.rank, s.step, s.wall_ns, s.flops, s.hw_flops,
         CASE WHEN r.emulated IS NULL THEN r.peak_flops END AS peak_flops,
         row_number() OVER (PARTITION BY s.step ORDER BY s.wall_ns, s.rank) AS up,
         row_number() OVER (PARTITION BY s.step ORDER BY s.wall_ns DESC, s.rank) AS down,
         CASE WHEN r.emulated IS NULL THEN jp.peak_flops END AS job_peak_flops
  FROM step AS s JOIN run AS r ON r.rank = s.rank LEFT JOIN job_rank_peak AS jp ON jp.rank = s.rank
  WHERE s.complete = 1 AND s.step IN (SELECT step FROM common)),
-- the median as a window over each step's rows (a join of the ranks' rows
-- with a table of medians was quadratic in the steps: SQLite made no index
-- for it)
md AS (
  SELECT cs.*, avg(CASE WHEN cs.up IN ((nr.n + 1) / 2, (nr.n + 2) / 2) THEN cs.wall_ns END)
                 OVER (PARTITION BY cs.step) AS median_ns
  FROM cs CROSS JOIN nr)
SELECT md.*, md.wall_ns > md.median_ns * (1 + thr.t) AS straggler
FROM md CROSS JOIN thr;

-- job_step: one row per step every rank completed:
--   ranks            ranks in the step (all of them)
--   slowest_rank     the rank with the longest step time (ties: the lowest)
--   max_ns, median_ns, min_ns   the ranks' step times
--   straggler_count, stragglers the ranks more than the threshold above the
--                    median (space-separated, by rank)
--   job_flops        the ranks' MFU numerators summed; NULL if a rank has none
--   job_hw_flops     the ranks' counted FLOPs summed; NULL if a rank has none
--   job_peak_flops   the job's FLOP/s ceiling: the ranks' parts summed; NULL
--                    if a rank has none
--   job_mfu          job_flops / (max_ns / 1e9 * job_peak_flops): the work of
--                    every rank over the job's capacity while the slowest
--                    rank ran (docs/metrics.md, "Jobs of several ranks")
CREATE TEMP VIEW job_step AS
SELECT step,
       count(*)                                             AS ranks,
       max(CASE WHEN down = 1 THEN rank END)                AS slowest_rank,
       max(wall_ns)                                         AS max_ns,
       max(median_ns)                                       AS median_ns,
       min(wall_ns)                                         AS min_ns,
       sum(straggler)                                       AS straggler_count,
       group_concat(CASE WHEN straggler THEN rank END, ' ') AS stragglers,
       CASE WHEN count(flops) = count(*) THEN sum(flops) END AS job_flops,
       CASE WHEN count(hw_flops) = count(*) THEN sum(hw_flops) END AS job_hw_flops,
       CASE WHEN count(job_peak_flops) = count(*) THEN sum(job_peak_flops) END AS job_peak_flops,
       CASE WHEN count(flops) = count(*) AND count(job_peak_flops) = count(*)
            THEN sum(flops) / (max(wall_ns) / 1e9 * sum(job_peak_flops)) END AS job_mfu
FROM (SELECT * FROM job_rank_step ORDER BY step, rank)
GROUP BY step;
