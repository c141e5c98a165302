-- job_verdict: the line above the job summary for people: the common
-- steps, the slowest rank, the stragglers and the job MFU (after a word
-- that the ranks were emulated, if they were); without common steps, the
-- ranks' whole-run library FLOPs and run MFU where known. The at-sign-
-- wrapped name stands for analyses/job.sql.
SELECT CASE WHEN EXISTS (SELECT 1 FROM run WHERE emulated IS NOT NULL)
            THEN 'Emulated ranks (their times are the emulator''s): ' ELSE '' END ||
       CASE WHEN j.steps IS NULL OR j.steps = 0 THEN
         j.ranks || CASE WHEN j.ranks = 1 THEN ' rank' ELSE ' ranks' END
         || ', no step completed by every rank: nothing to compare'
         || CASE WHEN j.run_mfu IS NOT NULL
                 THEN '; over the whole run (first exec to last exit) their library calls did '
                      || printf('%.4g', j.run_lib_flops / 1e9) || ' GFLOP: run MFU '
                      || CASE WHEN j.run_mfu > 100 THEN 'impossible (above 10000%)' ELSE printf('%.2f%%', 100 * j.run_mfu) END
                      || ' of the job''s peak'
                 ELSE '' END || '.'
       ELSE
         j.ranks || CASE WHEN j.ranks = 1 THEN ' rank, ' ELSE ' ranks, ' END
         || j.steps || CASE WHEN j.steps = 1 THEN ' common step' ELSE ' common steps' END
         || ': the slowest rank was ' || j.slowest_rank || ' (in ' || j.slowest_steps || ' of ' || j.steps || ')'
         || CASE WHEN j.stragglers IS NULL
                 THEN '; no straggler (no rank more than ' || printf('%g', 100 * j.straggler_threshold)
                      || '% above the median step time)'
                 ELSE '; stragglers (more than ' || printf('%g', 100 * j.straggler_threshold)
                      || '% above the median step time), rank (steps): ' || j.stragglers END
         || CASE WHEN j.job_mfu IS NOT NULL
                 THEN '; job MFU ' || CASE WHEN j.job_mfu > 100 THEN 'impossible (above 10000%)' ELSE printf('%.2f%%', 100 * j.job_mfu) END
                      || CASE WHEN j.mfu IS NOT NULL
                              THEN ' (' || CASE WHEN j.mfu > 100 THEN 'impossible' ELSE printf('%.2f%%', 100 * j.mfu) END || ' at each rank''s own pace)'
                              ELSE '' END
                 ELSE '' END
         || '.'
       END
FROM (@job@) AS j;
