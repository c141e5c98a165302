/* The BLAS, LAPACK and LAPACKE wrappers of libmfu-libflops.so
 * (libflops_shim.c says how a wrapper counts). */
#include "libflops_shim_impl.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* ---- CBLAS: scalars by value for real types, by pointer for complex ---- */

#define CB_GEMM(sym, SC, op, cplx)                                                                 \
	WRAP_VOID(sym, (int o, int ta, int tb, int m, int n, int k, SC al, cptr a, int lda, cptr b, \
			int ldb, SC be, void *c, int ldc),                                         \
		  (o, ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc), C(op, cplx, 0, m, n, k))
#define CB_GEMMT(sym, SC, cplx)                                                                       \
	WRAP_VOID(sym, (int o, int up, int ta, int tb, int n, int k, SC al, cptr a, int lda, cptr b,  \
			int ldb, SC be, void *c, int ldc),                                           \
		  (o, up, ta, tb, n, k, al, a, lda, b, ldb, be, c, ldc), C(GEMMT, cplx, 0, 0, n, k))
#define CB_SYMM(sym, SC, cplx)                                                                     \
	WRAP_VOID(sym, (int o, int side, int up, int m, int n, SC al, cptr a, int lda, cptr b, int ldb, \
			SC be, void *c, int ldc),                                                  \
		  (o, side, up, m, n, al, a, lda, b, ldb, be, c, ldc),                            \
		  C(SYMM, cplx, side == CBLAS_LEFT, m, n, 0))
#define CB_SYRK(sym, SA, SB, cplx)                                                                  \
	WRAP_VOID(sym, (int o, int up, int tr, int n, int k, SA al, cptr a, int lda, SB be, void *c, \
			int ldc),                                                                   \
		  (o, up, tr, n, k, al, a, lda, be, c, ldc), C(SYRK, cplx, 0, 0, n, k))
#define CB_SYR2K(sym, SA, SB, cplx)                                                                  \
	WRAP_VOID(sym, (int o, int up, int tr, int n, int k, SA al, cptr a, int lda, cptr b, int ldb, \
			SB be, void *c, int ldc),                                                    \
		  (o, up, tr, n, k, al, a, lda, b, ldb, be, c, ldc), C(SYR2K, cplx, 0, 0, n, k))
#define CB_TRMM(sym, SC, cplx)                                                                       \
	WRAP_VOID(sym, (int o, int side, int up, int ta, int dg, int m, int n, SC al, cptr a, int lda, \
			void *b, int ldb),                                                           \
		  (o, side, up, ta, dg, m, n, al, a, lda, b, ldb), C(TRMM, cplx, side == CBLAS_LEFT, m, n, 0))
#define CB_GEMV(sym, SC, cplx)                                                                     \
	WRAP_VOID(sym, (int o, int tr, int m, int n, SC al, cptr a, int lda, cptr x, int incx, SC be, \
			void *y, int incy),                                                        \
		  (o, tr, m, n, al, a, lda, x, incx, be, y, incy), C(GEMV, cplx, 0, m, n, 0))
#define CB_SYMV(sym, SC, cplx)                                                                       \
	WRAP_VOID(sym, (int o, int up, int n, SC al, cptr a, int lda, cptr x, int incx, SC be, void *y, \
			int incy),                                                                   \
		  (o, up, n, al, a, lda, x, incx, be, y, incy), C(SYMV, cplx, 0, 0, n, 0))
#define CB_TRMV(sym, cplx)                                                                           \
	WRAP_VOID(sym, (int o, int up, int tr, int dg, int n, cptr a, int lda, void *x, int incx),   \
		  (o, up, tr, dg, n, a, lda, x, incx), C(TRMV, cplx, 0, 0, n, 0))
#define CB_GER(sym, SC, cplx)                                                                    \
	WRAP_VOID(sym, (int o, int m, int n, SC al, cptr x, int incx, cptr y, int incy, void *a,  \
			int lda),                                                                \
		  (o, m, n, al, x, incx, y, incy, a, lda), C(GER, cplx, 0, m, n, 0))

