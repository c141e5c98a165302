/*
 * lapack: steps that call LAPACK (Fortran interface, and LAPACKE when built
 * with it) and BLAS level 1 with known sizes and declare no FLOPs, for the
 * library-call counting tests (tests/e2e/test_libflops.py computes every
 * step's FLOPs from the sizes below with LAPACK Working Note 41's formulas).
 * Built against the system's LAPACK (wl_lapack: OpenBLAS's own when it is
 * installed, which calls its kernels directly), and against the reference
 * LAPACK and BLAS (wl_lapack_ref: every routine calls the BLAS and the
 * LAPACK routines it builds on through the dynamic loader, i.e. through the
 * counting library: each call must still count once).
 *
 *   --steps N (default 9, or 10 with LAPACKE): step s does kind s % K:
 *     0: dgesv_ n 64 nrhs 3
 *     1: dpotrf_ n 48, dpotrs_ n 48 nrhs 2
 *     2: least squares by hand: dgeqrf_ m 80 n 40, dormqr_ L T m 80 n 5 k 40,
 *        dtrtrs_ n 40 nrhs 5 (each routine with lwork asks for its
 *        workspace first: lwork = -1, a query)
 *     3: dgels_ m 80 n 40 nrhs 5 (QR), sgels_ m 30 n 50 nrhs 2 (LQ)
 *     4: zgetrf_ n 32, zgetri_ n 32; cpotrf_ n 24
 *     5: dsyevd_ V L n 40 (FLOPs unknown: the eigensolver's own BLAS and
 *        LAPACK calls are what can be counted)
 *     6: level 1: ddot_, daxpy_, dscal_, dnrm2_, dasum_, drot_ n 1000;
 *        zdotc_, zdotu_, zaxpy_ n 500; csscal_, scnrm2_ n 300;
 *        cblas_ddot n 1000, cblas_zdotu_sub n 500
 *     7: rejected and failed calls: dgetrf_ m -1 (info -1: no work),
 *        dpotrf_ n 16 of a matrix that is not positive definite (info > 0)
 *     8: dtrtri_ n 30, dsytrf_ n 30, dgetrs_ n 30 nrhs 4 after dgetrf_ n 30,
 *        dorgqr_ m 50 n 20 k 20 after dgeqrf_ m 50 n 20
 *     9 (LAPACKE): LAPACKE_dgesv n 64 nrhs 3, LAPACKE_dpotrf n 48
 *
 * It defines xerbla_, LAPACK's error handler, which the reference one
 * ends the program in (kind 7): a program's own comes first.
 *
 * At the end it prints "checksum HEX": a hash of the bytes of every result,
 * so a test can compare runs with and without mfu-record bit for bit.
 */
#include <cblas.h>
#include <complex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef WITH_LAPACKE
#include <lapacke.h>
#endif

#include "mfu.h"

typedef double _Complex zcplx;
typedef float _Complex ccplx;

/* The Fortran interface (gfortran: hidden lengths of the character
 * arguments last; the functions return their value). */
void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv, double *b, const int *ldb, int *info);
void dpotrf_(const char *up, const int *n, double *a, const int *lda, int *info, size_t l1);
void cpotrf_(const char *up, const int *n, ccplx *a, const int *lda, int *info, size_t l1);
void dpotrs_(const char *up, const int *n, const int *nrhs, const double *a, const int *lda, double *b,
	     const int *ldb, int *info, size_t l1);
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work, const int *lwork,
	     int *info);
void dormqr_(const char *side, const char *tr, const int *m, const int *n, const int *k, const double *a,
	     const int *lda, const double *tau, double *c, const int *ldc, double *work, const int *lwork, int *info,
	     size_t l1, size_t l2);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda, const double *tau, double *work,
	     const int *lwork, int *info);
void dtrtrs_(const char *up, const char *tr, const char *dg, const int *n, const int *nrhs, const double *a,
	     const int *lda, double *b, const int *ldb, int *info, size_t l1, size_t l2, size_t l3);
void dtrtri_(const char *up, const char *dg, const int *n, double *a, const int *lda, int *info, size_t l1,
	     size_t l2);
void dgels_(const char *tr, const int *m, const int *n, const int *nrhs, double *a, const int *lda, double *b,
	    const int *ldb, double *work, const int *lwork, int *info, size_t l1);
void sgels_(const char *tr, const int *m, const int *n, const int *nrhs, float *a, const int *lda, float *b,
	    const int *ldb, float *work, const int *lwork, int *info, size_t l1);
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void dgetrs_(const char *tr, const int *n, const int *nrhs, const double *a, const int *lda, const int *ipiv,
	     double *b, const int *ldb, int *info, size_t l1);
