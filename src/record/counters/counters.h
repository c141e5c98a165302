/*
 * The counters mfu-record opens in the target: which (the plan), opening
 * them in the child before exec, and turning two readings into step metrics.
 *
 * Group 0 holds the software events (task-clock leads; always available).
 * Groups 1.. hold hardware events when the machine has a PMU: cycles,
 * instructions and reference cycles (fixed counters on Intel) in one group,
 * then the FLOP events of every precision, at most COUNTER_GROUP_MAX per
 * group so that each group fits the general-purpose counters of an SMT
 * thread, then AMX and user events. Groups that do not fit the PMU together
 * are time-shared by the kernel (multiplexing); each group's values are
 * scaled by its own time_enabled / time_running, and the share of time the
 * hardware groups counted is kept with every step.
 */
#ifndef MFU_COUNTERS_H
#define MFU_COUNTERS_H

#include <linux/perf_event.h>
#include <stdint.h>
#include <sys/types.h>

#include "marker_ring.h"

#define COUNTERS_MAX 40
#define COUNTER_GROUP_MAX 4 /* hardware events per group */

/* Which step/phase column a counter feeds. */
enum counter_col {
	COL_NONE = 0,       /* stored in step_counter only (user events) */
	COL_CPU_NS,
	COL_CTX_SWITCHES,
	COL_CPU_MIGRATIONS,
	COL_PAGE_FAULTS,
	COL_CYCLES,
	COL_INSTRUCTIONS,
	COL_REF_CYCLES,
	COL_FLOPS_FP64,     /* FLOPs = value x weight (lanes) */
	COL_FLOPS_FP32,
	COL_FLOPS_FP16,
	COL_FLOPS_ANY,      /* FLOPs of every precision (AMD) */
	COL_AMX_OPS,        /* AMX operations: not FLOPs, reported apart */
	COL_NCOLS,
};

struct counter {
	char name[96];          /* task-clock, FP_ARITH_INST_RETIRED:SCALAR_DOUBLE, ... */
	const char *kind;       /* "software" | "hardware" | "user" | "emulated" */
	const char *unit;       /* "ns" | "count" */
	char pmu[32];           /* libpfm4 PMU name for hardware events, "" otherwise */
	int group;              /* 0 .. MRING_MAX_GROUPS-1 */
	enum counter_col col;
	double weight;          /* FLOPs per event for the FLOP columns */
	struct perf_event_attr attr;
	int opened;
	int user_only;          /* opened with exclude_kernel (paranoid >= 2) */
	int err;                /* errno of the failed open, 0 if opened */
	char reason[256];       /* why it is missing, "" if opened */
	char encoding[80];      /* "type:config[:config1]" */
	int fd;                 /* in the recorder: its copy of the fd, else -1 */
	int word;               /* position of its value in a record's data[], -1 if not opened */
	int emulated;           /* counted by the FP-op emulator (mfu_emulate.h), not by
				 * perf: no fd; libmfu fills its group by a client request */
};

struct counters {
	struct counter c[COUNTERS_MAX];
	int n;
	int ngroups;                       /* groups planned */
	int leader[MRING_MAX_GROUPS];      /* index of each group's leader in c[], -1 if none */
	uint8_t group_nr[MRING_MAX_GROUPS];     /* opened counters per group */
	uint8_t group_offset[MRING_MAX_GROUPS]; /* first word of each group in data[] */
	char pmu[32];           /* libpfm4 name of the (first) core PMU, "" if none */
	int forced;             /* the PMU comes from LIBPFM_FORCE_PMU, not from this machine */
	char hw_missing[320];   /* why hardware counters are missing, "" if present */
	char amx_note[200];     /* set when AMX is present: its FLOPs are not in FP_ARITH */
	int emulated_group;     /* the group the FP-op emulator fills (--emulate); 0 when
				 * none (group 0 always holds the software events) */
};

