/* mfu-report's output: the sections of a run or a job, --html, --trace,
 * --diff (report.h). */
#include "report.h"

#include "analysis.h"
#include "db.h"
#include "diff.h"
#include "format.h"
#include "html.h"
#include "job.h"
#include "merge.h"
#include "runview.h"
#include "trace.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What SQLite's SUM() error means here: no recording stores values whose
 * sum leaves 64 bits (a year of nanoseconds is 2^55). */
static const char *overflow_hint(const char *msg)
{
	return strstr(msg, "integer overflow") ? " (a sum of the database's values does not fit in 64 bits: values "
						  "no recording writes; was the file edited or damaged?)"
					       : "";
}

/* Say why an SQLite step failed: a damaged file is the usual reason. */
static void db_error(sqlite3 *db, const char *path, const char *what, const char *msg)
{
	int code = db ? sqlite3_errcode(db) : SQLITE_OK;

	if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
		fprintf(stderr, PROG ": %s: %s: the database is corrupt (truncated or damaged): %s\n", path, what,
			msg);
	else
		fprintf(stderr, PROG ": %s: %s: %s%s\n", path, what, msg, overflow_hint(msg));
}

/* csv and json keep stdout for data: the notes that explain missing values
 * and those that say a number cannot be right (alert) go to stderr, one line
 * each. */
static int notes_to_stderr(sqlite3_stmt *stmt, char *err, size_t errlen)
{
	char *line = NULL;
	size_t len = 0, cap = 0;
	int rc, ret = 0, text = -1, missing = -1, alert = -1;

	for (int i = 0; i < sqlite3_column_count(stmt); i++) {
		const char *name = sqlite3_column_name(stmt, i);

		if (name && strcmp(name, "text") == 0)
			text = i;
		else if (name && strcmp(name, "missing") == 0)
			missing = i;
		else if (name && strcmp(name, "alert") == 0)
			alert = i;
	}
	if (text < 0 || missing < 0)
		return 0;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (sqlite3_column_int(stmt, missing) == 0 && (alert < 0 || sqlite3_column_int(stmt, alert) == 0))
			continue;
		len = 0;
		if (format_sanitize(&line, &len, &cap, sqlite3_column_text(stmt, text),
				    (size_t)sqlite3_column_bytes(stmt, text), 0) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		fprintf(stderr, PROG ": note: %s\n", line);
	}
	if (rc != SQLITE_DONE) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(sqlite3_db_handle(stmt)));
		ret = -EIO;
	}
out:
	free(line);
	return ret;
}
/* The columns section @a shows in table and markdown (format_set_columns):
 * --columns' list, every column (--columns all, NULL), or the section's
 * default. */
static const char *section_columns(const struct report_options *r, const struct analysis *a)
{
	if (!r->columns)
		return a->columns;
	return strcmp(r->columns, "all") == 0 ? NULL : r->columns;
}

/* Every name in --columns' list is a column of one of the sections asked
 * for (their statements prepared, not run). 0; -1 once a database error is
 * said; -2 once the unknown name is said (bad usage). */
static int check_columns(const struct report_options *r, sqlite3 *db)
{
	const char *p = r->columns;
	int ret = 0;

	if (!p || strcmp(p, "all") == 0)
		return 0;
	while (*p && !ret) {
		size_t len = strcspn(p, ",");
		int found = 0;

		for (size_t i = 0; i < r->nsections && !found && !ret; i++) {
			const struct analysis *a = r->sections[i];
			const char *path = r->path, *who = NULL;
			sqlite3 *sdb = db;
			sqlite3_stmt *stmt = NULL;
			char err[1024];

			if (r->job)
				a = job_section(r->job, a, &sdb, &path, &who);
			if (analysis_prepare(a, sdb, &stmt, err, sizeof(err))) {
				db_error(sdb, path, a->name, err);
				ret = -1;
				break;
			}
			for (int c = 0; c < sqlite3_column_count(stmt) && !found; c++) {
				const char *name = sqlite3_column_name(stmt, c);
				found = name && strlen(name) == len && strncmp(name, p, len) == 0;
			}
			sqlite3_finalize(stmt);
		}
		if (!found && !ret) {
			fprintf(stderr, PROG ": --columns: no column '%.*s' in %s (the names are the csv header: "
				PROG " --format csv SECTION | head -1)\n", (int)len, p,
				r->nsections == 1 ? r->sections[0]->name : "the sections asked for");
			ret = -2;
		}
		p += len + (p[len] == ',');
	}
	return ret;
}