void zgetrf_(const int *m, const int *n, zcplx *a, const int *lda, int *ipiv, int *info);
void zgetri_(const int *n, zcplx *a, const int *lda, const int *ipiv, zcplx *work, const int *lwork, int *info);
void dsytrf_(const char *up, const int *n, double *a, const int *lda, int *ipiv, double *work, const int *lwork,
	     int *info, size_t l1);
void dsyevd_(const char *jz, const char *up, const int *n, double *a, const int *lda, double *w, double *work,
	     const int *lwork, int *iwork, const int *liwork, int *info, size_t l1, size_t l2);
double ddot_(const int *n, const double *x, const int *incx, const double *y, const int *incy);
void daxpy_(const int *n, const double *al, const double *x, const int *incx, double *y, const int *incy);
void dscal_(const int *n, const double *al, double *x, const int *incx);
double dnrm2_(const int *n, const double *x, const int *incx);
double dasum_(const int *n, const double *x, const int *incx);
void drot_(const int *n, double *x, const int *incx, double *y, const int *incy, const double *c, const double *s);
zcplx zdotc_(const int *n, const zcplx *x, const int *incx, const zcplx *y, const int *incy);
zcplx zdotu_(const int *n, const zcplx *x, const int *incx, const zcplx *y, const int *incy);
void zaxpy_(const int *n, const zcplx *al, const zcplx *x, const int *incx, zcplx *y, const int *incy);
void csscal_(const int *n, const float *al, ccplx *x, const int *incx);
float scnrm2_(const int *n, const ccplx *x, const int *incx);

static uint64_t hash = 0xcbf29ce484222325ull; /* FNV-1a over the results */
static int rejected;                          /* xerbla_ calls */

static void mix(const void *p, size_t len)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < len; i++)
		hash = (hash ^ b[i]) * 0x100000001b3ull;
}

void xerbla_(const char *name, const int *info, size_t len);
void xerbla_(const char *name, const int *info, size_t len)
{
	(void)name, (void)info, (void)len;
	rejected++;
}

#define NMAX 8192
static double A[NMAX], B[NMAX], W[NMAX], T[128];
static float SA[NMAX], SB[NMAX], SW[NMAX];
static zcplx Z[NMAX / 2], ZW[NMAX / 2];
static ccplx C[NMAX / 2];
static int ipiv[128], iwork[NMAX];

/* An n x n matrix (column-major, leading dimension n) with entries in
 * [-1, 1) and @diag added on the diagonal: diagonally dominant, so
 * well-conditioned, for diag > n; symmetric when @sym. */
static void mat(double *a, int n, double diag, int sym, int seed)
{
	for (int j = 0; j < n; j++)
		for (int i = 0; i < n; i++) {
			int x = sym && i < j ? j * 31 + i * 17 : i * 31 + j * 17;
			a[i + j * n] = 0.125 * (double)((x + seed) % 16) - 1.0 + (i == j ? diag : 0.0);
		}
}

static void vec(double *x, int n, int seed)
{
	for (int i = 0; i < n; i++)
		x[i] = 0.25 * (double)((i * 7 + seed) % 13) - 1.5;
}

/* A workspace query (lwork = -1) answers in work[0]: the size to pass. */
static int asked(double w)
{
	int n = (int)w;
	return n < 1 ? 1 : n > NMAX ? NMAX : n;
}

static void kind0(void)
{
	const int n = 64, nrhs = 3;
	int info;
	mat(A, n, n, 0, 1);
	vec(B, n * nrhs, 2);
	dgesv_(&n, &nrhs, A, &n, ipiv, B, &n, &info);
	mix(B, sizeof(double) * (size_t)(n * nrhs));
}

static void kind1(void)
{
	const int n = 48, nrhs = 2;
	int info;
	mat(A, n, n, 1, 3);
	dpotrf_("L", &n, A, &n, &info, 1);
	vec(B, n * nrhs, 4);
	dpotrs_("L", &n, &nrhs, A, &n, B, &n, &info, 1);
	mix(B, sizeof(double) * (size_t)(n * nrhs));
}

static void kind2(void)
{
	const int m = 80, n = 40, nrhs = 5, query = -1;
	int info, lwork;
	mat(A, m, 2, 0, 5); /* its first 40 columns: m x n with lda m */
	vec(B, m * nrhs, 6);
	dgeqrf_(&m, &n, A, &m, T, W, &query, &info);
	lwork = asked(W[0]);
	dgeqrf_(&m, &n, A, &m, T, W, &lwork, &info);
	dormqr_("L", "T", &m, &nrhs, &n, A, &m, T, B, &m, W, &query, &info, 1, 1);
	lwork = asked(W[0]);
	dormqr_("L", "T", &m, &nrhs, &n, A, &m, T, B, &m, W, &lwork, &info, 1, 1);
	dtrtrs_("U", "N", "N", &n, &nrhs, A, &m, B, &m, &info, 1, 1, 1);
	mix(B, sizeof(double) * (size_t)(m * nrhs));
}

