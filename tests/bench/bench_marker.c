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
 * Recorded, it also times the parts a boundary is made of, each alone, in
 * the same rounds (parts=1 on the line): the clock read (one
 * clock_gettime per boundary), the 576-byte record written into a ring of
 * the same layout in private memory (claim, fill, publish), the sum of the
 * library-call counters (libflops_sum, when the counting library is loaded)
 * and the per-function snapshot a step boundary adds. A phase boundary is
 * read + clock + record + library sum; the rest ("other") is the call,
 * the thread id, the checks and the misses the parts do not have alone.
 * The ECHILD retry costs one comparison unless a read fails: nothing to
 * time.
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
#include "libflops.h"
#include "marker_ring.h"
#include "bench_clock.h"

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
		qsort(t, REPS, sizeof(t[0]), cmp_double);
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
		qsort(t, REPS, sizeof(t[0]), cmp_double);
		printf("mode=unrecorded calls=%ld ns_per_call_median=%.3f ns_per_call_min=%.3f\n", n, t[REPS / 2], t[0]);
		return 0;
	}

	const char *g = getenv("MFU_GROUP_FD");
	int fd = g ? atoi(g) : -1;
	uint64_t buf[64];
	double raw[REPS], clk[REPS], rec[REPS], lsum[REPS], snap[REPS], step[REPS];
	/* size of one read of group 0: ask the kernel with a large buffer */
	ssize_t sz = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	if (sz <= 0) {
		fprintf(stderr, "bench_marker: cannot read the counter group (MFU_GROUP_FD=%s)\n", g ? g : "");
		return 1;
	}
	/* a private ring of the recorder's layout, emptied between batches */
	uint8_t nr[1] = { (uint8_t)(sz / 8 - 3) };
	size_t rsize = mring_size(8192);
	void *ring = aligned_alloc(4096, (rsize + 4095) & ~(size_t)4095);
	struct mring_producer prod;
	struct mring_consumer cons;
	struct mring_record out;
	if (!ring)
		return 1;
	memset(ring, 0, rsize);
	if (mring_init(ring, 8192, 1, nr) != 0 || mring_producer_init(&prod, ring, rsize) != 0 ||
	    mring_consumer_init(&cons, ring, rsize, 8192) != 0) {
		fprintf(stderr, "bench_marker: cannot make a private ring\n");
		return 1;
	}
	/* the counting library's region, as libmfu finds it (NULL: not loaded) */
	struct libflops_region *lf = libflops_region_attach();
	struct libflops_proc *lp = lf ? libflops_proc_for(lf, (int32_t)getpid()) : NULL;
	uint64_t lib[LIBFLOPS_WORDS];
	volatile uint64_t sink = 0;
	/* Once round the snapshot ring first: its first pass faults a page
	 * in every other snapshot (about 600 ns each here), as libmfu's first
	 * 4,096 step boundaries do; the figure is the steady state. */
	for (int i = 0; lp && i < LIBFLOPS_NSNAP; i++)
		sink += libflops_snapshot(lf, lp);

	for (int r = 0; r < REPS; r++) {
		uint64_t t0 = now();
		for (long i = 0; i < batch; i++)
			if (read(fd, buf, (size_t)sz) != sz)
				return 1;
		raw[r] = (double)(now() - t0) / (double)batch;

		struct timespec ts;
		t0 = now();
		for (long i = 0; i < batch; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			sink += (uint64_t)ts.tv_nsec;
		}
		clk[r] = (double)(now() - t0) / (double)batch;

		t0 = now();
		for (long i = 0; i < batch; i++) {
			uint64_t pos;
			struct mring_record *x = mring_producer_claim(&prod, &pos);
			if (!x)
				return 1;
			x->pid = 1;
			x->tid = 1;
			memcpy(&x->data[0], buf, (size_t)sz);
			x->ngroups = 1;
			x->lib_snap = 0;
			memset(x->lib, 0, sizeof(x->lib));
			x->time_ns = (uint64_t)i;
			x->kind = MRING_PHASE_BEGIN;
			x->a = x->b = 0;
			memcpy(x->name, "b", 2);
			x->name_len = 1;
			x->lost = 0;
			x->flags = 0;
			mring_producer_publish(&prod, x, pos);
		}
		rec[r] = (double)(now() - t0) / (double)batch;
		while (mring_consumer_read(&cons, &out) == 1)
			;

		lsum[r] = snap[r] = 0;
		if (lp) {
			t0 = now();
			for (long i = 0; i < batch; i++) {
				libflops_sum(lp, lib);
				sink += lib[0];
			}
			lsum[r] = (double)(now() - t0) / (double)batch;
			t0 = now();
			for (long i = 0; i < batch / 8; i++)
				sink += libflops_snapshot(lf, lp);
			snap[r] = (double)(now() - t0) / (double)(batch / 8);
		}

		usleep(30000); /* let the recorder drain, then time a batch of boundaries */
		t0 = now();
		for (long i = 0; i < batch / 2; i++) {
			mfu_phase_begin("b");
			mfu_phase_end("b");
		}
		t[r] = (double)(now() - t0) / (double)batch;
		usleep(30000);
		t0 = now();
		for (long i = 0; i < batch / 2; i++) {
			mfu_step_begin();
			mfu_step_end();
		}
		step[r] = (double)(now() - t0) / (double)batch;
		usleep(30000);
	}
	(void)sink;
	double *all[] = { t, raw, clk, rec, lsum, snap, step };
	for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++)
		qsort(all[k], REPS, sizeof(double), cmp_double);
	double m_t = t[REPS / 2], m_raw = raw[REPS / 2], m_clk = clk[REPS / 2], m_rec = rec[REPS / 2],
	       m_lsum = lsum[REPS / 2], m_snap = snap[REPS / 2], m_step = step[REPS / 2];
	printf("mode=recorded boundaries=%ld counters=%zd ns_per_boundary_median=%.1f ns_per_raw_read_median=%.1f "
	       "ratio=%.3f parts=1 ns_clock=%.1f ns_record=%.1f lib_counting=%d ns_lib_sum=%.1f ns_lib_snapshot=%.1f "
	       "ns_other=%.1f ns_per_step_boundary_median=%.1f step_ratio=%.3f\n",
	       batch * REPS, (sz / 8) - 3, m_t, m_raw, m_t / m_raw, m_clk, m_rec, lp != NULL, m_lsum, m_snap,
	       m_t - (m_raw + m_clk + m_rec + m_lsum), m_step, m_step / m_raw);
	return 0;
}
