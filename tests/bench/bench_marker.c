/*
 * bench_marker: the cost of one marker boundary.
 *
 * Not recorded: ns per mfu_step_begin()/mfu_phase_begin() call (the no-op
 * path). Recorded (run under mfu-record): ns per boundary, and, as the
 * reference in the same run, ns per raw read() of the same counter group
 * (the fd mfu-record passes in MFU_GROUP_FD). Prints one line of key=value.
 * Boundaries are timed in batches small enough for the ring, with pauses in
 * between so the recorder's draining does not compete for the CPU.
 *
 * bench_marker --attach READY: not recorded, it writes its pid to the file
 * READY and waits until a recorder joins it (mfu-record -p PID) and its
 * markers come on, then times batches of boundaries as above (no counter
 * is read: there is no raw read() to compare with) and says
 * mode=attached.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mfu.h"

static uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

#define REPS 15

int main(int argc, char **argv)
{
	long batch = 4000;
	double t[REPS];

	if (argc > 2 && !strcmp(argv[1], "--attach")) {
		FILE *f = fopen(argv[2], "w");
		if (!f) {
			fprintf(stderr, "bench_marker: cannot write %s\n", argv[2]);
			return 1;
		}
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
		/* asked every millisecond, until a recorder switches them on */
		for (long i = 0; !mfu_recording(); i++) {
			if (i > 120000) {
				fprintf(stderr, "bench_marker: no recorder joined in 120 s\n");
				return 1;
			}
			usleep(1000);
		}
		usleep(100000);
		for (int r = 0; r < REPS; r++) {
			usleep(30000);
			uint64_t t0 = now();
			for (long i = 0; i < batch / 2; i++) {
				mfu_phase_begin("b");
				mfu_phase_end("b");
			}
			t[r] = (double)(now() - t0) / (double)batch;
		}
		qsort(t, REPS, sizeof(t[0]), cmp);
		printf("mode=attached boundaries=%ld ns_per_boundary_median=%.1f ns_per_boundary_min=%.1f\n",
		       batch * REPS, t[REPS / 2], t[0]);
		return 0;
	}

	if (!mfu_recording()) {
		long n = argc > 1 ? atol(argv[1]) : 20000000;
		for (int r = 0; r < REPS; r++) {
			uint64_t t0 = now();
			for (long i = 0; i < n; i++) {
				mfu_step_begin();
				__asm__ volatile("" ::: "memory");
			}
			t[r] = (double)(now() - t0) / (double)n;
		}
		qsort(t, REPS, sizeof(t[0]), cmp);
		printf("mode=unrecorded calls=%ld ns_per_call_median=%.3f ns_per_call_min=%.3f\n", n, t[REPS / 2], t[0]);
		return 0;
	}

	const char *g = getenv("MFU_GROUP_FD");
	int fd = g ? atoi(g) : -1;
	uint64_t buf[64];
	double raw[REPS];
	/* size of one read of group 0: ask the kernel with a large buffer */
	ssize_t sz = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	if (sz <= 0) {
		fprintf(stderr, "bench_marker: cannot read the counter group (MFU_GROUP_FD=%s)\n", g ? g : "");
		return 1;
	}
	for (int r = 0; r < REPS; r++) {
		uint64_t t0 = now();
		for (long i = 0; i < batch; i++)
			if (read(fd, buf, (size_t)sz) != sz)
				return 1;
		raw[r] = (double)(now() - t0) / (double)batch;

		usleep(30000); /* let the recorder drain, then time a batch of boundaries */
		t0 = now();
		for (long i = 0; i < batch / 2; i++) {
			mfu_phase_begin("b");
			mfu_phase_end("b");
		}
		t[r] = (double)(now() - t0) / (double)batch;
		usleep(30000);
	}
	qsort(t, REPS, sizeof(t[0]), cmp);
	qsort(raw, REPS, sizeof(raw[0]), cmp);
	printf("mode=recorded boundaries=%ld counters=%zd ns_per_boundary_median=%.1f ns_per_raw_read_median=%.1f ratio=%.3f\n",
	       batch * REPS, (sz / 8) - 3, t[REPS / 2], raw[REPS / 2], t[REPS / 2] / raw[REPS / 2]);
	return 0;
}