CB_GEMM(cblas_sgemm, float, GEMM, 0)
CB_GEMM(cblas_dgemm, double, GEMM, 0)
CB_GEMM(cblas_cgemm, cptr, GEMM, 1)
CB_GEMM(cblas_zgemm, cptr, GEMM, 1)
CB_GEMM(cblas_cgemm3m, cptr, GEMM, 1)
CB_GEMM(cblas_zgemm3m, cptr, GEMM, 1)
CB_GEMMT(cblas_sgemmt, float, 0)
CB_GEMMT(cblas_dgemmt, double, 0)
CB_GEMMT(cblas_cgemmt, cptr, 1)
CB_GEMMT(cblas_zgemmt, cptr, 1)
CB_SYMM(cblas_ssymm, float, 0)
CB_SYMM(cblas_dsymm, double, 0)
CB_SYMM(cblas_csymm, cptr, 1)
CB_SYMM(cblas_zsymm, cptr, 1)
CB_SYMM(cblas_chemm, cptr, 1)
CB_SYMM(cblas_zhemm, cptr, 1)
CB_SYRK(cblas_ssyrk, float, float, 0)
CB_SYRK(cblas_dsyrk, double, double, 0)
CB_SYRK(cblas_csyrk, cptr, cptr, 1)
CB_SYRK(cblas_zsyrk, cptr, cptr, 1)
CB_SYRK(cblas_cherk, float, float, 1)
CB_SYRK(cblas_zherk, double, double, 1)
CB_SYR2K(cblas_ssyr2k, float, float, 0)
CB_SYR2K(cblas_dsyr2k, double, double, 0)
CB_SYR2K(cblas_csyr2k, cptr, cptr, 1)
CB_SYR2K(cblas_zsyr2k, cptr, cptr, 1)
CB_SYR2K(cblas_cher2k, cptr, float, 1)
CB_SYR2K(cblas_zher2k, cptr, double, 1)
CB_TRMM(cblas_strmm, float, 0)
CB_TRMM(cblas_dtrmm, double, 0)
CB_TRMM(cblas_ctrmm, cptr, 1)
CB_TRMM(cblas_ztrmm, cptr, 1)
CB_TRMM(cblas_strsm, float, 0)
CB_TRMM(cblas_dtrsm, double, 0)
CB_TRMM(cblas_ctrsm, cptr, 1)
CB_TRMM(cblas_ztrsm, cptr, 1)
CB_GEMV(cblas_sgemv, float, 0)
CB_GEMV(cblas_dgemv, double, 0)
CB_GEMV(cblas_cgemv, cptr, 1)
CB_GEMV(cblas_zgemv, cptr, 1)
CB_SYMV(cblas_ssymv, float, 0)
CB_SYMV(cblas_dsymv, double, 0)
CB_SYMV(cblas_chemv, cptr, 1)
CB_SYMV(cblas_zhemv, cptr, 1)
CB_TRMV(cblas_strmv, 0)
CB_TRMV(cblas_dtrmv, 0)
CB_TRMV(cblas_ctrmv, 1)
CB_TRMV(cblas_ztrmv, 1)
CB_TRMV(cblas_strsv, 0)
CB_TRMV(cblas_dtrsv, 0)
CB_TRMV(cblas_ctrsv, 1)
CB_TRMV(cblas_ztrsv, 1)
CB_GER(cblas_sger, float, 0)
CB_GER(cblas_dger, double, 0)
CB_GER(cblas_cgeru, cptr, 1)
CB_GER(cblas_zgeru, cptr, 1)
CB_GER(cblas_cgerc, cptr, 1)
CB_GER(cblas_zgerc, cptr, 1)

/* ---- Fortran: everything by reference, then the hidden lengths of the
 * character arguments (gfortran passes them as size_t; C callers often do
 * not, and then the callee reads whatever is there, with or without us) ---- */

#define F_GEMM(sym, cplx)                                                                          \
	WRAP_VOID(sym, (fchr ta, fchr tb, fint m, fint n, fint k, cptr al, cptr a, fint lda, cptr b, \
			fint ldb, cptr be, void *c, fint ldc, size_t l1, size_t l2),               \
		  (ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc, l1, l2), C(GEMM, cplx, 0, *m, *n, *k))
#define F_GEMMT(sym, cplx)                                                                           \
	WRAP_VOID(sym, (fchr up, fchr ta, fchr tb, fint n, fint k, cptr al, cptr a, fint lda, cptr b,  \
			fint ldb, cptr be, void *c, fint ldc, size_t l1, size_t l2, size_t l3),      \
		  (up, ta, tb, n, k, al, a, lda, b, ldb, be, c, ldc, l1, l2, l3), C(GEMMT, cplx, 0, 0, *n, *k))
#define F_SYMM(sym, cplx)                                                                           \
	WRAP_VOID(sym, (fchr side, fchr up, fint m, fint n, cptr al, cptr a, fint lda, cptr b,        \
			fint ldb, cptr be, void *c, fint ldc, size_t l1, size_t l2),                \
		  (side, up, m, n, al, a, lda, b, ldb, be, c, ldc, l1, l2),                        \
		  C(SYMM, cplx, F_LEFT(side), *m, *n, 0))
#define F_SYRK(sym, cplx)                                                                           \
	WRAP_VOID(sym, (fchr up, fchr tr, fint n, fint k, cptr al, cptr a, fint lda, cptr be,        \
			void *c, fint ldc, size_t l1, size_t l2),                                   \
		  (up, tr, n, k, al, a, lda, be, c, ldc, l1, l2), C(SYRK, cplx, 0, 0, *n, *k))
#define F_SYR2K(sym, cplx)                                                                           \
	WRAP_VOID(sym, (fchr up, fchr tr, fint n, fint k, cptr al, cptr a, fint lda, cptr b, fint ldb, \
			cptr be, void *c, fint ldc, size_t l1, size_t l2),                           \
		  (up, tr, n, k, al, a, lda, b, ldb, be, c, ldc, l1, l2), C(SYR2K, cplx, 0, 0, *n, *k))
