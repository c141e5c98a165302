/*
 * The counting library's private half (libflops_shim.c): what its wrappers
 * share. Everything here is hidden in libmfu-libflops.so (its symbols
 * default to hidden); only the wrappers are EXPORTed.
 *   libflops_shim.c  the region, the real functions' lookup (resolve())
 *   libflops_blas.c  the CBLAS, Fortran BLAS, LAPACK and LAPACKE wrappers
 *   libflops_dnnl.c  the oneDNN wrappers and its primitives' cache
 */
#ifndef MFU_LIB_LIBFLOPS_SHIM_IMPL_H
#define MFU_LIB_LIBFLOPS_SHIM_IMPL_H

#include "libflops.h"
#include "libflops_list.h"

#include <pthread.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))
/* Slots looked at in an open-addressed table (the call sites', the
 * primitives'): a full table costs a miss, not a scan. */
#define NPROBE 64

/* Functions wrapped without a counter of their own (ids after the
 * table's): a oneDNN primitive's execution counts under the primitive's
 * entry (LIBFLOPS_PRIMS), and its destruction is watched for the cache of
 * primitives. */
enum {
	SHIM_ID_dnnl_primitive_execute = LIBFLOPS_NIDS,
	SHIM_ID_dnnl_primitive_destroy,
	SHIM_NIDS
};

extern struct libflops_region *g_region;
extern struct libflops_proc *g_proc;  /* this process's counters, NULL: count nothing */
extern void *g_next[SHIM_NIDS];       /* the real functions from RTLD_NEXT */
/* the depth of counted calls running in this thread */
extern __thread int t_depth __attribute__((tls_model("initial-exec")));
extern pthread_mutex_t g_lock;

/* The real function @id for a call from return address @ra: the next
 * definition in the global scope, else the one the caller's object sees
 * (cached per call site). Never returns without one: no_real() aborts. */
__attribute__((noinline)) void *resolve(unsigned id, void *ra);

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

/* Before the real call: the thread enters a counted call; an outermost
 * one is counted as begun (libflops_begin(): one relaxed addition, no
 * call, before the real function's, so nothing is spilled for it). */
static inline __attribute__((always_inline)) void enter(void)
{
	if (t_depth++ == 0) {
		struct libflops_proc *p = __atomic_load_n(&g_proc, __ATOMIC_RELAXED);
		if (p)
			libflops_begin(p);
	}
}

/* After an outermost call that is not counted (rejected, a workspace
 * query, a failure): no longer begun. Not the hot path. */
static inline __attribute__((always_inline)) void uncount(void)
{
	struct libflops_proc *p = __atomic_load_n(&g_proc, __ATOMIC_RELAXED);
	if (p)
		libflops_unbegin(p);
}

/* After the real call: an outermost call is counted with @flops (only
 * evaluated then) when @ok, else no longer begun. */
#define LEAVE(id, ok, flops)                                                     \
	do {                                                                     \
		if (--t_depth == 0) {                                            \
			if (ok)                                                  \
				count((id), (flops));                            \
			else                                                     \
				uncount();                                       \
		}                                                                \
	} while (0)

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
		enter();                                                           \
		fn args;                                                           \
		LEAVE(LIBFLOPS_ID_##sym, 1, n_);                                   \
	}

#define WRAP_INT(sym, params, args, flops)                                         \
	EXPORT int sym params;                                                     \
	int sym params                                                             \
	{                                                                          \
		typedef int(*fn_t) params;                                         \
		fn_t fn = (fn_t)real(LIBFLOPS_ID_##sym, __builtin_return_address(0)); \
		uint64_t n_ = (flops);                                             \
		enter();                                                           \
		int rc_ = fn args;                                                 \
		LEAVE(LIBFLOPS_ID_##sym, rc_ == 0, n_);                            \
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
		enter();                                                         \
		fn args;                                                         \
		LEAVE(ID(sym), ok, flops);                                       \
	}

#define WRAP_R(type, sym, params, args, ok, flops)                               \
	EXPORT type sym params;                                                  \
	type sym params                                                          \
	{                                                                        \
		typedef type(*fn_t) params;                                      \
		fn_t fn = (fn_t)real(ID(sym), __builtin_return_address(0));      \
		enter();                                                         \
		type rc_ = fn args;                                              \
		LEAVE(ID(sym), ok, flops);                                       \
		return rc_;                                                      \
	}

/* A function whose FLOPs are unknown: its call is counted (the FLOPs
 * stay 0 in its counter; the sums say how many calls were of such
 * functions), and the counted calls it makes (a reference LAPACK's
 * dgemm_, a dgeqrf_ inside a least-squares driver) are counted too, being
 * the part of its work that can be: it does not raise the depth. An
 * outermost one is begun like any (the calls it makes are begun and
 * counted each), so it shows as running until it returns. */
#define WRAP_UNKNOWN(sym, params, args, ok)                                      \
	EXPORT void sym params;                                                  \
	void sym params                                                          \
	{                                                                        \
		typedef void(*fn_t) params;                                      \
		fn_t fn = (fn_t)real(ID(sym), __builtin_return_address(0));      \
		int outer_ = t_depth == 0;                                       \
		struct libflops_proc *p_ = __atomic_load_n(&g_proc, __ATOMIC_RELAXED); \
		if (outer_ && p_)                                                \
			libflops_begin(p_);                                      \
		fn args;                                                         \
		if (outer_ && (ok))                                              \
			count(ID(sym), 0);                                       \
		else if (outer_)                                                 \
			uncount();                                               \
	}

#define CBLAS_LEFT 141 /* CblasLeft; CblasRight is 142 */
#define F_LEFT(side) (*(side) == 'L' || *(side) == 'l')
#define C(op, cplx, left, m, n, k) libflops_count(LIBFLOPS_##op, cplx, left, m, n, k)
typedef const void *cptr;
typedef const int *fint;
typedef const char *fchr;

#endif
