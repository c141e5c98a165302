/*
 * emu_dgemm: one cblas_dgemm of a known size, for the emulator's check
 * that counted FLOPs come within 1% of 2mnk (tests/e2e/test_emulate_tool.py).
 *
 *   emu_dgemm M N K [REPS]    REPS calls of C = A B (M x K times K x N, row
 *                             major, alpha 1, beta 0); default 1
 *
 * Prints one JSON line: the sizes, the model FLOPs 2 M N K REPS, the wall
 * time of the calls, and (under valgrind --tool=mfufp) the counts the calls
 * made (emu_read.h), their fp64 FLOPs and the ratio of those to the model.
 * The matrices are filled before the first count, so only the calls are
 * counted (OpenBLAS's threads, when it starts some, included).
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "emu_read.h"

/* Seconds from @a to @b; outside the counted interval, as it is FP work. */
static double seconds(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (b->tv_nsec - a->tv_nsec) * 1e-9;
}

int main(int argc, char **argv)
{
	struct mfu_emu_counts before, after;
	long m, n, k, reps = 1;
	double *a, *b, *c, flops = 0, model;
	struct timespec t0, t1;
	int tool;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: emu_dgemm M N K [REPS]\n");
		return 2;
	}
	m = strtol(argv[1], NULL, 10);
	n = strtol(argv[2], NULL, 10);
	k = strtol(argv[3], NULL, 10);
	if (argc == 5)
		reps = strtol(argv[4], NULL, 10);
	if (m <= 0 || n <= 0 || k <= 0 || reps <= 0 || m > 8192 || n > 8192 || k > 8192) {
		fprintf(stderr, "emu_dgemm: sizes must be 1..8192, REPS > 0\n");
		return 2;
	}
	a = malloc(sizeof *a * m * k);
	b = malloc(sizeof *b * k * n);
	c = malloc(sizeof *c * m * n);
	if (!a || !b || !c) {
		fprintf(stderr, "emu_dgemm: out of memory\n");
		return 1;
	}
	for (long i = 0; i < m * k; i++)
		a[i] = (double)(i % 7) * 0.25;
	for (long i = 0; i < k * n; i++)
		b[i] = (double)(i % 5) * 0.5;

	tool = emu_read(&before);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long r = 0; r < reps; r++)
		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k,
			    1.0, a, (int)k, b, (int)n, 0.0, c, (int)n);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	emu_read(&after);

	model = 2.0 * m * n * k * reps;
	printf("{\"m\": %ld, \"n\": %ld, \"k\": %ld, \"reps\": %ld, \"model_flops\": %.0f, "
	       "\"seconds\": %.6f, \"tool\": %d, \"c00\": %g",
	       m, n, k, reps, model, seconds(&t0, &t1), tool, c[0]);
	if (tool) {
		for (int w = 0; w < MFU_EMU_NWIDTH; w++)
			flops += (double)(after.inst[MFU_EMU_FP64][w] - before.inst[MFU_EMU_FP64][w]) *
				 mfu_emu_lanes(MFU_EMU_FP64, w);
		printf(", \"fp64_flops\": %.0f, \"ratio\": %.6f, ", flops, flops / model);
		emu_print(stdout, &after, &before);
	}
	printf("}\n");
	free(a);
	free(b);
	free(c);
	return 0;
}
