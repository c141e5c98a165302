#include "lib_counts.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* Free the slots of exited processes only when fewer slots than this are
 * free: until then the counting library never reuses one, and a program of
 * fewer processes never has its slots touched. */
#define FREE_LOW (LIBFLOPS_MAX_PROCS / 2)

/* What the last read saw in one slot: the first n functions of its
 * process's list (ids[], in the order of their first calls) and their
 * counters, by id in last[] (0 for every other id). */
struct slot_seen {
	int32_t pid;     /* owner (0: free or not yet seen) */
	int active;      /* the counting library ran in it */
	int counted;     /* the owner is in procs */
	uint32_t n;
	uint64_t running; /* calls begun and not yet returned (libflops_running()) */
	uint16_t ids[LIBFLOPS_MAX_FUNCS];
	struct libflops_counter last[LIBFLOPS_MAX_FUNCS];
};

struct lib_counts {
	struct libflops_region *r;
	struct libflops_counter retired[LIBFLOPS_MAX_FUNCS]; /* of slots given up, by id */
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
	for (uint32_t i = 0; i < s->n; i++) {
		unsigned id = s->ids[i];
		lc->retired[id].calls = add_sat(lc->retired[id].calls, s->last[id].calls);
		lc->retired[id].flops = add_sat(lc->retired[id].flops, s->last[id].flops);
	}
	memset(s, 0, sizeof(*s));
}

/* Copy slot @p's counters into @s, as process @pid's. The region is the
 * target's to write: every count is taken as it is, and a list that is
 * not the last read's extended, or a count that went down (the slot was
 * zeroed for a new owner of the same pid, or the target wrote it), starts
 * a new owner, so that the totals never decrease. The list is read up to
 * its first entry still being written (a first call, right now): the rest
 * shows at the next read. With @check, a slot given to another process
 * during the copy (the counting library changes the pid first, then zeroes
 * the counters) is left for the next read; without, the caller holds the
 * slot (free_slot()). */
static void take(struct lib_counts *lc, const struct libflops_proc *p, struct slot_seen *s, int32_t pid, int check)
{
	uint32_t n = libflops_list_len(p), k = 0;
	uint16_t ids[LIBFLOPS_MAX_FUNCS];
	struct libflops_counter cur[LIBFLOPS_MAX_FUNCS];
	uint64_t calls = 0, running;
	int down = 0;

	for (; k < n; k++) {
		int id = libflops_list_id(p, k);
		if (id < 0)
			break;
		ids[k] = (uint16_t)id;
		cur[k].calls = __atomic_load_n(&p->f[id].calls, __ATOMIC_RELAXED);
		cur[k].flops = __atomic_load_n(&p->f[id].flops, __ATOMIC_RELAXED);
		calls = add_sat(calls, cur[k].calls);
	}
	/* after the calls (it fences): a function being listed right now
	 * reads as one call still running, until the next read */
	running = libflops_running(p, calls);
	if (check && __atomic_load_n(&p->pid, __ATOMIC_RELAXED) != pid)
		return;
	down = k < s->n;
	for (uint32_t i = 0; !down && i < s->n; i++)
		down = ids[i] != s->ids[i] || cur[i].calls < s->last[ids[i]].calls ||
		       cur[i].flops < s->last[ids[i]].flops;
	if (down) {
		int active = s->active, counted = s->counted;
		retire(lc, s);
		s->active = active;
		s->counted = counted;
	}
	s->pid = pid;
	for (uint32_t i = 0; i < k; i++) {
		s->ids[i] = ids[i];
		s->last[ids[i]] = cur[i];
	}
	s->n = k;
	s->running = running;
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
	libflops_proc_clear(p);
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
		/* killed inside a call: it will never return */
		if (s->running && gone(pid))
			s->running = 0;
	}
	if (nfree >= FREE_LOW)
		return;
	for (int i = 0; i < LIBFLOPS_MAX_PROCS; i++)
		if (pids[i] > 0 && lc->seen[i].pid == pids[i] && gone(pids[i]))
			free_slot(lc, &lc->r->procs[i], &lc->seen[i], pids[i]);
}

static void add_func(uint64_t out[LIBFLOPS_WORDS], unsigned id, struct libflops_counter c)
{
	out[LIBFLOPS_W_CALLS] = add_sat(out[LIBFLOPS_W_CALLS], c.calls);
	if (libflops_funcs[id].op == LIBFLOPS_UNKNOWN)
		out[LIBFLOPS_W_UNKNOWN] = add_sat(out[LIBFLOPS_W_UNKNOWN], c.calls);
	else
		out[LIBFLOPS_W_FLOPS + libflops_funcs[id].prec] =
			add_sat(out[LIBFLOPS_W_FLOPS + libflops_funcs[id].prec], c.flops);
}

void lib_counts_sum(const struct lib_counts *lc, uint64_t out[LIBFLOPS_WORDS])
{
	memset(out, 0, LIBFLOPS_WORDS * sizeof(out[0]));
	if (!lc)
		return;
	for (unsigned id = 0; id < libflops_nfuncs; id++)
		if (lc->retired[id].calls)
			add_func(out, id, lc->retired[id]);
	/* the functions a process called only (a few of the 338) */
	for (int i = 0; i < LIBFLOPS_MAX_PROCS; i++) {
		const struct slot_seen *s = &lc->seen[i];
		for (uint32_t j = 0; s->pid && j < s->n; j++)
			add_func(out, s->ids[j], s->last[s->ids[j]]);
	}
}

uint64_t lib_counts_running(const struct lib_counts *lc)
{
	uint64_t n = 0;

	for (int i = 0; lc && i < LIBFLOPS_MAX_PROCS; i++)
		if (lc->seen[i].pid)
			n = add_sat(n, lc->seen[i].running);
	return n;
}

struct libflops_counter lib_counts_func(const struct lib_counts *lc, unsigned f)
{
	struct libflops_counter c = { 0, 0 };

	if (!lc || f >= libflops_nfuncs)
		return c;
	c = lc->retired[f];
	for (int i = 0; i < LIBFLOPS_MAX_PROCS; i++) {
		const struct slot_seen *s = &lc->seen[i];
		if (s->pid) {
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
