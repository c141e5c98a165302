/*
 * unmarked_blas: a program as they come, for the tests of a run without
 * markers (tests/e2e/test_unmarked.py, docs/howto-no-markers.md): no
 * libmfu, no markers, built stripped (no .symtab: `--step FUNC` cannot name
 * its functions), calling OpenBLAS's cblas_dgemm, dgemm_ and cblas_sgemm
 * through the dynamic loader, as Debian's hpcc does.
 *
 *   --rounds R     rounds of work (default 40)
 *   --size N       each round: cblas_dgemm N x N x N, dgemm_ N x (N/2) x N,
 *                  cblas_sgemm N x N x (N/2) (default 96)
 *   --sleep-us U   sleep after each round (default 5000): the library FLOPs
 *                  come in bursts, so the MFU over time is not flat
 *   --procs P      after its own rounds, start P child processes one after
 *                  the other, each making --child-rounds rounds and exiting
 *                  (default 0): their counts must not be lost when they exit,
 *                  nor when more than the counting library's 64 process
 *                  slots have come and gone
 *   --child-rounds C  (default 2)
 *
 * It prints "flops F calls C" at the end: the FLOPs (2mnk per call) and
 * calls it made, all processes together, computed from its own arguments,
 * "checksum HEX" over the results, and "max_rate R": the highest FLOP/s of
 * one of its own calls (the first process's), each timed around the call
 * on CLOCK_MONOTONIC, the recorder's clock (no interval's library FLOP rate
 * can be truly above it: the calls run one after the other).
 */
#include <cblas.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k, const double *alpha,
	    const double *a, const int *lda, const double *b, const int *ldb, const double *beta, double *c,
	    const int *ldc);

static long arg(int argc, char **argv, const char *name, long def)
{
	for (int i = 1; i + 1 < argc; i++) {
		if (strcmp(argv[i], name) == 0) {
			char *end;
			long v;
			errno = 0;
			v = strtol(argv[i + 1], &end, 10);
			if (errno || *end || v < 0) {
				fprintf(stderr, "unmarked_blas: bad %s '%s'\n", name, argv[i + 1]);
				exit(2);
			}
			return v;
		}
	}
	return def;
}

static uint64_t hash = 0xcbf29ce484222325ull;
static double max_rate; /* FLOP/s, the fastest call */

static uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A call of @flops that began at @t0 has returned: its rate. */
static void timed(uint64_t t0, uint64_t flops)
{
	uint64_t dt = now() - t0;
	double rate = (double)flops * 1e9 / (double)(dt ? dt : 1);
	if (rate > max_rate)
		max_rate = rate;
}

static void mix(const void *p, size_t len)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < len; i++)
		hash = (hash ^ b[i]) * 0x100000001b3ull;
}

/* One round: three calls; returns their FLOPs. */
static uint64_t round_of(int n, double *da, double *db, double *dc, float *fa, float *fb, float *fc)
{
	const int h = n / 2 > 0 ? n / 2 : 1;
	const double one = 1.0, zero = 0.0;
	uint64_t N = (uint64_t)n, H = (uint64_t)h, t0;

	t0 = now();
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, da, n, db, n, 0.0, dc, n);
	timed(t0, 2 * N * N * N);
	mix(dc, (size_t)n * n * sizeof(*dc));
	/* column-major m = n, n = h, k = n */
	t0 = now();
	dgemm_("N", "N", &n, &h, &n, &one, da, &n, db, &n, &zero, dc, &n);
	timed(t0, 2 * N * H * N);
	mix(dc, (size_t)n * h * sizeof(*dc));
	t0 = now();
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, h, 1.0f, fa, h, fb, n, 0.0f, fc, n);
	timed(t0, 2 * N * N * H);
	mix(fc, (size_t)n * n * sizeof(*fc));
	return 2 * N * N * N + 2 * N * H * N + 2 * N * N * H;
}

static void work(long rounds, int n, long sleep_us, uint64_t *flops, uint64_t *calls)
{
	size_t nn = (size_t)n * (size_t)n;
	double *da = malloc(nn * sizeof(double)), *db = malloc(nn * sizeof(double)), *dc = malloc(nn * sizeof(double));
	float *fa = malloc(nn * sizeof(float)), *fb = malloc(nn * sizeof(float)), *fc = malloc(nn * sizeof(float));

	if (!da || !db || !dc || !fa || !fb || !fc) {
		fprintf(stderr, "unmarked_blas: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < nn; i++) {
		da[i] = 0.25 * (double)((i * 7) % 13) - 1.0;
		db[i] = 0.125 * (double)((i * 5) % 11) - 0.5;
		fa[i] = (float)da[i];
		fb[i] = (float)db[i];
	}
	for (long r = 0; r < rounds; r++) {
		*flops += round_of(n, da, db, dc, fa, fb, fc);
		*calls += 3;
		if (sleep_us) {
			struct timespec ts = { sleep_us / 1000000, (sleep_us % 1000000) * 1000 };
			while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
				;
		}
	}
	free(da);
	free(db);
	free(dc);
	free(fa);
	free(fb);
	free(fc);
}

int main(int argc, char **argv)
{
	long rounds = arg(argc, argv, "--rounds", 40), n = arg(argc, argv, "--size", 96);
	long sleep_us = arg(argc, argv, "--sleep-us", 5000), procs = arg(argc, argv, "--procs", 0);
	long child_rounds = arg(argc, argv, "--child-rounds", 2);
	uint64_t flops = 0, calls = 0;

	if (n < 1 || n > 4096) {
		fprintf(stderr, "unmarked_blas: --size from 1 to 4096\n");
		return 2;
	}
	work(rounds, (int)n, sleep_us, &flops, &calls);
	for (long p = 0; p < procs; p++) {
		int fds[2], st;
		uint64_t got[2] = { 0, 0 };
		pid_t pid;

		if (pipe(fds) != 0 || (pid = fork()) < 0) {
			perror("unmarked_blas: fork");
			return 1;
		}
		if (pid == 0) {
			close(fds[0]);
			work(child_rounds, (int)n, 0, &got[0], &got[1]);
			if (write(fds[1], got, sizeof(got)) != (ssize_t)sizeof(got))
				_exit(1);
			_exit(0);
		}
		close(fds[1]);
		if (read(fds[0], got, sizeof(got)) != (ssize_t)sizeof(got) || waitpid(pid, &st, 0) != pid ||
		    !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "unmarked_blas: child %ld failed\n", p);
			return 1;
		}
		close(fds[0]);
		flops += got[0];
		calls += got[1];
	}
	printf("flops %" PRIu64 " calls %" PRIu64 "\n", flops, calls);
	printf("checksum %016" PRIx64 "\n", hash);
	printf("max_rate %.6e\n", max_rate);
	return 0;
}
