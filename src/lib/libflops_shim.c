/*
 * libmfu-libflops.so: counts the FLOPs of BLAS and oneDNN calls (libflops.h).
 *
 * mfu-record puts it in the target's LD_PRELOAD. Its functions then come
 * first in every symbol lookup, the lookups of libraries that a Python
 * extension module dlopen'ed with RTLD_LOCAL included (the global scope is
 * searched before an object's local scope). Each wrapper finds the real
 * function, calls it, and then adds the call and its FLOPs (computed from
 * the arguments) to this process's counters in the region mfu-record
 * shares with it. Nothing else changes: the arguments and the result pass
 * through untouched.
 *
 * Finding the real function: the next definition after this library in the
 * global scope (dlsym(RTLD_NEXT)), which is the one the caller would have
 * bound to. When there is none, the library is in some object's local scope
 * only: the definition the caller's own object sees (its dependency tree),
 * then any loaded object's, cached per call site.
 *
 * A call made from inside a counted call (a reference CBLAS whose
 * cblas_dgemm calls dgemm_) is forwarded but not counted again: a per-thread
 * depth says whether a counted call is running.
 */
#include "libflops.h"
#include "libflops_list.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static struct libflops_region *g_region;
static struct libflops_proc *g_proc;  /* this process's counters, NULL: count nothing */
static void *g_self_base;             /* this library's load address */
static void *g_next[LIBFLOPS_NIDS];   /* the real functions from RTLD_NEXT */
static uint8_t g_next_done[LIBFLOPS_NIDS];
static __thread int t_depth __attribute__((tls_model("initial-exec")));
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* Call sites whose function is in a local scope only: (return address, id)
 * -> function. Entries are written once, under g_lock, fn last. */
#define NSITES 512
static struct site {
	void *ra;
	unsigned id;
	void *fn;
} g_sites[NSITES];

static void claim_proc(void)
{
	struct libflops_proc *p = g_region ? libflops_proc_for(g_region, (int32_t)getpid()) : NULL;
	if (p)
		__atomic_store_n(&p->active, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&g_proc, p, __ATOMIC_RELEASE);
}

/* A forked child is another process: its own counters. Its copy of the
 * lock may have been held by a thread of the parent that it does not have. */
static void after_fork_child(void)
{
	pthread_mutex_init(&g_lock, NULL);
	claim_proc();
}

__attribute__((constructor)) static void libflops_init(void)
{
	Dl_info info;
	if (dladdr((void *)libflops_init, &info))
		g_self_base = info.dli_fbase;
	g_region = libflops_region_attach();
	if (g_region)
		__atomic_fetch_add(&g_region->loaded, 1, __ATOMIC_RELAXED);
	claim_proc();
	pthread_atfork(NULL, NULL, after_fork_child);
}

static int ours(void *fn)
{
	Dl_info info;
	return dladdr(fn, &info) && info.dli_fbase == g_self_base;
}

/* @name in the dependency tree of the object called @file ("" for the
 * main program, whose scope is the global one: no use here). */
static void *lookup_in(const char *file, const char *name)
{
	void *h, *fn = NULL;

	if (!file || !*file)
		return NULL;
	h = dlopen(file, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return NULL;
	fn = dlsym(h, name);
	dlclose(h);
	return fn && !ours(fn) ? fn : NULL;
}

struct names {
	char buf[64 * 1024];
	size_t used;
	const char *name[512];
	int n;
};

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct names *ns = arg;
	size_t len = strlen(info->dlpi_name);
	(void)size;
	if (!len || (void *)info->dlpi_addr == g_self_base || ns->n == 512 ||
	    ns->used + len + 1 > sizeof(ns->buf))
		return 0;
	memcpy(ns->buf + ns->used, info->dlpi_name, len + 1);
	ns->name[ns->n++] = ns->buf + ns->used;
	ns->used += len + 1;
	return 0;
}

/* The real @id for a call from @ra when RTLD_NEXT has none. g_lock held. */
static void *lookup_local(unsigned id, void *ra)
{
	static struct names ns; /* under g_lock */
	const char *name = libflops_funcs[id].name;
	Dl_info info;
	void *fn = NULL;

	if (dladdr(ra, &info))
		fn = lookup_in(info.dli_fname, name);
	if (fn)
		return fn;
	/* dlopen must not run inside dl_iterate_phdr's callback: names first */
	ns.used = 0;
	ns.n = 0;
	dl_iterate_phdr(collect, &ns);
	for (int i = 0; i < ns.n && !fn; i++)
		fn = lookup_in(ns.name[i], name);
	return fn;
}

static size_t site_hash(void *ra, unsigned id)
{
	uintptr_t h = (uintptr_t)ra * 0x9e3779b97f4a7c15ull + id;
	return (size_t)(h >> 7) & (NSITES - 1);
}

static __attribute__((noreturn)) void no_real(unsigned id)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg),
			 "mfu: %s was called, but no loaded library defines it (mfu-record's "
			 "libmfu-libflops.so only counts it); aborting\n",
			 libflops_funcs[id].name);
	if (n > 0)
		(void)!write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
	abort();
}

