-- notes: what a reader of this run should know, one line each: the recorder's
-- notes (e.g. counters that could not be opened and why), which peak every
-- utilization used, steps that declared no model FLOPs, lost marker records,
-- anomalies by kind, incomplete steps, numbers that cannot be right, a slow
-- start, and how the run ended.
--   kind     peak_flops, peak_bw, model_flops, model_bytes, flops_source (mfu
--            uses library-call FLOPs), flops_count (where mfu.step(flops=
--            "count") declared from: the recorder's), flops_mismatch (declared vs library
--            FLOPs outside 0.5-2x), lib_dtype (the library FLOPs are mostly
--            of another dtype than the peak's: those of the steps, else
--            the whole run's), no_steps (no
--            complete step, and why, unless the recorder said it; never
--            --step FUNC for a stripped executable, run.exe_functions = 0),
--            whole_run (no step in the run: what was measured instead, the
--            whole run's library FLOPs, rates and MFU of view run_flops),
--            lib_outside_steps (more than 10% of the run's library FLOPs
--            were made outside the complete steps), lost_records,
--            anomalies, incomplete_steps, state, exit, impossible (a step's
--            or a phase's MFU, HFU or MBU above 100%), spec_low (a measured
--            peak more than 10% above the spec one), warmup (the first steps
--            much slower than the rest, which are alike), span (mfu and hfu of the run or
--            of a phase cover different steps or occurrences), x87 (an
--            emulated run's steps executed x87 arithmetic, which hw_flops
--            leaves out), or the note
--            table's own kind (e.g. missing_counters)
--   text     the note, one line
--   missing  1 if the note explains data that is missing or unknown (NULL
--            columns, lost records), else 0
--   alert    1 if the note says that numbers shown cannot be right
--            (impossible, spec_low), else 0
-- mfu-report prints the notes with missing = 1 or alert = 1 on stderr for
-- --format csv and json, and under any table and markdown report (the
-- others only with the summary or the notes section).
--
-- Run by hand: sqlite3 -header -column run.sqlite < analyses/notes.sql
WITH
r AS (SELECT * FROM run WHERE id = 1),
rf AS (SELECT * FROM run_flops),
-- The counts and sums of the complete steps below (analyses/views.sql:
-- step_totals; mfu-report makes them once per connection, in one call per
-- step, for the summary and these notes): how many declared their FLOPs and
-- bytes, and the highest utilizations (step.mfu, hfu, mbu), above 100%
-- impossible. Which steps and how many are looked up only then.
s AS MATERIALIZED (
  SELECT steps, n_flops AS with_flops, n_bytes AS with_bytes, max_mfu, n_library, lib, lib_fp64, lib_fp32,
         lib_bf16, lib_fp16, lib_int8, lib_flops AS lib_all, n_lib, n_both, both_declared, both_lib, max_hfu,
         max_mbu, n_hw AS with_hw, n_common, mfu_common, hfu_common
  FROM step_totals
),
imp(ord, what, worst) AS (
  SELECT 1, 'MFU', s.max_mfu FROM s UNION ALL
  SELECT 2, 'HFU', s.max_hfu FROM s UNION ALL
  SELECT 3, 'MBU', s.max_mbu FROM s
),
-- Per phase name, the phases section's sums and figures (analyses/views.sql:
-- phase_totals; mfu-report computes them once per connection, for the
-- phases section and these notes), and how many occurrences have flops,
-- hw_flops and both (the span note below).
-- The summary for people leaves the phases' notes to the phases section:
-- reading every phase costs seconds on a million steps.
-- @summary: pg AS (SELECT NULL AS name, 0 AS n, 0 AS first_id, 0 AS n_flops, 0 AS n_hw, 0 AS n_both, NULL AS mfu, NULL AS hfu, NULL AS mbu WHERE 0),
pg AS MATERIALIZED (SELECT name, n, first_id, n_flops, n_hw, n_both, mfu, hfu, mbu FROM phase_totals),
-- @end
-- The phases section's utilizations above 100%: per kind, how many phases
-- and the highest (SQLite gives the name of the row holding the MAX()).
pimp AS (
  SELECT what, COUNT(*) AS n, MAX(v) AS worst, name
  FROM (SELECT 'MFU' AS what, name, mfu AS v FROM pg
        UNION ALL
        SELECT 'HFU', name, hfu FROM pg
        UNION ALL
        SELECT 'MBU', name, mbu FROM pg)
  WHERE v > 1
  GROUP BY what
),
-- Warm-up: the median step time of the first 10,000 complete steps (all of
-- them in a shorter run; one sort of a million would cost seconds), and
-- the count k of leading steps that took more than twice that.
win AS MATERIALIZED (SELECT step, wall_ns FROM step WHERE complete = 1 ORDER BY step LIMIT 10000),
med AS MATERIALIZED (
  SELECT wall_ns AS median FROM win ORDER BY wall_ns
  LIMIT 1 OFFSET (SELECT (COUNT(*) - 1) / 2 FROM win)
),
-- slow: the steps after the first fast one that took more than 2x the
-- median too; when more than 1 in 20 do, the steps differ in size (a
-- library function's calls as steps: HPL's dgemm calls range from 1 us to
-- 50 ms) and slow first steps are no warm-up
warm AS MATERIALIZED (
  SELECT med.median, f.first_fast,
         (SELECT COUNT(*) FROM win WHERE win.step < f.first_fast) AS k,
         (SELECT COUNT(*) FROM win) AS n,
         (SELECT COUNT(*) FROM win WHERE win.step >= f.first_fast AND win.wall_ns > 2 * med.median) AS slow
  FROM med CROSS JOIN (SELECT MIN(win.step) AS first_fast FROM win, med WHERE win.wall_ns <= 2 * med.median) AS f
),
lines(ord, sub, kind, text, missing, alert) AS (
  -- (the recorder's lost_records note says less than line 5 below: one line;
  -- a flops_count note says where a declaration came from: nothing missing)
  SELECT 1, n.id, n.kind, n.text, n.kind <> 'flops_count', 0 FROM note AS n
  WHERE NOT (n.kind = 'lost_records' AND (SELECT lost_records FROM r) > 0)
  UNION ALL
  SELECT 2, 0, 'peak_flops',
         CASE WHEN r.peak_flops IS NULL OR r.peak_flops <= 0 THEN
           'no ' || r.dtype || ' FLOP/s peak is known for this run, so mfu and hfu are unknown'
           || coalesce(CASE WHEN EXISTS (SELECT 1 FROM mfu_dtype_peak) THEN ' (' || r.peak_flops_source || ')' END, '')
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
         r.peak_flops IS NULL OR r.peak_flops <= 0, 0
  FROM r WHERE r.emulated IS NULL  -- an emulated run's own note says why there is no MFU
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
         r.peak_bw IS NULL OR r.peak_bw <= 0, 0
  FROM r WHERE r.emulated IS NULL
  UNION ALL
  SELECT 4, 0, 'model_flops',
         CASE WHEN s.with_flops = 0 AND s.n_lib = 0 AND r.lib_counting = 'on'
                   AND EXISTS (SELECT 1 FROM probe WHERE role = 'step') THEN
           -- the counting library's counters are read at marker boundaries,
           -- in the program; a probe boundary is a uprobe hit, read later
           -- by the recorder, when they have moved on (py: probes mark in
           -- the program: their steps' library FLOPs are known, n_lib > 0)
           'no step declared its model FLOPs, and the steps'' library FLOPs are unknown (NULL, not 0): '
           || 'the steps come from --step probes, at which the counting library''s counters cannot be '
           || 'read (they are read at marker boundaries, inside the program), so mfu is unknown; the '
           || 'whole run''s library FLOPs are known (run_lib_flops and run_mfu in the summary, and '
           || 'per interval in mfu-report intervals); mark the loop (mfu_step_begin(), mfu.step()) '
           || 'for library FLOPs per step'
         WHEN s.with_flops = 0 THEN
           'no step declared its model FLOPs (mfu_step_model)'
           || CASE WHEN r.lib_counting = 'on' THEN ' or made a counted library call (BLAS, oneDNN)'
                   ELSE ' and library calls were not counted' END
           || ', so mfu is unknown'
         ELSE
           'mfu covers ' || s.with_flops || ' of ' || s.steps
           || ' steps; the others declared no model FLOPs'
           || CASE WHEN r.lib_counting = 'on' THEN ' and made no counted library call' ELSE '' END
         END,
         1, 0
  FROM s CROSS JOIN r WHERE s.steps > 0 AND s.with_flops < s.steps
  UNION ALL
  -- MFU and HFU over different steps do not compare (the summary's
  -- mfu_common and hfu_common do: summary.sql)
  SELECT 4, 1, 'span',
         'mfu and hfu cover different steps: mfu the ' || s.with_flops || ' with an MFU numerator (declared or '
         || 'library FLOPs), hfu the ' || s.with_hw || ' with counted FLOPs; over the ' || s.n_common
         || ' that have both, mfu_common and hfu_common in the summary compare them'
         || coalesce('; there mfu is ' || printf('%.2f%%', 100 * s.mfu_common) || ' and hfu '
                     || printf('%.2f%%', 100 * s.hfu_common), ''),
         1, 0
  FROM s CROSS JOIN r
  WHERE s.with_flops > 0 AND s.with_hw > 0 AND (s.with_flops <> s.n_common OR s.with_hw <> s.n_common)
    AND r.emulated IS NULL  -- (an emulated run has no mfu or hfu)
  UNION ALL
-- @summary:
  SELECT 4, 2, 'span',
         'phases whose mfu and hfu cover different occurrences (of the complete ones): '
         || group_concat(name || ' (mfu ' || nf || ', hfu ' || nh || ' of ' || n || ')', ', '),
         1, 0
  FROM (SELECT name, n, n_flops AS nf, n_hw AS nh, first_id AS first
        FROM pg
        WHERE n_flops > 0 AND n_hw > 0 AND (n_flops <> n_both OR n_hw <> n_both)
        ORDER BY first)
  WHERE (SELECT emulated FROM r) IS NULL
  HAVING count(*) > 0  UNION ALL
-- @end
  -- Which numerator MFU uses, when the library's: what it can miss.
  SELECT 4, 3, 'flops_source',
         'mfu of ' || CASE WHEN s.n_library = s.with_flops THEN
                        CASE s.n_library WHEN 1 THEN 'the step' ELSE 'all ' || s.n_library || ' steps' END
                      ELSE s.n_library || ' of ' || s.with_flops || ' steps' END
         || ' uses the FLOPs of their library calls (lib_flops: BLAS and oneDNN calls counted from '
         || 'their arguments), as the program declared none; it leaves out FLOPs computed outside '
         || 'those libraries (hand-written loops, JIT kernels): declare the model FLOPs '
         || '(mfu_step_model) for the MFU of the whole model',
         0, 0
  FROM s WHERE s.n_library > 0
  UNION ALL
  -- A declaration off by 2x or more is a common bug; the library's count
  -- is a second opinion where both exist.
  SELECT 4, 4, 'flops_mismatch',
         'the declared model FLOPs are ' || printf('%.2f', s.both_declared / s.both_lib)
         || 'x the library calls'' FLOPs (over ' || s.n_both
         || CASE s.n_both WHEN 1 THEN ' step' ELSE ' steps' END || ' with both): '
         || CASE WHEN s.both_declared < s.both_lib
                 THEN 'the library computed more than the model needs (recomputation, padding) or the '
                      || 'declaration is too low'
                 ELSE 'the declaration may count too much (6N for a forward-only step, a multiply-add as '
                      || '1 FLOP twice) or much of the work runs outside the libraries' END
         -- mfu.step(flops="count") declares for the program, and says so
         || CASE WHEN EXISTS (SELECT 1 FROM note WHERE kind IN ('flops_count', 'flops_count_missing'))
                 THEN '; check what mfu.step(flops="count") counted (its flops_count notes)'
                 ELSE '; check mfu_step_model()' END,
         0, 1
  FROM s WHERE s.both_lib > 0 AND (s.both_declared < 0.5 * s.both_lib OR s.both_declared > 2 * s.both_lib)
  UNION ALL
  -- Library FLOPs come by precision; the peak is one dtype's.
  SELECT 4, 5, 'lib_dtype',
         printf('%.0f', d.v * 100 / s.lib) || '% of the library FLOPs that mfu uses are ' || d.dtype
         || ', but mfu uses the ' || r.dtype || ' peak: ' || CASE WHEN EXISTS (
              SELECT 1 FROM main.peak WHERE kind = 'flops' AND scope = 'choice' AND dtype = d.dtype)
            THEN 'mfu-report --dtype ' ELSE 'record with --dtype ' END || d.dtype
         || ' for their MFU against the ' || d.dtype || ' peak',
         0, 0
  FROM s CROSS JOIN r CROSS JOIN (
    SELECT dtype, v FROM (
      SELECT 'fp64' AS dtype, lib_fp64 AS v FROM s UNION ALL SELECT 'fp32', lib_fp32 FROM s UNION ALL
      SELECT 'bf16', lib_bf16 FROM s UNION ALL SELECT 'fp16', lib_fp16 FROM s UNION ALL
      SELECT 'int8', lib_int8 FROM s)
    ORDER BY v DESC LIMIT 1) AS d
  WHERE s.lib > 0 AND d.v > 0.5 * s.lib AND d.dtype <> r.dtype
  UNION ALL
  -- the same for the whole run's MFU when no step has library FLOPs
  SELECT 4, 5, 'lib_dtype',
         printf('%.0f', d.v * 100.0 / rf.lib_flops) || '% of the run''s library FLOPs are ' || d.dtype
         || ', but run_mfu uses the ' || r.dtype || ' peak: ' || CASE WHEN EXISTS (
              SELECT 1 FROM main.peak WHERE kind = 'flops' AND scope = 'choice' AND dtype = d.dtype)
            THEN 'mfu-report --dtype ' ELSE 'record with --dtype ' END || d.dtype
         || ' for their MFU against the ' || d.dtype || ' peak',
         0, 0
  FROM s CROSS JOIN r CROSS JOIN rf CROSS JOIN (
    SELECT dtype, v FROM (
      SELECT 'fp64' AS dtype, lib_flops_fp64 AS v FROM rf UNION ALL SELECT 'fp32', lib_flops_fp32 FROM rf UNION ALL
      SELECT 'bf16', lib_flops_bf16 FROM rf UNION ALL SELECT 'fp16', lib_flops_fp16 FROM rf UNION ALL
      SELECT 'int8', lib_ops_int8 FROM rf)
    ORDER BY v DESC LIMIT 1) AS d
  WHERE coalesce(s.lib, 0) = 0 AND rf.lib_flops > 0 AND d.v > 0.5 * rf.lib_flops AND d.dtype <> r.dtype
  UNION ALL
  SELECT 4, 1, 'model_bytes',
         CASE WHEN s.with_bytes = 0 THEN
           'no step declared its model bytes (mfu_step_model), so mbu is unknown'
         ELSE
           'mbu covers ' || s.with_bytes || ' of ' || s.steps
           || ' steps; the others declared no model bytes'
         END,
         1, 0
  FROM s WHERE s.steps > 0 AND s.with_bytes < s.steps
  UNION ALL
  -- No complete step: every per-step number is unknown, not 0. Said here
  -- unless the recorder said it (its no_steps note: no marker at all),
  -- with the likeliest reason this database shows.
  SELECT 4, 2, 'no_steps',
         'no complete step in this run, so its step time, MFU, HFU and MBU are unknown: '
         || CASE
              WHEN (SELECT COUNT(*) FROM main.step WHERE complete = 1) > 0 THEN
                '--skip-steps left out all ' || (SELECT COUNT(*) FROM main.step WHERE complete = 1)
                || ' complete steps; skip fewer'
              WHEN EXISTS (SELECT 1 FROM step WHERE complete = 0) AND r.mode = 'attach' AND r.state = 'detached' THEN
                'a step began while mfu-record was attached and had not ended when it left; attach for longer '
                || '(--duration)'
              WHEN EXISTS (SELECT 1 FROM step WHERE complete = 0) THEN
                'every step began and never ended (the program exited or crashed inside one)'
              WHEN EXISTS (SELECT 1 FROM probe WHERE role = 'step') THEN
                'the --step probes never marked one (' || coalesce((SELECT group_concat(point || ': ' || hits
                || ' hits' || CASE WHEN status <> 'placed' THEN ', ' || status ELSE '' END, '; ')
                FROM probe WHERE role = 'step'), '') || '); check that the program calls it'
              WHEN r.mode = 'attach' AND EXISTS (SELECT 1 FROM phase) THEN
                'no step began and ended while mfu-record was attached, though phases did (steps longer than '
                || 'the time attached, or a program that marks only phases); attach for longer (--duration)'
              WHEN r.mode = 'attach' THEN
                'no step began and ended while mfu-record was attached; attach for longer (--duration)'
              WHEN EXISTS (SELECT 1 FROM phase) THEN
                'the program marks phases but never steps; call mfu_step_begin() and mfu_step_end() around '
                || 'its loop body'
                || CASE WHEN r.exe_functions = 0 THEN '' ELSE ', or take steps from a function with --step FUNC' END
              ELSE
                'no step marker was seen; mark the program''s loop (mfu_step_begin() and mfu_step_end(), or '
                || 'import mfu in Python)'
                -- a stripped executable: no symbol names its functions
                || CASE WHEN r.exe_functions = 0 AND r.exe_usdt > 0 THEN
                     ' or take steps from one of its USDT probes with --step sdt:PROVIDER:NAME (its executable '
                     || 'is stripped: --step FUNC cannot find its functions)'
                   WHEN r.exe_functions = 0 THEN
                     ' (its executable is stripped: --step FUNC cannot find its functions)'
                   ELSE ' or take steps from a function with --step FUNC' END
            END,
         1, 0
  FROM s CROSS JOIN r
  WHERE s.steps = 0 AND NOT EXISTS (SELECT 1 FROM main.note WHERE kind = 'no_steps')
  UNION ALL
  -- No step in the whole run: what was measured instead (view run_flops).
  SELECT 4, 6, 'whole_run',
         'without steps, the figures are the whole run''s, '
         || CASE WHEN (SELECT mode FROM main.run) = 'attach' THEN 'attach' ELSE 'exec' END || ' to end ('
         || printf('%.1f', rf.wall_ns / 1e6) || ' ms): '
         || CASE WHEN rf.lib_flops IS NULL THEN
              'its library FLOPs are unknown ('
              || CASE r.lib_counting WHEN 'off' THEN 'not counted: --no-lib-flops'
                                     WHEN 'on' THEN 'the recording did not finish'
                                     ELSE 'not counted: the lib_flops note says why' END
              || '), and so is its MFU'
              || CASE WHEN rf.cpu_ns > 0 THEN '; it kept ' || printf('%.2f', rf.cpu_ns / rf.wall_ns)
                        || ' CPUs busy on average (' || printf('%.1f', rf.cpu_ns / 1e6) || ' ms of CPU time)'
                      ELSE '' END
            WHEN rf.lib_flops = 0 THEN
              'it made no counted library call (BLAS, oneDNN), so its library FLOPs are 0, and its MFU is '
              || 'unknown: FLOPs computed elsewhere (its own loops, JIT kernels) are counted only when declared '
              || '(mfu_step_model) or by FP counters'
            ELSE
              CASE WHEN rf.lib_flops >= 1e12 THEN printf('%.4g T', rf.lib_flops / 1e12)
                   WHEN rf.lib_flops >= 1e9 THEN printf('%.4g G', rf.lib_flops / 1e9)
                   WHEN rf.lib_flops >= 1e6 THEN printf('%.4g M', rf.lib_flops / 1e6)
                   WHEN rf.lib_flops >= 1e3 THEN printf('%.4g k', rf.lib_flops / 1e3)
                   ELSE printf('%d ', rf.lib_flops) END
              || 'FLOP of library calls (' || rf.lib_calls || CASE rf.lib_calls WHEN 1 THEN ' call' ELSE ' calls' END
              || coalesce((SELECT ': ' || group_concat(printf('%.0f', v * 100.0 / rf.lib_flops) || '% ' || p, ', ')
                           FROM (SELECT 'fp64' AS p, rf.lib_flops_fp64 AS v UNION ALL SELECT 'fp32', rf.lib_flops_fp32
                                 UNION ALL SELECT 'bf16', rf.lib_flops_bf16 UNION ALL SELECT 'fp16', rf.lib_flops_fp16
                                 UNION ALL SELECT 'int8 ops', rf.lib_ops_int8 ORDER BY v DESC)
                           WHERE v > 0 AND rf.lib_flops > 0), '')
              || ')'
              || CASE WHEN rf.lib_flops_per_s IS NOT NULL THEN
                   ', ' || CASE WHEN rf.lib_flops_per_s >= 1e12 THEN printf('%.4g T', rf.lib_flops_per_s / 1e12)
                                WHEN rf.lib_flops_per_s >= 1e9 THEN printf('%.4g G', rf.lib_flops_per_s / 1e9)
                                WHEN rf.lib_flops_per_s >= 1e6 THEN printf('%.4g M', rf.lib_flops_per_s / 1e6)
                                WHEN rf.lib_flops_per_s >= 1e3 THEN printf('%.4g k', rf.lib_flops_per_s / 1e3)
                                ELSE printf('%.4g ', rf.lib_flops_per_s) END || 'FLOP/s' ELSE '' END
              || CASE WHEN rf.mfu IS NOT NULL THEN
                   ': run_mfu ' || printf('%.2f', rf.mfu * 100) || '% of the ' || r.dtype || ' peak'
                   || CASE WHEN rf.busy_mfu IS NOT NULL THEN
                        ', busy_mfu ' || printf('%.2f', rf.busy_mfu * 100) || '% over the '
                        || printf('%.1f', rf.cpu_ns / 1e6) || ' ms of CPU time it used' ELSE '' END
                 ELSE ' (no peak: its MFU is unknown)' END
            END
         || CASE WHEN EXISTS (SELECT 1 FROM main.lib_reading) OR EXISTS (SELECT 1 FROM main.interval_reading) THEN
              '; mfu-report intervals gives them every ' || printf('%g', r.interval_ns / 1e6) || ' ms'
              || CASE WHEN rf.lib_flops > 0 THEN ', with the MFU of each' ELSE '' END
            ELSE '' END,
         rf.lib_flops IS NULL OR rf.lib_flops = 0, 0
  FROM s CROSS JOIN r CROSS JOIN rf
  WHERE s.steps = 0 AND r.emulated IS NULL AND r.end_ns IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM main.step WHERE complete = 1)
  UNION ALL
  -- Library FLOPs outside the steps: work the steps' MFU does not see.
  SELECT 4, 7, 'lib_outside_steps',
         printf('%.0f', 100.0 - s.lib_all * 100.0 / rf.lib_flops) || '% of the run''s library FLOPs ('
         || CASE WHEN rf.lib_flops >= 1e12 THEN printf('%.4g T', rf.lib_flops / 1e12)
                 WHEN rf.lib_flops >= 1e9 THEN printf('%.4g G', rf.lib_flops / 1e9)
                 WHEN rf.lib_flops >= 1e6 THEN printf('%.4g M', rf.lib_flops / 1e6)
                 WHEN rf.lib_flops >= 1e3 THEN printf('%.4g k', rf.lib_flops / 1e3)
                 ELSE printf('%d ', rf.lib_flops) END
         || 'FLOP in all) were made outside the ' || s.steps || CASE s.steps WHEN 1 THEN ' complete step' ELSE ' complete steps' END
         || ' (before, between or after them: set-up, evaluation, checkpoints): the steps'' MFU leaves them out; '
         || 'run_mfu' || CASE WHEN rf.mfu IS NOT NULL THEN ' (' || printf('%.2f', rf.mfu * 100) || '%)' ELSE '' END
         || ' covers the whole run',
         0, 0
  FROM s CROSS JOIN rf
  WHERE s.steps > 0 AND s.n_lib = s.steps AND rf.lib_flops > 0 AND s.lib_all < 0.9 * rf.lib_flops
  UNION ALL
  -- x87 arithmetic (long double, code built for the x87) in an emulated
  -- run: counted apart (emu:x87_ops, docs/emulate.md), not in hw_flops.
  SELECT 4, 8, 'x87',
         x.n || CASE x.n WHEN 1 THEN ' complete step' ELSE ' complete steps' END
         || ' executed x87 floating-point operations (' || printf('%.0f', x.ops) || ' in all'
         || CASE WHEN x.hw > 0 THEN ', ' || printf('%.3g', x.ops / x.hw) || 'x their hw_flops'
                 ELSE ', and no counted SSE/AVX FLOPs' END
         || '): the emulator counts x87 arithmetic apart (emu:x87_ops, per step in the events section), '
         || 'not in hw_flops, as the PMU''s FP_ARITH events do not count it either, and it has no precision '
         || 'the peaks know (80-bit registers): the steps'' floating-point work is larger than their '
         || 'hw_flops by these operations',
         0, 0
  FROM (SELECT count(*) AS n, sum(sc.value) AS ops, sum(st.hw_flops) AS hw
        FROM step_counter AS sc JOIN counter AS c ON c.id = sc.counter JOIN step AS st ON st.step = sc.step
        WHERE c.name = 'emu:x87_ops' AND st.complete = 1 AND sc.value > 0) AS x
  WHERE x.n > 0
  UNION ALL
  -- Lost records are the recorder's loss, not marker misuse: the threads
  -- that lost them have records_lost anomalies instead of misuse ones, and
  -- the steps open across a loss are incomplete (step_broken_by_loss).
  SELECT 5, 0, 'lost_records',
         r.lost_records || CASE r.lost_records WHEN 1 THEN ' marker record was' ELSE ' marker records were' END
         || ' lost because the marker ring was full (or a writer died mid-record): '
         || CASE WHEN r.mode = 'attach' THEN 'an attached process''s ring has the size its libmfu made room for; '
                 ELSE 'raise mfu-record --ring-records; ' END
         || CASE b.n WHEN 0 THEN 'no step is'
                     WHEN 1 THEN '1 step is'
                     ELSE b.n || ' steps are' END
         || ' incomplete because of it; '
         || CASE WHEN b.told THEN 'the boundaries around the loss are not counted as marker misuse'
                   || ' (anomaly records_lost says which threads lost how many, and which phases are incomplete)'
                 -- a recorder older than the records_lost anomaly
                 ELSE 'misuse anomalies around the loss may come from it, not from the markers' END,
         1, 0
  FROM r, (SELECT COUNT(*) FILTER (WHERE kind = 'step_broken_by_loss') AS n,
                  COUNT(*) FILTER (WHERE kind = 'records_lost') > 0 AS told
           FROM anomaly WHERE kind IN ('step_broken_by_loss', 'records_lost')) AS b
  WHERE r.lost_records > 0
  UNION ALL
  SELECT 6, 0, 'anomalies',
         (SELECT CASE COUNT(*) WHEN 1 THEN '1 anomaly: ' ELSE COUNT(*) || ' anomalies: ' END FROM anomaly)
         || (SELECT group_concat(n || ' ' || kind, ', ')
             FROM (SELECT kind, COUNT(*) AS n FROM anomaly
                   GROUP BY kind ORDER BY n DESC, kind)),
         0, 0
  WHERE EXISTS (SELECT 1 FROM anomaly)
  UNION ALL
  SELECT 7, 0, 'incomplete_steps',
         CASE COUNT(*) WHEN 1 THEN '1 step began but never ended; it is'
                       ELSE COUNT(*) || ' steps began but never ended; they are' END
         || ' left out of every table',
         0, 0
  FROM step WHERE complete = 0
    AND step NOT IN (SELECT step FROM anomaly WHERE kind = 'step_broken_by_loss' AND step IS NOT NULL)
  HAVING COUNT(*) > 0
  UNION ALL
  SELECT 8, 0, 'state',
         CASE r.state
           WHEN 'recording' THEN 'the recording never finished (mfu-record is still running or died); the data may be partial'
           -- the recorder passed the signal on and recorded on until the
           -- program ended: the data covers the program; it was cut short
           -- only if the signal ended it
           WHEN 'interrupted' THEN
             CASE WHEN coalesce(r.exit_signal, 0) > 0
                  THEN 'mfu-record passed on a signal it got (SIGINT, SIGTERM or SIGHUP) and the program ended '
                       || 'by signal ' || r.exit_signal || ': the data covers the program until then (a library '
                       || 'call or step in flight at that moment is not counted)'
                  WHEN r.exit_status IS NOT NULL
                  THEN 'mfu-record passed on a signal it got (SIGINT, SIGTERM or SIGHUP); the program ran on to '
                       || 'its end (exit status ' || r.exit_status || '), and the data covers all of it'
                  ELSE 'mfu-record passed on a signal it got (SIGINT, SIGTERM or SIGHUP); how the program ended '
                       || 'is unknown: the data may be partial' END
           WHEN 'detached' THEN 'attached to running process ' || r.target_pid || ' and detached before it ended: '
                || 'the data covers the attached time only'
           ELSE 'the recording failed (state ' || r.state || '); the data may be partial'
         END,
         r.state <> 'detached'
           AND NOT (r.state = 'interrupted' AND coalesce(r.exit_signal, 0) = 0 AND r.exit_status IS NOT NULL), 0
  FROM r WHERE r.state <> 'complete'
  UNION ALL
  SELECT 9, i.ord, 'impossible',
         printf('%d', i.n) || CASE i.n WHEN 1 THEN ' step has ' ELSE ' steps have ' END || i.what
         || ' above 100% (the highest ' || CASE WHEN i.worst > 100 THEN 'above 10000' ELSE printf('%.0f', i.worst * 100) END
         || '%, step ' || i.at
         || '): impossible, so '
         || CASE i.what WHEN 'MBU' THEN 'the bandwidth peak (' || coalesce(r.peak_bw_source, 'source not recorded')
                                        || ') is too low for this machine or the declared bytes are too high'
                        WHEN 'HFU' THEN 'the ' || r.dtype || ' FLOP peak ('
                                        || coalesce(r.peak_flops_source, 'source not recorded')
                                        || ') is too low for this machine'
                        ELSE 'the ' || r.dtype || ' FLOP peak (' || coalesce(r.peak_flops_source, 'source not recorded')
                             || ') is too low for this machine or the declared FLOPs are too high' END
         || CASE i.what WHEN 'HFU' THEN ' (run mfu-calibrate)' ELSE ' (run mfu-calibrate; check mfu_step_model())' END,
         0, 1
  FROM (
    SELECT imp.ord, imp.what, imp.worst,
           (SELECT COUNT(*) FROM step WHERE complete = 1 AND CASE imp.what
              WHEN 'MFU' THEN mfu WHEN 'HFU' THEN hfu ELSE mbu END > 1) AS n,
           (SELECT step FROM step WHERE complete = 1 AND CASE imp.what
              WHEN 'MFU' THEN mfu WHEN 'HFU' THEN hfu ELSE mbu END = imp.worst ORDER BY step LIMIT 1) AS at
    FROM imp WHERE imp.worst > 1
  ) AS i CROSS JOIN r
  UNION ALL
  SELECT 9, 4 + CASE p.what WHEN 'MFU' THEN 1 WHEN 'HFU' THEN 2 ELSE 3 END, 'impossible',
         printf('%d', p.n) || CASE p.n WHEN 1 THEN ' phase has ' ELSE ' phases have ' END || p.what
         || ' above 100% (the highest ' || CASE WHEN p.worst > 100 THEN 'above 10000' ELSE printf('%.0f', p.worst * 100) END
         || '%, phase ' || quote(p.name)
         || '): impossible, so '
         || CASE p.what WHEN 'MBU' THEN 'the bandwidth peak is too low or the declared bytes are too high'
                        WHEN 'HFU' THEN 'the FLOP peak is too low'
                        ELSE 'the FLOP peak is too low or the declared FLOPs are too high' END
         || CASE p.what WHEN 'HFU' THEN ' (run mfu-calibrate)' ELSE ' (run mfu-calibrate; check mfu_phase_model())' END,
         0, 1
  FROM pimp AS p
  UNION ALL
  SELECT 9, 8, 'spec_low',
         'the measured ' || coalesce(m.dtype || ' ', '') || CASE m.kind WHEN 'flops' THEN 'FLOP/s' ELSE 'bandwidth' END
         || ' peak is ' || printf('%.2f', m.value / s.value) || 'x the spec one: the spec row or its frequency is wrong '
         || 'for this machine (a VM''s TSC rate is not its core clock, or the cores turbo)'
         || CASE WHEN r.peak_mode = 'auto' THEN '; --peak auto uses the measured one' ELSE '' END,
         0, 1
  FROM peak AS m
  JOIN peak AS s ON s.kind = m.kind AND s.scope = m.scope AND s.dtype IS m.dtype AND s.source = 'spec'
  CROSS JOIN r
  WHERE m.source = 'measured' AND m.scope = 'all' AND m.value > 1.1 * s.value
    AND (m.kind = 'bandwidth' OR m.dtype = r.dtype)
  UNION ALL
  -- The --skip-steps that leaves the warm-up out counts from the first step
  -- of the database: the k here plus those already skipped.
  SELECT 9, 9, 'warmup',
         'warm-up: the first ' || w.k || CASE w.k WHEN 1 THEN ' step took' ELSE ' steps took' END
         || ' more than 2x the median step (' || printf('%.3f', w.median / 1e6) || ' ms); '
         || 'mfu-report --skip-steps '
         || (w.k + (SELECT COUNT(*) FROM main.step WHERE complete = 1 AND step < (SELECT MIN(step) FROM step)))
         || ' leaves ' || CASE w.k WHEN 1 THEN 'it' ELSE 'them' END || ' out',
         0, 0
  FROM warm AS w
  WHERE w.k > 0 AND w.n >= 2 * w.k AND w.slow * 20 <= w.n - w.k
  UNION ALL
  SELECT 9, 10, 'exit',
         CASE WHEN r.exit_signal IS NOT NULL
           THEN 'the target was killed by signal ' || r.exit_signal
           ELSE 'the target exited with status ' || r.exit_status END,
         0, 0
  FROM r WHERE r.exit_signal IS NOT NULL OR r.exit_status <> 0
)
SELECT kind, text, missing, alert FROM lines ORDER BY ord, sub;