/* Plan the counters for this machine: the four software events, and when
 * the machine has a core PMU (or LIBPFM_FORCE_PMU names one, for listing),
 * cycles, instructions, reference cycles and the FLOP events of every
 * precision libpfm4 knows for it, then the @nuser user events (libpfm4 names
 * such as "INST_RETIRED:ANY" or "pmu::EVENT", or sysfs "pmu/event/").
 * @sysfs is normally "/sys/bus/event_source/devices" (tests pass a fixture).
 * Returns 0, or -EINVAL with @why set when a user event is unknown. */
int counters_plan(struct counters *cs, const char *sysfs, const char *const *user, int nuser,
		  char *why, size_t whylen);

/* --emulate: replace the hardware events of a plan by the FP-op
 * emulator's counts (mfu_emulate.h), in one group that libmfu fills at every
 * boundary with a client request: FP_ARITH-style counts per precision and
 * vector width (FLOP columns, weighted by lanes), x87 operations and the
 * guest instructions (the instructions column). Returns 0, or -EINVAL with
 * @why set when the plan has user events (they would count the emulator). */
int counters_plan_emulated(struct counters *cs, char *why, size_t whylen);

/* In the child, before exec: open every planned counter on the calling
 * process (pid 0, inherit, enable_on_exec), group by group. A counter that
 * fails is marked with its reason; the rest go on. Retries an event with
 * exclude_kernel when the kernel demands it (perf_event_paranoid >= 2).
 * Then lays out the groups' readings (group_nr, group_offset, word).
 * Returns the number opened. */
int counters_open_self(struct counters *cs);

/* Attaching to a running process: open the plan on its thread @tid (with
 * inherit: the threads it creates are counted too), counting at once;
 * fills the fds and the layout like counters_open_self. Returns the
 * number opened. */
int counters_open_task(struct counters *cs, pid_t tid);

/* Open on thread @tid the counters that opened on the first thread
 * (counters_open_task), group by group: @fds[i] per counter (-1 if not
 * open), @leaders[g] per group (-1 when the group could not be opened
 * whole there). Returns the number of groups opened, or -ESRCH when the
 * thread is gone. */
int counters_open_like(const struct counters *cs, pid_t tid, int *fds, int *leaders);

/* One reading of all groups, as in a marker record's data[]. */
struct counter_reading {
	uint16_t ngroups;
	uint64_t data[MRING_DATA_WORDS];
	int has_lib;                    /* the marker read lib[] (MRING_F_LIB) */
	uint64_t lib[MRING_LIB_WORDS];  /* library-call counts (libflops.h) */
	uint64_t lib_snap;              /* per-function snapshot id, 0: none */
};

/* Metrics of an interval between two readings. has[col] is 0 when that
 * column is unknown (not counted, or a reading lacks the group). */
struct counter_delta {
	int has[COL_NCOLS];
	double v[COL_NCOLS];
	int known[COUNTERS_MAX];     /* per counter: raw and scaled are valid */
	uint64_t raw[COUNTERS_MAX];  /* value difference as counted */
	double scaled[COUNTERS_MAX]; /* raw x time_enabled / time_running of its group */
	double hw_fraction;          /* smallest time_running/time_enabled of the hardware
				      * groups over the interval; -1 without hardware groups */
	int has_lib;                 /* both readings had library-call counts */
	uint64_t lib[MRING_LIB_WORDS]; /* their difference: calls, FLOPs per precision */
};

void counters_delta(const struct counters *cs, const struct counter_reading *a,
		    const struct counter_reading *b, struct counter_delta *d);

/* Read counter group @g through its leader @fd (PERF_FORMAT_GROUP) and add
 * the reading into @acc: sums over threads or processes read apart. The one
 * group read of the recorder (the markers read inside the target).
 * Returns 0, or -EIO for a short read or a group of another size (@acc is
 * then unchanged). */
int counters_read_group(const struct counters *cs, int g, int fd, struct counter_reading *acc);

/* Fill @r from a marker record. */
void counters_reading_from_record(struct counter_reading *r, const struct mring_record *rec);

/* Name of a column in the step/phase tables, e.g. "cpu_ns"; NULL for COL_NONE. */
const char *counters_col_name(enum counter_col col);

/* Counted FLOPs of every precision in @d (the hw_flops column), or -1 when
 * no FLOP counter was known over the interval. */
double counters_hw_flops(const struct counter_delta *d);

#endif
