-- mfu database schema, version 3: sampling. Where the time of each step
-- went: on-CPU samples with callchains (cpu-clock), context switches, the
-- off-CPU intervals built from them, the threads and mappings of the target,
-- and the symbols, resolved when recording ends. docs/schema.md describes
-- every column; docs/sampling.md how they are recorded.

PRAGMA user_version = 3;

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
  class   TEXT                -- compute | dispatch | kernel | unknown (set at the end)
);

-- Distinct callchains of one process.
CREATE TABLE stack (
  id      INTEGER PRIMARY KEY,
  pid     INTEGER NOT NULL,
  nframes INTEGER NOT NULL,
  leaf    INTEGER,            -- symbol.id of the innermost user frame
  compute INTEGER             -- 1 if a frame is a compute kernel (set at the end)
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
  kind    TEXT NOT NULL       -- user | kernel | jit | unknown
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

-- Off-CPU intervals: from a switch-out of a thread to its next switch-in.
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

-- Total DRAM bytes of a step or phase where the controllers cannot tell
-- reads from writes (AMD data fabric, Zen 1-3).
ALTER TABLE step ADD COLUMN dram_bytes REAL;
ALTER TABLE phase ADD COLUMN dram_bytes REAL;

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

-- @deferred
CREATE INDEX IF NOT EXISTS sample_tid_time ON sample(tid, time_ns);
CREATE INDEX IF NOT EXISTS offcpu_tid_start ON offcpu(tid, start_ns);
CREATE INDEX IF NOT EXISTS switch_tid_time ON switch(tid, time_ns);
-- the innermost phase open at a sample (analyses/dispatch.sql): one step
-- back from the sample's time among its thread's phases
CREATE INDEX IF NOT EXISTS phase_tid_begin ON phase(tid, begin_ns);
