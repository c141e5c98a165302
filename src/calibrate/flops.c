#include "flops.h"

#include <errno.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* The inputs of every kernel (see kernels.h): chains converge to 1. */
#define KERNEL_X 0.999
#define KERNEL_Y 0.001

#define ISA_AVX2_FMA (MACHINE_ISA_AVX | MACHINE_ISA_AVX2 | MACHINE_ISA_FMA)

/* Fastest first within a dtype. The MFU_HAVE_* macros say which ISA
 * libraries this build could compile (meson checks the compiler's flags). */
static const struct flops_kernel kernel_table[] = {
#ifdef MFU_HAVE_AVX512
	{ "avx512_fma", MACHINE_FP64, MACHINE_ISA_AVX512F, FLOPS_CHAINS * 8 * 2,
	  "12 chains x 8 fp64 lanes x 2 (FMA)", flops_avx512_fp64 },
	{ "avx512_fma", MACHINE_FP32, MACHINE_ISA_AVX512F, FLOPS_CHAINS * 16 * 2,
	  "12 chains x 16 fp32 lanes x 2 (FMA)", flops_avx512_fp32 },
#endif
#ifdef MFU_HAVE_AVX2
	{ "avx2_fma", MACHINE_FP64, ISA_AVX2_FMA, FLOPS_CHAINS * 4 * 2,
	  "12 chains x 4 fp64 lanes x 2 (FMA)", flops_avx2_fp64 },
	{ "avx2_fma", MACHINE_FP32, ISA_AVX2_FMA, FLOPS_CHAINS * 8 * 2,
	  "12 chains x 8 fp32 lanes x 2 (FMA)", flops_avx2_fp32 },
#endif
#ifdef MFU_HAVE_SSE2
	{ "sse_mul_add", MACHINE_FP64, MACHINE_ISA_SSE2, FLOPS_CHAINS * 2,
	  "6 mul + 6 add chains x 2 fp64 lanes x 1 (no FMA)", flops_sse2_fp64 },
	{ "sse_mul_add", MACHINE_FP32, MACHINE_ISA_SSE2, FLOPS_CHAINS * 4,
	  "6 mul + 6 add chains x 4 fp32 lanes x 1 (no FMA)", flops_sse2_fp32 },
#endif
#ifdef MFU_HAVE_AVX512_BF16
	{ "avx512_bf16_dot", MACHINE_BF16, MACHINE_ISA_AVX512F | MACHINE_ISA_AVX512_BF16,
	  FLOPS_CHAINS * 16 * 2 * 2,
	  "12 chains x 16 fp32 lanes x 2 bf16 pairs x 2 (VDPBF16PS)", flops_avx512_bf16 },
#endif
#ifdef MFU_HAVE_AVX512_FP16
	{ "avx512_fp16_fma", MACHINE_FP16, MACHINE_ISA_AVX512F | MACHINE_ISA_AVX512_FP16,
	  FLOPS_CHAINS * 32 * 2, "12 chains x 32 fp16 lanes x 2 (FMA)", flops_avx512_fp16 },
#endif
#ifdef MFU_HAVE_AMX
	{ "amx_bf16", MACHINE_BF16, MACHINE_ISA_AMX_TILE | MACHINE_ISA_AMX_BF16, 4 * 16384.0,
	  "4 tile chains x TDPBF16PS (16 x 16 x 32 multiply-adds x 2)", flops_amx_bf16 },
	{ "amx_int8", MACHINE_INT8, MACHINE_ISA_AMX_TILE | MACHINE_ISA_AMX_INT8, 4 * 32768.0,
	  "4 tile chains x TDPBSSD (16 x 16 x 64 multiply-adds x 2 ops)", flops_amx_int8 },
#endif
#ifdef MFU_HAVE_AVX512_VNNI
	{ "avx512_vnni", MACHINE_INT8, MACHINE_ISA_AVX512F | MACHINE_ISA_AVX512_VNNI,
	  FLOPS_CHAINS * 16 * 4 * 2, "12 chains x 16 int32 lanes x 4 byte products x 2 ops (VPDPBUSD)",
	  flops_avx512_vnni },
#endif
#ifdef MFU_HAVE_AVX_VNNI
	{ "avx_vnni", MACHINE_INT8, MACHINE_ISA_AVX2 | MACHINE_ISA_AVX_VNNI,
	  FLOPS_CHAINS * 8 * 4 * 2, "12 chains x 8 int32 lanes x 4 byte products x 2 ops (VEX VPDPBUSD)",
	  flops_avx_vnni },
#endif
	{ NULL, MACHINE_FP64, 0, 0, NULL, NULL },
};

