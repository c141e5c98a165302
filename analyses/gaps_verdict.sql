-- The one-line verdict above the gaps section (at-sign-wrapped names stand for those sections' queries).
WITH g AS (SELECT kind, count(*) AS n, sum(dur_ms) AS ms FROM (@gaps@) GROUP BY kind),
st AS (SELECT sum(wall_ns) / 1e6 AS wall FROM step WHERE complete = 1),
big AS (SELECT "where", dur_ms FROM (@gaps@) WHERE kind = 'between_steps' ORDER BY dur_ms DESC LIMIT 1)
SELECT CASE
  WHEN (SELECT count(*) FROM sampling) = 0 THEN 'No sampling data in this run: off-CPU gaps are unknown.'
  WHEN (SELECT wall FROM st) IS NULL
  THEN 'No complete step: gaps are looked for inside and between steps (mfu-report --trace shows when the '
       || 'threads left the CPU over the whole run).'
  WHEN (SELECT sum(n) FROM g) IS NULL THEN 'No idle gap: the threads never left the CPU inside steps, and steps follow each other.'
  ELSE printf('%d blocked intervals (%.1f ms), %d preemptions (%.1f ms) inside steps; %d gaps between steps (%.1f ms)%s.',
    coalesce((SELECT n FROM g WHERE kind = 'blocked'), 0), coalesce((SELECT ms FROM g WHERE kind = 'blocked'), 0),
    coalesce((SELECT n FROM g WHERE kind = 'runnable'), 0), coalesce((SELECT ms FROM g WHERE kind = 'runnable'), 0),
    coalesce((SELECT n FROM g WHERE kind = 'between_steps'), 0), coalesce((SELECT ms FROM g WHERE kind = 'between_steps'), 0),
    CASE WHEN (SELECT dur_ms FROM big) >= 0.1
         THEN printf(', the longest %.1f ms%s', (SELECT dur_ms FROM big),
                     coalesce(' in ' || (SELECT "where" FROM big), ''))
         ELSE '' END)
END;
