-- mfu database schema, version 5: peaks for the target's own CPUs. FLOP
-- peaks count physical cores (SMT siblings once); the CPU set is the
-- target's (its affinity and cgroup quota, read once it runs), not the
-- recorder's. docs/schema.md describes every column; docs/machine-model.md
-- how the peaks are chosen.

PRAGMA user_version = 5;

-- Physical cores the FLOP peaks are for: min(cores in allowed_cpus, cgroup
-- quota). ncpu (logical CPUs) stays the basis of cpu_util.
ALTER TABLE run ADD COLUMN ncores REAL;
-- The core clock mfu-calibrate measured on this machine (Hz), NULL if no
-- calibration applies; nominal_hz is the spec frequency the spec peaks use.
ALTER TABLE run ADD COLUMN clock_hz REAL;
-- Whose CPU set the peaks are for and when it was read: e.g. "target at its
-- first step", "target at its end", "attached process", "recorder".
ALTER TABLE run ADD COLUMN cpus_source TEXT;
-- How the peaks were chosen: auto (the higher of spec and measured), spec,
-- measured, or user.
ALTER TABLE run ADD COLUMN peak_mode TEXT;

-- The last line of defence against impossible rows (the recorder checks
-- first: boundaries out of order become incomplete intervals with an
-- anomaly, bad counter deltas NULL): no negative duration, no negative
-- count, on insert or update.
CREATE TRIGGER step_sane_insert BEFORE INSERT ON step
WHEN NEW.wall_ns < 0 OR NEW.end_ns < NEW.begin_ns OR NEW.cpu_ns < 0 OR NEW.ctx_switches < 0
  OR NEW.cpu_migrations < 0 OR NEW.page_faults < 0 OR NEW.cycles < 0 OR NEW.instructions < 0
  OR NEW.hw_flops < 0 OR NEW.model_flops < 0 OR NEW.model_bytes < 0
BEGIN SELECT RAISE(ABORT, 'step row with a negative duration or count'); END;
CREATE TRIGGER step_sane_update BEFORE UPDATE ON step
WHEN NEW.wall_ns < 0 OR NEW.end_ns < NEW.begin_ns OR NEW.cpu_ns < 0 OR NEW.ctx_switches < 0
  OR NEW.cpu_migrations < 0 OR NEW.page_faults < 0 OR NEW.cycles < 0 OR NEW.instructions < 0
  OR NEW.hw_flops < 0 OR NEW.model_flops < 0 OR NEW.model_bytes < 0
BEGIN SELECT RAISE(ABORT, 'step row with a negative duration or count'); END;
CREATE TRIGGER phase_sane_insert BEFORE INSERT ON phase
WHEN NEW.wall_ns < 0 OR NEW.end_ns < NEW.begin_ns OR NEW.cpu_ns < 0 OR NEW.ctx_switches < 0
  OR NEW.cpu_migrations < 0 OR NEW.page_faults < 0 OR NEW.cycles < 0 OR NEW.instructions < 0
  OR NEW.hw_flops < 0 OR NEW.model_flops < 0 OR NEW.model_bytes < 0
BEGIN SELECT RAISE(ABORT, 'phase row with a negative duration or count'); END;
CREATE TRIGGER phase_sane_update BEFORE UPDATE ON phase
WHEN NEW.wall_ns < 0 OR NEW.end_ns < NEW.begin_ns OR NEW.cpu_ns < 0 OR NEW.ctx_switches < 0
  OR NEW.cpu_migrations < 0 OR NEW.page_faults < 0 OR NEW.cycles < 0 OR NEW.instructions < 0
  OR NEW.hw_flops < 0 OR NEW.model_flops < 0 OR NEW.model_bytes < 0
BEGIN SELECT RAISE(ABORT, 'phase row with a negative duration or count'); END;
