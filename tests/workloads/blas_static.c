/*
 * BLAS linked into the executable (tests/e2e/test_lib_probes.py builds it:
 * fully static, or dynamic with a static libopenblas.a and libmfu's
 * markers with -DMARKERS): calls that preloading cannot interpose.
 *
 * Step s (0, 1, 2) calls, from train_step():
 *   cblas_dgemm 32x32x32, s + 1 times          2 * 32^3 FLOPs each
 *   dgemm_ (Fortran) m = n = 16, k = 8, once  2 * 16 * 16 * 8
 *   cblas_dtrsm left, m = 8, n = 4            n * m^2 = 256
 *   cblas_dtrsm right, m = 8, n = 4           m * n^2 = 128
 * and prints a checksum of the results.
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef MARKERS
#include <mfu.h>
#endif

void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k, const double *alpha,
	    const double *a, const int *lda, const double *b, const int *ldb, const double *beta, double *c,
	    const int *ldc);

static double *a, *b, *c;

__attribute__((noinline)) void train_step(int s)
{
	int m = 16, k = 8;
	double one = 1, zero = 0;

	for (int i = 0; i <= s; i++)
		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 32, 32, 32, 1.0, a, 32, b, 32, 0.0, c, 32);
	dgemm_("N", "N", &m, &m, &k, &one, a, &m, b, &k, &zero, c + 1024, &m);
	cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, 8, 4, 1.0, a, 8, c + 2048, 4);
	cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasNoTrans, CblasNonUnit, 8, 4, 1.0, a, 4, c + 3072, 4);
}

int main(void)
{
	double sum = 0;

	a = calloc(4096, sizeof(*a));
	b = calloc(4096, sizeof(*b));
	c = calloc(4096, sizeof(*c));
	if (!a || !b || !c)
		return 1;
	for (int i = 0; i < 4096; i++) {
		a[i] = 1 + (i % 7 == 0);
		b[i] = 0.5 + (i % 3);
		c[i] = 1;
	}
	for (int s = 0; s < 3; s++) {
#ifdef MARKERS
		mfu_step_begin();
#endif
		train_step(s);
#ifdef MARKERS
		mfu_step_end();
#endif
	}
	for (int i = 0; i < 4096; i++)
		sum += c[i];
	printf("%.17g\n", sum);
	return 0;
}
