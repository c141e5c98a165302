/*
 * A team: worker threads, each pinned to one CPU, that run the same function
 * together. Every run starts all workers at a barrier and is timed from the
 * first worker's start to the last worker's end, so a figure computed as
 * total work / wall time is limited by the slowest worker.
 */
#ifndef MFU_CALIBRATE_TEAM_H
#define MFU_CALIBRATE_TEAM_H

#define TEAM_MAX 1024

struct team;

/* Work for worker @idx (0 .. n-1) of the team. */
typedef void (*team_fn)(void *arg, int idx);

/* The CPUs this process may run on (sched_getaffinity), ascending, at most
 * @max of them. Returns 0 or -errno. */
int team_allowed_cpus(int *cpus, int max, int *n);

/* Start @n workers, worker i pinned to @cpus[i]. Returns 0 or -errno
 * (-EINVAL: a CPU outside the affinity mask). */
int team_new(const int *cpus, int n, struct team **out);

/* What a run took. */
struct team_timing {
	double wall_s;          /* from the first worker's start to the last one's end */
	double cpu_share;       /* the lowest over the workers of (thread CPU time / its
				 * wall time): below 1 when another task shared a CPU */
};

/* A run whose cpu_share is below this was disturbed: its figure is low. */
#define TEAM_SHARE_OK 0.95

/* Run @fn(@arg, i) on every worker at once; @timing may be NULL. */
int team_run(struct team *t, team_fn fn, void *arg, struct team_timing *timing);

int team_size(const struct team *t);
int team_cpu(const struct team *t, int idx);

/* Stop and join the workers; accepts NULL. */
void team_free(struct team *t);

#endif
