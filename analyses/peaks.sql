-- peaks: every peak known for this run, spec and measured side by side, and
-- which one each utilization uses (used = 1: run.peak_flops for MFU/HFU at
-- run.dtype, run.peak_bw for MBU and DRAM bandwidth utilization). Measured
-- peaks come from mfu-calibrate's profile of this machine; ratio is
-- measured / spec for the same kind, dtype and scope. The rows of scope
-- 'choice' (the peak the run's --peak mode picks for each dtype, which
-- mfu-report --dtype reads) repeat one of these and are left out.
WITH r AS (SELECT dtype, peak_flops, peak_bw FROM run)
SELECT p.kind, p.dtype, p.scope, p.source, p.value,
       (SELECT p.value / s.value FROM peak s
         WHERE s.source = 'spec' AND s.kind = p.kind AND s.dtype IS p.dtype AND s.scope = p.scope
         LIMIT 1) AS ratio_to_spec,
       CASE WHEN p.scope = 'all' AND ((p.kind = 'flops' AND p.dtype = r.dtype AND p.value = r.peak_flops)
                                   OR (p.kind = 'bandwidth' AND p.value = r.peak_bw)) THEN 1 ELSE 0 END AS used,
       p.detail
FROM peak p CROSS JOIN r
WHERE p.scope <> 'choice'
ORDER BY p.kind DESC, p.dtype, p.scope DESC, p.source DESC;
