/*
 * The functions the counting library interposes (libflops.h), as an X-macro:
 * X(symbol, op, prec, complex), then the oneDNN primitives it counts as
 * functions of their own (LIBFLOPS_PRIMS). The order is the id order of the
 * shared counters: appending is compatible, anything else needs
 * LIBFLOPS_VERSION to change. Each family's C prototype is in
 * src/lib/libflops_shim.c.
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
/* A level-1 routine on a complex vector with a real result or a real
 * scalar, whose prefix has two letters: scnrm2, dznrm2, csscal, zdscal. */
#define LIBFLOPS_CZ2(X, c, z, base, op) \
	X(cblas_##c##base, op, FP32, 1) X(cblas_##z##base, op, FP64, 1) \
	X(c##base##_, op, FP32, 1) X(z##base##_, op, FP64, 1)
/* LAPACK: Fortran names only (LAPACKE's are listed apart). */
#define LIBFLOPS_F_SDCZ(X, base, op) \
	X(s##base##_, op, FP32, 0) X(d##base##_, op, FP64, 0) \
	X(c##base##_, op, FP32, 1) X(z##base##_, op, FP64, 1)
#define LIBFLOPS_F_SD(X, base, op) X(s##base##_, op, FP32, 0) X(d##base##_, op, FP64, 0)
#define LIBFLOPS_F_CZ(X, base, op) X(c##base##_, op, FP32, 1) X(z##base##_, op, FP64, 1)
#define LIBFLOPS_LAPACKE_SDCZ(X, base, op) \
	X(LAPACKE_s##base, op, FP32, 0) X(LAPACKE_d##base, op, FP64, 0) \
	X(LAPACKE_c##base, op, FP32, 1) X(LAPACKE_z##base, op, FP64, 1)

/* BLAS level 1: the complex dot products' CBLAS names end in _sub (they
 * return the result through a pointer). */
#define LIBFLOPS_BLAS1(X) \
	LIBFLOPS_SD(X, dot, DOT) \
	X(cblas_cdotu_sub, DOT, FP32, 1) X(cblas_zdotu_sub, DOT, FP64, 1) \
	X(cdotu_, DOT, FP32, 1) X(zdotu_, DOT, FP64, 1) \
	X(cblas_cdotc_sub, DOT, FP32, 1) X(cblas_zdotc_sub, DOT, FP64, 1) \
	X(cdotc_, DOT, FP32, 1) X(zdotc_, DOT, FP64, 1) \
	LIBFLOPS_SDCZ(X, axpy, AXPY) \
	LIBFLOPS_SDCZ(X, scal, SCAL) \
	LIBFLOPS_CZ2(X, cs, zd, scal, RSCAL) \
	LIBFLOPS_SD(X, nrm2, NRM2) \
	LIBFLOPS_CZ2(X, sc, dz, nrm2, NRM2) \
	LIBFLOPS_SD(X, asum, ASUM) \
	LIBFLOPS_CZ2(X, sc, dz, asum, ASUM) \
	LIBFLOPS_SD(X, rot, ROT) \
	LIBFLOPS_CZ2(X, cs, zd, rot, ROT)

/* LAPACK routines with a stated operation count (LAPACK Working Note 41);
 * the orthogonal (real) and unitary (complex) ones share a family, as do
 * the symmetric and Hermitian indefinite ones. */
#define LIBFLOPS_LAPACK(X) \
	LIBFLOPS_F_SDCZ(X, getrf, GETRF) \
	LIBFLOPS_F_SDCZ(X, getrs, GETRS) \
	LIBFLOPS_F_SDCZ(X, gesv, GESV) \
	LIBFLOPS_F_SDCZ(X, getri, GETRI) \
	LIBFLOPS_F_SDCZ(X, potrf, POTRF) \
	LIBFLOPS_F_SDCZ(X, potrs, POTRS) \
	LIBFLOPS_F_SDCZ(X, posv, POSV) \
	LIBFLOPS_F_SDCZ(X, potri, POTRI) \
	LIBFLOPS_F_SDCZ(X, geqrf, GEQRF) \
	LIBFLOPS_F_SD(X, orgqr, ORGQR) \
	LIBFLOPS_F_CZ(X, ungqr, ORGQR) \
	LIBFLOPS_F_SD(X, ormqr, ORMQR) \
	LIBFLOPS_F_CZ(X, unmqr, ORMQR) \
	LIBFLOPS_F_SDCZ(X, trtri, TRTRI) \
	LIBFLOPS_F_SDCZ(X, trtrs, TRTRS) \
	LIBFLOPS_F_SDCZ(X, sytrf, SYTRF) \
	LIBFLOPS_F_CZ(X, hetrf, SYTRF) \
	LIBFLOPS_F_SDCZ(X, sytrs, SYTRS) \
	LIBFLOPS_F_CZ(X, hetrs, SYTRS) \
	LIBFLOPS_F_SDCZ(X, sysv, SYSV) \
	LIBFLOPS_F_CZ(X, hesv, SYSV) \
	LIBFLOPS_F_SDCZ(X, gels, GELS)

/* LAPACKE's C interface to the same routines (high level: it allocates
 * the workspace itself). */
#define LIBFLOPS_LAPACKE(X) \
	LIBFLOPS_LAPACKE_SDCZ(X, getrf, GETRF) \
	LIBFLOPS_LAPACKE_SDCZ(X, getrs, GETRS) \
	LIBFLOPS_LAPACKE_SDCZ(X, gesv, GESV) \
	LIBFLOPS_LAPACKE_SDCZ(X, getri, GETRI) \
	LIBFLOPS_LAPACKE_SDCZ(X, potrf, POTRF) \
	LIBFLOPS_LAPACKE_SDCZ(X, potrs, POTRS) \
	LIBFLOPS_LAPACKE_SDCZ(X, posv, POSV) \
	LIBFLOPS_LAPACKE_SDCZ(X, geqrf, GEQRF) \
	X(LAPACKE_sorgqr, ORGQR, FP32, 0) X(LAPACKE_dorgqr, ORGQR, FP64, 0) \
	X(LAPACKE_cungqr, ORGQR, FP32, 1) X(LAPACKE_zungqr, ORGQR, FP64, 1) \
	X(LAPACKE_sormqr, ORMQR, FP32, 0) X(LAPACKE_dormqr, ORMQR, FP64, 0) \
	X(LAPACKE_cunmqr, ORMQR, FP32, 1) X(LAPACKE_zunmqr, ORMQR, FP64, 1) \
	LIBFLOPS_LAPACKE_SDCZ(X, trtri, TRTRI) \
	LIBFLOPS_LAPACKE_SDCZ(X, sytrf, SYTRF) \
	LIBFLOPS_LAPACKE_SDCZ(X, gels, GELS)

/* Iterative LAPACK drivers (eigenvalues, SVD, least squares by SVD or
 * with a rank decision) whose operation count depends on the data: their
 * calls are counted, their FLOPs are unknown (libflops.h). */
#define LIBFLOPS_UNKNOWN_LIST(X) \
	LIBFLOPS_F_SD(X, syev, UNKNOWN) \
	LIBFLOPS_F_SD(X, syevd, UNKNOWN) \
	LIBFLOPS_F_SD(X, syevr, UNKNOWN) \
	LIBFLOPS_F_CZ(X, heev, UNKNOWN) \
	LIBFLOPS_F_CZ(X, heevd, UNKNOWN) \
	LIBFLOPS_F_CZ(X, heevr, UNKNOWN) \
	LIBFLOPS_F_SDCZ(X, gesvd, UNKNOWN) \
	LIBFLOPS_F_SDCZ(X, gesdd, UNKNOWN) \
	LIBFLOPS_F_SDCZ(X, geev, UNKNOWN) \
	LIBFLOPS_F_SDCZ(X, gelsd, UNKNOWN) \
	LIBFLOPS_F_SDCZ(X, gelss, UNKNOWN) \
	LIBFLOPS_F_SDCZ(X, gelsy, UNKNOWN)

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
	X(dnnl_gemm_s8s8s32, GEMM, INT8, 0) \
	LIBFLOPS_BLAS1(X) \
	LIBFLOPS_LAPACK(X) \
	LIBFLOPS_LAPACKE(X) \
	LIBFLOPS_UNKNOWN_LIST(X)

/* oneDNN primitives, executed with dnnl_primitive_execute: each kind,
 * propagation and data type counts as a function of its own, named
 * "dnnl_primitive_execute:" and what oneDNN's verbose mode calls them,
 * P(id, name, op, prec). Convolutions, deconvolutions, inner products and
 * matmuls count their FLOPs from the primitive's shapes (LIBFLOPS_DNNL:
 * libflops_dnnl_count()), int8 as integer operations; reorder, concat and
 * shuffle move data (LIBFLOPS_NOARITH: 0 FLOPs, known); the other kinds,
 * and a primitive whose data type or library version the counting library
 * does not know ("other"), are calls of unknown FLOPs (their precision here
 * is nominal). */
#define LIBFLOPS_DNNL_PROP(P, kind, prop, name) \
	P(dnnl_##kind##_##prop##_f32, "dnnl_primitive_execute:" name ":f32", DNNL, FP32) \
	P(dnnl_##kind##_##prop##_bf16, "dnnl_primitive_execute:" name ":bf16", DNNL, BF16) \
	P(dnnl_##kind##_##prop##_f16, "dnnl_primitive_execute:" name ":f16", DNNL, FP16)
#define LIBFLOPS_DNNL_KIND(P, kind, name) \
	LIBFLOPS_DNNL_PROP(P, kind, fwd, name "_forward") \
	P(dnnl_##kind##_fwd_int8, "dnnl_primitive_execute:" name "_forward:int8", DNNL, INT8) \
	LIBFLOPS_DNNL_PROP(P, kind, bwd_data, name "_backward_data") \
	LIBFLOPS_DNNL_PROP(P, kind, bwd_weights, name "_backward_weights")
#define LIBFLOPS_PRIMS(P) \
	LIBFLOPS_DNNL_KIND(P, conv, "convolution") \
	LIBFLOPS_DNNL_KIND(P, deconv, "deconvolution") \
	LIBFLOPS_DNNL_KIND(P, ip, "inner_product") \
	P(dnnl_matmul_f32, "dnnl_primitive_execute:matmul:f32", DNNL, FP32) \
	P(dnnl_matmul_bf16, "dnnl_primitive_execute:matmul:bf16", DNNL, BF16) \
	P(dnnl_matmul_f16, "dnnl_primitive_execute:matmul:f16", DNNL, FP16) \
	P(dnnl_matmul_int8, "dnnl_primitive_execute:matmul:int8", DNNL, INT8) \
	P(dnnl_reorder, "dnnl_primitive_execute:reorder", NOARITH, FP32) \
	P(dnnl_concat, "dnnl_primitive_execute:concat", NOARITH, FP32) \
	P(dnnl_shuffle, "dnnl_primitive_execute:shuffle", NOARITH, FP32) \
	P(dnnl_sum, "dnnl_primitive_execute:sum", UNKNOWN, FP32) \
	P(dnnl_eltwise, "dnnl_primitive_execute:eltwise", UNKNOWN, FP32) \
	P(dnnl_softmax, "dnnl_primitive_execute:softmax", UNKNOWN, FP32) \
	P(dnnl_logsoftmax, "dnnl_primitive_execute:logsoftmax", UNKNOWN, FP32) \
	P(dnnl_pooling, "dnnl_primitive_execute:pooling", UNKNOWN, FP32) \
	P(dnnl_lrn, "dnnl_primitive_execute:lrn", UNKNOWN, FP32) \
	P(dnnl_batch_normalization, "dnnl_primitive_execute:batch_normalization", UNKNOWN, FP32) \
	P(dnnl_layer_normalization, "dnnl_primitive_execute:layer_normalization", UNKNOWN, FP32) \
	P(dnnl_rnn, "dnnl_primitive_execute:rnn", UNKNOWN, FP32) \
	P(dnnl_binary, "dnnl_primitive_execute:binary", UNKNOWN, FP32) \
	P(dnnl_resampling, "dnnl_primitive_execute:resampling", UNKNOWN, FP32) \
	P(dnnl_reduction, "dnnl_primitive_execute:reduction", UNKNOWN, FP32) \
	P(dnnl_prelu, "dnnl_primitive_execute:prelu", UNKNOWN, FP32) \
	P(dnnl_other, "dnnl_primitive_execute:other", UNKNOWN, FP32)

/* Ids: LIBFLOPS_ID_cblas_sgemm, ..., LIBFLOPS_ID_dnnl_conv_fwd_f32, ... */
enum libflops_id {
#define LIBFLOPS_ID_ENTRY(sym, op, prec, cplx) LIBFLOPS_ID_##sym,
#define LIBFLOPS_ID_PRIM(id, name, op, prec) LIBFLOPS_ID_##id,
	LIBFLOPS_LIST(LIBFLOPS_ID_ENTRY)
	LIBFLOPS_PRIMS(LIBFLOPS_ID_PRIM)
#undef LIBFLOPS_ID_PRIM
#undef LIBFLOPS_ID_ENTRY
	LIBFLOPS_NIDS
};

#endif
