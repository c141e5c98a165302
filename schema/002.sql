-- mfu database schema, version 2: counted FLOPs by precision, multiplexing,
-- raw and scaled values of every hardware and user event, DRAM traffic.
-- Applied after 001.sql. docs/schema.md describes every column.

PRAGMA user_version = 2;

-- Counted FLOPs by precision (lane-weighted FP_ARITH events; NULL when not
-- counted). hw_flops (from 001) is their sum, with AMD's precision-blind
-- RETIRED_SSE_AVX_FLOPS in hw_flops_any. amx_ops counts AMX tile
-- operations, which are not FLOPs and are not in FP_ARITH.
ALTER TABLE step ADD COLUMN ref_cycles INTEGER;
ALTER TABLE step ADD COLUMN hw_flops_fp64 REAL;
ALTER TABLE step ADD COLUMN hw_flops_fp32 REAL;
ALTER TABLE step ADD COLUMN hw_flops_fp16 REAL;
ALTER TABLE step ADD COLUMN hw_flops_any REAL;
ALTER TABLE step ADD COLUMN amx_ops REAL;
-- The smallest share of the step's time that a hardware counter group was
-- counting (1: no multiplexing; values were scaled by its inverse);
-- NULL without hardware counters.
ALTER TABLE step ADD COLUMN hw_fraction REAL;
-- DRAM traffic from the uncore memory controllers, system-wide, attributed
-- to the step by the counts read at its boundaries or interpolated.
ALTER TABLE step ADD COLUMN dram_read_bytes REAL;
ALTER TABLE step ADD COLUMN dram_write_bytes REAL;

ALTER TABLE phase ADD COLUMN ref_cycles INTEGER;
ALTER TABLE phase ADD COLUMN hw_flops_fp64 REAL;
ALTER TABLE phase ADD COLUMN hw_flops_fp32 REAL;
ALTER TABLE phase ADD COLUMN hw_flops_fp16 REAL;
ALTER TABLE phase ADD COLUMN hw_flops_any REAL;
ALTER TABLE phase ADD COLUMN amx_ops REAL;
ALTER TABLE phase ADD COLUMN hw_fraction REAL;
ALTER TABLE phase ADD COLUMN dram_read_bytes REAL;
ALTER TABLE phase ADD COLUMN dram_write_bytes REAL;

ALTER TABLE counter ADD COLUMN grp INTEGER;     -- counter group (0: software)
ALTER TABLE counter ADD COLUMN weight REAL;     -- FLOPs per event (lanes), NULL if not a FLOP event
ALTER TABLE counter ADD COLUMN col TEXT;        -- the step/phase column it feeds, NULL for user events
ALTER TABLE counter ADD COLUMN pmu TEXT;        -- libpfm4 PMU name of hardware events

-- Every hardware and user (-e) event per step and per phase: raw is the
-- count as read, value is raw scaled by time_enabled/time_running of its
-- group (equal when not multiplexed).
CREATE TABLE step_counter (
  step    INTEGER NOT NULL,
  counter INTEGER NOT NULL,
  raw     INTEGER NOT NULL,
  value   REAL NOT NULL,
  PRIMARY KEY (step, counter)
) WITHOUT ROWID;

CREATE TABLE phase_counter (
  phase   INTEGER NOT NULL,
  counter INTEGER NOT NULL,
  raw     INTEGER NOT NULL,
  value   REAL NOT NULL,
  PRIMARY KEY (phase, counter)
) WITHOUT ROWID;
