-- mfu database schema, version 4: programs without markers. Steps and
-- phases taken from functions and USDT probes (uprobes), the counter groups
-- read over time by the recorder (counts at probe boundaries are
-- interpolated from them, with an error bound), and recordings attached to
-- a running process. docs/schema.md describes every column; docs/probes.md
-- how probes become steps.

PRAGMA user_version = 4;

-- How the run was started: 'launch' (mfu-record ran the command) or
-- 'attach' (mfu-record -p PID joined a running process).
ALTER TABLE run ADD COLUMN mode TEXT NOT NULL DEFAULT 'launch';
-- Period of the recorder's counter readings (interval_reading), ns; NULL
-- when they were off (-I 0).
ALTER TABLE run ADD COLUMN interval_ns INTEGER;

-- How the counter columns of a step or phase were obtained:
--   exact         read by the marker library at each boundary (libmfu)
--   interpolated  a boundary came from a probe: the counts are interpolated
--                 in interval_reading at the boundary times; *_err bound the
--                 difference from the true count
ALTER TABLE step ADD COLUMN counts TEXT;
ALTER TABLE step ADD COLUMN cpu_ns_err INTEGER;   -- |cpu_ns - true| <= this (0: exact)
ALTER TABLE step ADD COLUMN hw_flops_err REAL;    -- |hw_flops - true| <= this
ALTER TABLE phase ADD COLUMN counts TEXT;
ALTER TABLE phase ADD COLUMN cpu_ns_err INTEGER;
ALTER TABLE phase ADD COLUMN hw_flops_err REAL;
ALTER TABLE step_counter ADD COLUMN err REAL;     -- bound on |value - true| (0: exact)
ALTER TABLE phase_counter ADD COLUMN err REAL;

-- The target's counter groups as the recorder read them every -I ms:
-- cumulative values since the start (all threads and child processes, as
-- in the markers' readings), with the group's time_enabled and
-- time_running (ns) for multiplex scaling. One row per counter and reading;
-- the readings of one time_ns were taken together.
CREATE TABLE interval_reading (
  time_ns      INTEGER NOT NULL,  -- CLOCK_MONOTONIC when the groups were read
  counter      INTEGER NOT NULL,  -- counter.id
  raw          INTEGER NOT NULL,  -- cumulative count as read
  time_enabled INTEGER NOT NULL,
  time_running INTEGER NOT NULL,
  PRIMARY KEY (time_ns, counter)
) WITHOUT ROWID;

-- The probe points of --step and --phase, one row per point, with where
-- they were placed and how often they fired.
CREATE TABLE probe (
  id       INTEGER PRIMARY KEY,
  role     TEXT NOT NULL,     -- step | phase
  name     TEXT,              -- the phase name (NULL for the step)
  spec     TEXT NOT NULL,     -- the SPEC as given on the command line
  boundary TEXT NOT NULL,     -- begin | end | each (sdt:P:N alone: ends one, begins the next)
  point    TEXT NOT NULL,     -- the point: [OBJECT:]FUNC, FUNC (return), sdt:P:N, py:...
  sites    INTEGER NOT NULL DEFAULT 0, -- places a uprobe was put (USDT probes can have several)
  paths    TEXT,              -- the files probed, one per line
  hits     INTEGER NOT NULL DEFAULT 0, -- times it fired on a followed thread
  status   TEXT NOT NULL,     -- placed | not_found | failed
  detail   TEXT               -- why not placed, or what to know
);
