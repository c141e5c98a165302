-- The merged database of a job of several ranks (mfu-report merge -o
-- job.sqlite run.*.sqlite; docs/report.md, "Jobs of several ranks"): the
-- tables the merge adds to the ranks' own. Each rank's tables (run, step,
-- phase, note and the others of schema/010.sql) are copied as the first
-- rank's database has them, with a leading rank column (src/report/merge.c:
-- the columns follow the ranks' schema version, so they are not written
-- here); the merge then adds the indexes of schema/job_index.sql, the hosts'
-- ceilings (job_host, job_rank_peak: src/report/job_peak.c) and the views of
-- analyses/job_views.sql. Compiled into mfu-report (tools/embed.py).

-- One row per rank: its database as it was named to the merge, and where
-- its rank number came from (run.rank, or its position in the list).
CREATE TABLE main.job_rank (
  rank      INTEGER PRIMARY KEY,
  path      TEXT NOT NULL,
  rank_from TEXT NOT NULL    -- 'run.rank' or 'position'
);

-- The merge's settings, read by the job views: straggler_threshold (a
-- fraction; a rank's step more than this above the step's median
-- straggled; 0.10 by default).
CREATE TABLE main.job_setting (name TEXT PRIMARY KEY, value);
