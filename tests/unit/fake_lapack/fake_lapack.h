/* The stand-in BLAS and LAPACK of test_libflops (blas.c, lapack.c): the
 * prototypes the test calls, and what the fakes saw. */
#ifndef FAKE_LAPACK_H
#define FAKE_LAPACK_H
#include <stddef.h>

extern int fake_gemm_calls;
extern int fake_gemm_via_shim;
extern int fake_lapack_calls; /* LAPACK routines entered, nested ones too */
extern void (*fake_gemm_hook)(void); /* called inside each dgemm_, when set */

void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k, const double *al,
	    const double *a, const int *lda, const double *b, const int *ldb, const double *be, double *c,
	    const int *ldc, size_t l1, size_t l2);
double ddot_(const int *n, const double *x, const int *incx, const double *y, const int *incy);
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void dgetrs_(const char *tr, const int *n, const int *nrhs, const double *a, const int *lda, const int *ipiv,
	     double *b, const int *ldb, int *info, size_t l1);
void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv, double *b, const int *ldb,
	    int *info);
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work, const int *lwork,
	     int *info);
void dsyevd_(const char *jz, const char *up, const int *n, double *a, const int *lda, double *w, double *work,
	     const int *lwork, int *iwork, const int *liwork, int *info, size_t l1, size_t l2);
#endif
