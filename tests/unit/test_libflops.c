/* Library-call FLOPs (libflops.h): every operation family's count against
 * hand-computed numbers, the region's layout pinned (it crosses a process
 * boundary: recorder, counting library, libmfu), process slots, sums,
 * snapshots, the function table the three share, and the counting library
 * itself (libmfu-libflops.so) preloaded into a child that calls a stand-in
 * BLAS and LAPACK (fake_lapack/): a routine's nested calls counted once,
 * workspace queries and rejected calls not at all, a routine whose FLOPs
 * are unknown counted as such, never as 0 FLOPs; and into one that executes
 * a stand-in oneDNN's primitives (fake_dnnl/): each counted under its kind,
 * propagation and data type from its descriptor, queried once per
 * primitive until it is destroyed. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fake_dnnl/fake_dnnl.h"
#include "fake_lapack/fake_lapack.h"
#include "libflops.h"
#include "libflops_list.h"

static void test_layout(void)
{
	/* Changing any of these needs LIBFLOPS_VERSION + 1 (appending a
	 * function keeps the ids but changes nfuncs, which the check compares). */
	CHECK_EQ_INT(LIBFLOPS_VERSION, 4);
	CHECK(LIBFLOPS_MAGIC == 0x73706f6c66624c6dULL);
	CHECK(memcmp(&(uint64_t){ LIBFLOPS_MAGIC }, "mLbflops", 8) == 0); /* little-endian bytes */
	CHECK_EQ_INT(LIBFLOPS_MAX_FUNCS, 512);
	CHECK_EQ_INT(LIBFLOPS_SNAP_FUNCS, 128);
	CHECK_EQ_INT(LIBFLOPS_MAX_PROCS, 64);
	CHECK_EQ_INT(LIBFLOPS_NSNAP, 4096);
	CHECK_EQ_INT(LIBFLOPS_WORDS, 7);
	CHECK_EQ_INT(LIBFLOPS_W_CALLS, 0);
	CHECK_EQ_INT(LIBFLOPS_W_FLOPS, 1);
	CHECK_EQ_INT(LIBFLOPS_W_UNKNOWN, 6);
	CHECK_EQ_INT(sizeof(struct libflops_counter), 16);
	CHECK_EQ_INT(offsetof(struct libflops_counter, calls), 0);
	CHECK_EQ_INT(offsetof(struct libflops_counter, flops), 8);

	CHECK_EQ_INT(sizeof(struct libflops_proc), 16 + 512 * 2 + 512 + 512 * 16 + 8);
	CHECK_EQ_INT(offsetof(struct libflops_proc, pid), 0);
	CHECK_EQ_INT(offsetof(struct libflops_proc, active), 4);
	CHECK_EQ_INT(offsetof(struct libflops_proc, nlist), 8);
	CHECK_EQ_INT(offsetof(struct libflops_proc, list), 16);
	CHECK_EQ_INT(offsetof(struct libflops_proc, listed), 16 + 1024);
	CHECK_EQ_INT(offsetof(struct libflops_proc, f), 16 + 1024 + 512);
	/* version 4: the calls begun, after the counters */
	CHECK_EQ_INT(offsetof(struct libflops_proc, begun), 16 + 1024 + 512 + 8192);

	CHECK_EQ_INT(sizeof(struct libflops_snap), 24 + 128 * 2 + 128 * 16);
	CHECK_EQ_INT(offsetof(struct libflops_snap, seq), 0);
	CHECK_EQ_INT(offsetof(struct libflops_snap, pid), 8);
	CHECK_EQ_INT(offsetof(struct libflops_snap, n), 12);
	CHECK_EQ_INT(offsetof(struct libflops_snap, nlist), 16);
	CHECK_EQ_INT(offsetof(struct libflops_snap, pad), 20);
	CHECK_EQ_INT(offsetof(struct libflops_snap, id), 24);
	CHECK_EQ_INT(offsetof(struct libflops_snap, f), 24 + 256);

	CHECK_EQ_INT(offsetof(struct libflops_region, magic), 0);
	CHECK_EQ_INT(offsetof(struct libflops_region, version), 8);
	CHECK_EQ_INT(offsetof(struct libflops_region, header_size), 12);
	CHECK_EQ_INT(offsetof(struct libflops_region, nfuncs), 16);
	CHECK_EQ_INT(offsetof(struct libflops_region, max_procs), 20);
	CHECK_EQ_INT(offsetof(struct libflops_region, nsnap), 24);
	CHECK_EQ_INT(offsetof(struct libflops_region, proc_size), 28);
	CHECK_EQ_INT(offsetof(struct libflops_region, snap_size), 32);
	CHECK_EQ_INT(offsetof(struct libflops_region, loaded), 36);
	CHECK_EQ_INT(offsetof(struct libflops_region, procs_full), 40);
	CHECK_EQ_INT(offsetof(struct libflops_region, nnotes), 48);
	CHECK_EQ_INT(offsetof(struct libflops_region, note_size), 52);
	/* the writers' snapshot head on its own cache line */
	CHECK_EQ_INT(offsetof(struct libflops_region, snap_head), 64);
	CHECK_EQ_INT(offsetof(struct libflops_region, procs), 128);
	CHECK_EQ_INT(offsetof(struct libflops_region, snaps), 128 + 64 * 9752);
	/* version 3: the program's notes, after the snapshots */
	CHECK_EQ_INT(offsetof(struct libflops_region, note_head), 128 + 64 * 9752 + 4096 * 2328);
	CHECK_EQ_INT(offsetof(struct libflops_region, notes), 128 + 64 * 9752 + 4096 * 2328 + 64);
	CHECK_EQ_INT(sizeof(struct libflops_note), 520);
	CHECK_EQ_INT(offsetof(struct libflops_note, seq), 0);
	CHECK_EQ_INT(offsetof(struct libflops_note, pid), 4);
	CHECK_EQ_INT(offsetof(struct libflops_note, flags), 8);
	CHECK_EQ_INT(offsetof(struct libflops_note, text), 16);
	CHECK_EQ_INT(LIBFLOPS_NNOTES, 16);
	CHECK_EQ_INT(sizeof(struct libflops_region), 128 + 64 * 9752 + 4096 * 2328 + 64 + 16 * 520);
	CHECK_EQ_INT(libflops_region_size(), sizeof(struct libflops_region));

	/* the precision order is the marker record's lib[] words */
	CHECK_EQ_INT(LIBFLOPS_FP64, 0);
	CHECK_EQ_INT(LIBFLOPS_FP32, 1);
	CHECK_EQ_INT(LIBFLOPS_BF16, 2);
	CHECK_EQ_INT(LIBFLOPS_FP16, 3);
	CHECK_EQ_INT(LIBFLOPS_INT8, 4);
	CHECK_EQ_INT(LIBFLOPS_NPREC, 5);
	/* ids are indexes of the shared counters: only appending keeps them */
	CHECK_EQ_INT(libflops_nfuncs, 389);
	CHECK_EQ_INT(LIBFLOPS_NIDS, 389);
	CHECK_EQ_INT(LIBFLOPS_ID_cblas_sgemm, 0);
	CHECK_EQ_INT(LIBFLOPS_ID_cblas_dgemm, 1);
	CHECK_EQ_INT(LIBFLOPS_ID_sgemm_, 4);
	CHECK_EQ_INT(LIBFLOPS_ID_dgemm_, 5);
	CHECK_EQ_INT(LIBFLOPS_ID_cblas_cgemm3m, 8);
	CHECK_EQ_INT(LIBFLOPS_ID_cblas_dtrsm, 65);
	CHECK_EQ_INT(LIBFLOPS_ID_zgerc_, 115);
	CHECK_EQ_INT(LIBFLOPS_ID_dnnl_sgemm, 116);
	CHECK_EQ_INT(LIBFLOPS_ID_dnnl_gemm_bf16bf16f32, 117);
	CHECK_EQ_INT(LIBFLOPS_ID_dnnl_gemm_u8s8s32, 118);
	CHECK_EQ_INT(LIBFLOPS_ID_dnnl_gemm_s8s8s32, 119);
	/* version 2 appended BLAS level 1 (56), LAPACK (74), LAPACKE (52) and
	 * the drivers whose FLOPs are unknown (36) */
	CHECK_EQ_INT(LIBFLOPS_ID_cblas_sdot, 120);
	CHECK_EQ_INT(LIBFLOPS_ID_zdrot_, 175);
	CHECK_EQ_INT(LIBFLOPS_ID_sgetrf_, 176);
	CHECK_EQ_INT(LIBFLOPS_ID_zgels_, 249);
	CHECK_EQ_INT(LIBFLOPS_ID_LAPACKE_sgetrf, 250);
	CHECK_EQ_INT(LIBFLOPS_ID_LAPACKE_zgels, 301);
	CHECK_EQ_INT(LIBFLOPS_ID_ssyev_, 302);
	CHECK_EQ_INT(LIBFLOPS_ID_zgelsy_, 337);
	/* version 3 appended oneDNN's primitives: 34 counted, 3 without
	 * arithmetic, 14 of unknown FLOPs */
	CHECK_EQ_INT(LIBFLOPS_ID_dnnl_conv_fwd_f32, 338);
	CHECK_EQ_INT(LIBFLOPS_ID_dnnl_conv_fwd_int8, 341);
	CHECK_EQ_INT(LIBFLOPS_ID_dnnl_deconv_fwd_f32, 348);
	CHECK_EQ_INT(LIBFLOPS_ID_dnnl_ip_fwd_f32, 358);
	CHECK_EQ_INT(LIBFLOPS_ID_dnnl_matmul_f32, 368);
	CHECK_EQ_INT(LIBFLOPS_ID_dnnl_reorder, 372);
	CHECK_EQ_INT(LIBFLOPS_ID_dnnl_other, 388);
}

