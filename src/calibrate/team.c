#include "team.h"
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct worker {
	struct team *team;
	int idx;
	int cpu;
	pthread_t thread;
	uint64_t t0, t1;        /* CLOCK_MONOTONIC */
	uint64_t c0, c1;        /* CLOCK_THREAD_CPUTIME_ID */
};

struct team {
	int n;
	int started;            /* workers created (joined by team_free) */
	int quit;
	int gate;               /* 0: workers wait; 1: go; -1: abandoned (creation failed) */
	pthread_mutex_t lock;
	pthread_cond_t opened;
	team_fn fn;
	void *arg;
	pthread_barrier_t start, end;
	struct worker *w;
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *worker_main(void *p)
{
	struct worker *w = p;
	struct team *t = w->team;
	int gate;

	/* Wait until every worker exists: the barriers count all of them, so
	 * a worker must not enter one if the team could not be completed. */
	pthread_mutex_lock(&t->lock);
	while (t->gate == 0)
		pthread_cond_wait(&t->opened, &t->lock);
	gate = t->gate;
	pthread_mutex_unlock(&t->lock);
	if (gate < 0)
		return NULL;
	for (;;) {
		pthread_barrier_wait(&t->start);
		if (t->quit)
			break;
		w->c0 = thread_cpu_ns();
		w->t0 = now_ns();
		t->fn(t->arg, w->idx);
		w->t1 = now_ns();
		w->c1 = thread_cpu_ns();
		pthread_barrier_wait(&t->end);
	}
	return NULL;
}

int team_allowed_cpus(int *cpus, int max, int *n)
{
	size_t setsize;
	cpu_set_t *set = NULL;
	int ncpus = 1024, err = 0;

	*n = 0;
	/* The kernel's mask can be wider than cpu_set_t: grow until it fits. */
	for (;;) {
		set = CPU_ALLOC(ncpus);
		if (!set)
			return -ENOMEM;
		setsize = CPU_ALLOC_SIZE(ncpus);
		CPU_ZERO_S(setsize, set);
		if (sched_getaffinity(0, setsize, set) == 0)
			break;
		err = -errno;
		CPU_FREE(set);
		set = NULL;
		if (err != -EINVAL || ncpus >= (1 << 20))
			return err;
		ncpus *= 2;
	}
	for (int c = 0; c < ncpus && *n < max; c++)
		if (CPU_ISSET_S(c, setsize, set))
			cpus[(*n)++] = c;
	CPU_FREE(set);
	return *n > 0 ? 0 : -ENOENT;
}

int team_new(const int *cpus, int n, struct team **out)
{
	struct team *t;
	pthread_attr_t attr;
	int err = 0, have_attr = 0;

	*out = NULL;
	if (n < 1 || n > TEAM_MAX)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->n = n;
	t->w = calloc((size_t)n, sizeof(*t->w));
	if (!t->w) {
		free(t);
		return -ENOMEM;
	}
	/* The main thread takes part in both barriers. */
	pthread_barrier_init(&t->start, NULL, (unsigned)n + 1);
	pthread_barrier_init(&t->end, NULL, (unsigned)n + 1);
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->opened, NULL);

	err = -pthread_attr_init(&attr);
	if (err)
		goto fail;
	have_attr = 1;
	for (int i = 0; i < n; i++) {
		cpu_set_t set;

		if (cpus[i] < 0 || cpus[i] >= CPU_SETSIZE) {
			err = -EINVAL;
			goto fail;
		}
		CPU_ZERO(&set);
		CPU_SET(cpus[i], &set);
		/* Pinned from its first instruction: no migration to undo. */
		err = -pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		if (err)
			goto fail;
		t->w[i] = (struct worker){ .team = t, .idx = i, .cpu = cpus[i] };
		err = -pthread_create(&t->w[i].thread, &attr, worker_main, &t->w[i]);
		if (err)
			goto fail;
		t->started++;
	}
	pthread_attr_destroy(&attr);
	pthread_mutex_lock(&t->lock);
	t->gate = 1;
	pthread_cond_broadcast(&t->opened);
	pthread_mutex_unlock(&t->lock);
	*out = t;
	return 0;
fail:
	if (have_attr)
		pthread_attr_destroy(&attr);
	team_free(t);
	return err;
}

int team_run(struct team *t, team_fn fn, void *arg, struct team_timing *timing)
{
	uint64_t first = UINT64_MAX, last = 0;
	double share = 1.0;

	if (!t || !fn)
		return -EINVAL;
	t->fn = fn;
	t->arg = arg;
	pthread_barrier_wait(&t->start);
	pthread_barrier_wait(&t->end);
	for (int i = 0; i < t->n; i++) {
		first = t->w[i].t0 < first ? t->w[i].t0 : first;
		last = t->w[i].t1 > last ? t->w[i].t1 : last;
		if (t->w[i].t1 > t->w[i].t0 && t->w[i].c1 >= t->w[i].c0) {
			double s = (double)(t->w[i].c1 - t->w[i].c0) / (double)(t->w[i].t1 - t->w[i].t0);
			share = s < share ? s : share;
		}
	}
	if (timing) {
		timing->wall_s = (double)(last - first) * 1e-9;
		timing->cpu_share = share;
	}
	return 0;
}

int team_size(const struct team *t)
{
	return t ? t->n : 0;
}

int team_cpu(const struct team *t, int idx)
{
	return t && idx >= 0 && idx < t->n ? t->w[idx].cpu : -1;
}

void team_free(struct team *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	if (t->gate == 0) {
		/* A partly created team: release the workers at the gate. */
		t->gate = -1;
		pthread_cond_broadcast(&t->opened);
		pthread_mutex_unlock(&t->lock);
	} else {
		pthread_mutex_unlock(&t->lock);
		t->quit = 1;
		pthread_barrier_wait(&t->start);
	}
	for (int i = 0; i < t->started; i++)
		pthread_join(t->w[i].thread, NULL);
	pthread_barrier_destroy(&t->start);
	pthread_barrier_destroy(&t->end);
	pthread_cond_destroy(&t->opened);
	pthread_mutex_destroy(&t->lock);
	free(t->w);
	free(t);
}
