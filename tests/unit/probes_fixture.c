/*
 * A program without markers for test_probes: functions and USDT probes that
 * the probes module resolves and the live test attaches to.
 *
 *   probes_fixture offsets   print, for each symbol below, the file offset of
 *                            its runtime address computed from
 *                            /proc/self/maps (the kernel's view, no libelf)
 *                            and the first code bytes of the functions
 *   probes_fixture run N T   start T-1 extra threads, print
 *                            "ready PID TID..."; then two rounds, each
 *                            started by a line on stdin, in which every
 *                            thread makes N calls of each probed thing and
 *                            prints "round R thread TID calls N guarded K"
 *                            (K: how many times the semaphore of
 *                            sdt:fixture:guarded was nonzero)
 */
#include <sys/sdt.h>

#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* in probes_fixture/lib.c (a shared library) */
int fixture_lib_work(int i);
/* in probes_fixture/guarded.c: fires sdt:fixture:guarded when its semaphore
 * is set, returns whether it was */
int fixture_fire_guarded(int i);
extern volatile unsigned short fixture_guarded_semaphore;
/* in probes_fixture/dup.c: another static dup_fn */
int fixture_dup_other(void);

volatile long fixture_sink;

int fixture_work(int i);

__attribute__((noinline)) int fixture_work(int i)
{
	long s = 0;

	for (int k = 0; k < 100 + i % 7; k++)
		s += k ^ i;
	fixture_sink += s;
	return (int)(s & 0xff);
}

static __attribute__((noinline, used)) int dup_fn(void)
{
	fixture_sink++;
	return 1;
}

/* a function without a size: the module must refuse it */
__asm__(".text\n"
	".globl fixture_nosize\n"
	".type fixture_nosize, @function\n"
	"fixture_nosize:\n"
	"\tret\n");

/* an IFUNC: its symbol is the resolver's */
static int fixture_impl(void)
{
	return 42;
}
/* used: only the ifunc attribute's string names it, which clang does not see */
__attribute__((used)) static int (*fixture_resolver(void))(void)
{
	return fixture_impl;
}
int fixture_ifunc(void) __attribute__((ifunc("fixture_resolver")));

/* one probe, two sites (inlined twice) */
static inline __attribute__((always_inline)) void multi(int i)
{
	STAP_PROBE1(fixture, multi, i);
}

/* runtime address -> file offset through /proc/self/maps */
static int file_offset(const void *addr, unsigned long *off)
{
	FILE *fp = fopen("/proc/self/maps", "r");
	char line[4096];
	int found = -1;

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long start, end, pgoff;

		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &pgoff) != 3)
			continue;
		if ((uintptr_t)addr >= start && (uintptr_t)addr < end) {
			*off = (uintptr_t)addr - start + pgoff;
			found = 0;
			break;
		}
	}
	fclose(fp);
	return found;
}

static void print_offset(const char *name, const void *addr, int code)
{
	unsigned long off = 0;

	if (file_offset(addr, &off)) {
		printf("%s ? ?\n", name);
		return;
	}
	printf("%s 0x%lx ", name, off);
	for (int i = 0; i < (code ? 16 : 0); i++)
		printf("%02x", ((const unsigned char *)addr)[i]);
	printf("%s\n", code ? "" : "-");
}

#define ROUNDS 2

static int calls;
static pthread_barrier_t go;

/* Every thread: ROUNDS rounds of @calls calls, each round released by the
 * main thread once it has read a line on stdin. */
static void *worker(void *arg)
{
	static __thread int rounds_done;

	for (int r = 1; r <= ROUNDS; r++) {
		int guarded = 0;

		pthread_barrier_wait(&go);
		for (int i = 0; i < calls; i++) {
			fixture_work(i);
			fixture_lib_work(i);
			STAP_PROBE1(fixture, tick, i);
			guarded += fixture_fire_guarded(i);
			if (i % 2)
				multi(i);
			else
				multi(-i);
		}
		printf("round %d thread %ld calls %d guarded %d\n", ++rounds_done, (long)syscall(SYS_gettid),
		       calls, guarded);
		fflush(stdout);
		/* everyone has printed before the next round can start */
		pthread_barrier_wait(&go);
		if (!arg)
			break; /* the main thread goes back to reading stdin */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "offsets")) {
		print_offset("fixture_work", (const void *)fixture_work, 1);
		print_offset("dup_fn", (const void *)dup_fn, 1);
		print_offset("fixture_lib_work", (const void *)fixture_lib_work, 1);
		print_offset("fixture_guarded_semaphore",
			     (const void *)&fixture_guarded_semaphore, 0);
		return fixture_dup_other() == 2 ? 0 : 1;
	}
	if (argc == 4 && !strcmp(argv[1], "run")) {
		int nthreads = (int)strtol(argv[3], NULL, 10);
		pthread_t th[16];
		char line[64];

		calls = (int)strtol(argv[2], NULL, 10);
		if (nthreads < 1 || nthreads > 16 || calls < 0)
			return 2;
		pthread_barrier_init(&go, NULL, (unsigned)nthreads);
		for (int t = 1; t < nthreads; t++)
			pthread_create(&th[t], NULL, worker, &calls);
		/* the tids of every thread, once they all exist */
		for (int tries = 0; tries < 500; tries++) {
			DIR *d = opendir("/proc/self/task");
			int n = 0;
			struct dirent *e;

			while (d && (e = readdir(d)))
				n += e->d_name[0] != '.';
			if (d)
				closedir(d);
			if (n >= nthreads)
				break;
			usleep(2000);
		}
		printf("ready %d", (int)getpid());
		{
			DIR *d = opendir("/proc/self/task");
			struct dirent *e;

			while (d && (e = readdir(d)))
				if (e->d_name[0] != '.')
					printf(" %s", e->d_name);
			if (d)
				closedir(d);
		}
		printf("\n");
		fflush(stdout);
		for (int r = 1; r <= ROUNDS; r++) {
			if (!fgets(line, sizeof(line), stdin))
				return 3;
			worker(NULL);
		}
		for (int t = 1; t < nthreads; t++)
			pthread_join(th[t], NULL);
		return 0;
	}
	fprintf(stderr, "usage: probes_fixture offsets | run N THREADS\n");
	return 2;
}
