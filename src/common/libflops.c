/* Library-call FLOPs, see libflops.h. Compiled into the counting library,
 * libmfu and mfu-record: nothing here allocates, prints or needs more than
 * libc. */
#include "libflops.h"
#include "libflops_list.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(LIBFLOPS_NIDS <= LIBFLOPS_MAX_FUNCS, "too many interposed functions");
_Static_assert((LIBFLOPS_NSNAP & (LIBFLOPS_NSNAP - 1)) == 0, "LIBFLOPS_NSNAP must be a power of two");

const struct libflops_func libflops_funcs[] = {
#define LIBFLOPS_TABLE_ENTRY(sym, op, prec, cplx) { #sym, LIBFLOPS_##op, LIBFLOPS_##prec, cplx },
	LIBFLOPS_LIST(LIBFLOPS_TABLE_ENTRY)
#undef LIBFLOPS_TABLE_ENTRY
};
const unsigned libflops_nfuncs = LIBFLOPS_NIDS;

/* Products and sums that stop at UINT64_MAX instead of wrapping: a 64-bit
 * oneDNN dimension cubed overflows even 128 bits. */
static uint64_t mul(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t add(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t mul3(uint64_t a, uint64_t b, uint64_t c)
{
	return mul(mul(a, b), c);
}

uint64_t libflops_count(unsigned op, int complex, int left, int64_t m, int64_t n, int64_t k)
{
	uint64_t M, N, K, s, o;

	if (m < 0 || n < 0 || k < 0)
		return 0;
	M = (uint64_t)m;
	N = (uint64_t)n;
	K = (uint64_t)k;
	/* a triangular or symmetric operand's side: s x s, applied to the
	 * other dimension o */
	s = left ? M : N;
	o = left ? N : M;
	switch (op) {
	case LIBFLOPS_GEMM:   /* m n k multiply-adds */
		return mul(complex ? 8 : 2, mul3(M, N, K));
	case LIBFLOPS_GEMMT:  /* the n(n+1)/2 entries of a triangle, k each */
	case LIBFLOPS_SYRK:
		return mul(complex ? 4 : 1, mul3(K, N, add(N, 1)));
	case LIBFLOPS_SYMM:   /* a full s x s symmetric operand */
		return mul(complex ? 8 : 2, mul3(s, s, o));
	case LIBFLOPS_SYR2K:  /* k n^2 multiplications, k n^2 + n additions */
		return complex ? add(mul(8, mul3(K, N, N)), mul(2, N)) : add(mul(2, mul3(K, N, N)), N);
	case LIBFLOPS_TRMM:   /* s(s+1)/2 multiplications and s(s-1)/2 additions per column */
		return complex ? add(mul(4, mul3(o, s, s)), mul(2, mul(o, s))) : mul3(o, s, s);
	case LIBFLOPS_GEMV:
	case LIBFLOPS_GER:
		return mul(complex ? 8 : 2, mul(M, N));
	case LIBFLOPS_SYMV:
		return mul(complex ? 8 : 2, mul(N, N));
	case LIBFLOPS_TRMV:   /* as TRMM with one column */
		return complex ? add(mul(4, mul(N, N)), mul(2, N)) : mul(N, N);
	}
	return 0;
}

size_t libflops_region_size(void)
{
	return sizeof(struct libflops_region);
}

void libflops_region_init(struct libflops_region *r)
{
	r->version = LIBFLOPS_VERSION;
	r->header_size = (uint32_t)offsetof(struct libflops_region, procs);
	r->nfuncs = LIBFLOPS_NIDS;
	r->max_procs = LIBFLOPS_MAX_PROCS;
	r->nsnap = LIBFLOPS_NSNAP;
	r->proc_size = sizeof(struct libflops_proc);
	r->snap_size = sizeof(struct libflops_snap);
	__atomic_store_n(&r->magic, LIBFLOPS_MAGIC, __ATOMIC_RELEASE);
}

int libflops_region_check(const void *mem, size_t size)
{
	const struct libflops_region *r = mem;
	if (size < sizeof(*r))
		return -EINVAL;
	if (r->magic != LIBFLOPS_MAGIC || r->version != LIBFLOPS_VERSION ||
	    r->header_size != offsetof(struct libflops_region, procs) || r->nfuncs != LIBFLOPS_NIDS ||
	    r->max_procs != LIBFLOPS_MAX_PROCS || r->nsnap != LIBFLOPS_NSNAP ||
	    r->proc_size != sizeof(struct libflops_proc) || r->snap_size != sizeof(struct libflops_snap))
		return -EPROTO;
	return 0;
}

struct libflops_region *libflops_region_attach(void)
{
	const char *s = getenv(LIBFLOPS_ENV_FD);
	struct stat st;
	char *end;
	long fd;
	void *mem;

	if (!s || !*s)
		return NULL;
	errno = 0;
	fd = strtol(s, &end, 10);
	if (errno || *end || end == s || fd < 0 || fd > 1 << 30)
		return NULL;
	if (fstat((int)fd, &st) < 0 || (size_t)st.st_size < sizeof(struct libflops_region))
		return NULL;
	/* as for the marker ring: only a region of this user or of root */
	if (st.st_uid != geteuid() && st.st_uid != 0)
		return NULL;
	mem = mmap(NULL, sizeof(struct libflops_region), PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (mem == MAP_FAILED)
		return NULL;
	if (libflops_region_check(mem, sizeof(struct libflops_region)) != 0) {
		munmap(mem, sizeof(struct libflops_region));
		return NULL;
	}
	return mem;
}

struct libflops_proc *libflops_proc_for(struct libflops_region *r, int32_t pid)
{
	/* two passes: the slot this pid holds (an exec keeps the pid, and
	 * libmfu and the counting library both look), else a free one */
	for (int i = 0; i < LIBFLOPS_MAX_PROCS; i++)
		if (__atomic_load_n(&r->procs[i].pid, __ATOMIC_ACQUIRE) == pid)
			return &r->procs[i];
	for (int i = 0; i < LIBFLOPS_MAX_PROCS; i++) {
		int32_t zero = 0;
		if (__atomic_compare_exchange_n(&r->procs[i].pid, &zero, pid, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE) ||
		    zero == pid)
			return &r->procs[i];
	}
	/* A target that runs many short processes (a build, a shell loop)
	 * would fill the table: take over the slot of one that has exited. */
	for (int i = 0; i < LIBFLOPS_MAX_PROCS; i++) {
		struct libflops_proc *p = &r->procs[i];
		int32_t old = __atomic_load_n(&p->pid, __ATOMIC_ACQUIRE);
		if (old <= 0 || old == pid || kill(old, 0) == 0 || errno != ESRCH)
			continue;
		if (!__atomic_compare_exchange_n(&p->pid, &old, pid, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		__atomic_store_n(&p->active, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&p->nused, 0, __ATOMIC_RELAXED);
		for (unsigned f = 0; f < LIBFLOPS_NIDS; f++) {
			__atomic_store_n(&p->f[f].calls, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&p->f[f].flops, 0, __ATOMIC_RELAXED);
		}
		__atomic_thread_fence(__ATOMIC_RELEASE);
		return p;
	}
	__atomic_fetch_add(&r->procs_full, 1, __ATOMIC_RELAXED);
	return NULL;
}

const struct libflops_proc *libflops_proc_find(const struct libflops_region *r, int32_t pid)
{
	for (int i = 0; i < LIBFLOPS_MAX_PROCS; i++)
		if (__atomic_load_n(&r->procs[i].pid, __ATOMIC_ACQUIRE) == pid)
			return &r->procs[i];
	return NULL;
}

void libflops_sum(const struct libflops_proc *p, uint64_t out[LIBFLOPS_WORDS])
{
	uint64_t n = __atomic_load_n(&p->nused, __ATOMIC_ACQUIRE);

	memset(out, 0, LIBFLOPS_WORDS * sizeof(out[0]));
	/* a program calls a few of the 120 functions: sum those only (a
	 * marker boundary runs this) */
	for (unsigned i = 0; i < LIBFLOPS_NIDS && i < n; i++) {
		uint64_t calls = __atomic_load_n(&p->f[i].calls, __ATOMIC_RELAXED);
		if (!calls)
			continue;
		out[0] += calls;
		out[1 + libflops_funcs[i].prec] += __atomic_load_n(&p->f[i].flops, __ATOMIC_RELAXED);
	}
}

uint64_t libflops_snapshot(struct libflops_region *r, const struct libflops_proc *p)
{
	uint64_t i = __atomic_fetch_add(&r->snap_head, 1, __ATOMIC_RELAXED);
	struct libflops_snap *s = &r->snaps[i & (LIBFLOPS_NSNAP - 1)];

	/* seqlock write: 0 while the copy is in progress */
	__atomic_store_n(&s->seq, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	s->pid = p->pid;
	for (unsigned f = 0; f < LIBFLOPS_NIDS; f++) {
		__atomic_store_n(&s->f[f].calls, __atomic_load_n(&p->f[f].calls, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
		__atomic_store_n(&s->f[f].flops, __atomic_load_n(&p->f[f].flops, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
	}
	__atomic_store_n(&s->seq, i + 1, __ATOMIC_RELEASE);
	return i + 1;
}

int libflops_snapshot_read(const struct libflops_region *r, uint64_t id, struct libflops_snap *out)
{
	const struct libflops_snap *s;

	if (id == 0)
		return -ESTALE;
	s = &r->snaps[(id - 1) & (LIBFLOPS_NSNAP - 1)];
	if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != id)
		return -ESTALE;
	out->pid = s->pid;
	for (unsigned f = 0; f < LIBFLOPS_NIDS; f++) {
		out->f[f].calls = __atomic_load_n(&s->f[f].calls, __ATOMIC_RELAXED);
		out->f[f].flops = __atomic_load_n(&s->f[f].flops, __ATOMIC_RELAXED);
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) != id)
		return -ESTALE;
	out->seq = id;
	return 0;
}

const char *libflops_prec_name(unsigned prec)
{
	static const char *const names[LIBFLOPS_NPREC] = { "fp64", "fp32", "bf16", "fp16", "int8" };
	return prec < LIBFLOPS_NPREC ? names[prec] : "?";
}
