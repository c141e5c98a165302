/* Library-call FLOPs, see libflops.h. Compiled into the counting library,
 * libmfu and mfu-record: nothing here allocates, prints or needs more than
 * libc. */
#include "libflops.h"
#include "handoff.h"
#include "libflops_list.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(LIBFLOPS_NIDS <= LIBFLOPS_MAX_FUNCS, "too many interposed functions");
_Static_assert(LIBFLOPS_MAX_FUNCS <= 65536, "ids are 16 bits in the list and the snapshots");
_Static_assert(LIBFLOPS_SNAP_FUNCS <= LIBFLOPS_MAX_FUNCS, "a snapshot holds at most every function");
_Static_assert((LIBFLOPS_NSNAP & (LIBFLOPS_NSNAP - 1)) == 0, "LIBFLOPS_NSNAP must be a power of two");

const struct libflops_func libflops_funcs[] = {
#define LIBFLOPS_TABLE_ENTRY(sym, op, prec, cplx) { #sym, LIBFLOPS_##op, LIBFLOPS_##prec, cplx },
#define LIBFLOPS_TABLE_PRIM(id, name, op, prec) { name, LIBFLOPS_##op, LIBFLOPS_##prec, 0 },
	LIBFLOPS_LIST(LIBFLOPS_TABLE_ENTRY)
	LIBFLOPS_PRIMS(LIBFLOPS_TABLE_PRIM)
#undef LIBFLOPS_TABLE_PRIM
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

/* ---- LAPACK: LAPACK Working Note 41's counts of multiplications and of
 * additions, each times 6 so that the thirds and sixths of its polynomials
 * stay integers (each count is an integer), in 128 bits: LAPACK's
 * dimensions are 32-bit, so n^3 x 6 x a few fits. ---- */

typedef __int128 i128;

struct ops6 {
	i128 mul, add; /* 6 x multiplications, 6 x additions */
};

static struct ops6 ops_plus(struct ops6 a, struct ops6 b)
{
	return (struct ops6){ a.mul + b.mul, a.add + b.add };
}

/* LU of an m x n matrix: with s = min(m, n), l = max(m, n),
 * mul = s^2 l / 2 - s^3 / 6 + s l / 2 - s^2 / 2 + 2s / 3,
 * add = s^2 l / 2 - s^3 / 6 - s l / 2 + s / 6. */
static struct ops6 ops_getrf(i128 m, i128 n)
{
	i128 s = m < n ? m : n, l = m < n ? n : m;
	return (struct ops6){ 3 * s * s * l - s * s * s + 3 * s * l - 3 * s * s + 4 * s,
			      3 * s * s * l - s * s * s - 3 * s * l + s };
}

/* Two triangular solves with nrhs right-hand sides: mul = nrhs n^2,
 * add = nrhs n (n - 1). */
static struct ops6 ops_getrs(i128 n, i128 nrhs)
{
	return (struct ops6){ 6 * nrhs * n * n, 6 * nrhs * n * (n - 1) };
}

/* Inverse from the LU factors: mul = 2n^3/3 + n^2/2 + 5n/6,
 * add = 2n^3/3 - 3n^2/2 + 5n/6. */
static struct ops6 ops_getri(i128 n)
{
	return (struct ops6){ 4 * n * n * n + 3 * n * n + 5 * n, 4 * n * n * n - 9 * n * n + 5 * n };
}

/* Cholesky: mul = n^3/6 + n^2/2 + n/3, add = n^3/6 - n/6. */
static struct ops6 ops_potrf(i128 n)
{
	return (struct ops6){ n * n * n + 3 * n * n + 2 * n, n * n * n - n };
}

/* mul = nrhs n (n + 1), add = nrhs n (n - 1). */
static struct ops6 ops_potrs(i128 n, i128 nrhs)
{
	return (struct ops6){ 6 * nrhs * n * (n + 1), 6 * nrhs * n * (n - 1) };
}

/* Inverse from the Cholesky factor: mul = n^3/3 + n^2 + 2n/3,
 * add = n^3/3 - n^2/2 + n/6. */
static struct ops6 ops_potri(i128 n)
{
	return (struct ops6){ 2 * n * n * n + 6 * n * n + 4 * n, 2 * n * n * n - 3 * n * n + n };
}

/* Householder QR of m x n: m >= n: mul = m n^2 - n^3/3 + n^2/2 + m n +
 * 23n/6, add = m n^2 - n^3/3 + n^2/2 + 5n/6; m < n: mul = n m^2 - m^3/3 -
 * m^2/2 + 2 m n + 23m/6, add = n m^2 - m^3/3 - m^2/2 + m n + 5m/6 (the two
 * agree at m = n). */
static struct ops6 ops_geqrf(i128 m, i128 n)
{
	if (m >= n)
		return (struct ops6){ 6 * m * n * n - 2 * n * n * n + 3 * n * n + 6 * m * n + 23 * n,
				      6 * m * n * n - 2 * n * n * n + 3 * n * n + 5 * n };
	return (struct ops6){ 6 * n * m * m - 2 * m * m * m - 3 * m * m + 12 * m * n + 23 * m,
			      6 * n * m * m - 2 * m * m * m - 3 * m * m + 6 * m * n + 5 * m };
}

/* LQ of m x n (gels with m < n): m >= n: mul = m n^2 - n^3/3 + n^2/2 + m n
 * + 29n/6, add = m n^2 - n^3/3 - n^2/2 + m n + 5n/6; m < n: mul = n m^2 -
 * m^3/3 - m^2/2 + 2 m n + 29m/6, add = n m^2 - m^3/3 + m^2/2 + 5m/6. */
static struct ops6 ops_gelqf(i128 m, i128 n)
{
	if (m >= n)
		return (struct ops6){ 6 * m * n * n - 2 * n * n * n + 3 * n * n + 6 * m * n + 29 * n,
				      6 * m * n * n - 2 * n * n * n - 3 * n * n + 6 * m * n + 5 * n };
	return (struct ops6){ 6 * n * m * m - 2 * m * m * m - 3 * m * m + 12 * m * n + 29 * m,
			      6 * n * m * m - 2 * m * m * m + 3 * m * m + 5 * m };
}

/* The first n columns of Q (m x n) from k reflectors:
 * mul = k (2mn + 2n - 5/3 + k (2k/3 - (m + n) - 1)),
 * add = k (2mn + n - m + 1/3 + k (2k/3 - (m + n))). */
static struct ops6 ops_orgqr(i128 m, i128 n, i128 k)
{
	return (struct ops6){ k * (12 * m * n + 12 * n - 10 + k * (4 * k - 6 * (m + n) - 6)),
			      k * (12 * m * n + 6 * n - 6 * m + 2 + k * (4 * k - 6 * (m + n))) };
}

/* Q (k reflectors) times the m x n matrix C: on the left mul = n k (2m + 2 -
 * k), add = n k (2m + 1 - k); on the right mul = k (m (2n - k) + m + n +
 * (1 - k)/2), add = m k (2n + 1 - k). */
static struct ops6 ops_ormqr(int left, i128 m, i128 n, i128 k)
{
	if (left)
		return (struct ops6){ 6 * n * k * (2 * m + 2 - k), 6 * n * k * (2 * m + 1 - k) };
	return (struct ops6){ 6 * k * (m * (2 * n - k) + m + n) + 3 * k * (1 - k), 6 * m * k * (2 * n + 1 - k) };
}

/* Inverse of a triangular matrix: mul = n^3/6 + n^2/2 + n/3,
 * add = n^3/6 - n^2/2 + n/3. */
static struct ops6 ops_trtri(i128 n)
{
	return (struct ops6){ n * n * n + 3 * n * n + 2 * n, n * n * n - 3 * n * n + 2 * n };
}

/* One triangular solve: mul = nrhs n (n + 1)/2, add = nrhs n (n - 1)/2. */
static struct ops6 ops_trtrs(i128 n, i128 nrhs)
{
	return (struct ops6){ 3 * nrhs * n * (n + 1), 3 * nrhs * n * (n - 1) };
}

/* Bunch-Kaufman LDL^T: mul = n^3/6 + n^2/2 + 10n/3, add = n^3/6 - n/6. */
static struct ops6 ops_sytrf(i128 n)
{
	return (struct ops6){ n * n * n + 3 * n * n + 20 * n, n * n * n - n };
}

/* Least squares (or minimum norm) by QR when m >= n, LQ when m < n: the
 * factorization, then Q^T or Q applied to the max(m, n) x nrhs right-hand
 * sides from the left, then a triangular solve of order min(m, n); the
 * transposed problem does the same operations in another order. */
static struct ops6 ops_gels(i128 m, i128 n, i128 nrhs)
{
	i128 s = m < n ? m : n, l = m < n ? n : m;
	struct ops6 f = m >= n ? ops_geqrf(m, n) : ops_gelqf(m, n);
	return ops_plus(ops_plus(f, ops_ormqr(1, l, nrhs, s)), ops_trtrs(s, nrhs));
}

static uint64_t lapack_count(unsigned op, int complex, int left, int64_t m, int64_t n, int64_t k)
{
	struct ops6 o;
	i128 total;

	/* LAPACK's integers are 32-bit: beyond that, not a call it takes */
	if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX)
		return UINT64_MAX;
	switch (op) {
	case LIBFLOPS_GETRF: o = ops_getrf(m, n); break;
	case LIBFLOPS_GETRS: o = ops_getrs(n, k); break;
	case LIBFLOPS_GESV:  o = ops_plus(ops_getrf(n, n), ops_getrs(n, k)); break;
	case LIBFLOPS_GETRI: o = ops_getri(n); break;
	case LIBFLOPS_POTRF: o = ops_potrf(n); break;
	case LIBFLOPS_POTRS: o = ops_potrs(n, k); break;
	case LIBFLOPS_POSV:  o = ops_plus(ops_potrf(n), ops_potrs(n, k)); break;
	case LIBFLOPS_POTRI: o = ops_potri(n); break;
	case LIBFLOPS_GEQRF: o = ops_geqrf(m, n); break;
	case LIBFLOPS_ORGQR: o = ops_orgqr(m, n, k); break;
	case LIBFLOPS_ORMQR: o = ops_ormqr(left, m, n, k); break;
	case LIBFLOPS_TRTRI: o = ops_trtri(n); break;
	case LIBFLOPS_TRTRS: o = ops_trtrs(n, k); break;
	case LIBFLOPS_SYTRF: o = ops_sytrf(n); break;
	case LIBFLOPS_SYTRS: o = ops_getrs(n, k); break; /* as GETRS: n^2 and n(n - 1) per right-hand side */
	case LIBFLOPS_SYSV:  o = ops_plus(ops_sytrf(n), ops_getrs(n, k)); break;
	case LIBFLOPS_GELS:  o = ops_gels(m, n, k); break;
	default: return 0;
	}
	/* (6 mul + 2 add) / 6 for complex, (mul + add) / 6 for real; the
	 * leading terms of a valid call are positive, but arguments that
	 * LAPACK would reject (k > n in ORGQR) can make a small one negative */
	total = complex ? 6 * o.mul + 2 * o.add : o.mul + o.add;
	if (total <= 0)
		return 0;
	total /= 6;
	return total > (i128)UINT64_MAX ? UINT64_MAX : (uint64_t)total;
}

