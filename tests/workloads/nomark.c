/*
 * nomark: a program without markers (it does not link libmfu), for steps
 * taken from probes. It reads its own clocks around every call so tests can
 * compare the recorder's steps with the program's own view.
 *
 *   --calls N        call train_step() N times (default 10)
 *   --busy-us US     inside train_step: spin this long (CLOCK_MONOTONIC)
 *   --sleep-us US    inside train_step: sleep this long, in phase function
 *                    load_batch()
 *   --gap-us US      sleep this long between calls
 *   --threads T      make the calls in T threads at once (N each)
 *   --usdt           also fire nomark:iter_begin / nomark:iter_end around
 *                    each call; both are guarded by semaphores, and the
 *                    program prints "usdt fired K" (calls that saw a
 *                    semaphore set)
 *   --plugin LIB     dlopen LIB after --plugin-delay-us (default 100000),
 *                    wait --after-dlopen-us, and call its plugin_step() N
 *                    times (each spinning --busy-us)
 *   --wait-probed-us US  after the dlopen, wait up to US for a uprobe on
 *                    plugin_step (on x86, its breakpoint in the process's
 *                    own copy of the code) before the first call: the
 *                    recorder's reaction to the new mapping, however busy
 *                    the machine (elsewhere: sleep US)
 *   --clock FILE     write "call t_before t_after cpu_before cpu_after
 *                    delay_outside delay_load" per call of train_step (or
 *                    plugin_step): CLOCK_MONOTONIC and the thread's
 *                    CLOCK_THREAD_CPUTIME_ID, and how long the thread waited
 *                    for a CPU (run_delay.h) between its readings and the
 *                    function's entry and return (for plugin_step: during
 *                    the whole call) and inside load_batch, around its
 *                    sleep (a late wakeup), ns
 *   --ready FILE     write the pid to FILE once started (for attaching)
 *   --start-delay-us US  in every thread, wait this long before the first call
 *   --wait-for FILE  before any call, wait until FILE exists (a test attaches
 *                    first, then creates it)
 * At the end it prints "calls K" (calls made) and exits 0.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run_delay.h"

__extension__ volatile unsigned short nomark_iter_begin_semaphore __attribute__((unused, section(".probes")));
__extension__ volatile unsigned short nomark_iter_end_semaphore __attribute__((unused, section(".probes")));

static long calls = 10, busy_us, sleep_us_, gap_us, nthreads = 1, start_delay_us;
static long plugin_delay_us = 100000, after_dlopen_us, wait_probed_us;
static int usdt;
static const char *plugin;
static FILE *clock_file;
static pthread_mutex_t clock_lock = PTHREAD_MUTEX_INITIALIZER;
static long made, fired;
volatile long nomark_sink;
/* the run delay inside train_step, just after its entry and just before
 * its return (read only with --clock) */
static __thread uint64_t delay_entry, delay_return, delay_load;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_for_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

__attribute__((noinline)) void load_batch(void);
__attribute__((noinline)) void load_batch(void)
{
	uint64_t d0 = clock_file ? run_delay_ns() : 0;

	if (sleep_us_)
		sleep_for_us(sleep_us_);
	if (clock_file)
		delay_load = run_delay_ns() - d0;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void train_step(long i);
__attribute__((noinline)) void train_step(long i)
{
	if (clock_file)
		delay_entry = run_delay_ns();
	uint64_t end = clock_ns(CLOCK_MONOTONIC) + (uint64_t)busy_us * 1000;
	long s = 0;

	load_batch();
	while (clock_ns(CLOCK_MONOTONIC) < end)
		s += i;
	nomark_sink += s;
	if (clock_file)
		delay_return = run_delay_ns();
	__asm__ volatile("" ::: "memory");
}

/* Wait up to @us for the recorder's uprobe on @fn: the kernel writes its
 * breakpoint into the process's copy of the code page, so the process sees
 * it (x86: int3 at the probed address, which is the function's entry, or
 * just after an endbr64). Returns 1 once seen, 0 at the deadline (or where
 * it cannot be seen: then it slept @us). */
static int wait_probed(const void *fn, long us)
{
	uint64_t end = clock_ns(CLOCK_MONOTONIC) + (uint64_t)us * 1000;

#if defined(__x86_64__) || defined(__i386__)
	const volatile unsigned char *code = fn;
	do {
		if (code[0] == 0xcc || code[4] == 0xcc)
			return 1;
		sleep_for_us(1000);
	} while (clock_ns(CLOCK_MONOTONIC) < end);
	return 0;
#else
	(void)fn;
	(void)end;
	sleep_for_us(us);
	return 0;
#endif
}

static uint64_t delay_now(void)
{
	return clock_file ? run_delay_ns() : 0;
}

static void note_call(long k, uint64_t t0, uint64_t t1, uint64_t c0, uint64_t c1, uint64_t delay,
		      uint64_t load)
{
	pthread_mutex_lock(&clock_lock);
	made++;
	if (clock_file)
		fprintf(clock_file, "%ld %llu %llu %llu %llu %llu %llu\n", k, (unsigned long long)t0,
			(unsigned long long)t1, (unsigned long long)c0, (unsigned long long)c1,
			(unsigned long long)delay, (unsigned long long)load);
	pthread_mutex_unlock(&clock_lock);
}

static void *loop(void *arg)
{
	(void)arg;
	if (start_delay_us)
		sleep_for_us(start_delay_us);
	for (long k = 0; k < calls; k++) {
		int on = 0;
		if (usdt && nomark_iter_begin_semaphore) {
			STAP_PROBE1(nomark, iter_begin, k);
			on = 1;
		}
		uint64_t d0 = delay_now();
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		train_step(k);
		uint64_t c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID), t1 = clock_ns(CLOCK_MONOTONIC);
		uint64_t d1 = delay_now();
		if (usdt && nomark_iter_end_semaphore) {
			STAP_PROBE1(nomark, iter_end, k);
			on = 1;
		}
		if (on) {
			pthread_mutex_lock(&clock_lock);
			fired++;
			pthread_mutex_unlock(&clock_lock);
		}
		note_call(k, t0, t1, c0, c1, (delay_entry - d0) + (d1 - delay_return), delay_load);
		if (gap_us)
			sleep_for_us(gap_us);
	}
	return NULL;
}