/* Hand-computed counts: m = 3, n = 5, k = 7 where a family uses them. */
static const struct {
	int line;
	unsigned op;
	int complex, left;
	int64_t m, n, k;
	uint64_t want;
} count_cases[] = {
	/* GEMM: 2mnk, complex 8mnk (6 FLOPs a complex multiply, 2 an add) */
	{ __LINE__, LIBFLOPS_GEMM, 0, 0, 3, 5, 7, 2 * 3 * 5 * 7 },                /* 210 */
	{ __LINE__, LIBFLOPS_GEMM, 1, 0, 3, 5, 7, 8 * 3 * 5 * 7 },                /* 840 */
	{ __LINE__, LIBFLOPS_GEMM, 0, 1, 3, 5, 7, 210 },                          /* side ignored */
	{ __LINE__, LIBFLOPS_GEMM, 0, 0, 1, 1, 1, 2 },
	{ __LINE__, LIBFLOPS_GEMM, 0, 0, 0, 5, 7, 0 },
	{ __LINE__, LIBFLOPS_GEMM, 0, 0, 3, 5, 0, 0 },
	/* GEMMT and SYRK: k n (n + 1), complex 4 k n (n + 1); m unused */
	{ __LINE__, LIBFLOPS_GEMMT, 0, 0, 3, 5, 7, 7 * 5 * 6 },                   /* 210 */
	{ __LINE__, LIBFLOPS_GEMMT, 1, 0, 3, 5, 7, 4 * 7 * 5 * 6 },               /* 840 */
	{ __LINE__, LIBFLOPS_SYRK, 0, 0, 0, 4, 3, 3 * 4 * 5 },                    /* 60 */
	{ __LINE__, LIBFLOPS_SYRK, 1, 0, 0, 4, 3, 4 * 3 * 4 * 5 },                /* 240 */
	{ __LINE__, LIBFLOPS_SYRK, 0, 0, 99, 4, 3, 60 },                          /* m ignored */
	{ __LINE__, LIBFLOPS_SYRK, 0, 0, 0, 1, 1, 2 },
	/* SYMM (HEMM): A m x m on the left, 2 m^2 n; n x n on the right, 2 m n^2 */
	{ __LINE__, LIBFLOPS_SYMM, 0, 1, 3, 5, 0, 2 * 3 * 3 * 5 },                /* 90 */
	{ __LINE__, LIBFLOPS_SYMM, 0, 0, 3, 5, 0, 2 * 3 * 5 * 5 },                /* 150 */
	{ __LINE__, LIBFLOPS_SYMM, 1, 1, 3, 5, 0, 8 * 3 * 3 * 5 },                /* 360 */
	{ __LINE__, LIBFLOPS_SYMM, 1, 0, 3, 5, 0, 8 * 3 * 5 * 5 },                /* 600 */
	{ __LINE__, LIBFLOPS_SYMM, 0, 1, 3, 5, 1000, 90 },                        /* k ignored */
	/* SYR2K (HER2K): 2 k n^2 + n, complex 8 k n^2 + 2 n */
	{ __LINE__, LIBFLOPS_SYR2K, 0, 0, 0, 4, 3, 2 * 3 * 16 + 4 },              /* 100 */
	{ __LINE__, LIBFLOPS_SYR2K, 1, 0, 0, 4, 3, 8 * 3 * 16 + 2 * 4 },          /* 392 */
	{ __LINE__, LIBFLOPS_SYR2K, 0, 0, 0, 4, 0, 4 },                           /* n additions, as LAWN 41 */
	/* TRMM (TRSM): left n m^2, right m n^2; complex 4 n m^2 + 2 n m, 4 m n^2 + 2 m n */
	{ __LINE__, LIBFLOPS_TRMM, 0, 1, 3, 5, 0, 5 * 3 * 3 },                    /* 45 */
	{ __LINE__, LIBFLOPS_TRMM, 0, 0, 3, 5, 0, 3 * 5 * 5 },                    /* 75 */
	{ __LINE__, LIBFLOPS_TRMM, 1, 1, 3, 5, 0, 4 * 5 * 9 + 2 * 5 * 3 },        /* 210 */
	{ __LINE__, LIBFLOPS_TRMM, 1, 0, 3, 5, 0, 4 * 3 * 25 + 2 * 3 * 5 },       /* 330 */
	{ __LINE__, LIBFLOPS_TRMM, 0, 1, 8, 4, 0, 256 },                          /* blas_static.c's dtrsm */
	{ __LINE__, LIBFLOPS_TRMM, 0, 0, 8, 4, 0, 128 },
	/* GEMV and GER: 2 m n, complex 8 m n */
	{ __LINE__, LIBFLOPS_GEMV, 0, 0, 3, 5, 7, 30 },
	{ __LINE__, LIBFLOPS_GEMV, 1, 0, 3, 5, 7, 120 },
	{ __LINE__, LIBFLOPS_GER, 0, 0, 3, 5, 0, 30 },
	{ __LINE__, LIBFLOPS_GER, 1, 0, 3, 5, 0, 120 },
	/* SYMV (HEMV): 2 n^2, complex 8 n^2 */
	{ __LINE__, LIBFLOPS_SYMV, 0, 0, 0, 5, 0, 50 },
	{ __LINE__, LIBFLOPS_SYMV, 1, 0, 0, 5, 0, 200 },
	/* TRMV (TRSV): n^2, complex 4 n^2 + 2 n */
	{ __LINE__, LIBFLOPS_TRMV, 0, 0, 0, 5, 0, 25 },
	{ __LINE__, LIBFLOPS_TRMV, 1, 0, 0, 5, 0, 110 },
	/* an invalid call (negative dimension, which the library rejects) */
	{ __LINE__, LIBFLOPS_GEMM, 0, 0, -3, 5, 7, 0 },
	{ __LINE__, LIBFLOPS_GEMM, 0, 0, 3, -5, 7, 0 },
	{ __LINE__, LIBFLOPS_GEMM, 1, 0, 3, 5, -7, 0 },
	{ __LINE__, LIBFLOPS_SYRK, 0, 0, 0, -4, 3, 0 },
	{ __LINE__, LIBFLOPS_TRMM, 0, 1, -3, 5, 0, 0 },
	{ __LINE__, LIBFLOPS_TRMM, 1, 0, 3, -5, 0, 0 },
	{ __LINE__, LIBFLOPS_GEMV, 0, 0, INT64_MIN, 5, 0, 0 },
	{ __LINE__, LIBFLOPS_SYMV, 0, 0, 0, -1, 0, 0 },
	{ __LINE__, LIBFLOPS_TRMV, 1, 0, 0, -1, 0, 0 },
	/* BLAS level 1 (n = 5 in the n slot; m, k ignored): DOT and AXPY 2n,
	 * complex 8n (a complex multiply-add: 6 + 2); SCAL n, complex 6n (a
	 * complex multiply), a real scalar on a complex vector (csscal) 2n;
	 * NRM2 2n (a square and an add), ASUM n (an add: |x| is no FLOP);
	 * ROT 6n (4 multiplies, 2 adds per pair); on complex vectors NRM2,
	 * ASUM and ROT (csrot: real c, s) count their real arithmetic on the
	 * 2n numbers: 4n, 2n, 12n */
	{ __LINE__, LIBFLOPS_DOT, 0, 0, 0, 5, 0, 10 },
	{ __LINE__, LIBFLOPS_DOT, 1, 0, 0, 5, 0, 40 },
	{ __LINE__, LIBFLOPS_DOT, 0, 0, 99, 5, 99, 10 },                        /* m, k ignored */
	{ __LINE__, LIBFLOPS_DOT, 0, 0, 0, 1 << 20, 0, 2 << 20 },               /* np.dot(x, x), 2^20 doubles */
	{ __LINE__, LIBFLOPS_AXPY, 0, 0, 0, 5, 0, 10 },
	{ __LINE__, LIBFLOPS_AXPY, 1, 0, 0, 5, 0, 40 },
	{ __LINE__, LIBFLOPS_SCAL, 0, 0, 0, 5, 0, 5 },
	{ __LINE__, LIBFLOPS_SCAL, 1, 0, 0, 5, 0, 30 },
	{ __LINE__, LIBFLOPS_RSCAL, 1, 0, 0, 5, 0, 10 },
	{ __LINE__, LIBFLOPS_NRM2, 0, 0, 0, 5, 0, 10 },
	{ __LINE__, LIBFLOPS_NRM2, 1, 0, 0, 5, 0, 20 },
	{ __LINE__, LIBFLOPS_ASUM, 0, 0, 0, 5, 0, 5 },
	{ __LINE__, LIBFLOPS_ASUM, 1, 0, 0, 5, 0, 10 },
	{ __LINE__, LIBFLOPS_ROT, 0, 0, 0, 5, 0, 30 },
	{ __LINE__, LIBFLOPS_ROT, 1, 0, 0, 5, 0, 60 },
	{ __LINE__, LIBFLOPS_DOT, 0, 0, 0, 0, 0, 0 },
	{ __LINE__, LIBFLOPS_DOT, 0, 0, 0, -5, 0, 0 },                          /* n < 0: the call does nothing */
	{ __LINE__, LIBFLOPS_ROT, 1, 0, 0, INT64_MAX, 0, UINT64_MAX },
	/* LAPACK, LAPACK Working Note 41: real = mul + add, complex = 6 mul +
	 * 2 add; mul/add as the comments say, computed with exact fractions
	 * from LAWN 41's polynomials as LAPACK's timing suite writes them
	 * (dopla.f), GETRF from LAWN 41's table. nrhs is k. */
	{ __LINE__, LIBFLOPS_GETRF, 0, 0, 3, 5, 0, 34 },                        /* 23 + 11 */
	{ __LINE__, LIBFLOPS_GETRF, 1, 0, 3, 5, 0, 160 },                       /* 6 x 23 + 2 x 11 */
	{ __LINE__, LIBFLOPS_GETRF, 0, 0, 5, 3, 0, 34 },                        /* m > n: the same */
	{ __LINE__, LIBFLOPS_GETRF, 0, 0, 4, 4, 0, 38 },                        /* 24 + 14 */
	{ __LINE__, LIBFLOPS_GETRF, 0, 0, 1, 1, 0, 1 },                         /* 1 division, as a mul */
	{ __LINE__, LIBFLOPS_GETRF, 1, 0, 1, 1, 0, 6 },
	{ __LINE__, LIBFLOPS_GETRF, 0, 0, 1000, 1000, 0, 666167500 },           /* 2n^3/3 - n^2/2 + 5n/6 */
	{ __LINE__, LIBFLOPS_GETRF, 1, 0, 1000, 1000, 0, 2665671000 },
	{ __LINE__, LIBFLOPS_GETRF, 0, 0, 2000000, 2000000, 0, 5333331333335000000ULL },
	{ __LINE__, LIBFLOPS_GETRF, 1, 0, 2000000, 2000000, 0, UINT64_MAX },    /* 2.1e19: saturates */
	{ __LINE__, LIBFLOPS_GETRF, 0, 0, 0, 5, 0, 0 },
	{ __LINE__, LIBFLOPS_GETRF, 0, 0, 3, 5, 99, 34 },                       /* k ignored */
	{ __LINE__, LIBFLOPS_GETRS, 0, 0, 99, 4, 3, 84 },                       /* 48 + 36; m ignored */
	{ __LINE__, LIBFLOPS_GETRS, 1, 0, 0, 4, 3, 360 },
	{ __LINE__, LIBFLOPS_GESV, 0, 0, 0, 4, 3, 122 },                        /* GETRF(4, 4) + GETRS(4, 3) */
	{ __LINE__, LIBFLOPS_GESV, 1, 0, 0, 4, 3, 532 },
	{ __LINE__, LIBFLOPS_GESV, 0, 0, 0, 4, 0, 38 },                         /* no right-hand side: GETRF */
	{ __LINE__, LIBFLOPS_GETRI, 0, 0, 0, 5, 0, 150 },                       /* 100 + 50 */
	{ __LINE__, LIBFLOPS_GETRI, 1, 0, 0, 5, 0, 700 },
	{ __LINE__, LIBFLOPS_POTRF, 0, 0, 0, 5, 0, 55 },                        /* 35 + 20 */
	{ __LINE__, LIBFLOPS_POTRF, 1, 0, 0, 5, 0, 250 },
	{ __LINE__, LIBFLOPS_POTRF, 0, 0, 0, 1000, 0, 333833500 },              /* n^3/3 + n^2/2 + n/6 */
	{ __LINE__, LIBFLOPS_POTRF, 1, 0, 0, 1000, 0, 1336335000 },
	{ __LINE__, LIBFLOPS_POTRS, 0, 0, 0, 5, 2, 100 },                       /* 60 + 40 */
	{ __LINE__, LIBFLOPS_POTRS, 1, 0, 0, 5, 2, 440 },
	{ __LINE__, LIBFLOPS_POSV, 0, 0, 0, 5, 2, 155 },                        /* POTRF + POTRS */
	{ __LINE__, LIBFLOPS_POSV, 1, 0, 0, 5, 2, 690 },
	{ __LINE__, LIBFLOPS_POTRI, 0, 0, 0, 5, 0, 100 },                       /* 70 + 30 */
	{ __LINE__, LIBFLOPS_POTRI, 1, 0, 0, 5, 0, 480 },
	{ __LINE__, LIBFLOPS_GEQRF, 0, 0, 7, 4, 0, 244 },                       /* 142 + 102 */
	{ __LINE__, LIBFLOPS_GEQRF, 1, 0, 7, 4, 0, 1056 },
	{ __LINE__, LIBFLOPS_GEQRF, 0, 0, 4, 7, 0, 268 },                       /* m < n: 154 + 114 */
	{ __LINE__, LIBFLOPS_GEQRF, 1, 0, 4, 7, 0, 1152 },
	{ __LINE__, LIBFLOPS_GEQRF, 0, 0, 5, 5, 0, 240 },                       /* 140 + 100 */
	{ __LINE__, LIBFLOPS_GEQRF, 0, 0, 2000, 1000, 0, 3336338000 },          /* 2mn^2 - 2n^3/3 + ... */
	{ __LINE__, LIBFLOPS_GEQRF, 1, 0, 2000, 1000, 0, 13349358000 },
	{ __LINE__, LIBFLOPS_ORGQR, 0, 0, 7, 4, 3, 176 },                       /* 97 + 79 */
	{ __LINE__, LIBFLOPS_ORGQR, 1, 0, 7, 4, 3, 740 },
	{ __LINE__, LIBFLOPS_ORGQR, 0, 0, 1, 1, 1, 1 },                         /* 0 + 1 */
	{ __LINE__, LIBFLOPS_ORGQR, 0, 0, 7, 4, 0, 0 },                         /* no reflector */
	{ __LINE__, LIBFLOPS_ORMQR, 0, 1, 7, 5, 3, 375 },                       /* left: 195 + 180 */
	{ __LINE__, LIBFLOPS_ORMQR, 1, 1, 7, 5, 3, 1530 },
	{ __LINE__, LIBFLOPS_ORMQR, 0, 0, 7, 5, 3, 348 },                       /* right: 180 + 168 */
	{ __LINE__, LIBFLOPS_ORMQR, 1, 0, 7, 5, 3, 1416 },
	{ __LINE__, LIBFLOPS_TRTRI, 0, 0, 0, 5, 0, 45 },                        /* 35 + 10 */
	{ __LINE__, LIBFLOPS_TRTRI, 1, 0, 0, 5, 0, 230 },
	{ __LINE__, LIBFLOPS_TRTRS, 0, 0, 0, 5, 3, 75 },                        /* 45 + 30: TRSM's n m^2 */
	{ __LINE__, LIBFLOPS_TRTRS, 1, 0, 0, 5, 3, 330 },
	{ __LINE__, LIBFLOPS_SYTRF, 0, 0, 0, 5, 0, 70 },                        /* 50 + 20 */
	{ __LINE__, LIBFLOPS_SYTRF, 1, 0, 0, 5, 0, 340 },
	{ __LINE__, LIBFLOPS_SYTRS, 0, 0, 0, 4, 3, 84 },                        /* as GETRS */
	{ __LINE__, LIBFLOPS_SYSV, 0, 0, 0, 5, 3, 205 },                        /* SYTRF(5) + SYTRS(5, 3) */
	{ __LINE__, LIBFLOPS_SYSV, 1, 0, 0, 5, 3, 910 },
	{ __LINE__, LIBFLOPS_GELS, 0, 0, 7, 4, 2, 460 },                        /* QR(7, 4) + ORMQR L(7, 2, 4) + TRTRS(4, 2) */
	{ __LINE__, LIBFLOPS_GELS, 1, 0, 7, 4, 2, 1952 },
	{ __LINE__, LIBFLOPS_GELS, 0, 0, 4, 7, 2, 476 },                        /* LQ(4, 7) + ORMLQ L(7, 2, 4) + TRTRS(4, 2) */
	{ __LINE__, LIBFLOPS_GELS, 1, 0, 4, 7, 2, 2048 },
	{ __LINE__, LIBFLOPS_GELS, 0, 0, 2000000, 1000, 1000, 12000337338000ULL },
	{ __LINE__, LIBFLOPS_GETRF, 0, 0, -3, 5, 0, 0 },                        /* info < 0: rejected */
	{ __LINE__, LIBFLOPS_GELS, 0, 0, 7, 4, -1, 0 },
	{ __LINE__, LIBFLOPS_GETRF, 0, 0, (int64_t)INT32_MAX + 1, 5, 0, UINT64_MAX }, /* not a LAPACK integer */
	{ __LINE__, LIBFLOPS_ORMQR, 0, 1, 1, 1, 5, 0 },                         /* k > m (rejected): -15, no negative count */
	/* calls counted, FLOPs unknown: the count says 0, the caller knows */
	{ __LINE__, LIBFLOPS_UNKNOWN, 0, 0, 3, 5, 7, 0 },
	/* an operation that does not exist */
	{ __LINE__, 99, 0, 0, 3, 5, 7, 0 },
	/* the largest CBLAS dimensions (int) fit easily */
	{ __LINE__, LIBFLOPS_GEMM, 0, 0, 1 << 20, 1 << 20, 1 << 20, 2ULL << 60 },
	{ __LINE__, LIBFLOPS_GEMM, 0, 0, 1 << 21, 1 << 21, (1 << 21) - 1, (2ULL << 63) - (2ULL << 42) },
	/* too large for 64 bits: saturates */
	{ __LINE__, LIBFLOPS_GEMM, 0, 0, 1 << 21, 1 << 21, 1 << 21, UINT64_MAX },  /* 2^64 exactly */
	{ __LINE__, LIBFLOPS_GEMM, 1, 0, INT32_MAX, INT32_MAX, INT32_MAX, UINT64_MAX },
	{ __LINE__, LIBFLOPS_GEMM, 0, 0, INT64_MAX, INT64_MAX, INT64_MAX, UINT64_MAX },
	{ __LINE__, LIBFLOPS_SYRK, 1, 0, 0, INT32_MAX, INT32_MAX, UINT64_MAX },
	{ __LINE__, LIBFLOPS_SYR2K, 1, 0, 0, INT32_MAX, INT32_MAX, UINT64_MAX },
	{ __LINE__, LIBFLOPS_TRMM, 1, 1, INT32_MAX, INT32_MAX, 0, UINT64_MAX },
	{ __LINE__, LIBFLOPS_SYMM, 0, 0, INT32_MAX, INT32_MAX, 0, UINT64_MAX },
	/* 64-bit (oneDNN) dimensions whose product wraps even 128 bits */
	{ __LINE__, LIBFLOPS_GEMM, 0, 0, 1LL << 43, 1LL << 43, 1LL << 43, UINT64_MAX },
	{ __LINE__, LIBFLOPS_SYR2K, 0, 0, 0, 1LL << 62, 16, UINT64_MAX },
	{ __LINE__, LIBFLOPS_SYRK, 0, 0, 0, INT64_MAX, 1, UINT64_MAX },
	{ __LINE__, LIBFLOPS_TRMV, 1, 0, 0, INT64_MAX, 0, UINT64_MAX },
};

