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
--   mfu           sum(model_flops) / (sum(wall) * run.peak_flops) over the
--                 occurrences that declared model FLOPs; NULL if none did or
--                 no peak is known. hfu (hw_flops) and mbu (model_bytes /
--                 run.peak_bw) likewise.
--   model_flops   their sum, NULL if none declared any
--   cpu_ms        CPU time of all the process's threads during the
--                 occurrences (task-clock), NULL if not counted
--
-- Run by hand: sqlite3 -header -column run.sqlite < analyses/phases.sql
WITH
r AS (SELECT peak_flops, peak_bw FROM run WHERE id = 1),
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
-- @computed: g AS (SELECT * FROM mfu_phase_stats)
g AS MATERIALIZED (
  WITH
  agg AS (
    SELECT
      name,
      COUNT(*)                                                 AS n,
      MIN(id)                                                  AS first_id,
      SUM(wall_ns)                                             AS total_ns,
      SUM(model_flops)                                         AS model_flops,
      SUM(CASE WHEN model_flops IS NOT NULL THEN wall_ns END)  AS model_flops_ns,
      SUM(hw_flops)                                            AS hw_flops,
      SUM(CASE WHEN hw_flops IS NOT NULL THEN wall_ns END)     AS hw_flops_ns,
      SUM(model_bytes)                                         AS model_bytes,
      SUM(CASE WHEN model_bytes IS NOT NULL THEN wall_ns END)  AS model_bytes_ns,
      SUM(cpu_ns)                                              AS cpu_ns,
      SUM(coalesce(dram_bytes, dram_read_bytes + dram_write_bytes)) AS dram_bytes,
      SUM(CASE WHEN coalesce(dram_bytes, dram_read_bytes + dram_write_bytes) IS NOT NULL
               THEN wall_ns END)                               AS dram_ns
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
  )
  SELECT agg.*, pct.p50_ns, pct.p95_ns
  FROM agg LEFT JOIN pct ON pct.first_id = agg.first_id
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
  g.model_flops / (g.model_flops_ns / 1e9 * (SELECT peak_flops FROM r)) AS mfu,
  g.model_flops                                                  AS model_flops,
  g.cpu_ns / 1e6                                                 AS cpu_ms,
  g.hw_flops / (g.hw_flops_ns / 1e9 * (SELECT peak_flops FROM r)) AS hfu,
  g.model_bytes / (g.model_bytes_ns / 1e9 * (SELECT peak_bw FROM r)) AS mbu,
  g.hw_flops                                                     AS hw_flops,
  g.dram_bytes                                                   AS dram_bytes,
  g.dram_bytes / (g.dram_ns / 1e9 * (SELECT peak_bw FROM r))     AS dram_bw_util,
  g.hw_flops / nullif(g.dram_bytes, 0)                           AS ai_hw
FROM g
ORDER BY g.first_id;
