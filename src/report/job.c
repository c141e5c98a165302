#include "job.h"
#include "job_peak.h"
#include "db.h"
#include "merge.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROG "mfu-report"

struct job {
	char **paths;
	size_t n;
	int file;           /* a merged file (mfu-report merge): no rank's own
			     * database is known */
	sqlite3 *rank_db;   /* the chosen rank's own database, which per-run
			     * sections read: the only rank open after the
			     * merge (a job may have more ranks than file
			     * descriptors) */
	long long *ranks;   /* the rank of each path (from job_rank) */
	sqlite3 *merged;    /* the temporary merged database, or the merged file */
	const char *name;   /* for messages: the file, or "the merged ranks" */
	int is_job;         /* several ranks, or a merged file: summary and
			     * notes show the job */
	size_t chosen;      /* the path per-run sections read */
	char rank_line[256];
};

static const char *const job_sections[] = { "job", "ranks", "job_steps", "job_notes" };

int job_is_job_section(const struct analysis *a)
{
	for (size_t i = 0; i < ARRAY_SIZE(job_sections); i++)
		if (strcmp(a->name, job_sections[i]) == 0)
			return 1;
	return 0;
}

void job_free(struct job *j)
{
	if (!j)
		return;
	merge_close(j->rank_db);
	if (j->merged && j->file)
		sqlite3_exec(j->merged, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(j->merged);
	free(j->ranks);
	merge_paths_free(j->paths, j->n);
	free(j);
}

sqlite3 *job_db(const struct job *j)
{
	return j->merged;
}

const char *job_name(const struct job *j)
{
	return j->name;
}

/* The merged database's ranks, in the order of the paths, and the rank the
 * per-run sections read with the line that says why. */
static int choose_rank(struct job *j, const struct job_options *o, char *err, size_t errlen)
{
	const struct analysis *a = analysis_find("job");
	sqlite3_stmt *st = NULL;
	long long slowest = -1, slowest_steps = 0, steps = 0;
	int rc = -EIO, found = 0;

	if (sqlite3_prepare_v2(j->merged, "SELECT rank, path FROM job_rank ORDER BY rank", -1, &st, NULL) != SQLITE_OK)
		goto sqlfail;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *p = (const char *)sqlite3_column_text(st, 1);
		for (size_t i = 0; p && !j->file && i < j->n; i++)
			if (strcmp(j->paths[i], p) == 0)
				j->ranks[i] = sqlite3_column_int64(st, 0);
		found += o->rank_given && sqlite3_column_int64(st, 0) == o->rank;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (o->rank_given && !found) {
		strbuf(err, errlen, "--rank %lld: no such rank among the merged databases (mfu-report ranks lists them)",
		       o->rank);
		return -ERANGE;
	}
	rc = analysis_prepare(a, j->merged, &st, err, errlen);
	if (rc) {
		char why[512];

		strbuf(why, sizeof(why), "%s", err);
		strbuf(err, errlen, "%s: job: %s", j->name, why);
		return rc;
	}
	rc = -EIO;
	if (sqlite3_step(st) == SQLITE_ROW) {
		for (int c = 0; c < sqlite3_column_count(st); c++) {
			const char *name = sqlite3_column_name(st, c);
			if (strcmp(name, "slowest_rank") == 0 && sqlite3_column_type(st, c) != SQLITE_NULL)
				slowest = sqlite3_column_int64(st, c);
			else if (strcmp(name, "slowest_steps") == 0)
				slowest_steps = sqlite3_column_int64(st, c);
			else if (strcmp(name, "steps") == 0)
				steps = sqlite3_column_int64(st, c);
		}
	} else if (sqlite3_errcode(j->merged) != SQLITE_DONE && sqlite3_errcode(j->merged) != SQLITE_OK) {
		goto sqlfail;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (o->rank_given) {
		slowest = o->rank;
		strbuf(j->rank_line, sizeof(j->rank_line), "rank %lld (--rank)", o->rank);
	} else if (slowest >= 0) {
		strbuf(j->rank_line, sizeof(j->rank_line), "rank %lld, the slowest in %lld of %lld common steps",
		       slowest, slowest_steps, steps);
	} else {
		slowest = !j->file ? j->ranks[0] : 0;
		strbuf(j->rank_line, sizeof(j->rank_line), "rank %lld (no step completed by every rank: the first one)",
		       slowest);
	}
	for (size_t i = 0; !j->file && i < j->n; i++)
		if (j->ranks[i] == slowest)
			j->chosen = i;
	return 0;
sqlfail:
	strbuf(err, errlen, "%s: job: %s", j->name, sqlite3_errmsg(j->merged));
	sqlite3_finalize(st);
	return -EIO;
}

/* --straggler-threshold on a merged file: a TEMP view shadows its setting. */
static int shadow_threshold(sqlite3 *db, double t, char *err, size_t errlen)
{
	char sql[160];

	/* the report's connection is query_only: lifted for the TEMP view */
	strbuf(sql, sizeof(sql),
	       "PRAGMA query_only = 0; CREATE TEMP VIEW job_setting AS SELECT 'straggler_threshold' AS name, "
	       "%.17g AS value; PRAGMA query_only = 1",
	       t);
	return db_exec(db, sql, err, errlen);
}

/* A merged file: TEMP job views (analyses/job_views.sql) over it, so its
 * job sections read this mfu's definitions (an older mfu's file has no
 * job_step), and for a file of an mfu before job_rank_peak (each host's
 * ceilings once, job_peak.h) TEMP tables of it first. */
static int job_views(sqlite3 *db, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int have, rc;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'job_rank_peak'", -1,
			       &st, NULL) != SQLITE_OK) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(db));
		return -EIO;
	}
	have = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	rc = db_exec(db, "PRAGMA query_only = 0", err, errlen) ? -EIO : 0;
	if (!rc && !have)
		rc = job_peak_tables(db, "temp", 0, err, errlen);
	if (!rc)
		rc = merge_job_view(db, "temp", err, errlen);
	if (db_exec(db, "PRAGMA query_only = 1", err, errlen) && !rc)
		rc = -EIO;
	return rc;
}