static void test_count(void)
{
	for (size_t i = 0; i < sizeof(count_cases) / sizeof(count_cases[0]); i++) {
		uint64_t got = libflops_count(count_cases[i].op, count_cases[i].complex, count_cases[i].left,
					      count_cases[i].m, count_cases[i].n, count_cases[i].k);
		CHECK_ROW(got == count_cases[i].want, count_cases[i].line);
		if (got != count_cases[i].want)
			fprintf(stderr, "  got %llu, want %llu\n", (unsigned long long)got,
				(unsigned long long)count_cases[i].want);
	}
}

/* oneDNN primitives from their shapes (libflops_dnnl_count()): hand
 * counts, 2 FLOPs a multiply-add. */
#define D(...) { (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), { __VA_ARGS__ } }
#define NONE { 0, { 0 } }
static const struct {
	int line;
	unsigned kind;
	struct libflops_dims src, wei, dst;
	int rc;
	uint64_t want;
} dnnl_cases[] = {
	/* dnnl.c's convolution: 2 x 6 x 10 x 12, 8 outputs in 2 groups, 3x3,
	 * stride 2x1, dilated width, padding 1x0: dst 2 x 8 x 5 x 8;
	 * 2 N OC OH OW (IC / G) KH KW */
	{ __LINE__, LIBFLOPS_DNNL_CONV, D(2, 6, 10, 12), D(2, 4, 3, 3, 3), D(2, 8, 5, 8), 0, 2 * 2 * 8 * 5 * 8 * 3 * 9 },
	/* the same without groups in the weights' shape: the same products */
	{ __LINE__, LIBFLOPS_DNNL_CONV, D(2, 6, 10, 12), D(8, 3, 3, 3), D(2, 8, 5, 8), 0, 34560 },
	/* depthwise: 32 groups of 1 */
	{ __LINE__, LIBFLOPS_DNNL_CONV, D(1, 32, 8, 8), D(32, 1, 1, 3, 3), D(1, 32, 8, 8), 0, 2 * 32 * 64 * 9 },
	/* 1-D and 3-D */
	{ __LINE__, LIBFLOPS_DNNL_CONV, D(4, 3, 100), D(5, 3, 7), D(4, 5, 94), 0, 2 * 4 * 5 * 94 * 3 * 7 },
	{ __LINE__, LIBFLOPS_DNNL_CONV, D(1, 2, 4, 4, 4), D(3, 2, 2, 2, 2), D(1, 3, 3, 3, 3), 0, 2 * 3 * 27 * 2 * 8 },
	/* the source is not used (backward weights has it, backward data has
	 * its gradient: the destination's shape says what is computed) */
	{ __LINE__, LIBFLOPS_DNNL_CONV, NONE, D(8, 3, 3, 3), D(2, 8, 5, 8), 0, 34560 },
	/* deconvolution: every source point against all the weights:
	 * 2 x 4 x 5 x 5 to 6 channels, 3x3 (dnnl.c's) */
	{ __LINE__, LIBFLOPS_DNNL_DECONV, D(2, 4, 5, 5), D(6, 4, 3, 3), D(2, 6, 9, 9), 0, 2 * 216 * 2 * 25 },
	{ __LINE__, LIBFLOPS_DNNL_DECONV, D(2, 4, 5, 5), D(6, 4, 3, 3), NONE, 0, 21600 },
	/* inner product: 2 N prod(weights) */
	{ __LINE__, LIBFLOPS_DNNL_IP, D(4, 3, 5, 5), D(7, 3, 5, 5), D(4, 7), 0, 2 * 4 * 7 * 75 },
	{ __LINE__, LIBFLOPS_DNNL_IP, D(32, 64), D(128, 64), NONE, 0, 2 * 32 * 128 * 64 },
	/* matmul: 2 prod(dst) K, a broadcast batch */
	{ __LINE__, LIBFLOPS_DNNL_MATMUL, D(3, 5, 6), D(1, 6, 4), D(3, 5, 4), 0, 2 * 3 * 5 * 4 * 6 },
	{ __LINE__, LIBFLOPS_DNNL_MATMUL, D(9, 6), D(6, 4), D(9, 4), 0, 432 },
	{ __LINE__, LIBFLOPS_DNNL_MATMUL, D(2, 1, 5, 6), D(1, 3, 6, 4), D(2, 3, 5, 4), 0, 2 * 2 * 3 * 5 * 4 * 6 },
	/* run-time dimensions (DNNL_RUNTIME_DIM_VAL) and shapes no such
	 * primitive has: -EINVAL */
	{ __LINE__, LIBFLOPS_DNNL_MATMUL, D(INT64_MIN, 6), D(6, 4), D(INT64_MIN, 4), -EINVAL, 0 },
	{ __LINE__, LIBFLOPS_DNNL_CONV, D(2, 6, 10, 12), D(2, 4, 3, -3, 3), D(2, 8, 5, 8), -EINVAL, 0 },
	{ __LINE__, LIBFLOPS_DNNL_CONV, D(2, 6), D(8, 6), D(2, 8), -EINVAL, 0 },
	{ __LINE__, LIBFLOPS_DNNL_IP, D(4), D(7, 4), D(4, 7), -EINVAL, 0 },
	{ __LINE__, LIBFLOPS_DNNL_MATMUL, D(6), D(6, 4), D(4), -EINVAL, 0 },
	{ __LINE__, LIBFLOPS_DNNL_MATMUL, NONE, NONE, NONE, -EINVAL, 0 },
	{ __LINE__, 99, D(9, 6), D(6, 4), D(9, 4), -EINVAL, 0 },
	/* saturates */
	{ __LINE__, LIBFLOPS_DNNL_MATMUL, D(1LL << 40, 1LL << 40), D(1LL << 40, 1LL << 40), D(1LL << 40, 1LL << 40), 0,
	  UINT64_MAX },
};
#undef NONE
#undef D

static void test_dnnl_count(void)
{
	struct libflops_dims many = { LIBFLOPS_DNNL_MAX_DIMS + 1, { 0 } };
	uint64_t got;

	for (size_t i = 0; i < sizeof(dnnl_cases) / sizeof(dnnl_cases[0]); i++) {
		int rc;
		got = 12345;
		rc = libflops_dnnl_count(dnnl_cases[i].kind, &dnnl_cases[i].src, &dnnl_cases[i].wei, &dnnl_cases[i].dst,
					 &got);
		CHECK_ROW(rc == dnnl_cases[i].rc, dnnl_cases[i].line);
		CHECK_ROW(got == (rc ? 12345 : dnnl_cases[i].want), dnnl_cases[i].line);
		if (rc != dnnl_cases[i].rc || (!rc && got != dnnl_cases[i].want))
			fprintf(stderr, "  rc %d, got %llu, want %llu\n", rc, (unsigned long long)got,
				(unsigned long long)dnnl_cases[i].want);
	}
	/* more dimensions than oneDNN has, or none given */
	CHECK_EQ_INT(libflops_dnnl_count(LIBFLOPS_DNNL_IP, &many, &dnnl_cases[0].wei, &many, &got), -EINVAL);
	CHECK_EQ_INT(libflops_dnnl_count(LIBFLOPS_DNNL_CONV, NULL, NULL, NULL, &got), -EINVAL);
	/* libflops_count() has no count for a primitive: 0 */
	CHECK_EQ_INT(libflops_count(LIBFLOPS_DNNL, 0, 0, 3, 5, 7), 0);
	CHECK_EQ_INT(libflops_count(LIBFLOPS_NOARITH, 0, 0, 3, 5, 7), 0);
}

/* The BLAS prefix of @name (after "cblas_" or "LAPACKE_"): 1 or 2 letters
 * (scnrm2, dzasum, csscal, zdrot: a complex vector) and what they say. */
