/*
 * The one way to open a run for reading: the database read-only, with the
 * TEMP views of analyses/views.sql (and analyses/hw_flops_from.sql) that
 * define every derived figure once (the run without peaks when emulated,
 * each step's and phase's MFU, HFU, MBU and rates, the union time of a
 * phase's occurrences) and apply the report's options (--skip-steps,
 * --quiet, --hw-flops-from) in SQL. mfu-report --sql prints the same SQL,
 * so a user's sqlite3 reads the same rows.
 */
#ifndef MFU_REPORT_RUNVIEW_H
#define MFU_REPORT_RUNVIEW_H

#include <sqlite3.h>
#include <stddef.h>

struct runview_options {
	long skip_steps;           /* --skip-steps N: leave out the first N complete steps */
	int quiet;                 /* --quiet: no notes on counters the machine lacks */
	const char *hw_flops_from; /* --hw-flops-from FILE, or NULL */
	const char *dtype;         /* --dtype DTYPE: the FLOP peak's precision, NULL: the run's */
};

/* The SQL that makes the views for @o on a connection to a run: the
 * options view, with --hw-flops-from the ATTACH of its file and
 * analyses/hw_flops_from.sql, then analyses/views.sql. Runnable as it is in
 * sqlite3. A malloc'd string, or NULL when out of memory or the build lacks
 * the files. */
char *runview_sql(const struct runview_options *o);

/* Open @path read-only as a report reads it: the views of runview_sql(@o),
 * query_only, one read transaction (every section sees the same rows, even
 * while a recording writes). With --hw-flops-from, the other run is checked
 * first: same program, counted FLOPs, this run native, neither merged.
 * Returns 0; -EIO on an SQLite error of @path (@err holds SQLite's message:
 * the connection stays in *@db, for its error code); another -errno with
 * the whole message in @err (cannot open, not an mfu database, a refused
 * --hw-flops-from, out of memory). *@db is NULL unless 0 or -EIO, and then
 * the caller closes it with runview_close(). */
int runview_open(const char *path, const struct runview_options *o, sqlite3 **db, char *err, size_t errlen);

/* End the read transaction and close @db. NULL is ignored. */
void runview_close(sqlite3 *db);

#endif
