/*
 * LAPACK and BLAS level 1 linked into the executable (tests/e2e/
 * test_lib_probes.py builds it fully static, with OpenBLAS's libopenblas.a
 * or the reference liblapack.a and libblas.a): calls that preloading
 * cannot interpose, counted with uprobes, whose fetch arguments read
 * LAPACK's dimensions through the pointers of the Fortran interface, some
 * of them (lwork) on the stack.
 *
 * Step s (0, 1) calls, from train_step():
 *   dgesv_ n 32 nrhs 2
 *   dgeqrf_ m 40 n 20, a workspace query (lwork = -1, the 7th argument)
 *     first: no call
 *   dormqr_ L T m 40 n 3 k 20, a query first (lwork: the 12th argument)
 *   ddot_ n 100, cblas_ddot n 100
 *   in step 1 only: dsyevd_ V L n 20 (a query first): FLOPs unknown
 * and prints a checksum of the results.
 */
#include <cblas.h>
#include <stdio.h>

void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv, double *b, const int *ldb, int *info);
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work, const int *lwork,
	     int *info);
void dormqr_(const char *side, const char *tr, const int *m, const int *n, const int *k, const double *a,
	     const int *lda, const double *tau, double *c, const int *ldc, double *work, const int *lwork, int *info,
	     size_t l1, size_t l2);
void dsyevd_(const char *jz, const char *up, const int *n, double *a, const int *lda, double *w, double *work,
	     const int *lwork, int *iwork, const int *liwork, int *info, size_t l1, size_t l2);
double ddot_(const int *n, const double *x, const int *incx, const double *y, const int *incy);

static double a[4096], b[4096], tau[64], work[4096], w[64], r[2];
static int ipiv[64], iwork[1024];

static void fill(int seed)
{
	for (int i = 0; i < 4096; i++) {
		a[i] = 0.125 * ((i * 7 + seed) % 16) - 1.0 + (i % 41 == 0 ? 40.0 : 0.0);
		b[i] = 0.25 * ((i * 5 + seed) % 9) - 1.0;
	}
}

__attribute__((noinline)) void train_step(int s)
{
	int n = 32, nrhs = 2, m = 40, qn = 20, cn = 3, dn = 100, one = 1, query = -1, lwork = 4096, info;
	int liwork = 1024;

	fill(s);
	dgesv_(&n, &nrhs, a, &n, ipiv, b, &n, &info);
	fill(s + 1);
	dgeqrf_(&m, &qn, a, &m, tau, work, &query, &info);
	dgeqrf_(&m, &qn, a, &m, tau, work, &lwork, &info);
	dormqr_("L", "T", &m, &cn, &qn, a, &m, tau, b, &m, work, &query, &info, 1, 1);
	dormqr_("L", "T", &m, &cn, &qn, a, &m, tau, b, &m, work, &lwork, &info, 1, 1);
	r[0] = ddot_(&dn, a, &one, b, &one);
	r[1] = cblas_ddot(dn, a, 1, b, 1);
	if (s == 1) {
		int en = 20;
		fill(s + 2);
		for (int j = 0; j < en; j++) /* symmetric */
			for (int i = 0; i < j; i++)
				a[i + j * en] = a[j + i * en];
		dsyevd_("V", "L", &en, a, &en, w, work, &query, iwork, &query, &info, 1, 1);
		dsyevd_("V", "L", &en, a, &en, w, work, &lwork, iwork, &liwork, &info, 1, 1);
	}
}

int main(void)
{
	double sum = 0;

	for (int s = 0; s < 2; s++) {
		train_step(s);
		for (int i = 0; i < 200; i++)
			sum += b[i];
		for (int i = 0; i < 20; i++)
			sum += w[i];
		sum += r[0] + r[1];
	}
	printf("%.17g\n", sum);
	return 0;
}