static int prefix(const char *name, unsigned *prec, int *complex)
{
	static const char *const two[] = { "scnrm2", "dznrm2", "scasum", "dzasum", "csscal", "zdscal", "csrot",
					   "zdrot" };
	for (size_t i = 0; i < sizeof(two) / sizeof(two[0]); i++)
		if (strncmp(name, two[i], strlen(two[i])) == 0) {
			*prec = (name[0] == 's' || name[0] == 'c') ? LIBFLOPS_FP32 : LIBFLOPS_FP64;
			*complex = 1;
			return 2;
		}
	switch (name[0]) {
	case 's': *prec = LIBFLOPS_FP32; *complex = 0; return 1;
	case 'd': *prec = LIBFLOPS_FP64; *complex = 0; return 1;
	case 'c': *prec = LIBFLOPS_FP32; *complex = 1; return 1;
	case 'z': *prec = LIBFLOPS_FP64; *complex = 1; return 1;
	}
	return 0;
}

static int find(const char *name)
{
	for (unsigned j = 0; j < libflops_nfuncs; j++)
		if (strcmp(libflops_funcs[j].name, name) == 0)
			return (int)j;
	return -1;
}

/* Every name once; a CBLAS or LAPACKE name and its Fortran name
 * (cblas_dgemm and dgemm_, cblas_zdotu_sub and zdotu_, LAPACKE_dgetrf and
 * dgetrf_) count the same way; the precision and complexity follow the
 * BLAS prefix (s, d, c, z; sc, dz, cs, zd); the ids are the table's
 * indexes. */
static void test_table(void)
{
	unsigned cblas = 0, lapacke = 0, fortran = 0, unknown = 0, ndnnl = 0, nprims = 0, ncounted = 0, nnoarith = 0;

	CHECK(libflops_nfuncs <= LIBFLOPS_MAX_FUNCS);
	for (unsigned i = 0; i < libflops_nfuncs; i++) {
		const struct libflops_func *f = &libflops_funcs[i];
		const char *base = f->name;
		char twin[64];
		unsigned prec = 99;
		int complex = -1;

		CHECK(f->name && *f->name);
		for (unsigned j = 0; j < i; j++)
			if (strcmp(libflops_funcs[j].name, f->name) == 0) {
				CHECK(!"a name appears twice");
				fprintf(stderr, "  %s at %u and %u\n", f->name, j, i);
			}
		CHECK(f->op <= LIBFLOPS_NOARITH);
		CHECK(f->prec < LIBFLOPS_NPREC);
		if (strncmp(f->name, "dnnl_primitive_execute:", 23) == 0) {
			/* a primitive: counted ones end in their data type,
			 * which is their precision */
			const char *dt = strrchr(f->name, ':');
			static const char *const dts[] = { ":f32", ":bf16", ":f16", ":int8" };
			static const unsigned precs[] = { LIBFLOPS_FP32, LIBFLOPS_BF16, LIBFLOPS_FP16, LIBFLOPS_INT8 };
			nprims++;
			CHECK(!f->cplx);
			if (f->op == LIBFLOPS_DNNL) {
				ncounted++;
				int found = 0;
				for (int k = 0; k < 4; k++)
					if (strcmp(dt, dts[k]) == 0) {
						CHECK(f->prec == precs[k]);
						found = 1;
					}
				CHECK(found);
			} else {
				CHECK(f->op == LIBFLOPS_UNKNOWN || f->op == LIBFLOPS_NOARITH);
				CHECK(dt == f->name + 22); /* the kind only */
				nnoarith += f->op == LIBFLOPS_NOARITH;
			}
			continue;
		}
		CHECK(f->op <= LIBFLOPS_UNKNOWN);
		if (strncmp(f->name, "dnnl_", 5) == 0) {
			ndnnl++;
			CHECK(f->op == LIBFLOPS_GEMM && !f->cplx);
			continue;
		}
		if (strncmp(base, "cblas_", 6) == 0)
			base += 6;
		else if (strncmp(base, "LAPACKE_", 8) == 0)
			base += 8;
		if (!prefix(base, &prec, &complex)) {
			CHECK(!"a BLAS name starts with s, d, c or z");
			fprintf(stderr, "  %s\n", f->name);
		}
		if (f->prec != prec || f->cplx != complex) {
			CHECK(!"precision and complexity follow the prefix");
			fprintf(stderr, "  %s\n", f->name);
		}
		/* LAPACK has no CBLAS names, BLAS no LAPACKE names */
		if (base != f->name)
			CHECK((f->op >= LIBFLOPS_GETRF) == (f->name[0] == 'L'));
		if (f->op == LIBFLOPS_UNKNOWN)
			unknown++;
		if (base == f->name) {
			size_t len = strlen(f->name);
			CHECK(len > 1 && f->name[len - 1] == '_'); /* a Fortran name */
			fortran++;
			continue;
		}
		/* the Fortran twin: the CBLAS complex dot products end in _sub */
		snprintf(twin, sizeof(twin), "%s_", base);
		if (strlen(twin) > 5 && strcmp(twin + strlen(twin) - 5, "_sub_") == 0)
			strcpy(twin + strlen(twin) - 5, "_");
		int j = find(twin);
		CHECK(j >= 0);
		if (j < 0) {
			fprintf(stderr, "  no %s for %s\n", twin, f->name);
			continue;
		}
		if (f->name[0] == 'L')
			lapacke++;
		else
			cblas++;
		CHECK(libflops_funcs[j].op == f->op);
		CHECK(libflops_funcs[j].prec == f->prec);
		CHECK(libflops_funcs[j].cplx == f->cplx);
	}
	/* BLAS: 58 names of levels 2 and 3 and 28 of level 1 in CBLAS, each
	 * with its Fortran twin; LAPACK: 74 Fortran names, 52 of them in
	 * LAPACKE too, and 36 drivers whose FLOPs are unknown (Fortran only) */
	CHECK_EQ_INT(cblas, 58 + 28);
	CHECK_EQ_INT(lapacke, 52);
	CHECK_EQ_INT(fortran, 58 + 28 + 74 + 36);
	CHECK_EQ_INT(unknown, 36);
	CHECK_EQ_INT(ndnnl, 4);
	/* oneDNN's primitives: convolution, deconvolution and inner product
	 * in 3 propagations and 3 types, forward in int8 too, matmul in 4;
	 * reorder, concat, shuffle; 13 kinds of unknown FLOPs and "other" */
	CHECK_EQ_INT(ncounted, 3 * 10 + 4);
	CHECK_EQ_INT(nnoarith, 3);
	CHECK_EQ_INT(nprims, 34 + 3 + 14);
	CHECK_EQ_INT(cblas + lapacke + fortran + ndnnl + nprims, LIBFLOPS_NIDS);

	/* families and precisions of some entries, by name */
	static const struct {
		int line;
		unsigned id;
		const char *name;
		unsigned op, prec;
		int complex;
	} rows[] = {
		{ __LINE__, LIBFLOPS_ID_cblas_dgemm, "cblas_dgemm", LIBFLOPS_GEMM, LIBFLOPS_FP64, 0 },
		{ __LINE__, LIBFLOPS_ID_sgemm_, "sgemm_", LIBFLOPS_GEMM, LIBFLOPS_FP32, 0 },
		{ __LINE__, LIBFLOPS_ID_zgemm3m_, "zgemm3m_", LIBFLOPS_GEMM, LIBFLOPS_FP64, 1 },
		{ __LINE__, LIBFLOPS_ID_cblas_chemm, "cblas_chemm", LIBFLOPS_SYMM, LIBFLOPS_FP32, 1 },
		{ __LINE__, LIBFLOPS_ID_zherk_, "zherk_", LIBFLOPS_SYRK, LIBFLOPS_FP64, 1 },
		{ __LINE__, LIBFLOPS_ID_cblas_cher2k, "cblas_cher2k", LIBFLOPS_SYR2K, LIBFLOPS_FP32, 1 },
		{ __LINE__, LIBFLOPS_ID_cblas_dgemmt, "cblas_dgemmt", LIBFLOPS_GEMMT, LIBFLOPS_FP64, 0 },
		{ __LINE__, LIBFLOPS_ID_strsm_, "strsm_", LIBFLOPS_TRMM, LIBFLOPS_FP32, 0 },
		{ __LINE__, LIBFLOPS_ID_cblas_dtrsv, "cblas_dtrsv", LIBFLOPS_TRMV, LIBFLOPS_FP64, 0 },
		{ __LINE__, LIBFLOPS_ID_zhemv_, "zhemv_", LIBFLOPS_SYMV, LIBFLOPS_FP64, 1 },
		{ __LINE__, LIBFLOPS_ID_cblas_sger, "cblas_sger", LIBFLOPS_GER, LIBFLOPS_FP32, 0 },
		{ __LINE__, LIBFLOPS_ID_cgeru_, "cgeru_", LIBFLOPS_GER, LIBFLOPS_FP32, 1 },
		{ __LINE__, LIBFLOPS_ID_dnnl_sgemm, "dnnl_sgemm", LIBFLOPS_GEMM, LIBFLOPS_FP32, 0 },
		{ __LINE__, LIBFLOPS_ID_dnnl_gemm_bf16bf16f32, "dnnl_gemm_bf16bf16f32", LIBFLOPS_GEMM, LIBFLOPS_BF16, 0 },
		{ __LINE__, LIBFLOPS_ID_dnnl_gemm_u8s8s32, "dnnl_gemm_u8s8s32", LIBFLOPS_GEMM, LIBFLOPS_INT8, 0 },
		{ __LINE__, LIBFLOPS_ID_dnnl_gemm_s8s8s32, "dnnl_gemm_s8s8s32", LIBFLOPS_GEMM, LIBFLOPS_INT8, 0 },
		{ __LINE__, LIBFLOPS_ID_cblas_ddot, "cblas_ddot", LIBFLOPS_DOT, LIBFLOPS_FP64, 0 },
		{ __LINE__, LIBFLOPS_ID_cblas_zdotc_sub, "cblas_zdotc_sub", LIBFLOPS_DOT, LIBFLOPS_FP64, 1 },
		{ __LINE__, LIBFLOPS_ID_cdotu_, "cdotu_", LIBFLOPS_DOT, LIBFLOPS_FP32, 1 },
		{ __LINE__, LIBFLOPS_ID_caxpy_, "caxpy_", LIBFLOPS_AXPY, LIBFLOPS_FP32, 1 },
		{ __LINE__, LIBFLOPS_ID_cblas_zscal, "cblas_zscal", LIBFLOPS_SCAL, LIBFLOPS_FP64, 1 },
		{ __LINE__, LIBFLOPS_ID_csscal_, "csscal_", LIBFLOPS_RSCAL, LIBFLOPS_FP32, 1 },
		{ __LINE__, LIBFLOPS_ID_cblas_dznrm2, "cblas_dznrm2", LIBFLOPS_NRM2, LIBFLOPS_FP64, 1 },
		{ __LINE__, LIBFLOPS_ID_sasum_, "sasum_", LIBFLOPS_ASUM, LIBFLOPS_FP32, 0 },
		{ __LINE__, LIBFLOPS_ID_zdrot_, "zdrot_", LIBFLOPS_ROT, LIBFLOPS_FP64, 1 },
		{ __LINE__, LIBFLOPS_ID_dgetrf_, "dgetrf_", LIBFLOPS_GETRF, LIBFLOPS_FP64, 0 },
		{ __LINE__, LIBFLOPS_ID_zgesv_, "zgesv_", LIBFLOPS_GESV, LIBFLOPS_FP64, 1 },
		{ __LINE__, LIBFLOPS_ID_cpotrs_, "cpotrs_", LIBFLOPS_POTRS, LIBFLOPS_FP32, 1 },
		{ __LINE__, LIBFLOPS_ID_zungqr_, "zungqr_", LIBFLOPS_ORGQR, LIBFLOPS_FP64, 1 },
		{ __LINE__, LIBFLOPS_ID_sormqr_, "sormqr_", LIBFLOPS_ORMQR, LIBFLOPS_FP32, 0 },
		{ __LINE__, LIBFLOPS_ID_chetrf_, "chetrf_", LIBFLOPS_SYTRF, LIBFLOPS_FP32, 1 },
		{ __LINE__, LIBFLOPS_ID_zhesv_, "zhesv_", LIBFLOPS_SYSV, LIBFLOPS_FP64, 1 },
		{ __LINE__, LIBFLOPS_ID_dgels_, "dgels_", LIBFLOPS_GELS, LIBFLOPS_FP64, 0 },
		{ __LINE__, LIBFLOPS_ID_LAPACKE_dpotrf, "LAPACKE_dpotrf", LIBFLOPS_POTRF, LIBFLOPS_FP64, 0 },
		{ __LINE__, LIBFLOPS_ID_LAPACKE_cunmqr, "LAPACKE_cunmqr", LIBFLOPS_ORMQR, LIBFLOPS_FP32, 1 },
		{ __LINE__, LIBFLOPS_ID_dsyevd_, "dsyevd_", LIBFLOPS_UNKNOWN, LIBFLOPS_FP64, 0 },
		{ __LINE__, LIBFLOPS_ID_zheevr_, "zheevr_", LIBFLOPS_UNKNOWN, LIBFLOPS_FP64, 1 },
		{ __LINE__, LIBFLOPS_ID_sgesdd_, "sgesdd_", LIBFLOPS_UNKNOWN, LIBFLOPS_FP32, 0 },
		{ __LINE__, LIBFLOPS_ID_cgelsd_, "cgelsd_", LIBFLOPS_UNKNOWN, LIBFLOPS_FP32, 1 },
		{ __LINE__, LIBFLOPS_ID_dnnl_conv_fwd_f32, "dnnl_primitive_execute:convolution_forward:f32", LIBFLOPS_DNNL,
		  LIBFLOPS_FP32, 0 },
		{ __LINE__, LIBFLOPS_ID_dnnl_conv_bwd_weights_bf16, "dnnl_primitive_execute:convolution_backward_weights:bf16",
		  LIBFLOPS_DNNL, LIBFLOPS_BF16, 0 },
		{ __LINE__, LIBFLOPS_ID_dnnl_deconv_bwd_data_f16, "dnnl_primitive_execute:deconvolution_backward_data:f16",
		  LIBFLOPS_DNNL, LIBFLOPS_FP16, 0 },
		{ __LINE__, LIBFLOPS_ID_dnnl_ip_fwd_int8, "dnnl_primitive_execute:inner_product_forward:int8", LIBFLOPS_DNNL,
		  LIBFLOPS_INT8, 0 },
		{ __LINE__, LIBFLOPS_ID_dnnl_matmul_bf16, "dnnl_primitive_execute:matmul:bf16", LIBFLOPS_DNNL, LIBFLOPS_BF16, 0 },
		{ __LINE__, LIBFLOPS_ID_dnnl_reorder, "dnnl_primitive_execute:reorder", LIBFLOPS_NOARITH, LIBFLOPS_FP32, 0 },
		{ __LINE__, LIBFLOPS_ID_dnnl_pooling, "dnnl_primitive_execute:pooling", LIBFLOPS_UNKNOWN, LIBFLOPS_FP32, 0 },
		{ __LINE__, LIBFLOPS_ID_dnnl_other, "dnnl_primitive_execute:other", LIBFLOPS_UNKNOWN, LIBFLOPS_FP32, 0 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct libflops_func *f = &libflops_funcs[rows[i].id];
		CHECK_ROW(strcmp(f->name, rows[i].name) == 0, rows[i].line);
		CHECK_ROW(f->op == rows[i].op, rows[i].line);
		CHECK_ROW(f->prec == rows[i].prec, rows[i].line);
		CHECK_ROW(f->cplx == rows[i].complex, rows[i].line);
	}
	/* the enum and the table come from the same list */
#define ID_MATCHES(sym, op, prec, cplx) CHECK(strcmp(libflops_funcs[LIBFLOPS_ID_##sym].name, #sym) == 0);
#define PRIM_MATCHES(id, str, op, prec) CHECK(strcmp(libflops_funcs[LIBFLOPS_ID_##id].name, str) == 0);
	LIBFLOPS_LIST(ID_MATCHES)
	LIBFLOPS_PRIMS(PRIM_MATCHES)
#undef PRIM_MATCHES
#undef ID_MATCHES

	CHECK_STR(libflops_prec_name(LIBFLOPS_FP64), "fp64");
	CHECK_STR(libflops_prec_name(LIBFLOPS_FP32), "fp32");
	CHECK_STR(libflops_prec_name(LIBFLOPS_BF16), "bf16");
	CHECK_STR(libflops_prec_name(LIBFLOPS_FP16), "fp16");
	CHECK_STR(libflops_prec_name(LIBFLOPS_INT8), "int8");
	CHECK_STR(libflops_prec_name(LIBFLOPS_NPREC), "?");
}

static struct libflops_region *new_region(void)
{
	/* as the recorder makes it: zeroed, then initialised */
	struct libflops_region *r = calloc(1, libflops_region_size());
	if (!r) {
		fprintf(stderr, "cannot allocate %zu bytes\n", libflops_region_size());
		exit(1);
	}
	libflops_region_init(r);
	return r;
}

/* The program's notes: added in order, truncated, at most LIBFLOPS_NNOTES
 * (the rest counted), read back as printable ASCII only. */
static void test_notes(void)
{
	struct libflops_region *r = new_region();
	char buf[LIBFLOPS_NOTE_LEN + 8], big[2000];
	unsigned flags = 99;

	CHECK_EQ_INT(libflops_note_read(r, 0, buf, sizeof(buf), &flags), -ENOENT);
	CHECK_EQ_INT(libflops_note_add(r, 7, 0, "declared 12 FLOPs"), 0);
	CHECK_EQ_INT(libflops_note_add(r, 7, LIBFLOPS_NOTE_MISSING, "bell\a, escape \x1b[31m, \xc3\xa9, tab\t."), 0);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	CHECK_EQ_INT(libflops_note_add(r, 8, 0, big), 0);
	CHECK_EQ_INT(libflops_note_read(r, 0, buf, sizeof(buf), &flags), 0);
	CHECK_STR(buf, "declared 12 FLOPs");
	CHECK_EQ_INT(flags, 0);
	CHECK_EQ_INT(r->notes[0].pid, 7);
	CHECK_EQ_INT(libflops_note_read(r, 1, buf, sizeof(buf), &flags), 0);
	CHECK_STR(buf, "bell?, escape ?[31m, ??, tab?.");
	CHECK_EQ_INT(flags, LIBFLOPS_NOTE_MISSING);
	CHECK_EQ_INT(libflops_note_read(r, 2, buf, sizeof(buf), NULL), 0);
	CHECK_EQ_INT(strlen(buf), LIBFLOPS_NOTE_LEN - 1);
	/* a short buffer: truncated, terminated */
	CHECK_EQ_INT(libflops_note_read(r, 0, buf, 9, NULL), 0);
	CHECK_STR(buf, "declared");
	/* the text as the target left it: unterminated, the reader stops at
	 * the field's end */
	memset(r->notes[2].text, 'y', LIBFLOPS_NOTE_LEN);
	CHECK_EQ_INT(libflops_note_read(r, 2, buf, sizeof(buf), NULL), 0);
	CHECK_EQ_INT(strlen(buf), LIBFLOPS_NOTE_LEN);
	for (int i = 3; i < LIBFLOPS_NNOTES; i++)
		CHECK_EQ_INT(libflops_note_add(r, 9, 0, "n"), 0);
	CHECK_EQ_INT(libflops_note_add(r, 9, 0, "one too many"), -ENOSPC);
	CHECK_EQ_INT(libflops_note_add(r, 9, 0, "two"), -ENOSPC);
	CHECK(r->note_head == LIBFLOPS_NNOTES + 2);
	CHECK_EQ_INT(libflops_note_read(r, LIBFLOPS_NNOTES, buf, sizeof(buf), NULL), -ENOENT);
	/* a slot whose sequence number is not its own: not read */
	r->notes[4].seq = 99;
	CHECK_EQ_INT(libflops_note_read(r, 4, buf, sizeof(buf), NULL), -ENOENT);
	free(r);
}

static void test_check(void)
{
	struct libflops_region *r = new_region();
	size_t size = libflops_region_size();

	CHECK(r->magic == LIBFLOPS_MAGIC);
	CHECK_EQ_INT(r->version, LIBFLOPS_VERSION);
	CHECK_EQ_INT(r->header_size, 128);
	CHECK_EQ_INT(r->nfuncs, 389);
	CHECK_EQ_INT(r->max_procs, 64);
	CHECK_EQ_INT(r->nsnap, 4096);
	CHECK_EQ_INT(r->proc_size, 9752);
	CHECK_EQ_INT(r->snap_size, 2328);
	CHECK_EQ_INT(r->nnotes, 16);
	CHECK_EQ_INT(r->note_size, 520);
	CHECK_EQ_INT(r->loaded, 0);
	CHECK_EQ_INT(r->procs_full, 0);
	CHECK_EQ_INT(r->snap_head, 0);
	CHECK_EQ_INT(libflops_region_check(r, size), 0);
	CHECK_EQ_INT(libflops_region_check(r, size + 4096), 0);
	CHECK_EQ_INT(libflops_region_check(r, size - 1), -EINVAL);
	CHECK_EQ_INT(libflops_region_check(r, 64), -EINVAL);

	/* each field that describes the layout is checked */
	static const size_t fields[] = {
		offsetof(struct libflops_region, version), offsetof(struct libflops_region, header_size),
		offsetof(struct libflops_region, nfuncs), offsetof(struct libflops_region, max_procs),
		offsetof(struct libflops_region, nsnap), offsetof(struct libflops_region, proc_size),
		offsetof(struct libflops_region, snap_size), offsetof(struct libflops_region, nnotes),
		offsetof(struct libflops_region, note_size),
	};
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		uint32_t *p = (uint32_t *)((char *)r + fields[i]), old = *p;
		*p = old + 1;
		CHECK_EQ_INT(libflops_region_check(r, size), -EPROTO);
		*p = old;
	}
	r->magic ^= 1;
	CHECK_EQ_INT(libflops_region_check(r, size), -EPROTO);
	r->magic ^= 1;
	/* the run-time fields are not the layout */
	r->loaded = 3;
	r->procs_full = 2;
	CHECK_EQ_INT(libflops_region_check(r, size), 0);
	free(r);
}

