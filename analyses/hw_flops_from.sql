-- hw_flops_from: the views of mfu-report --hw-flops-from FILE, which gives a
-- native run the counted FLOPs of an emulated (or PMU-counted) run of the
-- same program, matched by step index. FILE is attached as hwf and named in
-- mfu_option.hw_flops_from; mfu-report --sql --hw-flops-from FILE prints
-- the ATTACH and the option above this file, and analyses/views.sql after
-- it reads these views in place of the stored steps and phases.
--
-- The counted-FLOP columns (hw_flops, hw_flops_fp64/fp32/fp16/any,
-- hw_fraction) come from FILE; NULL where nothing matches.

-- A step's counts are known only when both steps are complete.
CREATE TEMP VIEW mfu_hw_step AS
SELECT s.step, s.pid, s.tid, s.end_tid, s.begin_ns, s.end_ns, s.wall_ns, s.model_flops, s.model_bytes,
       s.cpu_ns, s.ctx_switches, s.cpu_migrations, s.page_faults, s.cycles, s.instructions,
       e.hw_flops AS hw_flops, s.complete, s.ref_cycles, e.hw_flops_fp64 AS hw_flops_fp64,
       e.hw_flops_fp32 AS hw_flops_fp32, e.hw_flops_fp16 AS hw_flops_fp16, e.hw_flops_any AS hw_flops_any,
       s.amx_ops, e.hw_fraction AS hw_fraction, s.dram_read_bytes, s.dram_write_bytes, s.dram_bytes,
       s.counts, s.cpu_ns_err, s.hw_flops_err, s.lib_flops, s.lib_flops_fp64, s.lib_flops_fp32,
       s.lib_flops_bf16, s.lib_flops_fp16, s.lib_ops_int8, s.lib_calls, s.lib_calls_unknown, s.flops,
       s.flops_source
FROM main.step AS s
LEFT JOIN hwf.step AS e ON e.step = s.step AND e.complete = 1 AND s.complete = 1;

-- A phase matches the one of the same name and occurrence (in begin order)
-- in the step of the same index, or outside steps.
CREATE TEMP VIEW mfu_hw_phase AS
WITH p AS (SELECT *, row_number() OVER (PARTITION BY step, name ORDER BY begin_ns, id) AS mfu_nth
           FROM main.phase),
e AS (SELECT *, row_number() OVER (PARTITION BY step, name ORDER BY begin_ns, id) AS mfu_nth
      FROM hwf.phase)
SELECT p.id, p.step, p.name, p.pid, p.tid, p.depth, p.parent, p.begin_ns, p.end_ns, p.wall_ns,
       p.model_flops, p.model_bytes, p.cpu_ns, p.ctx_switches, p.cpu_migrations, p.page_faults, p.cycles,
       p.instructions, e.hw_flops AS hw_flops, p.complete, p.ref_cycles, e.hw_flops_fp64 AS hw_flops_fp64,
       e.hw_flops_fp32 AS hw_flops_fp32, e.hw_flops_fp16 AS hw_flops_fp16, e.hw_flops_any AS hw_flops_any,
       p.amx_ops, e.hw_fraction AS hw_fraction, p.dram_read_bytes, p.dram_write_bytes, p.dram_bytes,
       p.counts, p.cpu_ns_err, p.hw_flops_err, p.lib_flops, p.lib_flops_fp64, p.lib_flops_fp32,
       p.lib_flops_bf16, p.lib_flops_fp16, p.lib_ops_int8, p.lib_calls, p.lib_calls_unknown, p.flops,
       p.flops_source
FROM p
LEFT JOIN e ON e.step IS p.step AND e.name = p.name AND e.mfu_nth = p.mfu_nth
           AND e.complete = 1 AND p.complete = 1;

-- The notes (ids above the recorder's): where the counts come from, what
-- did not match, and this run's own "counters missing" note saying that
-- FILE gives what it lacks.
CREATE TEMP VIEW mfu_hw_note AS
WITH n AS (SELECT
  (SELECT hw_flops_from FROM mfu_option)                                           AS path,
  (SELECT coalesce(emulated, 'counted by its PMU') FROM hwf.run WHERE id = 1)      AS engine,
  (SELECT count(*) FROM main.step WHERE complete = 1)                              AS steps,
  (SELECT count(*) FROM mfu_hw_step WHERE complete = 1 AND hw_flops IS NOT NULL)   AS matched,
  (SELECT count(*) FROM hwf.step WHERE complete = 1)                               AS theirs,
  (SELECT count(*) FROM main.step WHERE complete = 1 AND hw_flops IS NOT NULL)     AS own,
  (SELECT count(*) FROM main.phase WHERE complete = 1)                             AS phases,
  (SELECT count(*) FROM mfu_hw_phase WHERE complete = 1 AND hw_flops IS NOT NULL)  AS pmatched)
SELECT id, kind,
       text || ' (in this run: --hw-flops-from gives the counted FLOPs and HFU of the steps and phases '
            || 'it matches)' AS text
FROM main.note
WHERE kind = 'missing_counters' AND NOT (SELECT quiet FROM mfu_option)
UNION ALL
SELECT 1000000000, 'hw_flops_from',
       'counted FLOPs (hw_flops, hfu) come from ' || n.path || ' (' || n.engine || '), matched by step '
       || 'index: ' || n.matched || ' of this run''s ' || n.steps || ' complete steps have them'
       || CASE WHEN n.matched < n.steps THEN ' (the others'' hfu is unknown)' ELSE '' END || '; '
       || CASE WHEN n.own > 0 THEN 'they replace the FLOPs this run counted itself'
               ELSE 'cycles, instructions and IPC stay this run''s own' END
       || CASE WHEN n.theirs > n.steps THEN ' (that run has ' || n.theirs || ' complete steps: those '
               || 'beyond this run''s are not used)' ELSE '' END
FROM n
UNION ALL
SELECT 1000000001, 'hw_flops_from',
       (n.phases - n.pmatched) || ' of this run''s ' || n.phases || ' complete phases have no match in '
       || n.path || ' (no phase of the same name and occurrence in the step of the same index): their '
       || 'hfu is unknown'
FROM n WHERE n.phases > n.pmatched
UNION ALL
-- the same program with other arguments (fewer steps, say) is the usual
-- case, but other arguments can mean other work per step (a Python
-- interpreter running another script): say so
SELECT 1000000002, 'hw_flops_from',
       'the two runs'' commands differ (this one: ' || m.command || '; ' || n.path || ': ' || h.command
       || '): the counts are right for this run''s steps only if each step does the same work in both'
FROM n, main.run AS m, hwf.run AS h WHERE m.id = 1 AND h.id = 1 AND m.command <> h.command;
