/*
 * bench_libflops: what the counting library (libmfu-libflops.so) costs a
 * BLAS call, against the same calls without it, in the same invocation.
 *
 * It runs itself as a child in three configurations, alternating, --rounds
 * times: (a) bare (nothing preloaded), (b) the counting library preloaded
 * with no region (it finds the real function and forwards: what every call
 * pays), (c) preloaded with a region that this process created and
 * initialised as mfu-record does (memfd in MFU_LIBFLOPS_FD: forwarding and
 * counting). Each child times loops of cblas_sgemm at 4x4x4, 16x16x16 and
 * 64x64x64, and of cblas_ddot on 64 doubles (a level-1 call: the
 * cheapest kind counted), OPENBLAS_NUM_THREADS=1 (no thread pool in the
 * way), and, built with oneDNN, of dnnl_primitive_execute on a 4x4x4 f32
 * matmul primitive (the same primitive each time: its descriptor read once)
 * and of a matmul primitive created, executed and destroyed each time
 * (what PyTorch 1.13's convolutions do: the descriptor read at every
 * execution), OMP_NUM_THREADS=1, and prints the nanoseconds per call, the
 * best of 5 batches, and a hash of the results. The parent prints the median over the rounds per size and
 * configuration with its ratio to bare, checks that the results are the same
 * bytes in every configuration, and that the region counted exactly the calls
 * and FLOPs the child made.
 *
 * usage: bench_libflops [--rounds N] [--shim PATH]
 */
#include "libflops.h"
#include "libflops_list.h"
#include "bench_clock.h"

#include <cblas.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef LIBFLOPS_SO
#define LIBFLOPS_SO "libmfu-libflops.so"
#endif

#ifdef HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#define NSIZES 6  /* then cblas_ddot, a matmul primitive, one created each time */
#else
#define NSIZES 4  /* the last: cblas_ddot */
#endif
#define NGEMM 3
#define DOT_N 64
#define PRIM 4    /* the primitive cases: their index */
#define PRIM_NEW 5
#define BATCHES 5
#define MAX_ROUNDS 32
static const int sizes[6] = { 4, 16, 64, DOT_N, 4, 4 };
static const long calls_per_batch[6] = { 200000, 50000, 2000, 500000, 100000, 10000 };
enum { BARE, FORWARD, COUNT, NMODES };
static const char *const mode_names[NMODES] = { "bare", "forward", "count" };

#ifdef HAVE_DNNL
/* A 4x4x4 f32 matmul: its descriptor (with @pd_out), its primitive and
 * its memory (a, b, c as the primitive's src, weights, dst). */
static dnnl_engine_t eng;
static dnnl_stream_t strm;
static dnnl_memory_t mem_a, mem_b, mem_c;
static dnnl_primitive_desc_t mm_pd;

static int matmul_init(float *a, float *b, float *c)
{
	const dnnl_dims_t d = { 4, 4 };
	dnnl_memory_desc_t md;
	dnnl_matmul_desc_t op;

	if (dnnl_engine_create(&eng, dnnl_cpu, 0) || dnnl_stream_create(&strm, eng, dnnl_stream_default_flags) ||
	    dnnl_memory_desc_init_by_tag(&md, 2, d, dnnl_f32, dnnl_ab) || dnnl_memory_create(&mem_a, &md, eng, a) ||
	    dnnl_memory_create(&mem_b, &md, eng, b) || dnnl_memory_create(&mem_c, &md, eng, c) ||
	    dnnl_matmul_desc_init(&op, &md, &md, NULL, &md) || dnnl_primitive_desc_create(&mm_pd, &op, NULL, eng, NULL))
		return -1;
	return 0;
}

static int matmul_exec(dnnl_primitive_t p)
{
	const dnnl_exec_arg_t args[] = { { DNNL_ARG_SRC, mem_a }, { DNNL_ARG_WEIGHTS, mem_b }, { DNNL_ARG_DST, mem_c } };
	return dnnl_primitive_execute(p, strm, 3, args) != dnnl_success;
}
#endif