/* libflops_region_attach(): only a region named by MFU_LIBFLOPS_FD, of the
 * right size and layout, is mapped. */
static void test_attach(void)
{
	size_t size = libflops_region_size();
	char num[32];
	int fd = memfd_create("test-libflops", 0);
	struct libflops_region *r, *a;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	unsetenv(LIBFLOPS_ENV_FD);
	CHECK(libflops_region_attach() == NULL);
	setenv(LIBFLOPS_ENV_FD, "", 1);
	CHECK(libflops_region_attach() == NULL);
	setenv(LIBFLOPS_ENV_FD, "3x", 1);
	CHECK(libflops_region_attach() == NULL);
	setenv(LIBFLOPS_ENV_FD, "-1", 1);
	CHECK(libflops_region_attach() == NULL);
	snprintf(num, sizeof(num), "%d", fd);
	setenv(LIBFLOPS_ENV_FD, num, 1);
	CHECK(libflops_region_attach() == NULL); /* empty file */
	CHECK_EQ_INT(ftruncate(fd, (off_t)size), 0);
	CHECK(libflops_region_attach() == NULL); /* zeroes: no magic */
	r = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(r != MAP_FAILED);
	if (r == MAP_FAILED)
		goto out;
	libflops_region_init(r);
	a = libflops_region_attach();
	CHECK(a != NULL);
	if (a) {
		/* the same memory: a count through one mapping shows in the other */
		a->procs[3].f[7].calls = 42;
		CHECK_EQ_INT(r->procs[3].f[7].calls, 42);
		munmap(a, size);
	}
	r->nfuncs = 1;
	CHECK(libflops_region_attach() == NULL);
	munmap(r, size);
out:
	unsetenv(LIBFLOPS_ENV_FD);
	close(fd);
}

/* A pid that no process has: a child that has exited and been reaped. */
static int32_t dead_pid(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	CHECK(pid > 0);
	waitpid(pid, NULL, 0);
	return (int32_t)pid;
}

