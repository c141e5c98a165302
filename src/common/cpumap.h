/*
 * CPU lists as Linux writes them ("0-3,8,10-11" in sysfs, cgroup cpusets and
 * /proc/PID/status): parsed into an ascending list of distinct CPUs, and
 * written back in that form. The one parser of the project (recorder rings,
 * uncore cpumasks, affinity and cgroup sets).
 */
#ifndef MFU_CPUMAP_H
#define MFU_CPUMAP_H

#include <stddef.h>

/* CPU numbers are below this (Linux's NR_CPUS is at most 8192 today). */
#define CPUMAP_MAX 65536

struct cpumap {
	int *cpu; /* ascending, distinct */
	int n;
};

/* Parse @list into @m (initialised by this call; cpumap_fini() it).
 * Trailing whitespace (sysfs's newline) is ignored and an empty list gives
 * n = 0; items may overlap ("0-3,2"). Returns 0, -EINVAL for a malformed
 * list or a CPU >= CPUMAP_MAX, or -ENOMEM. */
int cpumap_parse(struct cpumap *m, const char *list);

void cpumap_fini(struct cpumap *m);

/* Write @n ascending distinct CPUs as "0-3,8" into @buf. Returns 0, or
 * -ENOSPC, in which case what fits ends in "...". */
int cpumap_format(const int *cpu, int n, char *buf, size_t len);

#endif
