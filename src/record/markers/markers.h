/*
 * Markers: turns the stream of marker records (begin/end/model of steps and
 * phases, from any thread of any process of the target) into step rows,
 * phase rows and anomaly rows. Steps belong to a process; phases nest per
 * thread. Misuse never stops the stream: it becomes an anomaly. Records a
 * full ring dropped are no misuse: the thread's next record says so
 * (MRING_F_AFTER_LOSS) and the boundaries the loss explains become a
 * records_lost row, not misuse anomalies (markers.c, on_loss()).
 */
#ifndef MFU_MARKERS_H
#define MFU_MARKERS_H

#include <stddef.h>
#include <stdint.h>

#include "record/counters/counters.h"
#include "marker_ring.h"

#define MODEL_FLOPS 1
#define MODEL_BYTES 2

/* A step's or phase's declared model FLOPs or bytes above this are kept
 * but flagged (anomaly implausible_model): the largest training runs total
 * about 1e26 FLOPs, and a CPU that did 1e30 in one step would need some
 * 1e17 s at 1e13 FLOP/s (docs/metrics.md). */
#define MODEL_IMPLAUSIBLE 1e30

/* How many processes and threads the markers keep state for at once (a
 * step open, phases open, a loss to explain): records that need one more
 * are dropped and counted (markers_limits_note()), so that forged pids and
 * tids cannot grow the recorder without bound. mfu-record --max-procs and
 * --max-threads set them (markers_set_limits()). */
#define MARKERS_MAX_PROCS 4096
#define MARKERS_MAX_THREADS 65536

/* markers_drain() reads the clock every this many records. */
#define MARKERS_DRAIN_CLOCK_EVERY 256

struct interval_row {
	int64_t id;             /* step number, or phase id */
	int64_t step;           /* for phases: the step open at begin, -1 if none */
	int64_t parent;         /* for phases: enclosing phase id, -1 if none */
	int depth;
	const char *name;       /* phase name (NULL for steps) */
	int32_t pid, tid, end_tid;
	uint64_t begin_ns, end_ns;
	int complete;           /* 0: never ended (end_ns and counters unknown) */
	int has_model;          /* MODEL_FLOPS | MODEL_BYTES: which were declared
				 * (a NAN declaration leaves its value unknown) */
	double model_flops, model_bytes;
	int interpolated;       /* a boundary came from a probe: the counts in @d are
				 * unknown here, interpolated later (intervals.h) */
	struct counter_delta d;
	/* steps: the library-call snapshots at the two boundaries (0: none),
	 * for the per-function lib_call rows (writer.h) */
	uint64_t lib_snap_begin, lib_snap_end;
};

struct anomaly_row {
	uint64_t time_ns;
	int32_t pid, tid;
	const char *kind;
	int64_t step;           /* -1 if none */
	const char *detail;
};

struct markers_sink {
	void *ctx;
	int (*step)(void *ctx, const struct interval_row *row);
	int (*phase)(void *ctx, const struct interval_row *row);
	int (*anomaly)(void *ctx, const struct anomaly_row *row);
};

struct markers;

struct markers *markers_new(const struct counters *cs, const struct markers_sink *sink);
void markers_free(struct markers *m);

/* At most @max_procs processes and @max_threads threads tracked at once
 * (defaults MARKERS_MAX_PROCS and MARKERS_MAX_THREADS; 0 counts as 1). */
void markers_set_limits(struct markers *m, size_t max_procs, size_t max_threads);

/* Process one record (a copy is made first: @r may lie in memory the
 * target writes). Returns 0, or the first non-zero sink return / -ENOMEM. */
int markers_feed(struct markers *m, const struct mring_record *r);

/* What one markers_drain() did. */
struct markers_drained {
	uint64_t read;          /* records read from the ring */
	uint64_t records;       /* of them markers (loss notices are none) */
	int yielded;            /* stopped at the deadline, not empty */
	int tampered;           /* the ring was tampered with: read no more */
	int err;                /* a markers_feed() error */
};