static void test_proc_for(void)
{
	struct libflops_region *r = new_region();
	int32_t me = (int32_t)getpid(), gone = dead_pid();
	struct libflops_proc *p, *q;

	CHECK(libflops_proc_find(r, me) == NULL);
	p = libflops_proc_for(r, me);
	CHECK(p == &r->procs[0]);
	CHECK_EQ_INT(p->pid, me);
	CHECK_EQ_INT(p->active, 0); /* the counting library sets it, not the claim */
	CHECK(libflops_proc_for(r, me) == p);
	CHECK(libflops_proc_find(r, me) == p);
	q = libflops_proc_for(r, me + 1);
	CHECK(q == &r->procs[1]);
	CHECK(libflops_proc_find(r, me + 1) == q);
	CHECK(libflops_proc_find(r, me + 2) == NULL);
	CHECK(libflops_proc_for(r, me) == p);

	/* full of live processes (this one: kill(pid, 0) succeeds) */
	for (int i = 2; i < LIBFLOPS_MAX_PROCS; i++)
		r->procs[i].pid = me;
	r->procs[1].pid = me;
	CHECK(libflops_proc_for(r, me) == p);     /* its own slot, the first it holds */
	CHECK(libflops_proc_for(r, gone) == NULL);
	CHECK_EQ_INT(r->procs_full, 1);
	CHECK(libflops_proc_for(r, gone) == NULL);
	CHECK_EQ_INT(r->procs_full, 2);

	/* a slot whose process has exited is taken over, its counters from 0 */
	struct libflops_proc *old = &r->procs[37];
	old->pid = gone;
	old->active = 1;
	libflops_add(old, LIBFLOPS_ID_cblas_dgemm, 100);
	for (int i = 0; i < 8; i++)
		libflops_add(old, LIBFLOPS_ID_cblas_dgemm, 100);
	libflops_add(old, LIBFLOPS_NIDS - 1, 0);
	CHECK_EQ_INT(old->nlist, 2);
	int32_t newcomer = me + 1000;
	q = libflops_proc_for(r, newcomer);
	CHECK(q == old);
	CHECK_EQ_INT(old->pid, newcomer);
	CHECK_EQ_INT(old->active, 0);
	CHECK_EQ_INT(old->nlist, 0);
	CHECK_EQ_INT(old->list[0], 0);
	CHECK_EQ_INT(old->list[1], 0);
	CHECK_EQ_INT(old->listed[LIBFLOPS_ID_cblas_dgemm], 0);
	CHECK_EQ_INT(old->listed[LIBFLOPS_NIDS - 1], 0);
	CHECK_EQ_INT(old->f[LIBFLOPS_ID_cblas_dgemm].calls, 0);
	CHECK_EQ_INT(old->f[LIBFLOPS_ID_cblas_dgemm].flops, 0);
	CHECK_EQ_INT(old->f[LIBFLOPS_NIDS - 1].calls, 0);
	CHECK(libflops_proc_find(r, gone) == NULL);
	CHECK_EQ_INT(r->procs_full, 2);
	free(r);
}

/* Threads claiming at once: distinct pids get distinct slots, one pid one
 * slot (the compare-and-swap). */
#define NCLAIM 16
static struct libflops_region *g_claim_region;
static struct libflops_proc *g_claim_own[NCLAIM], *g_claim_shared[NCLAIM];

static void *claimer(void *arg)
{
	int i = (int)(intptr_t)arg;
	g_claim_own[i] = libflops_proc_for(g_claim_region, 100000 + i);
	g_claim_shared[i] = libflops_proc_for(g_claim_region, 99999);
	return NULL;
}

static void test_concurrent_claims(void)
{
	pthread_t t[NCLAIM];

	g_claim_region = new_region();
	for (int i = 0; i < NCLAIM; i++)
		CHECK_EQ_INT(pthread_create(&t[i], NULL, claimer, (void *)(intptr_t)i), 0);
	for (int i = 0; i < NCLAIM; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < NCLAIM; i++) {
		CHECK(g_claim_own[i] != NULL);
		CHECK(g_claim_shared[i] == g_claim_shared[0]);
		CHECK(g_claim_own[i] != g_claim_shared[0]);
		for (int j = 0; j < i; j++)
			CHECK(g_claim_own[i] != g_claim_own[j]);
	}
	int held = 0;
	for (int i = 0; i < LIBFLOPS_MAX_PROCS; i++)
		held += g_claim_region->procs[i].pid != 0;
	CHECK_EQ_INT(held, NCLAIM + 1);
	free(g_claim_region);
}

static void test_sum(void)
{
	struct libflops_region *r = new_region();
	struct libflops_proc *p = libflops_proc_for(r, (int32_t)getpid());
	uint64_t out[LIBFLOPS_WORDS];

	memset(out, 0xff, sizeof(out));
	libflops_sum(p, out);
	for (int i = 0; i < LIBFLOPS_WORDS; i++)
		CHECK_EQ_INT(out[i], 0);
	/* counters that nothing listed are not summed: only the functions the
	 * counting library counted (libflops_add) are */
	p->f[LIBFLOPS_ID_cblas_sgemm] = (struct libflops_counter){ 1, 10 };
	libflops_sum(p, out);
	CHECK_EQ_INT(out[LIBFLOPS_W_CALLS], 0);
	p->f[LIBFLOPS_ID_cblas_sgemm] = (struct libflops_counter){ 0, 0 };

	libflops_add(p, LIBFLOPS_ID_dnnl_gemm_s8s8s32, 5);
	libflops_add(p, LIBFLOPS_ID_cblas_dgemm, 50);
	libflops_add(p, LIBFLOPS_ID_cblas_dgemm, 50);
	libflops_add(p, LIBFLOPS_ID_zgemm_, 8);                 /* complex fp64 */
	libflops_add(p, LIBFLOPS_ID_cblas_sgemm, 10);
	for (int i = 0; i < 4; i++)
		libflops_add(p, LIBFLOPS_ID_cgemv_, 250);       /* complex fp32 */
	libflops_add(p, LIBFLOPS_ID_dnnl_gemm_bf16bf16f32, 7);
	for (int i = 0; i < 3; i++)
		libflops_add(p, LIBFLOPS_ID_dnnl_gemm_u8s8s32, 10);
	libflops_add(p, LIBFLOPS_ID_ddot_, 2 << 20);            /* level 1 */
	libflops_add(p, LIBFLOPS_ID_dgesv_, 1000);              /* LAPACK */
	libflops_add(p, LIBFLOPS_ID_dsyevd_, 0);                /* FLOPs unknown */
	libflops_add(p, LIBFLOPS_ID_zgesdd_, 0);
	libflops_add(p, LIBFLOPS_ID_dsyevd_, 0);
	/* listed in the order of their first call, each once */
	CHECK_EQ_INT(p->nlist, 11);
	CHECK_EQ_INT(p->list[0], LIBFLOPS_ID_dnnl_gemm_s8s8s32 + 1);
	CHECK_EQ_INT(p->list[1], LIBFLOPS_ID_cblas_dgemm + 1);
	CHECK_EQ_INT(p->list[10], LIBFLOPS_ID_zgesdd_ + 1);
	CHECK_EQ_INT(p->list[11], 0);
	CHECK_EQ_INT(p->listed[LIBFLOPS_ID_dsyevd_], 1);
	CHECK_EQ_INT(p->listed[LIBFLOPS_ID_sgemm_], 0);
	CHECK_EQ_INT(p->f[LIBFLOPS_ID_dsyevd_].calls, 2);
	CHECK_EQ_INT(p->f[LIBFLOPS_ID_dsyevd_].flops, 0);
	libflops_sum(p, out);
	CHECK_EQ_INT(out[LIBFLOPS_W_CALLS], 1 + 2 + 1 + 1 + 4 + 1 + 3 + 1 + 1 + 3); /* 18 */
	CHECK_EQ_INT(out[LIBFLOPS_W_FLOPS + LIBFLOPS_FP64], 108 + (2 << 20) + 1000);
	CHECK_EQ_INT(out[LIBFLOPS_W_FLOPS + LIBFLOPS_FP32], 1010);
	CHECK_EQ_INT(out[LIBFLOPS_W_FLOPS + LIBFLOPS_BF16], 7);
	CHECK_EQ_INT(out[LIBFLOPS_W_FLOPS + LIBFLOPS_FP16], 0);
	CHECK_EQ_INT(out[LIBFLOPS_W_FLOPS + LIBFLOPS_INT8], 35);
	/* three calls whose FLOPs are unknown: the FLOP words are partial */
	CHECK_EQ_INT(out[LIBFLOPS_W_UNKNOWN], 3);

	/* an entry being written (0) is skipped; the shared list is bounded
	 * and its ids checked: a target can write anything there */
	p->list[1] = 0;
	libflops_sum(p, out);
	CHECK_EQ_INT(out[LIBFLOPS_W_CALLS], 18 - 2);
	p->list[1] = LIBFLOPS_NIDS + 1;
	libflops_sum(p, out);
	CHECK_EQ_INT(out[LIBFLOPS_W_CALLS], 18 - 2);
	p->list[1] = LIBFLOPS_ID_cblas_dgemm + 1;
	p->nlist = UINT32_MAX;
	libflops_sum(p, out);
	CHECK_EQ_INT(out[LIBFLOPS_W_CALLS], 18);
	/* an id out of the table is never listed */
	p->nlist = 11;
	libflops_list_add(p, LIBFLOPS_NIDS);
	CHECK_EQ_INT(p->nlist, 11);
	free(r);
}

/* Threads counting the same functions at once: each function is listed
 * once, and every call is counted. */
#define NADD 8
static struct libflops_proc *g_add_proc;

static void *adder(void *arg)
{
	unsigned base = (unsigned)(intptr_t)arg;
	for (int i = 0; i < 10000; i++)
		libflops_add(g_add_proc, (base + (unsigned)i) % 40, 3);
	return NULL;
}

