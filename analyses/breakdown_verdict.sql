-- The one-line verdict above the breakdown section. the at-sign-wrapped names
-- stand for those sections' queries (mfu-report substitutes them).
WITH
t AS (SELECT sum(wall_ms) AS wall, sum(blocked_ms) AS blocked, sum(runnable_ms) AS runnable,
             sum(kernel_ms) AS kernel, sum(sync_ms) AS sync, sum(dispatch_ms) AS dispatch,
             sum(unclassified_ms) AS unclassified, sum(compute_ms) AS compute,
             sum(samples) AS n, count(*) AS steps
      FROM (@breakdown@)),
parts AS (
  SELECT 'blocked' AS part, blocked AS ms FROM t UNION ALL
  SELECT 'runnable', runnable FROM t UNION ALL
  SELECT 'kernel', kernel FROM t UNION ALL
  SELECT 'sync', sync FROM t UNION ALL
  SELECT 'dispatch', dispatch FROM t UNION ALL
  SELECT 'unclassified', unclassified FROM t UNION ALL
  SELECT 'compute', compute FROM t),
top AS (SELECT part, ms FROM parts WHERE ms IS NOT NULL ORDER BY ms DESC LIMIT 1),
site AS (SELECT "where" AS w FROM (@gaps@) WHERE kind = 'blocked' AND "where" IS NOT NULL
         GROUP BY "where" ORDER BY sum(dur_ms) DESC LIMIT 1),
fn AS (SELECT CASE WHEN instr(w, ' <- ') > 0
                   THEN substr(w, 1, instr(w, ' <- ') - 1) || '() called from ' || substr(w, instr(w, ' <- ') + 4) || '()'
                   ELSE w || '()' END AS text FROM site),
-- the driver's most sampled unclassified function, to name in the advice
uc AS (SELECT sy.name AS fn, sy.dso FROM sample s JOIN stack st ON st.id = s.stack JOIN symbol sy ON sy.id = coalesce(st.class_symbol, st.leaf)
       WHERE s.class = 'unclassified' AND s.kind = 0 AND sy.name IS NOT NULL AND sy.class = 'user'
         AND s.tid IN (SELECT tid FROM step WHERE complete = 1)
       GROUP BY sy.id ORDER BY count(*) DESC LIMIT 1)
SELECT CASE
  -- no step (a program without markers): the whole run's cpu-clock
  -- samples by class, the split a step's compute/kernel/... parts come from
  WHEN (t.steps = 0 OR t.steps IS NULL) AND EXISTS (SELECT 1 FROM sample WHERE kind = 0)
  THEN (SELECT 'No complete step to break down; over the whole run, the target''s ' || sum(n)
               || ' cpu-clock samples were ' || group_concat(printf('%.0f%% ', 100.0 * n / tot) || cls, ', ')
               || ' (on CPU only; mfu-report dispatch names the functions, mfu-report --trace shows when).'
        FROM (SELECT coalesce(class, 'unknown') AS cls, count(*) AS n,
                     (SELECT count(*) FROM sample WHERE kind = 0) AS tot
              FROM sample WHERE kind = 0 GROUP BY cls ORDER BY n DESC, cls))
  WHEN t.steps = 0 OR t.steps IS NULL THEN 'No complete step: nothing to break down.'
  WHEN t.blocked IS NULL AND (SELECT state FROM run WHERE id = 1) = 'recording'
    THEN 'The recording is still going on: samples and context switches are classified when it ends, so the breakdown is not known yet.'
  WHEN t.blocked IS NULL THEN 'No sampling data in this run (recorded without sampling): the breakdown is unknown.'
  WHEN top.part = 'blocked' THEN printf('%.0f%% of step time is spent blocked%s.', 100.0 * top.ms / t.wall,
       coalesce(' in ' || (SELECT text FROM fn), ''))
  WHEN top.part = 'runnable' THEN printf('%.0f%% of step time the driver thread was ready but preempted: the CPUs are oversubscribed.', 100.0 * top.ms / t.wall)
  WHEN top.part = 'kernel' THEN printf('%.0f%% of step time is spent in the kernel (system calls, page faults).', 100.0 * top.ms / t.wall)
  WHEN top.part = 'sync' THEN printf('%.0f%% of step time the driver thread spun waiting for other threads (OpenMP, TBB or pthread synchronization): load imbalance or too little work per parallel region.', 100.0 * top.ms / t.wall)
  WHEN top.part = 'dispatch' THEN printf('%.0f%% of step time is dispatch overhead: interpreter, framework dispatch, allocators, copies and locks.', 100.0 * top.ms / t.wall)
  WHEN top.part = 'unclassified' THEN printf('%.0f%% of step time is in code that is neither a known compute kernel nor a known runtime layer%s; if it is your math, name it with --compute ''REGEX'' (or --dispatch for glue) and record again.',
       100.0 * top.ms / t.wall, coalesce(' (mostly ' || (SELECT fn FROM uc) || '() in ' || replace((SELECT dso FROM uc), rtrim((SELECT dso FROM uc), replace((SELECT dso FROM uc), '/', '')), '') || ')', ''))
  ELSE printf('%.0f%% of step time is spent in compute kernels (%d samples).', 100.0 * top.ms / t.wall, t.n)
END
FROM t LEFT JOIN top;
