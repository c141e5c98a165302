/*
 * emu_kernels: loops of hand-written floating-point instructions with known
 * counts, for the emulator's tests (tests/e2e/test_emulate_tool.py, which
 * holds the expected counts per iteration of each kernel).
 *
 * Run under valgrind --tool=mfufp, it reads the tool's counts before and
 * after each kernel and prints one JSON line per kernel:
 *   {"kernel": "NAME", "n": ITERATIONS, "inst": [[...]], "x87": ..., ...}
 * with the difference (emu_read.h). Kernels that need AVX2 or FMA print
 * "skipped" instead on a CPU without them. Each line also has the kernel's
 * wall time ("seconds"), and "tool": 0 when run natively (all counts 0).
 *
 *   emu_kernels [N]    N iterations per kernel (default 100000)
 *
 * Every loop is inline assembly, so no compiler and no optimisation level
 * can change what executes; the loop control (dec, jnz) is integer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu_read.h"

/* %0: the iteration count, %1: a 64-byte aligned buffer of 1.0f pairs
 * (each 8 bytes also a normal double, 0.0078125). */
#define LOOP(init, body, fini, ...)                                                 \
	__asm__ volatile(init "1:\n\t" body "dec %0\n\tjnz 1b\n\t" fini            \
			 : "+r"(n)                                                  \
			 : "r"(buf)                                                 \
			 : "cc", "memory", __VA_ARGS__)

#define INIT_XMM                                                                    \
	"movups (%1), %%xmm0\n\tmovups 16(%1), %%xmm1\n\tmovups 32(%1), %%xmm2\n\t" \
	"movups (%1), %%xmm3\n\tmovups (%1), %%xmm4\n\tmovups (%1), %%xmm5\n\t"     \
	"movups (%1), %%xmm6\n\tmovups (%1), %%xmm7\n\tmovups (%1), %%xmm8\n\t"     \
	"movups (%1), %%xmm9\n\tmovups (%1), %%xmm10\n\tmovups (%1), %%xmm11\n\t"
#define INIT_YMM                                                                    \
	"vmovups (%1), %%ymm0\n\tvmovups 32(%1), %%ymm1\n\tvmovups (%1), %%ymm2\n\t" \
	"vmovups (%1), %%ymm3\n\tvmovups (%1), %%ymm4\n\tvmovups (%1), %%ymm5\n\t"  \
	"vmovups (%1), %%ymm6\n\tvmovups (%1), %%ymm7\n\tvmovups (%1), %%ymm8\n\t"  \
	"vmovups (%1), %%ymm9\n\tvmovups (%1), %%ymm10\n\tvmovups (%1), %%ymm11\n\t"
#define XMM_CLOBBERS "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", \
	"xmm8", "xmm9", "xmm10", "xmm11"

static void k_scalar_fp64(long n, float *buf)
{
	LOOP(INIT_XMM,
	     "addsd %%xmm1, %%xmm0\n\t"
	     "mulsd %%xmm2, %%xmm0\n\t"
	     "subsd 8(%1), %%xmm0\n\t"
	     "divsd %%xmm9, %%xmm8\n\t"  /* REX prefix after the F2 */
	     "sqrtsd %%xmm1, %%xmm3\n\t"
	     "minsd %%xmm2, %%xmm4\n\t"
	     "maxsd %%xmm10, %%xmm11\n\t",
	     "", XMM_CLOBBERS);
}

static void k_scalar_fp32(long n, float *buf)
{
	LOOP(INIT_XMM,
	     "addss %%xmm1, %%xmm0\n\t"
	     "mulss %%xmm2, %%xmm0\n\t"
	     "subss 4(%1), %%xmm0\n\t"
	     "divss %%xmm9, %%xmm8\n\t"
	     "sqrtss %%xmm1, %%xmm3\n\t"
	     "minss %%xmm2, %%xmm4\n\t"
	     "maxss %%xmm1, %%xmm5\n\t"
	     "rcpss %%xmm1, %%xmm6\n\t"
	     "rsqrtss %%xmm1, %%xmm7\n\t",
	     "", XMM_CLOBBERS);
}

