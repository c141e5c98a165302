/* lib_counts: the whole target's library calls from the region's slots.
 * The region is made here, and its slots written as the counting library
 * writes them: totals, processes that exit, slots that change hands. */
#include "check.h"
#include "record/counters/lib_counts.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned func_id(const char *name)
{
	for (unsigned i = 0; i < libflops_nfuncs; i++)
		if (strcmp(libflops_funcs[i].name, name) == 0)
			return i;
	fprintf(stderr, "no function %s\n", name);
	exit(1);
}

/* What the counting library does on a call of @f in slot @p: begun at its
 * entry, counted when it returns. */
static void count(struct libflops_proc *p, unsigned f, uint64_t flops)
{
	libflops_begin(p);
	libflops_add(p, f, flops);
}

static void claim(struct libflops_proc *p, int32_t pid)
{
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->active = 1;
}

/* A pid that no process has: a child that exited and was reaped. */
static int32_t dead_pid(void)
{
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	waitpid(c, NULL, 0);
	return (int32_t)c;
}

/* Calls running: begun, not returned (their FLOPs not in the totals yet). */
static void test_running(int32_t me)
{
	struct libflops_region *r = calloc(1, libflops_region_size());
	struct lib_counts *lc = NULL;
	unsigned dgemm = func_id("cblas_dgemm");
	uint64_t w[LIBFLOPS_WORDS], calls;
	struct libflops_proc *rp;

	CHECK(r != NULL);
	libflops_region_init(r);
	CHECK_EQ_INT(lib_counts_new(&lc, r), 0);
	rp = &r->procs[3];
	claim(rp, me);
	count(rp, dgemm, 1);
	lib_counts_read(lc);
	CHECK_EQ_INT(lib_counts_running(lc), 0);
	lib_counts_sum(lc, w);
	calls = w[LIBFLOPS_W_CALLS];
	CHECK_EQ_INT(calls, 1);
	libflops_begin(rp);
	libflops_begin(rp);
	lib_counts_read(lc);
	CHECK_EQ_INT(lib_counts_running(lc), 2);
	lib_counts_sum(lc, w);
	CHECK_EQ_INT(w[LIBFLOPS_W_CALLS], calls);
	/* one returns counted, the other not (a workspace query): none */
	libflops_add(rp, dgemm, 10);
	libflops_unbegin(rp);
	lib_counts_read(lc);
	CHECK_EQ_INT(lib_counts_running(lc), 0);
	lib_counts_sum(lc, w);
	CHECK_EQ_INT(w[LIBFLOPS_W_CALLS], calls + 1);
	/* fewer begun than counted (a call begun before the counting library
	 * had the slot): none running, not a negative count */
	libflops_add(rp, dgemm, 10);
	lib_counts_read(lc);
	CHECK_EQ_INT(lib_counts_running(lc), 0);
	libflops_begin(rp);
	libflops_begin(rp);
	lib_counts_read(lc);
	CHECK_EQ_INT(lib_counts_running(lc), 1);
	/* a process killed inside a call (gone, its slot still held): the
	 * call will never return */
	struct libflops_proc *dp = &r->procs[5];
	claim(dp, dead_pid());
	libflops_begin(dp);
	lib_counts_read(lc);
	CHECK_EQ_INT(lib_counts_running(lc), 1);
	/* a slot given up: its process has exited, nothing of it runs */
	rp->pid = 0;
	lib_counts_read(lc);
	CHECK_EQ_INT(lib_counts_running(lc), 0);
	lib_counts_free(lc);
	free(r);
}

