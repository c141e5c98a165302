/*
 * bench_inprocess: the cost of one step in the in-process mode (mfu_enable():
 * steps timed by libmfu itself, mfu_last_step() after each), against the
 * same step not measured (the no-op markers), in the same run.
 *
 * A step here is mfu_step_begin(), mfu_step_model(), mfu_step_end() and
 * mfu_last_step(): what a loop that prints its MFU every step calls. Not
 * recorded, and without a recorder joining. Prints one line of key=value.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mfu.h"
#include "bench_clock.h"

#define REPS 15

/* Median ns per step of @reps batches of @n steps. */
static double time_steps(long n, double *min)
{
	double t[REPS];
	struct mfu_step_result r;

	for (int k = 0; k < REPS; k++) {
		uint64_t t0 = now();
		for (long i = 0; i < n; i++) {
			mfu_step_begin();
			mfu_step_model(1e9, NAN);
			mfu_step_end();
			r.size = sizeof(r);
			(void)mfu_last_step(&r);
			__asm__ volatile("" ::: "memory");
		}
		t[k] = (double)(now() - t0) / (double)n;
	}
	qsort(t, REPS, sizeof(t[0]), cmp_double);
	*min = t[0];
	return t[REPS / 2];
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	double off_min, on_min, off, on;
	struct mfu_step_result r;

	if (mfu_recording()) {
		fprintf(stderr, "bench_inprocess: run it without mfu-record\n");
		return 1;
	}
	off = time_steps(n, &off_min);
	mfu_enable(1e12, NAN, "bench_inprocess");
	on = time_steps(n, &on_min);
	r.size = sizeof(r);
	if (mfu_last_step(&r) != 0 || isnan(r.mfu)) {
		fprintf(stderr, "bench_inprocess: the in-process mode measured no step\n");
		return 1;
	}
	printf("mode=inprocess steps=%ld ns_per_step_off_median=%.1f ns_per_step_inprocess_median=%.1f "
	       "ns_per_step_off_min=%.1f ns_per_step_inprocess_min=%.1f\n", n * REPS, off, on, off_min, on_min);
	return 0;
}
