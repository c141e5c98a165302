/*
 * What the C benchmarks share: their clocks in nanoseconds and the order
 * qsort() sorts their timings in (for medians and minimums).
 */
#ifndef MFU_BENCH_CLOCK_H
#define MFU_BENCH_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Wall time (CLOCK_MONOTONIC). */
static inline uint64_t now(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* CPU time of this thread: a round preempted by another job costs nothing. */
static inline uint64_t cpu_now(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* qsort() order of doubles, ascending. */
static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

#endif
