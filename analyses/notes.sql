-- notes: what a reader of this run should know, one line each: the recorder's
-- notes (e.g. counters that could not be opened and why), which peak every
-- utilization used, steps that declared no model FLOPs, lost marker records,
-- anomalies by kind, incomplete steps, and how the run ended.
--   kind     peak_flops, peak_bw, model_flops, model_bytes, lost_records,
--            anomalies, incomplete_steps, state, exit, or the note table's
--            own kind (e.g. missing_counters)
--   text     the note, one line
--   missing  1 if the note explains data that is missing or unknown (NULL
--            columns, lost records), else 0. mfu-report prints these on
--            stderr for --format csv and json.
--
-- Run by hand: sqlite3 -header -column run.sqlite < analyses/notes.sql
WITH
r AS (SELECT * FROM run WHERE id = 1),
s AS (
  SELECT COUNT(*) AS steps,
         COUNT(model_flops) AS with_flops,
         COUNT(model_bytes) AS with_bytes
  FROM step WHERE complete = 1
),
lines(ord, sub, kind, text, missing) AS (
  SELECT 1, n.id, n.kind, n.text, 1 FROM note AS n
  UNION ALL
  SELECT 2, 0, 'peak_flops',
         CASE WHEN r.peak_flops IS NULL OR r.peak_flops <= 0 THEN
           'no ' || r.dtype || ' FLOP/s peak is known for this run, so mfu and hfu are unknown'
         ELSE
           'mfu and hfu use the ' || r.dtype || ' peak of '
           || CASE WHEN r.peak_flops >= 1e15 THEN printf('%.4g P', r.peak_flops / 1e15)
                   WHEN r.peak_flops >= 1e12 THEN printf('%.4g T', r.peak_flops / 1e12)
                   WHEN r.peak_flops >= 1e9 THEN printf('%.4g G', r.peak_flops / 1e9)
                   ELSE printf('%.4g ', r.peak_flops) END
           || 'FLOP/s for ' || COALESCE(printf('%g', r.ncpu), '?') || ' CPUs ('
           || COALESCE(r.peak_flops_source, 'source not recorded') || ')'
         END,
         r.peak_flops IS NULL OR r.peak_flops <= 0
  FROM r
  UNION ALL
  SELECT 3, 0, 'peak_bw',
         CASE WHEN r.peak_bw IS NULL OR r.peak_bw <= 0 THEN
           'no memory bandwidth peak is known for this run, so mbu is unknown'
         ELSE
           'mbu uses the memory bandwidth peak of '
           || CASE WHEN r.peak_bw >= 1e12 THEN printf('%.4g TB/s', r.peak_bw / 1e12)
                   WHEN r.peak_bw >= 1e9 THEN printf('%.4g GB/s', r.peak_bw / 1e9)
                   ELSE printf('%.4g MB/s', r.peak_bw / 1e6) END
           || ' (' || COALESCE(r.peak_bw_source, 'source not recorded') || ')'
         END,
         r.peak_bw IS NULL OR r.peak_bw <= 0
  FROM r
  UNION ALL
  SELECT 4, 0, 'model_flops',
         CASE WHEN s.with_flops = 0 THEN
           'no step declared its model FLOPs (mfu_step_model), so mfu is unknown'
         ELSE
           'mfu covers ' || s.with_flops || ' of ' || s.steps
           || ' steps; the others declared no model FLOPs'
         END,
         1
  FROM s WHERE s.steps > 0 AND s.with_flops < s.steps
  UNION ALL
  SELECT 4, 1, 'model_bytes',
         CASE WHEN s.with_bytes = 0 THEN
           'no step declared its model bytes (mfu_step_model), so mbu is unknown'
         ELSE
           'mbu covers ' || s.with_bytes || ' of ' || s.steps
           || ' steps; the others declared no model bytes'
         END,
         1
  FROM s WHERE s.steps > 0 AND s.with_bytes < s.steps
  UNION ALL
  SELECT 5, 0, 'lost_records',
         r.lost_records || CASE r.lost_records WHEN 1 THEN ' marker record was' ELSE ' marker records were' END
         || ' lost while recording (ring full or torn);'
         || ' some steps or phases are missing or incomplete',
         1
  FROM r WHERE r.lost_records > 0
  UNION ALL
  SELECT 6, 0, 'anomalies',
         (SELECT CASE COUNT(*) WHEN 1 THEN '1 anomaly: ' ELSE COUNT(*) || ' anomalies: ' END FROM anomaly)
         || (SELECT group_concat(n || ' ' || kind, ', ')
             FROM (SELECT kind, COUNT(*) AS n FROM anomaly
                   GROUP BY kind ORDER BY n DESC, kind)),
         0
  WHERE EXISTS (SELECT 1 FROM anomaly)
  UNION ALL
  SELECT 7, 0, 'incomplete_steps',
         CASE COUNT(*) WHEN 1 THEN '1 step began but never ended; it is'
                       ELSE COUNT(*) || ' steps began but never ended; they are' END
         || ' left out of every table',
         0
  FROM step WHERE complete = 0 HAVING COUNT(*) > 0
  UNION ALL
  SELECT 8, 0, 'state',
         CASE r.state
           WHEN 'recording' THEN 'the recording never finished (mfu-record is still running or died); the data may be partial'
           WHEN 'interrupted' THEN 'the recording was interrupted; the data may be partial'
           WHEN 'detached' THEN 'attached to running process ' || r.target_pid || ' and detached before it ended: '
                || 'the data covers the attached time only'
           ELSE 'the recording failed (state ' || r.state || '); the data may be partial'
         END,
         r.state <> 'detached'
  FROM r WHERE r.state <> 'complete'
  UNION ALL
  SELECT 9, 0, 'exit',
         CASE WHEN r.exit_signal IS NOT NULL
           THEN 'the target was killed by signal ' || r.exit_signal
           ELSE 'the target exited with status ' || r.exit_status END,
         0
  FROM r WHERE r.exit_signal IS NOT NULL OR r.exit_status <> 0
)
SELECT kind, text, missing FROM lines ORDER BY ord, sub;