/* Write the requested sections, each with its verdict for people. 0, or -1
 * once the error is said, -2 once bad usage is said. */
static int write_sections(const struct report_options *r, sqlite3 *db, struct format *fmt)
{
	sqlite3_stmt *stmt = NULL;
	char err[1024];
	int rc;

	rc = check_columns(r, db);
	if (rc)
		return rc;
	for (size_t i = 0; i < r->nsections; i++) {
		const struct analysis *a = r->sections[i];
		const char *path = r->path, *who = NULL;

		if (r->job)
			a = job_section(r->job, a, &db, &path, &who);
		if (format_is_human(r->kind)) {
			char *verdict = NULL;
			rc = analysis_verdict(a, db, &verdict, err, sizeof(err));
			if (!rc && who)
				rc = job_verdict_line(who, &verdict);
			if (!rc)
				rc = format_set_verdict(fmt, verdict);
			free(verdict);
			if (rc) {
				db_error(db, path, a->name, rc == -ENOMEM ? "out of memory" : err);
				return -1;
			}
		}
		rc = analysis_prepare(a, db, &stmt, err, sizeof(err));
		if (!rc && format_is_human(r->kind))
			rc = format_set_columns(fmt, section_columns(r, r->sections[i]));
		if (!rc)
			rc = format_section(fmt, r->sections[i]->name, stmt, a->single_row, err, sizeof(err));
		sqlite3_finalize(stmt);
		stmt = NULL;
		if (rc) {
			if (rc == -EIO || rc == -EINVAL || rc == -ENOENT)
				db_error(db, path, a->name, err);
			else
				fprintf(stderr, PROG ": %s: %s\n", a->name, strerror(-rc));
			return -1;
		}
	}
	return 0;
}

/* The notes: under the tables for people (all of them with the summary,
 * else only why values are missing and which cannot be right), on stderr
 * for csv and json; then the end of the output. 0, or -1 once said. */
static int write_notes(const struct report_options *r, sqlite3 *db, struct format *fmt)
{
	const struct analysis *notes = analysis_find(r->job ? "job_notes" : "notes");
	sqlite3_stmt *stmt = NULL;
	int with_summary = 0, with_notes = 0, rc = 0, human = format_is_human(r->kind), run_summary = 0;
	char err[1024];

	for (size_t i = 0; i < r->nsections; i++) {
		with_summary |= strcmp(r->sections[i]->name, "summary") == 0 || strcmp(r->sections[i]->name, "job") == 0;
		with_notes |= r->sections[i] == notes || (r->job && strcmp(r->sections[i]->name, "notes") == 0);
		/* a run's summary for people says its notes itself (summary_text.h) */
		run_summary |= human && !r->job && strcmp(r->sections[i]->name, "summary") == 0;
	}
	if (r->job)
		db = job_db(r->job);
	if (!(human && with_notes) && !(run_summary && r->nsections == 1)) {
		rc = analysis_prepare(notes, db, &stmt, err, sizeof(err));
		if (!rc && human)
			rc = format_notes(fmt, stmt, !with_summary || run_summary, err, sizeof(err));
		if (rc) {
			db_error(db, r->job ? job_name(r->job) : r->path, "notes", err);
			goto fail;
		}
	}
	rc = format_end(fmt);
	if (rc) {
		fprintf(stderr, PROG ": cannot write the report: %s\n", strerror(-rc));
		goto fail;
	}
	if (stmt && !human) {
		rc = notes_to_stderr(stmt, err, sizeof(err));
		if (rc) {
			db_error(db, r->path, "notes", rc == -ENOMEM ? "out of memory" : err);
			goto fail;
		}
	}
	sqlite3_finalize(stmt);
	return 0;
fail:
	sqlite3_finalize(stmt);
	return -1;
}

/* Open @path as a report reads it (runview.h): the options' views, the
 * counts of --hw-flops-from for the report's own database (not --diff's).
 * Returns 0, or -1 once the error is said (the connection, if any, is in
 * *@db to close). */
static int open_run(const struct report_options *r, const char *path, sqlite3 **db)
{
	struct runview_options o = { .skip_steps = r->skip, .quiet = r->quiet,
				     .hw_flops_from = path == r->path ? r->hw_from : NULL, .dtype = r->dtype };
	char err[1024];
	int rc = runview_open(path, &o, db, err, sizeof(err));

	if (rc == -EIO)
		db_error(*db, path, "cannot read", err);
	else if (rc)
		fprintf(stderr, PROG ": %s\n", err);
	return rc ? -1 : 0;
}

