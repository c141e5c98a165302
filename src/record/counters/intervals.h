/*
 * Intervals: the recorder's own readings of the target's counter groups,
 * every -I milliseconds, into the interval_reading table (cumulative values,
 * like `perf stat -I` before differencing), and the counts of steps and
 * phases whose boundaries came from probes, interpolated from them.
 *
 * A probe boundary (a uprobe hit) has a time but no counter reading: the
 * target does not read its counters there. Its counts are interpolated
 * linearly between the two readings around it. Because counters only grow,
 * the true value at time t lies between those two readings, which bounds
 * the error: the count of an interval is at least the difference of the
 * inner readings (upper reading at the begin, lower at the end) and at most
 * the difference of the outer ones; *_err is the larger distance from the
 * interpolated value to either. A workload whose rate is constant across a
 * reading period is interpolated exactly.
 *
 * With the groups it reads the library calls of every process of the target
 * (lib_counts.h) into lib_reading, at the same times: the intervals of a
 * run without steps get their library FLOPs from these.
 *
 * A reading sums one or more sources: in a launched target, the process-wide
 * inherited groups whose fds the recorder holds; attached to a running
 * process (mfu-record -p), one set of groups per thread.
 */
#ifndef MFU_INTERVALS_H
#define MFU_INTERVALS_H

#include <sqlite3.h>
#include <stdint.h>

#include "counters.h"
#include "record/db/writer.h"

struct intervals;

/* Prepare readings of @cs's groups every @period_ns into @db. No source is
 * read until intervals_add_source(). Returns 0 or -ENOMEM / -EIO. */
int intervals_new(struct intervals **out, sqlite3 *db, const struct counters *cs, uint64_t period_ns);
void intervals_free(struct intervals *iv);

/* Add one set of group fds to sum: @leader_fd[g] is group g's leader (-1:
 * group not open there). The fds stay the caller's. Returns 0 or -ENOMEM. */
int intervals_add_source(struct intervals *iv, const int *leader_fd);

struct lib_counts;
/* Read @lc (the library calls of the whole target, lib_counts.h) with
 * every reading, into lib_reading at the same time_ns; with no group
 * source, the library calls alone. @lc stays the caller's. Returns 0 or
 * -EIO. */
int intervals_set_lib(struct intervals *iv, struct lib_counts *lc);

/* Store a reading of every source at @time_ns with the given values (all
 * zero: before the counters were enabled), without reading anything. For
 * the lower bound at the target's exec. Returns 0 or -errno. */
int intervals_store_zero(struct intervals *iv, uint64_t time_ns);

/* Read and store when @period_ns passed since the last reading, or always
 * with @force. Returns 0 or -errno (database error; a source whose read
 * fails is left out of that reading and counted). */
int intervals_sample(struct intervals *iv, int force);

/* Readings stored so far, and reads that failed. */
uint64_t intervals_count(const struct intervals *iv);
uint64_t intervals_failed_reads(const struct intervals *iv);

/*
 * Fill the counts of every complete step and phase whose counts are
 * 'interpolated', from interval_reading, through @w (writer_step_counts /
 * writer_phase_counts). @cs gives the counters' groups and layout as when
 * the readings were stored. A boundary outside the read span leaves that
 * row's counts NULL. Returns 0 or -errno with @why set.
 */
int intervals_attribute(sqlite3 *db, const struct counters *cs, struct writer *w, char *why, size_t whylen);

/* One interpolated boundary, for tests: the reading at @t between the
 * stored readings @lo (at @t_lo) and @hi (at @t_hi), t_lo <= t <= t_hi. */
void intervals_interp(const struct counters *cs, const struct counter_reading *lo, uint64_t t_lo,
		      const struct counter_reading *hi, uint64_t t_hi, uint64_t t, struct counter_reading *out);

#endif
