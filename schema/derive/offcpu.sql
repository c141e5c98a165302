-- offcpu: derived by mfu-record when the recording ends, from the context
-- switch records and the samples (docs/schema.md, docs/sampling.md).
--
-- One row per off-CPU interval of a thread: from a switch-out to the
-- thread's next switch-in. Preempted switch-outs are 'runnable' (the thread
-- was ready to run), the others 'blocked' (sleep, I/O, a lock).
CREATE INDEX IF NOT EXISTS switch_tid_time ON switch(tid, time_ns);
CREATE INDEX IF NOT EXISTS sample_tid_time ON sample(tid, time_ns);
INSERT INTO offcpu (pid, tid, start_ns, end_ns, dur_ns, kind)
SELECT pid, tid, time_ns, next_time, next_time - time_ns,
       CASE WHEN preempt THEN 'runnable' ELSE 'blocked' END
FROM (SELECT pid, tid, time_ns, out, preempt,
             LEAD(time_ns) OVER w AS next_time, LEAD(out) OVER w AS next_out
      FROM switch WINDOW w AS (PARTITION BY tid ORDER BY time_ns, out DESC))
WHERE out = 1 AND next_out = 0;

-- Where the thread left the CPU: the switch-out sample taken in the same
-- switch (the nearest within 100 us of the record: both are written in the
-- scheduler's switch path, tens of us apart on a busy VM; root only) ...
UPDATE offcpu SET stack = m.stack, where_source = 'switch_sample' FROM
(SELECT c.oid, (SELECT s.stack FROM sample s WHERE s.tid = c.tid AND s.kind = 1 AND s.time_ns =
     CASE WHEN c.a IS NULL OR (c.b IS NOT NULL AND c.start_ns - c.b <= c.a - c.start_ns)
          THEN c.b ELSE c.a END LIMIT 1) AS stack
 FROM (SELECT o.id AS oid, o.tid, o.start_ns,
        (SELECT max(s.time_ns) FROM sample s WHERE s.tid = o.tid AND s.kind = 1
           AND s.time_ns BETWEEN o.start_ns - 100000 AND o.start_ns) AS b,
        (SELECT min(s.time_ns) FROM sample s WHERE s.tid = o.tid AND s.kind = 1
           AND s.time_ns BETWEEN o.start_ns AND o.start_ns + 100000) AS a
      FROM offcpu o) c) m
WHERE m.oid = offcpu.id AND m.stack IS NOT NULL;

-- ... else the thread's last cpu-clock sample before it.
UPDATE offcpu SET stack = (SELECT stack FROM sample s WHERE s.tid = offcpu.tid AND s.kind = 0
    AND s.time_ns <= offcpu.start_ns ORDER BY s.time_ns DESC LIMIT 1),
    where_source = 'last_sample' WHERE stack IS NULL;
UPDATE offcpu SET where_source = NULL WHERE stack IS NULL;