#define F_TRMM(sym, cplx)                                                                            \
	WRAP_VOID(sym, (fchr side, fchr up, fchr ta, fchr dg, fint m, fint n, cptr al, cptr a,         \
			fint lda, void *b, fint ldb, size_t l1, size_t l2, size_t l3, size_t l4),    \
		  (side, up, ta, dg, m, n, al, a, lda, b, ldb, l1, l2, l3, l4),                     \
		  C(TRMM, cplx, F_LEFT(side), *m, *n, 0))
#define F_GEMV(sym, cplx)                                                                            \
	WRAP_VOID(sym, (fchr tr, fint m, fint n, cptr al, cptr a, fint lda, cptr x, fint incx,         \
			cptr be, void *y, fint incy, size_t l1),                                     \
		  (tr, m, n, al, a, lda, x, incx, be, y, incy, l1), C(GEMV, cplx, 0, *m, *n, 0))
#define F_SYMV(sym, cplx)                                                                            \
	WRAP_VOID(sym, (fchr up, fint n, cptr al, cptr a, fint lda, cptr x, fint incx, cptr be,        \
			void *y, fint incy, size_t l1),                                              \
		  (up, n, al, a, lda, x, incx, be, y, incy, l1), C(SYMV, cplx, 0, 0, *n, 0))
#define F_TRMV(sym, cplx)                                                                            \
	WRAP_VOID(sym, (fchr up, fchr tr, fchr dg, fint n, cptr a, fint lda, void *x, fint incx,       \
			size_t l1, size_t l2, size_t l3),                                            \
		  (up, tr, dg, n, a, lda, x, incx, l1, l2, l3), C(TRMV, cplx, 0, 0, *n, 0))
#define F_GER(sym, cplx)                                                                             \
	WRAP_VOID(sym, (fint m, fint n, cptr al, cptr x, fint incx, cptr y, fint incy, void *a,        \
			fint lda),                                                                   \
		  (m, n, al, x, incx, y, incy, a, lda), C(GER, cplx, 0, *m, *n, 0))

F_GEMM(sgemm_, 0)
F_GEMM(dgemm_, 0)
F_GEMM(cgemm_, 1)
F_GEMM(zgemm_, 1)
F_GEMM(cgemm3m_, 1)
F_GEMM(zgemm3m_, 1)
F_GEMMT(sgemmt_, 0)
F_GEMMT(dgemmt_, 0)
F_GEMMT(cgemmt_, 1)
F_GEMMT(zgemmt_, 1)
F_SYMM(ssymm_, 0)
F_SYMM(dsymm_, 0)
F_SYMM(csymm_, 1)
F_SYMM(zsymm_, 1)
F_SYMM(chemm_, 1)
F_SYMM(zhemm_, 1)
F_SYRK(ssyrk_, 0)
F_SYRK(dsyrk_, 0)
F_SYRK(csyrk_, 1)
F_SYRK(zsyrk_, 1)
F_SYRK(cherk_, 1)
F_SYRK(zherk_, 1)
F_SYR2K(ssyr2k_, 0)
F_SYR2K(dsyr2k_, 0)
F_SYR2K(csyr2k_, 1)
F_SYR2K(zsyr2k_, 1)
F_SYR2K(cher2k_, 1)
F_SYR2K(zher2k_, 1)
F_TRMM(strmm_, 0)
F_TRMM(dtrmm_, 0)
F_TRMM(ctrmm_, 1)
F_TRMM(ztrmm_, 1)
F_TRMM(strsm_, 0)
F_TRMM(dtrsm_, 0)
F_TRMM(ctrsm_, 1)
F_TRMM(ztrsm_, 1)
F_GEMV(sgemv_, 0)
F_GEMV(dgemv_, 0)
F_GEMV(cgemv_, 1)
F_GEMV(zgemv_, 1)
F_SYMV(ssymv_, 0)
F_SYMV(dsymv_, 0)
F_SYMV(chemv_, 1)
F_SYMV(zhemv_, 1)
F_TRMV(strmv_, 0)
F_TRMV(dtrmv_, 0)
F_TRMV(ctrmv_, 1)
F_TRMV(ztrmv_, 1)
F_TRMV(strsv_, 0)
F_TRMV(dtrsv_, 0)
F_TRMV(ctrsv_, 1)
F_TRMV(ztrsv_, 1)
F_GER(sger_, 0)
F_GER(dger_, 0)
F_GER(cgeru_, 1)
F_GER(zgeru_, 1)
F_GER(cgerc_, 1)
F_GER(zgerc_, 1)

/* ---- BLAS level 1. CBLAS: n and the real scalars by value, complex
 * scalars by pointer; Fortran: everything by reference. The Fortran
 * functions return their value (gfortran returns a COMPLEX by value, as C's
 * _Complex); CBLAS's complex dot products store it through a pointer. ---- */

typedef float _Complex cfloat;
typedef double _Complex cdouble;
typedef void *vptr;

#define CB_DOT(sym, T)                                                                       \
	WRAP_R(T, sym, (int n, cptr x, int incx, cptr y, int incy), (n, x, incx, y, incy), 1, \
	       CNT(sym, 0, 0, n, 0))