uint64_t libflops_count(unsigned op, int complex, int left, int64_t m, int64_t n, int64_t k)
{
	uint64_t M, N, K, s, o;

	if (m < 0 || n < 0 || k < 0)
		return 0;
	if (op >= LIBFLOPS_GETRF)
		return lapack_count(op, complex, left, m, n, k);
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
	/* level 1: per element, a multiply-add (DOT, AXPY: 2, complex 8), a
	 * multiplication (SCAL: 1, complex 6), a square and an addition
	 * (NRM2: 2), an addition (ASUM: 1), 4 multiplications and 2
	 * additions (ROT: 6); a complex vector under real arithmetic (NRM2,
	 * ASUM, RSCAL, ROT on c and z) is that arithmetic on 2n numbers */
	case LIBFLOPS_DOT:
	case LIBFLOPS_AXPY:
		return mul(complex ? 8 : 2, N);
	case LIBFLOPS_SCAL:
		return mul(complex ? 6 : 1, N);
	case LIBFLOPS_RSCAL:
		return mul(2, N);
	case LIBFLOPS_NRM2:
		return mul(complex ? 4 : 2, N);
	case LIBFLOPS_ASUM:
		return mul(complex ? 2 : 1, N);
	case LIBFLOPS_ROT:
		return mul(complex ? 12 : 6, N);
	}
	return 0;
}

