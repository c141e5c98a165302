/*
 * Memory-controller (uncore) counters: which PMUs of this machine count DRAM
 * traffic, opening them system-wide, one per socket, and turning two
 * readings into bytes read and written (SPEC section 3, "DRAM bytes M_hw").
 *
 * Discovery reads only sysfs (a fixture tree in the tests):
 *   Intel  uncore_imc_free_running_N  read/write (server) or
 *                                     data_read/data_write (client)
 *          uncore_imc_N, uncore_imc   cas_count_read/cas_count_write,
 *                                     data_reads/data_writes (old client)
 *   AMD    amd_umc_N (Zen 4+, Linux 6.7+)  CAS commands, read/write mask
 *          amd_df (Zen 1-3)                DRAM channel data (no direction)
 * Free-running counters are preferred: they take no general counter.
 * Event encodings come from the kernel's aliases (events/NAME, with
 * NAME.scale and NAME.unit) parsed against the PMU's format/ files (pmu.h); AMD's
 * kernel exports no aliases, so its encodings come from perf's event tables
 * (tools/perf/pmu-events) and go through the same parser. docs/uncore.md
 * tells the whole story.
 *
 * An uncore PMU refuses per-task events: each event is opened with pid -1
 * on the CPU its cpumask names for that socket (die), so the counts are
 * of the whole socket, every process included.
 */
#ifndef MFU_UNCORE_H
#define MFU_UNCORE_H

#include "pmu.h"

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#define UNCORE_MAX_EVENTS 256   /* events = PMUs x sockets x directions */
#define UNCORE_MAX_SOCKETS 16
#define UNCORE_MAX_SKIPPED 16   /* skip reasons kept (more are counted) */

/* Which family of memory-controller counters the set holds. */
enum uncore_kind {
	UNCORE_KIND_NONE = 0,
	UNCORE_KIND_INTEL_FREE_RUNNING, /* uncore_imc_free_running_N */
	UNCORE_KIND_INTEL_IMC,          /* uncore_imc_N CAS counts (general counters) */
	UNCORE_KIND_AMD_UMC,            /* amd_umc_N CAS commands */
	UNCORE_KIND_AMD_DF,             /* amd_df DRAM channel data, Zen 1-3 */
};

enum uncore_dir {
	UNCORE_DIR_READ = 0,
	UNCORE_DIR_WRITE,
	UNCORE_DIR_TOTAL, /* reads and writes together (amd_df on Zen 1-3) */
	UNCORE_NDIRS,
};

struct uncore_event {
	char pmu[48];           /* "uncore_imc_0" */
	char name[48];          /* "cas_count_read" */
	char alias[160];        /* "event=0x04,umask=0x03" */
	const char *source;     /* "sysfs alias" or "perf event table" */
	enum uncore_dir dir;
	int cpu;                /* the cpumask CPU it is opened on */
	int socket;             /* index into uncore_set.socket_cpu[] */
	struct perf_event_attr attr;
	double scale;           /* counts x scale = quantity in @unit */
	char unit[16];          /* "MiB", "MB", "B", ... */
	int leader;             /* index of its group's leader (itself if it leads) */
	int fd;                 /* -1 unless open */
};

struct uncore_set {
	enum uncore_kind kind;
	int n;
	struct uncore_event ev[UNCORE_MAX_EVENTS];
	int nsockets;
	int socket_cpu[UNCORE_MAX_SOCKETS];    /* ascending; one CPU per socket (die) */
	int split;                             /* 1: read and write are counted apart */
	int complete;                          /* 0: some PMU of the chosen kind was skipped */
	int nskipped;                          /* events or PMUs left out (reasons below) */
	char skipped[UNCORE_MAX_SKIPPED][192];
	char missing[640];                     /* why there are no DRAM counters, "" if some */
	char note[512];                        /* e.g. a kernel scale that was corrected */
	int open;                              /* uncore_open succeeded */
	/* Where uncore_open reads perf_event_paranoid for its message; tests
	 * point it at a fixture. Default /proc/sys/kernel/perf_event_paranoid. */
	const char *paranoid_path;
};