#define CB_DOTSUB(sym)                                                                                 \
	WRAP_V(sym, (int n, cptr x, int incx, cptr y, int incy, vptr r), (n, x, incx, y, incy, r), 1, \
	       CNT(sym, 0, 0, n, 0))
#define CB_AXPY(sym, SC)                                                                               \
	WRAP_V(sym, (int n, SC al, cptr x, int incx, vptr y, int incy), (n, al, x, incx, y, incy), 1, \
	       CNT(sym, 0, 0, n, 0))
#define CB_SCAL(sym, SC) WRAP_V(sym, (int n, SC al, vptr x, int incx), (n, al, x, incx), 1, CNT(sym, 0, 0, n, 0))
#define CB_NRM2(sym, T) WRAP_R(T, sym, (int n, cptr x, int incx), (n, x, incx), 1, CNT(sym, 0, 0, n, 0))
#define CB_ROT(sym, SC)                                                                              \
	WRAP_V(sym, (int n, vptr x, int incx, vptr y, int incy, SC c, SC s), (n, x, incx, y, incy, c, s), \
	       1, CNT(sym, 0, 0, n, 0))

CB_DOT(cblas_sdot, float)
CB_DOT(cblas_ddot, double)
CB_DOTSUB(cblas_cdotu_sub)
CB_DOTSUB(cblas_zdotu_sub)
CB_DOTSUB(cblas_cdotc_sub)
CB_DOTSUB(cblas_zdotc_sub)
CB_AXPY(cblas_saxpy, float)
CB_AXPY(cblas_daxpy, double)
CB_AXPY(cblas_caxpy, cptr)
CB_AXPY(cblas_zaxpy, cptr)
CB_SCAL(cblas_sscal, float)
CB_SCAL(cblas_dscal, double)
CB_SCAL(cblas_cscal, cptr)
CB_SCAL(cblas_zscal, cptr)
CB_SCAL(cblas_csscal, float)
CB_SCAL(cblas_zdscal, double)
CB_NRM2(cblas_snrm2, float)
CB_NRM2(cblas_dnrm2, double)
CB_NRM2(cblas_scnrm2, float)
CB_NRM2(cblas_dznrm2, double)
CB_NRM2(cblas_sasum, float)
CB_NRM2(cblas_dasum, double)
CB_NRM2(cblas_scasum, float)
CB_NRM2(cblas_dzasum, double)
CB_ROT(cblas_srot, float)
CB_ROT(cblas_drot, double)
CB_ROT(cblas_csrot, float)
CB_ROT(cblas_zdrot, double)

#define F_DOT(sym, T)                                                                        \
	WRAP_R(T, sym, (fint n, cptr x, fint incx, cptr y, fint incy), (n, x, incx, y, incy), 1, \
	       CNT(sym, 0, 0, *n, 0))
#define F_AXPY(sym)                                                                                     \
	WRAP_V(sym, (fint n, cptr al, cptr x, fint incx, vptr y, fint incy), (n, al, x, incx, y, incy), 1, \
	       CNT(sym, 0, 0, *n, 0))
#define F_SCAL(sym) WRAP_V(sym, (fint n, cptr al, vptr x, fint incx), (n, al, x, incx), 1, CNT(sym, 0, 0, *n, 0))
#define F_NRM2(sym, T) WRAP_R(T, sym, (fint n, cptr x, fint incx), (n, x, incx), 1, CNT(sym, 0, 0, *n, 0))
#define F_ROT(sym)                                                                                     \
	WRAP_V(sym, (fint n, vptr x, fint incx, vptr y, fint incy, cptr c, cptr s), (n, x, incx, y, incy, c, s), \
	       1, CNT(sym, 0, 0, *n, 0))

F_DOT(sdot_, float)
F_DOT(ddot_, double)
F_DOT(cdotu_, cfloat)
F_DOT(zdotu_, cdouble)
F_DOT(cdotc_, cfloat)
F_DOT(zdotc_, cdouble)
F_AXPY(saxpy_)
F_AXPY(daxpy_)
F_AXPY(caxpy_)
F_AXPY(zaxpy_)
F_SCAL(sscal_)
F_SCAL(dscal_)
F_SCAL(cscal_)
F_SCAL(zscal_)
F_SCAL(csscal_)
F_SCAL(zdscal_)
F_NRM2(snrm2_, float)
F_NRM2(dnrm2_, double)
F_NRM2(scnrm2_, float)
F_NRM2(dznrm2_, double)
F_NRM2(sasum_, float)
F_NRM2(dasum_, double)
F_NRM2(scasum_, float)
F_NRM2(dzasum_, double)
F_ROT(srot_)
F_ROT(drot_)
F_ROT(csrot_)
F_ROT(zdrot_)

/* ---- LAPACK, Fortran interface: info is the last argument before the
 * hidden character lengths; a call with info < 0 (an argument rejected)
 * did nothing, and one with lwork = -1 (or liwork, lrwork) is a workspace
 * query: neither is counted. info > 0 (a singular factor, a matrix not
 * positive definite) counts the whole operation. ---- */

typedef int *fout;
#define INFO_OK (*info >= 0)
#define WORK_OK (*lwork != -1 && *info >= 0)

