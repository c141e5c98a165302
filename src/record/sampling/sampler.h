/*
 * Sampler: the sampling side of a recording. Opens perf_ring's per-CPU
 * events on the target (cpu-clock samples with callchains, context
 * switches, mmap/comm/fork/exit records), streams every record into the
 * database while the target runs (nothing per sample is kept in memory but
 * the distinct callchains), and when the recording ends builds the off-CPU
 * intervals, resolves the symbols while the files are still there and
 * classifies each sample as compute, dispatch, sync, unclassified or kernel
 * (code_class.h).
 */
#ifndef MFU_SAMPLER_H
#define MFU_SAMPLER_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sampler;

struct sampler_opts {
	unsigned freq;                /* cpu-clock samples per second; 0: switches and tasks only */
	const char *const *compute;   /* extra compute-kernel patterns (POSIX EREs) */
	int ncompute;
	const char *const *dispatch;  /* extra runtime-layer (dispatch) patterns */
	int ndispatch;
	const char *compute_file;     /* a file of patterns, one per line; NULL: the default
				       * ($XDG_CONFIG_HOME/mfu/compute, if it exists) */
	/* Told, while draining, of each new thread or process of the target
	 * (exited 0) and each one that ended (exited 1), and of each
	 * executable file it maps: for the per-thread uprobes of probe steps. */
	/* Attached to a running process (mfu-record -p): its threads at the
	 * time, each sampled (enabled at once, not at an exec). */
	const pid_t *tids;
	size_t ntids;
	void (*on_task)(void *ctx, pid_t pid, pid_t tid, int exited);
	void (*on_exec_map)(void *ctx, pid_t pid, const char *path);
	void *cb_ctx;
};

/* Open the sampling events on @pid (disabled until its exec) and prepare the
 * statements. Returns 0 or -errno with @why set. */
int sampler_open(struct sampler **out, sqlite3 *db, pid_t pid, const struct sampler_opts *o,
		 char *why, size_t whylen);

/* Attached to running process @pid: store what no record will tell, its
 * threads (with their names) and its executable mappings as /proc shows
 * them at @time_ns, so that samples resolve. Returns 0 or -errno. */
int sampler_existing(struct sampler *s, pid_t pid, uint64_t time_ns);

/* Move every record the kernel has written into the database (inside the
 * caller's transaction). Returns the number of records, or -errno. */
int sampler_drain(struct sampler *s);

/* The target has ended: drain the rest, build offcpu and the threads' CPU
 * time, resolve symbols, classify samples, store the totals. Returns 0 or
 * -errno with @why set. */
int sampler_finish(struct sampler *s, char *why, size_t whylen);

/* What the user should know about this recording's sampling ("" if nothing). */
const char *sampler_note(const struct sampler *s);

void sampler_close(struct sampler *s);

#endif
