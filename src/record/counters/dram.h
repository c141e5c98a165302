/*
 * DRAM traffic of a recording: the uncore memory-controller counters
 * (uncore.h), read by the recorder every few milliseconds into the
 * uncore_sample table (cumulative bytes per socket), and attributed to steps
 * and phases when the recording ends by interpolating those curves at their
 * boundaries. The counters are system-wide: they see every process on the
 * machine, which docs/metrics.md says.
 */
#ifndef MFU_DRAM_H
#define MFU_DRAM_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

struct dram;

/* Discover and open the memory-controller counters under @sysfs. Returns 0
 * with *out set, or -errno (-ENODEV: no memory-controller PMU, -EACCES: not
 * allowed) with @why saying why and what to do; recording goes on without. */
int dram_open(struct dram **out, const char *sysfs, uint64_t interval_ns, char *why, size_t whylen);

/* Take a reading if @interval_ns passed since the last one (always when
 * @force) and store it. Returns 0 or -errno (a database error). */
int dram_sample(struct dram *d, sqlite3 *db, uint64_t now_ns, int force);

void dram_close(struct dram *d);

/* Fill dram_read_bytes, dram_write_bytes and dram_bytes of every complete
 * step and phase from the uncore_sample table, by linear interpolation of
 * the cumulative bytes (all sockets) at the boundaries. Intervals outside
 * the sampled span stay NULL. Needs no hardware: tests call it on a made-up
 * table. Returns 0 or -errno with @why set. */
int dram_attribute(sqlite3 *db, char *why, size_t whylen);

/* Linear interpolation of the cumulative curve (@t ascending, @n >= 2) at
 * @x; NAN outside [t[0], t[n-1]]. @hint speeds up ascending queries (start
 * at 0). Exposed for tests. */
double dram_interp(const uint64_t *t, const double *cum, size_t n, uint64_t x, size_t *hint);

#endif