static void k_sse_fp64(long n, float *buf)
{
	LOOP(INIT_XMM,
	     "addpd %%xmm1, %%xmm0\n\t"
	     "mulpd %%xmm2, %%xmm0\n\t"
	     "subpd 16(%1), %%xmm0\n\t"
	     "divpd %%xmm9, %%xmm8\n\t"
	     "sqrtpd %%xmm1, %%xmm3\n\t"
	     "minpd %%xmm2, %%xmm4\n\t"
	     "maxpd %%xmm1, %%xmm5\n\t",
	     "", XMM_CLOBBERS);
}

static void k_sse_fp32(long n, float *buf)
{
	LOOP(INIT_XMM,
	     "addps %%xmm1, %%xmm0\n\t"
	     "mulps %%xmm2, %%xmm0\n\t"
	     "subps 16(%1), %%xmm0\n\t"
	     "divps %%xmm9, %%xmm8\n\t"
	     "sqrtps %%xmm1, %%xmm3\n\t"
	     "minps %%xmm2, %%xmm4\n\t"
	     "maxps %%xmm1, %%xmm5\n\t"
	     "rcpps %%xmm1, %%xmm6\n\t"
	     "rsqrtps %%xmm1, %%xmm7\n\t",
	     "", XMM_CLOBBERS);
}

/* SSE3 horizontal and alternating add/sub: one count each, as ADD. */
static void k_sse3(long n, float *buf)
{
	LOOP(INIT_XMM,
	     "haddpd %%xmm1, %%xmm0\n\t"
	     "hsubpd %%xmm1, %%xmm2\n\t"
	     "addsubpd %%xmm1, %%xmm3\n\t"
	     "haddps %%xmm1, %%xmm4\n\t"
	     "hsubps %%xmm1, %%xmm5\n\t"
	     "addsubps %%xmm1, %%xmm6\n\t",
	     "", XMM_CLOBBERS);
}

/* SSE4.1 dot products: two counts each (a multiply and an add per element). */
static void k_dpp(long n, float *buf)
{
	LOOP(INIT_XMM,
	     "dpps $0xff, %%xmm1, %%xmm0\n\t"
	     "dppd $0x33, %%xmm1, %%xmm2\n\t",
	     "", XMM_CLOBBERS);
}

static void k_avx128(long n, float *buf)
{
	LOOP(INIT_YMM,
	     "vaddpd %%xmm1, %%xmm2, %%xmm0\n\t"
	     "vmulps %%xmm1, %%xmm2, %%xmm3\n\t"
	     "vaddsd %%xmm1, %%xmm2, %%xmm4\n\t"
	     "vsqrtss %%xmm1, %%xmm2, %%xmm5\n\t"
	     "vdivsd %%xmm9, %%xmm10, %%xmm11\n\t", /* three-byte VEX */
	     "vzeroupper\n\t", XMM_CLOBBERS);
}

static void k_avx256(long n, float *buf)
{
	LOOP(INIT_YMM,
	     "vaddpd %%ymm1, %%ymm2, %%ymm0\n\t"
	     "vmulpd %%ymm1, %%ymm2, %%ymm3\n\t"
	     "vsqrtpd %%ymm1, %%ymm4\n\t"
	     "vhaddpd %%ymm1, %%ymm2, %%ymm5\n\t"
	     "vminpd %%ymm1, %%ymm2, %%ymm6\n\t"
	     "vaddpd (%1), %%ymm2, %%ymm7\n\t"
	     "vmulpd %%ymm8, %%ymm9, %%ymm10\n\t"
	     "vdivps %%ymm1, %%ymm2, %%ymm0\n\t"
	     "vmaxps %%ymm1, %%ymm2, %%ymm3\n\t"
	     "vrcpps %%ymm1, %%ymm4\n\t"
	     "vrsqrtps %%ymm1, %%ymm5\n\t"
	     "vaddsubps %%ymm1, %%ymm2, %%ymm6\n\t"
	     "vdpps $0xff, %%ymm1, %%ymm2, %%ymm7\n\t",
	     "vzeroupper\n\t", XMM_CLOBBERS);
}

