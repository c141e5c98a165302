-- views: the run as mfu-report reads it. TEMP views that shadow the stored
-- tables (SQLite finds a TEMP name first) and define every derived figure
-- once: the peaks of a run (none for an emulated one), the MFU, HFU, MBU and
-- rates of each step and phase occurrence, the union time of a phase's
-- occurrences, and the options --skip-steps, --quiet and --hw-flops-from.
-- Every section reads these columns; mfu-report --sql SECTION prints this
-- file above the section's SQL, so a user's sqlite3 gets the report's rows:
--
--   mfu-report --sql steps | sqlite3 -header -column run.sqlite
--
-- Run alone, it makes the views with no option given; the tables stay
-- readable as main.run, main.step... (docs/schema.md, "The report's views").

-- The options: mfu-report makes this view first with the values given
-- (--sql prints it); run by hand, none is given.
--   skip_steps     --skip-steps N: leave out the first N complete steps
--   quiet          --quiet: leave out the notes on counters this machine
--                  cannot open
--   hw_flops_from  --hw-flops-from FILE: the database the counted FLOPs come
--                  from (attached as hwf; analyses/hw_flops_from.sql)
--   recorded_notes 0: leave out the recorder's notes (the recap at the end
--                  of mfu-record: each was said while recording)
CREATE TEMP VIEW IF NOT EXISTS mfu_option AS
SELECT 0 AS skip_steps, 0 AS quiet, NULL AS hw_flops_from, 1 AS recorded_notes;

-- ---- the run ----------------------------------------------------------

-- run: main.run, except that an emulated run (mfu-record --emulate) has no
-- peaks: its times are the emulator's (2 to 1,000+ times the program's
-- own), so no MFU, HFU, MBU or rate is made of them. Its peak sources say
-- so; native is 1 for a run that ran natively, NULL for an emulated one
-- (a rate times native is NULL for it).
CREATE TEMP VIEW run AS
SELECT id, mfu_version, command, cwd, start_unix_ns, start_ns, end_ns, host, kernel, cpu_vendor,
       cpu_family, cpu_model, cpu_stepping, cpu_name, uarch, isa, nominal_hz, nominal_hz_source,
       allowed_cpus, ncpu_affinity, cpu_quota, ncpu, dtype,
       CASE WHEN emulated IS NULL THEN peak_flops END                   AS peak_flops,
       CASE WHEN emulated IS NULL THEN peak_flops_source
            ELSE 'not used (emulated run): ' || peak_flops_source END   AS peak_flops_source,
       CASE WHEN emulated IS NULL THEN peak_bw END                      AS peak_bw,
       CASE WHEN emulated IS NULL THEN peak_bw_source
            ELSE 'not used (emulated run): ' || peak_bw_source END      AS peak_bw_source,
       target_pid, exit_status, exit_signal, lost_records, state, mode, interval_ns, ncores,
       clock_hz, cpus_source, peak_mode, lib_counting, rank, world_size, local_rank, local_size,
       job_id, rank_source, rank_shared, emulated, lib_flops, lib_flops_fp64, lib_flops_fp32,
       lib_flops_bf16, lib_flops_fp16, lib_ops_int8, lib_calls, lib_calls_unknown,
       exe_functions, exe_usdt,
       CASE WHEN emulated IS NULL THEN 1 END                            AS native
FROM main.run;

-- The run's divisors, one row: the peaks (NULL when unknown or emulated),
-- ncpu and native. NULL in a merged file (mfu-report merge: one run row per
-- rank), whose per-rank figures are job_rank_step's.
CREATE TEMP VIEW mfu_peak AS
SELECT CASE WHEN count(*) = 1 THEN max(peak_flops) END AS peak_flops,
       CASE WHEN count(*) = 1 THEN max(peak_bw) END    AS peak_bw,
       CASE WHEN count(*) = 1 THEN max(ncpu) END       AS ncpu,
       CASE WHEN count(*) = 1 THEN max(native) END     AS native
FROM run WHERE id = 1;

-- ---- --skip-steps -----------------------------------------------------

-- Where the steady state begins: the (N+1)-th complete step and its begin.
-- Without --skip-steps, the smallest integer: everything is kept. Computed
-- once per statement.
CREATE TEMP VIEW mfu_skip AS
WITH o AS (SELECT skip_steps AS n FROM mfu_option)
SELECT
  CASE WHEN (SELECT n FROM o) > 0 THEN coalesce(
    (SELECT step FROM main.step WHERE complete = 1 ORDER BY step LIMIT 1 OFFSET (SELECT n FROM o)),
    9223372036854775807) ELSE -9223372036854775808 END AS step,
  CASE WHEN (SELECT n FROM o) > 0 THEN coalesce(
    (SELECT begin_ns FROM main.step WHERE complete = 1 ORDER BY step LIMIT 1 OFFSET (SELECT n FROM o)),
    9223372036854775807) ELSE -9223372036854775808 END AS begin_ns;

