/* The split of wall time by what the threads did (off-CPU, code classes of
 * the cpu-clock samples) computed in C, in one scan each of the steps and
 * of the phases: what analyses/breakdown.sql, phase_breakdown.sql and
 * waterfall.sql make in SQL with an index probe of offcpu and sample per
 * step or phase occurrence, a sort of the occurrences by name, and a
 * window sort of every step begin and sample (about 4.5 s of a million
 * steps of 3 phases in SQLite 3.40, where these take 0.5 s).
 *
 * Only the common case is computed here: times, thread ids and counts that
 * are integers (or NULL where the SQL allows), sums that fit in 64 bits.
 * On anything else (an edited database's real or text times, a sum that
 * would overflow) the result is the plain SQL's, run as it is: the tables
 * run the file's own CTEs (the lines between "-- @computed:" and "-- @end"),
 * time_split_breakdown() says so and its caller runs the section. */
#ifndef MFU_REPORT_TIME_SPLIT_H
#define MFU_REPORT_TIME_SPLIT_H

#include <sqlite3.h>
#include <stdint.h>

/* The columns of the breakdown section that the HTML page sums, in this
 * order (the verdict's and the chart's). */
enum { TS_WALL, TS_BLOCKED, TS_RUNNABLE, TS_KERNEL, TS_SYNC, TS_DISPATCH, TS_UNCLASSIFIED, TS_COMPUTE,
       TS_SAMPLES, TS_NCOLS };

/* The breakdown section summed over its rows in step order, as a reader of
 * its rows sums them: each column's value as a double added in turn (NULL
 * adds nothing), how many rows have it, and the samples' integer sum. */
struct time_split_sums {
	double sum[TS_NCOLS];
	long long known[TS_NCOLS], steps, samples;
};

/* Register the eponymous virtual tables on @db:
 *   mfu_phase_split   phase_breakdown.sql's g: name, first_id, count,
 *                     wall_ns, blocked_ns, runnable_ns, n, nk, ns, nd, nu, nc
 *   mfu_step_samples  waterfall.sql's smp: step, n, nk, ns, nd, nu, nc
 * Returns 0 or -EIO. */
int time_split_register(sqlite3 *db);

/* The sums of the breakdown section's rows (analyses/breakdown.sql) into
 * @out. Returns 0; 1 when the data are not the common case (run the
 * section and sum its rows instead); -ENOMEM; or -EIO (SQLite's error:
 * the section's own run will say it). */
int time_split_breakdown(sqlite3 *db, struct time_split_sums *out);

#endif
