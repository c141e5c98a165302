/*
 * A stand-in LAPACK for test_libflops's counting-library test, shaped as a
 * reference LAPACK is: its routines call the BLAS (another library) and
 * each other through the dynamic loader, so a preloaded counting library
 * sees those nested calls. No arithmetic; info as LAPACK sets it
 * (negative for a rejected argument), and lwork = -1 is a workspace query.
 */
#include "fake_lapack.h"

int fake_lapack_calls;

static void gemm(int times)
{
	static const int n = 4;
	static const double one = 1, zero = 0;
	static double a[16], c[16];
	for (int i = 0; i < times; i++)
		dgemm_("N", "N", &n, &n, &n, &one, a, &n, a, &n, &zero, c, &n, 1, 1);
}

void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info)
{
	(void)a, (void)lda, (void)ipiv;
	fake_lapack_calls++;
	if (*m < 0 || *n < 0) {
		*info = *m < 0 ? -1 : -2;
		return;
	}
	gemm(2);
	*info = 0;
}

void dgetrs_(const char *tr, const int *n, const int *nrhs, const double *a, const int *lda, const int *ipiv,
	     double *b, const int *ldb, int *info, size_t l1)
{
	(void)tr, (void)n, (void)nrhs, (void)a, (void)lda, (void)ipiv, (void)b, (void)ldb, (void)l1;
	fake_lapack_calls++;
	gemm(1);
	*info = 0;
}

void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv, double *b, const int *ldb,
	    int *info)
{
	fake_lapack_calls++;
	dgetrf_(n, n, a, lda, ipiv, info);
	if (*info == 0)
		dgetrs_("N", n, nrhs, a, lda, ipiv, b, ldb, info, 1);
}

void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work, const int *lwork,
	     int *info)
{
	(void)m, (void)a, (void)lda, (void)tau;
	fake_lapack_calls++;
	*info = 0;
	if (*lwork == -1) {
		work[0] = *n;
		return;
	}
	gemm(1);
}

/* An iterative driver: some BLAS calls and a QR (both counted: the part
 * of its work that can be), then work nobody can count. */
void dsyevd_(const char *jz, const char *up, const int *n, double *a, const int *lda, double *w, double *work,
	     const int *lwork, int *iwork, const int *liwork, int *info, size_t l1, size_t l2)
{
	(void)jz, (void)up, (void)w, (void)iwork, (void)l1, (void)l2;
	fake_lapack_calls++;
	*info = 0;
	if (*lwork == -1 || *liwork == -1) {
		work[0] = 1;
		iwork[0] = 1;
		return;
	}
	static const int qm = 8, qn = 5, big = 100;
	double tau[8], wq[64];
	gemm(3);
	dgeqrf_(&qm, &qn, a, lda, tau, wq, &big, info);
	(void)n;
}
