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
--   share         total_ms / the total wall time of all complete steps.
--                 Nested phases (a phase inside another), phases that run in
--                 several threads at once and phases outside steps can make
--                 the shares add up to more than 1.
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
-- the run's peaks, NULL for an emulated run (analyses/views.sql: mfu_peak;
-- native is NULL for it too: no rates of the emulator's times)
r AS (SELECT * FROM mfu_peak),
-- Steps that never ended: their phases are left out.
bad AS MATERIALIZED (SELECT step FROM step WHERE complete = 0),
-- The counted occurrences. NOT INDEXED: read the table in its own order;
-- through the phase_name index SQLite would visit the rows name by name, a
-- random read each.
ok AS NOT MATERIALIZED (
  SELECT * FROM phase NOT INDEXED
  WHERE complete = 1 AND (step IS NULL OR step NOT IN bad)
),
-- Per name: count, first id, sums, and the nearest-rank percentiles of the
-- wall times: the value at rank (p * n + 99) / 100 = ceil(p/100 * n) of
-- the name's times in ascending order, numbered by ROW_NUMBER().
-- mfu-report does not run the lines from "@computed" to "@end": it puts the
-- SQL after "@computed:" in their place, which reads the same columns and
-- values from mfu_phase_stats, a table it computes in C in one scan of the
-- phase rows (SQLite sorts every phase row twice here: about 5 s per
-- million occurrences). In sqlite3 this file runs as it is, to the same
-- result; tests/e2e/test_report.py checks both against Python's sort.
-- MATERIALIZED, as g is here: every column is read, so a sum that
-- overflows fails the section as SUM() fails it here, used or not.
-- @computed: g AS MATERIALIZED (SELECT * FROM mfu_phase_stats)
-- (flops is the MFU numerator: each occurrence's phase.flops)
g AS MATERIALIZED (
  WITH
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
      SUM(flops_source = 'library')                            AS nl
    FROM ok
    GROUP BY name
  ),
  -- Each name's wall times in ascending order, numbered 1..n. Partitioned
  -- by the name's first id, an integer, which sorts faster than the name.
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
  -- The union of each name's intervals within a step, summed over the
  -- steps (analyses/views.sql: phase_union, what each occurrence adds):
  -- over all occurrences, and over those with each value declared or
  -- counted (the time the value's rate divides by).
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
  SELECT agg.*, pct.p50_ns, pct.p95_ns, un.union_ns, un.union_flops_ns, un.union_hw_ns,
         un.union_bytes_ns, un.union_dram_ns
  FROM agg LEFT JOIN pct ON pct.first_id = agg.first_id
           LEFT JOIN un ON un.name IS agg.name
)
-- @end
SELECT
  g.name                                                         AS phase,
  g.n                                                            AS count,
  g.total_ns / 1e6                                               AS total_ms,
  g.total_ns / 1e6 / g.n                                         AS mean_ms,
  g.p50_ns / 1e6                                                 AS p50_ms,
  g.p95_ns / 1e6                                                 AS p95_ms,
  g.total_ns * 1.0 / (SELECT SUM(wall_ns) FROM step WHERE complete = 1) AS share,
  g.flops / (g.union_flops_ns / 1e9 * (SELECT peak_flops FROM r)) AS mfu,
  g.model_flops                                                  AS model_flops,
  g.cpu_ns / 1e6                                                 AS cpu_ms,
  g.hw_flops / (g.union_hw_ns / 1e9 * (SELECT peak_flops FROM r)) AS hfu,
  g.model_bytes / (g.union_bytes_ns / 1e9 * (SELECT peak_bw FROM r)) AS mbu,
  g.hw_flops                                                     AS hw_flops,
  g.dram_bytes                                                   AS dram_bytes,
  g.dram_bytes / (g.union_dram_ns / 1e9 * (SELECT peak_bw FROM r)) AS dram_bw_util,
  g.hw_flops / nullif(g.dram_bytes, 0)                           AS ai_hw,
  g.union_ns / 1e6                                               AS union_ms,
  g.flops / (g.union_flops_ns / 1e9) * (SELECT native FROM r)   AS model_flops_per_s,
  g.hw_flops / (g.union_hw_ns / 1e9) * (SELECT native FROM r)   AS hw_flops_per_s,
  g.model_bytes / (g.union_bytes_ns / 1e9) * (SELECT native FROM r) AS model_bytes_per_s,
  CASE WHEN g.nd > 0 AND g.nl > 0 THEN 'mixed' WHEN g.nd > 0 THEN 'declared'
       WHEN g.nl > 0 THEN 'library' END                          AS flops_source,
  g.lib_flops                                                    AS lib_flops
FROM g
ORDER BY g.first_id;