int job_open(struct job **out, char **paths, size_t n, job_open_fn open, void *ctx,
	     const struct job_options *opts, char *err, size_t errlen)
{
	struct job *j = calloc(1, sizeof(*j));
	int rc;

	*out = NULL;
	if (!j) {
		merge_paths_free(paths, n);
		strbuf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	j->paths = paths;
	j->n = n;
	j->name = n == 1 ? paths[0] : "the merged ranks";
	rc = merge_check_versions(paths, n, err, errlen);
	if (!rc)
		rc = merge_fd_check(n, err, errlen);
	if (rc)
		goto out;
	j->ranks = calloc(n ? n : 1, sizeof(*j->ranks));
	if (!j->ranks)
		goto nomem;
	if (n == 1) {
		sqlite3 *db = NULL;

		if (open(ctx, paths[0], &db)) {
			merge_close(db);
			rc = -ECANCELED;
			goto out;
		}
		if (merge_is_merged(db)) {
			/* a merged file: read as it is */
			j->merged = db;
			j->file = 1;
		} else {
			/* one rank: opened again below, like any other */
			merge_close(db);
		}
	}
	if (j->file) {
		if (opts->threshold_given && shadow_threshold(j->merged, opts->threshold, err, errlen)) {
			rc = -EIO;
			goto out;
		}
		rc = job_views(j->merged, err, errlen);
		if (rc)
			goto out;
	} else {
		/* "": a temporary database SQLite deletes on close, in memory
		 * until it grows */
		if (sqlite3_open_v2("", &j->merged, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
			goto nomem;
		rc = db_exec(j->merged, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF", err, errlen);
		if (!rc)
			rc = merge_write_each(j->merged, paths, n, open, ctx, opts->threshold, err, errlen);
		if (rc)
			goto out;
		j->name = "the merged ranks";
	}
	j->is_job = n > 1 || j->file;
	rc = choose_rank(j, opts, err, errlen);
	if (rc)
		goto out;
	if (!j->file && open(ctx, paths[j->chosen], &j->rank_db)) {
		rc = -ECANCELED;
		goto out;
	}
	*out = j;
	return 0;
nomem:
	strbuf(err, errlen, "out of memory");
	rc = -ENOMEM;
out:
	job_free(j);
	return rc;
}

const struct analysis *job_section(const struct job *j, const struct analysis *a, sqlite3 **db,
				   const char **path, const char **rank_line)
{
	*rank_line = NULL;
	if (j->is_job && strcmp(a->name, "summary") == 0)
		a = analysis_find("job");
	else if (j->is_job && strcmp(a->name, "notes") == 0)
		a = analysis_find("job_notes");
	if (job_is_job_section(a)) {
		*db = j->merged;
		*path = j->name;
		return a;
	}
	*db = j->file ? NULL : j->rank_db;
	*path = j->file ? j->name : j->paths[j->chosen];
	*rank_line = j->is_job ? j->rank_line : NULL;
	return a;
}

int job_verdict_line(const char *who, char **verdict)
{
	size_t n = strlen(who) + (*verdict ? strlen(*verdict) : 0) + 4;
	char *line = malloc(n);

	if (!line)
		return -ENOMEM;
	if (*verdict)
		snprintf(line, n, "%s: %s", who, *verdict);
	else
		snprintf(line, n, "%s.", who);
	free(*verdict);
	*verdict = line;
	return 0;
}

/* ---- mfu-report merge ---- */

static void merge_usage(FILE *out)
{
	fprintf(out,
		"usage: " PROG " merge -o FILE [--straggler-threshold PCT] DB...\n"
		"\n"
		"Merge the databases of a job's ranks (mfu-record -o run.%%r.sqlite under mpirun\n"
		"or srun) into one database FILE whose run, peak, counter, note, anomaly, step,\n"
		"phase and lib_call tables have a rank column first, with job_rank (rank, path,\n"
		"rank_from) and job_setting (straggler_threshold). mfu-report --db FILE reads\n"
		"it as a job; sqlite3 FILE < analyses/ranks.sql runs a job analysis on it.\n"
		"\n"
		"  -o, --output FILE            the merged database to write (replaced)\n"
		"  -t, --straggler-threshold PCT  a straggler's step time is more than PCT%%\n"
		"                               above the step's median (default %g)\n"
		"  -h, --help                   show this help\n"
		"\n"
		"DB: files or quoted glob patterns ('run.*.sqlite'). The ranks are run.rank,\n"
		"or the positions in this list when a run has none (a note says so).\n"
		"Exit status: 0 done, 1 a database cannot be read or merged, 2 bad usage.\n"
		"See docs/ranks.md.\n",
		100 * MERGE_THRESHOLD_DEFAULT);
}

static int merge_bad_usage(const char *msg, const char *arg)
{
	fprintf(stderr, PROG " merge: %s%s%s\nTry '" PROG " merge --help'.\n", msg, arg ? ": " : "", arg ? arg : "");
	return 2;
}

/* Open a rank's database for merge: read-only, one read transaction. */
static int merge_open(void *ctx, const char *path, sqlite3 **db)
{
	char err[1024];

	(void)ctx;
	if (db_open_readonly(path, db, err, sizeof(err)) || db_exec(*db, "PRAGMA query_only = 1; BEGIN", err, sizeof(err))) {
		fprintf(stderr, PROG " merge: %s\n", err);
		return -1;
	}
	return 0;
}

/* The merge's notes, on stderr, and what was written. */
static void merge_said(sqlite3 *db, const char *out)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db, "SELECT text FROM note WHERE rank IS NULL ORDER BY rowid", -1, &st, NULL) == SQLITE_OK)
		while (sqlite3_step(st) == SQLITE_ROW)
			fprintf(stderr, PROG " merge: note: %s\n", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM job_rank), (SELECT count(*) FROM step),"
				   " (SELECT count(*) FROM phase)", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		fprintf(stderr, PROG " merge: wrote %s: %lld ranks, %lld steps, %lld phases\n", out,
			sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2));
	sqlite3_finalize(st);
}

