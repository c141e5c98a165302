-- job_views: the steps of a job of several ranks, and the job as a whole, as
-- the job sections read them (job, job_steps, job_notes, job_verdict,
-- ranks). TEMP views over a
-- merged database (mfu-report merge -o job.sqlite run.*.sqlite; schema/job.sql
-- and each rank's tables with a leading rank column) that define the job's
-- figures once. mfu-report makes them when it reads a merged database, and
-- mfu-report merge stores the same views in the file it writes (as
-- main.job_rank_step, main.job_step, main.job_rank_totals and main.job_run),
-- so sqlite3 on a
-- merged file reads
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
-- above the median), and job_capacity, the FLOPs its part of the ceiling
-- allows in its step time (wall_ns / 1e9 * job_peak_flops: what the job's
-- MFU at the ranks' own pace divides). An emulated rank's peaks are NULL
-- here: its times are the emulator's, no rate of them is the program's.
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
SELECT md.*, md.wall_ns > md.median_ns * (1 + thr.t) AS straggler,
       md.wall_ns / 1e9 * md.job_peak_flops AS job_capacity
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
--   job_mfu          job_flops / job_capacity: the work of every rank over
--                    the job's capacity while the slowest rank ran
--                    (docs/metrics.md, "Jobs of several ranks")
--   job_capacity     max_ns / 1e9 * job_peak_flops: the FLOPs the job's
--                    ceiling allows while the slowest rank ran
CREATE TEMP VIEW job_step AS
SELECT step, ranks, slowest_rank, max_ns, median_ns, min_ns, straggler_count, stragglers,
       job_flops, job_hw_flops, job_peak_flops, job_flops / job_capacity AS job_mfu, job_capacity
FROM (SELECT step,
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
             CASE WHEN count(job_peak_flops) = count(*)
                  THEN max(wall_ns) / 1e9 * sum(job_peak_flops) END AS job_capacity
      FROM (SELECT * FROM job_rank_step ORDER BY step, rank)
      GROUP BY step);

-- job_rank_totals: one row per rank over the steps every rank completed
-- (job_rank_step; a rank without such steps has no row):
--   common_steps     the common steps (the rank's rows)
--   mean_step_ms     its mean step time (ms)
--   mean_lag_ms      its mean step time minus the steps' median (ms)
--   slowest_steps    in how many it was the slowest rank
--   straggler_steps  in how many it was a straggler
--   mfu              its own MFU over them: sum(flops) / (the wall time of
--                    its steps with flops / 1e9 * its peak_flops), at its
--                    own pace; NULL for an emulated rank
CREATE TEMP VIEW job_rank_totals AS
SELECT rank,
       count(step)                                          AS common_steps,
       avg(wall_ns) / 1e6                                   AS mean_step_ms,
       avg(wall_ns - median_ns) / 1e6                       AS mean_lag_ms,
       sum(down = 1)                                        AS slowest_steps,
       sum(straggler)                                       AS straggler_steps,
       sum(flops) / (sum(CASE WHEN flops IS NOT NULL THEN wall_ns END) / 1e9 * max(peak_flops)) AS mfu
FROM (SELECT * FROM job_rank_step ORDER BY rank, step)
GROUP BY rank;

-- job_run: one row, the job as a whole over the ranks' runs:
--   ranks            the ranks merged (run rows)
--   peak_flops       the job's FLOP/s ceiling: the hosts' ceilings summed
--                    (job_host, computed by mfu-report: a host's is its
--                    ranks' peaks summed, CPUs two of them share counted
--                    once); NULL if a host has none
--   peak_bw          the job's memory bandwidth ceiling, each host's once
--   peak_source, peak_bw_source   the source the ranks share, or 'mixed: ...'
--   dtype            the ranks' dtype, or 'mixed'
--   world_size       the job's own count (NULL outside mpirun/srun, or when
--                    the ranks disagree); hosts the distinct hosts
--   run_lib_flops    the ranks' library FLOPs over their whole runs summed
--                    (NULL if a rank's calls were not counted)
--   span_s           from the first rank's exec to the last rank's exit
--                    (wall clock, start_unix_ns)
--   emulated         1 if a rank ran under the emulator
--   run_mfu          run_lib_flops / (span_s * peak_flops); NULL for emulated
--                    ranks or without a peak, and when no library call was
--                    made
CREATE TEMP VIEW job_run AS
WITH jh AS (SELECT CASE WHEN count(peak_flops) = count(*) THEN sum(peak_flops) END AS peak_flops,
                   CASE WHEN count(peak_bw) = count(*) THEN sum(peak_bw) END AS peak_bw
            FROM job_host),
rr AS (SELECT count(*) AS n,
              (SELECT peak_flops FROM jh)                    AS peak_flops,
              (SELECT peak_bw FROM jh)                       AS peak_bw,
              CASE WHEN count(DISTINCT peak_flops_source) = 1 THEN max(peak_flops_source)
                   WHEN count(DISTINCT peak_flops_source) > 1
                   THEN 'mixed: ' || (SELECT group_concat(s, '; ') FROM (SELECT DISTINCT peak_flops_source AS s
                                          FROM run WHERE s IS NOT NULL ORDER BY s)) END AS peak_source,
              CASE WHEN count(DISTINCT peak_bw_source) = 1 THEN max(peak_bw_source)
                   WHEN count(DISTINCT peak_bw_source) > 1
                   THEN 'mixed: ' || (SELECT group_concat(s, '; ') FROM (SELECT DISTINCT peak_bw_source AS s
                                          FROM run WHERE s IS NOT NULL ORDER BY s)) END AS peak_bw_source,
              CASE WHEN count(DISTINCT dtype) = 1 THEN max(dtype) ELSE 'mixed' END AS dtype,
              CASE WHEN count(DISTINCT world_size) = 1 AND count(world_size) = count(*) THEN max(world_size) END
                                                             AS world_size,
              count(DISTINCT host)                           AS hosts,
              CASE WHEN count(lib_flops) = count(*) THEN sum(lib_flops) END AS run_lib_flops,
              (max(start_unix_ns + end_ns - start_ns) - min(start_unix_ns)) / 1e9 AS span_s,
              count(emulated) > 0                            AS emulated
       FROM run)
SELECT rr.*,
       CASE WHEN NOT rr.emulated AND rr.peak_flops > 0 AND rr.run_lib_flops > 0 AND rr.span_s > 0
            THEN rr.run_lib_flops / (rr.span_s * rr.peak_flops) END AS run_mfu
FROM rr;