int main(void)
{
	struct libflops_region *r = calloc(1, libflops_region_size());
	struct lib_counts *lc = NULL;
	unsigned dgemm = func_id("cblas_dgemm"), sgemm = func_id("sgemm_");
	uint64_t w[LIBFLOPS_WORDS];
	int32_t me = (int32_t)getpid(), dead = dead_pid();

	CHECK(r != NULL);
	libflops_region_init(r);
	CHECK_EQ_INT(lib_counts_new(&lc, r), 0);

	/* nothing counted: zeros, not unknown (the caller says unknown) */
	lib_counts_read(lc);
	lib_counts_sum(lc, w);
	CHECK_EQ_INT(w[0], 0);

	/* two processes: one alive, one that has exited since */
	claim(&r->procs[0], me);
	count(&r->procs[0], dgemm, 2 * 64 * 64 * 64);
	count(&r->procs[0], sgemm, 1000);
	claim(&r->procs[1], dead);
	count(&r->procs[1], dgemm, 500);
	lib_counts_read(lc);
	lib_counts_sum(lc, w);
	CHECK_EQ_INT(w[0], 3);
	CHECK_EQ_INT(w[1 + LIBFLOPS_FP64], 2 * 64 * 64 * 64 + 500);
	CHECK_EQ_INT(w[1 + LIBFLOPS_FP32], 1000);
	CHECK_EQ_INT(lib_counts_func(lc, dgemm).calls, 2);
	CHECK_EQ_INT(lib_counts_func(lc, dgemm).flops, 2 * 64 * 64 * 64 + 500);
	CHECK_EQ_INT(lib_counts_func(lc, libflops_nfuncs + 5).calls, 0);
	CHECK_EQ_INT(lib_counts_procs(lc), 2);
	/* most slots free: the exited process's slot is left alone */
	CHECK_EQ_INT(r->procs[1].pid, dead);
	CHECK_EQ_INT(lib_counts_procs_freed(lc), 0);

	/* more calls: the totals grow by them */
	count(&r->procs[0], dgemm, 10);
	lib_counts_read(lc);
	lib_counts_sum(lc, w);
	CHECK_EQ_INT(w[0], 4);
	CHECK_EQ_INT(w[1 + LIBFLOPS_FP64], 2 * 64 * 64 * 64 + 510);

	/* a slot given to a new process between two reads (the counting
	 * library zeroes it): the old counts stay, the new ones add, and the
	 * old process's calls after the last read may be lost */
	claim(&r->procs[2], dead);
	count(&r->procs[2], sgemm, 7);
	lib_counts_read(lc);
	count(&r->procs[2], sgemm, 7); /* after the read: lost with the slot */
	claim(&r->procs[2], me);
	count(&r->procs[2], sgemm, 3);
	lib_counts_read(lc);
	lib_counts_sum(lc, w);
	CHECK_EQ_INT(w[1 + LIBFLOPS_FP32], 1000 + 7 + 3);
	CHECK_EQ_INT(lib_counts_procs_lost(lc), 1);

	/* counts that go down in a slot (the target wrote its region): the
	 * totals never do */
	uint64_t before = w[1 + LIBFLOPS_FP64];
	r->procs[0].f[dgemm].flops = 1;
	lib_counts_read(lc);
	lib_counts_sum(lc, w);
	CHECK(w[1 + LIBFLOPS_FP64] >= before);
	before = w[1 + LIBFLOPS_FP64];

	/* the table fills up: an exited process's slot is read one last time
	 * and freed (pid 0, zeroed) before the counting library would give
	 * it away, and the totals keep its counts */
	for (int i = 3; i < LIBFLOPS_MAX_PROCS / 2 + 4; i++)
		claim(&r->procs[i], me);
	count(&r->procs[1], dgemm, 40); /* the exited process's last call */
	lib_counts_read(lc);
	lib_counts_sum(lc, w);
	CHECK_EQ_INT(r->procs[1].pid, 0);
	CHECK_EQ_INT(r->procs[1].nlist, 0);
	CHECK_EQ_INT(r->procs[1].listed[dgemm], 0);
	CHECK_EQ_INT(r->procs[1].f[dgemm].calls, 0);
	CHECK_EQ_INT(lib_counts_procs_freed(lc), 1);
	CHECK_EQ_INT(w[1 + LIBFLOPS_FP64], before + 40);
	/* the live ones are left alone */
	CHECK_EQ_INT(r->procs[0].pid, me);
	/* and a new process in the freed slot adds to the totals */
	claim(&r->procs[1], me);
	count(&r->procs[1], dgemm, 5);
	lib_counts_read(lc);
	lib_counts_sum(lc, w);
	CHECK_EQ_INT(w[1 + LIBFLOPS_FP64], before + 45);
	CHECK_EQ_INT(lib_counts_procs_lost(lc), 1);

	/* a list entry still being written (a first call, right now): the
	 * read stops there, and takes it at the next read */
	unsigned daxpy = func_id("daxpy_"), dsyev = func_id("dsyev_");
	struct libflops_proc *q = &r->procs[LIBFLOPS_MAX_PROCS - 1];
	uint64_t fp32 = w[1 + LIBFLOPS_FP32];
	claim(q, me);
	count(q, dgemm, 100);
	q->f[daxpy].calls = 1;
	q->f[daxpy].flops = 8;
	q->listed[daxpy] = 1;
	q->nlist = 2; /* entry 1 not written yet */
	count(q, sgemm, 20);     /* listed third, behind the one in progress */
	lib_counts_read(lc);
	lib_counts_sum(lc, w);
	CHECK_EQ_INT(w[1 + LIBFLOPS_FP64], before + 45 + 100);
	CHECK_EQ_INT(w[1 + LIBFLOPS_FP32], fp32);
	q->list[1] = (uint16_t)(daxpy + 1);
	lib_counts_read(lc);
	lib_counts_sum(lc, w);
	CHECK_EQ_INT(w[1 + LIBFLOPS_FP64], before + 45 + 100 + 8);
	CHECK_EQ_INT(w[1 + LIBFLOPS_FP32], fp32 + 20);
	CHECK_EQ_INT(lib_counts_func(lc, daxpy).calls, 1);

	/* a function whose FLOPs are unknown: a call, in the unknown word,
	 * and none of its (0) FLOPs in any precision */
	uint64_t calls = w[LIBFLOPS_W_CALLS];
	CHECK_EQ_INT(libflops_funcs[dsyev].op, LIBFLOPS_UNKNOWN);
	count(q, dsyev, 0);
	lib_counts_read(lc);
	lib_counts_sum(lc, w);
	CHECK_EQ_INT(w[LIBFLOPS_W_CALLS], calls + 1);
	CHECK_EQ_INT(w[LIBFLOPS_W_UNKNOWN], 1);
	CHECK_EQ_INT(w[1 + LIBFLOPS_FP64], before + 45 + 100 + 8);

	test_running(me);

	lib_counts_free(lc);
	lib_counts_free(NULL);
	free(r);
	return check_status();
}