static long num(const char *opt, const char *v)
{
	char *end;
	long x;

	if (!v) {
		fprintf(stderr, "nomark: %s needs a value\n", opt);
		exit(2);
	}
	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || *end || x < 0) {
		fprintf(stderr, "nomark: %s: bad value '%s'\n", opt, v);
		exit(2);
	}
	return x;
}

int main(int argc, char **argv)
{
	const char *clock_path = NULL, *ready = NULL, *wait_for = NULL;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--calls")) calls = num(a, v), i++;
		else if (!strcmp(a, "--busy-us")) busy_us = num(a, v), i++;
		else if (!strcmp(a, "--sleep-us")) sleep_us_ = num(a, v), i++;
		else if (!strcmp(a, "--gap-us")) gap_us = num(a, v), i++;
		else if (!strcmp(a, "--threads")) nthreads = num(a, v), i++;
		else if (!strcmp(a, "--start-delay-us")) start_delay_us = num(a, v), i++;
		else if (!strcmp(a, "--plugin-delay-us")) plugin_delay_us = num(a, v), i++;
		else if (!strcmp(a, "--after-dlopen-us")) after_dlopen_us = num(a, v), i++;
		else if (!strcmp(a, "--wait-probed-us")) wait_probed_us = num(a, v), i++;
		else if (!strcmp(a, "--usdt")) usdt = 1;
		else if (!strcmp(a, "--plugin") && v) plugin = v, i++;
		else if (!strcmp(a, "--clock") && v) clock_path = v, i++;
		else if (!strcmp(a, "--ready") && v) ready = v, i++;
		else if (!strcmp(a, "--wait-for") && v) wait_for = v, i++;
		else {
			fprintf(stderr, "nomark: unknown argument '%s'\n", a);
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 256) {
		fprintf(stderr, "nomark: --threads must be 1..256\n");
		return 2;
	}
	if (clock_path && !(clock_file = fopen(clock_path, "w"))) {
		perror(clock_path);
		return 1;
	}
	if (ready) {
		FILE *f = fopen(ready, "w");
		if (!f) {
			perror(ready);
			return 1;
		}
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
	}
	while (wait_for && access(wait_for, F_OK) != 0)
		sleep_for_us(1000);
	if (plugin) {
		sleep_for_us(plugin_delay_us);
		void *h = dlopen(plugin, RTLD_NOW);
		if (!h) {
			fprintf(stderr, "nomark: %s\n", dlerror());
			return 1;
		}
		void (*step)(long) = (void (*)(long))dlsym(h, "plugin_step");
		if (!step) {
			fprintf(stderr, "nomark: %s\n", dlerror());
			return 1;
		}
		if (wait_probed_us && !wait_probed((const void *)step, wait_probed_us))
			fprintf(stderr, "nomark: no uprobe on plugin_step seen after %ld us\n", wait_probed_us);
		if (after_dlopen_us)
			sleep_for_us(after_dlopen_us);
		for (long k = 0; k < calls; k++) {
			uint64_t d0 = delay_now();
			uint64_t t0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
			step(busy_us);
			uint64_t c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID), t1 = clock_ns(CLOCK_MONOTONIC);
			note_call(k, t0, t1, c0, c1, delay_now() - d0, 0);
		}
	} else if (nthreads == 1) {
		loop(NULL);
	} else {
		pthread_t th[256];
		for (long t = 0; t < nthreads; t++)
			if (pthread_create(&th[t], NULL, loop, NULL) != 0) {
				fprintf(stderr, "nomark: cannot start thread %ld\n", t);
				return 1;
			}
		for (long t = 0; t < nthreads; t++)
			pthread_join(th[t], NULL);
	}
	if (clock_file)
		fclose(clock_file);
	printf("calls %ld\n", made);
	if (usdt)
		printf("usdt fired %ld\n", fired);
	return 0;
}