#define F_GETRF(sym)                                                                                    \
	WRAP_V(sym, (fint m, fint n, vptr a, fint lda, fout ipiv, fout info), (m, n, a, lda, ipiv, info), INFO_OK, \
	       CNT(sym, 0, *m, *n, 0))
#define F_GETRS(sym)                                                                                  \
	WRAP_V(sym, (fchr tr, fint n, fint nrhs, cptr a, fint lda, fint ipiv, vptr b, fint ldb, fout info, \
		     size_t l1),                                                                        \
	       (tr, n, nrhs, a, lda, ipiv, b, ldb, info, l1), INFO_OK, CNT(sym, 0, 0, *n, *nrhs))
#define F_GESV(sym)                                                                                  \
	WRAP_V(sym, (fint n, fint nrhs, vptr a, fint lda, fout ipiv, vptr b, fint ldb, fout info),        \
	       (n, nrhs, a, lda, ipiv, b, ldb, info), INFO_OK, CNT(sym, 0, 0, *n, *nrhs))
#define F_GETRI(sym)                                                                                 \
	WRAP_V(sym, (fint n, vptr a, fint lda, fint ipiv, vptr work, fint lwork, fout info),              \
	       (n, a, lda, ipiv, work, lwork, info), WORK_OK, CNT(sym, 0, 0, *n, 0))
/* POTRF and POTRI */
#define F_POTRF(sym)                                                                                  \
	WRAP_V(sym, (fchr up, fint n, vptr a, fint lda, fout info, size_t l1), (up, n, a, lda, info, l1), INFO_OK, \
	       CNT(sym, 0, 0, *n, 0))
/* POTRS and POSV */
#define F_POTRS(sym)                                                                                 \
	WRAP_V(sym, (fchr up, fint n, fint nrhs, vptr a, fint lda, vptr b, fint ldb, fout info, size_t l1), \
	       (up, n, nrhs, a, lda, b, ldb, info, l1), INFO_OK, CNT(sym, 0, 0, *n, *nrhs))
#define F_GEQRF(sym)                                                                                \
	WRAP_V(sym, (fint m, fint n, vptr a, fint lda, vptr tau, vptr work, fint lwork, fout info),      \
	       (m, n, a, lda, tau, work, lwork, info), WORK_OK, CNT(sym, 0, *m, *n, 0))
#define F_ORGQR(sym)                                                                                       \
	WRAP_V(sym, (fint m, fint n, fint k, vptr a, fint lda, cptr tau, vptr work, fint lwork, fout info),     \
	       (m, n, k, a, lda, tau, work, lwork, info), WORK_OK, CNT(sym, 0, *m, *n, *k))
#define F_ORMQR(sym)                                                                                      \
	WRAP_V(sym, (fchr side, fchr tr, fint m, fint n, fint k, cptr a, fint lda, cptr tau, vptr c, fint ldc, \
		     vptr work, fint lwork, fout info, size_t l1, size_t l2),                                 \
	       (side, tr, m, n, k, a, lda, tau, c, ldc, work, lwork, info, l1, l2), WORK_OK,                      \
	       CNT(sym, F_LEFT(side), *m, *n, *k))
#define F_TRTRI(sym)                                                                                  \
	WRAP_V(sym, (fchr up, fchr dg, fint n, vptr a, fint lda, fout info, size_t l1, size_t l2),         \
	       (up, dg, n, a, lda, info, l1, l2), INFO_OK, CNT(sym, 0, 0, *n, 0))
#define F_TRTRS(sym)                                                                                   \
	WRAP_V(sym, (fchr up, fchr tr, fchr dg, fint n, fint nrhs, cptr a, fint lda, vptr b, fint ldb,      \
		     fout info, size_t l1, size_t l2, size_t l3),                                         \
	       (up, tr, dg, n, nrhs, a, lda, b, ldb, info, l1, l2, l3), INFO_OK, CNT(sym, 0, 0, *n, *nrhs))
#define F_SYTRF(sym)                                                                                      \
	WRAP_V(sym, (fchr up, fint n, vptr a, fint lda, fout ipiv, vptr work, fint lwork, fout info, size_t l1), \
	       (up, n, a, lda, ipiv, work, lwork, info, l1), WORK_OK, CNT(sym, 0, 0, *n, 0))
#define F_SYTRS(sym)                                                                                  \
	WRAP_V(sym, (fchr up, fint n, fint nrhs, cptr a, fint lda, fint ipiv, vptr b, fint ldb, fout info, \
		     size_t l1),                                                                        \
	       (up, n, nrhs, a, lda, ipiv, b, ldb, info, l1), INFO_OK, CNT(sym, 0, 0, *n, *nrhs))
#define F_SYSV(sym)                                                                                     \
	WRAP_V(sym, (fchr up, fint n, fint nrhs, vptr a, fint lda, fout ipiv, vptr b, fint ldb, vptr work,   \
		     fint lwork, fout info, size_t l1),                                                    \
	       (up, n, nrhs, a, lda, ipiv, b, ldb, work, lwork, info, l1), WORK_OK, CNT(sym, 0, 0, *n, *nrhs))
