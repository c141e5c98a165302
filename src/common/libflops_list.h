/*
 * The functions the counting library interposes (libflops.h), as an X-macro:
 * X(symbol, op, prec, complex). The order is the id order of the shared
 * counters: appending is compatible, anything else needs LIBFLOPS_VERSION
 * to change. Each family's C prototype is in src/lib/libflops_shim.c.
 */
#ifndef MFU_LIBFLOPS_LIST_H
#define MFU_LIBFLOPS_LIST_H

/* A BLAS routine in its four precisions, CBLAS and Fortran names. */
#define LIBFLOPS_SDCZ(X, base, op) \
	X(cblas_s##base, op, FP32, 0) X(cblas_d##base, op, FP64, 0) \
	X(cblas_c##base, op, FP32, 1) X(cblas_z##base, op, FP64, 1) \
	X(s##base##_, op, FP32, 0) X(d##base##_, op, FP64, 0) \
	X(c##base##_, op, FP32, 1) X(z##base##_, op, FP64, 1)
/* A real-only routine (s, d) and a complex-only one (c, z). */
#define LIBFLOPS_SD(X, base, op) \
	X(cblas_s##base, op, FP32, 0) X(cblas_d##base, op, FP64, 0) \
	X(s##base##_, op, FP32, 0) X(d##base##_, op, FP64, 0)
#define LIBFLOPS_CZ(X, base, op) \
	X(cblas_c##base, op, FP32, 1) X(cblas_z##base, op, FP64, 1) \
	X(c##base##_, op, FP32, 1) X(z##base##_, op, FP64, 1)

#define LIBFLOPS_LIST(X) \
	LIBFLOPS_SDCZ(X, gemm, GEMM) \
	LIBFLOPS_CZ(X, gemm3m, GEMM) \
	LIBFLOPS_SDCZ(X, gemmt, GEMMT) \
	LIBFLOPS_SDCZ(X, symm, SYMM) \
	LIBFLOPS_CZ(X, hemm, SYMM) \
	LIBFLOPS_SDCZ(X, syrk, SYRK) \
	LIBFLOPS_CZ(X, herk, SYRK) \
	LIBFLOPS_SDCZ(X, syr2k, SYR2K) \
	LIBFLOPS_CZ(X, her2k, SYR2K) \
	LIBFLOPS_SDCZ(X, trmm, TRMM) \
	LIBFLOPS_SDCZ(X, trsm, TRMM) \
	LIBFLOPS_SDCZ(X, gemv, GEMV) \
	LIBFLOPS_SD(X, symv, SYMV) \
	LIBFLOPS_CZ(X, hemv, SYMV) \
	LIBFLOPS_SDCZ(X, trmv, TRMV) \
	LIBFLOPS_SDCZ(X, trsv, TRMV) \
	LIBFLOPS_SD(X, ger, GER) \
	LIBFLOPS_CZ(X, geru, GER) \
	LIBFLOPS_CZ(X, gerc, GER) \
	X(dnnl_sgemm, GEMM, FP32, 0) \
	X(dnnl_gemm_bf16bf16f32, GEMM, BF16, 0) \
	X(dnnl_gemm_u8s8s32, GEMM, INT8, 0) \
	X(dnnl_gemm_s8s8s32, GEMM, INT8, 0)

/* Ids: LIBFLOPS_ID_cblas_sgemm, ... */
enum libflops_id {
#define LIBFLOPS_ID_ENTRY(sym, op, prec, cplx) LIBFLOPS_ID_##sym,
	LIBFLOPS_LIST(LIBFLOPS_ID_ENTRY)
#undef LIBFLOPS_ID_ENTRY
	LIBFLOPS_NIDS
};

#endif
