/*
 * blas: steps that call BLAS with known sizes and declare no FLOPs, for the
 * library-call counting tests (tests/e2e/test_libflops.py, which computes
 * the expected FLOPs of every step from the sizes below). Built twice:
 * wl_blas against OpenBLAS, wl_blas_ref against the reference BLAS (whose
 * cblas_dgemm calls dgemm_ inside: counted once).
 *
 *   --mode steps (default)  --steps N steps; step s does kind s % 4:
 *     0: cblas_dgemm 64x48x32, cblas_sgemm 40x30x20
 *     1: phase "solve" { cblas_dsyrk n 24 k 16, cblas_dtrsm left m 16 n 8,
 *        cblas_dtrsm right m 16 n 8 }, then cblas_dgemv 100x50, cblas_zgemm 8x6x4
 *     2: no BLAS call (a loop of its own)
 *     3: dgemm_ (Fortran) 20x10x5 twice, cblas_dgemm 64x48x32
 *   --mode fork   one step: cblas_dgemm 32x32x32, then a forked child makes
 *                 --calls N cblas_dgemm 32x32x32 in a step of its own while
 *                 the parent waits inside its step, then the parent makes one
 *                 cblas_sgemm 16x16x16
 *   --mode threads  one step in which 2 threads each make --calls N
 *                 cblas_dgemm 48x48x48 (thread 1 also N cblas_sgemm 24x24x24)
 *                 at the same time
 *
 * At the end it prints "checksum HEX": a hash of the bytes of every result,
 * so a test can compare runs with and without mfu-record bit for bit.
 */
#include <cblas.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mfu.h"

void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k, const double *alpha,
	    const double *a, const int *lda, const double *b, const int *ldb, const double *beta, double *c,
	    const int *ldc);

#define N 8192 /* elements of each operand buffer: the largest is 100x50 */

static uint64_t hash = 0xcbf29ce484222325ull; /* FNV-1a over the results */

static void mix(const void *p, size_t len)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < len; i++)
		hash = (hash ^ b[i]) * 0x100000001b3ull;
}

static void fill_d(double *x, size_t n, int seed)
{
	for (size_t i = 0; i < n; i++)
		x[i] = 0.25 * (double)((i * 7 + (size_t)seed) % 13) - 1.0;
}

static void fill_f(float *x, size_t n, int seed)
{
	for (size_t i = 0; i < n; i++)
		x[i] = 0.125f * (float)((i * 5 + (size_t)seed) % 11) - 0.5f;
}

/* A well-conditioned lower-triangular m x m (row-major): 4 on the diagonal. */
static void tri(double *a, int m)
{
	for (int i = 0; i < m; i++)
		for (int j = 0; j < m; j++)
			a[i * m + j] = i == j ? 4.0 : j < i ? 0.125 * (double)((i + j) % 5) : 0.0;
}

static double da[N], db[N], dc[N];
static float fa[N], fb[N], fc[N];
static double za[2 * N], zb[2 * N], zc[2 * N]; /* complex: re, im pairs */

static void kind0(void)
{
	fill_d(da, N, 1);
	fill_d(db, N, 2);
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 64, 48, 32, 1.0, da, 32, db, 48, 0.0, dc, 48);
	mix(dc, 64 * 48 * sizeof(double));
	fill_f(fa, N, 3);
	fill_f(fb, N, 4);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 40, 30, 20, 1.0f, fa, 20, fb, 30, 0.0f, fc, 30);
	mix(fc, 40 * 30 * sizeof(float));
}

static void kind1(void)
{
	const double alpha[2] = { 1.0, 0.5 }, beta[2] = { 0.0, 0.0 };

	mfu_phase_begin("solve");
	fill_d(da, N, 5);
	fill_d(dc, N, 6);
	cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, 24, 16, 1.0, da, 16, 0.0, dc, 24);
	mix(dc, 24 * 24 * sizeof(double));
	tri(da, 16);
	fill_d(db, N, 7);
	cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, 16, 8, 1.0, da, 16, db, 8);
	mix(db, 16 * 8 * sizeof(double));
	tri(da, 8);
	fill_d(db, N, 8);
	cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasNoTrans, CblasNonUnit, 16, 8, 1.0, da, 8, db, 8);
	mix(db, 16 * 8 * sizeof(double));
	mfu_phase_end("solve");

	fill_d(da, N, 9);
	fill_d(db, N, 10);
	cblas_dgemv(CblasRowMajor, CblasNoTrans, 100, 50, 1.0, da, 50, db, 1, 0.0, dc, 1);
	mix(dc, 100 * sizeof(double));
	fill_d(za, 2 * N, 11);
	fill_d(zb, 2 * N, 12);
	cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 8, 6, 4, alpha, za, 4, zb, 6, beta, zc, 6);
	mix(zc, 8 * 6 * 2 * sizeof(double));
}

