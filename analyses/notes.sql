-- notes: what a reader of this run should know, one line each: the recorder's
-- notes (e.g. counters that could not be opened and why), which peak every
-- utilization used, steps that declared no model FLOPs, lost marker records,
-- anomalies by kind, incomplete steps, and how the run ended.
--   kind     peak_flops, peak_bw, model_flops, model_bytes, lost_records,
--            anomalies, incomplete_steps, state, exit, impossible (a
--            utilization above 100%), spec_low (a measured peak more than
--            10% above the spec one), warmup (the first steps much slower
--            than the rest), or the note table's own kind (e.g.
--            missing_counters)
--   text     the note, one line
--   missing  1 if the note explains data that is missing or unknown (NULL
--            columns, lost records), else 0. mfu-report prints these on
--            stderr for --format csv and json.
--
-- Run by hand: sqlite3 -header -column run.sqlite < analyses/notes.sql
WITH
r AS (SELECT * FROM run WHERE id = 1),
-- Each step's utilizations, for the impossible ones.
util(what, step, v) AS (
  SELECT 'MFU', step, model_flops / (wall_ns / 1e9 * (SELECT peak_flops FROM r)) FROM step WHERE complete = 1
  UNION ALL
  SELECT 'HFU', step, hw_flops / (wall_ns / 1e9 * (SELECT peak_flops FROM r)) FROM step WHERE complete = 1
  UNION ALL
  SELECT 'MBU', step, model_bytes / (wall_ns / 1e9 * (SELECT peak_bw FROM r)) FROM step WHERE complete = 1
),
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
           || CASE WHEN r.dtype = 'int8' THEN 'op/s' ELSE 'FLOP/s' END || ' for '
           || CASE WHEN r.ncores IS NOT NULL
                   THEN printf('%g', r.ncores) || CASE WHEN r.ncores = 1 THEN ' core' ELSE ' cores' END
                        || CASE WHEN r.ncores <> r.ncpu THEN ' (' || printf('%g', r.ncpu) || ' CPUs)' ELSE '' END
                   ELSE COALESCE(printf('%g', r.ncpu), '?') || ' CPUs' END
           || ' (' || COALESCE(r.peak_flops_source, 'source not recorded') || ')'
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
  SELECT 9, 1, 'impossible',
         u.n || CASE u.n WHEN 1 THEN ' step has ' ELSE ' steps have ' END || u.what
         || ' above 100% (the highest ' || printf('%.0f', u.worst * 100) || '%, step ' || u.at || '): impossible, so '
         || CASE u.what WHEN 'MBU' THEN 'the bandwidth peak is too low for this machine or the declared bytes too high'
                        WHEN 'HFU' THEN 'the FLOP peak is too low for this machine'
                        ELSE 'the FLOP peak is too low for this machine or the declared FLOPs too high' END
         || ' (run mfu-calibrate; check mfu_step_model())',
         0
  FROM (
    SELECT what, COUNT(*) AS n, MAX(v) AS worst,
           (SELECT x.step FROM util AS x WHERE x.what = util.what ORDER BY x.v DESC LIMIT 1) AS at
    FROM util WHERE v > 1 GROUP BY what
  ) AS u
  UNION ALL
  SELECT 9, 2, 'impossible',
         p.n || CASE p.n WHEN 1 THEN ' occurrence of phase ' ELSE ' occurrences of phase ' END || quote(p.name)
         || CASE p.n WHEN 1 THEN ' has' ELSE ' have' END || ' MFU above 100% (the highest '
         || printf('%.0f', p.worst * 100) || '%): impossible, so the FLOP peak is too low or the declared FLOPs too high',
         0
  FROM (
    SELECT ph.name, COUNT(*) AS n, MAX(ph.model_flops / (ph.wall_ns / 1e9 * r.peak_flops)) AS worst
    FROM phase AS ph, r
    WHERE ph.complete = 1 AND ph.model_flops / (ph.wall_ns / 1e9 * r.peak_flops) > 1
    GROUP BY ph.name
  ) AS p
  UNION ALL
  SELECT 9, 3, 'spec_low',
         'the measured ' || coalesce(m.dtype || ' ', '') || CASE m.kind WHEN 'flops' THEN 'FLOP/s' ELSE 'bandwidth' END
         || ' peak is ' || printf('%.2f', m.value / s.value) || 'x the spec one: the spec is wrong for this machine '
         || '(its CPU row, or its frequency: a VM''s TSC rate is not its core clock, and cores turbo)'
         || CASE WHEN r.peak_mode = 'auto' THEN '; --peak auto uses the measured one' ELSE '' END,
         0
  FROM peak AS m
  JOIN peak AS s ON s.kind = m.kind AND s.scope = m.scope AND s.dtype IS m.dtype AND s.source = 'spec'
  CROSS JOIN r
  WHERE m.source = 'measured' AND m.scope = 'all' AND m.value > 1.1 * s.value
    AND (m.kind = 'bandwidth' OR m.dtype = r.dtype)
  UNION ALL
  SELECT 9, 4, 'warmup',
         'warm-up: the first ' || w.k || CASE w.k WHEN 1 THEN ' step took' ELSE ' steps took' END
         || ' more than 2x the median step (' || printf('%.3f', w.median / 1e6) || ' ms); '
         || 'mfu-report --skip-steps ' || (w.k + (SELECT COUNT(*) FROM main.step WHERE complete = 1)
                                                - (SELECT COUNT(*) FROM step WHERE complete = 1))
         || ' leaves ' || CASE w.k WHEN 1 THEN 'it' ELSE 'them' END || ' out',
         0
  FROM (
    SELECT m.median,
           (SELECT COUNT(*) FROM step AS a WHERE a.complete = 1 AND a.step < coalesce(
              (SELECT MIN(b.step) FROM step AS b WHERE b.complete = 1 AND b.wall_ns <= 2 * m.median),
              (SELECT MAX(step) + 1 FROM step))) AS k
    FROM (SELECT (SELECT wall_ns FROM step WHERE complete = 1 ORDER BY wall_ns
                  LIMIT 1 OFFSET (SELECT (COUNT(*) - 1) / 2 FROM step WHERE complete = 1)) AS median) AS m
  ) AS w
  WHERE w.k > 0 AND (SELECT COUNT(*) FROM step WHERE complete = 1) >= 2 * w.k
  UNION ALL
  SELECT 9, 5, 'exit',
         CASE WHEN r.exit_signal IS NOT NULL
           THEN 'the target was killed by signal ' || r.exit_signal
           ELSE 'the target exited with status ' || r.exit_status END,
         0
  FROM r WHERE r.exit_signal IS NOT NULL OR r.exit_status <> 0
)
SELECT kind, text, missing FROM lines ORDER BY ord, sub;
