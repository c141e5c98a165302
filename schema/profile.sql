-- The machine profile (~/.cache/mfu/profile-HOST.sqlite): what
-- mfu-calibrate measured on this host, which mfu-record reads for its
-- peaks (docs/calibrate.md). Format 3; a profile of format 2 is read and
-- rewritten as 3 (src/common/profile.c). Compiled into the programs
-- (tools/embed.py); application_id 1835431280 is 'mfup'
-- (PROFILE_APPLICATION_ID).
PRAGMA application_id = 1835431280;  -- PROFILE_APPLICATION_ID, 'mfup'
PRAGMA user_version = 3;
-- One row: the machine the measurements belong to, and the CPU set of
-- its latest calibration.
CREATE TABLE machine (
  id           INTEGER PRIMARY KEY CHECK (id = 1),
  vendor       TEXT NOT NULL,
  family       INTEGER NOT NULL,
  model        INTEGER NOT NULL,
  stepping     INTEGER NOT NULL,
  cpu_name     TEXT NOT NULL,
  uarch        TEXT NOT NULL,
  isa          TEXT NOT NULL,  -- machine_isa_string()
  allowed_cpus TEXT NOT NULL,  -- e.g. 0-3,8
  ncpu         REAL NOT NULL,  -- min(affinity, cgroup quota)
  nominal_hz   REAL,
  kernel       TEXT,  -- uname -r
  date         TEXT NOT NULL,  -- UTC, ISO 8601
  mfu_version  TEXT NOT NULL,
  host         TEXT NOT NULL  -- the host name: one profile per host
);
-- Each mfu-calibrate that saved figures still in the profile (and the
-- latest, whatever it saved): when, on which CPUs, under what load,
-- and what it found disturbed.
CREATE TABLE calibration (
  id           INTEGER PRIMARY KEY,
  unix_s       INTEGER NOT NULL,
  date         TEXT NOT NULL,  -- UTC, ISO 8601
  cpus         TEXT NOT NULL,
  ncpu         REAL NOT NULL,
  loadavg      REAL,  -- the highest 1-minute load average seen
  measurements INTEGER NOT NULL,
  disturbed    INTEGER NOT NULL,
  kept         INTEGER NOT NULL,  -- disturbed figures not saved: earlier ones kept
  lowest_share REAL,
  kept_since   INTEGER,  -- the oldest earlier figure kept (unix s)
  mfu_version  TEXT NOT NULL,
  kernel       TEXT
);
CREATE TABLE measurement (
  kind     TEXT NOT NULL,  -- flops | bandwidth | clock
  dtype    TEXT,  -- NULL for bandwidth
  scope    TEXT NOT NULL,  -- core | all
  kernel   TEXT NOT NULL,
  value    REAL NOT NULL,  -- FLOP/s or bytes/s
  best     INTEGER NOT NULL,
  detail   TEXT,
  measured_unix_s INTEGER NOT NULL,
  cpus     TEXT NOT NULL,  -- the calibration's CPU set
  ncpu     REAL NOT NULL,
  threads  INTEGER NOT NULL,  -- 1 for core, the set's CPUs for all
  cpu_share REAL,  -- lowest thread CPU time / wall time
  loadavg  REAL,  -- 1-minute load average when measured
  disturbed INTEGER NOT NULL,  -- 1: another task shared the CPUs
  calibration INTEGER  -- calibration.id
);
