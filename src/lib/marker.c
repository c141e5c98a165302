/*
 * libmfu: step and phase markers.
 *
 * Not recorded, each marker is a USDT probe (a nop) plus one predictable
 * branch on a global flag. Recorded (mfu-record put MFU_RING_FD and
 * MFU_GROUP_FD in the environment and left those fds open across exec), a
 * marker claims a slot in the shared marker ring, reads the inherited counter
 * group straight into it (one read(): whole-process sums over all live
 * threads, see KERNEL-NOTES), stamps CLOCK_MONOTONIC and publishes it.
 * Pairing begins with ends and spotting misuse is the recorder's job, so a
 * boundary costs one read() and a few stores. Nothing here prints or aborts.
 */
#include "mfu.h"
#include "marker_ring.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sdt.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static int g_on;          /* 1 when recorded: ring mapped */
static void *g_ring;
static int g_group_fd = -1;  /* software group leader */
static int g_group1_fd = -1; /* hardware group leader, if any */
static size_t g_read_size;   /* bytes of one read of group 0 */
static size_t g_read1_size;  /* bytes of one read of group 1 */
static uint32_t g_n0;        /* values in group 0 */
static int32_t g_pid;
static __thread int32_t t_tid;

/* Parse a non-negative fd number from @s up to a ',' or the end; -1 if bad. */
static int parse_fd(const char *s, const char **rest)
{
	char *end;
	long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || (*end && *end != ',') || v > 1 << 30)
		return -1;
	if (rest)
		*rest = *end == ',' ? end + 1 : NULL;
	return (int)v;
}

static void after_fork_child(void)
{
	/* The child is a new process with one thread: its ids changed. */
	g_pid = (int32_t)getpid();
	t_tid = 0;
}

__attribute__((constructor)) static void mfu_init(void)
{
	struct stat st;
	int ring_fd = parse_fd(getenv(MFU_ENV_RING_FD), NULL);
	const char *rest = NULL;
	void *mem;

	if (ring_fd < 0 || fstat(ring_fd, &st) < 0 || st.st_size <= 0)
		return;
	/* Only a ring made by the same user may feed the recorder: refuse one
	 * owned by anybody else (a stray fd number, or a planted one). */
	if (st.st_uid != geteuid() && geteuid() != 0)
		return;
	/* MAP_POPULATE: fault the ring in now, not one page per 16 records later
	 * inside the markers. */
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring_fd, 0);
	if (mem == MAP_FAILED)
		return;
	if (mring_check(mem, (size_t)st.st_size) != 0) {
		munmap(mem, (size_t)st.st_size);
		return;
	}
	const struct mring_header *h = mem;
	g_group_fd = parse_fd(getenv(MFU_ENV_GROUP_FD), &rest);
	if (rest)
		g_group1_fd = parse_fd(rest, NULL);
	g_n0 = h->ncounters;
	g_read_size = (3 + h->ncounters) * sizeof(uint64_t);
	g_read1_size = (3 + h->ncounters1) * sizeof(uint64_t);
	if (h->ncounters == 0)
		g_group_fd = -1;
	if (h->ncounters1 == 0)
		g_group1_fd = -1;
	g_pid = (int32_t)getpid();
	__atomic_fetch_add(&((struct mring_header *)mem)->writers, 1, __ATOMIC_RELAXED);
	pthread_atfork(NULL, NULL, after_fork_child);
	g_ring = mem;
	__atomic_store_n(&g_on, 1, __ATOMIC_RELEASE);
}

static void emit(uint16_t kind, const char *name, double a, double b)
{
	struct mring_record *r;
	struct timespec ts;
	uint64_t pos;
	uint16_t flags = 0;

	r = mring_claim(g_ring, &pos);
	if (!r)
		return; /* the ring is full: counted in the ring's lost field */
	if (!t_tid)
		t_tid = (int32_t)syscall(SYS_gettid);
	if (g_group_fd < 0 || read(g_group_fd, &r->nr, g_read_size) != (ssize_t)g_read_size) {
		r->nr = 0;
		flags |= g_group_fd < 0 ? 0 : MRING_F_NO_COUNTERS;
	}
	if (g_group1_fd >= 0) {
		uint64_t buf[3 + MRING_MAX_COUNTERS];
		if (r->nr == g_n0 && read(g_group1_fd, buf, g_read1_size) == (ssize_t)g_read1_size &&
		    g_n0 + buf[0] <= MRING_MAX_COUNTERS) {
			r->time_enabled1 = buf[1];
			r->time_running1 = buf[2];
			memcpy(&r->values[g_n0], &buf[3], buf[0] * sizeof(uint64_t));
			r->nr = g_n0 + buf[0];
		} else {
			flags |= MRING_F_NO_COUNTERS;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	r->time_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	r->kind = kind;
	r->pid = g_pid;
	r->tid = t_tid;
	r->a = a;
	r->b = b;
	r->name_len = 0;
	r->name[0] = '\0';
	if (kind == MRING_PHASE_BEGIN || kind == MRING_PHASE_END) {
		if (!name) {
			flags |= MRING_F_NULL_NAME;
		} else {
			size_t n = strnlen(name, MRING_NAME_MAX);
			if (n == MRING_NAME_MAX) {
				n = MRING_NAME_MAX - 1;
				flags |= MRING_F_NAME_TRUNCATED;
			}
			memcpy(r->name, name, n);
			r->name[n] = '\0';
			r->name_len = (uint16_t)n;
		}
	}
	r->flags = flags;
	mring_publish(r, pos);
}

EXPORT void mfu_step_begin(void)
{
	STAP_PROBE(mfu, step_begin);
	if (__builtin_expect(g_on, 1) == 0)
		return;
	emit(MRING_STEP_BEGIN, NULL, 0, 0);
}

EXPORT void mfu_step_end(void)
{
	STAP_PROBE(mfu, step_end);
	if (__builtin_expect(g_on, 1) == 0)
		return;
	emit(MRING_STEP_END, NULL, 0, 0);
}

EXPORT void mfu_step_model(double flops, double bytes)
{
	STAP_PROBE2(mfu, step_model, (long long)(isfinite(flops) ? flops : -1),
		    (long long)(isfinite(bytes) ? bytes : -1));
	if (__builtin_expect(g_on, 1) == 0)
		return;
	emit(MRING_STEP_MODEL, NULL, flops, bytes);
}

EXPORT void mfu_phase_begin(const char *name)
{
	STAP_PROBE1(mfu, phase_begin, name);
	if (__builtin_expect(g_on, 1) == 0)
		return;
	emit(MRING_PHASE_BEGIN, name, 0, 0);
}

EXPORT void mfu_phase_end(const char *name)
{
	STAP_PROBE1(mfu, phase_end, name);
	if (__builtin_expect(g_on, 1) == 0)
		return;
	emit(MRING_PHASE_END, name, 0, 0);
}

EXPORT void mfu_phase_model(double flops, double bytes)
{
	STAP_PROBE2(mfu, phase_model, (long long)(isfinite(flops) ? flops : -1),
		    (long long)(isfinite(bytes) ? bytes : -1));
	if (__builtin_expect(g_on, 1) == 0)
		return;
	emit(MRING_PHASE_MODEL, NULL, flops, bytes);
}

EXPORT int mfu_recording(void)
{
	return g_on;
}