-- With --hw-flops-from, analyses/hw_flops_from.sql made these before: the
-- steps and phases with the other run's counted FLOPs, and its notes.
CREATE TEMP VIEW IF NOT EXISTS mfu_hw_step AS SELECT * FROM main.step;
CREATE TEMP VIEW IF NOT EXISTS mfu_hw_phase AS SELECT * FROM main.phase;
CREATE TEMP VIEW IF NOT EXISTS mfu_hw_note AS SELECT * FROM main.note WHERE 0;

-- Samples and off-CPU intervals from the cut on; counter and library-call
-- readings from the last one at or before it (the baseline of the first
-- interval).
-- Every filter on the cut is written +column: the unary plus keeps SQLite
-- from taking it as an index bound. A query that looks up a step's samples
-- (tid = ? AND time_ns >= step begin AND time_ns < step end) would otherwise
-- get the cut as its lower bound instead of the step's begin, and read
-- every earlier sample of the thread for each step: quadratic (65 s instead
-- of 0.4 s for breakdown on 50,000 steps).
CREATE TEMP VIEW sample AS
SELECT * FROM main.sample WHERE +time_ns >= (SELECT begin_ns FROM mfu_skip);
CREATE TEMP VIEW offcpu AS
SELECT * FROM main.offcpu WHERE +end_ns > (SELECT begin_ns FROM mfu_skip);
CREATE TEMP VIEW interval_reading AS
SELECT * FROM main.interval_reading
WHERE +time_ns >= coalesce((SELECT MAX(time_ns) FROM main.interval_reading
                           WHERE time_ns <= (SELECT begin_ns FROM mfu_skip)),
                          (SELECT begin_ns FROM mfu_skip));
CREATE TEMP VIEW lib_reading AS
SELECT * FROM main.lib_reading
WHERE +time_ns >= coalesce((SELECT MAX(time_ns) FROM main.lib_reading
                           WHERE time_ns <= (SELECT begin_ns FROM mfu_skip)),
                          (SELECT begin_ns FROM mfu_skip));

-- ---- steps and phases -------------------------------------------------

-- step: the stored steps (from the cut on) with their derived figures.
-- W = wall_ns / 1e9 seconds; NULL propagates (not declared, not counted,
-- no peak), a division by 0 gives NULL.
--   dram_total_bytes   DRAM bytes: dram_bytes where the memory controllers
--                      do not tell reads from writes, else reads + writes
--   mfu                flops / (W * peak_flops)   (flops: the MFU numerator,
--                      declared model FLOPs, else library-call FLOPs)
--   hfu                hw_flops / (W * peak_flops)
--   mbu                model_bytes / (W * peak_bw)
--   dram_bw_util       dram_total_bytes / (W * peak_bw)
--   cpu_util           cpu_ns / (wall_ns * ncpu)
--   model_flops_per_s, hw_flops_per_s, model_bytes_per_s, dram_bytes_per_s
--                      flops, hw_flops, model_bytes, dram_total_bytes / W,
--                      whatever the peak; NULL for an emulated run
CREATE TEMP VIEW step AS
SELECT s.*,
       coalesce(s.dram_bytes, s.dram_read_bytes + s.dram_write_bytes)      AS dram_total_bytes,
       s.flops / (s.wall_ns / 1e9 * (SELECT peak_flops FROM mfu_peak))     AS mfu,
       s.hw_flops / (s.wall_ns / 1e9 * (SELECT peak_flops FROM mfu_peak))  AS hfu,
       s.model_bytes / (s.wall_ns / 1e9 * (SELECT peak_bw FROM mfu_peak))  AS mbu,
       coalesce(s.dram_bytes, s.dram_read_bytes + s.dram_write_bytes)
         / (s.wall_ns / 1e9 * (SELECT peak_bw FROM mfu_peak))               AS dram_bw_util,
       s.cpu_ns / (s.wall_ns * 1.0 * (SELECT ncpu FROM mfu_peak))          AS cpu_util,
       s.flops / (s.wall_ns / 1e9) * (SELECT native FROM mfu_peak)         AS model_flops_per_s,
       s.hw_flops / (s.wall_ns / 1e9) * (SELECT native FROM mfu_peak)      AS hw_flops_per_s,
       s.model_bytes / (s.wall_ns / 1e9) * (SELECT native FROM mfu_peak)   AS model_bytes_per_s,
       coalesce(s.dram_bytes, s.dram_read_bytes + s.dram_write_bytes)
         / (s.wall_ns / 1e9) * (SELECT native FROM mfu_peak)                AS dram_bytes_per_s
FROM mfu_hw_step AS s
WHERE +s.step >= (SELECT step FROM mfu_skip);

