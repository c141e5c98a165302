/*
 * A plain STREAM triad (McCalpin's a[j] = b[j] + scalar * c[j]), one thread,
 * the reference for mfu-calibrate's triad: built -O3 -march=native like
 * STREAM usually is, plain C loops (no intrinsics, no non-temporal stores
 * unless the compiler chooses them), best of NTIMES after a warm-up, bytes
 * counted as STREAM counts them (3 x 8 per element).
 *
 * usage: stream_triad [TOTAL_BYTES [NTIMES]]
 *   TOTAL_BYTES  the three arrays together (default 402653184 = 384 MiB)
 *   NTIMES       repetitions (default 10)
 * prints: elements=N bytes=B ntimes=K best_s=S triad_bytes_per_s=V
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "util.h"

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	uint64_t total = 402653184;
	int ntimes = 10;
	double *a, *b, *c, best = 1e30, scalar = 3.0;
	size_t n;

	if (argc > 1 && (safe_atou64(argv[1], &total) || total < 3 * 8 * 1024)) {
		fprintf(stderr, "stream_triad: TOTAL_BYTES '%s': expected a number >= 24576\n", argv[1]);
		return 2;
	}
	if (argc > 2 && (safe_atoi(argv[2], &ntimes) || ntimes < 2 || ntimes > 1000)) {
		fprintf(stderr, "stream_triad: NTIMES '%s': expected 2 to 1000\n", argv[2]);
		return 2;
	}
	if (argc > 3) {
		fprintf(stderr, "usage: stream_triad [TOTAL_BYTES [NTIMES]]\n");
		return 2;
	}
	n = (size_t)(total / 3 / sizeof(double));
	a = aligned_alloc(64, (n * sizeof(double) + 63) / 64 * 64);
	b = aligned_alloc(64, (n * sizeof(double) + 63) / 64 * 64);
	c = aligned_alloc(64, (n * sizeof(double) + 63) / 64 * 64);
	if (!a || !b || !c) {
		fprintf(stderr, "stream_triad: cannot allocate 3 x %zu bytes\n", n * sizeof(double));
		return 1;
	}
	for (size_t j = 0; j < n; j++) {
		a[j] = 1.0;
		b[j] = 2.0;
		c[j] = 0.0;
	}
	/* The first pass is a warm-up, as in STREAM (which skips k = 0). */
	for (int k = 0; k <= ntimes; k++) {
		double t = seconds();
		for (size_t j = 0; j < n; j++)
			a[j] = b[j] + scalar * c[j];
		t = seconds() - t;
		if (k > 0 && t < best)
			best = t;
	}
	for (size_t j = 0; j < n; j += n / 7 + 1)
		if (a[j] != b[j] + scalar * c[j]) {
			fprintf(stderr, "stream_triad: wrong result at %zu\n", j);
			return 1;
		}
	printf("elements=%zu bytes=%zu ntimes=%d best_s=%.6f triad_bytes_per_s=%.6e\n", n,
	       3 * n * sizeof(double), ntimes, best, 3.0 * (double)n * sizeof(double) / best);
	free(a);
	free(b);
	free(c);
	return 0;
}
