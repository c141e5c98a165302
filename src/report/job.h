/* The job view of mfu-report: several ranks' databases (or one merged by
 * mfu-report merge) read as one job.
 *
 * job_open() merges the ranks' databases into a temporary database
 * (merge.h) on which the job sections run (job, ranks, job_steps,
 * job_notes; summary and notes show job and job_notes then); every other
 * section reads one rank's own database: the rank that was the slowest in
 * the most common steps, or the one --rank names. */
#ifndef MFU_REPORT_JOB_H
#define MFU_REPORT_JOB_H

#include "analysis.h"

#include <sqlite3.h>
#include <stddef.h>

struct job;

/* Opens one rank's database for reading as the report reads it (its
 * --skip-steps and --quiet views, one read transaction). Returns 0, or -1
 * once it has said why (the connection, if any, is in *@db to close). */
typedef int (*job_open_fn)(void *ctx, const char *path, sqlite3 **db);

/* How to read a job. */
struct job_options {
	double threshold; /* straggler threshold, a fraction (0.10) */
	int threshold_given;
	int rank_given;   /* --rank: per-run sections read this rank */
	long long rank;
};

/* Read @paths (@n, expanded by merge_expand; the job takes them over) as a
 * job: one merged database given alone is read as it is, else the paths
 * are merged, each opened with @open in turn and closed (merge.h), and the
 * chosen rank's is opened again for the per-run sections: two connections
 * open, however many ranks. Returns 0; -ECANCELED when @open failed
 * (said already); -ERANGE when opts->rank is not a rank of the job; else
 * -errno with @err saying why (merge_write's refusals: -EINVAL, -EPROTO). */
int job_open(struct job **out, char **paths, size_t n, job_open_fn open, void *ctx,
	     const struct job_options *opts, char *err, size_t errlen);

/* 1 for the sections that read the merged database (job, ranks,
 * job_steps, job_notes). */
int job_is_job_section(const struct analysis *a);

/* Where section @a of the job comes from: the analysis to run (summary:
 * job, notes: job_notes, else @a) and the database (*@db; NULL when @a
 * needs a rank's own database and the job is a merged file) and its file
 * name (*@path). *@rank_line gets "rank N (...)" for per-rank sections,
 * NULL for the job's own. */
const struct analysis *job_section(const struct job *j, const struct analysis *a, sqlite3 **db,
				   const char **path, const char **rank_line);

/* Put "@who: " before the verdict in *@verdict (malloc'd, may be NULL:
 * then "@who."). Returns 0 or -ENOMEM. */
int job_verdict_line(const char *who, char **verdict);

/* The merged database and its name for messages. */
sqlite3 *job_db(const struct job *j);
const char *job_name(const struct job *j);

/* Close every database and free @j; NULL is fine. */
void job_free(struct job *j);

/* mfu-report merge -o FILE [--straggler-threshold PCT] DB...: write the
 * merged database to FILE. @argv[0] is "merge". Returns the exit status. */
int job_merge_main(int argc, char **argv);

#endif