static void kind3(void)
{
	const int m = 80, n = 40, nrhs = 5, sm = 30, sn = 50, snrhs = 2, query = -1;
	int info, lwork;
	float wq;
	mat(A, m, 2, 0, 7);
	vec(B, m * nrhs, 8);
	dgels_("N", &m, &n, &nrhs, A, &m, B, &m, W, &query, &info, 1);
	lwork = asked(W[0]);
	dgels_("N", &m, &n, &nrhs, A, &m, B, &m, W, &lwork, &info, 1);
	mix(B, sizeof(double) * (size_t)(n * nrhs));
	for (int i = 0; i < sm * sn; i++)
		SA[i] = 0.125f * (float)((i * 11) % 16) - 1.0f + (i % (sm + 1) == 0 ? 4.0f : 0.0f);
	for (int i = 0; i < sn * snrhs; i++)
		SB[i] = 0.25f * (float)(i % 7) - 0.75f;
	sgels_("N", &sm, &sn, &snrhs, SA, &sm, SB, &sn, &wq, &query, &info, 1);
	lwork = asked(wq);
	sgels_("N", &sm, &sn, &snrhs, SA, &sm, SB, &sn, SW, &lwork, &info, 1);
	mix(SB, sizeof(float) * (size_t)(sn * snrhs));
}

static void kind4(void)
{
	const int n = 32, cn = 24, query = -1;
	int info, lwork;
	for (int j = 0; j < n; j++)
		for (int i = 0; i < n; i++)
			Z[i + j * n] = 0.125 * ((i * 5 + j * 3) % 16) - 1.0 + I * (0.0625 * ((i + 2 * j) % 9)) +
				       (i == j ? n : 0);
	zgetrf_(&n, &n, Z, &n, ipiv, &info);
	zgetri_(&n, Z, &n, ipiv, ZW, &query, &info);
	lwork = asked(creal(ZW[0]));
	zgetri_(&n, Z, &n, ipiv, ZW, &lwork, &info);
	mix(Z, sizeof(zcplx) * (size_t)(n * n));
	/* Hermitian positive definite: conjugate pairs, a real heavy diagonal */
	for (int j = 0; j < cn; j++)
		for (int i = 0; i < cn; i++) {
			float re = 0.125f * (float)((i + j) % 8), im = 0.0625f * (float)(i - j);
			C[i + j * cn] = i == j ? (float)cn : re + I * im;
		}
	cpotrf_("L", &cn, C, &cn, &info, 1);
	mix(C, sizeof(ccplx) * (size_t)(cn * cn));
}

static void kind5(void)
{
	const int n = 40, query = -1;
	int info, lwork, liwork;
	mat(A, n, 1, 1, 9);
	dsyevd_("V", "L", &n, A, &n, T, W, &query, iwork, &query, &info, 1, 1);
	lwork = asked(W[0]);
	liwork = iwork[0] < 1 ? 1 : iwork[0];
	dsyevd_("V", "L", &n, A, &n, T, W, &lwork, iwork, &liwork, &info, 1, 1);
	mix(T, sizeof(double) * (size_t)n);
}

static void kind6(void)
{
	const int n = 1000, zn = 500, cn = 300, one = 1;
	const double al = 0.5, c = 0.6, s = 0.8;
	const float sal = 0.25f;
	const zcplx zal = 0.5 - 0.25 * I;
	double r[4];
	zcplx zr[3];
	float sr;
	vec(A, n, 10);
	vec(B, n, 11);
	r[0] = ddot_(&n, A, &one, B, &one);
	daxpy_(&n, &al, A, &one, B, &one);
	dscal_(&n, &al, A, &one);
	r[1] = dnrm2_(&n, A, &one);
	r[2] = dasum_(&n, B, &one);
	drot_(&n, A, &one, B, &one, &c, &s);
	mix(A, sizeof(double) * (size_t)n);
	mix(B, sizeof(double) * (size_t)n);
	for (int i = 0; i < 2 * zn; i++)
		Z[i] = 0.125 * (i % 9) - 0.5 + I * (0.25 * (i % 5) - 0.5);
	zr[0] = zdotc_(&zn, Z, &one, Z + zn, &one);
	zr[1] = zdotu_(&zn, Z, &one, Z + zn, &one);
	zaxpy_(&zn, &zal, Z, &one, Z + zn, &one);
	mix(Z + zn, sizeof(zcplx) * (size_t)zn);
	for (int i = 0; i < cn; i++)
		C[i] = 0.25f * (float)(i % 6) - 0.5f + I * (0.125f * (float)(i % 4));
	csscal_(&cn, &sal, C, &one);
	sr = scnrm2_(&cn, C, &one);
	mix(C, sizeof(ccplx) * (size_t)cn);
	r[3] = cblas_ddot(n, A, 1, B, 1);
	cblas_zdotu_sub(zn, Z, 1, Z + zn, 1, &zr[2]);
	mix(r, sizeof(r));
	mix(zr, sizeof(zr));
	mix(&sr, sizeof(sr));
}

