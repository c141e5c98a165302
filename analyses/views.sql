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
--   dtype          --dtype DTYPE: MFU and HFU against the DTYPE peak, the
--                  one mfu-record chose for it (peak rows of scope
--                  'choice'), not the run's own dtype's
CREATE TEMP VIEW IF NOT EXISTS mfu_option AS
SELECT 0 AS skip_steps, 0 AS quiet, NULL AS hw_flops_from, NULL AS dtype;

-- ---- the run ----------------------------------------------------------

-- run: main.run, except that an emulated run (mfu-record --emulate) has no
-- peaks: its times are the emulator's (2 to 1,000+ times the program's
-- own), so no MFU, HFU, MBU or rate is made of them. Its peak sources say
-- so; native is 1 for a run that ran natively, NULL for an emulated one
-- (a rate times native is NULL for it). With --dtype another than the
-- run's, dtype is that one and peak_flops the peak mfu-record chose for it
-- (mfu_dtype_peak), NULL with the reason in peak_flops_source when the
-- recording holds none. One choice row per dtype (mfu-record writes one;
-- a database edited by hand with more gets the first, not a run row
-- each).
CREATE TEMP VIEW mfu_dtype_peak AS
SELECT o.dtype, p.value,
       coalesce(p.detail,
                'not recorded: this recording holds no ' || o.dtype || ' FLOP/s peak (none is known for '
                || o.dtype || ' on its machine, or it was made before mfu-record stored each dtype''s peak): '
                || 'record with mfu-record --dtype ' || o.dtype) AS source
FROM mfu_option AS o
LEFT JOIN main.peak AS p ON p.rowid = (SELECT min(rowid) FROM main.peak
                                      WHERE kind = 'flops' AND scope = 'choice' AND dtype = o.dtype)
WHERE o.dtype IS NOT NULL;

CREATE TEMP VIEW run AS
SELECT id, mfu_version, command, cwd, start_unix_ns, start_ns, end_ns, host, kernel, cpu_vendor,
       cpu_family, cpu_model, cpu_stepping, cpu_name, uarch, isa, nominal_hz, nominal_hz_source,
       allowed_cpus, ncpu_affinity, cpu_quota, ncpu,
       coalesce(d.dtype, r.dtype)                                      AS dtype,
       CASE WHEN emulated IS NULL THEN
         CASE WHEN d.dtype IS NOT NULL THEN d.value ELSE r.peak_flops END END AS peak_flops,
       CASE WHEN emulated IS NOT NULL THEN 'not used (emulated run): ' || r.peak_flops_source
            WHEN d.dtype IS NOT NULL
            THEN '--dtype ' || d.dtype || ' (recorded with ' || r.dtype || '): ' || d.source
            ELSE r.peak_flops_source END                                AS peak_flops_source,
       CASE WHEN emulated IS NULL THEN peak_bw END                      AS peak_bw,
       CASE WHEN emulated IS NULL THEN peak_bw_source
            ELSE 'not used (emulated run): ' || peak_bw_source END      AS peak_bw_source,
       target_pid, exit_status, exit_signal, lost_records, state, mode, interval_ns, ncores,
       clock_hz, cpus_source, peak_mode, lib_counting, rank, world_size, local_rank, local_size,
       job_id, rank_source, rank_shared, emulated, lib_flops, lib_flops_fp64, lib_flops_fp32,
       lib_flops_bf16, lib_flops_fp16, lib_ops_int8, lib_calls, lib_calls_unknown,
       exe_functions, exe_usdt,
       CASE WHEN emulated IS NULL THEN 1 END                            AS native
FROM main.run AS r LEFT JOIN mfu_dtype_peak AS d ON d.dtype <> r.dtype;

