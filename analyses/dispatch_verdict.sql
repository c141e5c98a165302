-- The one-line verdict above the dispatch section (at-sign-wrapped names stand for those sections' queries).
WITH d AS (SELECT * FROM (@dispatch@)),
tot AS (SELECT sum(samples) AS n, sum(CASE WHEN class = 'dispatch' THEN samples END) AS nd FROM d),
-- the phases the program marked first: start-up (imports, the loader)
-- and the time between them are (no phase), named only when no phase has
-- dispatch samples
top AS (SELECT phase, symbol, share, samples, via_process FROM d WHERE class = 'dispatch'
        ORDER BY phase = '(no phase)', est_ms DESC LIMIT 1),
-- the program's own code to name with --compute (not a libm helper whose
-- caller was lost)
unc AS (SELECT phase, symbol, share FROM d WHERE class = 'unclassified'
          AND EXISTS (SELECT 1 FROM symbol sy WHERE sy.name = d.symbol AND sy.dso IS d.dso AND sy.class = 'user')
        ORDER BY est_ms DESC LIMIT 1)
SELECT CASE
  WHEN (SELECT count(*) FROM sample WHERE kind = 0) = 0 THEN 'No cpu-clock samples in this run (-F 0, or sampling unavailable): dispatch overhead is unknown.'
  WHEN top.symbol IS NULL THEN 'No dispatch samples: no on-CPU time in an interpreter, framework dispatch, allocator, copy or lock.'
  -- a share under 10% keeps its digits: 0.39% is not "0%"
  ELSE printf('The top dispatch function is %s() %s: ' || CASE WHEN top.share < 0.01 THEN '%.2f' WHEN top.share < 0.1 THEN '%.1f' ELSE '%.0f' END
              || '%% of %s on-CPU samples', top.symbol,
              CASE WHEN top.phase = '(no phase)' THEN 'outside phases' ELSE 'in phase ' || top.phase END,
              100.0 * top.share, CASE WHEN top.phase = '(no phase)' THEN 'the' ELSE 'that phase''s' END)
       || CASE WHEN top.phase = '(no phase)' THEN ' there' ELSE '' END
       || CASE WHEN top.via_process > 0
               THEN printf(' (%.0f%% of them on threads with no phase of their own, placed by the marking thread''s phases)',
                           100.0 * top.via_process / top.samples) ELSE '' END || '.'
END
|| coalesce(CASE WHEN unc.share > 0.05 THEN printf(' The top unclassified function is %s() in phase %s (%.0f%%): if it is a compute kernel, name it with --compute ''REGEX''.', unc.symbol, unc.phase, 100.0 * unc.share) END, '')
FROM tot LEFT JOIN top LEFT JOIN unc;
