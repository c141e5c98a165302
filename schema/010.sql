-- mfu database schema, version 10: every table and column in one file.
-- mfu-record applies it to a new database; mfu-report refuses a database
-- whose PRAGMA user_version is older or newer than this file (no release has
-- promised migrations yet: when one does, each released version gets its
-- own file and the next one migrates from it).
-- Times are CLOCK_MONOTONIC nanoseconds (the clock the markers use) unless a
-- column says otherwise. docs/schema.md describes every column.

PRAGMA user_version = 10;

-- ---- the run ----------------------------------------------------------

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
  ncpu            REAL,               -- CPUs: min(affinity, quota), the basis of cpu_util
  dtype           TEXT NOT NULL,      -- dtype of the MFU peak (fp32 by default)
  peak_flops      REAL,               -- FLOP/s used for MFU/HFU, NULL if unknown
  peak_flops_source TEXT,             -- spec | measured | user, with detail
  peak_bw         REAL,               -- bytes/s used for MBU, NULL if unknown
  peak_bw_source  TEXT,
  target_pid      INTEGER,
  exit_status     INTEGER,            -- the target's exit code, NULL if killed
  exit_signal     INTEGER,            -- the signal that killed it, else NULL
  lost_records    INTEGER NOT NULL DEFAULT 0, -- marker records lost (ring full or torn)
  -- Marker records that reached the recorder (read from the ring; a
  -- thread's loss notices are not counted): marker_records + lost_records
  -- is every record the markers wrote or tried to. NULL while recording,
  -- and in a database whose recorder failed or was killed.
  marker_records  INTEGER,
  state           TEXT NOT NULL,      -- recording | complete | interrupted | failed | detached
  -- How the run was started: 'launch' (mfu-record ran the command) or
  -- 'attach' (mfu-record -p PID joined a running process).
  mode            TEXT NOT NULL DEFAULT 'launch',
  -- Period of the recorder's counter readings (interval_reading), ns; NULL
  -- when they were off (-I 0).
  interval_ns     INTEGER,
  -- Physical cores the FLOP peaks are for: min(cores in allowed_cpus,
  -- cgroup quota); SMT siblings count once. ncpu (logical CPUs) stays the
  -- basis of cpu_util.
  ncores          REAL,
  -- The core clock mfu-calibrate measured on this machine (Hz), NULL if no
  -- calibration applies; nominal_hz is the spec frequency the spec peaks use.
  clock_hz        REAL,
  -- Whose CPU set the peaks are for and when it was read: e.g. "target at
  -- its first step", "target at its end", "attached process", "recorder".
  cpus_source     TEXT,
  -- How the peaks were chosen: auto (the higher of spec and measured),
  -- spec, measured, or user.
  peak_mode       TEXT,
  -- Library-call FLOP counting (libmfu-libflops.so preloaded into the
  -- target): 'on' (some process of the target loaded it), 'off'
  -- (--no-lib-flops), 'unavailable' (attached with -p, or no process loaded
  -- it: a static or setuid program, LD_PRELOAD cleared); a note says why.
  lib_counting    TEXT CHECK (lib_counting IN ('on', 'off', 'unavailable')),
  -- The run's place in an MPI or Slurm job (mfu-record started by mpirun
  -- or srun), NULL outside one: the rank, the number of ranks, the rank
  -- and number of ranks on this node, the job id, and the variable the
  -- rank came from (OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID).
  -- rank_shared = 1: the node's ranks ran unbound on all of its CPUs, and
  -- ncpu and the peaks are this rank's share (1 / local_size) of the node.
  rank            INTEGER,
  world_size      INTEGER,
  local_rank      INTEGER,
  local_size      INTEGER,
  job_id          TEXT,
  rank_source     TEXT,
  rank_shared     INTEGER,
  -- mfu-record --emulate: the engine that counted the FP operations (e.g.
  -- "valgrind-3.19.0 --tool=mfufp"); NULL for a native run. An emulated
  -- run's times are the emulator's (2 to 1,000+ times the program's own), so
  -- mfu-report shows its counts, not its speed: no MFU, HFU or MBU.
  emulated        TEXT,
  -- The whole run's library calls (library-call counting: every process
  -- of the target, from its exec to its end, steps or no steps), read by
  -- the recorder from the counting library's counters once the target
  -- ended: lib_flops is the sum over precisions (int8 GEMMs add integer
  -- operations), as in step. NULL when calls were not counted (lib_counting
  -- is not 'on', or the recording did not finish), 0 when they were and
  -- none was made. The report's view run_flops (analyses/views.sql) turns
  -- them into rates and MFU.
  lib_flops       INTEGER CHECK (lib_flops >= 0),
  lib_flops_fp64  INTEGER CHECK (lib_flops_fp64 >= 0),
  lib_flops_fp32  INTEGER CHECK (lib_flops_fp32 >= 0),
  lib_flops_bf16  INTEGER CHECK (lib_flops_bf16 >= 0),
  lib_flops_fp16  INTEGER CHECK (lib_flops_fp16 >= 0),
  lib_ops_int8    INTEGER CHECK (lib_ops_int8 >= 0),
  lib_calls       INTEGER CHECK (lib_calls >= 0),
  -- calls among lib_calls of functions whose FLOPs are unknown (iterative
  -- LAPACK drivers, oneDNN primitives of kinds not counted): above 0, the
  -- lib_flops columns count the other calls only (partial), and are NULL
  -- when nothing else was counted
  lib_calls_unknown INTEGER CHECK (lib_calls_unknown >= 0),
  -- What --step can name in the launched executable (for the advice of a
  -- run without steps): exe_functions 1 when its symbol tables name
  -- functions it defines (.symtab, its debug file's, exported .dynsym
  -- ones), 0 when stripped (--step FUNC cannot find them); exe_usdt its
  -- USDT probes (--step sdt:PROVIDER:NAME). NULL: not looked at (attached,
  -- not an ELF file).
  exe_functions   INTEGER,
  exe_usdt        INTEGER
);

