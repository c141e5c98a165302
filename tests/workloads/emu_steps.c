/*
 * emu_steps: marked steps of known floating-point work, for mfu-record
 * --emulate (tests/e2e/test_emulate.py).
 *
 *   emu_steps [--steps N] [--n K] [--fork] [--threads T] [--x87 X]
 *
 * Each step has two phases:
 *   "fma"     K iterations of one vfmadd231pd on 256-bit registers (4 fp64
 *             lanes, an FMA: 2 counts, 8 FLOPs each) when the CPU has FMA,
 *             else of one mulpd and one addpd on 128 bits (4 FLOPs)
 *   "scalar"  K iterations of one mulsd and one addsd (2 fp64 FLOPs)
 * With --fork, the step then forks a child that runs K iterations of the
 * scalar loop and exits, and waits for it; with --threads T, T threads
 * each run the scalar loop K times, and the step joins them; with --x87 X,
 * the step ends with X x87 multiplications (fmul, outside the phases and
 * not in its declared FLOPs: hw_flops does not count x87). Each step
 * declares its FLOPs with mfu_step_model, the phases theirs with
 * mfu_phase_model. The first line printed says which FMA path ran and the
 * FLOPs of one step:
 *   {"fma": 1, "step_flops": F, "fma_flops": A, "scalar_flops": B}
 * Every loop is inline assembly: no compiler can change what executes,
 * and the loop control is integer.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mfu.h"

static double g_buf[8] __attribute__((aligned(64))) = { 1.0, 1.0, 1.0, 1.0, 1e-9, 1e-9, 1e-9, 1e-9 };

__attribute__((target("avx2,fma"))) static void fma_loop(long n)
{
	__asm__ volatile("vmovupd (%1), %%ymm0\n\t"
			 "vmovupd (%1), %%ymm1\n\t"
			 "vmovupd 32(%1), %%ymm2\n\t"
			 "1:\n\t"
			 "vfmadd231pd %%ymm1, %%ymm2, %%ymm0\n\t"
			 "dec %0\n\t"
			 "jnz 1b\n\t"
			 "vzeroupper\n\t"
			 : "+r"(n)
			 : "r"(g_buf)
			 : "cc", "memory", "xmm0", "xmm1", "xmm2");
}

static void sse_loop(long n)
{
	__asm__ volatile("movupd (%1), %%xmm0\n\t"
			 "movupd 32(%1), %%xmm1\n\t"
			 "1:\n\t"
			 "mulpd %%xmm1, %%xmm0\n\t"
			 "addpd %%xmm1, %%xmm0\n\t"
			 "dec %0\n\t"
			 "jnz 1b\n\t"
			 : "+r"(n)
			 : "r"(g_buf)
			 : "cc", "memory", "xmm0", "xmm1");
}

static void scalar_loop(long n)
{
	__asm__ volatile("movsd (%1), %%xmm0\n\t"
			 "movsd 32(%1), %%xmm1\n\t"
			 "1:\n\t"
			 "mulsd %%xmm1, %%xmm0\n\t"
			 "addsd %%xmm1, %%xmm0\n\t"
			 "dec %0\n\t"
			 "jnz 1b\n\t"
			 : "+r"(n)
			 : "r"(g_buf)
			 : "cc", "memory", "xmm0", "xmm1");
}

/* @n x87 multiplications of st(0) by st(1), both 1.0; the stack left as found */
static void x87_loop(long n)
{
	__asm__ volatile("fld1\n\tfld1\n\t1:\n\tfmul %%st(1), %%st\n\tdec %0\n\tjnz 1b\n\t"
			 "fstp %%st(0)\n\tfstp %%st(0)\n\t" : "+r"(n) : : "cc", "st", "st(1)");
}

static long g_n = 100000;

static void *thread_main(void *arg)
{
	(void)arg;
	scalar_loop(g_n);
	return NULL;
}

int main(int argc, char **argv)
{
	int steps = 5, do_fork = 0, nthreads = 0;
	long x87 = 0;
	pthread_t th[64];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc)
			steps = atoi(argv[++i]);
		else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
			g_n = atol(argv[++i]);
		else if (strcmp(argv[i], "--fork") == 0)
			do_fork = 1;
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (strcmp(argv[i], "--x87") == 0 && i + 1 < argc)
			x87 = atol(argv[++i]);
		else {
			fprintf(stderr, "usage: emu_steps [--steps N] [--n K] [--fork] [--threads T] [--x87 X]\n");
			return 2;
		}
	}
	if (steps < 0 || g_n < 1 || nthreads < 0 || nthreads > 64 || x87 < 0) {
		fprintf(stderr, "emu_steps: bad arguments\n");
		return 2;
	}
	__builtin_cpu_init();
	int fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	double fma_flops = (double)g_n * (fma ? 8 : 4), scalar_flops = (double)g_n * 2;
	double step_flops = fma_flops + scalar_flops * (1 + do_fork + nthreads);
	printf("{\"fma\": %d, \"step_flops\": %.0f, \"fma_flops\": %.0f, \"scalar_flops\": %.0f}\n", fma, step_flops,
	       fma_flops, scalar_flops);
	fflush(stdout);

	for (int s = 0; s < steps; s++) {
		mfu_step_begin();
		mfu_phase_begin("fma");
		if (fma)
			fma_loop(g_n);
		else
			sse_loop(g_n);
		mfu_phase_model(fma_flops, 0);
		mfu_phase_end("fma");
		mfu_phase_begin("scalar");
		scalar_loop(g_n);
		mfu_phase_model(scalar_flops, 0);
		mfu_phase_end("scalar");
		if (do_fork) {
			pid_t pid = fork();
			if (pid == 0) {
				scalar_loop(g_n);
				_exit(0);
			}
			if (pid < 0 || waitpid(pid, NULL, 0) != pid) {
				perror("emu_steps: fork");
				return 1;
			}
		}
		for (int t = 0; t < nthreads; t++)
			if (pthread_create(&th[t], NULL, thread_main, NULL) != 0) {
				fprintf(stderr, "emu_steps: cannot start a thread\n");
				return 1;
			}
		for (int t = 0; t < nthreads; t++)
			pthread_join(th[t], NULL);
		if (x87)
			x87_loop(x87);
		mfu_step_model(step_flops, 0);
		mfu_step_end();
	}
	return 0;
}