#define F_GELS(sym)                                                                                     \
	WRAP_V(sym, (fchr tr, fint m, fint n, fint nrhs, vptr a, fint lda, vptr b, fint ldb, vptr work,      \
		     fint lwork, fout info, size_t l1),                                                    \
	       (tr, m, n, nrhs, a, lda, b, ldb, work, lwork, info, l1), WORK_OK, CNT(sym, 0, *m, *n, *nrhs))

#define SDCZ(F, base) F(s##base##_) F(d##base##_) F(c##base##_) F(z##base##_)
SDCZ(F_GETRF, getrf)
SDCZ(F_GETRS, getrs)
SDCZ(F_GESV, gesv)
SDCZ(F_GETRI, getri)
SDCZ(F_POTRF, potrf)
SDCZ(F_POTRS, potrs)
SDCZ(F_POTRS, posv)
SDCZ(F_POTRF, potri)
SDCZ(F_GEQRF, geqrf)
F_ORGQR(sorgqr_)
F_ORGQR(dorgqr_)
F_ORGQR(cungqr_)
F_ORGQR(zungqr_)
F_ORMQR(sormqr_)
F_ORMQR(dormqr_)
F_ORMQR(cunmqr_)
F_ORMQR(zunmqr_)
SDCZ(F_TRTRI, trtri)
SDCZ(F_TRTRS, trtrs)
SDCZ(F_SYTRF, sytrf)
F_SYTRF(chetrf_)
F_SYTRF(zhetrf_)
SDCZ(F_SYTRS, sytrs)
F_SYTRS(chetrs_)
F_SYTRS(zhetrs_)
SDCZ(F_SYSV, sysv)
F_SYSV(chesv_)
F_SYSV(zhesv_)
SDCZ(F_GELS, gels)

/* ---- LAPACKE: dimensions by value (lapack_int: int), the matrix
 * layout first, info returned (< 0: an argument rejected, or no memory for
 * the workspace: no work done). It calls the Fortran routine, through the
 * dynamic loader when that is another library's: a nested call. ---- */

typedef const int *lint_p;
#define RC_OK (rc_ >= 0)
#define E_LEFT(side) ((side) == 'L' || (side) == 'l')

#define E_GETRF(sym)                                                                                     \
	WRAP_R(int, sym, (int lay, int m, int n, vptr a, int lda, fout ipiv), (lay, m, n, a, lda, ipiv), RC_OK, \
	       CNT(sym, 0, m, n, 0))
#define E_GETRS(sym)                                                                                \
	WRAP_R(int, sym, (int lay, char tr, int n, int nrhs, cptr a, int lda, lint_p ipiv, vptr b, int ldb), \
	       (lay, tr, n, nrhs, a, lda, ipiv, b, ldb), RC_OK, CNT(sym, 0, 0, n, nrhs))
#define E_GESV(sym)                                                                                   \
	WRAP_R(int, sym, (int lay, int n, int nrhs, vptr a, int lda, fout ipiv, vptr b, int ldb),          \
	       (lay, n, nrhs, a, lda, ipiv, b, ldb), RC_OK, CNT(sym, 0, 0, n, nrhs))
#define E_GETRI(sym)                                                                                  \
	WRAP_R(int, sym, (int lay, int n, vptr a, int lda, lint_p ipiv), (lay, n, a, lda, ipiv), RC_OK,     \
	       CNT(sym, 0, 0, n, 0))
#define E_POTRF(sym)                                                                                  \
	WRAP_R(int, sym, (int lay, char up, int n, vptr a, int lda), (lay, up, n, a, lda), RC_OK,           \
	       CNT(sym, 0, 0, n, 0))
/* POTRS and POSV */
#define E_POTRS(sym)                                                                                  \
	WRAP_R(int, sym, (int lay, char up, int n, int nrhs, vptr a, int lda, vptr b, int ldb),            \
	       (lay, up, n, nrhs, a, lda, b, ldb), RC_OK, CNT(sym, 0, 0, n, nrhs))
#define E_GEQRF(sym)                                                                                  \
	WRAP_R(int, sym, (int lay, int m, int n, vptr a, int lda, vptr tau), (lay, m, n, a, lda, tau), RC_OK, \
	       CNT(sym, 0, m, n, 0))
#define E_ORGQR(sym)                                                                                  \
	WRAP_R(int, sym, (int lay, int m, int n, int k, vptr a, int lda, cptr tau), (lay, m, n, k, a, lda, tau), \
	       RC_OK, CNT(sym, 0, m, n, k))
#define E_ORMQR(sym)                                                                                  \
	WRAP_R(int, sym, (int lay, char side, char tr, int m, int n, int k, cptr a, int lda, cptr tau,     \
			  vptr c, int ldc),                                                             \
	       (lay, side, tr, m, n, k, a, lda, tau, c, ldc), RC_OK, CNT(sym, E_LEFT(side), m, n, k))
#define E_TRTRI(sym)                                                                                  \
	WRAP_R(int, sym, (int lay, char up, char dg, int n, vptr a, int lda), (lay, up, dg, n, a, lda), RC_OK, \
	       CNT(sym, 0, 0, n, 0))
