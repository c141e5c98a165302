-- steps: one row per complete step (step.complete = 1), in step order.
--
-- The utilizations and rates are the step view's (analyses/views.sql, which
-- mfu-report --sql prints first): fractions of the run's peaks over the
-- step's wall time W = wall_ns / 1e9 seconds:
--   mfu      = flops / (W * peak_flops)            the MFU numerator: the model
--                                                 FLOPs the step declared, else
--                                                 its library calls' FLOPs
--                                                 (flops_source: declared,
--                                                 library, or NULL)
--   hfu      = hw_flops    / (W * peak_flops)      FLOPs the PMU counted
--   mbu      = model_bytes / (W * peak_bw)         bytes the step declared
--   cpu_util = cpu_ns / (wall_ns * run.ncpu)       CPU time of all threads
-- A value that was not declared, not counted or has no peak is NULL (an
-- emulated run has no peaks: its times are the emulator's).
-- Times are milliseconds; begin_ms counts from the target's exec
-- (run.start_ns). ipc = instructions / cycles.
-- Counted FLOPs by precision (hw_flops_fp64/fp32/fp16; hw_flops is their
-- sum), hw_fraction (the share of the step the hardware counters counted:
-- < 1 when multiplexed, values scaled up), DRAM bytes from the memory
-- controllers (reads + writes, system-wide, interpolated at the bounds),
--   dram_bw_util = dram_bytes / (W * peak_bw)
--   ai_model = model_flops / model_bytes,  ai_hw = hw_flops / dram_bytes
-- (dram_bytes here is the view's dram_total_bytes)
-- (arithmetic intensity, FLOP per byte, for the roofline).
-- counts: 'exact' (read by the markers at the boundaries) or 'interpolated'
-- (steps from probes: interpolated in the recorder's readings; the true CPU
-- time is within cpu_ms +- cpu_err_ms).
-- Rates, whatever the peak (ops/s when run.dtype is int8; NULL for an
-- emulated run):
--   model_flops_per_s = flops / W (the numerator's rate), hw_flops_per_s = hw_flops / W,
--   model_bytes_per_s = model_bytes / W
--
-- lib_flops: the FLOPs of the BLAS and oneDNN calls the step made (library-
-- call counting, whole process; NULL when not counted, 0 when no call was
-- made), lib_calls their number.
--
-- Run by hand: mfu-report --sql steps | sqlite3 -header -column run.sqlite
SELECT
  s.step                                                             AS step,
  (s.begin_ns - (SELECT start_ns FROM run WHERE id = 1)) / 1e6       AS begin_ms,
  s.wall_ns / 1e6                                                    AS wall_ms,
  s.model_flops                                                      AS model_flops,
  s.model_bytes                                                      AS model_bytes,
  s.hw_flops                                                         AS hw_flops,
  s.mfu                                                              AS mfu,
  s.hfu                                                              AS hfu,
  s.mbu                                                              AS mbu,
  s.cpu_ns / 1e6                                                     AS cpu_ms,
  s.cpu_util                                                         AS cpu_util,
  s.ctx_switches                                                     AS ctx_switches,
  s.page_faults                                                      AS page_faults,
  s.instructions * 1.0 / s.cycles                                    AS ipc,
  s.hw_flops_fp64                                                    AS hw_flops_fp64,
  s.hw_flops_fp32                                                    AS hw_flops_fp32,
  s.hw_flops_fp16                                                    AS hw_flops_fp16,
  s.hw_fraction                                                      AS hw_fraction,
  s.dram_total_bytes                                                 AS dram_bytes,
  s.dram_bw_util                                                     AS dram_bw_util,
  s.model_flops / nullif(s.model_bytes, 0)                           AS ai_model,
  s.hw_flops / nullif(s.dram_total_bytes, 0)                         AS ai_hw,
  s.counts                                                           AS counts,
  s.cpu_ns_err / 1e6                                                 AS cpu_err_ms,
  s.model_flops_per_s                                                AS model_flops_per_s,
  s.hw_flops_per_s                                                   AS hw_flops_per_s,
  s.model_bytes_per_s                                                AS model_bytes_per_s,
  s.lib_flops                                                        AS lib_flops,
  s.flops_source                                                     AS flops_source,
  s.lib_calls                                                        AS lib_calls
FROM step AS s
WHERE s.complete = 1
ORDER BY s.step;
