-- summary: one row for the whole run, over its complete steps
-- (step.complete = 1).
--
--   steps         number of complete steps
--   wall_ms       their total wall time; mean/p50/p95_step_ms per step
--                 (p50/p95 are nearest-rank: the step time at rank
--                 ceil(p/100 * steps) in ascending order)
--   mfu           sum(flops) / (sum(wall) * peak_flops) over the steps with
--                 an MFU numerator (step.flops: the model FLOPs declared,
--                 else the library calls' FLOPs); NULL if none has one or
--                 no peak
--   flops_source  which numerator mfu uses: declared, library, mixed (some
--                 steps each), or NULL
--   lib_flops     the library calls' FLOPs over the steps (NULL if not
--                 counted); lib_ratio = model_flops / lib_flops over the
--                 steps that have both (a declaration off by 2x is a common
--                 bug: the notes flag a ratio outside 0.5-2)
--   hfu, mbu      the same with hw_flops / peak_flops, model_bytes / peak_bw
--   cpu_util      sum(cpu_ns) / (sum(wall_ns) * ncpu) over counted steps
--   model_flops, model_bytes, hw_flops   totals (NULL if never declared/counted)
--   peak_flops    FLOP/s for dtype used by mfu/hfu; peak_source says where
--                 it came from (spec | measured | user, with detail)
--   peak_bw       bytes/s used by mbu; peak_bw_source likewise
--   ncpu          CPUs the peaks are for: min(affinity, cgroup quota)
--   run_ms        the target's whole run, exec to exit (attached with -p:
--                 attach to exit, or to detach; run_mode says which)
--   e2e_wall_ms   from the first counted step's begin to the last one's end,
--                 the gaps between steps (data loading, logging,
--                 checkpointing) included
--   e2e_mfu       sum(flops) / (e2e_wall * peak_flops): the MFU of the
--                 whole stretch of steps, gaps included; NULL unless every
--                 counted step has an MFU numerator
--   model_flops_per_s, hw_flops_per_s, model_bytes_per_s   the sums over
--                 the summed wall time of the steps that declared (counted)
--                 them: what the program achieved, whatever the peak
--   skipped_steps the complete steps mfu-report --skip-steps left out (the
--                 step view of analyses/views.sql keeps the later ones)
--   incomplete_steps  steps begun but never ended (not counted above)
--   lost_records  marker records lost while recording (ring full or torn)
--   anomalies     rows in the anomaly table (marker misuse, read failures)
--   exit_status, exit_signal, state   how the target and the recording ended
--   hw_flops_fp64, hw_flops_fp32, hw_flops_fp16   the counted FLOPs by
--                 precision over the steps (fp16: half precision, fp16 and
--                 bf16)
--   emulated      the emulator that counted them (mfu-record --emulate),
--                 NULL for a native run. An emulated run's times are the
--                 emulator's: it has counts, no mfu, hfu, mbu or rates (the
--                 run view of analyses/views.sql has no peaks for it)
--   mfu_steps, hfu_steps  the steps mfu and hfu are over (with an MFU
--                 numerator; with counted FLOPs): they differ when some
--                 steps have one and not the other (library FLOPs only in
--                 some steps, --hw-flops-from a shorter run), and a note says so
--   common_steps  the steps that have both; mfu_common and hfu_common are
--                 mfu and hfu over those same steps, the pair to compare
--                 (hfu / mfu: recomputation and wasted lanes)
--   run_mode      launch (mfu-record ran the command) or attach (-p PID)
-- The whole run, steps or none (view run_flops, docs/metrics.md "The whole
-- run"): every library call of every process from exec to end.
--   run_lib_flops, run_lib_calls  its library FLOPs and calls (NULL: not
--                 counted); run_lib_flops_fp64 ... run_lib_ops_int8 by
--                 precision
--   run_lib_flops_per_s  run_lib_flops / run wall time
--   run_mfu       run_lib_flops / (run wall time x peak_flops)
--   run_cpu_ms    the run's busy CPU time: task-clock of all its threads
--   busy_flops_per_s  run_lib_flops / run_cpu: FLOP per CPU-second used
--   busy_mfu      run_lib_flops / (run_cpu x peak_flops / ncpu): the MFU of
--                 the CPU time the target used (run_mfu / its CPU util)
--   lib_in_steps  lib_flops / run_lib_flops: the share of the run's library
--                 FLOPs made inside the complete steps counted here (the
--                 rest: before, between and after them)
--
-- Run by hand: mfu-report --sql summary | sqlite3 -header -column run.sqlite
WITH
r AS (SELECT * FROM run WHERE id = 1),
rf AS (SELECT * FROM run_flops),
-- The complete steps' sums and the run's figures over them
-- (analyses/views.sql: step_totals, the one definition of the run's MFU,
-- HFU, MBU, rates and percentiles; mfu-report makes its sums in one call
-- per step, mfu_step_totals_keep).
agg AS MATERIALIZED (SELECT * FROM step_totals)
SELECT
  agg.steps                                                    AS steps,
  agg.wall_ns / 1e6                                            AS wall_ms,
  agg.mfu                                                      AS mfu,
  r.peak_flops                                                 AS peak_flops,
  r.peak_flops_source                                          AS peak_source,
  r.peak_bw                                                    AS peak_bw,
  r.dtype                                                      AS dtype,
  CASE WHEN agg.n_declared > 0 AND agg.n_library > 0 THEN 'mixed'
       WHEN agg.n_declared > 0 THEN 'declared' WHEN agg.n_library > 0 THEN 'library' END AS flops_source,
  agg.lib_flops                                                AS lib_flops,
  agg.both_declared / nullif(agg.both_lib, 0)                  AS lib_ratio,
  r.lib_counting                                               AS lib_counting,
  rf.lib_flops                                                 AS run_lib_flops,
  rf.lib_calls                                                 AS run_lib_calls,
  rf.lib_flops_per_s                                           AS run_lib_flops_per_s,
  rf.mfu                                                       AS run_mfu,
  rf.cpu_ns / 1e6                                              AS run_cpu_ms,
  rf.busy_flops_per_s                                          AS busy_flops_per_s,
  rf.busy_mfu                                                  AS busy_mfu,
  agg.lib_flops / nullif(rf.lib_flops, 0)                      AS lib_in_steps,
  rf.lib_flops_fp64                                            AS run_lib_flops_fp64,
  rf.lib_flops_fp32                                            AS run_lib_flops_fp32,
  rf.lib_flops_bf16                                            AS run_lib_flops_bf16,
  rf.lib_flops_fp16                                            AS run_lib_flops_fp16,
  rf.lib_ops_int8                                              AS run_lib_ops_int8,
  agg.mean_ns / 1e6                                            AS mean_step_ms,
  agg.p50_ns / 1e6                                             AS p50_step_ms,
  agg.p95_ns / 1e6                                             AS p95_step_ms,
  agg.hfu                                                      AS hfu,
  agg.mbu                                                      AS mbu,
  agg.cpu_util                                                 AS cpu_util,
  agg.model_flops                                              AS model_flops,
  agg.model_bytes                                              AS model_bytes,
  agg.hw_flops                                                 AS hw_flops,
  agg.dram_bytes                                               AS dram_bytes,
  agg.dram_bw_util                                             AS dram_bw_util,
  r.peak_bw_source                                             AS peak_bw_source,
  r.ncpu                                                       AS ncpu,
  (r.end_ns - r.start_ns) / 1e6                                AS run_ms,
  agg.incomplete                                               AS incomplete_steps,
  agg.e2e_ns / 1e6                                             AS e2e_wall_ms,
  agg.e2e_mfu                                                  AS e2e_mfu,
  agg.model_flops_per_s                                        AS model_flops_per_s,
  agg.hw_flops_per_s                                           AS hw_flops_per_s,
  agg.model_bytes_per_s                                        AS model_bytes_per_s,
  -- (the steps before the cut of view mfu_skip: a range of the primary key)
  (SELECT COUNT(*) FROM main.step WHERE step < (SELECT step FROM mfu_skip) AND complete = 1) AS skipped_steps,
  r.ncores                                                     AS ncores,
  r.lost_records                                               AS lost_records,
  (SELECT COUNT(*) FROM anomaly)                               AS anomalies,
  r.exit_status                                                AS exit_status,
  r.exit_signal                                                AS exit_signal,
  r.state                                                      AS state,
  agg.hw_flops_fp64                                            AS hw_flops_fp64,
  agg.hw_flops_fp32                                            AS hw_flops_fp32,
  agg.hw_flops_fp16                                            AS hw_flops_fp16,
  r.emulated                                                   AS emulated,
  agg.n_flops                                                  AS mfu_steps,
  agg.n_hw                                                     AS hfu_steps,
  agg.n_common                                                 AS common_steps,
  agg.mfu_common                                               AS mfu_common,
  agg.hfu_common                                               AS hfu_common,
  r.mode                                                       AS run_mode
FROM agg
LEFT JOIN r
LEFT JOIN rf;