/* The options into @outpath and @threshold: -1 to go on, or the exit
 * status (0 after --help, 2 for bad usage). */
static int merge_args(int argc, char **argv, const char **outpath, double *threshold)
{
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "straggler-threshold", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:t:h", options, NULL)) != -1) {
		switch (opt) {
		case 'o': *outpath = optarg; break;
		case 't':
			if (merge_parse_threshold(optarg, threshold))
				return merge_bad_usage("--straggler-threshold: expected a percentage from 0 to 1000", optarg);
			break;
		case 'h': merge_usage(stdout); return 0;
		case ':': return merge_bad_usage("option needs an argument", argv[optind - 1]);
		default: return merge_bad_usage("unknown option", argv[optind - 1]);
		}
	}
	if (!*outpath || !**outpath)
		return merge_bad_usage("-o FILE names the merged database to write", NULL);
	if (optind >= argc)
		return merge_bad_usage("no database to merge (mfu-report merge -o job.sqlite 'run.*.sqlite')", NULL);
	return -1;
}

/* Is @outpath one of the databases to merge? */
static int output_is_input(const char *outpath, char *const *paths, size_t n)
{
	struct stat so, si;

	if (stat(outpath, &so) != 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (stat(paths[i], &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
			return 1;
	return 0;
}

/* An empty file beside @outpath (its name malloc'd), or NULL (said). The
 * merge is written there and renamed over FILE when complete: a failed
 * merge leaves no half database under the name. */
static char *merge_tmp(const char *outpath)
{
	size_t tlen = strlen(outpath) + 8;
	char *tmp = malloc(tlen);
	mode_t mask;
	int fd;

	if (!tmp) {
		fprintf(stderr, PROG " merge: out of memory\n");
		return NULL;
	}
	snprintf(tmp, tlen, "%s.XXXXXX", outpath);
	fd = mkstemp(tmp);
	if (fd < 0) {
		fprintf(stderr, PROG " merge: %s: cannot write: %s\n", outpath, strerror(errno));
		free(tmp);
		return NULL;
	}
	mask = umask(0);
	umask(mask);
	/* as sqlite3 would create it, not mkstemp's 0600 */
	if (fchmod(fd, 0666 & ~mask) != 0) {
		/* the merge still goes on: only the mode is mkstemp's */
	}
	close(fd);
	return tmp;
}

/* The merge written into @tmp and renamed to @outpath: 0, or -1 (said). */
static int merge_into(const char *tmp, const char *outpath, char *const *paths, size_t n, double threshold)
{
	sqlite3 *out = NULL;
	char err[1024];
	int rc, ret = -1;

	if (sqlite3_open_v2(tmp, &out, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
	    db_exec(out, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF", err, sizeof(err))) {
		fprintf(stderr, PROG " merge: %s: cannot write: %s\n", outpath, out ? sqlite3_errmsg(out) : "out of memory");
		goto out;
	}
	rc = merge_write_each(out, paths, n, merge_open, NULL, threshold, err, sizeof(err));
	if (rc) {
		if (rc != -ECANCELED)
			fprintf(stderr, PROG " merge: %s\n", err);
		goto out;
	}
	merge_said(out, outpath);
	if (sqlite3_close(out) != SQLITE_OK) {
		fprintf(stderr, PROG " merge: %s: cannot write: %s\n", outpath, sqlite3_errmsg(out));
		goto out;
	}
	out = NULL;
	if (rename(tmp, outpath) != 0) {
		fprintf(stderr, PROG " merge: %s: cannot write: %s\n", outpath, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	sqlite3_close(out);
	return ret;
}

int job_merge_main(int argc, char **argv)
{
	const char *outpath = NULL;
	double threshold = MERGE_THRESHOLD_DEFAULT;
	char **paths = NULL, *tmp = NULL, err[1024];
	size_t n = 0;
	int ret, rc;

	ret = merge_args(argc, argv, &outpath, &threshold);
	if (ret >= 0)
		return ret;
	ret = 1;
	rc = merge_expand((const char *const *)argv + optind, (size_t)(argc - optind), &paths, &n, err, sizeof(err));
	if (rc) {
		fprintf(stderr, PROG " merge: %s\n", err);
		return rc == -EEXIST ? 2 : 1;
	}
	/* a reader of the merged file would meet SQLite's side files there,
	 * and SQLite follows no link: said now, before anything is made */
	if (db_check_side_files(outpath, err, sizeof(err))) {
		fprintf(stderr, PROG " merge: %s\n", err);
		merge_paths_free(paths, n);
		return 1;
	}
	if (output_is_input(outpath, paths, n)) {
		merge_paths_free(paths, n);
		return merge_bad_usage("-o names one of the databases to merge", outpath);
	}
	if (merge_check_versions(paths, n, err, sizeof(err)) || merge_fd_check(n, err, sizeof(err))) {
		fprintf(stderr, PROG " merge: %s\n", err);
		goto out;
	}
	tmp = merge_tmp(outpath);
	if (!tmp)
		goto out;
	if (merge_into(tmp, outpath, paths, n, threshold) == 0) {
		free(tmp);
		tmp = NULL;
		ret = 0;
	}
out:
	if (tmp)
		unlink(tmp);
	free(tmp);
	merge_paths_free(paths, n);
	return ret;
}
