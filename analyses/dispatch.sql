-- dispatch: the functions the time went to, per phase: the top 5 symbols of
-- each on-CPU class (docs/metrics.md, "Code classes"): dispatch (interpreter,
-- framework dispatch, allocators, copies, locks), sync (spinning while
-- waiting for other threads), unclassified (code neither a known kernel nor
-- a runtime layer: name it with --compute or --dispatch) and compute, from
-- cpu-clock samples.
-- A sample belongs to a phase by the process's phase timeline: its own
-- thread's innermost complete phase open at that moment if it has one, else
-- the innermost complete phase open then on its process's marking thread
-- (the thread that began the process's first step; in a process without
-- steps, the thread that began its first phase), so a worker thread that
-- marks nothing (an OpenMP or intra-op pool) counts in the phase its work
-- was for. "(no phase)": open on neither, outside every phase. via_process:
-- how many of the row's samples were of a thread other than the phase's,
-- placed by the marking thread's timeline. A sample is attributed to the
-- frame that decided its class (stack.class_symbol: exp() called from your
-- loop counts for the loop). est_ms turns samples into time with each thread's exact
-- on-CPU time (thread.cpu_ns from the switch records / the thread's
-- samples).
-- share: of the phase's on-CPU samples; samples = the count behind it;
-- share_lo, share_hi: its 95% Wilson interval.
WITH
-- max_depth: MAX_DEPTH, the deepest the recorder nests a thread's phases
-- (src/record/markers/markers.c): a walk up phase.parent from the innermost
-- phase passes at most max_depth phases. The bound also ends a walk that
-- goes round a cycle of parents, which only an edited or damaged database
-- has (every phase there then walks max_depth rows and finds what is open
-- on the way, or nothing).
lim AS (SELECT coalesce(max(end_ns - begin_ns), 0) AS maxph, 64 AS max_depth FROM phase WHERE complete = 1),
-- The thread's whole CPU time over all its samples: main.sample, not what
-- mfu-report --skip-steps leaves of them (thread.cpu_ns is the whole run's).
tw AS (  -- ns of on-CPU time one sample of each thread stands for
  SELECT t.tid, t.cpu_ns * 1.0 / count(s.time_ns) AS ns_per_sample
  FROM thread t JOIN main.sample s ON s.tid = t.tid AND s.kind = 0
  WHERE t.cpu_ns IS NOT NULL GROUP BY t.tid),
-- The marking thread of each process: the one that began its first step,
-- else its first phase (one row of each table per process: step and phase
-- ids follow the begins), for the processes of the thread table and the
-- target's.
mk AS MATERIALIZED (
  SELECT pid, coalesce((SELECT st.tid FROM step st WHERE st.pid = t.pid ORDER BY st.step LIMIT 1),
                       (SELECT p.tid FROM phase p WHERE p.pid = t.pid ORDER BY p.id LIMIT 1)) AS tid
  FROM (SELECT pid FROM thread UNION SELECT target_pid FROM run) t WHERE pid IS NOT NULL),
-- A thread's phases nest, so the innermost one open at a sample is the last
-- phase the thread began at or before it, if that one is still open, else
-- its nearest enclosing phase (phase.parent) that is: one step back in the
-- phase_tid_begin index and a walk up at most the nesting depth, per
-- sample, however long the phases are. Only a phase begun less than the
-- longest complete phase ago (lim.maxph) can still be open: that bound keeps
-- a database without the index (its recorder was killed before creating
-- it) from sorting every earlier phase for each sample. The walk runs in
-- two lanes: 0 on the sample's own thread, 1 on its process's marking
-- thread when that is another thread; the phase found in lane 0 wins.
sp AS (
  SELECT s.tid, s.class, s.stack,
         (WITH RECURSIVE up(lane, id, parent, open, n) AS (
            SELECT * FROM (
              SELECT 0, p.id, p.parent, coalesce(p.complete = 1 AND p.end_ns > s.time_ns, 0), 1
              FROM phase p
              WHERE p.tid = s.tid AND p.begin_ns <= s.time_ns
                AND p.begin_ns > s.time_ns - (SELECT maxph FROM lim) - 1
              ORDER BY p.begin_ns DESC, p.id DESC LIMIT 1)
            UNION ALL
            SELECT * FROM (
              SELECT 1, p.id, p.parent, coalesce(p.complete = 1 AND p.end_ns > s.time_ns, 0), 1
              FROM phase p
              WHERE p.tid = (SELECT mk.tid FROM mk WHERE mk.pid = s.pid AND mk.tid <> s.tid)
                AND p.begin_ns <= s.time_ns
                AND p.begin_ns > s.time_ns - (SELECT maxph FROM lim) - 1
              ORDER BY p.begin_ns DESC, p.id DESC LIMIT 1)
            UNION ALL
            SELECT up.lane, q.id, q.parent, coalesce(q.complete = 1 AND q.end_ns > s.time_ns, 0), up.n + 1
            FROM up JOIN phase q ON q.id = up.parent
            WHERE NOT up.open AND up.n < (SELECT max_depth FROM lim))
          SELECT id FROM up WHERE open ORDER BY lane LIMIT 1) AS phase_id
  FROM sample s WHERE s.kind = 0),
spn AS (
  SELECT sp.tid, sp.class, sp.stack, coalesce(p.name, '(no phase)') AS phase, p.tid IS NOT sp.tid AND p.tid IS NOT NULL AS via
  FROM sp LEFT JOIN phase p ON p.id = sp.phase_id),
tot AS (SELECT phase, count(*) AS n FROM spn GROUP BY phase),
agg AS (
  SELECT sp.phase, sp.class, sy.name AS symbol, sy.dso, count(*) AS samples,
         sum(tw.ns_per_sample) / 1e6 AS est_ms, sum(sp.via) AS via_process
  FROM spn sp JOIN stack st ON st.id = sp.stack
          LEFT JOIN symbol sy ON sy.id = coalesce(st.class_symbol, st.leaf)
          LEFT JOIN tw ON tw.tid = sp.tid
  WHERE sp.class IN ('dispatch', 'sync', 'unclassified', 'compute')
  GROUP BY sp.phase, sp.class, sy.name, sy.dso),
ranked AS (
  SELECT agg.*, row_number() OVER (PARTITION BY phase, class ORDER BY samples DESC, symbol) AS rank
  FROM agg)
SELECT r.phase, r.class, r.rank, coalesce(r.symbol, '[unknown]') AS symbol, r.dso, r.samples,
       r.samples * 1.0 / tot.n AS share, r.est_ms,
       max(0.0, ((r.samples * 1.0 / tot.n) + 1.9208 / tot.n - 1.96 * sqrt((r.samples * 1.0 / tot.n) * (1 - r.samples * 1.0 / tot.n) / tot.n
         + 0.9604 / (tot.n * tot.n))) / (1 + 3.8416 / tot.n)) AS share_lo,
       min(1.0, ((r.samples * 1.0 / tot.n) + 1.9208 / tot.n + 1.96 * sqrt((r.samples * 1.0 / tot.n) * (1 - r.samples * 1.0 / tot.n) / tot.n
         + 0.9604 / (tot.n * tot.n))) / (1 + 3.8416 / tot.n)) AS share_hi,
       r.via_process
FROM ranked r JOIN tot ON tot.phase = r.phase
WHERE r.rank <= 5
ORDER BY r.phase, CASE r.class WHEN 'dispatch' THEN 0 WHEN 'sync' THEN 1 WHEN 'unclassified' THEN 2 ELSE 3 END, r.rank;
