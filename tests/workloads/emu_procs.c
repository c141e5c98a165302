/*
 * emu_procs: processes and threads doing known floating-point work, for the
 * emulator's descendant folding (tests/e2e/test_emulate_tool.py). Each part
 * uses its own amount, so a part lost or counted twice shows:
 *
 *   parent main thread       1000 mulsd           (fp64 scalar)
 *   parent's 2 threads       2000 mulpd each      (fp64 128-bit)
 *   forked child             3000 mulss           (fp32 scalar)
 *     its thread             4000 mulps           (fp32 128-bit)
 *     its forked child       5000 fmul            (x87)
 *   second forked child      6000 mulsd, then execve() of this program
 *     with --stage exec:     7000 mulpd
 *
 * Under valgrind --tool=mfufp --trace-children=yes --mfu-dir=DIR, each
 * process prints one JSON line of its counts (emu_read.h) at the points
 * named by "at": the parent "own" before forking and "total" after
 * waiting for both children (the sum of every row above), the first child
 * "child" after waiting for its own, the exec'd image "exec" (the 6000
 * mulsd of its image before the execve included).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu_read.h"

#define KERNEL(name, init, insn, ...)                                          \
	static void name(long n)                                               \
	{                                                                      \
		static const double one[2] __attribute__((aligned(16))) = { 1.0, 1.0 }; \
		__asm__ volatile(init "1:\n\t" insn "\n\tdec %0\n\tjnz 1b\n\t" \
				 : "+r"(n)                                     \
				 : "r"(one)                                    \
				 : "cc", "memory", __VA_ARGS__);               \
	}

KERNEL(mulsd, "movapd (%1), %%xmm0\n\tmovapd (%1), %%xmm1\n\t", "mulsd %%xmm1, %%xmm0", "xmm0", "xmm1")
KERNEL(mulpd, "movapd (%1), %%xmm0\n\tmovapd (%1), %%xmm1\n\t", "mulpd %%xmm1, %%xmm0", "xmm0", "xmm1")
KERNEL(mulss, "movapd (%1), %%xmm0\n\tmovapd (%1), %%xmm1\n\t", "mulss %%xmm1, %%xmm0", "xmm0", "xmm1")
KERNEL(mulps, "movapd (%1), %%xmm0\n\tmovapd (%1), %%xmm1\n\t", "mulps %%xmm1, %%xmm0", "xmm0", "xmm1")
/* fmul st(0) by st(1) (both 1.0), the stack left as found */
static void fmul_x87(long n)
{
	__asm__ volatile("fld1\n\tfld1\n\t1:\n\tfmul %%st(1), %%st\n\tdec %0\n\tjnz 1b\n\t"
			 "fstp %%st(0)\n\tfstp %%st(0)\n\t"
			 : "+r"(n) : : "cc", "st", "st(1)");
}

static void report(const char *at)
{
	struct mfu_emu_counts c;

	if (!emu_read(&c)) {
		printf("{\"at\": \"%s\", \"pid\": %d, \"tool\": 0}\n", at, (int)getpid());
	} else {
		printf("{\"at\": \"%s\", \"pid\": %d, \"tool\": 1, ", at, (int)getpid());
		emu_print(stdout, &c, NULL);
		printf("}\n");
	}
	fflush(stdout);
}

static void *thread_mulpd(void *arg)
{
	mulpd(2000);
	return arg;
}

static void *thread_mulps(void *arg)
{
	mulps(4000);
	return arg;
}

static int wait_ok(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			perror("emu_procs: waitpid");
			return 0;
		}
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "emu_procs: process %d failed (status 0x%x)\n", (int)pid, status);
		return 0;
	}
	return 1;
}

static int first_child(void)
{
	pthread_t t;
	pid_t gc;

	mulss(3000);
	if (pthread_create(&t, NULL, thread_mulps, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	gc = fork();
	if (gc < 0)
		return 1;
	if (gc == 0) {
		fmul_x87(5000);
		_exit(0);
	}
	if (!wait_ok(gc))
		return 1;
	report("child");
	return 0;
}

int main(int argc, char **argv)
{
	char self[PATH_MAX];
	pthread_t t[2];
	pid_t c1, c2;
	ssize_t len;

	if (argc == 3 && strcmp(argv[1], "--stage") == 0 && strcmp(argv[2], "exec") == 0) {
		mulpd(7000);
		report("exec");
		return 0;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: emu_procs\n");
		return 2;
	}
	/* The path to exec: under Valgrind, /proc/self/exe itself would name
	 * the tool, but readlink() of it gives the program. */
	len = readlink("/proc/self/exe", self, sizeof self - 1);
	if (len < 0) {
		perror("emu_procs: readlink /proc/self/exe");
		return 1;
	}
	self[len] = '\0';

	mulsd(1000);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, thread_mulpd, NULL) != 0)
			return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	report("own");

	c1 = fork();
	if (c1 < 0)
		return 1;
	if (c1 == 0)
		_exit(first_child());
	c2 = fork();
	if (c2 < 0)
		return 1;
	if (c2 == 0) {
		mulsd(6000);
		execl(self, self, "--stage", "exec", (char *)NULL);
		perror("emu_procs: execl");
		_exit(1);
	}
	if (!wait_ok(c1) || !wait_ok(c2))
		return 1;
	report("total");
	return 0;
}
