/*
 * workers: a marking thread and a worker thread that marks nothing, for the
 * process's phase timeline (a sample of a thread with no phase of its own
 * open is in the phase open on the thread that marks the steps). Each of
 * --steps steps, on the main thread:
 *
 *   step begin
 *     phase "forward":  the worker runs worker_forward()
 *     phase "backward": the worker runs worker_backward(), inside a phase
 *                       "own" of its own that it opens and closes itself
 *                       around worker_own()
 *     no phase:         the worker runs worker_outside()
 *   step end
 *   (no step)           the worker runs worker_between()
 *
 * Each worker_*() burns --work-ms of the worker's CPU time (its thread CPU
 * clock, so the amount does not depend on the machine's load);
 * worker_forward() burns it twice, with a 2 ms sleep in between. The main
 * thread hands each job over with a semaphore and waits on another until
 * the worker has returned from the function, and it opens a phase before
 * the handover and closes it after the wait: every sample of
 * worker_forward() is therefore in "forward", of worker_backward() in
 * "backward", of worker_own() in "own", and of worker_outside() and
 * worker_between() in no phase, whatever the scheduling.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mfu.h"

enum job { JOB_FORWARD, JOB_BACKWARD, JOB_OUTSIDE, JOB_BETWEEN, JOB_EXIT };

static sem_t go, done;
static enum job next_job;
static long work_us = 30000;
static volatile double sink;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Floating-point work for work_us of this thread's CPU time; inlined, so
 * that the samples' innermost function is the worker_*() that burns. */
static inline __attribute__((always_inline)) double burn(void)
{
	uint64_t end = thread_cpu_ns() + (uint64_t)work_us * 1000;
	double x = 1.0;

	while (thread_cpu_ns() < end)
		for (int i = 0; i < 20000; i++)
			x = x * 1.0000001 + 1e-9;
	return x;
}

/* One function per place, never inlined, so each sample says where it was. */
__attribute__((noinline)) double worker_forward(void);
__attribute__((noinline)) double worker_backward(void);
__attribute__((noinline)) double worker_own(void);
__attribute__((noinline)) double worker_outside(void);
__attribute__((noinline)) double worker_between(void);

/* worker_forward() also sleeps 2 ms in the middle: a blocked interval of the
 * worker that begins while "forward" is open on the main thread. */
__attribute__((noinline)) double worker_forward(void)
{
	struct timespec ms2 = { 0, 2000000 };
	double x = burn();

	nanosleep(&ms2, NULL);
	return x + burn() + 1;
}
__attribute__((noinline)) double worker_backward(void) { return burn() + 2; }
__attribute__((noinline)) double worker_own(void) { return burn() + 3; }
__attribute__((noinline)) double worker_outside(void) { return burn() + 4; }
__attribute__((noinline)) double worker_between(void) { return burn() + 5; }

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		while (sem_wait(&go) && errno == EINTR)
			;
		switch (next_job) {
		case JOB_FORWARD:
			sink += worker_forward();
			break;
		case JOB_BACKWARD:
			sink += worker_backward();
			mfu_phase_begin("own");
			sink += worker_own();
			mfu_phase_end("own");
			break;
		case JOB_OUTSIDE:
			sink += worker_outside();
			break;
		case JOB_BETWEEN:
			sink += worker_between();
			break;
		case JOB_EXIT:
			sem_post(&done);
			return NULL;
		}
		sem_post(&done);
	}
}

/* Hand @job to the worker and wait until it has finished it. */
static void run(enum job job)
{
	next_job = job;
	sem_post(&go);
	while (sem_wait(&done) && errno == EINTR)
		;
}

static long num(const char *opt, const char *s)
{
	char *end;
	errno = 0;
	long v = strtol(s ? s : "", &end, 10);
	if (!s || !*s || *end || errno || v < 0) {
		fprintf(stderr, "workers: %s needs a non-negative integer\n", opt);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long steps = 4;
	pthread_t t;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--steps"))
			steps = num(a, v), i++;
		else if (!strcmp(a, "--work-ms"))
			work_us = num(a, v) * 1000, i++;
		else {
			fprintf(stderr, "usage: workers [--steps N] [--work-ms MS]\n");
			return 2;
		}
	}
	if (sem_init(&go, 0, 0) || sem_init(&done, 0, 0) || pthread_create(&t, NULL, worker, NULL)) {
		perror("workers");
		return 1;
	}
	for (long s = 0; s < steps; s++) {
		mfu_step_begin();
		mfu_phase_begin("forward");
		run(JOB_FORWARD);
		mfu_phase_end("forward");
		mfu_phase_begin("backward");
		run(JOB_BACKWARD);
		mfu_phase_end("backward");
		run(JOB_OUTSIDE);
		mfu_step_end();
		run(JOB_BETWEEN);
	}
	run(JOB_EXIT);
	pthread_join(t, NULL);
	return 0;
}