int flops_amx_permit(void)
{
#if defined(__x86_64__) && defined(__linux__)
	/* Linux gives a process the AMX tile data state (XFEATURE 18,
	 * XTILEDATA: 8 KiB per thread) only on request; without it the first
	 * tile instruction faults. */
	if (syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18) != 0)
		return -errno;
	return 0;
#else
	return -ENOTSUP;
#endif
}

int flops_kernels(unsigned isa, const struct flops_kernel **out, int max)
{
	int n = 0, amx = -1;

	for (const struct flops_kernel *k = kernel_table; k->name && n < max; k++) {
		if ((k->isa & isa) != k->isa)
			continue;
		if (k->isa & MACHINE_ISA_AMX_TILE) {
			if (amx < 0)
				amx = flops_amx_permit() == 0;
			if (!amx)
				continue; /* the kernel refused the tile state */
		}
		out[n++] = k;
	}
	return n;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_CLOCK_CHAIN 1
/* Iterations of the add chain for about a millisecond (flops_clock_hz()
 * sets it); 0 until then. */
static uint64_t chain_iters;
static volatile uint64_t chain_sink;

/* The core clock in Hz while running @iters x 8 dependent register adds:
 * one per cycle on every x86 core of the last twenty years. Per second of
 * the thread's CPU time, not of wall time, so that a preempted thread does
 * not look like a slow clock. Adds of an immediate would not do: Golden
 * Cove and later fold chains of those at rename. */
static double chain_hz(uint64_t iters)
{
	uint64_t x = 0, c0 = thread_cpu_ns(), c1;

	for (uint64_t i = 0; i < iters; i++) {
		uint64_t y = i;
		__asm__ volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
				 "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
				 : "+r"(x) : "r"(y));
	}
	c1 = thread_cpu_ns();
	chain_sink = x;
	return c1 > c0 ? 8.0 * (double)iters / ((double)(c1 - c0) * 1e-9) : 0;
}
#else
#define HAVE_CLOCK_CHAIN 0
static const uint64_t chain_iters = 0;

static double chain_hz(uint64_t iters)
{
	(void)iters;
	return 0;
}
#endif

struct flops_job {
	const struct flops_kernel *k;
	uint64_t iters;
	int with_clock;         /* one worker: time the kernel itself, clock around it */
	uint64_t kernel_ns;
	double clock_hz;        /* the highest clock seen around the kernel */
	volatile double sink[TEAM_MAX];
};

static void flops_work(void *arg, int idx)
{
	struct flops_job *j = arg;
	double before = 0, after = 0;
	uint64_t t0;

	if (!j->with_clock) {
		j->sink[idx] = j->k->run(j->iters, KERNEL_X, KERNEL_Y);
		return;
	}
	/* The clock right before and right after, on the same CPU: an upper
	 * bound of the clock the kernel ran at (an AVX-512 frequency licence
	 * can only lower it), so FLOPs / (seconds x clock) bounds the FLOPs
	 * per cycle from below. */
	before = chain_hz(chain_iters);
	t0 = now_ns();
	j->sink[idx] = j->k->run(j->iters, KERNEL_X, KERNEL_Y);
	j->kernel_ns = now_ns() - t0;
	after = chain_hz(chain_iters);
	j->clock_hz = before > after ? before : after;
}

