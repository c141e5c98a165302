/*
 * omp: an OpenMP program with a load imbalance, for the synchronization
 * class. Each step runs one parallel region of --threads threads (default
 * 2): thread 0 runs tile_sgemm() (a compute kernel by name) for --work-ms of
 * its CPU time, the others for a quarter of that, then wait at the region's
 * barrier, spinning inside libgomp when OMP_WAIT_POLICY=active. With
 * --truth FILE it writes, per step, "step wait_ns" where wait_ns is the sum
 * over the waiting threads of the time from the end of their work to the
 * end of the region (CLOCK_MONOTONIC).
 */
#include <errno.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mfu.h"

static uint64_t ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) double tile_sgemm(long us);

/* Floating-point work for @us of this thread's CPU time. */
__attribute__((noinline)) double tile_sgemm(long us)
{
	uint64_t end = ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)us * 1000;
	double x = 1.0;
	while (ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 20000; i++)
			x = x * 1.0000001 + 1e-9;
	return x;
}

static long num(const char *opt, const char *s)
{
	char *end;
	errno = 0;
	long v = strtol(s ? s : "", &end, 10);
	if (!s || !*s || *end || errno || v < 0) {
		fprintf(stderr, "omp: %s needs a non-negative integer\n", opt);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long steps = 10, work_ms = 40, threads = 2;
	FILE *truth = NULL;
	volatile double sink = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--steps")) steps = num(a, v), i++;
		else if (!strcmp(a, "--work-ms")) work_ms = num(a, v), i++;
		else if (!strcmp(a, "--threads")) threads = num(a, v), i++;
		else if (!strcmp(a, "--truth")) {
			if (!v || !(truth = fopen(v, "w"))) {
				fprintf(stderr, "omp: cannot write %s\n", v ? v : "(none)");
				return 2;
			}
			i++;
		} else {
			fprintf(stderr, "omp: unknown option %s\n", a);
			return 2;
		}
	}
	if (threads < 2) {
		fprintf(stderr, "omp: --threads must be at least 2\n");
		return 2;
	}
	for (long s = 0; s < steps; s++) {
		uint64_t done[64] = { 0 }, end, wait = 0;
		mfu_step_begin();
#pragma omp parallel num_threads((int)threads)
		{
			int t = omp_get_thread_num();
			double x = tile_sgemm(t == 0 ? work_ms * 1000 : work_ms * 250);
#pragma omp atomic
			sink += x;
			if (t < 64)
				done[t] = ns(CLOCK_MONOTONIC);
		}
		end = ns(CLOCK_MONOTONIC);
		mfu_step_end();
		for (long t = 1; t < threads && t < 64; t++)
			wait += done[t] && done[t] < end ? end - done[t] : 0;
		if (truth)
			fprintf(truth, "%ld %llu\n", s, (unsigned long long)wait);
	}
	if (truth)
		fclose(truth);
	return sink < 0;
}
