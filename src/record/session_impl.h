/*
 * The session's private half: what a recording holds (struct session) and
 * the helpers its stages share across files.
 *   session.c         planning, the teardown (session_end)
 *   session_start.c   starting: database, ring, target, readers, the go
 *   session_loop.c    the event loop: draining the marker ring, probe and
 *                     task callbacks, watching the target's CPU set
 *   session_finish.c  the end of a recording: totals, notes, the run row
 */
#ifndef MFU_RECORD_SESSION_IMPL_H
#define MFU_RECORD_SESSION_IMPL_H

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <pwd.h>
#include <unistd.h>

#include "asuser.h"
#include "record/target/attach.h"
#include "record/db/checkpointer.h"
#include "record/counters/counters.h"
#include "db.h"
#include "record/target/launch.h"
#include "record/probes/lib_probes.h"
#include "live.h"
#include "libflops.h"
#include "machine.h"
#include "profile.h"
#include "marker_ring.h"
#include "record/markers/markers.h"
#include "util.h"
#include "record/counters/dram.h"
#include "record/target/emulate.h"
#include "record/target/handoff_server.h"
#include "record/counters/intervals.h"
#include "record/counters/lib_counts.h"
#include "record/probes/probe_steps.h"
#include "record/probes/py_hook.h"
#include "child.h"
#include "record/target/paths.h"
#include "record/sampling/sampler.h"
#include "record/db/writer.h"
#include "options.h"
#include "session.h"

#define COMMIT_INTERVAL_NS 250000000ull /* a killed recorder loses at most this much */
/* ... and its .sqlite file alone (copied without its -wal) lags at most this
 * much: committed rows live in the WAL until a checkpoint copies them. */
#define CHECKPOINT_INTERVAL_NS 2000000000ull


struct drain {
	struct sampler *sampler;
	struct dram *dram;
	struct intervals *intervals;
	struct lib_counts *lib;  /* the whole target's library calls (NULL: not counted) */
	struct probe_steps *probes;
	struct mring_consumer *ring; /* the marker ring's consumer (NULL: none) */
	struct mring_consumer ring_c;
	int ring_stopped;      /* tampered with: not read any more */
	uint64_t last_commit_ns;
	struct markers *markers;
	struct writer *writer;
	int failed; /* the database stopped accepting rows */
	uint64_t records;
	uint64_t dropped;  /* records drained after a failure, not stored */
	int kill_on_error;
	pid_t target;
	const char *output;
	int probe_warned;
	struct live *live;     /* the status line: cleared before any other message */
};

/* A recording with uprobes holds an event per site and thread: let it use
 * every fd it may. */
/* Whose CPUs the peaks are for. The target's affinity and cgroup are
 * known only once it runs (`mfu-record -- taskset -c 0 ./app` changes them
 * in its first instructions; a program may pin itself), so they are read
 * every 20 ms until its first step begins, and that set is the one the
 * peaks use (stored again when it differs from the one assumed at the
 * start). A change after that is noted, once. */
struct cpu_watch {
	struct machine used;     /* the CPU set the stored peaks are for */
	struct machine seen;     /* the target's, last read */
	int have_seen;
	int settled;             /* its first step began: the set is fixed */
	int change_noted;
	uint64_t next_ns;
	unsigned long long mask_hash; /* of the main thread's mask last read */
};

/* Everything one recording holds, from the options to the database. */
struct session {
	struct options o;
	struct machine m;
	struct counters cs;
	struct launch l;
	struct run_info ri;
	struct drain d;
	sigset_t block, old;    /* the signals handled in the loop; the mask before */
	sqlite3 *db;
	char cwd[PATH_MAX];
	struct peaks pk;
	char *cmd;              /* the command as JSON */
	void *ring;             /* the marker ring (MAP_FAILED: none) */
	size_t ring_size;
	int ring_fd, sfd;
	int exit_code;          /* what mfu-record exits with */
	int status;             /* the target's wait status */
	int exit_status, exit_signal, interrupted;
	char kept_old[PATH_MAX]; /* where an earlier recording at -o was moved, or "" */
	struct markers_sink sink;
	struct launch_creds creds;
	struct asuser owner;    /* the target's user under sudo: the output, the hook's and
				 * emulator's directories, JIT maps, the profile are theirs
				 * (inactive: ours; asuser_owner() while the session lives) */
	char profile[PATH_MAX]; /* under sudo the profile read and calibrated into (the
				 * user's, or root's own with --as-root), "": the default */
	struct py_hook *pyhook;
	struct attach *at;
	/* -p: the attached threads' counts from start_ns (attach_mark()) to
	 * end_ns, read then: a target left running counts on after end_ns */
	struct counter_reading at_end;
	struct attach_markers *am; /* the joined process's libmfu markers, NULL: none */
	struct handoff_server *handoff; /* answers processes that lost the fds, NULL: none */
	char am_why[700];       /* why its markers cannot be recorded, "" if they can */
	struct checkpointer *ckpt;
	int attached, target_ended, recap;
	int calibrated;         /* this recording measured the machine's peaks */
	struct cpu_watch cw;
	char closing[PATH_MAX + 160]; /* the last line, after the recap */
	char dram_why[700];     /* why there are no DRAM readings, said once */
	struct libflops_region *lf; /* library-call counts shared with the target, NULL: none */
	int lf_fd;
	char lf_why[400];       /* why library calls are not counted, "" if they are */
	struct lib_probes *lp;  /* uprobes on BLAS functions in the executable, NULL: none */
	struct live *live;      /* the live line on a terminal */
	char lp_why[700];       /* why those are not counted, "" if they are (or there are none) */
	struct emulator emu;    /* --emulate: Valgrind and the FP-op tool */
};

int choose_peaks(const struct machine *m, const struct options *o, struct peaks *pk);
/* A note on stderr (what is missing and why, what was chosen): nothing with
 * -q, which prints errors only; the notes stay in the database. */
void rec_note(const struct options *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The notes of @pk's choice (rec_note()); its spec_note only when this
 * recording @calibrated the machine (said once, not every run). */
void say_peak_warnings(const struct options *o, const struct peaks *pk, int calibrated);
void cpu_watch_peaks(struct drain *d, struct cpu_watch *cw, const struct options *o, struct peaks *pk, const char *source);
/* session_loop.c: the loop's draining, shared with the start and the end;
 * the sinks it hands the readers (probe steps, the sampler's tasks) */
uint64_t session_loop_drain_ring(struct drain *d, uint64_t max, uint64_t deadline_ns);
void session_loop_ring_tampered(struct drain *d);
void session_loop_on_exec_map(void *ctx, pid_t pid, const char *path);
void session_loop_on_task(void *ctx, pid_t pid, pid_t tid, int exited);
int session_loop_probe_boundary(void *ctx, const struct mring_record *r);
void session_loop_probe_cancel(void *ctx, pid_t pid, pid_t tid, const char *name);
void session_loop_record_failed(struct drain *d, int rc, const char *what);
int write_peaks(struct writer *w, const struct machine *m, const struct options *o, const struct peaks *pk, const char *cpus_source);

#endif
