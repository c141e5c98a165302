-- gaps: idle gaps. Every off-CPU interval of every thread of the target
-- that falls inside a step (kind blocked: the thread slept on I/O, a lock,
-- a timer...; runnable: it was ready but preempted), and every gap between
-- two steps of a process (kind between_steps: from one step's end to the
-- next one's begin, where data loading, logging and checkpointing hide).
-- where: the user-space function the thread left the CPU in, and its caller
-- ("read <- load_batch"); for a between-steps gap, where the driver thread
-- spent the longest off-CPU interval of the gap, or else the function most
-- sampled in it. step: the step the gap is in (or follows); phase: the
-- phase open when the interval began by the process's phase timeline, as in
-- dispatch.sql: the thread's own innermost complete phase open then, else
-- the one open on its process's marking thread (the thread that began the
-- process's first step, else its first phase), NULL outside every phase.
-- Times in ms; start from the run's start.
WITH
run0 AS (SELECT start_ns FROM run),
uf AS (  -- user frames of each stack, numbered from the innermost
  SELECT f.stack, row_number() OVER (PARTITION BY f.stack ORDER BY f.depth) AS k,
         -- no symbol: [library] (its file name); a DSO already in brackets
         -- ([unknown], [vdso]) as it is, not [[unknown]]
         coalesce(sy.name,
                  CASE WHEN sy.dso LIKE '[%' THEN sy.dso
                       ELSE '[' || coalesce(replace(sy.dso, rtrim(sy.dso, replace(sy.dso, '/', '')), ''), 'unknown') || ']'
                  END) AS fn
  FROM stack_frame f LEFT JOIN symbol sy ON sy.id = f.symbol
  WHERE NOT f.kernel),
wh AS (
  SELECT a.stack, a.fn || coalesce(' <- ' || b.fn, '') AS text
  FROM uf a LEFT JOIN uf b ON b.stack = a.stack AND b.k = 2
  WHERE a.k = 1),
st AS (SELECT step, pid, tid, begin_ns, end_ns FROM step WHERE complete = 1),
-- an interval's step: the last one its process began at or before the
-- interval's start, if complete and not yet ended then; found in one
-- sorted pass, as waterfall.sql finds a sample's (b: the latest step begin
-- up to each row of the process)
ev AS (
  SELECT pid, begin_ns AS t, 0 AS is_off, NULL AS id FROM step
  UNION ALL
  SELECT pid, start_ns, 1, id FROM offcpu),
evb AS (
  SELECT pid, id, max(CASE WHEN is_off = 0 THEN t END)
           OVER (PARTITION BY pid ORDER BY t, is_off ROWS UNBOUNDED PRECEDING) AS b, is_off
  FROM ev),
-- the phase of an interval: dispatch.sql's walk (the last phase begun on
-- the thread at or before the interval's start, up phase.parent to the
-- nearest one still open, at most 64 phases, among phases begun less than
-- the longest one ago), in lane 0 on the interval's thread and lane 1 on
-- its process's marking thread (mk) when that is another thread
lim_ph AS (SELECT coalesce(max(end_ns - begin_ns), 0) AS maxph, 64 AS max_depth FROM phase WHERE complete = 1),
mk AS MATERIALIZED (
  SELECT pid, coalesce((SELECT st.tid FROM step st WHERE st.pid = t.pid ORDER BY st.step LIMIT 1),
                       (SELECT p.tid FROM phase p WHERE p.pid = t.pid ORDER BY p.id LIMIT 1)) AS tid
  FROM (SELECT pid FROM thread UNION SELECT target_pid FROM run) t WHERE pid IS NOT NULL),
offs AS (
  SELECT o.kind, st.step, o.tid, o.start_ns, o.dur_ns, o.stack,
         (SELECT ph.name FROM phase ph WHERE ph.id = (
            WITH RECURSIVE up(lane, id, parent, open, n) AS (
              SELECT * FROM (
                SELECT 0, p.id, p.parent, coalesce(p.complete = 1 AND p.end_ns > o.start_ns, 0), 1
                FROM phase p
                WHERE p.tid = o.tid AND p.begin_ns <= o.start_ns
                  AND p.begin_ns > o.start_ns - (SELECT maxph FROM lim_ph) - 1
                ORDER BY p.begin_ns DESC, p.id DESC LIMIT 1)
              UNION ALL
              SELECT * FROM (
                SELECT 1, p.id, p.parent, coalesce(p.complete = 1 AND p.end_ns > o.start_ns, 0), 1
                FROM phase p
                WHERE p.tid = (SELECT mk.tid FROM mk WHERE mk.pid = o.pid AND mk.tid <> o.tid)
                  AND p.begin_ns <= o.start_ns
                  AND p.begin_ns > o.start_ns - (SELECT maxph FROM lim_ph) - 1
                ORDER BY p.begin_ns DESC, p.id DESC LIMIT 1)
              UNION ALL
              SELECT up.lane, q.id, q.parent, coalesce(q.complete = 1 AND q.end_ns > o.start_ns, 0), up.n + 1
              FROM up JOIN phase q ON q.id = up.parent
              WHERE NOT up.open AND up.n < (SELECT max_depth FROM lim_ph))
            SELECT id FROM up WHERE open ORDER BY lane LIMIT 1)) AS phase
  FROM evb e CROSS JOIN st ON st.pid = e.pid AND st.begin_ns = e.b
       JOIN offcpu o ON o.id = e.id
  WHERE e.is_off = 1 AND o.start_ns < st.end_ns),
btw AS (
  SELECT step, pid, tid, end_ns AS start_ns, next_begin - end_ns AS dur_ns
  FROM (SELECT step, pid, tid, end_ns, LEAD(begin_ns) OVER (PARTITION BY pid ORDER BY begin_ns) AS next_begin
        FROM st)
  WHERE next_begin IS NOT NULL),
btw_where AS (
  SELECT b.step, coalesce(
    (SELECT wh.text FROM offcpu o JOIN wh ON wh.stack = o.stack
      WHERE o.tid = b.tid AND o.start_ns >= b.start_ns AND o.start_ns < b.start_ns + b.dur_ns
      ORDER BY o.dur_ns DESC LIMIT 1),
    (SELECT wh.text FROM sample s JOIN wh ON wh.stack = s.stack
      WHERE s.tid = b.tid AND s.kind = 0 AND s.time_ns >= b.start_ns AND s.time_ns < b.start_ns + b.dur_ns
      GROUP BY wh.text ORDER BY count(*) DESC LIMIT 1)) AS text
  FROM btw b)
SELECT offs.kind, offs.step, offs.tid, offs.phase, (offs.start_ns - run0.start_ns) / 1e6 AS start_ms, offs.dur_ns / 1e6 AS dur_ms, wh.text AS "where"
FROM offs CROSS JOIN run0 LEFT JOIN wh ON wh.stack = offs.stack
UNION ALL
SELECT 'between_steps', b.step, b.tid, NULL, (b.start_ns - run0.start_ns) / 1e6, b.dur_ns / 1e6, w.text
FROM btw b CROSS JOIN run0 JOIN btw_where w ON w.step = b.step
ORDER BY start_ms;