-- The run's divisors, one row: the peaks (NULL when unknown or emulated),
-- ncpu and native. NULL in a merged file (mfu-report merge: one run row per
-- rank), whose per-rank figures are job_rank_step's. A TEMP table, made
-- once from the run view: the step and phase views name it in every
-- figure, and a view there made SQLite expand the run view again at each
-- name when it prepared a statement (a third of mfu-report's prepare time).
CREATE TEMP TABLE mfu_peak AS
SELECT CASE WHEN count(*) = 1 THEN max(peak_flops) END AS peak_flops,
       CASE WHEN count(*) = 1 THEN max(peak_bw) END    AS peak_bw,
       CASE WHEN count(*) = 1 THEN max(ncpu) END       AS ncpu,
       CASE WHEN count(*) = 1 THEN max(native) END     AS native
FROM run WHERE id = 1;

-- run_flops: the whole run's library FLOPs over its time (docs/metrics.md,
-- "The whole run"), one row (the run row 1: a merged file's first rank):
--   lib_flops ... lib_calls_unknown   as stored in run
--   wall_ns            the run's wall time, exec to end (run.end_ns - start_ns)
--   cpu_ns             its busy CPU time: task-clock of every thread and
--                      process of the target over the run (counter.total)
--   lib_flops_per_s    lib_flops / wall
--   mfu                lib_flops / (wall x peak_flops)
--   busy_flops_per_s   lib_flops / cpu time: FLOP per CPU-second used
--   busy_mfu           lib_flops / (cpu time x peak_flops / ncpu): the MFU
--                      of the CPU time the target used (its CPUs' share of
--                      the peak while busy; mfu / cpu_util)
--   cpu_util           cpu time / (wall x ncpu)
-- NULL when unknown (calls not counted, no peak, an emulated run's times,
-- which are the emulator's: run.native NULL); mfu and busy_mfu also when no
-- call was made (lib_flops 0: the FLOPs, if any, came from elsewhere), as
-- a step's MFU.
CREATE TEMP VIEW run_flops AS
SELECT r.lib_flops, r.lib_flops_fp64, r.lib_flops_fp32, r.lib_flops_bf16, r.lib_flops_fp16,
       r.lib_ops_int8, r.lib_calls, r.lib_calls_unknown,
       r.end_ns - r.start_ns AS wall_ns,
       c.cpu_ns,
       CASE WHEN r.native THEN r.lib_flops / ((r.end_ns - r.start_ns) / 1e9) END AS lib_flops_per_s,
       CASE WHEN r.peak_flops > 0 AND r.lib_flops > 0
            THEN r.lib_flops / ((r.end_ns - r.start_ns) / 1e9 * r.peak_flops) END AS mfu,
       CASE WHEN r.native THEN r.lib_flops / (c.cpu_ns / 1e9) END AS busy_flops_per_s,
       CASE WHEN r.peak_flops > 0 AND r.ncpu > 0 AND r.lib_flops > 0
            THEN r.lib_flops / (c.cpu_ns / 1e9 * r.peak_flops / r.ncpu) END AS busy_mfu,
       CASE WHEN r.native AND r.ncpu > 0
            THEN c.cpu_ns / ((r.end_ns - r.start_ns) * r.ncpu) END AS cpu_util
FROM run AS r
LEFT JOIN (SELECT total * 1.0 AS cpu_ns FROM main.counter WHERE col = 'cpu_ns' AND opened = 1 AND total > 0
           ORDER BY id LIMIT 1) AS c
WHERE r.id = 1;

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

-- ---- totals: the run's steps and each phase name ----------------------

-- step_sums: one row, the sums over the complete steps that every figure of
-- the run divides (the summary's and the notes'):
--   steps, wall_ns, mean_ns     how many, their wall time, its mean
--   flops, flops_ns             the MFU numerators' sum and the wall time of
--                               the steps that have one (n_flops of them;
--                               all_flops 1 when every step has one)
--   hw_flops, hw_flops_ns, n_hw     the same for counted FLOPs (and
--                               hw_flops_fp64, _fp32, _fp16 by precision)
--   model_bytes, model_bytes_ns, n_bytes    the same for declared bytes
--   dram_bytes, dram_ns         the same for DRAM bytes (dram_total_bytes)
--   cpu_ns, cpu_wall_ns         CPU time, and the wall time of the steps
--                               that have it
--   common_flops, common_hw, common_ns, n_common   over the steps that have
--                               both an MFU numerator and counted FLOPs
--   model_flops, lib_flops, n_lib, n_declared, n_library   declared and
--                               library-call FLOPs; how many steps have
--                               library FLOPs, and whose flops_source is
--                               'declared' or 'library' (NULL without steps)
--   both_declared, both_lib, n_both   over the steps with both declared and
--                               library FLOPs (> 0): the two sums
--   lib, lib_fp64 ... lib_int8  library FLOPs of the steps whose MFU uses
--                               them (flops_source 'library'), by precision
--   max_mfu, max_hfu, max_mbu   the highest step's (above 1 is impossible)
--   e2e_ns                      first step's begin to last step's end
--   incomplete                  steps that never ended (not in the sums)
--   p50_ns, p95_ns              nearest-rank percentiles of the step times
-- mfu-report makes this row in one call per step instead
-- (mfu_step_totals_keep: the same sums and ranks, in a third of the time on
-- a million steps, without a sort), once per connection: the summary and
-- the notes read the one result (mfu_step_totals_kept). A sum past 64 bits
-- fails the query with "integer overflow": here any of them, in mfu-report
-- one that the query reads.
CREATE TEMP VIEW step_sums AS
-- @computed: SELECT mfu_checked(json_extract(t, '$.steps')) AS steps, mfu_checked(json_extract(t, '$.wall_ns')) AS wall_ns, mfu_checked(json_extract(t, '$.mean_ns')) AS mean_ns, mfu_checked(json_extract(t, '$.model_flops')) AS model_flops, mfu_checked(json_extract(t, '$.flops')) AS flops, mfu_checked(json_extract(t, '$.flops_ns')) AS flops_ns, mfu_checked(json_extract(t, '$.n_declared')) AS n_declared, mfu_checked(json_extract(t, '$.n_library')) AS n_library, mfu_checked(json_extract(t, '$.lib_flops')) AS lib_flops, mfu_checked(json_extract(t, '$.both_declared')) AS both_declared, mfu_checked(json_extract(t, '$.both_lib')) AS both_lib, mfu_checked(json_extract(t, '$.model_bytes')) AS model_bytes, mfu_checked(json_extract(t, '$.model_bytes_ns')) AS model_bytes_ns, mfu_checked(json_extract(t, '$.hw_flops')) AS hw_flops, mfu_checked(json_extract(t, '$.hw_flops_fp64')) AS hw_flops_fp64, mfu_checked(json_extract(t, '$.hw_flops_fp32')) AS hw_flops_fp32, mfu_checked(json_extract(t, '$.hw_flops_fp16')) AS hw_flops_fp16, mfu_checked(json_extract(t, '$.hw_flops_ns')) AS hw_flops_ns, mfu_checked(json_extract(t, '$.cpu_ns')) AS cpu_ns, mfu_checked(json_extract(t, '$.cpu_wall_ns')) AS cpu_wall_ns, mfu_checked(json_extract(t, '$.dram_bytes')) AS dram_bytes, mfu_checked(json_extract(t, '$.dram_ns')) AS dram_ns, mfu_checked(json_extract(t, '$.e2e_ns')) AS e2e_ns, mfu_checked(json_extract(t, '$.all_flops')) AS all_flops, mfu_checked(json_extract(t, '$.n_flops')) AS n_flops, mfu_checked(json_extract(t, '$.n_hw')) AS n_hw, mfu_checked(json_extract(t, '$.n_common')) AS n_common, mfu_checked(json_extract(t, '$.common_flops')) AS common_flops, mfu_checked(json_extract(t, '$.common_hw')) AS common_hw, mfu_checked(json_extract(t, '$.common_ns')) AS common_ns, mfu_checked(json_extract(t, '$.n_bytes')) AS n_bytes, mfu_checked(json_extract(t, '$.n_lib')) AS n_lib, mfu_checked(json_extract(t, '$.n_both')) AS n_both, mfu_checked(json_extract(t, '$.max_mfu')) AS max_mfu, mfu_checked(json_extract(t, '$.max_hfu')) AS max_hfu, mfu_checked(json_extract(t, '$.max_mbu')) AS max_mbu, mfu_checked(json_extract(t, '$.lib')) AS lib, mfu_checked(json_extract(t, '$.lib_fp64')) AS lib_fp64, mfu_checked(json_extract(t, '$.lib_fp32')) AS lib_fp32, mfu_checked(json_extract(t, '$.lib_bf16')) AS lib_bf16, mfu_checked(json_extract(t, '$.lib_fp16')) AS lib_fp16, mfu_checked(json_extract(t, '$.lib_int8')) AS lib_int8, mfu_checked(json_extract(t, '$.incomplete')) AS incomplete, mfu_checked(json_extract(t, '$.p50_ns')) AS p50_ns, mfu_checked(json_extract(t, '$.p95_ns')) AS p95_ns FROM (SELECT coalesce(mfu_step_totals_kept(), (SELECT mfu_step_totals_keep(wall_ns, lib_flops, model_flops, model_bytes, hw_flops, hw_flops_fp64, hw_flops_fp32, hw_flops_fp16, cpu_ns, dram_total_bytes, begin_ns, end_ns, (SELECT peak_flops FROM mfu_peak), (SELECT peak_bw FROM mfu_peak), lib_flops_fp64, lib_flops_fp32, lib_flops_bf16, lib_flops_fp16, lib_ops_int8, complete) FROM step)) AS t)
WITH
agg AS MATERIALIZED (
  SELECT
    COUNT(*)                                                   AS steps,
    SUM(wall_ns)                                               AS wall_ns,  -- NULL without steps: unknown, not 0
    AVG(wall_ns)                                               AS mean_ns,
    SUM(model_flops)                                           AS model_flops,
    SUM(flops)                                                 AS flops,
    SUM(CASE WHEN flops IS NOT NULL THEN wall_ns END)          AS flops_ns,
    SUM(flops_source = 'declared')                             AS n_declared,
    SUM(flops_source = 'library')                              AS n_library,
    SUM(lib_flops)                                             AS lib_flops,
    SUM(CASE WHEN lib_flops > 0 THEN model_flops END)          AS both_declared,
    SUM(CASE WHEN model_flops IS NOT NULL THEN lib_flops END)  AS both_lib,
    SUM(model_bytes)                                           AS model_bytes,
    SUM(CASE WHEN model_bytes IS NOT NULL THEN wall_ns END)    AS model_bytes_ns,
    SUM(hw_flops)                                              AS hw_flops,
    SUM(hw_flops_fp64)                                         AS hw_flops_fp64,
    SUM(hw_flops_fp32)                                         AS hw_flops_fp32,
    SUM(hw_flops_fp16)                                         AS hw_flops_fp16,
    SUM(CASE WHEN hw_flops IS NOT NULL THEN wall_ns END)       AS hw_flops_ns,
    SUM(cpu_ns)                                                AS cpu_ns,
    SUM(CASE WHEN cpu_ns IS NOT NULL THEN wall_ns END)         AS cpu_wall_ns,
    SUM(dram_total_bytes)                                      AS dram_bytes,
    SUM(CASE WHEN dram_total_bytes IS NOT NULL THEN wall_ns END) AS dram_ns,
    MAX(end_ns) - MIN(begin_ns)                                AS e2e_ns,
    COUNT(flops) = COUNT(*)                                    AS all_flops,
    COUNT(flops)                                               AS n_flops,
    COUNT(hw_flops)                                            AS n_hw,
    COUNT(CASE WHEN flops IS NOT NULL THEN hw_flops END)       AS n_common,
    SUM(CASE WHEN hw_flops IS NOT NULL THEN flops END)         AS common_flops,
    SUM(CASE WHEN flops IS NOT NULL THEN hw_flops END)         AS common_hw,
    SUM(CASE WHEN flops IS NOT NULL AND hw_flops IS NOT NULL THEN wall_ns END) AS common_ns,
    COUNT(model_bytes)                                         AS n_bytes,
    COUNT(lib_flops)                                           AS n_lib,
    COUNT(CASE WHEN lib_flops > 0 THEN model_flops END)        AS n_both,
    MAX(mfu)                                                   AS max_mfu,
    MAX(hfu)                                                   AS max_hfu,
    MAX(mbu)                                                   AS max_mbu
  FROM step
  WHERE complete = 1
),
-- The steps whose MFU uses their library calls' FLOPs, in a scan of their
-- own: flops_source is a virtual column, computed again at every mention.
lib AS MATERIALIZED (
  SELECT SUM(lib_flops)      AS lib,
         SUM(lib_flops_fp64) AS lib_fp64,
         SUM(lib_flops_fp32) AS lib_fp32,
         SUM(lib_flops_bf16) AS lib_bf16,
         SUM(lib_flops_fp16) AS lib_fp16,
         SUM(lib_ops_int8)   AS lib_int8
  FROM step WHERE complete = 1 AND flops_source = 'library'
),
-- Step times in ascending order, numbered 1..steps (one sort).
ranked AS (
  SELECT wall_ns, ROW_NUMBER() OVER (ORDER BY wall_ns) AS rn
  FROM step
  WHERE complete = 1
),
pct AS (
  SELECT
    MAX(CASE WHEN ranked.rn = (50 * agg.steps + 99) / 100 THEN ranked.wall_ns END) AS p50_ns,
    MAX(CASE WHEN ranked.rn = (95 * agg.steps + 99) / 100 THEN ranked.wall_ns END) AS p95_ns
  FROM ranked CROSS JOIN agg
  WHERE ranked.rn IN ((50 * agg.steps + 99) / 100, (95 * agg.steps + 99) / 100)
)
SELECT agg.*, lib.*, (SELECT COUNT(*) FROM step WHERE complete = 0) AS incomplete, pct.p50_ns, pct.p95_ns
FROM agg CROSS JOIN lib CROSS JOIN pct
-- @end
;

-- step_totals: step_sums with the run's figures over them. Each divides by
-- the wall time of the steps that have its numerator (W = that time / 1e9
-- seconds); NULL when no step has it or the peak is unknown:
--   mfu            flops / (W * peak_flops)
--   hfu            hw_flops / (W * peak_flops)
--   mbu            model_bytes / (W * peak_bw)
--   dram_bw_util   dram_bytes / (W * peak_bw)
--   cpu_util       cpu_ns / (cpu_wall_ns * ncpu)
--   e2e_mfu        flops / (e2e_ns / 1e9 * peak_flops), when every step has
--                  an MFU numerator: the MFU of the whole stretch of steps
--   mfu_common, hfu_common   mfu and hfu over the steps that have both
--   model_flops_per_s, hw_flops_per_s, model_bytes_per_s   the rates,
--                  whatever the peak; NULL for an emulated run
CREATE TEMP VIEW step_totals AS
SELECT t.*,
       t.flops / (t.flops_ns / 1e9 * p.peak_flops)                         AS mfu,
       t.hw_flops / (t.hw_flops_ns / 1e9 * p.peak_flops)                   AS hfu,
       t.model_bytes / (t.model_bytes_ns / 1e9 * p.peak_bw)                AS mbu,
       t.dram_bytes / (t.dram_ns / 1e9 * p.peak_bw)                        AS dram_bw_util,
       t.cpu_ns / (t.cpu_wall_ns * 1.0 * p.ncpu)                           AS cpu_util,
       CASE WHEN t.all_flops THEN t.flops / (t.e2e_ns / 1e9 * p.peak_flops) END AS e2e_mfu,
       t.common_flops / (t.common_ns / 1e9 * p.peak_flops)                 AS mfu_common,
       t.common_hw / (t.common_ns / 1e9 * p.peak_flops)                    AS hfu_common,
       t.flops / (t.flops_ns / 1e9) * p.native                             AS model_flops_per_s,
       t.hw_flops / (t.hw_flops_ns / 1e9) * p.native                       AS hw_flops_per_s,
       t.model_bytes / (t.model_bytes_ns / 1e9) * p.native                 AS model_bytes_per_s
FROM step_sums AS t CROSS JOIN mfu_peak AS p;

-- phase_sums: one row per phase name, over its counted occurrences
-- (complete, and not in a step that never ended), in the order the names
-- first occur: what the phases section and the notes divide.
--   name, n, first_id           the name, its occurrences, the first one's id
--   total_ns                    the sum of their wall times
--   flops, flops_ns             the MFU numerators' sum and the wall time of
--                               the occurrences that have one; likewise
--                               hw_flops/hw_flops_ns, model_bytes/
--                               model_bytes_ns, dram_bytes/dram_ns
--                               (dram_total_bytes)
--   cpu_ns, model_flops, lib_flops   sums
--   nd, nl                      occurrences whose flops_source is 'declared',
--                               'library'
--   step_ns                     the wall time of those inside a step (NULL
--                               if none is)
--   p50_ns, p95_ns              nearest-rank percentiles of the wall times:
--                               the value at rank ceil(p/100 * n), ascending
--   union_ns, union_flops_ns, union_hw_ns, union_bytes_ns, union_dram_ns
--                               the union of the occurrences' intervals
--                               within each step, summed over the steps
--                               (phase_union): over all of them, and over
--                               those with each value (its rate's divisor)
--   n_flops, n_hw, n_both       occurrences with flops, hw_flops, and both
-- mfu-report reads the same rows from mfu_phase_stats, a table it computes in
-- C in one scan of the phase rows (here SQLite sorts every phase row twice:
-- about 5 s per million occurrences), once per connection: the phases
-- section and the notes read the one result. tests/e2e/test_report.py
-- checks both against Python's sort. The counted occurrences are read NOT
-- INDEXED: in the table's own order; through the phase_name index SQLite
-- would visit the rows name by name, a random read each.
CREATE TEMP VIEW phase_sums AS
-- @computed: SELECT * FROM mfu_phase_stats
WITH
ok AS NOT MATERIALIZED (
  SELECT * FROM phase NOT INDEXED
  WHERE complete = 1 AND (step IS NULL OR step NOT IN (SELECT step FROM step WHERE complete = 0))
),
agg AS (
  SELECT
    name,
    COUNT(*)                                                 AS n,
    MIN(id)                                                  AS first_id,
    SUM(wall_ns)                                             AS total_ns,
    SUM(flops)                                               AS flops,
    SUM(CASE WHEN flops IS NOT NULL THEN wall_ns END)        AS flops_ns,
    SUM(hw_flops)                                            AS hw_flops,
    SUM(CASE WHEN hw_flops IS NOT NULL THEN wall_ns END)     AS hw_flops_ns,
    SUM(model_bytes)                                         AS model_bytes,
    SUM(CASE WHEN model_bytes IS NOT NULL THEN wall_ns END)  AS model_bytes_ns,
    SUM(cpu_ns)                                              AS cpu_ns,
    SUM(dram_total_bytes)                                    AS dram_bytes,
    SUM(CASE WHEN dram_total_bytes IS NOT NULL THEN wall_ns END) AS dram_ns,
    SUM(model_flops)                                         AS model_flops,
    SUM(lib_flops)                                           AS lib_flops,
    SUM(flops_source = 'declared')                           AS nd,
    SUM(flops_source = 'library')                            AS nl,
    SUM(CASE WHEN step IS NOT NULL THEN wall_ns END)         AS step_ns,
    COUNT(flops)                                             AS n_flops,
    COUNT(hw_flops)                                          AS n_hw,
    COUNT(CASE WHEN flops IS NOT NULL THEN hw_flops END)     AS n_both
  FROM ok
  GROUP BY name
),
-- Each name's wall times in ascending order, numbered 1..n. Partitioned by
-- the name's first id, an integer, which sorts faster than the name.
ranked AS (
  SELECT agg.first_id, agg.n, ok.wall_ns,
         ROW_NUMBER() OVER (PARTITION BY agg.first_id ORDER BY ok.wall_ns) AS rn
  FROM ok JOIN agg ON agg.name = ok.name
),
pct AS (
  SELECT first_id,
         MAX(CASE WHEN rn = (50 * n + 99) / 100 THEN wall_ns END) AS p50_ns,
         MAX(CASE WHEN rn = (95 * n + 99) / 100 THEN wall_ns END) AS p95_ns
  FROM ranked
  WHERE rn IN ((50 * n + 99) / 100, (95 * n + 99) / 100)
  GROUP BY first_id
),
un AS (
  SELECT ok.name,
         SUM(u.union_ns)        AS union_ns,
         SUM(u.union_flops_ns)  AS union_flops_ns,
         SUM(u.union_hw_ns)     AS union_hw_ns,
         SUM(u.union_bytes_ns)  AS union_bytes_ns,
         SUM(u.union_dram_ns)   AS union_dram_ns
  FROM ok JOIN phase_union AS u ON u.id = ok.id
  GROUP BY ok.name
)
SELECT agg.name, agg.n, agg.first_id, agg.total_ns, agg.flops, agg.flops_ns, agg.hw_flops, agg.hw_flops_ns,
       agg.model_bytes, agg.model_bytes_ns, agg.cpu_ns, agg.dram_bytes, agg.dram_ns, agg.model_flops,
       agg.lib_flops, agg.nd, agg.nl, agg.step_ns, pct.p50_ns, pct.p95_ns, un.union_ns, un.union_flops_ns, un.union_hw_ns,
       un.union_bytes_ns, un.union_dram_ns, agg.n_flops, agg.n_hw, agg.n_both
FROM agg LEFT JOIN pct ON pct.first_id = agg.first_id
         LEFT JOIN un ON un.name IS agg.name
ORDER BY agg.first_id
-- @end
;

-- phase_totals: phase_sums with each name's figures, over the union of its
-- occurrences' intervals (threads running the phase at once count once):
--   mfu            flops / (union_flops_ns / 1e9 * peak_flops)
--   hfu            hw_flops / (union_hw_ns / 1e9 * peak_flops)
--   mbu            model_bytes / (union_bytes_ns / 1e9 * peak_bw)
--   dram_bw_util   dram_bytes / (union_dram_ns / 1e9 * peak_bw)
--   model_flops_per_s, hw_flops_per_s, model_bytes_per_s   the rates over
--                  the same unions, whatever the peak; NULL for an emulated
--                  run
--   flops_source   'declared', 'library', 'mixed' (some occurrences each),
--                  or NULL: which numerator mfu uses
CREATE TEMP VIEW phase_totals AS
SELECT g.*,
       g.flops / (g.union_flops_ns / 1e9 * p.peak_flops)                   AS mfu,
       g.hw_flops / (g.union_hw_ns / 1e9 * p.peak_flops)                   AS hfu,
       g.model_bytes / (g.union_bytes_ns / 1e9 * p.peak_bw)                AS mbu,
       g.dram_bytes / (g.union_dram_ns / 1e9 * p.peak_bw)                  AS dram_bw_util,
       g.flops / (g.union_flops_ns / 1e9) * p.native                       AS model_flops_per_s,
       g.hw_flops / (g.union_hw_ns / 1e9) * p.native                       AS hw_flops_per_s,
       g.model_bytes / (g.union_bytes_ns / 1e9) * p.native                 AS model_bytes_per_s,
       CASE WHEN g.nd > 0 AND g.nl > 0 THEN 'mixed' WHEN g.nd > 0 THEN 'declared'
            WHEN g.nl > 0 THEN 'library' END                               AS flops_source
FROM phase_sums AS g CROSS JOIN mfu_peak AS p;

-- ---- intervals --------------------------------------------------------

-- interval: one row per reading of the counter groups (every -I ms), the
-- rows of the intervals section (analyses/intervals.sql says what each
-- column is) with time_ns, the reading's time, to order them by. Its hfu
-- and mfu are the interval's FLOPs over the interval's (or its library
-- span's) seconds x the run's peak_flops (mfu_peak, the divisors of the
-- step and phase figures too): NULL for an emulated run and in a merged
-- file.
CREATE TEMP VIEW interval AS
WITH r AS (SELECT run.start_ns, p.peak_flops, p.ncpu, p.native,
                  (SELECT max(lib_flops) FROM lib_reading) AS lib_total
           FROM run CROSS JOIN mfu_peak AS p WHERE run.id = 1),
-- the library readings; "*, NULL AS lib_calls_begun" reads as NULL a
-- database without that column (SQLite names the second one
-- lib_calls_begun:1 when the first exists). A span ends at a reading with
-- no call running, or unknown.
lr AS (
  SELECT time_ns, lib_flops, lib_calls,
         coalesce(lib_calls_begun <= lib_calls, 1) AS span_end,
         lib_calls_begun IS NULL AS unknown
  FROM (SELECT *, NULL AS lib_calls_begun FROM lib_reading)),
li AS (
  SELECT time_ns,
         time_ns - lag(time_ns) OVER w     AS dt,
         lib_flops - lag(lib_flops) OVER w AS lib_flops,
         lib_calls - lag(lib_calls) OVER w AS lib_calls,
         unknown, span_end,
         first_value(span_end) OVER w AS first_end,
         coalesce(sum(span_end) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS span
  FROM lr
  WINDOW w AS (ORDER BY time_ns)),
-- a span that begins or ends with a call running (the first reading of
-- --skip-steps inside a call; a recording that stopped inside one) holds
-- FLOPs done outside it, or misses some: its rate is unknown
ls AS (
  SELECT time_ns, dt, lib_flops, lib_calls, unknown,
         CASE WHEN max(span_end) OVER s AND (span > 0 OR first_end)
              THEN sum(lib_flops) OVER s END AS span_flops,
         sum(dt) OVER s                      AS span_ns
  FROM li
  WHERE dt > 0
  WINDOW s AS (PARTITION BY span)),
d AS (
  SELECT ir.time_ns, c.col, c.weight,
         ir.raw - lag(ir.raw) OVER w AS draw,
         ir.time_enabled - lag(ir.time_enabled) OVER w AS den,
         ir.time_running - lag(ir.time_running) OVER w AS drun,
         ir.time_ns - lag(ir.time_ns) OVER w AS dt
  FROM interval_reading ir
  JOIN counter c ON c.id = ir.counter
  WHERE c.reason IS NULL OR c.reason NOT LIKE '%not reported%'
  WINDOW w AS (PARTITION BY ir.counter ORDER BY ir.time_ns)),
v AS (
  SELECT time_ns, dt, col,
         CASE WHEN drun > 0 THEN draw * 1.0 * den / drun
              WHEN den = 0 THEN draw * 1.0 END * coalesce(weight, 1) AS value,
         NULL AS calls, NULL AS span_flops, NULL AS span_ns, NULL AS unknown
  FROM d
  WHERE dt > 0
  UNION ALL
  -- the library calls, read at the same times (cumulative integers): one
  -- row each, grouped with the counters in the one GROUP BY below
  SELECT time_ns, dt, 'lib', lib_flops, lib_calls, span_flops, span_ns, unknown
  FROM ls),
t AS (
  SELECT time_ns, max(dt) AS dt,
         sum(CASE WHEN col = 'cpu_ns' THEN value END)          AS cpu_ns,
         sum(CASE WHEN col = 'ctx_switches' THEN value END)    AS ctx_switches,
         sum(CASE WHEN col = 'cpu_migrations' THEN value END)  AS cpu_migrations,
         sum(CASE WHEN col = 'page_faults' THEN value END)     AS page_faults,
         sum(CASE WHEN col = 'cycles' THEN value END)          AS cycles,
         sum(CASE WHEN col = 'instructions' THEN value END)    AS instructions,
         sum(CASE WHEN col LIKE 'hw_flops_%' THEN value END)   AS hw_flops,
         sum(CASE WHEN col = 'lib' THEN value END)             AS lib_flops,
         sum(calls)                                            AS lib_calls,
         max(span_flops)                                       AS span_flops,
         max(span_ns)                                          AS span_ns,
         max(unknown)                                          AS unknown
  FROM v
  GROUP BY time_ns)
SELECT
  t.time_ns                                                     AS time_ns,
  (t.time_ns - (SELECT start_ns FROM r)) / 1e6                  AS t_ms,
  t.dt / 1e6                                                    AS interval_ms,
  t.cpu_ns / t.dt                                               AS cpus,
  t.cpu_ns / t.dt / (SELECT ncpu FROM r)                        AS cpu_util,
  t.ctx_switches                                                AS ctx_switches,
  t.cpu_migrations                                              AS cpu_migrations,
  t.page_faults                                                 AS page_faults,
  t.cycles                                                      AS cycles,
  t.instructions                                                AS instructions,
  t.instructions / t.cycles                                     AS ipc,
  t.hw_flops                                                    AS hw_flops,
  t.hw_flops / (t.dt / 1e9 * (SELECT peak_flops FROM r))       AS hfu,
  t.lib_flops                                                   AS lib_flops,
  t.lib_calls                                                   AS lib_calls,
  t.span_flops / (t.span_ns / 1e9) * (SELECT native FROM r)   AS lib_flops_per_s,
  CASE WHEN (SELECT lib_total FROM r) > 0
        AND NOT (t.unknown AND t.span_flops / (t.span_ns / 1e9) > (SELECT peak_flops FROM r))
       THEN t.span_flops / (t.span_ns / 1e9 * (SELECT peak_flops FROM r)) END AS mfu,
  t.span_ns / 1e6                                               AS rate_span_ms
FROM t;

-- ---- notes ------------------------------------------------------------

-- note: the recorder's notes, less those --quiet leaves out, with the
-- notes of --hw-flops-from (which restates this run's "counters missing").
CREATE TEMP VIEW note AS
SELECT * FROM main.note
WHERE NOT ((SELECT quiet FROM mfu_option) AND kind IN ('missing_counters', 'missing_dram'))
  AND NOT ((SELECT hw_flops_from FROM mfu_option) IS NOT NULL AND kind = 'missing_counters')
UNION ALL
SELECT * FROM mfu_hw_note;
