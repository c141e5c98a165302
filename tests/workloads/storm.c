/*
 * storm: marker boundaries as fast as possible (or at a given rate), from
 * several threads, for the drain benchmark and the ring-overflow test.
 *
 *   --threads T   threads marking at once (default 1)
 *   --steps N     steps per thread (2 boundaries each; default 100000)
 *   --rate R      total boundaries per second to aim for (0: unthrottled)
 *   --seconds S   stop marking after S seconds, even before --steps
 *                 (the boundaries made are said on stderr)
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mfu.h"

static long steps = 100000, nthreads = 1;
static double rate, seconds;
static long done[256];

static uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *run(void *arg)
{
	/* each thread paces itself at rate / nthreads boundaries per second */
	double per_ns = rate > 0 ? rate / (double)nthreads / 1e9 : 0;
	uint64_t start = now(), stop = seconds > 0 ? start + (uint64_t)(seconds * 1e9) : UINT64_MAX;
	long i;
	for (i = 0; i < steps; i++) {
		if ((i & 1023) == 0 && now() >= stop)
			break;
		if (per_ns > 0) {
			uint64_t due = start + (uint64_t)((double)(2 * i) / per_ns);
			while (now() < due)
				;
		}
		mfu_phase_begin("tick");
		mfu_phase_end("tick");
	}
	done[(long)arg] = i;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t tids[256];
	for (int i = 1; i + 1 < argc; i += 2) {
		char *end;
		errno = 0;
		double v = strtod(argv[i + 1], &end);
		if (*end || errno || v < 0) {
			fprintf(stderr, "storm: bad value for %s\n", argv[i]);
			return 2;
		}
		if (!strcmp(argv[i], "--threads")) nthreads = (long)v;
		else if (!strcmp(argv[i], "--steps")) steps = (long)v;
		else if (!strcmp(argv[i], "--rate")) rate = v;
		else if (!strcmp(argv[i], "--seconds")) seconds = v;
		else {
			fprintf(stderr, "storm: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 256) {
		fprintf(stderr, "storm: --threads must be 1..256\n");
		return 2;
	}
	uint64_t t0 = now();
	for (long t = 0; t < nthreads; t++)
		pthread_create(&tids[t], NULL, run, (void *)t);
	for (long t = 0; t < nthreads; t++)
		pthread_join(tids[t], NULL);
	double secs = (double)(now() - t0) / 1e9;
	long n = 0;
	for (long t = 0; t < nthreads; t++)
		n += 2 * done[t];
	struct timespec cpu;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	fprintf(stderr, "storm: %ld boundaries in %.3f s (%.0f per second), %.3f s of CPU\n", n, secs, (double)n / secs,
		(double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9);
	return 0;
}
