/*
 * ranks: one rank of a job whose slow rank is slow on purpose, for the
 * merged reports (tests/e2e/test_merge.py, test_mpi.py). Every rank runs
 * the same command; its rank decides its work.
 *
 *   --steps N        steps to run (default 5)
 *   --busy-us US     spin this long inside each step (CLOCK_MONOTONIC;
 *                    default 10000)
 *   --slow-rank R    the rank that spins --slow-us more in each step
 *                    (default 1)
 *   --slow-us US     (default 10000)
 *   --flops F        model FLOPs each step declares (default 1e6); the slow
 *                    rank declares the same: its extra time is waste
 *   --steps-of R N   rank R runs N steps instead (not with MPI: the
 *                    barriers would wait for it)
 *
 * Built without MPI (wl_ranks) it takes its rank from the launcher's
 * variables (OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID; 0 without), as
 * test_merge.py sets them by hand. Built with MPI (-DWITH_MPI, wl_mpi_ranks)
 * it asks MPI, and all ranks meet at a barrier before each step begins:
 * outside the timed step, so each step's time is the rank's own work and
 * the slow rank's steps are the long ones. With the barrier inside the
 * step every rank's step would last as long as the slowest's, the fast
 * ones waiting in MPI (docs/ranks.md, "Reading a job").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mfu.h"

#ifdef WITH_MPI
#include <mpi.h>
#endif

static unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void spin_us(long us)
{
	unsigned long long end = now_ns() + (unsigned long long)us * 1000;
	while (now_ns() < end)
		;
}

static long num(const char *opt, const char *v)
{
	char *end;
	long x;

	if (!v) {
		fprintf(stderr, "ranks: %s needs a value\n", opt);
		exit(2);
	}
	x = strtol(v, &end, 10);
	if (*end || x < 0) {
		fprintf(stderr, "ranks: %s: bad number '%s'\n", opt, v);
		exit(2);
	}
	return x;
}

#ifndef WITH_MPI
static long env_rank(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i]))
			return num(vars[i], getenv(vars[i]));
	return 0;
}
#endif

int main(int argc, char **argv)
{
	long steps = 5, busy = 10000, slow_rank = 1, slow_us = 10000, rank, other_rank = -1, other_steps = 0;
	double flops = 1e6;

#ifdef WITH_MPI
	int r;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	rank = r;
#else
	rank = env_rank();
#endif
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--steps")) steps = num(a, v), i++;
		else if (!strcmp(a, "--busy-us")) busy = num(a, v), i++;
		else if (!strcmp(a, "--slow-rank")) slow_rank = num(a, v), i++;
		else if (!strcmp(a, "--slow-us")) slow_us = num(a, v), i++;
		else if (!strcmp(a, "--flops")) flops = (double)num(a, v), i++;
		else if (!strcmp(a, "--steps-of") && i + 2 < argc) {
			other_rank = num(a, argv[i + 1]);
			other_steps = num(a, argv[i + 2]);
			i += 2;
		} else {
			fprintf(stderr, "ranks: unknown option '%s'\n", a);
			return 2;
		}
	}
	if (rank == other_rank)
		steps = other_steps;
	for (long s = 0; s < steps; s++) {
#ifdef WITH_MPI
		/* the ranks start each step together; the wait is not in it */
		MPI_Barrier(MPI_COMM_WORLD);
#endif
		mfu_step_begin();
		mfu_step_model(flops, NAN); /* bytes: unknown */
		spin_us(busy + (rank == slow_rank ? slow_us : 0));
		mfu_step_end();
	}
#ifdef WITH_MPI
	MPI_Finalize();
#endif
	return 0;
}