static void k_fma_scalar(long n, float *buf)
{
	LOOP(INIT_YMM,
	     "vfmadd231sd %%xmm1, %%xmm2, %%xmm0\n\t"
	     "vfmadd132ss %%xmm1, %%xmm2, %%xmm3\n\t"
	     "vfnmsub213sd %%xmm1, %%xmm2, %%xmm4\n\t"
	     "vfmsub231ss 4(%1), %%xmm2, %%xmm5\n\t",
	     "vzeroupper\n\t", XMM_CLOBBERS);
}

static void k_fma_packed(long n, float *buf)
{
	LOOP(INIT_YMM,
	     "vfmadd231pd %%ymm1, %%ymm2, %%ymm0\n\t"
	     "vfmadd231ps %%ymm1, %%ymm2, %%ymm3\n\t"
	     "vfmadd213pd %%xmm1, %%xmm2, %%xmm4\n\t"
	     "vfnmadd231ps %%xmm1, %%xmm2, %%xmm5\n\t"
	     "vfmaddsub231pd %%ymm1, %%ymm2, %%ymm6\n\t"
	     "vfmsubadd132ps %%xmm1, %%xmm2, %%xmm7\n\t"
	     "vfmadd231pd (%1), %%ymm9, %%ymm8\n\t",
	     "vzeroupper\n\t", XMM_CLOBBERS);
}

/* x87: fadd fmul fsub fdiv fsqrt, fadd m64fp, fimul m32int count; fabs,
 * fchs, fcom, fxch, fldz and fstp do not. */
static void k_x87(long n, float *buf)
{
	LOOP("fld1\n\tfld1\n\t",
	     "fadd %%st(1), %%st\n\t"
	     "fmul %%st(1), %%st\n\t"
	     "fsub %%st(1), %%st\n\t"
	     "fdiv %%st(1), %%st\n\t"
	     "fsqrt\n\t"
	     "faddl (%1)\n\t"
	     "fimull (%1)\n\t"
	     "fabs\n\t"
	     "fchs\n\t"
	     "fcom %%st(1)\n\t"
	     "fxch\n\t"
	     "fxch\n\t"
	     "fldz\n\t"
	     "fstp %%st(0)\n\t",
	     "fstp %%st(0)\n\tfstp %%st(0)\n\t", "st", "st(1)");
}

/* Moves, logic, compares, conversions, shuffles, blends, rounding and
 * integer SIMD: no count at all. */
static void k_not_counted(long n, float *buf)
{
	LOOP(INIT_XMM,
	     "movapd %%xmm1, %%xmm0\n\t"
	     "movsd 8(%1), %%xmm2\n\t"
	     "movsd %%xmm2, 32(%1)\n\t"
	     "andpd %%xmm1, %%xmm3\n\t"
	     "xorps %%xmm4, %%xmm4\n\t"
	     "orps %%xmm1, %%xmm5\n\t"
	     "cmppd $1, %%xmm1, %%xmm6\n\t"
	     "cmpsd $2, %%xmm1, %%xmm6\n\t"
	     "ucomisd %%xmm1, %%xmm2\n\t"
	     "comiss %%xmm1, %%xmm2\n\t"
	     "cvtsi2sd %0, %%xmm7\n\t"
	     "cvtsd2ss %%xmm1, %%xmm7\n\t"
	     "cvtps2pd %%xmm1, %%xmm8\n\t"
	     "shufps $0x1b, %%xmm1, %%xmm9\n\t"
	     "unpcklpd %%xmm1, %%xmm10\n\t"
	     "roundpd $1, %%xmm1, %%xmm11\n\t"
	     "blendpd $1, %%xmm1, %%xmm0\n\t"
	     "pxor %%xmm2, %%xmm2\n\t"
	     "paddd %%xmm1, %%xmm3\n\t"
	     "pmulld %%xmm1, %%xmm3\n\t",
	     "", XMM_CLOBBERS);
}