-- Every peak the machine model knows for this run (per dtype and scope), with
-- its source; the run table names the ones the utilizations use.
CREATE TABLE peak (
  kind    TEXT NOT NULL,   -- flops | bandwidth
  dtype   TEXT,            -- fp64, fp32, bf16, fp16, int8; NULL for bandwidth
  scope   TEXT NOT NULL,   -- core (one core) | all (the allowed CPUs) | machine
                           -- (bandwidth of a CPU set holding them; detail "CPUs 0-1 ...")
  value   REAL NOT NULL,   -- FLOP/s (int8: op/s) or bytes/s
  source  TEXT NOT NULL,   -- spec | measured | user
  detail  TEXT             -- how it was obtained (formula, table row, kernel)
);

-- The counters mfu-record tried to open, in group order; opened = 0 rows say
-- why not. total is the whole run's count (read after the target ended).
CREATE TABLE counter (
  id      INTEGER PRIMARY KEY,  -- position in the counter groups, from 0
  name    TEXT NOT NULL,        -- task-clock, context-switches, cycles, ...
  kind    TEXT NOT NULL,        -- software | hardware | user | emulated
  unit    TEXT NOT NULL,        -- ns | count
  opened  INTEGER NOT NULL,     -- 1 if counting
  reason  TEXT,                 -- why it could not be opened
  encoding TEXT,                -- perf_event_attr type/config, e.g. "1:0x1"
  total   INTEGER,              -- whole-run value
  time_enabled INTEGER,
  time_running INTEGER,
  grp     INTEGER,              -- counter group (0: software)
  weight  REAL,                 -- FLOPs per event (lanes), NULL if not a FLOP event
  col     TEXT,                 -- the step/phase column it feeds, NULL for user events
  pmu     TEXT                  -- libpfm4 PMU name of hardware events
);

-- What the recorder wants the reader to know (e.g. no hardware PMU).
CREATE TABLE note (
  id      INTEGER PRIMARY KEY,
  kind    TEXT NOT NULL,  -- missing_counters, no_steps, step_source, ...
  text    TEXT NOT NULL
);