static void kind7(void)
{
	const int bad = -1, n = 10, pn = 16;
	int info = 0;
	dgetrf_(&bad, &n, A, &n, ipiv, &info);
	mix(&info, sizeof(info));
	mat(A, pn, 0, 1, 12);
	A[5 + 5 * pn] = -50.0; /* not positive definite: info 6 or less */
	dpotrf_("L", &pn, A, &pn, &info, 1);
	mix(&info, sizeof(info));
}

static void kind8(void)
{
	const int n = 30, nrhs = 4, m = 50, qn = 20, query = -1;
	int info, lwork;
	mat(A, n, n, 0, 13);
	for (int j = 0; j < n; j++) /* upper triangular */
		for (int i = j + 1; i < n; i++)
			A[i + j * n] = 0;
	dtrtri_("U", "N", &n, A, &n, &info, 1, 1);
	mix(A, sizeof(double) * (size_t)(n * n));
	mat(A, n, n, 1, 14);
	dsytrf_("L", &n, A, &n, ipiv, W, &query, &info, 1);
	lwork = asked(W[0]);
	dsytrf_("L", &n, A, &n, ipiv, W, &lwork, &info, 1);
	mix(A, sizeof(double) * (size_t)(n * n));
	mat(A, n, n, 0, 15);
	vec(B, n * nrhs, 16);
	dgetrf_(&n, &n, A, &n, ipiv, &info);
	dgetrs_("N", &n, &nrhs, A, &n, ipiv, B, &n, &info, 1);
	mix(B, sizeof(double) * (size_t)(n * nrhs));
	mat(A, m, 2, 0, 17);
	dgeqrf_(&m, &qn, A, &m, T, W, &query, &info);
	lwork = asked(W[0]);
	dgeqrf_(&m, &qn, A, &m, T, W, &lwork, &info);
	dorgqr_(&m, &qn, &qn, A, &m, T, W, &query, &info);
	lwork = asked(W[0]);
	dorgqr_(&m, &qn, &qn, A, &m, T, W, &lwork, &info);
	mix(A, sizeof(double) * (size_t)(m * qn));
}

#ifdef WITH_LAPACKE
static void kind9(void)
{
	const int n = 64, nrhs = 3, pn = 48;
	mat(A, n, n, 0, 18);
	vec(B, n * nrhs, 19);
	(void)LAPACKE_dgesv(LAPACK_COL_MAJOR, n, nrhs, A, n, ipiv, B, n);
	mix(B, sizeof(double) * (size_t)(n * nrhs));
	mat(A, pn, pn, 1, 20);
	(void)LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', pn, A, pn);
	mix(A, sizeof(double) * (size_t)(pn * pn));
}
#define KINDS 10
#else
#define KINDS 9
#endif

int main(int argc, char **argv)
{
	long steps = KINDS;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
			char *end;
			steps = strtol(argv[++i], &end, 10);
			if (*end || steps < 0) {
				fprintf(stderr, "lapack: bad --steps\n");
				return 2;
			}
		} else {
			fprintf(stderr, "usage: lapack [--steps N]\n");
			return 2;
		}
	}
	for (long s = 0; s < steps; s++) {
		mfu_step_begin();
		switch (s % KINDS) {
		case 0: kind0(); break;
		case 1: kind1(); break;
		case 2: kind2(); break;
		case 3: kind3(); break;
		case 4: kind4(); break;
		case 5: kind5(); break;
		case 6: kind6(); break;
		case 7: kind7(); break;
		case 8: kind8(); break;
#ifdef WITH_LAPACKE
		case 9: kind9(); break;
#endif
		}
		mfu_step_end();
	}
	printf("kinds %d rejected %d\nchecksum %016llx\n", KINDS, rejected, (unsigned long long)hash);
	return 0;
}