/* The product of @n dimensions from @d, or -1 if one is negative (a
 * run-time dimension, DNNL_RUNTIME_DIM_VAL, or garbage). */
static int dims_product(const int64_t *d, int n, uint64_t *out)
{
	uint64_t p = 1;
	for (int i = 0; i < n; i++) {
		if (d[i] < 0)
			return -1;
		p = mul(p, (uint64_t)d[i]);
	}
	*out = p;
	return 0;
}

static int dims_ok(const struct libflops_dims *t, int min)
{
	return t && t->n >= min && t->n <= LIBFLOPS_DNNL_MAX_DIMS;
}

int libflops_dnnl_count(unsigned kind, const struct libflops_dims *src, const struct libflops_dims *wei,
			const struct libflops_dims *dst, uint64_t *flops)
{
	uint64_t w, n, sp;

	switch (kind) {
	case LIBFLOPS_DNNL_CONV:
	case LIBFLOPS_DNNL_DECONV: {
		/* every point of the output (of the input, transposed) takes
		 * prod(weights) / OC (/ IC) multiply-adds for each of the OC
		 * (IC) channels */
		const struct libflops_dims *x = kind == LIBFLOPS_DNNL_CONV ? dst : src;
		if (!dims_ok(x, 3) || !dims_ok(wei, 3) || dims_product(wei->d, wei->n, &w) ||
		    dims_product(x->d, 1, &n) || dims_product(x->d + 2, x->n - 2, &sp))
			return -EINVAL;
		*flops = mul(2, mul3(w, n, sp));
		return 0;
	}
	case LIBFLOPS_DNNL_IP:
		/* weights OC x IC [x spatial], each of the N rows of the source
		 * against all of them */
		if (!dims_ok(src, 2) || !dims_ok(wei, 2) || dims_product(wei->d, wei->n, &w) ||
		    dims_product(src->d, 1, &n))
			return -EINVAL;
		*flops = mul(2, mul(w, n));
		return 0;
	case LIBFLOPS_DNNL_MATMUL:
		/* every element of the destination is a K-long dot product */
		if (!dims_ok(src, 2) || !dims_ok(dst, 2) || dims_product(dst->d, dst->n, &n) ||
		    dims_product(src->d + src->n - 1, 1, &w))
			return -EINVAL;
		*flops = mul(2, mul(n, w));
		return 0;
	}
	return -EINVAL;
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
	r->nnotes = LIBFLOPS_NNOTES;
	r->note_size = sizeof(struct libflops_note);
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
	    r->proc_size != sizeof(struct libflops_proc) || r->snap_size != sizeof(struct libflops_snap) ||
	    r->nnotes != LIBFLOPS_NNOTES || r->note_size != sizeof(struct libflops_note))
		return -EPROTO;
	return 0;
}

