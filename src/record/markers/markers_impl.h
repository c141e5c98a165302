/*
 * The markers module's private half: its state, and what its files share.
 *   markers.c        the records fed, paired into steps and phases; losses;
 *                    the lifecycle
 *   markers_table.c  the processes' and threads' state: tables with caps
 *   markers_emit.c   a closed step or phase to a row: counter deltas, model
 *                    FLOPs and bytes, the checks of what was declared
 */
#ifndef MFU_RECORD_MARKERS_IMPL_H
#define MFU_RECORD_MARKERS_IMPL_H

#include "markers.h"
#include "record/idmap.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

struct open_phase {
	int64_t id;
	int64_t step;
	char name[MRING_NAME_MAX];
	uint64_t begin_ns;
	int has_model;
	double flops, bytes;
	int implausible;        /* its model values passed MODEL_IMPLAUSIBLE (said once) */
	int probe;              /* begun by a probe: no counter reading */
	struct counter_reading begin;
};

struct thread {
	int32_t tid;            /* 0: empty hash slot */
	int32_t pid;
	int depth;
	size_t cap;
	struct open_phase *stack;
	int debt;               /* unmatched phase ends a loss of this thread can
				 * still explain (see on_loss()) */
};

struct proc {
	int32_t pid;
	int open;               /* a step is open */
	int64_t step;
	int32_t tid;
	uint64_t begin_ns;
	int has_model;
	double flops, bytes;
	int implausible;
	int probe;
	struct counter_reading begin;
	int debt;               /* 1: a step end without a begin is explained by
				 * a loss of thread debt_tid (see on_loss()) */
	int32_t debt_tid;
};

/* What one thread lost, for its records_lost row at the end. */
struct loss {
	int32_t pid, tid;
	uint64_t first_ns;      /* the first record that told of it */
	uint64_t records;       /* records dropped */
	uint64_t bursts;        /* records that told of a loss */
	uint64_t steps, phases; /* open across the loss: kept incomplete */
	uint64_t explained;     /* unmatched boundaries the loss explains */
};

/* A table at its cap is purged of idle entries (a process with no step
 * open, a thread with no phase open, owing nothing), but a purge that finds
 * nothing to free is not tried again before this many more records: a
 * stream of new ids costs O(1) per record, never O(cap). */
#define PURGE_EVERY(max) ((max) / 4 + 1)

/* What a table refused: the records of processes or threads it had no room
 * for, and when the first was refused. */
struct capped {
	uint64_t records;
	uint64_t first_ns;
	uint64_t retry_at;      /* m->fed at which a purge may be tried again */
};

struct markers {
	const struct counters *cs;
	int detached;           /* the recording left before the target ended
				 * (markers_set_detached()) */
	struct markers_sink sink;
	struct proc *procs;     /* the processes, any order */
	size_t nprocs, cap_procs;
	struct idmap proc_idx;  /* pid -> index in procs */
	size_t max_procs, max_threads;
	struct capped procs_capped, threads_capped;
	uint64_t fed;           /* records fed */
	int refused;            /* REFUSED_*: of the record being fed */
	struct thread *threads; /* open-addressing hash on tid */
	size_t nthreads, cap_threads;
	size_t open_phases;     /* of all threads */
	int64_t next_step;
	int64_t next_phase;
	uint64_t anomalies;
	int probe;              /* the record being fed comes from a probe */
	int timed;              /* ... or carries no counter reading by design (a probe's,
				 * or an attached process's: MRING_F_UNREAD): its counts
				 * are interpolated */
	int attached;           /* the markers were switched on in a running process */
	uint64_t before_attach; /* its ends of steps and phases begun before that */
	int probe_steps;        /* steps come from probes (--step): the program's
				 * own step markers are left out */
	uint64_t ignored_step_markers;
	struct loss *losses;    /* one per thread that lost records, at most max_threads */
	size_t nlosses, cap_losses, last_loss;
	struct idmap loss_idx;  /* pid << 32 | tid -> index in losses */
	struct loss loss_other; /* the losses of threads beyond max_threads */
	uint64_t unowned_holes; /* records lost by writers that died unnamed */
	uint64_t last_ns;       /* the latest record's time */
};

/* The record being fed needed a process (REFUSED_PROC) or a thread
 * (REFUSED_THREAD) that the table had no room for: what it would have
 * told is dropped, and markers_feed() counts it once per table. */
#define REFUSED_PROC 1
#define REFUSED_THREAD 2

/* markers.c */
int markers_anomaly(struct markers *m, const struct mring_record *r, const char *kind, int64_t step,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* markers_table.c */
size_t markers_max_open_phases(const struct markers *m);
int markers_refuse(struct markers *m, int which);
struct proc *markers_proc_find(struct markers *m, int32_t pid);
struct proc *markers_proc_get(struct markers *m, int32_t pid, int *err);
struct thread *markers_thread_find(struct markers *m, int32_t pid, int32_t tid);
struct thread *markers_thread_get(struct markers *m, int32_t pid, int32_t tid, int *err);

/* markers_emit.c */
int markers_check_model(struct markers *m, const struct mring_record *r, int64_t step);
void markers_add_model(int *has, double *flops, double *bytes, const struct mring_record *r);
int markers_check_plausible(struct markers *m, const struct mring_record *r, int *flagged, double flops,
			    double bytes, int64_t step, const char *what);
int markers_emit_step(struct markers *m, struct proc *p, const struct mring_record *end);
int markers_emit_phase(struct markers *m, struct thread *t, int idx, const struct mring_record *end);

#endif