-- phase: the stored phase occurrences with the same figures over each
-- occurrence's own wall time. A phase of a step goes with its step; one
-- outside steps counts from the cut's begin time. The filter is one
-- coalesce(), not an OR: with an OR SQLite reads the phases through the
-- phase_step index, a random read each (twice as slow on a million steps).
CREATE TEMP VIEW phase AS
SELECT p.*,
       coalesce(p.dram_bytes, p.dram_read_bytes + p.dram_write_bytes)      AS dram_total_bytes,
       p.flops / (p.wall_ns / 1e9 * (SELECT peak_flops FROM mfu_peak))     AS mfu,
       p.hw_flops / (p.wall_ns / 1e9 * (SELECT peak_flops FROM mfu_peak))  AS hfu,
       p.model_bytes / (p.wall_ns / 1e9 * (SELECT peak_bw FROM mfu_peak))  AS mbu,
       coalesce(p.dram_bytes, p.dram_read_bytes + p.dram_write_bytes)
         / (p.wall_ns / 1e9 * (SELECT peak_bw FROM mfu_peak))               AS dram_bw_util,
       p.cpu_ns / (p.wall_ns * 1.0 * (SELECT ncpu FROM mfu_peak))          AS cpu_util,
       p.flops / (p.wall_ns / 1e9) * (SELECT native FROM mfu_peak)         AS model_flops_per_s,
       p.hw_flops / (p.wall_ns / 1e9) * (SELECT native FROM mfu_peak)      AS hw_flops_per_s,
       p.model_bytes / (p.wall_ns / 1e9) * (SELECT native FROM mfu_peak)   AS model_bytes_per_s,
       coalesce(p.dram_bytes, p.dram_read_bytes + p.dram_write_bytes)
         / (p.wall_ns / 1e9) * (SELECT native FROM mfu_peak)                AS dram_bytes_per_s
FROM mfu_hw_phase AS p
WHERE coalesce(+p.step >= (SELECT step FROM mfu_skip), +p.begin_ns >= (SELECT begin_ns FROM mfu_skip));

-- phase_union: what each counted phase occurrence (complete, not in a step
-- that never ended) adds to the union of its name's occurrences within its
-- step: in begin order, the part of it that reaches past the furthest end
-- before it. Summed over a name, union_ns is the phase's time with threads
-- running it at once counted once (2 threads x the same 10 ms: 10 ms). The
-- union over the occurrences that have each value (the time that value's
-- rate and utilization divide by): union_flops_ns (flops), union_hw_ns
-- (hw_flops), union_bytes_ns (model_bytes), union_dram_ns
-- (dram_total_bytes); NULL for an occurrence without the value.
CREATE TEMP VIEW phase_union AS
WITH reach AS (
  SELECT id, begin_ns, end_ns, flops, hw_flops, model_bytes, dram_total_bytes,
         MAX(end_ns) OVER (PARTITION BY name, step ORDER BY begin_ns
                           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS r_all,
         MAX(end_ns) OVER (PARTITION BY name, step, flops IS NULL ORDER BY begin_ns
                           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS r_flops,
         MAX(end_ns) OVER (PARTITION BY name, step, hw_flops IS NULL ORDER BY begin_ns
                           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS r_hw,
         MAX(end_ns) OVER (PARTITION BY name, step, model_bytes IS NULL ORDER BY begin_ns
                           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS r_bytes,
         MAX(end_ns) OVER (PARTITION BY name, step, dram_total_bytes IS NULL ORDER BY begin_ns
                           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS r_dram
  FROM phase NOT INDEXED
  WHERE complete = 1 AND (step IS NULL OR step NOT IN (SELECT step FROM step WHERE complete = 0))
)
SELECT id,
       MAX(0, end_ns - MAX(begin_ns, coalesce(r_all, begin_ns)))                   AS union_ns,
       CASE WHEN flops IS NOT NULL
            THEN MAX(0, end_ns - MAX(begin_ns, coalesce(r_flops, begin_ns))) END   AS union_flops_ns,
       CASE WHEN hw_flops IS NOT NULL
            THEN MAX(0, end_ns - MAX(begin_ns, coalesce(r_hw, begin_ns))) END      AS union_hw_ns,
       CASE WHEN model_bytes IS NOT NULL
            THEN MAX(0, end_ns - MAX(begin_ns, coalesce(r_bytes, begin_ns))) END   AS union_bytes_ns,
       CASE WHEN dram_total_bytes IS NOT NULL
            THEN MAX(0, end_ns - MAX(begin_ns, coalesce(r_dram, begin_ns))) END    AS union_dram_ns
FROM reach;

-- ---- notes ------------------------------------------------------------

-- note: the recorder's notes, less those --quiet leaves out, with the
-- notes of --hw-flops-from (which restates this run's "counters missing").
CREATE TEMP VIEW note AS
SELECT * FROM main.note
WHERE (SELECT recorded_notes FROM mfu_option)
  AND NOT ((SELECT quiet FROM mfu_option) AND kind IN ('missing_counters', 'missing_dram'))
  AND NOT ((SELECT hw_flops_from FROM mfu_option) IS NOT NULL AND kind = 'missing_counters')
UNION ALL
SELECT * FROM mfu_hw_note;
