/* The markers' processes and threads (markers_impl.h): tables with caps. */
#include "markers_impl.h"

/* Open phases of all threads at once: two per thread of the cap on
 * average, and a whole stack for one (about 600 bytes each). */
size_t markers_max_open_phases(const struct markers *m)
{
	size_t n = 2 * m->max_threads;
	return n > MAX_DEPTH ? n : MAX_DEPTH;
}

int markers_refuse(struct markers *m, int which)
{
	m->refused |= which;
	return 0;
}

struct proc *markers_proc_find(struct markers *m, int32_t pid)
{
	int i = idmap_get(&m->proc_idx, (uint64_t)(uint32_t)pid);
	return i < 0 ? NULL : &m->procs[i];
}

/* Drop the processes that hold nothing (no step open, no loss to explain)
 * and index the rest again. */
static int procs_purge(struct markers *m)
{
	size_t n = 0;

	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].open || m->procs[i].debt)
			m->procs[n++] = m->procs[i];
	m->nprocs = n;
	idmap_fini(&m->proc_idx);
	for (size_t i = 0; i < n; i++)
		if (idmap_put(&m->proc_idx, (uint64_t)(uint32_t)m->procs[i].pid, (int)i))
			return -ENOMEM;
	return 0;
}

/* The process @pid, made when new. NULL with *err -ENOMEM, or with *err 0
 * when the table is full (max_procs processes hold an open step or a
 * loss to explain): the caller drops the record (markers_refuse()). */
struct proc *markers_proc_get(struct markers *m, int32_t pid, int *err)
{
	struct proc *p = markers_proc_find(m, pid);

	*err = 0;
	if (p)
		return p;
	if (m->nprocs >= m->max_procs) {
		if (m->fed < m->procs_capped.retry_at)
			return NULL;
		if ((*err = procs_purge(m)))
			return NULL;
		if (m->nprocs >= m->max_procs) {
			m->procs_capped.retry_at = m->fed + PURGE_EVERY(m->max_procs);
			return NULL;
		}
	}
	if (array_grow(&m->procs, &m->cap_procs, m->nprocs + 1, sizeof(*m->procs)) ||
	    idmap_put(&m->proc_idx, (uint64_t)(uint32_t)pid, (int)m->nprocs)) {
		*err = -ENOMEM;
		return NULL;
	}
	p = &m->procs[m->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

static size_t tid_hash(int32_t tid, size_t cap)
{
	/* seeded: a target cannot forge tids that share one run of slots */
	return (size_t)idmap_mix((uint32_t)tid) & (cap - 1);
}

/* Rehash the thread table into @ncap slots, dropping the threads with no
 * open phase: a long run with thread churn (pools, loaders) must not keep a
 * slot for every thread that ever marked. */
static int threads_rehash(struct markers *m, size_t ncap)
{
	struct thread *nt = calloc(ncap, sizeof(*nt));
	size_t n = 0;

	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap_threads; i++) {
		struct thread *t = &m->threads[i];
		if (!t->tid)
			continue;
		if (t->depth == 0 && t->debt == 0) {
			free(t->stack);
			continue;
		}
		size_t h = tid_hash(t->tid, ncap);
		while (nt[h].tid)
			h = (h + 1) & (ncap - 1);
		nt[h] = *t;
		n++;
	}
	free(m->threads);
	m->threads = nt;
	m->cap_threads = ncap;
	m->nthreads = n;
	return 0;
}

static int threads_grow(struct markers *m)
{
	size_t live = 0;
	for (size_t i = 0; i < m->cap_threads; i++)
		live += m->threads[i].tid && (m->threads[i].depth > 0 || m->threads[i].debt > 0);
	/* grow only if the threads with open phases fill a quarter of it */
	return threads_rehash(m, live * 4 >= m->cap_threads ? m->cap_threads * 2 : m->cap_threads);
}

/* The slot of thread @tid (0 stands as -1): the one holding it, or the
 * empty one where it would go. */
static struct thread *thread_slot(struct markers *m, int32_t tid)
{
	size_t h = tid_hash(tid, m->cap_threads);

	while (m->threads[h].tid && m->threads[h].tid != tid)
		h = (h + 1) & (m->cap_threads - 1);
	return &m->threads[h];
}

/* The thread @tid (of @pid) if it is known, else NULL (nothing is made:
 * an end or a model with nothing open needs no slot). A tid reused by
 * another process is a new thread: no debt carries over. */
struct thread *markers_thread_find(struct markers *m, int32_t pid, int32_t tid)
{
	struct thread *t = thread_slot(m, tid ? tid : -1);

	if (!t->tid)
		return NULL;
	if (t->pid != pid)
		t->debt = 0; /* another process's loss explains nothing here */
	t->pid = pid;
	return t;
}

/* The thread @tid of @pid, made when new. NULL with *err -ENOMEM, or with
 * *err 0 when the table is full (max_threads threads hold open phases or
 * a loss to explain): the caller drops the record (markers_refuse()). */
struct thread *markers_thread_get(struct markers *m, int32_t pid, int32_t tid, int *err)
{
	struct thread *t = markers_thread_find(m, pid, tid);

	*err = 0;
	if (t)
		return t;
	if (m->nthreads >= m->max_threads) {
		if (m->fed < m->threads_capped.retry_at)
			return NULL;
		if ((*err = threads_rehash(m, m->cap_threads)))
			return NULL;
		if (m->nthreads >= m->max_threads) {
			m->threads_capped.retry_at = m->fed + PURGE_EVERY(m->max_threads);
			return NULL;
		}
	}
	if ((m->nthreads + 1) * 2 > m->cap_threads && (*err = threads_grow(m)))
		return NULL;
	t = thread_slot(m, tid ? tid : -1); /* again: a rehash moved the slots */
	t->tid = tid ? tid : -1;
	t->pid = pid;
	m->nthreads++;
	return t;
}
