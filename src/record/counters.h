/*
 * The counters mfu-record opens in the target: which (the plan), opening
 * them in the child before exec, and turning two group readings into step
 * metrics.
 *
 * Group 0 holds the software events (task-clock leads; always available).
 * Group 1 holds the hardware events (cycles, instructions and this CPU's
 * FLOP events from libpfm4) when the machine has a PMU. They are separate
 * groups so that a hardware group the PMU cannot schedule never costs the
 * software counts.
 */
#ifndef MFU_COUNTERS_H
#define MFU_COUNTERS_H

#include <linux/perf_event.h>
#include <stdint.h>

#include "marker_ring.h"

#define COUNTERS_MAX MRING_MAX_COUNTERS

/* Which step/phase column a counter feeds. */
enum counter_col {
	COL_NONE = 0,
	COL_CPU_NS,
	COL_CTX_SWITCHES,
	COL_CPU_MIGRATIONS,
	COL_PAGE_FAULTS,
	COL_CYCLES,
	COL_INSTRUCTIONS,
	COL_FLOPS, /* weighted: FLOPs = value x weight */
	COL_NCOLS,
};

struct counter {
	char name[96];          /* task-clock, FP_ARITH_INST_RETIRED:SCALAR_DOUBLE, ... */
	const char *kind;       /* "software" | "hardware" */
	const char *unit;       /* "ns" | "count" */
	int group;              /* 0 or 1 */
	enum counter_col col;
	double weight;          /* FLOPs per event for COL_FLOPS */
	struct perf_event_attr attr;
	int opened;
	int user_only;          /* opened with exclude_kernel (paranoid >= 2) */
	int err;                /* errno of the failed open, 0 if opened */
	char reason[256];       /* why it is missing, "" if opened */
	char encoding[64];      /* "type:config" */
	int fd;                 /* in the recorder: its copy of the fd, else -1 */
	int index;              /* position in a record's values[], -1 if not opened */
};

struct counters {
	struct counter c[COUNTERS_MAX];
	int n;
	int nopen[2];           /* opened counters per group */
	int leader[2];          /* index of each group's leader in c[], -1 if none */
	char pmu[32];           /* libpfm4 name of the core PMU, "" if none */
	char hw_missing[320];   /* why hardware counters are missing, "" if present */
};

/* Plan the counters for this machine: the four software events, and when the
 * machine has a core PMU, cycles, instructions and the FLOP events for
 * @dtype ("fp64", "fp32", ...) that libpfm4 knows for this CPU.
 * @sysfs is normally "/sys/bus/event_source/devices" (tests pass a fixture).
 * Returns 0 or -errno. */
int counters_plan(struct counters *cs, const char *dtype, const char *sysfs);

/* In the child, before exec: open every planned counter on the calling
 * process (pid 0, inherit, enable_on_exec), group by group. A counter that
 * fails is marked with its reason; the rest go on. Retries a software event
 * with exclude_kernel when the kernel demands it (perf_event_paranoid >= 2).
 * Returns the number opened. */
int counters_open_self(struct counters *cs);

/* The counters' values laid out as in a marker record; the values of group
 * 1 are scaled by its time_enabled / time_running (multiplexing). */
struct counter_reading {
	uint64_t nr;
	uint64_t time_enabled, time_running;   /* group 0 */
	uint64_t time_enabled1, time_running1; /* group 1 */
	uint64_t values[COUNTERS_MAX];
};

/* Metrics of an interval between two readings. has[col] is 0 when that
 * column is unknown (not counted, or the readings lack values). */
struct counter_delta {
	int has[COL_NCOLS];
	double v[COL_NCOLS];
	double hw_fraction; /* time_running / time_enabled of group 1 over the interval, 1 if none */
};

/* Compute the metrics between readings @a and @b (b later). */
void counters_delta(const struct counters *cs, const struct counter_reading *a,
		    const struct counter_reading *b, struct counter_delta *d);

/* Fill @r from a marker record. */
void counters_reading_from_record(struct counter_reading *r, const struct mring_record *rec);

/* Name of a column in the step/phase tables, e.g. "cpu_ns". */
const char *counters_col_name(enum counter_col col);

#endif
