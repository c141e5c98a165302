/* mfu-report --diff inside: the comparison's state, shared by diff.c
 * (reading the runs, comparing them, the table), diff_text.c (the
 * summary and warning lines) and diff_gate.c (--fail-on). */
#ifndef MFU_REPORT_DIFF_IMPL_H
#define MFU_REPORT_DIFF_IMPL_H

#include "diff.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* KIND_HIDDEN: the preemption diff.sql gives to take out of the times,
 * not a row of its own */
enum { KIND_STEP, KIND_PHASE, KIND_BREAKDOWN, KIND_OTHER, KIND_HIDDEN };

/* One step's value of a quantity. */
struct point {
	int64_t step;
	double v;
};

/* One quantity (kind, name) and its two series. */
struct quantity {
	char *kind, *name;
	int rank;         /* KIND_* */
	int seen[2];      /* it has rows in the run's output */
	int64_t ord[2];   /* its order in each run (diff.sql's ord) */
	struct diff_stats s[2];
	/* its non-null values: while they are few (under half the run's
	 * steps), as points, by step once sorted; then as one double per
	 * complete step, by its index in d->steps (NAN: none), pt[] freed */
	struct point *pt[2];
	size_t npt[2], cappt[2];
	double *v[2];
	struct diff_batch b[2];
	const char *verdict;
	int significant;   /* -1 better (faster, higher MFU), 1 worse, 0 neither */
	double change, lo, hi; /* relative to the base mean; NAN: unknown */
	double delta, dlo, dhi; /* new - base in the row's unit, and its interval */
	double share;      /* delta over the step time's delta (ms rows) */
	double min_effect; /* the least |delta| named, in the row's unit */
	double pre[2];     /* mean preempted ms per step taken out (NAN: none) */
};

/* A --fail-on figure. */
struct gate {
	char *kind, *name; /* the quantity */
	char *label;       /* as the user wrote it */
	double limit;      /* a fraction (pct) or ms */
	int pct;
};

struct diff {
	struct quantity *q;
	size_t nq, cap;
	size_t last; /* the quantity of the previous row: a hint */
	uint64_t nsteps[2];
	int64_t *steps[2]; /* each run's complete steps, sorted; NULL once
			    * indexed when they are step0, step0 + 1, ... */
	int64_t step0[2];
	double *wall[2];   /* their step times (NAN: none), until indexed */
	size_t capsteps[2], capwall[2];
	int indexed[2];    /* d->steps is whole and sorted: values go by step index */
	int compared; /* the quantities hold their verdicts, in order */
	int net;      /* both runs recorded context switches: times are
		       * compared net of preemption */
	int emulated[2]; /* the run is emulated (run.emulated): only counts compare */
	char *who[2][6]; /* command, host, cpu_name, peak_flops, peak_bw as text, cwd */
	/* the whole runs (view run_flops): wall ms, CPU ms, library FLOPs,
	 * run MFU; NAN when unknown. Said when a run has no step. */
	double whole[2][4];
	char *warning;   /* the runs differ: program, machine, peaks */
	int args_differ; /* the same program with other arguments */
	sqlite3 *mem;  /* the private table diff_rows() selects from */
	char *summary;
	struct gate *gate;
	size_t ngate, capgate;
};

/* A step's counted FLOPs (diff.sql's hw_flops rows): counts, not times. */
static inline int is_count(const struct quantity *q)
{
	return q->rank == KIND_STEP && strncmp(q->name, "hw_flops", 8) == 0;
}

static inline int is_mfu(const struct quantity *q)
{
	return q->rank == KIND_STEP && strcmp(q->name, "mfu") == 0;
}

static inline int is_wall(const struct quantity *q)
{
	return q->rank == KIND_STEP && strcmp(q->name, "wall_ms") == 0;
}

/* The breakdown's preempted part: the machine's doing, not the program's. */
static inline int is_contention(const struct quantity *q)
{
	return q->rank == KIND_BREAKDOWN && strcmp(q->name, "runnable_ms") == 0;
}

/* A time in ms, part of the step time: the step, a phase, a breakdown part. */
static inline int is_time(const struct quantity *q)
{
	return !is_count(q) && !is_mfu(q);
}

/* Whether @q is a row of the comparison: with an emulated run, only the
 * counts are. */
static inline int shown(const struct diff *d, const struct quantity *q)
{
	return q->rank != KIND_HIDDEN && (q->s[0].n || q->s[1].n) && (is_count(q) || !(d->emulated[0] || d->emulated[1]));
}

/* The quantity (@kind, @name) if there is one. */
struct quantity *diff_quantity_find(struct diff *d, const char *kind, const char *name, size_t nlen);

/* Append printf text to the malloc'd *@buf; 0 or -ENOMEM. */
int diff_say(char **buf, size_t *len, size_t *cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A change as a signed percentage, "+12.3%", into @buf (32 bytes). */
const char *diff_pct(char *buf, double v);

/* A time in ms to 3 significant digits, "+0.301 ms", into @buf (32 bytes). */
const char *diff_msec(char *buf, double v);

/* The row's name for people ("step time", "phase NAME") into @buf. */
const char *diff_row_label(const struct quantity *q, char *buf, size_t len);

/* d->warning (and d->args_differ): what makes the runs doubtful to
 * compare. 0 or -ENOMEM. */
int diff_warn(struct diff *d);

/* d->summary: the line above the table. 0 or -ENOMEM. */
int diff_summarize(struct diff *d);

#endif