-- ---- steps and phases -------------------------------------------------
--
-- Counter columns are the differences of the process-wide counter groups
-- between the two boundaries: the sums over all the target's threads. NULL
-- means not counted (or unknown). No row can hold a negative duration or
-- count: the recorder turns boundaries out of order into incomplete rows
-- with an anomaly and bad counter deltas into NULL, and these CHECKs are the
-- last line of defence.

-- One row per step (mfu_step_begin .. mfu_step_end, or a probe's).
CREATE TABLE step (
  step            INTEGER PRIMARY KEY, -- 0, 1, 2, ... in order of begin
  pid             INTEGER NOT NULL,
  tid             INTEGER NOT NULL,    -- the thread that began it
  end_tid         INTEGER,             -- the thread that ended it
  begin_ns        INTEGER NOT NULL,
  end_ns          INTEGER CHECK (end_ns >= begin_ns), -- NULL if the step never ended
  wall_ns         INTEGER CHECK (wall_ns >= 0),       -- end_ns - begin_ns
  model_flops     REAL CHECK (model_flops >= 0),      -- declared with mfu_step_model, NULL if none
  model_bytes     REAL CHECK (model_bytes >= 0),
  cpu_ns          INTEGER CHECK (cpu_ns >= 0),        -- task-clock: CPU time of all threads
  ctx_switches    INTEGER CHECK (ctx_switches >= 0),
  cpu_migrations  INTEGER CHECK (cpu_migrations >= 0),
  page_faults     INTEGER CHECK (page_faults >= 0),
  cycles          INTEGER CHECK (cycles >= 0),
  instructions    INTEGER CHECK (instructions >= 0),
  hw_flops        REAL CHECK (hw_flops >= 0),         -- counted FLOPs, NULL without FP counters
  complete        INTEGER NOT NULL,    -- 0: begun but never ended
  -- Counted FLOPs by precision (lane-weighted FP_ARITH events; NULL when
  -- not counted). hw_flops is their sum, with AMD's precision-blind
  -- RETIRED_SSE_AVX_FLOPS in hw_flops_any. amx_ops counts AMX tile
  -- operations, which are not FLOPs and are not in FP_ARITH.
  ref_cycles      INTEGER,
  hw_flops_fp64   REAL,
  hw_flops_fp32   REAL,
  hw_flops_fp16   REAL,
  hw_flops_any    REAL,
  amx_ops         REAL,
  -- The smallest share of the step's time that a hardware counter group
  -- was counting (1: no multiplexing; values were scaled by its inverse);
  -- NULL without hardware counters.
  hw_fraction     REAL,
  -- DRAM traffic from the uncore memory controllers, system-wide,
  -- interpolated at the step's boundaries (uncore_sample); dram_bytes is
  -- the total, the only value where reads and writes are not told apart
  -- (AMD data fabric, Zen 1-3).
  dram_read_bytes  REAL,
  dram_write_bytes REAL,
  dram_bytes       REAL,
  -- How the counter columns were obtained:
  --   exact         read by the marker library at each boundary (libmfu)
  --   interpolated  a boundary came from a probe: the counts are
  --                 interpolated in interval_reading at the boundary times;
  --                 *_err bound the difference from the true count
  counts          TEXT,
  cpu_ns_err      INTEGER,   -- |cpu_ns - true| <= this (0: exact)
  hw_flops_err    REAL,      -- |hw_flops - true| <= this
  -- FLOPs of the BLAS, LAPACK and oneDNN calls made in the interval
  -- (library-call counting, whole process, every thread), counted from each
  -- call's arguments: lib_flops is the sum over precisions (int8 GEMMs add
  -- integer operations, as the int8 peak counts them); NULL when the
  -- counting library was not loaded (unknown), 0 when it was and no call was
  -- made. lib_calls_unknown of the lib_calls were of functions whose FLOPs
  -- are unknown (iterative LAPACK drivers: dsyevd_, dgesdd_...): when above
  -- 0, the FLOP columns hold the rest of the calls only (partial), and they
  -- are NULL when that rest is 0 (unknown, not 0).
  lib_flops       REAL CHECK (lib_flops >= 0),
  lib_flops_fp64  REAL CHECK (lib_flops_fp64 >= 0),
  lib_flops_fp32  REAL CHECK (lib_flops_fp32 >= 0),
  lib_flops_bf16  REAL CHECK (lib_flops_bf16 >= 0),
  lib_flops_fp16  REAL CHECK (lib_flops_fp16 >= 0),
  lib_ops_int8    REAL CHECK (lib_ops_int8 >= 0),
  lib_calls       INTEGER CHECK (lib_calls >= 0),
  lib_calls_unknown INTEGER CHECK (lib_calls_unknown >= 0),
  -- The MFU numerator: model_flops when the program declared them, else
  -- lib_flops when library calls were counted (lib_flops > 0), else NULL;
  -- flops_source says which ('declared' or 'library'). Computed from the
  -- columns above whenever they are read.
  flops           REAL GENERATED ALWAYS AS
                    (coalesce(model_flops, CASE WHEN lib_flops > 0 THEN lib_flops END)) VIRTUAL,
  flops_source    TEXT GENERATED ALWAYS AS
                    (CASE WHEN model_flops IS NOT NULL THEN 'declared'
                          WHEN lib_flops > 0 THEN 'library' END) VIRTUAL
);