/* A step without a library call: the program's own arithmetic. */
static void kind2(void)
{
	double x = 0;
	fill_d(da, N, 13);
	for (int r = 0; r < 50; r++)
		for (int i = 0; i < N; i++)
			x += da[i] * da[(i + r) % N];
	mix(&x, sizeof(x));
}

static void kind3(void)
{
	const int m = 20, n = 10, k = 5;
	const double one = 1.0, zero = 0.0;

	fill_d(da, N, 14);
	fill_d(db, N, 15);
	/* column-major: A m x k (lda m), B k x n (ldb k), C m x n (ldc m) */
	dgemm_("N", "N", &m, &n, &k, &one, da, &m, db, &k, &zero, dc, &m);
	mix(dc, (size_t)(m * n) * sizeof(double));
	dgemm_("N", "N", &m, &n, &k, &one, dc, &m, db, &k, &zero, dc + 1024, &m);
	mix(dc + 1024, (size_t)(m * n) * sizeof(double));
	fill_d(da, N, 16);
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 64, 48, 32, 1.0, da, 32, db, 48, 0.0, dc, 48);
	mix(dc, 64 * 48 * sizeof(double));
}

static void mode_steps(long steps)
{
	for (long s = 0; s < steps; s++) {
		mfu_step_begin();
		switch (s % 4) {
		case 0: kind0(); break;
		case 1: kind1(); break;
		case 2: kind2(); break;
		case 3: kind3(); break;
		}
		mfu_step_end();
	}
}

static int mode_fork(long calls)
{
	int status = 0;
	pid_t pid;

	mfu_step_begin();
	fill_d(da, N, 17);
	fill_d(db, N, 18);
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 32, 32, 32, 1.0, da, 32, db, 32, 0.0, dc, 32);
	mix(dc, 32 * 32 * sizeof(double));
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("blas: fork");
		return 1;
	}
	if (pid == 0) {
		/* its own process: its own counters, and a step of its own */
		mfu_step_begin();
		for (long i = 0; i < calls; i++)
			cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 32, 32, 32, 1.0, da, 32, dc, 32,
				    0.5, db, 32);
		mfu_step_end();
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	fill_f(fa, N, 19);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 16, 16, 16, 1.0f, fa, 16, fa, 16, 0.0f, fc, 16);
	mix(fc, 16 * 16 * sizeof(float));
	mfu_step_end();
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "blas: the child failed (status %d)\n", status);
		return 1;
	}
	return 0;
}

struct worker {
	int id;
	long calls;
	double a[48 * 48], b[48 * 48], c[48 * 48];
	float fa[24 * 24], fc[24 * 24];
};

static void *work(void *arg)
{
	struct worker *w = arg;
	fill_d(w->a, 48 * 48, 20 + w->id);
	fill_d(w->b, 48 * 48, 30 + w->id);
	fill_f(w->fa, 24 * 24, 40);
	for (long i = 0; i < w->calls; i++) {
		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 48, 48, 48, 1.0, w->a, 48, w->b, 48, 0.0,
			    w->c, 48);
		if (w->id == 1)
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 24, 24, 24, 1.0f, w->fa, 24, w->fa,
				    24, 0.0f, w->fc, 24);
	}
	return NULL;
}

static int mode_threads(long calls)
{
	static struct worker w[2];
	pthread_t t[2];

	mfu_step_begin();
	for (int i = 0; i < 2; i++) {
		w[i].id = i;
		w[i].calls = calls;
		if (pthread_create(&t[i], NULL, work, &w[i]) != 0) {
			fprintf(stderr, "blas: cannot start a thread\n");
			return 1;
		}
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	mfu_step_end();
	for (int i = 0; i < 2; i++)
		mix(w[i].c, sizeof(w[i].c));
	mix(w[1].fc, sizeof(w[1].fc));
	return 0;
}

static long num(const char *opt, const char *s)
{
	char *end;
	errno = 0;
	long v = strtol(s ? s : "", &end, 10);
	if (!s || !*s || *end || errno || v < 0) {
		fprintf(stderr, "blas: %s needs a non-negative integer\n", opt);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	const char *mode = "steps";
	long steps = 4, calls = 5;
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--steps")) steps = num(a, v), i++;
		else if (!strcmp(a, "--calls")) calls = num(a, v), i++;
		else if (!strcmp(a, "--mode") && v) mode = v, i++;
		else {
			fprintf(stderr, "blas: unknown option %s\n", a);
			return 2;
		}
	}
	if (!strcmp(mode, "steps"))
		mode_steps(steps);
	else if (!strcmp(mode, "fork"))
		rc = mode_fork(calls);
	else if (!strcmp(mode, "threads"))
		rc = mode_threads(calls);
	else {
		fprintf(stderr, "blas: unknown mode %s (steps, fork, threads)\n", mode);
		return 2;
	}
	printf("checksum %016llx\n", (unsigned long long)hash);
	return rc;
}
