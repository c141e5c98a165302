/*
 * The writer's private half (writer.h): the connection's state and the
 * helpers its files share.
 *   writer.c   the connection, its statements and transactions; the step,
 *              phase, counter and anomaly rows, batched
 *   run_row.c  the run row, the peaks and the notes
 */
#ifndef MFU_RECORD_WRITER_IMPL_H
#define MFU_RECORD_WRITER_IMPL_H

#include "writer.h"
#include "libflops.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum stmt_id { S_STEP, S_PHASE, S_ANOMALY, S_NOTE, S_PEAK, S_COUNTER, S_TOTAL, S_STEP_COUNTER,
	       S_PHASE_COUNTER, S_STEP_COUNTS, S_PHASE_COUNTS, S_LIB_CALL, S_N };

/* The counter columns of a step or phase row, in the order they are bound.
 * A recording binds only those its counters can fill (writer_counters():
 * 5 of the 16 on a machine without a PMU); the others keep their default,
 * NULL. Each bound parameter costs every row's insert, and the recorder
 * inserts a row per step and phase as fast as a program marks them. */
enum cnt_col {
	CC_CPU_NS, CC_CTX_SWITCHES, CC_CPU_MIGRATIONS, CC_PAGE_FAULTS, CC_CYCLES, CC_INSTRUCTIONS,
	CC_REF_CYCLES, CC_HW_FLOPS, CC_FLOPS_FP64, CC_FLOPS_FP32, CC_FLOPS_FP16, CC_FLOPS_ANY, CC_AMX_OPS,
	CC_HW_FRACTION, CC_CPU_NS_ERR, CC_HW_FLOPS_ERR, CC_N
};

struct writer {
	sqlite3 *db;
	const struct counters *cs; /* for the per-counter rows */
	const struct libflops_region *lf; /* for the lib_call rows, NULL: none */
	uint64_t lib_snaps_lost;   /* steps whose snapshots were overwritten */
	uint64_t lib_snaps_full;   /* steps whose snapshots could not hold every function called */
	sqlite3_stmt *st[S_N];
	enum cnt_col cols[CC_N];   /* the counter columns bound, in order */
	int ncols;
	int in_txn;
	char err[256];
};

/* Keeps the database's message in @w's error; returns -ENOSPC (disk
 * full), -ENOMEM or -EIO. */
int writer_fail(struct writer *w);
/* Steps @st once and resets it. Returns 0 or writer_fail(). */
int writer_run_stmt(struct writer *w, sqlite3_stmt *st);
/* Binds @s, or NULL when @s is NULL. */
void writer_bind_text_or_null(sqlite3_stmt *st, int i, const char *s);
/* Binds @v, or NULL unless it is positive. */
void writer_bind_pos_or_null(sqlite3_stmt *st, int i, double v);

#endif
