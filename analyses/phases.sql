-- phases: one row per phase name, over the complete occurrences of the
-- phase (phase.complete = 1) that are not inside a step that never ended,
-- in the order the names first occur.
--
--   count         occurrences
--   total_ms      sum of their wall times; mean_ms = total_ms / count
--   p50_ms, p95_ms  nearest-rank percentiles of the occurrences' wall times:
--                 the value at rank ceil(p/100 * count) in ascending order,
--                 always an observed time (with fewer than 20 occurrences p95
--                 is the largest one)
--   share         the wall time of the occurrences inside steps / the total
--                 wall time of all complete steps; NULL for a phase that
--                 never ran inside a step (its time is not step time: a
--                 phase outside the one step of a run gave 3865%). Nested
--                 phases (a phase inside another) and phases that run in
--                 several threads at once can make the shares add up to
--                 more than 1.
--   union_ms      the phase's time as the union of its occurrences' intervals
--                 within each step, summed over the steps: threads running
--                 the phase at once count once (2 threads x the same 10 ms:
--                 total_ms 20, union_ms 10)
--   mfu           sum(flops) / (union time * run.peak_flops) over the
--                 occurrences with an MFU numerator (phase.flops: the model
--                 FLOPs declared, else the library calls' FLOPs; the union
--                 of their intervals); NULL if none has one or no peak is
--                 known. hfu (hw_flops) and mbu (model_bytes / run.peak_bw)
--                 likewise.
--   model_flops_per_s, hw_flops_per_s, model_bytes_per_s   what the phase
--                 achieved, whatever the peak: the sums over the same union
--                 times (ops/s when run.dtype is int8)
--   model_flops   their sum, NULL if none declared any
--   lib_flops     the FLOPs of the library calls made in the occurrences
--                 (BLAS, oneDNN), NULL if not counted
--   flops_source  'declared', 'library', 'mixed' (some occurrences each),
--                 or NULL: which numerator mfu uses
--   cpu_ms        CPU time of all the process's threads during the
--                 occurrences (task-clock), NULL if not counted
--
-- Run by hand: mfu-report --sql phases | sqlite3 -header -column run.sqlite
WITH
-- Per name, the sums and the figures over them (analyses/views.sql:
-- phase_totals, the one definition of a phase's MFU, HFU, MBU and rates;
-- mfu-report reads its sums from a table it computes in C, mfu_phase_stats).
-- MATERIALIZED: every column is read, so a sum that overflows fails the
-- section as SUM() fails it in sqlite3, used or not.
g AS MATERIALIZED (SELECT * FROM phase_totals)
SELECT
  g.name                                                         AS phase,
  g.n                                                            AS count,
  g.total_ns / 1e6                                               AS total_ms,
  g.total_ns / 1e6 / g.n                                         AS mean_ms,
  g.p50_ns / 1e6                                                 AS p50_ms,
  g.p95_ns / 1e6                                                 AS p95_ms,
  g.step_ns * 1.0 / (SELECT SUM(wall_ns) FROM step WHERE complete = 1) AS share,
  g.mfu                                                          AS mfu,
  g.model_flops                                                  AS model_flops,
  g.cpu_ns / 1e6                                                 AS cpu_ms,
  g.hfu                                                          AS hfu,
  g.mbu                                                          AS mbu,
  g.hw_flops                                                     AS hw_flops,
  g.dram_bytes                                                   AS dram_bytes,
  g.dram_bw_util                                                 AS dram_bw_util,
  g.hw_flops / nullif(g.dram_bytes, 0)                           AS ai_hw,
  g.union_ns / 1e6                                               AS union_ms,
  g.model_flops_per_s                                            AS model_flops_per_s,
  g.hw_flops_per_s                                               AS hw_flops_per_s,
  g.model_bytes_per_s                                            AS model_bytes_per_s,
  g.flops_source                                                 AS flops_source,
  g.lib_flops                                                    AS lib_flops
FROM g
ORDER BY g.first_id;