#define E_SYTRF(sym)                                                                                  \
	WRAP_R(int, sym, (int lay, char up, int n, vptr a, int lda, fout ipiv), (lay, up, n, a, lda, ipiv), \
	       RC_OK, CNT(sym, 0, 0, n, 0))
#define E_GELS(sym)                                                                                   \
	WRAP_R(int, sym, (int lay, char tr, int m, int n, int nrhs, vptr a, int lda, vptr b, int ldb),     \
	       (lay, tr, m, n, nrhs, a, lda, b, ldb), RC_OK, CNT(sym, 0, m, n, nrhs))

#define E_SDCZ(F, base) F(LAPACKE_s##base) F(LAPACKE_d##base) F(LAPACKE_c##base) F(LAPACKE_z##base)
E_SDCZ(E_GETRF, getrf)
E_SDCZ(E_GETRS, getrs)
E_SDCZ(E_GESV, gesv)
E_SDCZ(E_GETRI, getri)
E_SDCZ(E_POTRF, potrf)
E_SDCZ(E_POTRS, potrs)
E_SDCZ(E_POTRS, posv)
E_SDCZ(E_GEQRF, geqrf)
E_ORGQR(LAPACKE_sorgqr)
E_ORGQR(LAPACKE_dorgqr)
E_ORGQR(LAPACKE_cungqr)
E_ORGQR(LAPACKE_zungqr)
E_ORMQR(LAPACKE_sormqr)
E_ORMQR(LAPACKE_dormqr)
E_ORMQR(LAPACKE_cunmqr)
E_ORMQR(LAPACKE_zunmqr)
E_SDCZ(E_TRTRI, trtri)
E_SDCZ(E_SYTRF, sytrf)
E_SDCZ(E_GELS, gels)

/* ---- LAPACK drivers whose FLOPs are unknown (eigenvalues, SVD, least
 * squares by SVD or with a rank decision): calls only. ---- */

#define U_SYEV(sym)                                                                                    \
	WRAP_UNKNOWN(sym, (fchr jz, fchr up, fint n, vptr a, fint lda, vptr w, vptr work, fint lwork,       \
			   fout info, size_t l1, size_t l2),                                              \
		     (jz, up, n, a, lda, w, work, lwork, info, l1, l2), WORK_OK)
#define U_SYEVD(sym)                                                                                   \
	WRAP_UNKNOWN(sym, (fchr jz, fchr up, fint n, vptr a, fint lda, vptr w, vptr work, fint lwork,       \
			   fout iwork, fint liwork, fout info, size_t l1, size_t l2),                     \
		     (jz, up, n, a, lda, w, work, lwork, iwork, liwork, info, l1, l2), WORK_OK && *liwork != -1)
#define U_SYEVR(sym)                                                                                    \
	WRAP_UNKNOWN(sym, (fchr jz, fchr rg, fchr up, fint n, vptr a, fint lda, cptr vl, cptr vu, fint il,   \
			   fint iu, cptr tol, fout m, vptr w, vptr z, fint ldz, fout isuppz, vptr work,    \
			   fint lwork, fout iwork, fint liwork, fout info, size_t l1, size_t l2, size_t l3), \
		     (jz, rg, up, n, a, lda, vl, vu, il, iu, tol, m, w, z, ldz, isuppz, work, lwork, iwork,  \
		      liwork, info, l1, l2, l3),                                                          \
		     WORK_OK && *liwork != -1)
#define U_HEEV(sym)                                                                                    \
	WRAP_UNKNOWN(sym, (fchr jz, fchr up, fint n, vptr a, fint lda, vptr w, vptr work, fint lwork,       \
			   vptr rwork, fout info, size_t l1, size_t l2),                                  \
		     (jz, up, n, a, lda, w, work, lwork, rwork, info, l1, l2), WORK_OK)
#define U_HEEVD(sym)                                                                                   \
	WRAP_UNKNOWN(sym, (fchr jz, fchr up, fint n, vptr a, fint lda, vptr w, vptr work, fint lwork,       \
			   vptr rwork, fint lrwork, fout iwork, fint liwork, fout info, size_t l1, size_t l2), \
		     (jz, up, n, a, lda, w, work, lwork, rwork, lrwork, iwork, liwork, info, l1, l2),       \
		     WORK_OK && *lrwork != -1 && *liwork != -1)
#define U_HEEVR(sym)                                                                                    \
	WRAP_UNKNOWN(sym, (fchr jz, fchr rg, fchr up, fint n, vptr a, fint lda, cptr vl, cptr vu, fint il,   \
			   fint iu, cptr tol, fout m, vptr w, vptr z, fint ldz, fout isuppz, vptr work,    \
			   fint lwork, vptr rwork, fint lrwork, fout iwork, fint liwork, fout info,       \
			   size_t l1, size_t l2, size_t l3),                                              \
		     (jz, rg, up, n, a, lda, vl, vu, il, iu, tol, m, w, z, ldz, isuppz, work, lwork, rwork,  \
		      lrwork, iwork, liwork, info, l1, l2, l3),                                           \
		     WORK_OK && *lrwork != -1 && *liwork != -1)
