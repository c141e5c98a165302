/*
 * A stand-in BLAS for test_libflops's counting-library test: dgemm_ and
 * ddot_ that do no arithmetic and count their own calls, and say which
 * object called them (the counting library, when a call went through it).
 */
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#include "fake_lapack.h"

int fake_gemm_calls;
int fake_gemm_via_shim; /* calls whose caller was libmfu-libflops.so */
void (*fake_gemm_hook)(void);

static void note_caller(void *ra)
{
	Dl_info info;
	if (dladdr(ra, &info) && info.dli_fname && strstr(info.dli_fname, "libmfu-libflops"))
		fake_gemm_via_shim++;
}

void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k, const double *al,
	    const double *a, const int *lda, const double *b, const int *ldb, const double *be, double *c,
	    const int *ldc, size_t l1, size_t l2)
{
	(void)ta, (void)tb, (void)m, (void)n, (void)k, (void)al, (void)a, (void)lda, (void)b, (void)ldb;
	(void)be, (void)c, (void)ldc, (void)l1, (void)l2;
	fake_gemm_calls++;
	note_caller(__builtin_return_address(0));
	if (fake_gemm_hook)
		fake_gemm_hook();
}

double ddot_(const int *n, const double *x, const int *incx, const double *y, const int *incy)
{
	(void)incx, (void)incy;
	return *n > 0 ? x[0] * y[0] : 0;
}
