/*
 * libmfu-libflops.so: counts the FLOPs of BLAS, LAPACK and oneDNN calls
 * (libflops.h).
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
 * cblas_dgemm calls dgemm_, a reference LAPACK whose dgesv_ calls dgetrf_,
 * which calls dgemm_) is forwarded but not counted again: a per-thread
 * depth says whether a counted call is running. A function whose FLOPs are
 * unknown (an eigensolver) is counted as a call and leaves the depth alone,
 * so that the calls it makes count: the part of its work that can be.
 *
 * A wrapper costs nothing until its function is called: the real one is
 * looked up at the first call (a program can only call a function that some
 * library defines, or that it found with dlsym: then the lookup fails and
 * no_real() says so).
 */
#include "libflops.h"
#include "libflops_list.h"

#include <dlfcn.h>
#include <errno.h>
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
/* Functions wrapped without a counter of their own (ids after the
 * table's): a oneDNN primitive's execution counts under the primitive's
 * entry (LIBFLOPS_PRIMS), and its destruction is watched for the cache of
 * primitives. */
enum {
	SHIM_ID_dnnl_primitive_execute = LIBFLOPS_NIDS,
	SHIM_ID_dnnl_primitive_destroy,
	SHIM_NIDS
};
static void *g_next[SHIM_NIDS];       /* the real functions from RTLD_NEXT */
static uint8_t g_next_done[SHIM_NIDS];
static __thread int t_depth __attribute__((tls_model("initial-exec")));
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* Call sites whose function is in a local scope only: (return address, id)
 * -> function. Entries are written once, under g_lock, fn last. A program
 * that loads its BLAS and LAPACK in a local scope (numpy and SciPy: a
 * Python extension's dependencies) resolves every wrapped call here, and a
 * LAPACK routine's nested BLAS calls each have their own site
 * (numpy.linalg's solve, inv, qr, lstsq and eigvalsh use 85). A site is
 * looked for in NPROBE slots at most: a full table costs a miss (the slow
 * lookup, not cached), not a scan of the table. */
#define NSITES 4096
#define NPROBE 64
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

static const char *fname(unsigned id)
{
	if (id < LIBFLOPS_NIDS)
		return libflops_funcs[id].name;
	return id == SHIM_ID_dnnl_primitive_execute ? "dnnl_primitive_execute" : "dnnl_primitive_destroy";
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
	const char *name = fname(id);
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
			 fname(id));
	if (n > 0)
		(void)!write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
	abort();
}

static __attribute__((noinline)) void *resolve(unsigned id, void *ra)
{
	void *fn;
	size_t h = site_hash(ra, id);

	for (size_t i = 0; i < NPROBE; i++) {
		struct site *s = &g_sites[(h + i) & (NSITES - 1)];
		void *f = __atomic_load_n(&s->fn, __ATOMIC_ACQUIRE);
		if (!f)
			break;
		if (s->ra == ra && s->id == id)
			return f;
	}
	pthread_mutex_lock(&g_lock);
	if (!g_next_done[id]) {
		fn = dlsym(RTLD_NEXT, fname(id));
		g_next_done[id] = 1;
		if (fn && !ours(fn)) {
			__atomic_store_n(&g_next[id], fn, __ATOMIC_RELEASE);
			pthread_mutex_unlock(&g_lock);
			return fn;
		}
	}
	fn = lookup_local(id, ra);
	if (fn) {
		for (size_t i = 0; i < NPROBE; i++) {
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

/* Inline in every wrapper, no call in it: a call after the real function's
 * (even to a cold function, even a tail call) makes GCC 12 spill the
 * wrapper's stack arguments before the real call, 8 more moves in a GEMM's
 * wrapper. */
static inline __attribute__((always_inline)) void count(unsigned id, uint64_t flops)
{
	struct libflops_proc *p = __atomic_load_n(&g_proc, __ATOMIC_RELAXED);
	if (p)
		libflops_add(p, id, flops);
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

/* The wrappers of the functions added with LAPACK: the call's FLOPs are
 * computed after it (its dimensions are inputs it does not change), and
 * only when it is counted: when it ran outside any other counted call and
 * @ok says it did the work (LAPACK's info >= 0, not a workspace query).
 * The operation and complexity come from the function's entry in the list. */
#define ID(sym) LIBFLOPS_ID_##sym
#define CNT(sym, left, m, n, k) \
	libflops_count(libflops_funcs[ID(sym)].op, libflops_funcs[ID(sym)].cplx, left, m, n, k)

#define WRAP_V(sym, params, args, ok, flops)                                     \
	EXPORT void sym params;                                                  \
	void sym params                                                          \
	{                                                                        \
		typedef void(*fn_t) params;                                      \
		fn_t fn = (fn_t)real(ID(sym), __builtin_return_address(0));      \
		t_depth++;                                                       \
		fn args;                                                         \
		if (--t_depth == 0 && (ok))                                      \
			count(ID(sym), (flops));                                 \
	}

#define WRAP_R(type, sym, params, args, ok, flops)                               \
	EXPORT type sym params;                                                  \
	type sym params                                                          \
	{                                                                        \
		typedef type(*fn_t) params;                                      \
		fn_t fn = (fn_t)real(ID(sym), __builtin_return_address(0));      \
		t_depth++;                                                       \
		type rc_ = fn args;                                              \
		if (--t_depth == 0 && (ok))                                      \
			count(ID(sym), (flops));                                 \
		return rc_;                                                      \
	}

/* A function whose FLOPs are unknown: its call is counted (the FLOPs
 * stay 0 in its counter; the sums say how many calls were of such
 * functions), and the counted calls it makes (a reference LAPACK's
 * dgemm_, a dgeqrf_ inside a least-squares driver) are counted too, being
 * the part of its work that can be: it does not raise the depth. */
#define WRAP_UNKNOWN(sym, params, args, ok)                                      \
	EXPORT void sym params;                                                  \
	void sym params                                                          \
	{                                                                        \
		typedef void(*fn_t) params;                                      \
		fn_t fn = (fn_t)real(ID(sym), __builtin_return_address(0));      \
		int outer_ = t_depth == 0;                                       \
		fn args;                                                         \
		if (outer_ && (ok))                                              \
			count(ID(sym), 0);                                       \
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

/* ---- oneDNN primitives. dnnl_primitive_execute counts the primitive's
 * FLOPs under its kind, propagation and data type (LIBFLOPS_PRIMS), the
 * FLOPs computed from the shapes of its descriptor (libflops_dnnl_count()).
 * The descriptor is queried at a primitive's first execution and kept, per
 * primitive, until dnnl_primitive_destroy. Below, the C ABI of oneDNN 2.x
 * (libdnnl.so.2, dnnl_types.h and dnnl.h), restated so that this library
 * builds without oneDNN's headers: the primitives of a library of another
 * major version count as "other", FLOPs unknown. ---- */

enum { /* dnnl_primitive_kind_t */
	DNNL_PK_REORDER = 1, DNNL_PK_SHUFFLE, DNNL_PK_CONCAT, DNNL_PK_SUM, DNNL_PK_CONVOLUTION,
	DNNL_PK_DECONVOLUTION, DNNL_PK_ELTWISE, DNNL_PK_SOFTMAX, DNNL_PK_POOLING, DNNL_PK_LRN,
	DNNL_PK_BATCH_NORMALIZATION, DNNL_PK_LAYER_NORMALIZATION, DNNL_PK_INNER_PRODUCT, DNNL_PK_RNN,
	DNNL_PK_GEMM, DNNL_PK_BINARY, DNNL_PK_LOGSOFTMAX, DNNL_PK_MATMUL, DNNL_PK_RESAMPLING,
	DNNL_PK_POOLING_V2, DNNL_PK_REDUCTION, DNNL_PK_PRELU, DNNL_PK_SOFTMAX_V2,
};
enum { /* dnnl_query_t */
	DNNL_Q_PRIMITIVE_KIND = 2,
	DNNL_Q_SRC_MD = 129, DNNL_Q_DIFF_SRC_MD, DNNL_Q_WEIGHTS_MD, DNNL_Q_DIFF_WEIGHTS_MD, DNNL_Q_DST_MD,
	DNNL_Q_DIFF_DST_MD,
};
enum { DNNL_F16 = 1, DNNL_BF16 = 2, DNNL_F32 = 3, DNNL_S8 = 5, DNNL_U8 = 6 }; /* dnnl_data_type_t */
enum { /* DNNL_ARG_* */
	DNNL_ARG_SRC = 1, DNNL_ARG_DST = 17, DNNL_ARG_WEIGHTS = 33, DNNL_ARG_DIFF_SRC = 129,
	DNNL_ARG_DIFF_DST = 145, DNNL_ARG_DIFF_WEIGHTS = 161,
};

/* The leading fields of dnnl_memory_desc_t (dims in logical order). */
struct dnnl_md {
	int32_t ndims;
	int64_t dims[LIBFLOPS_DNNL_MAX_DIMS];
	int32_t data_type;
};
struct dnnl_exec_arg {
	int arg;
	void *memory;
};
struct dnnl_ver {
	int major, minor, patch;
};

typedef int (*dnnl_exec_fn)(const void *prim, void *stream, int nargs, const struct dnnl_exec_arg *args);
typedef int (*dnnl_destroy_fn)(void *prim);
typedef int (*dnnl_get_pd_fn)(const void *prim, const void **pd);
typedef int (*dnnl_query_fn)(const void *pd, int what, int index, void *result);
typedef const struct dnnl_md *(*dnnl_query_md_fn)(const void *pd, int what, int index);
typedef int (*dnnl_mem_md_fn)(const void *memory, const struct dnnl_md **md);
typedef const struct dnnl_ver *(*dnnl_version_fn)(void);

/* The query functions of each oneDNN library whose dnnl_primitive_execute
 * was reached (a process may load two: the system's and a framework's),
 * taken from that same library. Written once, under g_lock, exec last. */
#define NDNNL_LIBS 4
static struct dnnl_lib {
	void *exec;             /* its dnnl_primitive_execute; NULL: a free slot */
	int v2;                 /* oneDNN 2.x, every function below found */
	dnnl_get_pd_fn get_pd;
	dnnl_query_fn query;
	dnnl_query_md_fn query_md;
	dnnl_mem_md_fn mem_md;
} g_dnnl_libs[NDNNL_LIBS];

static const struct dnnl_lib *dnnl_lib_for(void *exec)
{
	struct dnnl_lib *l = NULL;
	Dl_info info;
	void *h;

	for (int i = 0; i < NDNNL_LIBS; i++)
		if (__atomic_load_n(&g_dnnl_libs[i].exec, __ATOMIC_ACQUIRE) == exec)
			return &g_dnnl_libs[i];
	pthread_mutex_lock(&g_lock);
	for (int i = 0; i < NDNNL_LIBS && !l; i++)
		if (g_dnnl_libs[i].exec == exec || !g_dnnl_libs[i].exec)
			l = &g_dnnl_libs[i];
	if (l && !l->exec) {
		h = dladdr(exec, &info) && info.dli_fname ? dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD) : NULL;
		if (h) {
			dnnl_version_fn version = (dnnl_version_fn)dlsym(h, "dnnl_version");
			const struct dnnl_ver *v = version ? version() : NULL;
			l->get_pd = (dnnl_get_pd_fn)dlsym(h, "dnnl_primitive_get_primitive_desc");
			l->query = (dnnl_query_fn)dlsym(h, "dnnl_primitive_desc_query");
			l->query_md = (dnnl_query_md_fn)dlsym(h, "dnnl_primitive_desc_query_md");
			l->mem_md = (dnnl_mem_md_fn)dlsym(h, "dnnl_memory_get_memory_desc");
			l->v2 = v && v->major == 2 && l->get_pd && l->query && l->query_md && l->mem_md;
			dlclose(h); /* loaded before, and still: NOLOAD took a reference only */
		}
		__atomic_store_n(&l->exec, exec, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&g_lock);
	return l;
}

/* The propagations of a convolution, deconvolution or inner product. */
enum { PROP_FWD, PROP_BWD_DATA, PROP_BWD_WEIGHTS };

/* What the execution of a primitive counts: its counter, and its FLOPs
 * (from the execution's arguments when its descriptor has run-time
 * dimensions). */
struct prim_count {
	uint32_t id;
	uint8_t per_call;       /* FLOPs from the arguments' shapes, at each execution */
	uint8_t kind;           /* enum libflops_dnnl_kind, for per_call */
	uint8_t prop;
	uint64_t flops;
};

/* Primitives seen, by address: open addressing, looked for in NPROBE
 * slots; found without a lock, written under g_lock (the count first, the
 * key last). A destroyed primitive leaves a tombstone, which a later one
 * reuses. */
#define NPRIMS 4096
#define PRIM_TOMB ((const void *)1)
static struct prim {
	const void *p;          /* NULL: never used; PRIM_TOMB: destroyed */
	struct prim_count c;
} g_prims[NPRIMS];

static size_t prim_hash(const void *p)
{
	return (size_t)(((uintptr_t)p * 0x9e3779b97f4a7c15ull) >> 40) & (NPRIMS - 1);
}

static struct prim *prim_find(const void *p)
{
	size_t h = prim_hash(p);
	for (size_t i = 0; i < NPROBE; i++) {
		struct prim *e = &g_prims[(h + i) & (NPRIMS - 1)];
		const void *k = __atomic_load_n(&e->p, __ATOMIC_ACQUIRE);
		if (k == p)
			return e;
		if (!k)
			break;
	}
	return NULL;
}

static void prim_keep(const void *p, const struct prim_count *c)
{
	size_t h = prim_hash(p);
	struct prim *free_slot = NULL;

	pthread_mutex_lock(&g_lock);
	for (size_t i = 0; i < NPROBE; i++) {
		struct prim *e = &g_prims[(h + i) & (NPRIMS - 1)];
		if (e->p == p) { /* another thread's first execution of it */
			free_slot = NULL;
			break;
		}
		if (!free_slot && (e->p == PRIM_TOMB || !e->p))
			free_slot = e;
		if (!e->p)
			break;
	}
	if (free_slot) {
		free_slot->c = *c;
		__atomic_store_n(&free_slot->p, p, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&g_lock);
}

static void prim_forget(const void *p)
{
	struct prim *e;

	if (!prim_find(p))
		return;
	pthread_mutex_lock(&g_lock);
	e = prim_find(p);
	if (e)
		__atomic_store_n(&e->p, PRIM_TOMB, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&g_lock);
}

static void md_dims(const struct dnnl_md *md, struct libflops_dims *out)
{
	out->n = 0;
	if (!md || md->ndims <= 0 || md->ndims > LIBFLOPS_DNNL_MAX_DIMS)
		return;
	out->n = md->ndims;
	memcpy(out->d, md->dims, (size_t)md->ndims * sizeof(out->d[0]));
}

static int md_present(const struct dnnl_md *md)
{
	return md && md->ndims > 0;
}

/* Index of a data type among a counted family's entries: f32, bf16, f16,
 * int8 (the order of LIBFLOPS_DNNL_KIND), or -1. */
static int dt_index(const struct dnnl_md *md)
{
	switch (md ? md->data_type : 0) {
	case DNNL_F32: return 0;
	case DNNL_BF16: return 1;
	case DNNL_F16: return 2;
	case DNNL_S8:
	case DNNL_U8: return 3;
	}
	return -1;
}

/* The arguments of an execution that hold the source, the weights and the
 * destination (or their gradients) of each propagation, and the queries of
 * the same in the descriptor. */
static const int prop_args[3][3] = {
	{ DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST },
	{ DNNL_ARG_DIFF_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_DST },
	{ DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_DST },
};
static const int prop_queries[3][3] = {
	{ DNNL_Q_SRC_MD, DNNL_Q_WEIGHTS_MD, DNNL_Q_DST_MD },
	{ DNNL_Q_DIFF_SRC_MD, DNNL_Q_WEIGHTS_MD, DNNL_Q_DIFF_DST_MD },
	{ DNNL_Q_SRC_MD, DNNL_Q_DIFF_WEIGHTS_MD, DNNL_Q_DIFF_DST_MD },
};

/* FLOPs from the memory objects of an execution (a descriptor with
 * run-time dimensions: the arguments have the real ones). */
static int flops_from_args(const struct dnnl_lib *lib, const struct prim_count *c, int nargs,
			   const struct dnnl_exec_arg *args, uint64_t *flops)
{
	struct libflops_dims t[3] = { { 0 }, { 0 }, { 0 } };

	for (int i = 0; args && i < nargs; i++)
		for (int r = 0; r < 3; r++) {
			const struct dnnl_md *md = NULL;
			if (args[i].arg == prop_args[c->prop][r] && args[i].memory &&
			    lib->mem_md(args[i].memory, &md) == 0)
				md_dims(md, &t[r]);
		}
	return libflops_dnnl_count(c->kind, &t[0], &t[1], &t[2], flops);
}

/* First execution of @prim: its kind, propagation and data type from its
 * descriptor, and its FLOPs. */
static void prim_describe(const struct dnnl_lib *lib, const void *prim, struct prim_count *c)
{
	/* a counted family's ids: [propagation][data type] */
	static const uint16_t conv[3][4] = {
		{ LIBFLOPS_ID_dnnl_conv_fwd_f32, LIBFLOPS_ID_dnnl_conv_fwd_bf16, LIBFLOPS_ID_dnnl_conv_fwd_f16,
		  LIBFLOPS_ID_dnnl_conv_fwd_int8 },
		{ LIBFLOPS_ID_dnnl_conv_bwd_data_f32, LIBFLOPS_ID_dnnl_conv_bwd_data_bf16,
		  LIBFLOPS_ID_dnnl_conv_bwd_data_f16, LIBFLOPS_ID_dnnl_other },
		{ LIBFLOPS_ID_dnnl_conv_bwd_weights_f32, LIBFLOPS_ID_dnnl_conv_bwd_weights_bf16,
		  LIBFLOPS_ID_dnnl_conv_bwd_weights_f16, LIBFLOPS_ID_dnnl_other },
	};
	static const uint16_t deconv[3][4] = {
		{ LIBFLOPS_ID_dnnl_deconv_fwd_f32, LIBFLOPS_ID_dnnl_deconv_fwd_bf16, LIBFLOPS_ID_dnnl_deconv_fwd_f16,
		  LIBFLOPS_ID_dnnl_deconv_fwd_int8 },
		{ LIBFLOPS_ID_dnnl_deconv_bwd_data_f32, LIBFLOPS_ID_dnnl_deconv_bwd_data_bf16,
		  LIBFLOPS_ID_dnnl_deconv_bwd_data_f16, LIBFLOPS_ID_dnnl_other },
		{ LIBFLOPS_ID_dnnl_deconv_bwd_weights_f32, LIBFLOPS_ID_dnnl_deconv_bwd_weights_bf16,
		  LIBFLOPS_ID_dnnl_deconv_bwd_weights_f16, LIBFLOPS_ID_dnnl_other },
	};
	static const uint16_t ip[3][4] = {
		{ LIBFLOPS_ID_dnnl_ip_fwd_f32, LIBFLOPS_ID_dnnl_ip_fwd_bf16, LIBFLOPS_ID_dnnl_ip_fwd_f16,
		  LIBFLOPS_ID_dnnl_ip_fwd_int8 },
		{ LIBFLOPS_ID_dnnl_ip_bwd_data_f32, LIBFLOPS_ID_dnnl_ip_bwd_data_bf16, LIBFLOPS_ID_dnnl_ip_bwd_data_f16,
		  LIBFLOPS_ID_dnnl_other },
		{ LIBFLOPS_ID_dnnl_ip_bwd_weights_f32, LIBFLOPS_ID_dnnl_ip_bwd_weights_bf16,
		  LIBFLOPS_ID_dnnl_ip_bwd_weights_f16, LIBFLOPS_ID_dnnl_other },
	};
	static const uint16_t matmul[4] = { LIBFLOPS_ID_dnnl_matmul_f32, LIBFLOPS_ID_dnnl_matmul_bf16,
					    LIBFLOPS_ID_dnnl_matmul_f16, LIBFLOPS_ID_dnnl_matmul_int8 };
	const void *pd = NULL;
	const struct dnnl_md *md[3];
	struct libflops_dims t[3];
	const uint16_t(*ids)[4] = NULL;
	int kind = 0, dt;

	memset(c, 0, sizeof(*c));
	c->id = LIBFLOPS_ID_dnnl_other;
	if (!lib || !lib->v2 || lib->get_pd(prim, &pd) != 0 || !pd ||
	    lib->query(pd, DNNL_Q_PRIMITIVE_KIND, 0, &kind) != 0)
		return;
	switch (kind) {
	case DNNL_PK_REORDER: c->id = LIBFLOPS_ID_dnnl_reorder; return;
	case DNNL_PK_CONCAT: c->id = LIBFLOPS_ID_dnnl_concat; return;
	case DNNL_PK_SHUFFLE: c->id = LIBFLOPS_ID_dnnl_shuffle; return;
	case DNNL_PK_SUM: c->id = LIBFLOPS_ID_dnnl_sum; return;
	case DNNL_PK_ELTWISE: c->id = LIBFLOPS_ID_dnnl_eltwise; return;
	case DNNL_PK_SOFTMAX:
	case DNNL_PK_SOFTMAX_V2: c->id = LIBFLOPS_ID_dnnl_softmax; return;
	case DNNL_PK_LOGSOFTMAX: c->id = LIBFLOPS_ID_dnnl_logsoftmax; return;
	case DNNL_PK_POOLING:
	case DNNL_PK_POOLING_V2: c->id = LIBFLOPS_ID_dnnl_pooling; return;
	case DNNL_PK_LRN: c->id = LIBFLOPS_ID_dnnl_lrn; return;
	case DNNL_PK_BATCH_NORMALIZATION: c->id = LIBFLOPS_ID_dnnl_batch_normalization; return;
	case DNNL_PK_LAYER_NORMALIZATION: c->id = LIBFLOPS_ID_dnnl_layer_normalization; return;
	case DNNL_PK_RNN: c->id = LIBFLOPS_ID_dnnl_rnn; return;
	case DNNL_PK_BINARY: c->id = LIBFLOPS_ID_dnnl_binary; return;
	case DNNL_PK_RESAMPLING: c->id = LIBFLOPS_ID_dnnl_resampling; return;
	case DNNL_PK_REDUCTION: c->id = LIBFLOPS_ID_dnnl_reduction; return;
	case DNNL_PK_PRELU: c->id = LIBFLOPS_ID_dnnl_prelu; return;
	case DNNL_PK_CONVOLUTION: ids = conv; c->kind = LIBFLOPS_DNNL_CONV; break;
	case DNNL_PK_DECONVOLUTION: ids = deconv; c->kind = LIBFLOPS_DNNL_DECONV; break;
	case DNNL_PK_INNER_PRODUCT: ids = ip; c->kind = LIBFLOPS_DNNL_IP; break;
	case DNNL_PK_MATMUL: c->kind = LIBFLOPS_DNNL_MATMUL; break;
	default: return; /* another kind (a newer oneDNN's): other */
	}
	/* The propagation from the gradients the descriptor has: backward
	 * weights computes diff_weights, backward data diff_src (a query the
	 * primitive does not need gives a zero descriptor). */
	c->prop = PROP_FWD;
	if (ids && md_present(lib->query_md(pd, DNNL_Q_DIFF_WEIGHTS_MD, 0)))
		c->prop = PROP_BWD_WEIGHTS;
	else if (ids && md_present(lib->query_md(pd, DNNL_Q_DIFF_SRC_MD, 0)))
		c->prop = PROP_BWD_DATA;
	for (int r = 0; r < 3; r++) {
		md[r] = lib->query_md(pd, prop_queries[c->prop][r], 0);
		md_dims(md[r], &t[r]);
	}
	/* the type of the products' inputs: the source, or in backward data
	 * the destination's gradient */
	dt = dt_index(md[c->prop == PROP_BWD_DATA ? 2 : 0]);
	if (dt < 0)
		return;
	c->id = ids ? ids[c->prop][dt] : matmul[dt];
	if (c->id == LIBFLOPS_ID_dnnl_other)
		return;
	if (libflops_dnnl_count(c->kind, &t[0], &t[1], &t[2], &c->flops) != 0)
		c->per_call = 1; /* run-time dimensions (DNNL_RUNTIME_DIM_VAL) */
}

EXPORT int dnnl_primitive_execute(const void *prim, void *stream, int nargs, const struct dnnl_exec_arg *args);
int dnnl_primitive_execute(const void *prim, void *stream, int nargs, const struct dnnl_exec_arg *args)
{
	void *ra = __builtin_return_address(0);
	dnnl_exec_fn fn = (dnnl_exec_fn)real(SHIM_ID_dnnl_primitive_execute, ra);
	struct libflops_proc *p = __atomic_load_n(&g_proc, __ATOMIC_RELAXED);
	const struct dnnl_lib *lib = NULL;
	struct prim_count c;
	struct prim *e;
	int rc;

	if (!p || t_depth || !prim)
		return fn(prim, stream, nargs, args); /* not counted: forwarded only */
	e = prim_find(prim);
	if (e) {
		c = e->c;
	} else {
		lib = dnnl_lib_for((void *)fn);
		prim_describe(lib, prim, &c);
		prim_keep(prim, &c);
	}
	if (c.per_call) {
		if (!lib)
			lib = dnnl_lib_for((void *)fn);
		if (!lib || flops_from_args(lib, &c, nargs, args, &c.flops) != 0)
			c.id = LIBFLOPS_ID_dnnl_other;
	}
	if (libflops_funcs[c.id].op == LIBFLOPS_UNKNOWN) {
		/* as an iterative LAPACK driver: the counted calls it makes
		 * (none, from oneDNN's own kernels) would count */
		rc = fn(prim, stream, nargs, args);
		if (rc == 0)
			count(c.id, 0);
		return rc;
	}
	t_depth++;
	rc = fn(prim, stream, nargs, args);
	t_depth--;
	if (rc == 0)
		count(c.id, c.flops);
	return rc;
}

/* A primitive destroyed: another one may take its address. */
EXPORT int dnnl_primitive_destroy(void *prim);
int dnnl_primitive_destroy(void *prim)
{
	dnnl_destroy_fn fn = (dnnl_destroy_fn)real(SHIM_ID_dnnl_primitive_destroy, __builtin_return_address(0));
	if (prim)
		prim_forget(prim);
	return fn(prim);
}

/* A note for the run from the program (mfu.py's step(flops="count"), through
 * ctypes): where a declaration of model FLOPs came from, what could not be
 * counted. @missing: the note explains FLOPs not counted or not declared.
 * Returns 0, -ENOENT when this process is not counted (no region), or
 * -ENOSPC when the region's notes are taken. */
EXPORT int mfu_libflops_note(const char *text, int missing);
int mfu_libflops_note(const char *text, int missing)
{
	if (!g_region || !__atomic_load_n(&g_proc, __ATOMIC_RELAXED) || !text)
		return -ENOENT;
	return libflops_note_add(g_region, (int32_t)getpid(), missing ? LIBFLOPS_NOTE_MISSING : 0, text);
}

/* Every id has its wrapper: a function added to the list without one is a
 * build error here (the table and the wrappers must not drift apart). */
#define LIBFLOPS_CHECK_ENTRY(sym, op, prec, cplx) (void)&sym;
__attribute__((unused)) static void all_wrapped(void)
{
	LIBFLOPS_LIST(LIBFLOPS_CHECK_ENTRY)
}
