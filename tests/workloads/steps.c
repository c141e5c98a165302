/*
 * steps: a configurable step loop for the end-to-end tests. It reads its own
 * clocks around every marker so tests can compare the recorder's numbers
 * with the workload's.
 *
 *   --steps N        steps to run (default 10)
 *   --busy-us US     spin this long inside each step (CLOCK_MONOTONIC)
 *   --cpu-us US      spin until each thread has used this much CPU time
 *                    (CLOCK_THREAD_CPUTIME_ID), however busy the machine is
 *   --sleep-us US    sleep this long inside each step
 *   --gap-us US      sleep this long between steps
 *   --threads T      spin in T threads at once during the busy part
 *   --flops F        declare F model FLOPs (and --bytes B) per step
 *   --phases         wrap the busy part in phase "compute" and the sleep in "wait"
 *   --update-us US   then spin until the main thread has used this much more
 *                    CPU time, in phase "update" (with --phases): a second
 *                    phase of fixed work, for --diff's A/A and A/B tests
 *   --clock FILE     write "step t_before_begin t_after_end cpu_before cpu_after
 *                    delay_outside delay_inside" per step (ns; CLOCK_MONOTONIC
 *                    and CLOCK_PROCESS_CPUTIME_ID; how long the main thread
 *                    waited for a CPU, run_delay.h, between its readings and
 *                    the markers, and between the markers)
 *   --phase-clock FILE  the same for each phase (with --phases): "step name
 *                    t_before_begin t_after_end cpu_before cpu_after
 *                    delay_outside delay_inside"
 *   --exit CODE      exit with CODE at the end
 *   --raise SIG      kill itself with SIG at the end
 *   --forever        keep stepping until a signal arrives
 *   --procs P        run the step loop in P processes (forked after start;
 *                    the first is this one), each doing --steps steps
 *   --then PROG ...  at the end, exec PROG with the remaining arguments
 *   --thread-cpu FILE  append "tid cpu_ns start_ns" (CLOCK_THREAD_CPUTIME_ID)
 *                    for every thread as it ends, the main thread last;
 *                    start_ns is the main thread's at the start of main (the
 *                    time before includes mfu-record's child before exec
 *                    and the loader), 0 for the others
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mfu.h"
#include "run_delay.h"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* noinline: tests take steps from it with --step spin_us */
__attribute__((noinline)) static void spin_us(long us)
{
	uint64_t end = clock_ns(CLOCK_MONOTONIC) + (uint64_t)us * 1000;
	while (clock_ns(CLOCK_MONOTONIC) < end)
		;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void spin_cpu_us(long us)
{
	uint64_t now = clock_ns(CLOCK_THREAD_CPUTIME_ID), end = now + (uint64_t)us * 1000;
	volatile uint64_t x = 0;

	/* CLOCK_THREAD_CPUTIME_ID is a system call (no vDSO), of 6-13 us on
	 * a loaded VM: read every few microseconds, it made the spin half
	 * kernel time, and that share moved between runs by more than --diff's
	 * 2% of the step (an A/A diff named kernel_ms faster, unclassified_ms
	 * slower). So: spin half the CPU time left, gauged by CLOCK_MONOTONIC
	 * (vDSO: no system call; a thread's CPU time never runs ahead of the
	 * wall clock, so this never overshoots), read the CPU clock, again,
	 * and the last 20 us in small turns: about ten readings a spin. */
	while (now < end) {
		uint64_t left = end - now;

		if (left > 20000) {
			uint64_t until = clock_ns(CLOCK_MONOTONIC) + left / 2;
			do {
				for (int i = 0; i < 1024; i++)
					x += (uint64_t)i;
			} while (clock_ns(CLOCK_MONOTONIC) < until);
		} else {
			for (int i = 0; i < 4096; i++)
				x += (uint64_t)i;
		}
		now = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	}
	(void)x; /* read: clang's -Wunused-but-set-variable */
}

/* The program's own readings around a marked interval: CLOCK_MONOTONIC and
 * CLOCK_PROCESS_CPUTIME_ID before its begin and after its end, and the
 * thread's run delay before the readings, just inside the markers, and
 * after the readings. */
struct own {
	uint64_t t0, t1, c0, c1, d0, d_begin, d_end, d1;
};

/* the run delay is read only when a clock file is written (a few us each) */
static int keep_delay;

static uint64_t delay_now(void)
{
	return keep_delay ? run_delay_ns() : 0;
}

static void own_before(struct own *o)
{
	o->d0 = delay_now();
	o->c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	o->t0 = clock_ns(CLOCK_MONOTONIC);
}

static void own_after(struct own *o)
{
	o->t1 = clock_ns(CLOCK_MONOTONIC);
	o->c1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	o->d1 = delay_now();
}

static void own_write(FILE *f, long step, const char *name, const struct own *o)
{
	if (name)
		fprintf(f, "%ld %s ", step, name);
	else
		fprintf(f, "%ld ", step);
	fprintf(f, "%llu %llu %llu %llu %llu %llu\n", (unsigned long long)o->t0, (unsigned long long)o->t1,
		(unsigned long long)o->c0, (unsigned long long)o->c1,
		(unsigned long long)((o->d_begin - o->d0) + (o->d1 - o->d_end)),
		(unsigned long long)(o->d_end - o->d_begin));
}

static long busy_us, cpu_us, update_us;
static FILE *thread_cpu;
static pthread_mutex_t thread_cpu_lock = PTHREAD_MUTEX_INITIALIZER;
static long main_tid;
static uint64_t main_cpu0;

static void report_thread_cpu(void)
{
	if (!thread_cpu)
		return;
	pthread_mutex_lock(&thread_cpu_lock);
	fprintf(thread_cpu, "%ld %llu %llu\n", (long)gettid(), (unsigned long long)clock_ns(CLOCK_THREAD_CPUTIME_ID),
		(unsigned long long)(gettid() == main_tid ? main_cpu0 : 0));
	fflush(thread_cpu);
	pthread_mutex_unlock(&thread_cpu_lock);
}

static void busy(void)
{
	if (busy_us)
		spin_us(busy_us);
	if (cpu_us)
		spin_cpu_us(cpu_us);
}

static void *spinner(void *arg)
{
	(void)arg;
	busy();
	report_thread_cpu();
	return NULL;
}

static long num(const char *opt, const char *s)
{
	char *end;
	errno = 0;
	long v = strtol(s ? s : "", &end, 10);
	if (!s || !*s || *end || errno || v < 0) {
		fprintf(stderr, "steps: %s needs a non-negative integer\n", opt);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long steps = 10, sleep_for = 0, gap = 0, threads = 1, exit_code = 0, sig = 0;
	double flops = -1, bytes = NAN; /* --flops alone: bytes unknown */
	int phases = 0, forever = 0;

	main_cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	main_tid = (long)gettid();
	long procs = 1;
	char **then = NULL;
	FILE *clk = NULL, *phase_clk = NULL;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--steps")) steps = num(a, v), i++;
		else if (!strcmp(a, "--busy-us")) busy_us = num(a, v), i++;
		else if (!strcmp(a, "--sleep-us")) sleep_for = num(a, v), i++;
		else if (!strcmp(a, "--cpu-us")) cpu_us = num(a, v), i++;
		else if (!strcmp(a, "--update-us")) update_us = num(a, v), i++;
		else if (!strcmp(a, "--gap-us")) gap = num(a, v), i++;
		else if (!strcmp(a, "--threads")) threads = num(a, v), i++;
		else if (!strcmp(a, "--flops")) flops = (double)num(a, v), i++;
		else if (!strcmp(a, "--bytes")) bytes = (double)num(a, v), i++;
		else if (!strcmp(a, "--exit")) exit_code = num(a, v), i++;
		else if (!strcmp(a, "--raise")) sig = num(a, v), i++;
		else if (!strcmp(a, "--phases")) phases = 1;
		else if (!strcmp(a, "--forever")) forever = 1;
		else if (!strcmp(a, "--procs")) procs = num(a, v), i++;
		else if (!strcmp(a, "--then")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "steps: --then needs a program\n");
				return 2;
			}
			then = &argv[i + 1];
			break;
		}
		else if (!strcmp(a, "--thread-cpu")) {
			if (!v || !(thread_cpu = fopen(v, "a"))) {
				fprintf(stderr, "steps: cannot write %s\n", v ? v : "(none)");
				return 2;
			}
			i++;
		} else if (!strcmp(a, "--clock")) {
			if (!v || !(clk = fopen(v, "w"))) {
				fprintf(stderr, "steps: cannot write %s\n", v ? v : "(none)");
				return 2;
			}
			i++;
		} else if (!strcmp(a, "--phase-clock")) {
			if (!v || !(phase_clk = fopen(v, "w"))) {
				fprintf(stderr, "steps: cannot write %s\n", v ? v : "(none)");
				return 2;
			}
			i++;
		} else {
			fprintf(stderr, "steps: unknown option %s\n", a);
			return 2;
		}
	}
	if (threads < 1 || threads > 1024) {
		fprintf(stderr, "steps: --threads must be 1..1024\n");
		return 2;
	}

	if (procs < 1 || procs > 64) {
		fprintf(stderr, "steps: --procs must be 1..64\n");
		return 2;
	}
	keep_delay = clk || phase_clk;
	for (long p = 1; p < procs; p++) {
		pid_t pid = fork();
		if (pid == 0) {
			clk = phase_clk = NULL; /* only the first process writes the clock files */
			procs = 1;
			break;
		}
	}
	for (long s = 0; forever || s < steps; s++) {
		struct own st, ph;
		own_before(&st);
		mfu_step_begin();
		st.d_begin = delay_now();
		if (flops >= 0)
			mfu_step_model(flops, bytes);
		if (busy_us || cpu_us) {
			pthread_t tids[1024];
			if (phases) {
				own_before(&ph);
				mfu_phase_begin("compute");
				ph.d_begin = delay_now();
			}
			for (long t = 1; t < threads; t++)
				pthread_create(&tids[t], NULL, spinner, NULL);
			busy();
			for (long t = 1; t < threads; t++)
				pthread_join(tids[t], NULL);
			if (phases) {
				ph.d_end = delay_now();
				mfu_phase_end("compute");
				own_after(&ph);
				if (phase_clk)
					own_write(phase_clk, s, "compute", &ph);
			}
		}
		if (update_us) {
			if (phases)
				mfu_phase_begin("update");
			spin_cpu_us(update_us);
			if (phases)
				mfu_phase_end("update");
		}
		if (sleep_for) {
			if (phases) {
				own_before(&ph);
				mfu_phase_begin("wait");
				ph.d_begin = delay_now();
			}
			sleep_us(sleep_for);
			if (phases) {
				ph.d_end = delay_now();
				mfu_phase_end("wait");
				own_after(&ph);
				if (phase_clk)
					own_write(phase_clk, s, "wait", &ph);
			}
		}
		st.d_end = delay_now();
		mfu_step_end();
		own_after(&st);
		if (clk)
			own_write(clk, s, NULL, &st);
		if (gap)
			sleep_us(gap);
	}
	if (clk)
		fclose(clk);
	if (phase_clk)
		fclose(phase_clk);
	while (procs > 1 && wait(NULL) > 0)
		;
	report_thread_cpu();
	if (then) {
		execvp(then[0], then);
		perror("steps: exec");
		return 127;
	}
	if (sig)
		raise((int)sig);
	return (int)exit_code;
}