/* The child: time each size, print "SIZE NS_PER_CALL HASH" lines. */
static int child(void)
{
	static float a[64 * 64], b[64 * 64], c[64 * 64];
	static double x[DOT_N];
	double dot = 0;

	for (int i = 0; i < 64 * 64; i++) {
		a[i] = 0.125f * (float)((i * 7) % 13) - 0.75f;
		b[i] = 0.25f * (float)((i * 5) % 11) - 1.25f;
	}
	for (int i = 0; i < DOT_N; i++)
		x[i] = 0.5 * (double)(i % 9) - 2.0;
#ifdef HAVE_DNNL
	dnnl_primitive_t prim = NULL;
	if (matmul_init(a, b, c) || dnnl_primitive_create(&prim, mm_pd)) {
		fprintf(stderr, "bench_libflops: cannot make a oneDNN matmul\n");
		return 1;
	}
#endif
	for (int s = 0; s < NSIZES; s++) {
		int n = sizes[s];
		double best = 1e30;
		uint64_t h = 0xcbf29ce484222325ull;

		for (int r = 0; r < BATCHES; r++) {
			uint64_t t0 = now();
			if (s == NGEMM) {
				for (long i = 0; i < calls_per_batch[s]; i++) {
					dot = cblas_ddot(n, x, 1, x, 1);
					__asm__ volatile("" ::: "memory");
				}
			}
#ifdef HAVE_DNNL
			for (long i = 0; s == PRIM && i < calls_per_batch[s]; i++) {
				if (matmul_exec(prim))
					return 1;
				__asm__ volatile("" ::: "memory");
			}
			for (long i = 0; s == PRIM_NEW && i < calls_per_batch[s]; i++) {
				dnnl_primitive_t p;
				if (dnnl_primitive_create(&p, mm_pd) || matmul_exec(p))
					return 1;
				dnnl_primitive_destroy(p);
				__asm__ volatile("" ::: "memory");
			}
#endif
			for (long i = 0; s < NGEMM && i < calls_per_batch[s]; i++) {
				cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n,
					    0.0f, c, n);
				__asm__ volatile("" ::: "memory");
			}
			double t = (double)(now() - t0) / (double)calls_per_batch[s];
			if (t < best)
				best = t;
		}
		/* the last result, byte by byte */
		const unsigned char *p = s == NGEMM ? (const unsigned char *)&dot : (const unsigned char *)c;
		size_t len = s == NGEMM ? sizeof(dot) : (size_t)(n * n) * sizeof(float); /* the primitives' c: 4x4 */
		for (size_t i = 0; i < len; i++)
			h = (h ^ p[i]) * 0x100000001b3ull;
		printf("%d %.3f %016llx\n", n, best, (unsigned long long)h);
	}
	return 0;
}

struct result {
	double ns[NSIZES];
	uint64_t hash[NSIZES];
};

/* Run one child in @mode; its results into @out. The region's fd is
 * inherited (no CLOEXEC) and named in the environment in COUNT mode. */