static void test_concurrent_adds(void)
{
	struct libflops_region *r = new_region();
	pthread_t t[NADD];
	uint64_t out[LIBFLOPS_WORDS];
	int seen[40] = { 0 };

	g_add_proc = libflops_proc_for(r, 5150);
	for (int i = 0; i < NADD; i++)
		CHECK_EQ_INT(pthread_create(&t[i], NULL, adder, (void *)(intptr_t)(i * 7)), 0);
	for (int i = 0; i < NADD; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ_INT(g_add_proc->nlist, 40);
	for (int i = 0; i < 40; i++) {
		int e = g_add_proc->list[i];
		CHECK(e >= 1 && e <= 40);
		if (e >= 1 && e <= 40)
			seen[e - 1]++;
	}
	for (int i = 0; i < 40; i++)
		CHECK_EQ_INT(seen[i], 1);
	libflops_sum(g_add_proc, out);
	CHECK_EQ_INT(out[LIBFLOPS_W_CALLS], NADD * 10000);
	free(r);
}

/* Count function id f (listing it) with calls v + f and FLOPs 1000 (v + f)
 * in total, for the first @nf ids. */
static void fill(struct libflops_proc *p, uint64_t v, unsigned nf)
{
	for (unsigned f = 0; f < nf; f++) {
		if (!p->listed[f])
			libflops_list_add(p, f);
		p->f[f] = (struct libflops_counter){ v + f, (v + f) * 1000 };
	}
}

static int same_table(const struct libflops_table *s, uint64_t v, unsigned nf)
{
	for (unsigned f = 0; f < LIBFLOPS_NIDS; f++) {
		uint64_t c = f < nf ? v + f : 0;
		if (s->f[f].calls != c || s->f[f].flops != c * 1000)
			return 0;
	}
	return 1;
}

static void test_snapshot(void)
{
	struct libflops_region *r = new_region();
	struct libflops_proc *p = libflops_proc_for(r, 4242);
	struct libflops_table s;
	uint64_t first, id;

	CHECK_EQ_INT(libflops_snapshot_read(r, 0, &s), -ESTALE);
	CHECK_EQ_INT(libflops_snapshot_read(r, 1, &s), -ESTALE); /* not written yet */
	fill(p, 1, 20);
	first = libflops_snapshot(r, p);
	CHECK_EQ_INT(first, 1);
	/* the copy holds the 20 functions called, not the table */
	CHECK_EQ_INT(r->snaps[0].n, 20);
	CHECK_EQ_INT(r->snaps[0].nlist, 20);
	fill(p, 50, 20); /* the counters go on: the copy keeps the boundary's */
	memset(&s, 0xff, sizeof(s));
	CHECK_EQ_INT(libflops_snapshot_read(r, first, &s), 0);
	CHECK_EQ_INT(s.seq, first);
	CHECK_EQ_INT(s.pid, 4242);
	CHECK(same_table(&s, 1, 20));
	id = libflops_snapshot(r, p);
	CHECK_EQ_INT(id, 2);
	CHECK_EQ_INT(libflops_snapshot_read(r, id, &s), 0);
	CHECK(same_table(&s, 50, 20));
	CHECK_EQ_INT(libflops_snapshot_read(r, first, &s), 0); /* still there */
	CHECK(same_table(&s, 1, 20));
	CHECK_EQ_INT(libflops_snapshot_read(r, 3, &s), -ESTALE);

	/* a copy being written (seq 0) is not read */
	r->snaps[1].seq = 0;
	CHECK_EQ_INT(libflops_snapshot_read(r, 2, &s), -ESTALE);
	r->snaps[1].seq = 2;
	CHECK_EQ_INT(libflops_snapshot_read(r, 2, &s), 0);
	/* nor one the target scribbled on: more entries than it holds, an id
	 * out of the table */
	r->snaps[1].n = LIBFLOPS_SNAP_FUNCS + 1;
	CHECK_EQ_INT(libflops_snapshot_read(r, 2, &s), -EPROTO);
	r->snaps[1].n = 20;
	r->snaps[1].id[3] = LIBFLOPS_NIDS;
	CHECK_EQ_INT(libflops_snapshot_read(r, 2, &s), -EPROTO);
	r->snaps[1].id[3] = 3;
	CHECK_EQ_INT(libflops_snapshot_read(r, 2, &s), 0);

	/* NSNAP - 2 more: the ring is exactly full, the first still readable */
	for (int i = 0; i < LIBFLOPS_NSNAP - 2; i++)
		id = libflops_snapshot(r, p);
	CHECK_EQ_INT(id, LIBFLOPS_NSNAP);
	CHECK_EQ_INT(libflops_snapshot_read(r, first, &s), 0);
	CHECK(same_table(&s, 1, 20));
	/* one more overwrites it */
	fill(p, 7, 20);
	id = libflops_snapshot(r, p);
	CHECK_EQ_INT(id, LIBFLOPS_NSNAP + 1);
	CHECK_EQ_INT(libflops_snapshot_read(r, first, &s), -ESTALE);
	CHECK_EQ_INT(libflops_snapshot_read(r, 2, &s), 0);
	CHECK_EQ_INT(libflops_snapshot_read(r, id, &s), 0);
	CHECK(same_table(&s, 7, 20));
	/* LIBFLOPS_NSNAP more after any snapshot: gone */
	for (int i = 0; i < LIBFLOPS_NSNAP; i++)
		libflops_snapshot(r, p);
	CHECK_EQ_INT(libflops_snapshot_read(r, id, &s), -ESTALE);
	CHECK_EQ_INT(libflops_snapshot_read(r, id + LIBFLOPS_NSNAP, &s), 0);
	CHECK_EQ_INT(r->snap_head, 2 * LIBFLOPS_NSNAP + 1);

	/* a process that called more functions than a copy holds: the first
	 * LIBFLOPS_SNAP_FUNCS are copied, and the reader is told (-ENOSPC) */
	struct libflops_proc *q = libflops_proc_for(r, 4343);
	fill(q, 3, LIBFLOPS_SNAP_FUNCS);
	id = libflops_snapshot(r, q);
	CHECK_EQ_INT(libflops_snapshot_read(r, id, &s), 0);
	CHECK(same_table(&s, 3, LIBFLOPS_SNAP_FUNCS));
	fill(q, 3, LIBFLOPS_SNAP_FUNCS + 1);
	id = libflops_snapshot(r, q);
	CHECK_EQ_INT(r->snaps[(id - 1) % LIBFLOPS_NSNAP].n, LIBFLOPS_SNAP_FUNCS);
	CHECK_EQ_INT(r->snaps[(id - 1) % LIBFLOPS_NSNAP].nlist, LIBFLOPS_SNAP_FUNCS + 1);
	CHECK_EQ_INT(libflops_snapshot_read(r, id, &s), -ENOSPC);
	CHECK(same_table(&s, 3, LIBFLOPS_SNAP_FUNCS));
	free(r);
}

/* The seqlock: a reader racing the writers that overwrite its snapshot gets
 * either the whole copy it asked for or -ESTALE, never a mix. */
#define RACE_SNAPS 200000
#define RACE_FUNCS 60
static struct libflops_region *g_race;
static int g_race_done;

static void *race_writer(void *arg)
{
	struct libflops_proc *p = arg;
	for (uint64_t v = 1; v <= RACE_SNAPS; v++) {
		fill(p, v * 1000, RACE_FUNCS);
		libflops_snapshot(g_race, p);
	}
	__atomic_store_n(&g_race_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_snapshot_race(void)
{
	static struct libflops_table s;
	pthread_t t;
	uint64_t ok = 0, stale = 0, torn = 0;

	g_race = new_region();
	struct libflops_proc *p = libflops_proc_for(g_race, 77);
	CHECK_EQ_INT(pthread_create(&t, NULL, race_writer, p), 0);
	while (!__atomic_load_n(&g_race_done, __ATOMIC_ACQUIRE)) {
		uint64_t head = __atomic_load_n(&g_race->snap_head, __ATOMIC_RELAXED);
		/* the oldest one still in the ring: the next to be overwritten */
		uint64_t id = head > LIBFLOPS_NSNAP ? head - LIBFLOPS_NSNAP + 1 : 1;
		int rc = libflops_snapshot_read(g_race, id, &s);
		if (rc == -ESTALE) {
			stale++;
			continue;
		}
		if (rc != 0 || s.seq != id || s.pid != 77 || s.f[0].calls % 1000 != 0 ||
		    !same_table(&s, s.f[0].calls, RACE_FUNCS))
			torn++;
		else
			ok++;
	}
	pthread_join(t, NULL);
	CHECK_EQ_INT(torn, 0);
	CHECK(ok > 0);
	fprintf(stderr, "snapshot race: %llu whole copies, %llu stale, %llu torn\n", (unsigned long long)ok,
		(unsigned long long)stale, (unsigned long long)torn);
	CHECK_EQ_INT(g_race->snap_head, RACE_SNAPS);
	free(g_race);
}

/* ---- the counting library, preloaded into a child (execs itself with
 * --shim-child) that calls the stand-in BLAS and LAPACK ---- */

static int child_failed;
#define CHILD_CHECK(cond)                                                          \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "shim child: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			child_failed = 1;                                          \
		}                                                                  \
	} while (0)

/* The calls running in this process, as the recorder reads them, at each
 * dgemm_ (from inside it): the outermost call at least, and the
 * eigensolver (FLOPs unknown) besides the GEMMs it makes. */
static const struct libflops_proc *g_child_proc;
static uint64_t g_running[16];
static int g_nrunning;

static uint64_t child_running(void)
{
	uint64_t out[LIBFLOPS_WORDS];
	libflops_sum(g_child_proc, out);
	return libflops_running(g_child_proc, out[LIBFLOPS_W_CALLS]);
}

static void child_gemm_hook(void)
{
	if (g_nrunning < 16)
		g_running[g_nrunning++] = child_running();
}

static int shim_child(void)
{
	static const int n = 10, nrhs = 2, m12 = 12, four = 4, seven = 7, one = 1, query = -1, lwork = 64;
	static const double alpha = 1, beta = 0;
	static double a[144], b[20], c[16], work[64], tau[12], w[10], x[7];
	int ipiv[12], iwork[4], info = 99, bad = -1;
	struct libflops_region *r = libflops_region_attach();

	CHILD_CHECK(r != NULL);
	g_child_proc = r ? libflops_proc_find(r, (int32_t)getpid()) : NULL;
	CHILD_CHECK(g_child_proc != NULL);
	if (!g_child_proc)
		return child_failed;
	fake_gemm_hook = child_gemm_hook;
	/* a BLAS call of the program's: counted */
	dgemm_("N", "N", &four, &four, &four, &alpha, a, &four, a, &four, &beta, c, &four, 1, 1);
	/* dgesv_, which calls dgetrf_ and dgetrs_, which call dgemm_: one
	 * call counted, dgesv_'s */
	dgesv_(&n, &nrhs, a, &n, ipiv, b, &n, &info);
	CHILD_CHECK(info == 0);
	/* rejected (info < 0): no work, not counted */
	dgetrf_(&bad, &n, a, &n, ipiv, &info);
	CHILD_CHECK(info == -1);
	/* a workspace query, then the QR */
	dgeqrf_(&m12, &n, a, &m12, tau, work, &query, &info);
	CHILD_CHECK(info == 0 && work[0] == n);
	dgeqrf_(&m12, &n, a, &m12, tau, work, &lwork, &info);
	/* an eigensolver (FLOPs unknown): a query, then the call, whose own
	 * dgemm_ and dgeqrf_ calls are counted */
	dsyevd_("V", "L", &n, a, &n, w, work, &query, iwork, &one, &info, 1, 1);
	dsyevd_("V", "L", &n, a, &n, w, work, &lwork, iwork, &one, &info, 1, 1);
	CHILD_CHECK(info == 0);
	(void)ddot_(&seven, x, &one, x, &one);
	/* the fakes did run, nested calls included, and every dgemm_ went
	 * through the counting library, the nested ones too */
	CHILD_CHECK(fake_gemm_calls == 1 + 3 + 1 + 3 + 1);
	CHILD_CHECK(fake_gemm_via_shim == fake_gemm_calls);
	CHILD_CHECK(fake_lapack_calls == 3 + 1 + 2 + 2 + 1);
	/* begun and counted: the program's dgemm_ and dgesv_'s three (one
	 * outermost call running), dgeqrf_'s (its query not), the
	 * eigensolver's four (it and the GEMM) */
	CHILD_CHECK(g_nrunning == 9);
	for (int i = 0; i < g_nrunning; i++)
		CHILD_CHECK(g_running[i] == (i < 5 ? 1u : 2u));
	for (int i = 0; i < g_nrunning; i++)
		if (g_running[i] != (i < 5 ? 1u : 2u))
			fprintf(stderr, "shim child: dgemm_ %d: %llu running\n", i, (unsigned long long)g_running[i]);
	/* none now: the rejected call and the queries were taken back */
	CHILD_CHECK(child_running() == 0);
	fake_gemm_hook = NULL;
	return child_failed;
}

/* A region, as mfu-record makes it, and a child of @self run with
 * --@arg and the counting library preloaded; its pid, or -1. */
static pid_t run_shim_child(const char *self, const char *arg, struct libflops_region **rp, int *fdp)
{
	size_t size = libflops_region_size();
	struct libflops_region *r;
	int fd = memfd_create("test-libflops-shim", 0), status = -1;
	pid_t pid;

	*rp = NULL;
	*fdp = fd;
	CHECK(fd >= 0);
	if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
		CHECK(!"cannot make the region");
		return -1;
	}
	r = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(r != MAP_FAILED);
	if (r == MAP_FAILED)
		return -1;
	*rp = r;
	libflops_region_init(r);
	pid = fork();
	if (pid == 0) {
		char num[16], *pre = NULL, *asan = NULL;
		const char *old = getenv("LD_PRELOAD"), *opts = getenv("ASAN_OPTIONS");
		snprintf(num, sizeof(num), "%d", fd);
		setenv(LIBFLOPS_ENV_FD, num, 1);
		/* appended, as mfu-record does */
		if (old && *old && asprintf(&pre, "%s %s", old, LIBFLOPS_SO) < 0)
			_exit(127);
		setenv("LD_PRELOAD", pre ? pre : LIBFLOPS_SO, 1);
		/* a sanitizer build: its runtime is not first when the
		 * preloaded library comes before it */
		if (asprintf(&asan, "%s%sverify_asan_link_order=0", opts ? opts : "", opts && *opts ? ":" : "") < 0)
			_exit(127);
		setenv("ASAN_OPTIONS", asan, 1);
		execl(self, self, arg, (char *)NULL);
		_exit(127);
	}
	CHECK(pid > 0);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return pid;
}

