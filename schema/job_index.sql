-- The indexes of a merged database (schema/job.sql), made once the ranks'
-- rows are copied in (faster than keeping them up to date row by row).
CREATE UNIQUE INDEX main.run_rank ON run(rank);
CREATE INDEX main.step_rank ON step(rank, step);
CREATE INDEX main.step_step ON step(step, rank);
CREATE INDEX main.phase_rank_step ON phase(rank, step);
CREATE INDEX main.phase_rank_name ON phase(rank, name);