static __attribute__((noinline)) void *resolve(unsigned id, void *ra)
{
	void *fn;
	size_t h = site_hash(ra, id);

	for (size_t i = 0; i < NSITES; i++) {
		struct site *s = &g_sites[(h + i) & (NSITES - 1)];
		void *f = __atomic_load_n(&s->fn, __ATOMIC_ACQUIRE);
		if (!f)
			break;
		if (s->ra == ra && s->id == id)
			return f;
	}
	pthread_mutex_lock(&g_lock);
	if (!g_next_done[id]) {
		fn = dlsym(RTLD_NEXT, libflops_funcs[id].name);
		g_next_done[id] = 1;
		if (fn && !ours(fn)) {
			__atomic_store_n(&g_next[id], fn, __ATOMIC_RELEASE);
			pthread_mutex_unlock(&g_lock);
			return fn;
		}
	}
	fn = lookup_local(id, ra);
	if (fn) {
		for (size_t i = 0; i < NSITES; i++) {
			struct site *s = &g_sites[(h + i) & (NSITES - 1)];
			if (!s->fn) {
				s->ra = ra;
				s->id = id;
				__atomic_store_n(&s->fn, fn, __ATOMIC_RELEASE);
				break;
			}
		}
	}
	pthread_mutex_unlock(&g_lock);
	if (!fn)
		no_real(id);
	return fn;
}

static inline void *real(unsigned id, void *ra)
{
	void *fn = __atomic_load_n(&g_next[id], __ATOMIC_ACQUIRE);
	return fn ? fn : resolve(id, ra);
}

static inline void count(unsigned id, uint64_t flops)
{
	struct libflops_proc *p = __atomic_load_n(&g_proc, __ATOMIC_RELAXED);
	if (!p)
		return;
	__atomic_fetch_add(&p->f[id].calls, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&p->f[id].flops, flops, __ATOMIC_RELAXED);
	/* after the counts (release): a reader that sees the new bound sees
	 * them; once per function and process in practice */
	if (__atomic_load_n(&p->nused, __ATOMIC_RELAXED) <= id) {
		uint64_t n = __atomic_load_n(&p->nused, __ATOMIC_RELAXED);
		while (n <= id && !__atomic_compare_exchange_n(&p->nused, &n, (uint64_t)id + 1, 1, __ATOMIC_RELEASE,
							       __ATOMIC_RELAXED))
			;
	}
}

/* A wrapper: the real function, called with the same arguments; then the
 * call is counted unless it ran inside another counted call. The FLOPs are
 * computed from the arguments before the call (the inputs, as given). */
#define WRAP_VOID(sym, params, args, flops)                                        \
	EXPORT void sym params;                                                    \
	void sym params                                                            \
	{                                                                          \
		typedef void(*fn_t) params;                                        \
		fn_t fn = (fn_t)real(LIBFLOPS_ID_##sym, __builtin_return_address(0)); \
		uint64_t n_ = (flops);                                             \
		t_depth++;                                                         \
		fn args;                                                           \
		if (--t_depth == 0)                                                \
			count(LIBFLOPS_ID_##sym, n_);                              \
	}

#define WRAP_INT(sym, params, args, flops)                                         \
	EXPORT int sym params;                                                     \
	int sym params                                                             \
	{                                                                          \
		typedef int(*fn_t) params;                                         \
		fn_t fn = (fn_t)real(LIBFLOPS_ID_##sym, __builtin_return_address(0)); \
		uint64_t n_ = (flops);                                             \
		t_depth++;                                                         \
		int rc_ = fn args;                                                 \
		if (--t_depth == 0 && rc_ == 0)                                    \
			count(LIBFLOPS_ID_##sym, n_);                              \
		return rc_;                                                        \
	}

#define CBLAS_LEFT 141 /* CblasLeft; CblasRight is 142 */
#define F_LEFT(side) (*(side) == 'L' || *(side) == 'l')
#define C(op, cplx, left, m, n, k) libflops_count(LIBFLOPS_##op, cplx, left, m, n, k)
typedef const void *cptr;
typedef const int *fint;
typedef const char *fchr;

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

/* ---- oneDNN: row-major, dimensions by value (dnnl_dim_t is int64_t); a
 * call that returns an error status did no work and is not counted ---- */

typedef int64_t ddim;
WRAP_INT(dnnl_sgemm, (char ta, char tb, ddim m, ddim n, ddim k, float al, cptr a, ddim lda, cptr b, ddim ldb,
		      float be, void *c, ddim ldc),
	 (ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc), C(GEMM, 0, 0, m, n, k))
WRAP_INT(dnnl_gemm_bf16bf16f32, (char ta, char tb, ddim m, ddim n, ddim k, float al, cptr a, ddim lda, cptr b,
				 ddim ldb, float be, void *c, ddim ldc),
	 (ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc), C(GEMM, 0, 0, m, n, k))
WRAP_INT(dnnl_gemm_u8s8s32, (char ta, char tb, char oc, ddim m, ddim n, ddim k, float al, cptr a, ddim lda,
			     uint8_t ao, cptr b, ddim ldb, int8_t bo, float be, void *c, ddim ldc, cptr co),
	 (ta, tb, oc, m, n, k, al, a, lda, ao, b, ldb, bo, be, c, ldc, co), C(GEMM, 0, 0, m, n, k))
WRAP_INT(dnnl_gemm_s8s8s32, (char ta, char tb, char oc, ddim m, ddim n, ddim k, float al, cptr a, ddim lda,
			     int8_t ao, cptr b, ddim ldb, int8_t bo, float be, void *c, ddim ldc, cptr co),
	 (ta, tb, oc, m, n, k, al, a, lda, ao, b, ldb, bo, be, c, ldc, co), C(GEMM, 0, 0, m, n, k))

/* Every id has its wrapper: a function added to the list without one is a
 * build error here (the table and the wrappers must not drift apart). */
#define LIBFLOPS_CHECK_ENTRY(sym, op, prec, cplx) (void)&sym;
__attribute__((unused)) static void all_wrapped(void)
{
	LIBFLOPS_LIST(LIBFLOPS_CHECK_ENTRY)
}
