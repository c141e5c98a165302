/* The analyses behind mfu-report's sections: analyses/NAME.sql, compiled in.
 *
 * Each analysis is one SELECT over the run database (schema/NNN.sql); its
 * column names are the csv header and the json keys. */
#ifndef MFU_REPORT_ANALYSIS_H
#define MFU_REPORT_ANALYSIS_H

#include <sqlite3.h>
#include <stddef.h>

struct analysis {
	const char *name;        /* the section name, analyses/<name>.sql */
	const char *description; /* one line, for --list */
	int single_row;          /* one row for the whole run (summary) */
	/* The columns the table and markdown formats show by default, in
	 * order, comma-separated: those people read first, to fit 120
	 * columns; NULL: every column. csv and json carry every column
	 * whatever this says; --columns all shows them all. */
	const char *columns;
};

/* The sections, in the order --list shows them; @count gets their number. */
const struct analysis *analysis_all(size_t *count);

/* The analysis called @name, or NULL. */
const struct analysis *analysis_find(const char *name);

/* "summary, steps, phases, notes", for messages. */
const char *analysis_names(void);

/* The SQL text of @a (with its explanatory comments), or NULL if the build
 * lacks the file. */
const char *analysis_sql(const struct analysis *a);

/* Prepare @a on @db as mfu-report runs it: analysis_computed_sql() of its
 * SQL, with the C tables it reads (mfu_phase_stats, phase_stats.h)
 * registered on @db. Returns 0, or -EIO with SQLite's message in @err,
 * -ENOENT if the SQL is missing from the build, -ENOMEM. */
int analysis_prepare(const struct analysis *a, sqlite3 *db, sqlite3_stmt **out, char *err, size_t errlen);

/* analysis_prepare(), with @summary 1: for the summary for people
 * (summary_text.h), every block of the SQL that runs from a line starting
 * "-- @summary: TEXT" to a line starting "-- @end" replaced by TEXT first
 * (notes.sql leaves out the phases' notes there: the phases section says
 * them; waterfall.sql its steps' rows, for the HTML page). */
int analysis_prepare_summary(const struct analysis *a, sqlite3 *db, int summary, sqlite3_stmt **out, char *err,
			     size_t errlen);

/* Register on @db the tables and functions mfu-report computes in C, which
 * the "-- @computed:" blocks read: mfu_phase_stats (phase_stats.h), the
 * step totals (step_totals.h), mfu_phase_split and mfu_step_samples
 * (time_split.h). Returns 0, or -EIO with SQLite's message in @err. */
int analysis_register(sqlite3 *db, char *err, size_t errlen);

/* @sql with every block that runs from a line starting "-- @computed: TEXT"
 * to a line starting "-- @end" replaced by TEXT. In the file the block is
 * the plain SQL a user runs in sqlite3; TEXT reads the same rows from a
 * table mfu-report computes in C. Returns a malloc'd string, or NULL when
 * out of memory. */
char *analysis_computed_sql(const char *sql);

/* The text of analyses/@file (e.g. "diff.sql") with every @name@ replaced
 * by the query of analyses/name.sql, as the verdicts are written: runnable
 * as it is. A malloc'd string, or NULL when the build lacks the file or
 * memory ran out. */
char *analysis_expand(const char *file);

/* The one-line verdict of @a (analyses/<name>_verdict.sql, in which
 * @other@ stands for analyses/other.sql), as a malloc'd string in *text, or
 * NULL when the section has none. Returns 0, -ENOMEM, or -EIO with SQLite's
 * message in @err. */
int analysis_verdict(const struct analysis *a, sqlite3 *db, char **text, char *err, size_t errlen);

/* analysis_verdict(), with @a's own rows (@name@ for a's name in its
 * verdict) the one row @row is on: its columns bound as they are, the
 * section not run again (the waterfall's verdict reads only its all-steps
 * row, which --html has read already: 1.5 s of a million steps). @row
 * NULL: analysis_verdict(). */
int analysis_verdict_row(const struct analysis *a, sqlite3 *db, sqlite3_stmt *row, char **text, char *err,
			 size_t errlen);

#endif
