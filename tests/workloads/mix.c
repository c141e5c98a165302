/*
 * mix: steps whose time splits in known ways, for the breakdown tests. Each
 * step, in the main thread:
 *   phase "load":    sleep --sleep-ms (blocked off-CPU)
 *   phase "compute": toy_sgemm() spins --compute-ms of thread CPU time
 *                    (its name matches the built-in compute patterns), then
 *                    toy_dispatch() copies memory with memcpy for
 *                    --dispatch-ms (a runtime layer: copies), then
 *                    toy_user() spins in its own loop for --user-ms (the
 *                    program's own code: unclassified)
 * and between steps it sleeps --pause-ms. With --truth FILE it writes, per
 * step, "step compute_ns dispatch_ns sleep_ns pause_ns user_ns" measured with
 * its own clocks (CLOCK_THREAD_CPUTIME_ID inside the functions,
 * CLOCK_MONOTONIC around the sleeps).
 */
#include <errno.h>
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

static volatile double sink;

/* Spin for @ms of this thread's CPU time doing floating-point work; returns
 * the CPU time used. noinline: each must be its own frame in the samples. */
static __attribute__((noinline)) uint64_t spin(long ms)
{
	uint64_t t0 = ns(CLOCK_THREAD_CPUTIME_ID), end = t0 + (uint64_t)ms * 1000000;
	double x = 1.0;
	while (ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 200000; i++)
			x = x * 1.0000001 + 1e-9;
	sink = x;
	return ns(CLOCK_THREAD_CPUTIME_ID) - t0;
}

__attribute__((noinline)) uint64_t toy_sgemm(long ms);
__attribute__((noinline)) uint64_t toy_dispatch(long ms);
__attribute__((noinline)) uint64_t toy_user(long ms);

__attribute__((noinline)) uint64_t toy_sgemm(long ms)
{
	uint64_t r = spin(ms);
	__asm__ volatile("" ::: "memory"); /* keep this frame */
	return r;
}

/* Called through a volatile pointer: the compiler can neither inline nor
 * drop the copies, so the samples land in libc's memcpy. */
static void *(*volatile copy)(void *, const void *, size_t) = memcpy;

__attribute__((noinline)) uint64_t toy_dispatch(long ms)
{
	static char a[128 << 10], b[128 << 10];
	uint64_t t0 = ns(CLOCK_THREAD_CPUTIME_ID), end = t0 + (uint64_t)ms * 1000000;

	if (!ms)
		return 0;
	while (ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 16; i++)
			copy(i & 1 ? a : b, i & 1 ? b : a, sizeof(a));
	return ns(CLOCK_THREAD_CPUTIME_ID) - t0;
}

/* The loop is this function's own code (no call but the clock), as a
 * program's inlined math would be. */
__attribute__((noinline)) uint64_t toy_user(long ms)
{
	uint64_t t0 = ns(CLOCK_THREAD_CPUTIME_ID), end = t0 + (uint64_t)ms * 1000000;
	double x = 1.0;

	if (!ms)
		return 0;
	while (ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 200000; i++)
			x = x * 1.0000001 + 1e-9;
	sink = x;
	return ns(CLOCK_THREAD_CPUTIME_ID) - t0;
}

static uint64_t sleep_ms(long ms)
{
	uint64_t t0 = ns(CLOCK_MONOTONIC);
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return ns(CLOCK_MONOTONIC) - t0;
}

static long num(const char *opt, const char *s)
{
	char *end;
	errno = 0;
	long v = strtol(s ? s : "", &end, 10);
	if (!s || !*s || *end || errno || v < 0) {
		fprintf(stderr, "mix: %s needs a non-negative integer\n", opt);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long steps = 10, sleep_for = 20, compute = 30, dispatch = 10, pause = 0, user = 0;
	FILE *truth = NULL;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--steps")) steps = num(a, v), i++;
		else if (!strcmp(a, "--sleep-ms")) sleep_for = num(a, v), i++;
		else if (!strcmp(a, "--compute-ms")) compute = num(a, v), i++;
		else if (!strcmp(a, "--dispatch-ms")) dispatch = num(a, v), i++;
		else if (!strcmp(a, "--pause-ms")) pause = num(a, v), i++;
		else if (!strcmp(a, "--user-ms")) user = num(a, v), i++;
		else if (!strcmp(a, "--truth")) {
			if (!v || !(truth = fopen(v, "w"))) {
				fprintf(stderr, "mix: cannot write %s\n", v ? v : "(none)");
				return 2;
			}
			i++;
		} else {
			fprintf(stderr, "mix: unknown option %s\n", a);
			return 2;
		}
	}
	for (long s = 0; s < steps; s++) {
		uint64_t c, d, u, sl, p = 0;
		mfu_step_begin();
		mfu_phase_begin("load");
		sl = sleep_for ? sleep_ms(sleep_for) : 0;
		mfu_phase_end("load");
		mfu_phase_begin("compute");
		c = toy_sgemm(compute);
		d = toy_dispatch(dispatch);
		u = toy_user(user);
		mfu_phase_end("compute");
		mfu_step_end();
		if (pause && s + 1 < steps)
			p = sleep_ms(pause);
		if (truth)
			fprintf(truth, "%ld %llu %llu %llu %llu %llu\n", s, (unsigned long long)c,
				(unsigned long long)d, (unsigned long long)sl, (unsigned long long)p,
				(unsigned long long)u);
	}
	if (truth)
		fclose(truth);
	return 0;
}
