-- thread.cpu_ns: derived by mfu-record when the recording ends, from the
-- context switch records (docs/schema.md).
--
-- A thread's on-CPU time: each switch-in to the next switch-out, plus the
-- run before its first switch (from its fork, or the exec of the first
-- thread, or the attach) and the run after its last switch-in (to its
-- exit).
UPDATE thread SET cpu_ns = (
  SELECT coalesce(sum(CASE WHEN out = 0 AND next_out = 1 THEN next_time - time_ns END), 0)
   + coalesce(max(CASE WHEN prev_out IS NULL AND out = 1 THEN time_ns - coalesce(thread.start_ns,
        (SELECT min(time_ns) FROM exec e WHERE e.pid = thread.pid),
        (SELECT start_ns FROM run WHERE mode = 'attach')) END), 0)
   + coalesce(max(CASE WHEN next_out IS NULL AND out = 0 THEN thread.end_ns - time_ns END), 0)
  FROM (SELECT time_ns, out, LEAD(time_ns) OVER w AS next_time, LEAD(out) OVER w AS next_out,
               LAG(out) OVER w AS prev_out
        FROM switch WHERE switch.tid = thread.tid WINDOW w AS (ORDER BY time_ns, out DESC)));