-- One row per phase occurrence (mfu_phase_begin .. mfu_phase_end in one
-- thread); the columns are those of step.
CREATE TABLE phase (
  id              INTEGER PRIMARY KEY,
  step            INTEGER,             -- the step open when the phase began, or NULL
  name            TEXT NOT NULL,
  pid             INTEGER NOT NULL,
  tid             INTEGER NOT NULL,
  depth           INTEGER NOT NULL,    -- 0 for an outermost phase
  parent          INTEGER,             -- enclosing phase id, or NULL
  begin_ns        INTEGER NOT NULL,
  end_ns          INTEGER CHECK (end_ns >= begin_ns),
  wall_ns         INTEGER CHECK (wall_ns >= 0),
  model_flops     REAL CHECK (model_flops >= 0),      -- declared with mfu_phase_model
  model_bytes     REAL CHECK (model_bytes >= 0),
  cpu_ns          INTEGER CHECK (cpu_ns >= 0),
  ctx_switches    INTEGER CHECK (ctx_switches >= 0),
  cpu_migrations  INTEGER CHECK (cpu_migrations >= 0),
  page_faults     INTEGER CHECK (page_faults >= 0),
  cycles          INTEGER CHECK (cycles >= 0),
  instructions    INTEGER CHECK (instructions >= 0),
  hw_flops        REAL CHECK (hw_flops >= 0),
  complete        INTEGER NOT NULL,
  ref_cycles      INTEGER,
  hw_flops_fp64   REAL,
  hw_flops_fp32   REAL,
  hw_flops_fp16   REAL,
  hw_flops_any    REAL,
  amx_ops         REAL,
  hw_fraction     REAL,
  dram_read_bytes  REAL,
  dram_write_bytes REAL,
  dram_bytes       REAL,
  counts          TEXT,
  cpu_ns_err      INTEGER,
  hw_flops_err    REAL,
  lib_flops       REAL CHECK (lib_flops >= 0),
  lib_flops_fp64  REAL CHECK (lib_flops_fp64 >= 0),
  lib_flops_fp32  REAL CHECK (lib_flops_fp32 >= 0),
  lib_flops_bf16  REAL CHECK (lib_flops_bf16 >= 0),
  lib_flops_fp16  REAL CHECK (lib_flops_fp16 >= 0),
  lib_ops_int8    REAL CHECK (lib_ops_int8 >= 0),
  lib_calls       INTEGER CHECK (lib_calls >= 0),
  lib_calls_unknown INTEGER CHECK (lib_calls_unknown >= 0),
  flops           REAL GENERATED ALWAYS AS
                    (coalesce(model_flops, CASE WHEN lib_flops > 0 THEN lib_flops END)) VIRTUAL,
  flops_source    TEXT GENERATED ALWAYS AS
                    (CASE WHEN model_flops IS NOT NULL THEN 'declared'
                          WHEN lib_flops > 0 THEN 'library' END) VIRTUAL
);

