-- The one-line verdict above the dispatch section (at-sign-wrapped names stand for those sections' queries).
WITH d AS (SELECT * FROM (@dispatch@)),
tot AS (SELECT sum(samples) AS n, sum(CASE WHEN class = 'dispatch' THEN samples END) AS nd FROM d),
top AS (SELECT phase, symbol, share FROM d WHERE class = 'dispatch' ORDER BY est_ms DESC LIMIT 1)
SELECT CASE
  WHEN (SELECT count(*) FROM sample WHERE kind = 0) = 0 THEN 'No cpu-clock samples in this run (-F 0, or sampling unavailable): dispatch overhead is unknown.'
  WHEN top.symbol IS NULL THEN 'No dispatch samples: on-CPU time is all in compute kernels or the kernel.'
  ELSE printf('The top dispatch function is %s() in phase %s: %.0f%% of that phase''s on-CPU samples.', top.symbol, top.phase, 100.0 * top.share)
END
FROM tot LEFT JOIN top;