static void k_not_counted_avx(long n, float *buf)
{
	LOOP(INIT_YMM,
	     "vbroadcastsd (%1), %%ymm0\n\t"
	     "vpermilps $0x1b, %%ymm1, %%ymm2\n\t"
	     "vblendps $0x0f, %%ymm1, %%ymm2, %%ymm3\n\t"
	     "vandps %%ymm1, %%ymm2, %%ymm4\n\t"
	     "vcvtdq2ps %%ymm1, %%ymm5\n\t"
	     "vcmpps $1, %%ymm1, %%ymm2, %%ymm6\n\t"
	     "vroundpd $1, %%ymm1, %%ymm7\n\t"
	     "vpaddd %%ymm1, %%ymm2, %%ymm8\n\t"
	     "vperm2f128 $0x21, %%ymm1, %%ymm2, %%ymm9\n\t"
	     "vxorps %%ymm10, %%ymm10, %%ymm10\n\t",
	     "vzeroupper\n\t", XMM_CLOBBERS);
}

/* What the hardware retires but VEX's optimiser would drop or merge before
 * a tool sees the IR: a multiply whose result is overwritten (dead code)
 * and two identical adds (common subexpressions). Three counts. */
static void k_dead_and_repeated(long n, float *buf)
{
	LOOP(INIT_XMM,
	     "movapd %%xmm0, %%xmm2\n\t"
	     "mulsd %%xmm1, %%xmm2\n\t"
	     "movapd %%xmm0, %%xmm2\n\t"
	     "movapd %%xmm0, %%xmm3\n\t"
	     "addsd %%xmm1, %%xmm3\n\t"
	     "movapd %%xmm0, %%xmm4\n\t"
	     "addsd %%xmm1, %%xmm4\n\t",
	     "", XMM_CLOBBERS);
}

struct kernel {
	const char *name;
	void (*run)(long, float *);
	int avx2_fma; /* needs AVX2 and FMA */
};

static const struct kernel kernels[] = {
	{ "scalar_fp64", k_scalar_fp64, 0 },
	{ "scalar_fp32", k_scalar_fp32, 0 },
	{ "sse_fp64", k_sse_fp64, 0 },
	{ "sse_fp32", k_sse_fp32, 0 },
	{ "sse3", k_sse3, 0 },
	{ "dpp", k_dpp, 0 },
	{ "avx128", k_avx128, 1 },
	{ "avx256", k_avx256, 1 },
	{ "fma_scalar", k_fma_scalar, 1 },
	{ "fma_packed", k_fma_packed, 1 },
	{ "x87", k_x87, 0 },
	{ "not_counted", k_not_counted, 0 },
	{ "not_counted_avx", k_not_counted_avx, 1 },
	{ "dead_and_repeated", k_dead_and_repeated, 0 },
};

/* Seconds from @a to @b; outside the counted interval, as it is FP work. */
static double seconds(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (b->tv_nsec - a->tv_nsec) * 1e-9;
}

int main(int argc, char **argv)
{
	static float buf[64] __attribute__((aligned(64)));
	struct mfu_emu_counts before, after;
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100000;
	int vector_ok, tool;

	if (n <= 0) {
		fprintf(stderr, "usage: emu_kernels [ITERATIONS > 0]\n");
		return 2;
	}
	for (int i = 0; i < 64; i++)
		buf[i] = 1.0f;
	__builtin_cpu_init();
	vector_ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	tool = emu_read(&before);
	/* the first call binds clock_gettime (hundreds of instructions of the
	 * dynamic linker): not inside the first kernel's interval */
	clock_gettime(CLOCK_MONOTONIC, &(struct timespec){ 0 });
	for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
		struct timespec t0, t1;

		if (kernels[k].avx2_fma && !vector_ok) {
			printf("{\"kernel\": \"%s\", \"skipped\": \"no AVX2 and FMA\"}\n", kernels[k].name);
			continue;
		}
		emu_read(&before);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		kernels[k].run(n, buf);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		emu_read(&after);
		printf("{\"kernel\": \"%s\", \"n\": %ld, \"tool\": %d, \"seconds\": %.6f, ",
		       kernels[k].name, n, tool, seconds(&t0, &t1));
		emu_print(stdout, &after, &before);
		printf("}\n");
	}
	return 0;
}
