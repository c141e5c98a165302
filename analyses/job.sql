-- job: one row for a job of several ranks (what the summary section shows
-- when mfu-report reads several databases), over the steps every rank
-- completed, matched by step index (job_steps):
--   ranks            ranks merged; world_size the job's own count (NULL
--                    outside mpirun/srun, or when the ranks disagree)
--   steps            the steps every rank completed (the common steps)
--   wall_ms          the job's time in them: per step the slowest rank's
--                    time, summed (ms); mean_step_ms per step
--   mfu              the ranks' MFU at their own pace: sum over ranks and
--                    steps of flops / sum of (wall x the rank's part of
--                    the job's ceiling, job_rank_step.job_peak_flops)
--   job_mfu          at the slowest rank's pace: sum over steps of the
--                    ranks' flops / sum over steps of (the slowest rank's
--                    wall x the job's ceiling), over the steps where every
--                    rank has an MFU numerator and a peak; NULL if none
--                    (docs/metrics.md, "Jobs of several ranks")
--   peak_flops       the job's FLOP/s ceiling: the hosts' ceilings summed
--                    (job_host: a host's is its ranks' peaks summed, CPUs
--                    two of them share counted once); peak_source the
--                    source the ranks share, or 'mixed: ...'
--   peak_bw          the job's memory bandwidth ceiling: each host's once
--                    (its ranks share its sockets: job_host.bw_rule says
--                    how it was counted); peak_bw_source likewise
--   job_flops        the ranks' MFU numerators summed over the steps (NULL
--                    if a rank has none in a step)
--   job_hw_flops     the ranks' counted FLOPs (PMU or --emulate) summed over
--                    the steps (NULL if a rank has none in a step)
--   mean_spread, max_spread   the steps' max/median step time
--   slowest_rank     the rank that was the slowest in the most steps
--                    (ties: the longer total time, then the lower rank);
--                    slowest_steps in how many
--   stragglers       the ranks that were stragglers (step time more than
--                    straggler_threshold above the step's median) and in
--                    how many steps, most often first; straggler_steps the
--                    steps with at least one straggler
--   rank_steps_min, rank_steps_max   the fewest and most complete steps of
--                    a rank; left_out_steps the ranks' complete steps
--                    outside the common ones (summed over the ranks)
--   run_lib_flops    the ranks' library FLOPs over their whole runs, exec to
--                    exit, summed (run.lib_flops; NULL if a rank's calls were
--                    not counted): known with or without markers
--   run_mfu          run_lib_flops / (the job's span x peak_flops): the span
--                    from the first rank's exec to the last rank's exit
--                    (wall clock, start_unix_ns); NULL for emulated ranks or
--                    without a peak, and when no library call was made (as a
--                    run's run_mfu)
--
-- Run by hand: sqlite3 -header -column job.sqlite < analyses/job.sql
WITH
thr AS (SELECT coalesce((SELECT value FROM job_setting WHERE name = 'straggler_threshold'), 0.10) AS t),
-- each rank's time in each step every rank completed, the step's median,
-- straggler or not: the merged database's view job_rank_step
fl AS MATERIALIZED (SELECT * FROM job_rank_step),
-- each step's figures over the ranks (analyses/job_views.sql)
per AS MATERIALIZED (SELECT * FROM job_step),
byrank AS (
  SELECT rank, sum(down = 1) AS slowest, sum(straggler) AS straggler, sum(wall_ns) AS wall_ns
  FROM fl GROUP BY rank),
own AS (SELECT jr.rank, (SELECT count(*) FROM step AS s WHERE s.rank = jr.rank AND s.complete = 1) AS steps
        FROM job_rank AS jr),
-- the job's ceilings, sources and whole-run figures (analyses/job_views.sql)
rr AS MATERIALIZED (SELECT * FROM job_run)
SELECT
  rr.n                                                         AS ranks,
  (SELECT count(*) FROM per)                                   AS steps,
  (SELECT sum(max_ns) FROM per) / 1e6                          AS wall_ms,
  (SELECT sum(CASE WHEN job_peak_flops IS NOT NULL THEN flops END)
          / sum(CASE WHEN flops IS NOT NULL THEN job_capacity END)
   FROM fl)                                                    AS mfu,
  rr.peak_flops                                                AS peak_flops,
  rr.peak_source                                               AS peak_source,
  rr.peak_bw                                                   AS peak_bw,
  rr.dtype                                                     AS dtype,
  (SELECT sum(CASE WHEN job_peak_flops IS NOT NULL THEN job_flops END)
          / sum(CASE WHEN job_flops IS NOT NULL THEN job_capacity END)
   FROM per)                                                   AS job_mfu,
  (SELECT CASE WHEN count(*) > 0 AND count(job_flops) = count(*) THEN sum(job_flops) END FROM per) AS job_flops,
  (SELECT CASE WHEN count(*) > 0 AND count(job_hw_flops) = count(*) THEN sum(job_hw_flops) END FROM per)
                                                               AS job_hw_flops,
  (SELECT avg(max_ns) FROM per) / 1e6                          AS mean_step_ms,
  (SELECT avg(max_ns * 1.0 / nullif(median_ns, 0)) FROM per)   AS mean_spread,
  (SELECT max(max_ns * 1.0 / nullif(median_ns, 0)) FROM per)   AS max_spread,
  (SELECT rank FROM byrank ORDER BY slowest DESC, wall_ns DESC, rank LIMIT 1) AS slowest_rank,
  (SELECT slowest FROM byrank ORDER BY slowest DESC, wall_ns DESC, rank LIMIT 1) AS slowest_steps,
  (SELECT group_concat(rank || ' (' || straggler || ')', ', ')
   FROM (SELECT * FROM byrank WHERE straggler > 0 ORDER BY straggler DESC, rank)) AS stragglers,
  (SELECT count(*) FROM per WHERE straggler_count > 0)              AS straggler_steps,
  (SELECT t FROM thr)                                          AS straggler_threshold,
  (SELECT min(steps) FROM own)                                 AS rank_steps_min,
  (SELECT max(steps) FROM own)                                 AS rank_steps_max,
  (SELECT sum(steps) FROM own) - rr.n * (SELECT count(*) FROM per) AS left_out_steps,
  rr.world_size                                                AS world_size,
  rr.hosts                                                     AS hosts,
  rr.peak_bw_source                                            AS peak_bw_source,
  rr.run_lib_flops                                             AS run_lib_flops,
  rr.run_mfu                                                   AS run_mfu
FROM rr;
