-- events: every hardware and user (-e) event, per step: raw (the count as
-- read) and value (scaled by its group's time_enabled / time_running when
-- the kernel multiplexed the counters), per second of the step's wall time
-- (NULL for an emulated run, whose times are the emulator's: view run's
-- native), and hw_fraction, the share of the step the hardware groups were
-- counted.
-- Empty when the run had no hardware counters.
SELECT sc.step, c.name AS event, c.kind, sc.raw, sc.value,
       sc.value / (s.wall_ns / 1e9) * (SELECT native FROM run WHERE id = 1) AS per_s,
       s.hw_fraction
FROM step_counter sc
JOIN counter c ON c.id = sc.counter
JOIN step s ON s.step = sc.step
WHERE s.complete = 1
ORDER BY sc.step, c.id;