int flops_iterations(const struct flops_kernel *k, struct team *t, double seconds, uint64_t *iters)
{
	static struct flops_job job;
	struct team_timing tm = { 0 };
	int err;

	if (!k || !t || !(seconds > 0))
		return -EINVAL;
	job.k = k;
	job.iters = 256;
	/* Double until the run is long enough to time (2 ms, or an eighth of
	 * a repetition); this also wakes the vector units and the frequency
	 * up before the measured runs. */
	for (;;) {
		err = team_run(t, flops_work, &job, &tm);
		if (err)
			return err;
		if (tm.wall_s >= 0.002 && tm.wall_s >= seconds / 8)
			break;
		if (job.iters > (UINT64_MAX >> 2))
			return -ERANGE;
		job.iters *= 2;
	}
	*iters = (uint64_t)((double)job.iters * seconds / tm.wall_s) + 1;
	return 0;
}

int flops_measure(const struct flops_kernel *k, struct team *t, uint64_t iters, int reps,
		  struct flops_result *out)
{
	static struct flops_job job;
	struct flops_result best = { 0 };
	double spent = 0, undisturbed = 1e30;

	if (!k || !t || iters == 0 || reps < 1)
		return -EINVAL;
	job.k = k;
	job.iters = iters;
	job.with_clock = team_size(t) == 1 && chain_iters > 0;
	for (int r = 0; r < 2 * reps; r++) {
		struct team_timing tm;
		double v, wall;
		int err;

		/* Another task on one of the CPUs only ever lowers a figure:
		 * try again for an undisturbed repetition, within twice the
		 * time the repetitions would take undisturbed (a task that
		 * keeps a CPU busy would only make calibration longer). */
		if (r >= reps && (best.cpu_share >= TEAM_SHARE_OK || spent > 2 * reps * undisturbed))
			break;
		err = team_run(t, flops_work, &job, &tm);
		if (err)
			return err;
		best.reps++;
		wall = job.with_clock ? (double)job.kernel_ns * 1e-9 : tm.wall_s;
		spent += wall;
		if (wall * tm.cpu_share < undisturbed)
			undisturbed = wall * tm.cpu_share;
		if (job.with_clock && job.clock_hz > best.clock_hz)
			best.clock_hz = job.clock_hz;
		if (!(wall > 0))
			continue;
		v = (double)team_size(t) * (double)iters * k->flops_per_iter / wall;
		if (v > best.flops) {
			best.flops = v;
			best.seconds = wall;
			best.cpu_share = tm.cpu_share;
		}
	}
	if (!(best.flops > 0))
		return -EIO;
	*out = best;
	return 0;
}

struct clock_job {
	uint64_t iters;
	double hz;
};

static void clock_work(void *arg, int idx)
{
	struct clock_job *j = arg;

	(void)idx;
	j->hz = chain_hz(j->iters);
}

int flops_clock_hz(struct team *t, double seconds, int reps, double *hz)
{
	static struct clock_job job;
	struct team_timing tm = { 0 };
	double best = 0;
	int err;

	if (!HAVE_CLOCK_CHAIN)
		return -ENOTSUP;
	if (team_size(t) != 1 || !(seconds > 0) || reps < 1)
		return -EINVAL;
	job.iters = 1 << 12;
	for (;;) {
		err = team_run(t, clock_work, &job, &tm);
		if (err)
			return err;
		if (tm.wall_s >= seconds / 4 && tm.wall_s >= 0.0005)
			break;
		job.iters *= 2;
	}
#if HAVE_CLOCK_CHAIN
	/* About a millisecond around each FLOP kernel repetition. */
	chain_iters = (uint64_t)((double)job.iters * 0.001 / tm.wall_s) + 1;
#endif
	job.iters = (uint64_t)((double)job.iters * seconds / tm.wall_s) + 1;
	for (int r = 0; r < reps; r++) {
		err = team_run(t, clock_work, &job, &tm);
		if (err)
			return err;
		if (job.hz > best)
			best = job.hz;
	}
	if (!(best > 0))
		return -EIO;
	*hz = best;
	return 0;
}
