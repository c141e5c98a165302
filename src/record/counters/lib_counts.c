#include "lib_counts.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* Free the slots of exited processes only when fewer slots than this are
 * free: until then the counting library never reuses one, and a program of
 * fewer processes never has its slots touched. */
#define FREE_LOW (LIBFLOPS_MAX_PROCS / 2)

/* What the last read saw in one slot. */
struct slot_seen {
	int32_t pid;     /* owner (0: free or not yet seen) */
	int active;      /* the counting library ran in it */
	int counted;     /* the owner is in procs */
	uint64_t nused;  /* functions below this are in last[] */
	struct libflops_counter last[LIBFLOPS_MAX_FUNCS];
};

struct lib_counts {
	struct libflops_region *r;
	unsigned nfuncs;
	struct libflops_counter retired[LIBFLOPS_MAX_FUNCS]; /* of slots given up */
	struct slot_seen seen[LIBFLOPS_MAX_PROCS];
	uint64_t procs, lost, freed;
};

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

int lib_counts_new(struct lib_counts **out, struct libflops_region *r)
{
	struct lib_counts *lc = calloc(1, sizeof(*lc));

	*out = NULL;
	if (!lc)
		return -ENOMEM;
	lc->r = r;
	lc->nfuncs = libflops_nfuncs < LIBFLOPS_MAX_FUNCS ? libflops_nfuncs : LIBFLOPS_MAX_FUNCS;
	*out = lc;
	return 0;
}

void lib_counts_free(struct lib_counts *lc)
{
	free(lc);
}

/* The owner of @s gave up its slot: what it counted stays in the totals. */
static void retire(struct lib_counts *lc, struct slot_seen *s)
{
	for (unsigned f = 0; f < s->nused && f < lc->nfuncs; f++) {
		lc->retired[f].calls = add_sat(lc->retired[f].calls, s->last[f].calls);
		lc->retired[f].flops = add_sat(lc->retired[f].flops, s->last[f].flops);
	}
	memset(s, 0, sizeof(*s));
}

/* Copy slot @p's counters into @s, as process @pid's. The region is the
 * target's to write: every count is taken as it is, and one that went down
 * (the slot was zeroed for a new owner of the same pid, or the target wrote
 * it) starts a new owner, so that the totals never decrease. With @check,
 * a slot given to another process during the copy (the counting library
 * changes the pid first, then zeroes the counters) is left for the next
 * read; without, the caller holds the slot (free_slot()). */