#define U_GESVD_R(sym)                                                                                 \
	WRAP_UNKNOWN(sym, (fchr ju, fchr jv, fint m, fint n, vptr a, fint lda, vptr s, vptr u, fint ldu,     \
			   vptr vt, fint ldvt, vptr work, fint lwork, fout info, size_t l1, size_t l2),   \
		     (ju, jv, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, info, l1, l2), WORK_OK)
#define U_GESVD_C(sym)                                                                                 \
	WRAP_UNKNOWN(sym, (fchr ju, fchr jv, fint m, fint n, vptr a, fint lda, vptr s, vptr u, fint ldu,     \
			   vptr vt, fint ldvt, vptr work, fint lwork, vptr rwork, fout info, size_t l1,   \
			   size_t l2),                                                                    \
		     (ju, jv, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, info, l1, l2), WORK_OK)
#define U_GESDD_R(sym)                                                                                 \
	WRAP_UNKNOWN(sym, (fchr jz, fint m, fint n, vptr a, fint lda, vptr s, vptr u, fint ldu, vptr vt,     \
			   fint ldvt, vptr work, fint lwork, fout iwork, fout info, size_t l1),           \
		     (jz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info, l1), WORK_OK)
#define U_GESDD_C(sym)                                                                                 \
	WRAP_UNKNOWN(sym, (fchr jz, fint m, fint n, vptr a, fint lda, vptr s, vptr u, fint ldu, vptr vt,     \
			   fint ldvt, vptr work, fint lwork, vptr rwork, fout iwork, fout info, size_t l1), \
		     (jz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, iwork, info, l1), WORK_OK)
#define U_GEEV_R(sym)                                                                                  \
	WRAP_UNKNOWN(sym, (fchr jl, fchr jr, fint n, vptr a, fint lda, vptr wr, vptr wi, vptr vl,            \
			   fint ldvl, vptr vr, fint ldvr, vptr work, fint lwork, fout info, size_t l1,    \
			   size_t l2),                                                                    \
		     (jl, jr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr, work, lwork, info, l1, l2), WORK_OK)
#define U_GEEV_C(sym)                                                                                  \
	WRAP_UNKNOWN(sym, (fchr jl, fchr jr, fint n, vptr a, fint lda, vptr w, vptr vl, fint ldvl, vptr vr,  \
			   fint ldvr, vptr work, fint lwork, vptr rwork, fout info, size_t l1, size_t l2), \
		     (jl, jr, n, a, lda, w, vl, ldvl, vr, ldvr, work, lwork, rwork, info, l1, l2), WORK_OK)
/* GELSD, GELSS and GELSY: m n nrhs a lda b ldb, then s or jpvt, rcond,
 * rank, work, lwork, then (complex) rwork, then (GELSD) iwork */
#define U_GELS_(sym, params, args)                                                                     \
	WRAP_UNKNOWN(sym, (fint m, fint n, fint nrhs, vptr a, fint lda, vptr b, fint ldb, vptr s, cptr rcond, \
			   fout rank, vptr work, fint lwork UNPAREN params, fout info),                    \
		     (m, n, nrhs, a, lda, b, ldb, s, rcond, rank, work, lwork UNPAREN args, info), WORK_OK)
#define UNPAREN(...) __VA_ARGS__
#define U_GELSD_R(sym) U_GELS_(sym, (, fout iwork), (, iwork))
#define U_GELSD_C(sym) U_GELS_(sym, (, vptr rwork, fout iwork), (, rwork, iwork))
#define U_GELSS_R(sym) U_GELS_(sym, (), ())
#define U_GELSS_C(sym) U_GELS_(sym, (, vptr rwork), (, rwork))

U_SYEV(ssyev_)
U_SYEV(dsyev_)
U_SYEVD(ssyevd_)
U_SYEVD(dsyevd_)
U_SYEVR(ssyevr_)
U_SYEVR(dsyevr_)
U_HEEV(cheev_)
U_HEEV(zheev_)
U_HEEVD(cheevd_)
U_HEEVD(zheevd_)
U_HEEVR(cheevr_)
U_HEEVR(zheevr_)
U_GESVD_R(sgesvd_)
U_GESVD_R(dgesvd_)
U_GESVD_C(cgesvd_)
U_GESVD_C(zgesvd_)
U_GESDD_R(sgesdd_)
U_GESDD_R(dgesdd_)
U_GESDD_C(cgesdd_)
U_GESDD_C(zgesdd_)
U_GEEV_R(sgeev_)
U_GEEV_R(dgeev_)
U_GEEV_C(cgeev_)
U_GEEV_C(zgeev_)
U_GELSD_R(sgelsd_)
U_GELSD_R(dgelsd_)
U_GELSD_C(cgelsd_)
U_GELSD_C(zgelsd_)
U_GELSS_R(sgelss_)
U_GELSS_R(dgelss_)
U_GELSS_C(cgelss_)
U_GELSS_C(zgelss_)
/* GELSY: jpvt (an int array) where GELSD and GELSS have s */
U_GELSS_R(sgelsy_)
U_GELSS_R(dgelsy_)
U_GELSS_C(cgelsy_)
U_GELSS_C(zgelsy_)