static int run_child(const char *self, const char *shim, int mode, int region_fd, struct result *out,
		     pid_t *pid_out)
{
	int pipefd[2];
	pid_t pid;

	if (pipe(pipefd) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char fd[16];
		dup2(pipefd[1], 1);
		close(pipefd[0]);
		close(pipefd[1]);
		setenv("OPENBLAS_NUM_THREADS", "1", 1);
		setenv("OMP_NUM_THREADS", "1", 1);
		unsetenv(LIBFLOPS_ENV_FD);
		if (mode != BARE) {
			/* appended, as mfu-record does: a sanitizer's runtime
			 * preloaded before it stays first */
			const char *pre = getenv("LD_PRELOAD");
			char *both = NULL;
			if (pre && *pre && asprintf(&both, "%s %s", pre, shim) < 0)
				_exit(127);
			setenv("LD_PRELOAD", both ? both : shim, 1);
		}
		if (mode == COUNT) {
			snprintf(fd, sizeof(fd), "%d", region_fd);
			setenv(LIBFLOPS_ENV_FD, fd, 1);
		}
		execl(self, self, "--child", (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	FILE *f = fdopen(pipefd[0], "r");
	int n = 0, status;
	for (int s = 0; s < NSIZES && f; s++) {
		int size;
		unsigned long long h;
		if (fscanf(f, "%d %lf %llx", &size, &out->ns[s], &h) == 3 && size == sizes[s]) {
			out->hash[s] = h;
			n++;
		}
	}
	if (f)
		fclose(f);
	waitpid(pid, &status, 0);
	*pid_out = pid;
	if (n != NSIZES || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -EIO;
	return 0;
}

/* What the region adds to a marker boundary: libmfu sums its process's
 * counters at every boundary (libflops_sum) and copies them at step
 * boundaries (libflops_snapshot); the same calls, timed here on a slot with
 * 10 functions called (an application's usual handful), spread over the
 * table as a program's are (GEMMs, level 1, LAPACK, an eigensolver). */
static volatile uint64_t g_sink; /* the compiler keeps what is stored here */

static void boundary(struct libflops_region *r)
{
	struct libflops_proc *p = libflops_proc_for(r, 1);
	uint64_t out[LIBFLOPS_WORDS];
	enum { NB = 15 };
	double sum_ns[NB], snap_ns[NB];
	const long n = 100000;

	if (!p)
		return;
	for (unsigned f = 0; f < 10; f++)
		for (unsigned c = 0; c < 1000 + f; c++)
			libflops_add(p, f * 33, 1000 * (f + 1));
	for (int b = 0; b < NB; b++) {
		uint64_t t0 = now();
		for (long i = 0; i < n; i++) {
			libflops_sum(p, out);
			g_sink = out[0];
			__asm__ volatile("" ::: "memory");
		}
		sum_ns[b] = (double)(now() - t0) / (double)n;
		t0 = now();
		for (long i = 0; i < n; i++)
			g_sink = libflops_snapshot(r, p);
		snap_ns[b] = (double)(now() - t0) / (double)n;
	}
	qsort(sum_ns, NB, sizeof(double), cmp_double);
	qsort(snap_ns, NB, sizeof(double), cmp_double);
	printf("what the region adds to a marker boundary (median / min of %d x %ld): libflops_sum %.1f / %.1f ns "
	       "(every boundary), libflops_snapshot %.1f / %.1f ns (step boundaries)\n", NB, n, sum_ns[NB / 2],
	       sum_ns[0], snap_ns[NB / 2], snap_ns[0]);
	libflops_region_init(r); /* nothing of this stays counted */
}

int main(int argc, char **argv)
{
	const char *shim = LIBFLOPS_SO;
	long rounds = 5;
	static struct result res[MAX_ROUNDS][NMODES];
	struct libflops_region *r;
	size_t size = libflops_region_size();
	int fd, bad_count = 0, bad_hash = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--child"))
			return child();
		if (!strcmp(argv[i], "--shim") && i + 1 < argc) {
			shim = argv[++i];
		} else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
			char *end;
			errno = 0;
			rounds = strtol(argv[++i], &end, 10);
			if (errno || *end || rounds < 1 || rounds > MAX_ROUNDS) {
				fprintf(stderr, "bench_libflops: --rounds must be 1..%d\n", MAX_ROUNDS);
				return 2;
			}
		} else {
			fprintf(stderr, "usage: bench_libflops [--rounds N] [--shim PATH]\n");
			return 2;
		}
	}
	if (access(shim, R_OK) != 0) {
		fprintf(stderr, "bench_libflops: cannot read the counting library %s: %s (--shim PATH)\n", shim,
			strerror(errno));
		return 1;
	}
	/* the region, as mfu-record makes it; inherited by the children */
	fd = memfd_create("bench-libflops", 0);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0 ||
	    (r = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		fprintf(stderr, "bench_libflops: cannot create the region: %s\n", strerror(errno));
		return 1;
	}
	libflops_region_init(r);

	for (long k = 0; k < rounds; k++) {
		for (int j = 0; j < NMODES; j++) {
			/* each round starts with another configuration: none is
			 * always the one that runs first, after the pause */
			int m = (int)((k + j) % NMODES);
			pid_t pid = 0;
			int rc = run_child("/proc/self/exe", shim, m, fd, &res[k][m], &pid);
			if (rc) {
				fprintf(stderr, "bench_libflops: the %s child failed\n", mode_names[m]);
				return 1;
			}
			/* exactly the calls and FLOPs it made were counted, and only with a region */
			const struct libflops_proc *p = libflops_proc_find(r, (int32_t)pid);
			uint64_t want_calls = 0, want_flops = 0;
			uint64_t dots = (uint64_t)calls_per_batch[NGEMM] * BATCHES;
			for (int s = 0; s < NGEMM; s++) {
				uint64_t n = (uint64_t)calls_per_batch[s] * BATCHES;
				want_calls += n;
				want_flops += n * 2 * (uint64_t)sizes[s] * (uint64_t)sizes[s] * (uint64_t)sizes[s];
			}
#ifdef HAVE_DNNL
			uint64_t prims = (uint64_t)(calls_per_batch[PRIM] + calls_per_batch[PRIM_NEW]) * BATCHES;
			if (m == COUNT && (!p || p->f[LIBFLOPS_ID_dnnl_matmul_f32].calls != prims ||
					   p->f[LIBFLOPS_ID_dnnl_matmul_f32].flops != prims * 128)) {
				fprintf(stderr, "bench_libflops: the region did not count %llu executions of the matmul\n",
					(unsigned long long)prims);
				bad_count = 1;
			}
#endif
			if (m == COUNT) {
				if (!p || !p->active || p->f[LIBFLOPS_ID_cblas_sgemm].calls != want_calls ||
				    p->f[LIBFLOPS_ID_cblas_sgemm].flops != want_flops ||
				    p->f[LIBFLOPS_ID_cblas_ddot].calls != dots ||
				    p->f[LIBFLOPS_ID_cblas_ddot].flops != dots * 2 * DOT_N) {
					fprintf(stderr, "bench_libflops: the region did not count %llu calls, %llu FLOPs "
						"of cblas_sgemm and %llu calls of cblas_ddot\n", (unsigned long long)want_calls,
						(unsigned long long)want_flops, (unsigned long long)dots);
					bad_count = 1;
				}
			} else if (p) {
				fprintf(stderr, "bench_libflops: the %s child claimed a slot\n", mode_names[m]);
				bad_count = 1;
			}
		}
		for (int m = 0; m < NMODES; m++)
			for (int s = 0; s < NSIZES; s++)
				if (res[k][m].hash[s] != res[0][BARE].hash[s]) {
					fprintf(stderr, "bench_libflops: %s, size %d: results differ from bare\n",
						mode_names[m], sizes[s]);
					bad_hash = 1;
				}
	}

	printf("cblas_sgemm, cblas_ddot%s, ns per call (each child: best of %d batches; then the median and the minimum "
	       "over %ld rounds; OPENBLAS_NUM_THREADS=1, OMP_NUM_THREADS=1)\n",
	       NSIZES > PRIM ? " and dnnl_primitive_execute (a 4x4x4 matmul; \"new\": created and destroyed around each)" : "",
	       BATCHES, rounds);
	printf("%-10s %-6s %10s %10s %10s %9s %9s %11s %11s\n", "size", "stat", "bare", "forward", "count",
	       "fwd/bare", "cnt/bare", "fwd-bare", "cnt-bare");
	for (int s = 0; s < NSIZES; s++) {
		double med[NMODES], min[NMODES], v[MAX_ROUNDS];
		for (int m = 0; m < NMODES; m++) {
			for (long k = 0; k < rounds; k++)
				v[k] = res[k][m].ns[s];
			qsort(v, (size_t)rounds, sizeof(v[0]), cmp_double);
			med[m] = v[rounds / 2];
			min[m] = v[0];
		}
		char label[16];
		if (s == PRIM)
			snprintf(label, sizeof(label), "prim 4^3");
		else if (s == PRIM_NEW)
			snprintf(label, sizeof(label), "new 4^3");
		else if (s == NGEMM)
			snprintf(label, sizeof(label), "ddot %d", sizes[s]);
		else
			snprintf(label, sizeof(label), "%dx%dx%d", sizes[s], sizes[s], sizes[s]);
		for (int w = 0; w < 2; w++) {
			const double *x = w ? min : med;
			printf("%-10s %-6s %10.1f %10.1f %10.1f %9.3f %9.3f %8.1f ns %8.1f ns\n", w ? "" : label,
			       w ? "min" : "median", x[BARE], x[FORWARD], x[COUNT], x[FORWARD] / x[BARE],
			       x[COUNT] / x[BARE], x[FORWARD] - x[BARE], x[COUNT] - x[BARE]);
		}
	}
	printf("results bit-identical in all configurations: %s; region counted every call exactly: %s\n",
	       bad_hash ? "NO" : "yes", bad_count ? "NO" : "yes");
	boundary(r);
	munmap(r, size);
	close(fd);
	return bad_hash || bad_count;
}