/* Counts of every event of a set at one moment. */
struct uncore_reading {
	uint64_t t_ns;                          /* CLOCK_MONOTONIC, middle of the reads */
	uint64_t read_ns;                       /* how long the reads took */
	int n;                                  /* = set->n when read */
	uint64_t value[UNCORE_MAX_EVENTS];
	uint64_t enabled[UNCORE_MAX_EVENTS];    /* time_enabled of its group */
	uint64_t running[UNCORE_MAX_EVENTS];    /* time_running (< enabled: multiplexed) */
};

/* Bytes between two readings, whole machine and per socket. */
struct uncore_delta {
	double read, write;     /* bytes; NAN when !split */
	double total;           /* bytes, reads + writes */
	int nsockets;
	double socket_read[UNCORE_MAX_SOCKETS], socket_write[UNCORE_MAX_SOCKETS];
	double socket_total[UNCORE_MAX_SOCKETS];
	double running_fraction; /* least time_running / time_enabled of any event; 1 = not multiplexed */
};

/* Find the memory-controller PMUs under @sysfs_root (normally
 * "/sys/bus/event_source/devices") and plan their events into @out. A
 * machine without any (a VM) is not an error: out->kind is NONE, out->n 0
 * and out->missing says why. Events whose alias, scale or unit cannot be
 * understood are left out with a reason in out->skipped, never fatal.
 * Returns 0, or -errno when @sysfs_root cannot be read at all. */
int uncore_discover(const char *sysfs_root, struct uncore_set *out);

/* Open every planned event counting, system-wide on its socket's CPU
 * (pid -1), read and write of one PMU and CPU in one group. All or
 * nothing: on failure everything opened is closed. A set without events,
 * or one already open, is a no-op returning 0. Returns 0; -EACCES when not allowed (paranoid > 0
 * without CAP_PERFMON; @why names the fix); other -errno with @why naming
 * the event that failed. @why may be NULL. */
int uncore_open(struct uncore_set *set, char *why, size_t why_len);

/* Read all open events into @r (one read() per group). Returns 0 or -errno;
 * an unopened set gives r->n = 0 and 0. */
int uncore_read(const struct uncore_set *set, struct uncore_reading *r);

/* Bytes moved between readings @a and @b (b later), scaled for
 * multiplexing and converted with each event's scale and unit. Returns 0;
 * -EINVAL for an event with an unknown unit or readings of another set;
 * -ENODATA when an event never ran in the interval (bytes unknown). */
int uncore_delta(const struct uncore_set *set, const struct uncore_reading *a,
		 const struct uncore_reading *b, struct uncore_delta *d);

/* uncore_delta's machine-wide read and write bytes. -EOPNOTSUPP when the
 * counters do not tell reads from writes (amd_df on Zen 1-3: use
 * uncore_delta's total). */
int uncore_bytes(const struct uncore_set *set, const struct uncore_reading *a,
		 const struct uncore_reading *b, double *read_bytes, double *write_bytes);

/* Close every open event. Idempotent; the plan stays for another open. */
void uncore_close(struct uncore_set *set);

/* Bytes in one @unit ("MiB" -> 1048576, "MB" -> 1e6, "B"/"Bytes" -> 1);
 * 0 for a unit that is not a size. */
double uncore_unit_bytes(const char *unit);

/* "intel_imc_free_running", "intel_imc", "amd_umc", "amd_df", "none". */
const char *uncore_kind_name(enum uncore_kind kind);

/* One line for logs and the run's metadata, e.g. "intel_imc: 16 events on
 * 2 sockets (CPUs 0,56), read/write". Returns 0 or -ENOSPC (truncated). */
int uncore_describe(const struct uncore_set *set, char *buf, size_t len);

#endif
