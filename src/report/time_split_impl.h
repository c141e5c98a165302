/* time_split's private half: the tables its scans fill (time_split.c) and
 * the virtual tables that serve them (time_split_table.c). */
#ifndef MFU_REPORT_TIME_SPLIT_IMPL_H
#define MFU_REPORT_TIME_SPLIT_IMPL_H

#include <sqlite3.h>

#include "cached_table.h"
#include <stddef.h>
#include <stdint.h>

/* A scan's answer for data it does not compute: run the plain SQL. */
#define TS_IRREGULAR 1

/* The rows of one table: integers or NULLs, and for mfu_phase_split a name
 * in column 0 (text or blob, as stored); or, when the plain SQL made them,
 * its values (@fallback). */
struct ts_table {
	struct cached_result base; /* first: the virtual table's cache */
	int ncols;
	size_t nrows, cap;
	int64_t *v;              /* nrows x ncols */
	unsigned char *null;     /* nrows x ncols: 1 for NULL */
	char **names;            /* nrows, or NULL: no name column */
	int *name_len;
	unsigned char *name_blob;
	sqlite3_value **fallback; /* nrows x ncols, or NULL */
};

/* Make room for one more row of @t (a name column with @named). Returns
 * the row's index, or -1 when out of memory. */
long ts_table_add(struct ts_table *t, int named);


/* Fill @t (ncols set, no rows) from one scan: phase_breakdown.sql's g,
 * waterfall.sql's smp. Return 0, TS_IRREGULAR, or an SQLite error code. */
int ts_phase_split(sqlite3 *db, struct ts_table *t);
int ts_step_samples(sqlite3 *db, struct ts_table *t);

#endif