struct libflops_region *libflops_region_attach(void)
{
	const char *s = getenv(LIBFLOPS_ENV_FD), *id = getenv(LIBFLOPS_ENV_ID);
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
	/* a launcher between mfu-record and this process may have closed the
	 * fd or put another file at its number: ask mfu-record for it again */
	if (id && mfu_fd_is((int)fd, id) == 0) {
		char what[160], why[MFU_HANDOFF_TEXT];
		int got, ngroups;
		mfu_fd_describe((int)fd, what, sizeof(what));
		snprintf(why, sizeof(why), "%s=%ld is %s", LIBFLOPS_ENV_FD, fd, what);
		int hfd = -1;
		got = mfu_handoff_request(MFU_HANDOFF_LIBFLOPS, why, &hfd, 1, &ngroups);
		if (got != 1 || mfu_fd_is(hfd, id) != 1) {
			if (got == 1)
				close(hfd);
			return NULL;
		}
		fd = hfd; /* close-on-exec: a child this process execs asks again */
	}
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
		libflops_proc_clear(p);
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

void libflops_list_add(struct libflops_proc *p, unsigned id)
{
	if (id < LIBFLOPS_NIDS)
		libflops_list(p, id);
}

/* The entries of @p's list that a reader may look at: the region is
 * shared with the target, so nlist is bounded here. */
uint32_t libflops_list_len(const struct libflops_proc *p)
{
	uint32_t n = __atomic_load_n(&p->nlist, __ATOMIC_ACQUIRE);
	return n < LIBFLOPS_MAX_FUNCS ? n : LIBFLOPS_MAX_FUNCS;
}

int libflops_list_id(const struct libflops_proc *p, uint32_t i)
{
	uint16_t e = __atomic_load_n(&p->list[i], __ATOMIC_ACQUIRE);
	return e && e <= LIBFLOPS_NIDS ? e - 1 : -1;
}

void libflops_proc_clear(struct libflops_proc *p)
{
	__atomic_store_n(&p->active, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&p->nlist, 0, __ATOMIC_RELAXED);
	for (unsigned f = 0; f < LIBFLOPS_MAX_FUNCS; f++) {
		__atomic_store_n(&p->list[f], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&p->listed[f], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&p->f[f].calls, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&p->f[f].flops, 0, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&p->begun, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

void libflops_sum(const struct libflops_proc *p, uint64_t out[LIBFLOPS_WORDS])
{
	uint32_t n = libflops_list_len(p);

	memset(out, 0, LIBFLOPS_WORDS * sizeof(out[0]));
	/* a program calls a few of the functions: sum those only (a marker
	 * boundary runs this). An entry still being written (a thread's
	 * first call of that function, right now) is left out: its counts
	 * show at the next boundary. */
	for (uint32_t i = 0; i < n; i++) {
		int id = libflops_list_id(p, i);
		uint64_t calls;

		if (id < 0)
			continue;
		calls = __atomic_load_n(&p->f[id].calls, __ATOMIC_RELAXED);
		out[LIBFLOPS_W_CALLS] += calls;
		if (libflops_funcs[id].op == LIBFLOPS_UNKNOWN)
			out[LIBFLOPS_W_UNKNOWN] += calls;
		else
			out[LIBFLOPS_W_FLOPS + libflops_funcs[id].prec] +=
				__atomic_load_n(&p->f[id].flops, __ATOMIC_RELAXED);
	}
}

uint64_t libflops_running(const struct libflops_proc *p, uint64_t calls)
{
	uint64_t begun;

	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	begun = __atomic_load_n(&p->begun, __ATOMIC_RELAXED);
	return begun > calls ? begun - calls : 0;
}

uint64_t libflops_snapshot(struct libflops_region *r, const struct libflops_proc *p)
{
	uint64_t i = __atomic_fetch_add(&r->snap_head, 1, __ATOMIC_RELAXED);
	struct libflops_snap *s = &r->snaps[i & (LIBFLOPS_NSNAP - 1)];
	uint32_t n = libflops_list_len(p), k = 0;
	int full = 0;

	/* seqlock write: 0 while the copy is in progress */
	__atomic_store_n(&s->seq, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	s->pid = p->pid;
	for (uint32_t j = 0; j < n; j++) {
		int id = libflops_list_id(p, j);
		if (id < 0)
			continue; /* being listed: as in libflops_sum() */
		if (k == LIBFLOPS_SNAP_FUNCS) {
			full = 1;
			break;
		}
		__atomic_store_n(&s->id[k], (uint16_t)id, __ATOMIC_RELAXED);
		__atomic_store_n(&s->f[k].calls, __atomic_load_n(&p->f[id].calls, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
		__atomic_store_n(&s->f[k].flops, __atomic_load_n(&p->f[id].flops, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
		k++;
	}
	__atomic_store_n(&s->n, k, __ATOMIC_RELAXED);
	__atomic_store_n(&s->nlist, full ? n : k, __ATOMIC_RELAXED);
	__atomic_store_n(&s->seq, i + 1, __ATOMIC_RELEASE);
	return i + 1;
}

int libflops_snapshot_read(const struct libflops_region *r, uint64_t id, struct libflops_table *out)
{
	const struct libflops_snap *s;
	uint32_t n, nlist;
	int rc = 0;

	if (id == 0)
		return -ESTALE;
	s = &r->snaps[(id - 1) & (LIBFLOPS_NSNAP - 1)];
	if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != id)
		return -ESTALE;
	memset(out->f, 0, sizeof(out->f));
	out->pid = s->pid;
	n = __atomic_load_n(&s->n, __ATOMIC_RELAXED);
	nlist = __atomic_load_n(&s->nlist, __ATOMIC_RELAXED);
	if (n > LIBFLOPS_SNAP_FUNCS)
		rc = -EPROTO;
	for (uint32_t k = 0; !rc && k < n; k++) {
		uint16_t f = __atomic_load_n(&s->id[k], __ATOMIC_RELAXED);
		if (f >= LIBFLOPS_NIDS) {
			rc = -EPROTO;
			break;
		}
		out->f[f].calls = __atomic_load_n(&s->f[k].calls, __ATOMIC_RELAXED);
		out->f[f].flops = __atomic_load_n(&s->f[k].flops, __ATOMIC_RELAXED);
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) != id)
		return -ESTALE;
	if (!rc && nlist > n)
		rc = -ENOSPC;
	out->seq = id;
	return rc;
}

int libflops_note_add(struct libflops_region *r, int32_t pid, unsigned flags, const char *text)
{
	uint64_t i = __atomic_fetch_add(&r->note_head, 1, __ATOMIC_RELAXED);
	struct libflops_note *n;
	size_t len;

	if (i >= LIBFLOPS_NNOTES)
		return -ENOSPC;
	n = &r->notes[i];
	len = strnlen(text, LIBFLOPS_NOTE_LEN - 1);
	memcpy(n->text, text, len);
	n->text[len] = 0;
	n->pid = pid;
	n->flags = flags;
	__atomic_store_n(&n->seq, (uint32_t)i + 1, __ATOMIC_RELEASE);
	return 0;
}

int libflops_note_read(const struct libflops_region *r, unsigned i, char *buf, size_t len, unsigned *flags)
{
	const struct libflops_note *n;
	size_t k = 0;

	if (i >= LIBFLOPS_NNOTES || !len || __atomic_load_n(&r->notes[i].seq, __ATOMIC_ACQUIRE) != i + 1)
		return -ENOENT;
	n = &r->notes[i];
	/* written by the target: bounded here, and nothing a terminal would
	 * take for a control sequence */
	for (; k + 1 < len && k < LIBFLOPS_NOTE_LEN; k++) {
		unsigned char c = (unsigned char)__atomic_load_n(&n->text[k], __ATOMIC_RELAXED);
		if (!c)
			break;
		buf[k] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	buf[k] = 0;
	if (flags)
		*flags = __atomic_load_n(&n->flags, __ATOMIC_RELAXED) & LIBFLOPS_NOTE_MISSING;
	return 0;
}

const char *libflops_prec_name(unsigned prec)
{
	static const char *const names[LIBFLOPS_NPREC] = { "fp64", "fp32", "bf16", "fp16", "int8" };
	return prec < LIBFLOPS_NPREC ? names[prec] : "?";
}
