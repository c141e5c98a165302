-- job_notes: what a reader of a job merged from several ranks should know
-- (what the notes section shows when mfu-report reads several databases),
-- one line each, with the columns of the notes section (kind, text,
-- missing, alert):
--   merge_*          the merge's own notes (note rows with rank NULL):
--                    ranks taken from the databases' positions, different
--                    step counts (the job sections cover the common steps
--                    only), different arguments or jobs, fewer ranks than
--                    the job's world size
--   the ranks' notes the note table of every rank, each text once with
--                    the ranks that have it ("every rank: ...")
--   job_peak         the peak job_mfu divides by: the ranks' peaks summed,
--                    CPUs two ranks of a host share counted once (none for
--                    emulated ranks: merge_emulated says why; the ranks of
--                    a host whose CPU sets are unknown are named: their
--                    peaks are added); a
--                    merge_host_peaks note names the hosts where that and
--                    the memory bandwidth (each host once) made a difference
--   job_mfu          why the job MFU is unknown (ranks without an MFU
--                    numerator or a peak)
--   impossible       a step's job MFU above 100% (alert)
--   dtype            the ranks' peaks are for different dtypes (alert)
--   lib_dtype        most of the ranks' library FLOPs are of another
--                    precision than their peaks' (record with --dtype)
--
-- Run by hand: sqlite3 -header -column job.sqlite < analyses/job_notes.sql
WITH
nr AS (SELECT count(*) AS n FROM job_rank),
-- each rank's time in each step every rank completed, the step's median,
-- straggler or not: the merged database's view job_rank_step
fl AS MATERIALIZED (SELECT * FROM job_rank_step),
-- each step's job MFU (analyses/job_views.sql)
per AS (SELECT step, job_mfu FROM job_step),
rn AS (SELECT n FROM nr),
lines(ord, sub, kind, text, missing, alert) AS (
  SELECT 1, coalesce(id, 0), kind, text, 1, 0 FROM note WHERE rank IS NULL
  UNION ALL
  SELECT 2, min(rank) * 1000000 + min(coalesce(id, 0)), kind,
         CASE WHEN count(*) = (SELECT n FROM rn) AND count(*) > 1 THEN 'every rank: '
              WHEN count(*) = 1 THEN 'rank ' || group_concat(rank, ', ') || ': '
              ELSE 'ranks ' || group_concat(rank, ', ') || ': ' END || text, 1, 0
  FROM (SELECT * FROM note WHERE rank IS NOT NULL ORDER BY rank, id)
  GROUP BY kind, text
  UNION ALL
  SELECT 3, 0, 'job_peak',
         CASE WHEN count(peak_flops) = count(*)
              THEN 'job_mfu divides by the ranks'' ' || max(dtype) || ' peaks summed, each host''s CPUs counted '
                   || 'once: ' || printf('%.4g G', (SELECT sum(peak_flops) FROM job_host) / 1e9) || 'FLOP/s for '
                   || count(*) || CASE WHEN count(*) = 1 THEN ' rank' ELSE ' ranks' END
                   || CASE WHEN count(DISTINCT host) > 1 THEN ' on ' || count(DISTINCT host) || ' hosts' ELSE '' END
                   || coalesce('; but the CPU sets of ' || (SELECT group_concat('ranks ' || ranks
                                                                 || coalesce(' on host ' || host, ''), ' and ')
                                                          FROM job_host WHERE cpus IS NULL AND instr(ranks, ',') > 0)
                               || ' are not recorded, so their peaks are added as if they shared no CPU '
                               || '(a ceiling too high if they did)', '')
              ELSE 'job_mfu is unknown: no FLOP/s peak is known for rank'
                   || CASE WHEN count(*) - count(peak_flops) > 1 THEN 's ' ELSE ' ' END
                   || (SELECT group_concat(rank, ', ') FROM run WHERE peak_flops IS NULL) END,
         count(peak_flops) < count(*), 0
  FROM run
  -- emulated ranks: the merge's own note says why there is no job_mfu
  WHERE NOT EXISTS (SELECT 1 FROM run WHERE emulated IS NOT NULL) HAVING count(*) > 0
  UNION ALL
  SELECT 4, 0, 'job_mfu',
         'job_mfu is unknown in ' || count(*) || ' of ' || (SELECT count(*) FROM per)
         || ' steps: a rank declared no model FLOPs (and had no library FLOPs) there (rank'
         || CASE WHEN (SELECT count(DISTINCT rank) FROM fl WHERE flops IS NULL) > 1 THEN 's ' ELSE ' ' END
         || (SELECT group_concat(rank, ', ') FROM (SELECT DISTINCT rank FROM fl WHERE flops IS NULL ORDER BY rank))
         || ')', 1, 0
  FROM per WHERE job_mfu IS NULL HAVING count(*) > 0 AND (SELECT count(peak_flops) = count(*) FROM run)
  UNION ALL
  SELECT 5, 0, 'impossible',
         count(*) || ' steps have a job MFU above 100% (up to ' || CASE WHEN max(job_mfu) > 100 THEN 'above 10000%' ELSE printf('%.1f%%', 100 * max(job_mfu)) END
         || '): a peak too low or model FLOPs declared too high', 0, 1
  FROM per WHERE job_mfu > 1 HAVING count(*) > 0
  UNION ALL
  SELECT 6, 0, 'dtype',
         'the ranks'' peaks are for different dtypes (' || group_concat(DISTINCT dtype)
         || '): their sum adds unlike numbers', 0, 1
  FROM run HAVING count(DISTINCT dtype) > 1
  UNION ALL
  -- The ranks' library FLOPs by precision (as each rank's own notes say):
  -- most of them in another precision than the peaks'.
  SELECT 6, 1, 'lib_dtype',
         printf('%.0f', d.v * 100.0 / t.lib) || '% of the job''s library FLOPs are ' || d.dtype
         || ', but the job''s MFU uses the ranks'' ' || t.dtype || ' peaks: record with --dtype ' || d.dtype
         || ' for their MFU against the ' || d.dtype || ' peak',
         0, 0
  FROM (SELECT sum(lib_flops) AS lib, max(dtype) AS dtype, count(DISTINCT dtype) AS ndtype,
               sum(lib_flops_fp64) AS fp64, sum(lib_flops_fp32) AS fp32, sum(lib_flops_bf16) AS bf16,
               sum(lib_flops_fp16) AS fp16, sum(lib_ops_int8) AS int8
        FROM run) AS t
  CROSS JOIN (
    SELECT dtype, v FROM (
      SELECT 'fp64' AS dtype, sum(lib_flops_fp64) AS v FROM run UNION ALL
      SELECT 'fp32', sum(lib_flops_fp32) FROM run UNION ALL SELECT 'bf16', sum(lib_flops_bf16) FROM run UNION ALL
      SELECT 'fp16', sum(lib_flops_fp16) FROM run UNION ALL SELECT 'int8', sum(lib_ops_int8) FROM run)
    ORDER BY v DESC LIMIT 1) AS d
  WHERE t.ndtype = 1 AND t.lib > 0 AND d.v > 0.5 * t.lib AND d.dtype <> t.dtype
)
SELECT kind, text, missing, alert FROM lines ORDER BY ord, sub;