static void close_run(sqlite3 *db)
{
	runview_close(db);
}

static int open_rank(void *ctx, const char *path, sqlite3 **db)
{
	return open_run(ctx, path, db);
}

/* Several databases (or a pattern), or a job section asked for. */
static int wants_job(const struct report_options *r)
{
	int yes = r->ndb > 1 || strpbrk(r->path, "*?[") != NULL;

	for (size_t i = 0; i < r->nsections; i++)
		yes |= job_is_job_section(r->sections[i]);
	return yes;
}

/* Several databases, a merged one, or a job section asked for: the report
 * of the job (job.h). Returns the exit status. */
static int job_report(const struct report_options *r)
{
	struct job_options o = { r->threshold, r->threshold_given, r->rank_given, r->rank };
	struct report_options jr = *r;
	struct format *fmt = NULL;
	char **paths = NULL, err[1024];
	size_t n = 0;
	int rc, ret = EXIT_DATA;

	if (r->dtype) {
		fprintf(stderr, PROG ": --dtype reads one run's peak for another precision; a job's ceiling is made "
			"from its ranks' recorded peaks (record the ranks with mfu-record --dtype)\n");
		return EXIT_USAGE;
	}
	rc = merge_expand(r->db_args, r->ndb, &paths, &n, err, sizeof(err));
	if (!rc)
		rc = job_open(&jr.job, paths, n, open_rank, (void *)r, &o, err, sizeof(err));
	if (rc) {
		if (rc != -ECANCELED)
			fprintf(stderr, PROG ": %s%s\n", err, overflow_hint(err));
		return rc == -EEXIST || rc == -ERANGE ? EXIT_USAGE : EXIT_DATA;
	}
	for (size_t i = 0; i < r->nsections; i++) {
		sqlite3 *db;
		const char *path, *who;

		job_section(jr.job, r->sections[i], &db, &path, &who);
		if (!db) {
			fprintf(stderr, PROG ": %s is a merged database: the %s section reads a rank's own database "
				"(" PROG " --db 'run.*.sqlite' %s)\n", path, r->sections[i]->name, r->sections[i]->name);
			ret = EXIT_USAGE;
			goto out;
		}
	}
	if (format_new(r->kind, stdout, r->nsections, &fmt)) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	format_set_raw(fmt, r->raw);
	rc = write_sections(&jr, NULL, fmt);
	if (rc == -2)
		ret = EXIT_USAGE;
	else if (rc == 0 && write_notes(&jr, NULL, fmt) == 0)
		ret = 0;
out:
	format_free(fmt);
	job_free(jr.job);
	return ret;
}

int report_sections(const struct report_options *r)
{
	struct format *fmt = NULL;
	sqlite3 *db = NULL;
	char err[1024];
	int rc, ret = EXIT_DATA;

	if (!r->html && wants_job(r))
		return job_report(r);

	/* Nothing in a report writes; make sure of it. One read transaction:
	 * every section sees the same rows, even while a recording writes.
	 * SQLite's default cache
	 * and temporary storage measured faster on a 1M-step run than a bigger
	 * cache or temp_store = MEMORY. */
	if (open_run(r, r->path, &db))
		goto out;
	if (merge_is_merged(db)) {
		/* written by mfu-report merge: the job's report */
		if (r->html) {
			/* one run's page: a rank's own file, not the job (not circular:
			 * 'run.*.sqlite' --html is refused as several runs) */
			fprintf(stderr, PROG ": %s is a merged database: --html draws one run, from one rank's own "
				"database (" PROG " --db run.0.sqlite --html FILE); the job's report is text, csv or "
				"json (" PROG " --db %s)\n", r->path, r->path);
			ret = EXIT_USAGE;
			goto out;
		}
		if (r->skip > 0) {
			fprintf(stderr, PROG ": %s is a merged database: --skip-steps reads the ranks' own databases ("
				PROG " --db 'run.*.sqlite' --skip-steps N)\n", r->path);
			ret = EXIT_USAGE;
			goto out;
		}
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
		sqlite3_close(db);
		return job_report(r);
	}
	if (r->html) {
		struct html_info info = { .db_path = r->path, .skip_steps = r->skip, .quiet = r->quiet };

		if (html_report(db, r->html, &info, err, sizeof(err)))
			fprintf(stderr, PROG ": %s\n", err);
		else
			ret = 0;
		goto out;
	}
	if (format_new(r->kind, stdout, r->nsections, &fmt)) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	format_set_raw(fmt, r->raw);
	rc = write_sections(r, db, fmt);
	if (rc == -2)
		ret = EXIT_USAGE;
	else if (rc == 0 && write_notes(r, db, fmt) == 0)
		ret = 0;
out:
	format_free(fmt);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(db);
	return ret;
}