-- Which library calls did a step's work: one row per step and function
-- called in it (library-call counting), from copies of the process's
-- counters taken at the step's two boundaries. A step whose copies were
-- overwritten before the recorder read them (it fell 4096 step boundaries
-- behind, or its process had called more than 128 different functions)
-- has none; its lib_flops are still exact.
CREATE TABLE lib_call (
  step       INTEGER NOT NULL,
  function   TEXT NOT NULL,     -- the symbol called: cblas_dgemm, sgemm_, dgetrf_, dnnl_sgemm, ...
  precision  TEXT NOT NULL,     -- fp64, fp32, bf16, fp16, int8
  calls      INTEGER NOT NULL CHECK (calls > 0),
  flops      REAL CHECK (flops >= 0),  -- NULL: the function's FLOPs are unknown (dsyevd_, ...)
  PRIMARY KEY (step, function)
) WITHOUT ROWID;

-- Which library calls did the whole run's work: one row per function
-- called (library-call counting, every process of the target), the totals
-- behind run.lib_flops. A run without steps has these and no lib_call rows.
CREATE TABLE run_lib_call (
  function   TEXT PRIMARY KEY,  -- the symbol called: cblas_dgemm, sgemm_, ...
  precision  TEXT NOT NULL,     -- fp64, fp32, bf16, fp16, int8
  calls      INTEGER NOT NULL CHECK (calls > 0),
  flops      INTEGER CHECK (flops >= 0)  -- NULL: a function whose FLOPs are unknown
) WITHOUT ROWID;

-- Every hardware and user (-e) event per step and per phase: raw is the
-- count as read, value is raw scaled by time_enabled/time_running of its
-- group (equal when not multiplexed); err bounds |value - true| (0: exact,
-- more for the interpolated counts of probe steps).
CREATE TABLE step_counter (
  step    INTEGER NOT NULL,
  counter INTEGER NOT NULL,
  raw     INTEGER NOT NULL,
  value   REAL NOT NULL,
  err     REAL,
  PRIMARY KEY (step, counter)
) WITHOUT ROWID;

CREATE TABLE phase_counter (
  phase   INTEGER NOT NULL,
  counter INTEGER NOT NULL,
  raw     INTEGER NOT NULL,
  value   REAL NOT NULL,
  err     REAL,
  PRIMARY KEY (phase, counter)
) WITHOUT ROWID;

-- Marker misuse and recording problems, one row each (docs/schema.md lists
-- the kinds).
CREATE TABLE anomaly (
  id      INTEGER PRIMARY KEY,
  time_ns INTEGER,
  pid     INTEGER,
  tid     INTEGER,
  kind    TEXT NOT NULL,  -- step_end_without_begin, step_begin_while_open,
                          -- records_lost, end_before_begin, ...
  step    INTEGER,
  detail  TEXT
);

-- ---- sampling: where the time of each step went -----------------------
--
-- On-CPU samples with callchains (cpu-clock), context switches, the off-CPU
-- intervals built from them, the threads and mappings of the target, and
-- the symbols, resolved when recording ends. docs/sampling.md says how
-- they are recorded, docs/metrics.md ("Code classes") how samples are
-- classified.

-- One row per sample: cpu-clock samples (kind 0: the thread was on CPU) and
-- context-switch samples (kind 1: the thread left the CPU; root only).
CREATE TABLE sample (
  time_ns INTEGER NOT NULL,
  pid     INTEGER NOT NULL,
  tid     INTEGER NOT NULL,
  cpu     INTEGER,
  kind    INTEGER NOT NULL,   -- 0 cpu-clock, 1 switch-out
  kernel  INTEGER NOT NULL,   -- 1 if the sampled instruction was in kernel mode
  stack   INTEGER,            -- stack.id of its callchain
  class   TEXT                -- compute | sync | dispatch | unclassified | kernel
                              -- (set at the end)
);

