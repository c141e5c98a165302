/* Library-call FLOPs (libflops.h): every operation family's count against
 * hand-computed numbers, the region's layout pinned (it crosses a process
 * boundary: recorder, counting library, libmfu), process slots, sums,
 * snapshots, and the function table the three share. */
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
#include "libflops.h"
#include "libflops_list.h"

static void test_layout(void)
{
	/* Changing any of these needs LIBFLOPS_VERSION + 1 (appending a
	 * function keeps the ids but changes nfuncs, which the check compares). */
	CHECK_EQ_INT(LIBFLOPS_VERSION, 1);
	CHECK(LIBFLOPS_MAGIC == 0x73706f6c66624c6dULL);
	CHECK(memcmp(&(uint64_t){ LIBFLOPS_MAGIC }, "mLbflops", 8) == 0); /* little-endian bytes */
	CHECK_EQ_INT(LIBFLOPS_MAX_FUNCS, 128);
	CHECK_EQ_INT(LIBFLOPS_MAX_PROCS, 64);
	CHECK_EQ_INT(LIBFLOPS_NSNAP, 4096);
	CHECK_EQ_INT(LIBFLOPS_WORDS, 6);
	CHECK_EQ_INT(sizeof(struct libflops_counter), 16);
	CHECK_EQ_INT(offsetof(struct libflops_counter, calls), 0);
	CHECK_EQ_INT(offsetof(struct libflops_counter, flops), 8);

	CHECK_EQ_INT(sizeof(struct libflops_proc), 16 + 128 * 16);
	CHECK_EQ_INT(offsetof(struct libflops_proc, pid), 0);
	CHECK_EQ_INT(offsetof(struct libflops_proc, active), 4);
	CHECK_EQ_INT(offsetof(struct libflops_proc, nused), 8);
	CHECK_EQ_INT(offsetof(struct libflops_proc, f), 16);

	CHECK_EQ_INT(sizeof(struct libflops_snap), 16 + 128 * 16);
	CHECK_EQ_INT(offsetof(struct libflops_snap, seq), 0);
	CHECK_EQ_INT(offsetof(struct libflops_snap, pid), 8);
	CHECK_EQ_INT(offsetof(struct libflops_snap, pad), 12);
	CHECK_EQ_INT(offsetof(struct libflops_snap, f), 16);

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
	/* the writers' snapshot head on its own cache line */
	CHECK_EQ_INT(offsetof(struct libflops_region, snap_head), 64);
	CHECK_EQ_INT(offsetof(struct libflops_region, procs), 128);
	CHECK_EQ_INT(offsetof(struct libflops_region, snaps), 128 + 64 * 2064);
	CHECK_EQ_INT(sizeof(struct libflops_region), 128 + 64 * 2064 + 4096 * 2064);
	CHECK_EQ_INT(libflops_region_size(), sizeof(struct libflops_region));

	/* the precision order is the marker record's lib[] words */
	CHECK_EQ_INT(LIBFLOPS_FP64, 0);
	CHECK_EQ_INT(LIBFLOPS_FP32, 1);
	CHECK_EQ_INT(LIBFLOPS_BF16, 2);
	CHECK_EQ_INT(LIBFLOPS_FP16, 3);
	CHECK_EQ_INT(LIBFLOPS_INT8, 4);
	CHECK_EQ_INT(LIBFLOPS_NPREC, 5);
	/* ids are indexes of the shared counters: only appending keeps them */
	CHECK_EQ_INT(libflops_nfuncs, 120);
	CHECK_EQ_INT(LIBFLOPS_NIDS, 120);
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
	/* an unknown operation */
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

/* Every name once; a CBLAS name and its Fortran name (cblas_dgemm,
 * dgemm_) count the same way; the precision and complexity follow the
 * BLAS prefix (s, d, c, z); the ids are the table's indexes. */
static void test_table(void)
{
	unsigned pairs = 0, ndnnl = 0;

	CHECK(libflops_nfuncs <= LIBFLOPS_MAX_FUNCS);
	for (unsigned i = 0; i < libflops_nfuncs; i++) {
		const struct libflops_func *f = &libflops_funcs[i];
		const char *base = f->name;
		char fortran[64];

		CHECK(f->name && *f->name);
		for (unsigned j = 0; j < i; j++)
			if (strcmp(libflops_funcs[j].name, f->name) == 0) {
				CHECK(!"a name appears twice");
				fprintf(stderr, "  %s at %u and %u\n", f->name, j, i);
			}
		CHECK(f->op <= LIBFLOPS_GER);
		CHECK(f->prec < LIBFLOPS_NPREC);
		if (strncmp(f->name, "dnnl_", 5) == 0) {
			ndnnl++;
			CHECK(f->op == LIBFLOPS_GEMM && !f->cplx);
			continue;
		}
		if (strncmp(base, "cblas_", 6) == 0)
			base += 6;
		/* s and c are single precision, d and z double; c and z complex */
		switch (base[0]) {
		case 's': CHECK(f->prec == LIBFLOPS_FP32 && !f->cplx); break;
		case 'd': CHECK(f->prec == LIBFLOPS_FP64 && !f->cplx); break;
		case 'c': CHECK(f->prec == LIBFLOPS_FP32 && f->cplx); break;
		case 'z': CHECK(f->prec == LIBFLOPS_FP64 && f->cplx); break;
		default: CHECK(!"a BLAS name starts with s, d, c or z"); fprintf(stderr, "  %s\n", f->name);
		}
		if (base == f->name) {
			size_t len = strlen(f->name);
			CHECK(len > 1 && f->name[len - 1] == '_'); /* a Fortran name */
			continue;
		}
		/* the Fortran twin of a CBLAS name */
		snprintf(fortran, sizeof(fortran), "%s_", base);
		unsigned j;
		for (j = 0; j < libflops_nfuncs; j++)
			if (strcmp(libflops_funcs[j].name, fortran) == 0)
				break;
		CHECK(j < libflops_nfuncs);
		if (j == libflops_nfuncs) {
			fprintf(stderr, "  no %s for %s\n", fortran, f->name);
			continue;
		}
		pairs++;
		CHECK(libflops_funcs[j].op == f->op);
		CHECK(libflops_funcs[j].prec == f->prec);
		CHECK(libflops_funcs[j].cplx == f->cplx);
	}
	/* every BLAS name is in a pair: (120 - 4 oneDNN) / 2 */
	CHECK_EQ_INT(pairs, 58);
	CHECK_EQ_INT(ndnnl, 4);

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
	LIBFLOPS_LIST(ID_MATCHES)
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

static void test_check(void)
{
	struct libflops_region *r = new_region();
	size_t size = libflops_region_size();

	CHECK(r->magic == LIBFLOPS_MAGIC);
	CHECK_EQ_INT(r->version, LIBFLOPS_VERSION);
	CHECK_EQ_INT(r->header_size, 128);
	CHECK_EQ_INT(r->nfuncs, 120);
	CHECK_EQ_INT(r->max_procs, 64);
	CHECK_EQ_INT(r->nsnap, 4096);
	CHECK_EQ_INT(r->proc_size, 2064);
	CHECK_EQ_INT(r->snap_size, 2064);
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
		offsetof(struct libflops_region, snap_size),
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
	old->nused = 5;
	old->f[LIBFLOPS_ID_cblas_dgemm].calls = 9;
	old->f[LIBFLOPS_ID_cblas_dgemm].flops = 900;
	old->f[LIBFLOPS_NIDS - 1].calls = 1;
	int32_t newcomer = me + 1000;
	q = libflops_proc_for(r, newcomer);
	CHECK(q == old);
	CHECK_EQ_INT(old->pid, newcomer);
	CHECK_EQ_INT(old->active, 0);
	CHECK_EQ_INT(old->nused, 0);
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
	p->f[LIBFLOPS_ID_cblas_dgemm] = (struct libflops_counter){ 2, 100 };
	p->f[LIBFLOPS_ID_zgemm_] = (struct libflops_counter){ 1, 8 };         /* complex fp64 */
	p->f[LIBFLOPS_ID_cblas_sgemm] = (struct libflops_counter){ 1, 10 };
	p->f[LIBFLOPS_ID_cgemv_] = (struct libflops_counter){ 4, 1000 };       /* complex fp32 */
	p->f[LIBFLOPS_ID_dnnl_gemm_bf16bf16f32] = (struct libflops_counter){ 1, 7 };
	p->f[LIBFLOPS_ID_dnnl_gemm_u8s8s32] = (struct libflops_counter){ 3, 30 };
	p->f[LIBFLOPS_ID_dnnl_gemm_s8s8s32] = (struct libflops_counter){ 1, 5 };
	/* the sum stops at nused (the counting library raises it as it counts) */
	libflops_sum(p, out);
	CHECK_EQ_INT(out[0], 0);
	p->nused = LIBFLOPS_ID_cblas_sgemm + 1;
	libflops_sum(p, out);
	CHECK_EQ_INT(out[0], 1);
	CHECK_EQ_INT(out[1 + LIBFLOPS_FP32], 10);
	p->nused = LIBFLOPS_ID_dnnl_gemm_s8s8s32 + 1;
	libflops_sum(p, out);
	CHECK_EQ_INT(out[0], 2 + 1 + 1 + 4 + 1 + 3 + 1);
	CHECK_EQ_INT(out[1 + LIBFLOPS_FP64], 108);
	CHECK_EQ_INT(out[1 + LIBFLOPS_FP32], 1010);
	CHECK_EQ_INT(out[1 + LIBFLOPS_BF16], 7);
	CHECK_EQ_INT(out[1 + LIBFLOPS_FP16], 0);
	CHECK_EQ_INT(out[1 + LIBFLOPS_INT8], 35);
	free(r);
}

static void fill(struct libflops_proc *p, uint64_t v)
{
	for (unsigned f = 0; f < LIBFLOPS_NIDS; f++)
		p->f[f] = (struct libflops_counter){ v + f, (v + f) * 1000 };
}

static int same_table(const struct libflops_snap *s, uint64_t v)
{
	for (unsigned f = 0; f < LIBFLOPS_NIDS; f++)
		if (s->f[f].calls != v + f || s->f[f].flops != (v + f) * 1000)
			return 0;
	return 1;
}

static void test_snapshot(void)
{
	struct libflops_region *r = new_region();
	struct libflops_proc *p = libflops_proc_for(r, 4242);
	struct libflops_snap s;
	uint64_t first, id;

	CHECK_EQ_INT(libflops_snapshot_read(r, 0, &s), -ESTALE);
	CHECK_EQ_INT(libflops_snapshot_read(r, 1, &s), -ESTALE); /* not written yet */
	fill(p, 1);
	first = libflops_snapshot(r, p);
	CHECK_EQ_INT(first, 1);
	fill(p, 50); /* the counters go on: the copy keeps the boundary's */
	memset(&s, 0, sizeof(s));
	CHECK_EQ_INT(libflops_snapshot_read(r, first, &s), 0);
	CHECK_EQ_INT(s.seq, first);
	CHECK_EQ_INT(s.pid, 4242);
	CHECK(same_table(&s, 1));
	id = libflops_snapshot(r, p);
	CHECK_EQ_INT(id, 2);
	CHECK_EQ_INT(libflops_snapshot_read(r, id, &s), 0);
	CHECK(same_table(&s, 50));
	CHECK_EQ_INT(libflops_snapshot_read(r, first, &s), 0); /* still there */
	CHECK_EQ_INT(libflops_snapshot_read(r, 3, &s), -ESTALE);

	/* a copy being written (seq 0) is not read */
	r->snaps[1].seq = 0;
	CHECK_EQ_INT(libflops_snapshot_read(r, 2, &s), -ESTALE);
	r->snaps[1].seq = 2;
	CHECK_EQ_INT(libflops_snapshot_read(r, 2, &s), 0);

	/* NSNAP - 2 more: the ring is exactly full, the first still readable */
	for (int i = 0; i < LIBFLOPS_NSNAP - 2; i++)
		id = libflops_snapshot(r, p);
	CHECK_EQ_INT(id, LIBFLOPS_NSNAP);
	CHECK_EQ_INT(libflops_snapshot_read(r, first, &s), 0);
	CHECK(same_table(&s, 1));
	/* one more overwrites it */
	fill(p, 7);
	id = libflops_snapshot(r, p);
	CHECK_EQ_INT(id, LIBFLOPS_NSNAP + 1);
	CHECK_EQ_INT(libflops_snapshot_read(r, first, &s), -ESTALE);
	CHECK_EQ_INT(libflops_snapshot_read(r, 2, &s), 0);
	CHECK_EQ_INT(libflops_snapshot_read(r, id, &s), 0);
	CHECK(same_table(&s, 7));
	/* LIBFLOPS_NSNAP more after any snapshot: gone */
	for (int i = 0; i < LIBFLOPS_NSNAP; i++)
		libflops_snapshot(r, p);
	CHECK_EQ_INT(libflops_snapshot_read(r, id, &s), -ESTALE);
	CHECK_EQ_INT(libflops_snapshot_read(r, id + LIBFLOPS_NSNAP, &s), 0);
	CHECK_EQ_INT(r->snap_head, 2 * LIBFLOPS_NSNAP + 1);
	free(r);
}

/* The seqlock: a reader racing the writers that overwrite its snapshot gets
 * either the whole copy it asked for or -ESTALE, never a mix. */
#define RACE_SNAPS 200000
static struct libflops_region *g_race;
static int g_race_done;

static void *race_writer(void *arg)
{
	struct libflops_proc *p = arg;
	for (uint64_t v = 1; v <= RACE_SNAPS; v++) {
		fill(p, v * 1000);
		libflops_snapshot(g_race, p);
	}
	__atomic_store_n(&g_race_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_snapshot_race(void)
{
	struct libflops_snap s;
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
		if (rc != 0 || s.seq != id || s.pid != 77 || s.f[0].calls % 1000 != 0 || !same_table(&s, s.f[0].calls))
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

int main(void)
{
	test_layout();
	test_count();
	test_table();
	test_check();
	test_attach();
	test_proc_for();
	test_concurrent_claims();
	test_sum();
	test_snapshot();
	test_snapshot_race();
	return check_status();
}