int report_trace(const struct report_options *r)
{
	int to_stdout = strcmp(r->trace, "-") == 0, ret = EXIT_DATA, rc;
	const char *name = to_stdout ? "stdout" : r->trace;
	sqlite3 *db = NULL;
	FILE *out = NULL;
	char err[1024];

	/* the database first: a bad one leaves an existing trace file alone */
	if (open_run(r, r->path, &db))
		goto out;
	if (merge_is_merged(db)) {
		fprintf(stderr, PROG ": %s is a merged database: --trace draws one rank's run from its own "
			"database (" PROG " --db run.0.sqlite --trace FILE)\n", r->path);
		ret = EXIT_USAGE; /* as for several databases */
		goto out;
	}
	out = to_stdout ? stdout : fopen(r->trace, "w");
	if (!out) {
		fprintf(stderr, PROG ": %s: cannot write the trace: %s\n", name, strerror(errno));
		goto out;
	}
	rc = trace_write(db, out, NULL, err, sizeof(err));
	if (rc == -EIO)
		db_error(db, r->path, "--trace", err);
	else if (rc)
		fprintf(stderr, PROG ": %s: %s\n", name, err);
	else
		ret = 0;
out:
	if (out && !to_stdout && fclose(out) != 0 && ret == 0) {
		fprintf(stderr, PROG ": %s: cannot write the trace: %s\n", name, strerror(errno));
		ret = EXIT_DATA;
	}
	close_run(db);
	return ret;
}

int report_diff(const struct report_options *r)
{
	const char *paths[2] = { r->diff_base, r->diff_new };
	sqlite3 *db[2] = { NULL, NULL };
	sqlite3_stmt *stmt = NULL;
	struct format *fmt = NULL;
	struct diff *d = NULL;
	int ret = EXIT_DATA, rc;
	char err[1024];

	if (diff_new(&d)) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	if (r->fail_on && diff_fail_on(d, r->fail_on, err, sizeof(err))) {
		ret = bad_usage("--fail-on %s", err);
		goto out;
	}
	if (diff_check_columns(r->columns, err, sizeof(err))) {
		/* one line, as a section's unknown column is said */
		fprintf(stderr, PROG ": --columns: %s\n", err);
		ret = EXIT_USAGE;
		goto out;
	}
	/* both opened before either is read: a bad NEW says so at once */
	for (int side = 0; side < 2; side++)
		if (open_run(r, paths[side], &db[side]))
			goto out;
	if (format_new(r->kind, stdout, 1, &fmt)) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	format_set_raw(fmt, r->raw);
	for (int side = 0; side < 2; side++) {
		rc = diff_read(d, side, db[side], err, sizeof(err));
		if (rc) {
			db_error(db[side], paths[side], "--diff", rc == -ENOMEM ? "out of memory" : err);
			goto out;
		}
	}
	rc = diff_rows(d, &stmt, err, sizeof(err));
	if (!rc && diff_warning(d))
		fprintf(stderr, PROG ": warning: --diff: the runs differ: %s\n", diff_warning(d));
	if (!rc && format_is_human(r->kind))
		rc = format_set_verdict(fmt, diff_summary(d));
	if (!rc && format_is_human(r->kind))
		rc = format_set_columns(fmt, diff_columns(r->columns));
	if (!rc)
		rc = format_section(fmt, "diff", stmt, 0, err, sizeof(err));
	if (rc) {
		fprintf(stderr, PROG ": --diff: %s\n", rc == -EIO ? err : strerror(-rc));
		goto out;
	}
	rc = format_end(fmt);
	if (rc) {
		fprintf(stderr, PROG ": cannot write the report: %s\n", strerror(-rc));
		goto out;
	}
	rc = diff_gate(d, stderr);
	ret = rc == 1 ? EXIT_WORSE : rc ? EXIT_USAGE : 0;
out:
	sqlite3_finalize(stmt);
	format_free(fmt);
	diff_free(d);
	close_run(db[0]);
	close_run(db[1]);
	return ret;
}