static void take(struct lib_counts *lc, const struct libflops_proc *p, struct slot_seen *s, int32_t pid, int check)
{
	uint64_t n = __atomic_load_n(&p->nused, __ATOMIC_ACQUIRE);
	struct libflops_counter cur[LIBFLOPS_MAX_FUNCS];
	int down = 0;

	if (n > lc->nfuncs)
		n = lc->nfuncs;
	for (unsigned f = 0; f < n; f++) {
		cur[f].calls = __atomic_load_n(&p->f[f].calls, __ATOMIC_RELAXED);
		cur[f].flops = __atomic_load_n(&p->f[f].flops, __ATOMIC_RELAXED);
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (check && __atomic_load_n(&p->pid, __ATOMIC_RELAXED) != pid)
		return;
	for (unsigned f = 0; f < n && f < s->nused; f++)
		down |= cur[f].calls < s->last[f].calls || cur[f].flops < s->last[f].flops;
	if (down || n < s->nused) {
		int active = s->active, counted = s->counted;
		retire(lc, s);
		s->active = active;
		s->counted = counted;
	}
	s->pid = pid;
	memcpy(s->last, cur, n * sizeof(cur[0]));
	s->nused = n;
	if (__atomic_load_n(&p->active, __ATOMIC_RELAXED))
		s->active = 1;
	if (s->active && !s->counted) {
		s->counted = 1;
		lc->procs++;
	}
}

/* Whether process @pid is gone (reaped): kill() says ESRCH. A process of
 * another user says EPERM: it exists. */
static int gone(int32_t pid)
{
	return kill(pid, 0) != 0 && errno == ESRCH;
}

/* Take the final counts of exited @pid's slot and free it. The pid goes
 * to -1 first, which no process looks for and the counting library never
 * reuses, so nobody writes the slot while it is read and zeroed. */
static void free_slot(struct lib_counts *lc, struct libflops_proc *p, struct slot_seen *s, int32_t pid)
{
	int32_t want = pid;

	if (!__atomic_compare_exchange_n(&p->pid, &want, -1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return; /* taken over by the counting library meanwhile: the next read sees it */
	take(lc, p, s, pid, 0);
	retire(lc, s);
	__atomic_store_n(&p->active, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&p->nused, 0, __ATOMIC_RELAXED);
	for (unsigned f = 0; f < lc->nfuncs; f++) {
		__atomic_store_n(&p->f[f].calls, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&p->f[f].flops, 0, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&p->pid, 0, __ATOMIC_RELEASE);
	lc->freed++;
}

void lib_counts_read(struct lib_counts *lc)
{
	int32_t pids[LIBFLOPS_MAX_PROCS];
	int nfree = 0;

	if (!lc)
		return;
	for (int i = 0; i < LIBFLOPS_MAX_PROCS; i++) {
		struct libflops_proc *p = &lc->r->procs[i];
		struct slot_seen *s = &lc->seen[i];
		int32_t pid = __atomic_load_n(&p->pid, __ATOMIC_ACQUIRE);

		pids[i] = pid;
		if (s->pid && pid != s->pid) {
			/* given to another process since the last read (the
			 * recorder frees slots itself, and forgets them then):
			 * what the old one counted after that read is lost */
			if (s->active)
				lc->lost++;
			retire(lc, s);
		}
		if (pid == 0)
			nfree++;
		if (pid <= 0)
			continue;
		take(lc, p, s, pid, 1);
	}
	if (nfree >= FREE_LOW)
		return;
	for (int i = 0; i < LIBFLOPS_MAX_PROCS; i++)
		if (pids[i] > 0 && lc->seen[i].pid == pids[i] && gone(pids[i]))
			free_slot(lc, &lc->r->procs[i], &lc->seen[i], pids[i]);
}

static void sum_into(uint64_t out[LIBFLOPS_WORDS], const struct libflops_counter *c, uint64_t n)
{
	for (unsigned f = 0; f < n; f++) {
		out[0] = add_sat(out[0], c[f].calls);
		out[1 + libflops_funcs[f].prec] = add_sat(out[1 + libflops_funcs[f].prec], c[f].flops);
	}
}

void lib_counts_sum(const struct lib_counts *lc, uint64_t out[LIBFLOPS_WORDS])
{
	memset(out, 0, LIBFLOPS_WORDS * sizeof(out[0]));
	if (!lc)
		return;
	/* the functions a process used only (a few of the 120) */
	sum_into(out, lc->retired, lc->nfuncs);
	for (int i = 0; i < LIBFLOPS_MAX_PROCS; i++)
		if (lc->seen[i].pid)
			sum_into(out, lc->seen[i].last, lc->seen[i].nused);
}

struct libflops_counter lib_counts_func(const struct lib_counts *lc, unsigned f)
{
	struct libflops_counter c = { 0, 0 };

	if (!lc || f >= lc->nfuncs)
		return c;
	c = lc->retired[f];
	for (int i = 0; i < LIBFLOPS_MAX_PROCS; i++) {
		const struct slot_seen *s = &lc->seen[i];
		if (s->pid && f < s->nused) {
			c.calls = add_sat(c.calls, s->last[f].calls);
			c.flops = add_sat(c.flops, s->last[f].flops);
		}
	}
	return c;
}

uint64_t lib_counts_procs(const struct lib_counts *lc)
{
	return lc ? lc->procs : 0;
}

uint64_t lib_counts_procs_lost(const struct lib_counts *lc)
{
	return lc ? lc->lost : 0;
}

uint64_t lib_counts_procs_freed(const struct lib_counts *lc)
{
	return lc ? lc->freed : 0;
}