static void test_shim(const char *self)
{
	size_t size = libflops_region_size();
	struct libflops_region *r;
	const struct libflops_proc *p;
	uint64_t out[LIBFLOPS_WORDS];
	int fd;
	pid_t pid = run_shim_child(self, "--shim-child", &r, &fd);

	if (!r)
		return;
	CHECK_EQ_INT(r->loaded, 1);
	p = libflops_proc_find(r, (int32_t)pid);
	CHECK(p != NULL);
	if (!p)
		goto out;
	CHECK_EQ_INT(p->active, 1);
	static const struct {
		int line;
		unsigned id;
		uint64_t calls, flops;
	} want[] = {
		/* the program's 4x4x4 GEMM and the eigensolver's three */
		{ __LINE__, LIBFLOPS_ID_dgemm_, 4, 4 * 128 },
		/* GETRF(10, 10) + GETRS(10, 2), LAWN 41: 1005 */
		{ __LINE__, LIBFLOPS_ID_dgesv_, 1, 1005 },
		{ __LINE__, LIBFLOPS_ID_dgetrf_, 0, 0 },
		{ __LINE__, LIBFLOPS_ID_dgetrs_, 0, 0 },
		/* the program's QR (12 x 10: 2000) and the eigensolver's (8 x 5: 405) */
		{ __LINE__, LIBFLOPS_ID_dgeqrf_, 2, 2000 + 405 },
		/* one call, its FLOPs unknown (the counter's 0 is not a count) */
		{ __LINE__, LIBFLOPS_ID_dsyevd_, 1, 0 },
		{ __LINE__, LIBFLOPS_ID_ddot_, 1, 14 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		CHECK_ROW(p->f[want[i].id].calls == want[i].calls, want[i].line);
		CHECK_ROW(p->f[want[i].id].flops == want[i].flops, want[i].line);
		if (p->f[want[i].id].calls != want[i].calls || p->f[want[i].id].flops != want[i].flops)
			fprintf(stderr, "  %s: %llu calls, %llu FLOPs\n", libflops_funcs[want[i].id].name,
				(unsigned long long)p->f[want[i].id].calls, (unsigned long long)p->f[want[i].id].flops);
	}
	/* listed in the order of their first counted call */
	CHECK_EQ_INT(p->nlist, 5);
	CHECK_EQ_INT(p->list[0], LIBFLOPS_ID_dgemm_ + 1);
	CHECK_EQ_INT(p->list[1], LIBFLOPS_ID_dgesv_ + 1);
	CHECK_EQ_INT(p->list[2], LIBFLOPS_ID_dgeqrf_ + 1);
	CHECK_EQ_INT(p->list[3], LIBFLOPS_ID_dsyevd_ + 1);
	CHECK_EQ_INT(p->list[4], LIBFLOPS_ID_ddot_ + 1);
	/* what a marker reads: 9 calls, 1 of unknown FLOPs, the rest's FLOPs */
	libflops_sum(p, out);
	CHECK_EQ_INT(out[LIBFLOPS_W_CALLS], 9);
	CHECK_EQ_INT(out[LIBFLOPS_W_UNKNOWN], 1);
	CHECK_EQ_INT(out[LIBFLOPS_W_FLOPS + LIBFLOPS_FP64], 512 + 1005 + 2405 + 14);
	/* every outermost call begun was counted or taken back: none running */
	CHECK_EQ_INT(p->begun, 9);
	CHECK_EQ_INT(libflops_running(p, out[LIBFLOPS_W_CALLS]), 0);
out:
	munmap(r, size);
	close(fd);
}

/* ---- oneDNN primitives through the counting library: the child
 * (--shim-child-dnnl) executes the stand-in's primitives ---- */

static struct fake_dnnl_prim prims[10];

static void set_md(struct fake_dnnl_md *md, int dt, int n, const int64_t *d)
{
	md->ndims = n;
	md->data_type = dt;
	for (int i = 0; i < n; i++)
		md->dims[i] = d[i];
}

enum { F16 = 1, BF16 = 2, F32 = 3, S8 = 5 };
/* a convolution with groups, stride and padding (dnnl.c's): 34560 FLOPs */
static const int64_t conv_src[] = { 2, 6, 10, 12 }, conv_wei[] = { 2, 4, 3, 3, 3 }, conv_dst[] = { 2, 8, 5, 8 };

static void set_conv(struct fake_dnnl_prim *p, int prop, int dt)
{
	p->kind = 5; /* dnnl_convolution */
	p->prop = prop;
	set_md(&p->md[0], dt, 4, conv_src);
	set_md(&p->md[1], dt, 5, conv_wei);
	set_md(&p->md[2], dt, 4, conv_dst);
}

static void exec(struct fake_dnnl_prim *p, int nargs, const struct fake_dnnl_arg *args, int want)
{
	CHILD_CHECK(dnnl_primitive_execute(p, NULL, nargs, args) == want);
}

static int shim_child_dnnl(int major)
{
	static const int64_t ip_src[] = { 4, 3, 5, 5 }, ip_wei[] = { 7, 3, 5, 5 }, ip_dst[] = { 4, 7 };
	static const int64_t rt_src[] = { INT64_MIN, 6 }, mm_wei[] = { 6, 4 }, rt_dst[] = { INT64_MIN, 4 };
	static const int64_t mm_src[] = { 9, 6 }, mm_dst[] = { 9, 4 };
	static const int64_t small[] = { 1, 2, 4, 4 }, small_wei[] = { 2, 2, 3, 3 };
	static struct fake_dnnl_md args_md[3];
	struct fake_dnnl_prim *a = &prims[0];

	fake_dnnl_major = major;
	if (major != 2) {
		/* a oneDNN of another major version: its descriptors are not
		 * read (another ABI), the execution counts as "other" */
		set_conv(a, 0, F32);
		exec(a, 0, NULL, 0);
		CHILD_CHECK(fake_dnnl_queries == 0 && fake_dnnl_execs == 1);
		return child_failed;
	}
	/* executed three times: its descriptor queried once */
	set_conv(a, 0, F32);
	for (int i = 0; i < 3; i++)
		exec(a, 0, NULL, 0);
	CHILD_CHECK(fake_dnnl_queries == 1);
	/* destroyed, and another primitive at the same address: an inner
	 * product, 2 x 7 x 75 x 4 */
	CHILD_CHECK(dnnl_primitive_destroy(a) == 0);
	memset(a, 0, sizeof(*a));
	a->kind = 13; /* dnnl_inner_product */
	set_md(&a->md[0], F32, 4, ip_src);
	set_md(&a->md[1], F32, 4, ip_wei);
	set_md(&a->md[2], F32, 2, ip_dst);
	exec(a, 0, NULL, 0);
	CHILD_CHECK(fake_dnnl_queries == 2);
	/* backward data and backward weights of the convolution */
	set_conv(&prims[1], 1, F32);
	exec(&prims[1], 0, NULL, 0);
	set_conv(&prims[2], 2, F32);
	exec(&prims[2], 0, NULL, 0);
	/* a matmul with a run-time M: the FLOPs from the arguments' shapes,
	 * at each execution (9 x 6 times 6 x 4: 432), the descriptor once */
	prims[3].kind = 18; /* dnnl_matmul */
	set_md(&prims[3].md[0], F32, 2, rt_src);
	set_md(&prims[3].md[1], F32, 2, mm_wei);
	set_md(&prims[3].md[2], F32, 2, rt_dst);
	set_md(&args_md[0], F32, 2, mm_src);
	set_md(&args_md[1], F32, 2, mm_wei);
	set_md(&args_md[2], F32, 2, mm_dst);
	const struct fake_dnnl_arg args[] = { { 1, &args_md[0] }, { 33, &args_md[1] }, { 17, &args_md[2] } };
	exec(&prims[3], 3, args, 0);
	exec(&prims[3], 3, args, 0);
	/* pooling: FLOPs not counted (unknown); a reorder: no arithmetic */
	prims[4].kind = 9;
	exec(&prims[4], 0, NULL, 0);
	prims[5].kind = 1;
	exec(&prims[5], 0, NULL, 0);
	/* an execution that fails: not counted */
	set_conv(&prims[6], 0, F32);
	prims[6].fail = 2; /* dnnl_invalid_arguments */
	exec(&prims[6], 0, NULL, 2);
	/* bf16: 2 x 36 x 1 x 16 */
	prims[7].kind = 5;
	set_md(&prims[7].md[0], BF16, 4, small);
	set_md(&prims[7].md[1], BF16, 4, small_wei);
	set_md(&prims[7].md[2], BF16, 4, small);
	exec(&prims[7], 0, NULL, 0);
	/* int8 backward data (no such thing counted) and an unknown kind:
	 * "other", FLOPs unknown */
	set_conv(&prims[8], 1, S8);
	exec(&prims[8], 0, NULL, 0);
	prims[9].kind = 99;
	exec(&prims[9], 0, NULL, 0);
	/* the exported note function (mfu.py's count mode) */
	int (*note)(const char *, int) = (int (*)(const char *, int))dlsym(RTLD_DEFAULT, "mfu_libflops_note");
	CHILD_CHECK(note && note("a note from the program", 1) == 0);
	CHILD_CHECK(fake_dnnl_execs == 14);
	CHILD_CHECK(fake_dnnl_queries == 11);
	CHILD_CHECK(fake_dnnl_destroyed == 1);
	return child_failed;
}

static void test_shim_dnnl(const char *self)
{
	static const struct {
		int line;
		unsigned id;
		uint64_t calls, flops;
	} want[] = {
		{ __LINE__, LIBFLOPS_ID_dnnl_conv_fwd_f32, 3, 3 * 34560 },
		{ __LINE__, LIBFLOPS_ID_dnnl_ip_fwd_f32, 1, 4200 },
		{ __LINE__, LIBFLOPS_ID_dnnl_conv_bwd_data_f32, 1, 34560 },
		{ __LINE__, LIBFLOPS_ID_dnnl_conv_bwd_weights_f32, 1, 34560 },
		{ __LINE__, LIBFLOPS_ID_dnnl_matmul_f32, 2, 2 * 432 },
		{ __LINE__, LIBFLOPS_ID_dnnl_pooling, 1, 0 },
		{ __LINE__, LIBFLOPS_ID_dnnl_reorder, 1, 0 },
		{ __LINE__, LIBFLOPS_ID_dnnl_conv_fwd_bf16, 1, 1152 },
		{ __LINE__, LIBFLOPS_ID_dnnl_other, 2, 0 },
	};
	size_t size = libflops_region_size();
	struct libflops_region *r;
	const struct libflops_proc *p;
	uint64_t out[LIBFLOPS_WORDS];
	int fd;
	pid_t pid = run_shim_child(self, "--shim-child-dnnl", &r, &fd);

	if (!r)
		return;
	p = libflops_proc_find(r, (int32_t)pid);
	CHECK(p != NULL);
	if (p) {
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			CHECK_ROW(p->f[want[i].id].calls == want[i].calls, want[i].line);
			CHECK_ROW(p->f[want[i].id].flops == want[i].flops, want[i].line);
			if (p->f[want[i].id].calls != want[i].calls || p->f[want[i].id].flops != want[i].flops)
				fprintf(stderr, "  %s: %llu calls, %llu FLOPs\n", libflops_funcs[want[i].id].name,
					(unsigned long long)p->f[want[i].id].calls,
					(unsigned long long)p->f[want[i].id].flops);
		}
		CHECK_EQ_INT(p->nlist, sizeof(want) / sizeof(want[0]));
		libflops_sum(p, out);
		CHECK_EQ_INT(out[LIBFLOPS_W_CALLS], 13);
		CHECK_EQ_INT(out[LIBFLOPS_W_UNKNOWN], 3);
		CHECK_EQ_INT(out[LIBFLOPS_W_FLOPS + LIBFLOPS_FP32], 3 * 34560 + 4200 + 2 * 34560 + 864);
		CHECK_EQ_INT(out[LIBFLOPS_W_FLOPS + LIBFLOPS_BF16], 1152);
	}
	char text[LIBFLOPS_NOTE_LEN];
	unsigned flags = 0;
	CHECK_EQ_INT(libflops_note_read(r, 0, text, sizeof(text), &flags), 0);
	CHECK_STR(text, "a note from the program");
	CHECK_EQ_INT(flags, LIBFLOPS_NOTE_MISSING);
	CHECK_EQ_INT(r->notes[0].pid, pid);
	munmap(r, size);
	close(fd);

	/* oneDNN 3: one call of unknown FLOPs */
	pid = run_shim_child(self, "--shim-child-dnnl3", &r, &fd);
	if (!r)
		return;
	p = libflops_proc_find(r, (int32_t)pid);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ_INT(p->f[LIBFLOPS_ID_dnnl_other].calls, 1);
		CHECK_EQ_INT(p->f[LIBFLOPS_ID_dnnl_conv_fwd_f32].calls, 0);
		libflops_sum(p, out);
		CHECK_EQ_INT(out[LIBFLOPS_W_CALLS], 1);
		CHECK_EQ_INT(out[LIBFLOPS_W_UNKNOWN], 1);
	}
	munmap(r, size);
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--shim-child") == 0)
		return shim_child();
	if (argc > 1 && strcmp(argv[1], "--shim-child-dnnl") == 0)
		return shim_child_dnnl(2);
	if (argc > 1 && strcmp(argv[1], "--shim-child-dnnl3") == 0)
		return shim_child_dnnl(3);
	test_layout();
	test_count();
	test_dnnl_count();
	test_table();
	test_check();
	test_notes();
	test_attach();
	test_proc_for();
	test_concurrent_claims();
	test_sum();
	test_concurrent_adds();
	test_snapshot();
	test_snapshot_race();
	test_shim(argv[0]);
	test_shim_dnnl(argv[0]);
	return check_status();
}
