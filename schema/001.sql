-- mfu database schema, version 1.
-- Applied by mfu-record to a new database; mfu-report refuses a database
-- whose PRAGMA user_version is newer than the schema files it was built with.
-- Times are CLOCK_MONOTONIC nanoseconds (the clock the markers use) unless a
-- column says otherwise. docs/schema.md describes every column.

PRAGMA user_version = 1;

-- One row: what was run, where, and how it ended.
CREATE TABLE run (
  id              INTEGER PRIMARY KEY CHECK (id = 1),
  mfu_version     TEXT NOT NULL,
  command         TEXT NOT NULL,      -- JSON array of the target's argv
  cwd             TEXT,
  start_unix_ns   INTEGER NOT NULL,   -- wall-clock start (CLOCK_REALTIME)
  start_ns        INTEGER NOT NULL,   -- CLOCK_MONOTONIC at the target's exec
  end_ns          INTEGER,            -- CLOCK_MONOTONIC when the target ended
  host            TEXT,
  kernel          TEXT,               -- uname -r
  cpu_vendor      TEXT,               -- GenuineIntel, AuthenticAMD, ...
  cpu_family      INTEGER,
  cpu_model       INTEGER,
  cpu_stepping    INTEGER,
  cpu_name        TEXT,               -- brand string
  uarch           TEXT,               -- microarchitecture, e.g. sapphire_rapids
  isa             TEXT,               -- space-separated ISA features used for peaks
  nominal_hz      REAL,               -- nominal (base) core frequency, Hz
  nominal_hz_source TEXT,
  allowed_cpus    TEXT,               -- CPU list the target may run on, e.g. "0-3,8"
  ncpu_affinity   INTEGER,            -- CPUs in allowed_cpus
  cpu_quota       REAL,               -- cgroup CPU quota in CPUs, NULL if none
  ncpu            REAL,               -- CPUs used for peaks: min(affinity, quota)
  dtype           TEXT NOT NULL,      -- dtype of the MFU peak (fp32 by default)
  peak_flops      REAL,               -- FLOP/s used for MFU/HFU, NULL if unknown
  peak_flops_source TEXT,             -- spec | measured | user, with detail
  peak_bw         REAL,               -- bytes/s used for MBU, NULL if unknown
  peak_bw_source  TEXT,
  target_pid      INTEGER,
  exit_status     INTEGER,            -- the target's exit code, NULL if killed
  exit_signal     INTEGER,            -- the signal that killed it, else NULL
  lost_records    INTEGER NOT NULL DEFAULT 0, -- marker records lost (ring full or torn)
  state           TEXT NOT NULL       -- recording | complete | interrupted | failed
);

-- Every peak the machine model knows for this run (per dtype and scope), with
-- its source; the run table names the ones the utilizations use.
CREATE TABLE peak (
  kind    TEXT NOT NULL,   -- flops | bandwidth
  dtype   TEXT,            -- fp64, fp32, bf16, fp16; NULL for bandwidth
  scope   TEXT NOT NULL,   -- core (one core) | all (the allowed CPUs)
  value   REAL NOT NULL,   -- FLOP/s or bytes/s
  source  TEXT NOT NULL,   -- spec | measured | user
  detail  TEXT             -- how it was obtained (formula, table row, kernel)
);

-- The counters mfu-record tried to open, in group order; opened = 0 rows say
-- why not. total is the whole run's count (read after the target ended).
CREATE TABLE counter (
  id      INTEGER PRIMARY KEY,  -- position in the counter group, from 0
  name    TEXT NOT NULL,        -- task-clock, context-switches, cycles, ...
  kind    TEXT NOT NULL,        -- software | hardware
  unit    TEXT NOT NULL,        -- ns | count
  opened  INTEGER NOT NULL,     -- 1 if counting
  reason  TEXT,                 -- why it could not be opened
  encoding TEXT,                -- perf_event_attr type/config, e.g. "1:0x1"
  total   INTEGER,              -- whole-run value
  time_enabled INTEGER,
  time_running INTEGER
);

-- One row per step (mfu_step_begin .. mfu_step_end). Counter columns are the
-- differences of the process-wide counter group between the two boundaries:
-- the sums over all the target's threads. NULL means not counted.
CREATE TABLE step (
  step            INTEGER PRIMARY KEY, -- 0, 1, 2, ... in order of begin
  pid             INTEGER NOT NULL,
  tid             INTEGER NOT NULL,    -- the thread that began it
  end_tid         INTEGER,             -- the thread that ended it
  begin_ns        INTEGER NOT NULL,
  end_ns          INTEGER,             -- NULL if the step never ended
  wall_ns         INTEGER,             -- end_ns - begin_ns
  model_flops     REAL,                -- declared with mfu_step_model, NULL if none
  model_bytes     REAL,
  cpu_ns          INTEGER,             -- task-clock: CPU time of all threads
  ctx_switches    INTEGER,
  cpu_migrations  INTEGER,
  page_faults     INTEGER,
  cycles          INTEGER,
  instructions    INTEGER,
  hw_flops        REAL,                -- counted FLOPs, NULL without FP counters
  complete        INTEGER NOT NULL     -- 0: begun but never ended
);

-- One row per phase occurrence (mfu_phase_begin .. mfu_phase_end in one thread).
CREATE TABLE phase (
  id              INTEGER PRIMARY KEY,
  step            INTEGER,             -- the step open when the phase began, or NULL
  name            TEXT NOT NULL,
  pid             INTEGER NOT NULL,
  tid             INTEGER NOT NULL,
  depth           INTEGER NOT NULL,    -- 0 for an outermost phase
  parent          INTEGER,             -- enclosing phase id, or NULL
  begin_ns        INTEGER NOT NULL,
  end_ns          INTEGER,
  wall_ns         INTEGER,
  model_flops     REAL,                -- declared with mfu_phase_model
  model_bytes     REAL,
  cpu_ns          INTEGER,
  ctx_switches    INTEGER,
  cpu_migrations  INTEGER,
  page_faults     INTEGER,
  cycles          INTEGER,
  instructions    INTEGER,
  hw_flops        REAL,
  complete        INTEGER NOT NULL
);

-- Marker misuse and recording problems, one row each.
CREATE TABLE anomaly (
  id      INTEGER PRIMARY KEY,
  time_ns INTEGER,
  pid     INTEGER,
  tid     INTEGER,
  kind    TEXT NOT NULL,  -- step_end_without_begin, step_begin_while_open,
                          -- step_open_at_exit, phase_end_without_begin,
                          -- phase_end_mismatch, phase_open_at_exit,
                          -- name_truncated, bad_model_value, counter_read_failed
  step    INTEGER,
  detail  TEXT
);

-- What the recorder wants the reader to know (e.g. no hardware PMU).
CREATE TABLE note (
  id      INTEGER PRIMARY KEY,
  kind    TEXT NOT NULL,  -- missing_counters, ...
  text    TEXT NOT NULL
);

-- @deferred: created by mfu-record when the recording ends (indexes slow
-- down ingest; a database whose recorder was killed lacks them, and reads
-- the same, only slower).
CREATE INDEX IF NOT EXISTS phase_step ON phase(step);
CREATE INDEX IF NOT EXISTS phase_name ON phase(name);
