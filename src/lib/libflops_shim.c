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
 * The wrappers are in libflops_blas.c (BLAS, LAPACK, LAPACKE) and
 * libflops_dnnl.c (oneDNN), over libflops_shim_impl.h; this file holds what
 * they share: the region, the lookup of the real functions.
 *
 * A wrapper costs nothing until its function is called: the real one is
 * looked up at the first call (a program can only call a function that some
 * library defines, or that it found with dlsym: then the lookup fails and
 * no_real() says so).
 */
#include "libflops_shim_impl.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct libflops_region *g_region;
struct libflops_proc *g_proc;  /* this process's counters, NULL: count nothing */
static void *g_self_base;             /* this library's load address */
void *g_next[SHIM_NIDS];       /* the real functions from RTLD_NEXT */
static uint8_t g_next_done[SHIM_NIDS];
__thread int t_depth __attribute__((tls_model("initial-exec")));
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* Call sites whose function is in a local scope only: (return address, id)
 * -> function. Entries are written once, under g_lock, fn last. A program
 * that loads its BLAS and LAPACK in a local scope (numpy and SciPy: a
 * Python extension's dependencies) resolves every wrapped call here, and a
 * LAPACK routine's nested BLAS calls each have their own site
 * (numpy.linalg's solve, inv, qr, lstsq and eigvalsh use 85). A site is
 * looked for in NPROBE slots at most: a full table costs a miss (the slow
 * lookup, not cached), not a scan of the table. */
#define NSITES 4096
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

__attribute__((noinline)) void *resolve(unsigned id, void *ra)
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

/* Every id has its wrapper (in libflops_blas.c or libflops_dnnl.c): a
 * function added to the list without one is a build error here, at the
 * link (the table and the wrappers must not drift apart). Declared here
 * with no parameters: only their addresses are taken. */
#define LIBFLOPS_DECLARE_ENTRY(sym, op, prec, cplx) void sym(void);
LIBFLOPS_LIST(LIBFLOPS_DECLARE_ENTRY)
#define LIBFLOPS_CHECK_ENTRY(sym, op, prec, cplx) (const void *)sym,
__attribute__((used)) static const void *const all_wrapped[] = { LIBFLOPS_LIST(LIBFLOPS_CHECK_ENTRY) };