/* Read the ring's published records through the consumer @c, oldest
 * first, and feed each to @m (NULL: read and drop them, the database
 * having failed), until none is published, @max were read, the clock
 * passed @deadline_ns (CLOCK_MONOTONIC, looked at every
 * MARKERS_DRAIN_CLOCK_EVERY records; UINT64_MAX: never), a feed failed,
 * or the ring turned out tampered with (then markers_ring_tampered()
 * says so, and nothing more is read). Returns 0 or the feed's error;
 * @out says what happened. The recorder's loop and its fuzzer
 * (tests/fuzz/fuzz_ring.c) both read the ring through this. */
int markers_drain(struct markers *m, struct mring_consumer *c, uint64_t max, uint64_t deadline_ns,
		  struct markers_drained *out);

/* The ring_tampered anomaly: how the consumer @c found the ring tampered
 * with (c->why). Returns 0 or the sink's error. */
int markers_ring_tampered(struct markers *m, const struct mring_consumer *c);

/* The note for records dropped at the process (@threads 0) or thread (1)
 * cap, into @buf: 1 if there were any, else 0. */
int markers_limits_note(const struct markers *m, int threads, char *buf, size_t len);

/* Process a boundary taken by a probe (probe_steps.h): like markers_feed,
 * but the record carries no counter reading (ngroups 0) and the intervals
 * it bounds are flagged interpolated. (So are those of a record with
 * MRING_F_UNREAD, fed through markers_feed.) */
int markers_feed_probe(struct markers *m, const struct mring_record *r);
/* The markers were switched on in a process that was already running
 * (mfu-record -p): the ends of steps and phases it began before are
 * counted (markers_before_attach()), not taken for misuse. */
void markers_set_attached(struct markers *m);
uint64_t markers_before_attach(const struct markers *m);

/* Steps come from probes (mfu-record --step): the program's own step
 * markers (begin, end, model) are counted and left out, never mixed in. */
void markers_set_probe_steps(struct markers *m);
uint64_t markers_ignored_step_markers(const struct markers *m);

/* Forget, without a row, the step that thread @tid of @pid has open (@name
 * NULL), or its innermost phase when that is @name: a probe's boundary that
 * began something the recording will not see end (probe_steps.h). */
void markers_cancel(struct markers *m, int32_t pid, int32_t tid, const char *name);

/* A record of thread @tid of @pid was claimed and never published (a writer
 * killed inside a marker; mring_hole_owner(), 0 and 0 when unknown): its
 * thread lost a boundary of unknown kind, as after MRING_F_AFTER_LOSS.
 * Returns 0, a sink error or -ENOMEM. */
int markers_lost_hole(struct markers *m, int32_t pid, int32_t tid);

/* The target has ended: a records_lost row per thread that lost marker
 * records, then every open step and phase becomes an incomplete row and an
 * anomaly. @ring_lost: the records the ring counted as lost
 * (mring_consumer_lost()). When it is more than the threads told of (a
 * thread that lost its last records and exited before its notice found a
 * slot), what is open at exit may have ended in the untold loss: it is
 * step_broken_by_loss or phase_broken_by_loss, not *_open_at_exit (misuse).
 * Returns 0 or a sink error. */
int markers_finish(struct markers *m, uint64_t ring_lost);

/* The recording leaves a joined process that runs on (mfu-record -p,
 * --duration or a signal): what is open at markers_finish() was cut by the
 * detach, not left open by the program. It becomes incomplete rows, with no
 * *_open_at_exit anomaly. */
void markers_set_detached(struct markers *m);

/* Counts for the run summary. */
uint64_t markers_steps(const struct markers *m);
uint64_t markers_anomalies(const struct markers *m);
/* Slots of the thread table (for tests: bounded under thread churn). */
size_t markers_thread_slots(const struct markers *m);

#endif
