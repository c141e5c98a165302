/* Merging the ranks of a job: several run databases as one.
 *
 * merge_write() copies the per-run tables of each rank's database (run,
 * peak, counter, note, anomaly, step, phase, lib_call) into one database,
 * every row with a leading rank column, and adds job_rank (one row per
 * merged database: its rank, file and where the rank came from) and
 * job_setting (the straggler threshold). The job analyses
 * (analyses/job*.sql, ranks.sql) run on it: mfu-report with several --db
 * merges into a temporary database, mfu-report merge -o into a file for
 * SQL users. docs/ranks.md describes the result. */
#ifndef MFU_REPORT_MERGE_H
#define MFU_REPORT_MERGE_H

#include <sqlite3.h>
#include <stddef.h>

/* A rank is a straggler in a step when its step time exceeds the median of
 * the ranks' times in that step by more than this fraction. */
#define MERGE_THRESHOLD_DEFAULT 0.10

/* The databases named by @patterns (@n of them), in order: a pattern with
 * '*', '?' or '[' is expanded by glob(3) (sorted), any other is taken as it
 * is. *@paths gets a malloc'd array of malloc'd names (merge_paths_free).
 * Returns 0; -ENOENT when a pattern matches nothing; -EEXIST when two
 * names are the same file; -ENOMEM. @err says which. */
int merge_expand(const char *const *patterns, size_t n, char ***paths, size_t *npaths, char *err,
		 size_t errlen);

void merge_paths_free(char **paths, size_t n);

/* The schema versions of @paths (PRAGMA user_version, from each file's
 * header) must be equal: -EPROTO with both files and versions in @err
 * when not. A file whose header cannot be read is left to the opening. */
int merge_check_versions(char *const *paths, size_t n, char *err, size_t errlen);

/* Enough file descriptors to read @nfiles databases one at a time (the
 * merge never holds more than two open)? The soft limit is raised to the
 * hard one when it is short. 0, or -EMFILE with a line naming the limit
 * (ulimit -n) and @nfiles in @err. */
int merge_fd_check(size_t nfiles, char *err, size_t errlen);

/* 1 if @db is a merged database (it has the job_rank table), else 0. */
int merge_is_merged(sqlite3 *db);

/* Create the views the job sections read (analyses/job_views.sql:
 * job_rank_step, job_step) in @schema ("temp", or "main" to store them in
 * a merged file), in a merged database that has job_rank_peak
 * (job_peak.h). Returns 0, -ENOMEM, -ENOENT or -EIO (@err). */
int merge_job_view(sqlite3 *db, const char *schema, char *err, size_t errlen);

/* Parse a straggler threshold: a percentage ("10", "10%", "2.5") into a
 * fraction (0.10). 0 or -EINVAL (not a number from 0 to 1000). */
int merge_parse_threshold(const char *s, double *out);

struct merge_input {
	const char *path; /* for messages and job_rank.path */
	sqlite3 *db;      /* the rank's database, open for reading */
};

/* Opens the database at @path for reading as the merge reads it (one read
 * transaction): 0, or -1 once it has said why (the connection, if any, in
 * *@db to close). */
typedef int (*merge_open_fn)(void *ctx, const char *path, sqlite3 **db);

/* Ends @db's read transaction and closes it; NULL is fine. */
void merge_close(sqlite3 *db);

/* Copy the @n runs of @in into @out (an empty database, written in one
 * transaction) with @threshold as job_setting's straggler_threshold. The
 * ranks are run.rank when every run has one (distinct), else the positions
 * in @in (a note says so). Notes on the merge (rank IS NULL in the note
 * table): ranks by position, different step counts, arguments, job ids or
 * a world size other than @n. Refuses (-EINVAL, @err says why) runs of
 * different programs (run.command's argv[0]), emulated runs with native
 * ones (run.emulated), a rank found twice, and an
 * input that is itself a merged database. Returns 0, -EINVAL, -ENOMEM, or
 * -EIO with SQLite's message in @err. */
int merge_write(sqlite3 *out, const struct merge_input *in, size_t n, double threshold, char *err,
		size_t errlen);

/* merge_write() of the databases @paths, each opened with @open when it is
 * read and closed before the next: one is open at a time, however many
 * ranks the job has (each is read twice: what the run is, then its rows).
 * Returns what merge_write() returns, or -ECANCELED when @open failed (it
 * said why). */
int merge_write_each(sqlite3 *out, char *const *paths, size_t n, merge_open_fn open, void *ctx, double threshold,
		     char *err, size_t errlen);

#endif