-- Distinct callchains of one process.
CREATE TABLE stack (
  id      INTEGER PRIMARY KEY,
  pid     INTEGER NOT NULL,
  nframes INTEGER NOT NULL,
  leaf    INTEGER,            -- symbol.id of the innermost user frame
  compute INTEGER,            -- 1 if the callchain's class is compute (set at the end)
  -- symbol.id of the frame whose class the stack's user-mode samples took
  -- (the innermost compute frame, else the innermost frame that is not
  -- neutral, else the innermost user frame); NULL without user frames.
  class_symbol INTEGER
);

-- The frames of each stack, innermost (depth 0) first; kernel frames first
-- for kernel-mode samples.
CREATE TABLE stack_frame (
  stack   INTEGER NOT NULL,
  depth   INTEGER NOT NULL,
  ip      INTEGER NOT NULL,
  kernel  INTEGER NOT NULL,
  symbol  INTEGER,            -- symbol.id (set at the end)
  PRIMARY KEY (stack, depth)
) WITHOUT ROWID;

-- What an instruction address was: resolved from the target's mappings
-- while its files are still there.
CREATE TABLE symbol (
  id      INTEGER PRIMARY KEY,
  dso     TEXT,               -- path of the mapped file, [kernel], [jit], [anon]...
  name    TEXT,               -- function, demangled; NULL if unknown
  file    TEXT,               -- source file (needs debug info)
  line    INTEGER,
  kind    TEXT NOT NULL,      -- user | kernel | jit | unknown
  -- compute | dispatch | sync | neutral | user (the program's own code);
  -- NULL for kernel frames and addresses in no mapping.
  class   TEXT
);

-- Context switches of the target's threads (PERF_RECORD_SWITCH).
CREATE TABLE switch (
  time_ns INTEGER NOT NULL,
  pid     INTEGER NOT NULL,
  tid     INTEGER NOT NULL,
  cpu     INTEGER,
  out     INTEGER NOT NULL,   -- 1 switch-out, 0 switch-in
  preempt INTEGER NOT NULL    -- for a switch-out: 1 if still runnable (preempted)
);

-- Off-CPU intervals: from a switch-out of a thread to its next switch-in
-- (schema/derive/offcpu.sql builds them when the recording ends).
CREATE TABLE offcpu (
  id      INTEGER PRIMARY KEY,
  pid     INTEGER NOT NULL,
  tid     INTEGER NOT NULL,
  start_ns INTEGER NOT NULL,
  end_ns  INTEGER NOT NULL,
  dur_ns  INTEGER NOT NULL,
  kind    TEXT NOT NULL,      -- blocked | runnable
  stack   INTEGER,            -- where the thread left the CPU (see where_source)
  where_source TEXT           -- switch_sample (exact) | last_sample (the thread's
                              -- last cpu-clock sample before it) | NULL
);

-- Threads and processes of the target seen while recording.
CREATE TABLE thread (
  tid     INTEGER NOT NULL,
  pid     INTEGER NOT NULL,
  ppid    INTEGER,            -- the process that created it
  comm    TEXT,
  start_ns INTEGER,           -- fork/clone time, NULL for the first thread
  end_ns  INTEGER,            -- exit time, NULL if still running at the end
  cpu_ns  INTEGER             -- on-CPU time from the switch records
                              -- (schema/derive/thread_cpu.sql)
);

-- Executable mappings of the target (PERF_RECORD_MMAP2).
CREATE TABLE mapping (
  pid     INTEGER NOT NULL,
  start   INTEGER NOT NULL,
  len     INTEGER NOT NULL,
  pgoff   INTEGER NOT NULL,
  path    TEXT NOT NULL,
  time_ns INTEGER
);

-- exec() of a target process (its address space was replaced).
CREATE TABLE exec (
  time_ns INTEGER NOT NULL,
  pid     INTEGER NOT NULL,
  comm    TEXT
);

-- Sampling settings and totals, one row.
CREATE TABLE sampling (
  freq          INTEGER NOT NULL,   -- cpu-clock samples per second of CPU time (0: off)
  user_only     INTEGER NOT NULL,   -- 1: no kernel samples (perf_event_paranoid)
  switch_samples INTEGER NOT NULL,  -- 1: context-switch samples with callchains
  lost          INTEGER NOT NULL DEFAULT 0, -- records the kernel dropped
  lost_samples  INTEGER NOT NULL DEFAULT 0,
  samples       INTEGER NOT NULL DEFAULT 0,
  switches      INTEGER NOT NULL DEFAULT 0,
  compute_patterns TEXT             -- the compute-kernel patterns used, one per line
);

-- ---- readings over time -----------------------------------------------

-- DRAM traffic from the uncore memory controllers, read by the recorder
-- every few milliseconds: cumulative bytes since the start, per socket.
-- Steps and phases get their dram_*_bytes by interpolating this at their
-- boundaries.
CREATE TABLE uncore_sample (
  time_ns INTEGER NOT NULL,
  socket  INTEGER NOT NULL,   -- index of the socket (its cpumask CPU in uncore_socket)
  read_bytes  REAL,           -- NULL when reads and writes are not counted apart
  write_bytes REAL,
  total_bytes REAL NOT NULL
);

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

-- The library calls of the whole target (every process) as the recorder
-- read them, at the same times as interval_reading (every -I ms; the first
-- at the exec, all zero, the last once the target ended, equal to the run
-- row's lib_* columns): cumulative counts since the start, which only
-- grow, so the differences of consecutive readings are each interval's
-- calls and FLOPs and add up to the run's exactly. None when library calls
-- were not counted or -I 0.
CREATE TABLE lib_reading (
  time_ns         INTEGER PRIMARY KEY,  -- CLOCK_MONOTONIC of the reading
  lib_flops       INTEGER NOT NULL,     -- sum of the five below
  lib_flops_fp64  INTEGER NOT NULL,
  lib_flops_fp32  INTEGER NOT NULL,
  lib_flops_bf16  INTEGER NOT NULL,
  lib_flops_fp16  INTEGER NOT NULL,
  lib_ops_int8    INTEGER NOT NULL,
  lib_calls       INTEGER NOT NULL,
  lib_calls_unknown INTEGER NOT NULL DEFAULT 0, -- of lib_calls: FLOPs unknown (not in lib_flops)
  lib_calls_begun INTEGER
  -- lib_calls_begun: lib_calls plus the calls begun and not yet returned at
  -- the reading (a call's FLOPs are added when it returns): above lib_calls,
  -- a call was running. NULL in a database recorded before it existed, and
  -- where the calls were counted with uprobes (lib_hit: their begin is not
  -- seen). No comma in a comment before a column: ALTER TABLE DROP COLUMN
  -- (SQLite 3.40) would cut the definition there
);

-- ---- programs without markers -----------------------------------------

-- The probe points of --step and --phase, one row per point, with where
-- they were placed and how often they fired (docs/probes.md).
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

-- @deferred: created by mfu-record when the recording ends (indexes slow
-- down ingest; a database whose recorder was killed lacks them, and reads
-- the same, only slower).
CREATE INDEX IF NOT EXISTS phase_step ON phase(step);
CREATE INDEX IF NOT EXISTS phase_name ON phase(name);
CREATE INDEX IF NOT EXISTS sample_tid_time ON sample(tid, time_ns);
CREATE INDEX IF NOT EXISTS offcpu_tid_start ON offcpu(tid, start_ns);
CREATE INDEX IF NOT EXISTS switch_tid_time ON switch(tid, time_ns);
-- the innermost phase open at a sample (analyses/dispatch.sql): one step
-- back from the sample's time among its thread's phases
CREATE INDEX IF NOT EXISTS phase_tid_begin ON phase(tid, begin_ns);
