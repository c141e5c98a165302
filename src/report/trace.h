/* mfu-report --trace: a run as Chrome trace-event JSON, the format that
 * Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 * One JSON object {"traceEvents": [...], "displayTimeUnit": "ns",
 * "metadata": {...}}: process and thread names ("ph":"M"), every complete
 * step and phase as a complete slice ("X") on the thread that began it, a
 * step or phase that never ended as an instant ("i") at its begin, off-CPU
 * intervals as slices, per-step counters ("C": FLOP/s, utilization,
 * bytes/s, CPU utilization) and every cpu-clock sample as an instant.
 * Times are microseconds since run.start_ns, printed exactly (three
 * decimals: nanoseconds). docs/report.md lists every event and argument. */
#ifndef MFU_REPORT_TRACE_H
#define MFU_REPORT_TRACE_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* How many events of each kind trace_write() wrote. */
struct trace_counts {
	uint64_t steps;      /* complete steps: slices */
	uint64_t phases;     /* complete phases: slices */
	uint64_t incomplete; /* steps and phases that never ended: instants */
	uint64_t offcpu;     /* off-CPU intervals: slices */
	uint64_t counters;   /* counter events */
	uint64_t intervals;  /* interval readings (-I) put on the interval tracks */
	uint64_t samples;    /* cpu-clock samples: instants */
	uint64_t names;      /* process and thread name events */
};

/* Write the trace of the run database @db to @out, streaming: the rows are
 * read in one pass per table and written as they come (memory holds one
 * escaped name per sampled callchain, not the trace). Reads the tables as
 * @db shows them (the --skip-steps views included); run it inside a read
 * transaction. @counts (may be NULL) gets what was written. Returns 0,
 * -EIO with SQLite's message in @err, -ENOMEM, or -errno of a failed
 * write (@err says so). */
int trace_write(sqlite3 *db, FILE *out, struct trace_counts *counts, char *err, size_t errlen);

#endif
