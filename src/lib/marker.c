/*
 * libmfu: step and phase markers.
 *
 * Not recorded, each marker is a USDT probe (a nop) plus one predictable
 * branch on a word (*g_onp). Recorded from the start (mfu-record put
 * MFU_RING_FD and MFU_GROUP_FD in the environment and left those fds open
 * across exec), a marker claims a slot in the shared marker ring, reads the
 * inherited counter group straight into it (one read(): whole-process sums
 * over all live threads, see KERNEL-NOTES), stamps CLOCK_MONOTONIC and
 * publishes it. Pairing begins with ends and spotting misuse is the
 * recorder's job, so a boundary costs one read() and a few stores. Nothing
 * here prints or aborts.
 *
 * The inherited fds are checked for what they are (the ring's memfd by its
 * device and inode, each group leader by its perf event id, both named in
 * the environment), not only for being open: a launcher between mfu-record
 * and the program (mpirun) may have closed them or reused the numbers for
 * other files. Then libmfu asks the recorder for them again over its
 * socket (handoff.h), and when that fails too it writes nothing.
 *
 * A process mfu-record did not start gets an attach page instead
 * (attach_page.h): a small memfd that mfu-record -p finds among its
 * descriptors. g_onp then points at the page's `on` word, which only the
 * recorder sets, so a marker costs the same one load and branch until a
 * recorder joins; then boundaries go into the ring in that memfd with
 * their times and no counter reading (MRING_F_UNREAD: the counters the
 * recorder opened on threads that already ran cannot be read from here;
 * it interpolates them from its own readings of every thread).
 *
 * A full ring drops the record (markers never wait). The thread remembers
 * that it did, and its next published record says so (MRING_F_AFTER_LOSS):
 * without that, the recorder would take the unpaired boundaries around the
 * gap for misuse. A thread that exits with such a loss untold says it in a
 * record of its own (MRING_LOSS), the one place where a short wait for a
 * free slot is allowed: the thread is leaving, no marker is waiting.
 */
#include "mfu.h"
#include "emulate/mfu_emulate.h"
#include "attach_page.h"
#include "handoff.h"
#include "libflops.h"
#include "marker_ring.h"
#include "step_result.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sdt.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define HAVE_VALGRIND_H 1
#endif

#define EXPORT __attribute__((visibility("default")))

_Static_assert(MRING_LIB_WORDS == LIBFLOPS_WORDS, "the marker record holds libflops_sum()'s words");

/* The word every marker tests: g_on (1 once the inherited ring is mapped),
 * or the attach page's `on`, which a recorder that joined sets. */
static uint32_t g_on;
static const uint32_t *g_onp = &g_on;
/* The in-process mode's switch (mfu_enable(), step_result.c): g_onp points
 * here while it is on and no recorder launched the process. */
static const uint32_t g_one = 1;
static void *g_ring;                       /* the inherited ring, NULL: none */
static struct mring_producer g_prod;       /* ... its geometry, as checked */
/* The attach page (attach_page.h), NULL: none; its ring's geometry, fixed
 * when libmfu made it; which generation of the ring it took (gen << 1 |
 * 1), or refused (gen << 1), 0: none yet. */
static struct mfu_attach_page *g_page;
static size_t g_page_size;                 /* as mapped (the page's own field is shared) */
static int g_page_fd = -1;
static dev_t g_page_dev;                   /* what g_page_fd is: the program may close */
static ino_t g_page_ino;                   /* it and reuse its number for a file of its own */
static struct mring_producer g_aprod;
static uint64_t g_astate;
static pthread_mutex_t g_alock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_owner_checked_ns;        /* a full attached ring: the last look at its recorder */
static int g_ngroups;                      /* counter groups to read */
static int g_fd[MRING_MAX_GROUPS];         /* their leaders' fds (-1: none) */
static int g_emu = -1;                     /* the group the FP-op emulator fills, -1: none */
static size_t g_size[MRING_MAX_GROUPS];    /* bytes of one read of each */
static unsigned g_off[MRING_MAX_GROUPS];   /* where each goes in data[] */
static int32_t g_pid;
static __thread int32_t t_tid;
static __thread uint32_t t_lost;       /* records dropped since the last published one */
static __thread uint8_t t_lost_kinds;  /* MRING_F_LOST_STEP | MRING_F_LOST_PHASE */
static __thread int t_exit_hook;       /* the thread-exit key is set */
static pthread_key_t g_exit_key;
static int g_exit_key_ok;
/* Library-call counts (libflops.h): the region mfu-record shares with the
 * counting library, and this process's slot in it (looked up again after a
 * fork: the child is another process). */
static struct libflops_region *g_lf;
static struct libflops_proc *g_lf_proc;
static int32_t g_lf_pid;

/* Parse the next item of a comma-separated fd list at *s: a non-negative
 * number, "-" for none, or "E" for the group the FP-op emulator counts
 * (returned as -2). Returns the fd or -1, and moves *s past it. */
static int next_fd(const char **s)
{
	const char *p = *s;
	char *end;
	long v;

	if (!p || !*p)
		return -1;
	if (p[0] == 'E' && (p[1] == ',' || p[1] == '\0')) {
		*s = p[1] ? p + 2 : NULL;
		return -2;
	}
	errno = 0;
	v = strtol(p, &end, 10);
	if (end == p || errno || v < 0 || v > 1 << 30)
		v = -1;
	end = strchr(p, ',');
	*s = end ? end + 1 : NULL;
	return (int)v;
}

static void page_make(void);

/* Close the page's descriptor if it still is the page's. */
static void page_close_fd(void)
{
	struct stat st;

	if (g_page_fd >= 0 && fstat(g_page_fd, &st) == 0 && st.st_dev == g_page_dev && st.st_ino == g_page_ino)
		close(g_page_fd);
	g_page_fd = -1;
}

static void after_fork_child(void)
{
	/* The child is a new process with one thread: its ids changed. */
	g_pid = (int32_t)getpid();
	t_tid = 0;
	t_lost = 0; /* the parent's thread lost those, and says so itself */
	g_lf_proc = NULL;
	t_lost_kinds = 0;
	/* A recorder joined the parent, not this process: the child makes a
	 * page of its own (the parent's mapping and descriptor go; the
	 * parent's lock may have been held by a thread the child lacks). */
	if (g_page) {
		struct mfu_attach_page *old = g_page;
		g_onp = &g_on;
		g_page = NULL;
		munmap(old, g_page_size);
		page_close_fd();
		g_astate = 0;
		pthread_mutex_init(&g_alock, NULL);
		page_make();
	}
	if (step_result_inprocess() && !g_ring)
		g_onp = &g_one;
}

static void emit(uint8_t kind, const char *name, double a, double b);

/* Tell the recorder about records this thread dropped and never followed
 * with a published one: retry for about 20 ms while the recorder frees a
 * slot (it drains every 5 ms), then give up (the loss stays counted in the
 * ring header, only unattributed). Attached, once: a recorder that joined
 * may have left without a word (killed), and threads must not wait on it. */
static void tell_loss(void)
{
	int tries = g_ring ? 20 : 1;

	for (int i = 0; t_lost && i < tries; i++) {
		if (i) {
			struct timespec ms = { 0, 1000000 };
			nanosleep(&ms, NULL);
		}
		emit(MRING_LOSS, NULL, 0, 0);
	}
}

static void thread_exit(void *unused)
{
	(void)unused;
	if (__atomic_load_n(g_onp, __ATOMIC_ACQUIRE))
		tell_loss();
}

/* The thread that calls exit() runs no key destructor: this runs instead.
 * Then the key goes: a libmfu unloaded with dlclose() must leave no
 * destructor behind for the threads that outlive it. The attach page stays
 * mapped (threads may still be marking while the process exits) but
 * retires: no recorder will join it any more. */
__attribute__((destructor)) static void mfu_fini(void)
{
	if (__atomic_load_n(g_onp, __ATOMIC_ACQUIRE))
		tell_loss();
	if (g_exit_key_ok) {
		g_exit_key_ok = 0;
		pthread_key_delete(g_exit_key);
	}
	if (g_page) {
		__atomic_store_n(&g_page->pid, 0, __ATOMIC_RELEASE);
		page_close_fd();
	}
}

/* The attach page (attach_page.h): a memfd of the page and a ring, its size
 * sealed, mapped whole (only the page is touched now). Nothing when it
 * cannot be made: the markers stay no-ops, and mfu-record -p says why it
 * found none. */
static void page_make(void)
{
	const size_t size = MFU_ATTACH_PAGE + mring_size(MFU_ATTACH_RECORDS);
	struct mfu_attach_page *pg;
	struct rlimit rl;
	struct stat st;
	int fd;

	if (getenv(MFU_ENV_NO_ATTACH))
		return;
	/* growing a file past RLIMIT_FSIZE raises SIGXFSZ, which kills */
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < size)
		return;
	fd = memfd_create(MFU_ATTACH_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return;
	if (ftruncate(fd, (off_t)size) != 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 ||
	    fstat(fd, &st) != 0) {
		close(fd);
		return;
	}
	pg = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED) {
		close(fd);
		return;
	}
	pg->version = MFU_ATTACH_VERSION;
	pg->page_size = MFU_ATTACH_PAGE;
	pg->nslots = MFU_ATTACH_RECORDS;
	pg->size = size;
	pg->pid = (int32_t)getpid();
	snprintf(pg->lib, sizeof(pg->lib), "%s", MFU_VERSION);
	__atomic_store_n(&pg->magic, MFU_ATTACH_MAGIC, __ATOMIC_RELEASE);
	/* the ring's geometry is the one made room for here, whatever a
	 * header written later says */
	g_aprod.h = (struct mring_header *)((char *)pg + MFU_ATTACH_PAGE);
	g_aprod.slots = (struct mring_record *)((char *)g_aprod.h + sizeof(struct mring_header));
	g_aprod.mask = MFU_ATTACH_RECORDS - 1;
	g_page = pg;
	g_page_size = size;
	g_page_fd = fd;
	g_page_dev = st.st_dev;
	g_page_ino = st.st_ino;
	g_onp = &pg->on;
}

/* The ring a recorder made for generation @gen: the one this page made
 * room for, or nothing is written (refused_gen says so). Under g_alock. */
static int accept_ring(struct mfu_attach_page *pg, uint32_t gen)
{
	const struct mring_header *h = g_aprod.h;
	int ok = h->magic == MRING_MAGIC && h->version == MRING_VERSION && h->header_size == sizeof(*h) &&
		 h->record_size == sizeof(struct mring_record) && h->nslots == MFU_ATTACH_RECORDS && h->ngroups == 0;

	if (ok) {
		__atomic_fetch_add(&g_aprod.h->writers, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&pg->accepted_gen, gen, __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(&pg->refused_gen, gen, __ATOMIC_RELEASE);
	}
	return ok;
}

/* The attach ring to write into now, or NULL. The first marker after a
 * recorder joined takes its ring (once per generation; the other threads
 * wait that long, a few loads); markers see the same geometry every time. */
static const struct mring_producer *attached_ring(void)
{
	struct mfu_attach_page *pg = g_page;
	uint32_t gen;
	uint64_t st;

	if (!pg)
		return NULL;
	gen = __atomic_load_n(&pg->gen, __ATOMIC_ACQUIRE);
	st = __atomic_load_n(&g_astate, __ATOMIC_ACQUIRE);
	if (st >> 1 != gen || !st) {
		pthread_mutex_lock(&g_alock);
		st = g_astate;
		if (st >> 1 != gen || !st) {
			st = (uint64_t)gen << 1 | (uint64_t)accept_ring(pg, gen);
			__atomic_store_n(&g_astate, st, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&g_alock);
	}
	return (st & 1) ? &g_aprod : NULL;
}

/* The attached ring is full: the recorder drains it every few ms, unless
 * it is gone (killed, it could not say so). Look, at most every 100 ms:
 * a recorder that no longer exists has its markers switched off here. */
static void check_owner(void)
{
	struct timespec ts;
	uint64_t now, last = __atomic_load_n(&g_owner_checked_ns, __ATOMIC_RELAXED);
	int32_t owner;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (now - last < 100000000ull ||
	    !__atomic_compare_exchange_n(&g_owner_checked_ns, &last, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	owner = __atomic_load_n(&g_page->owner, __ATOMIC_ACQUIRE);
	if (owner <= 0 || (kill(owner, 0) != 0 && errno == ESRCH))
		__atomic_store_n(&g_page->on, 0, __ATOMIC_RELEASE);
}

/* A group leader's fd is the event named by @id (MFU_GROUP_ID), checked
 * without touching anything else: the link first, then the event id. */
static int group_fd_is(int fd, const char *id)
{
	char path[64], link[64];
	unsigned long long want, have = 0;
	ssize_t n;
	char *end;

	errno = 0;
	want = strtoull(id, &end, 10);
	if (end == id || errno)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0 && errno != ENOENT)
		return 0; /* closed, or not a descriptor of ours */
	if (n >= 0) {
		link[n] = '\0';
		if (strcmp(link, "anon_inode:[perf_event]") != 0)
			return 0;
	} else if (fcntl(fd, F_GETFD) < 0) {
		return 0; /* no /proc: at least the fd must be open */
	}
	return ioctl(fd, PERF_EVENT_IOC_ID, &have) == 0 && have == want;
}

/* Append "; "-separated @what to @why. */
static void say(char *why, size_t len, const char *what)
{
	size_t n = strlen(why);
	if (n + 3 < len)
		snprintf(why + n, len - n, "%s%s", n ? "; " : "", what);
}

/* Check the inherited fds against the identities in the environment: a
 * launcher may have closed them, or reused the numbers. @ring_fd and
 * @gfd[] (from the environment; -2: the emulator's group) are replaced by
 * descriptors the recorder hands over again when one was wrong. Returns
 * 0 when they are all usable now, -1 when this process cannot be
 * recorded (nothing is written then). */
static int check_fds(int *ring_fd, int *gfd, int ngfd)
{
	char why[MFU_HANDOFF_TEXT] = "", buf[200];
	const char *ring_id = getenv(MFU_ENV_RING_ID), *ids = getenv(MFU_ENV_GROUP_ID);
	int fds[MRING_MAX_GROUPS + 1], got, ngroups, k;

	if (ring_id && mfu_fd_is(*ring_fd, ring_id) == 0) {
		char d[160];
		mfu_fd_describe(*ring_fd, d, sizeof(d));
		snprintf(buf, sizeof(buf), "MFU_RING_FD=%d is %s", *ring_fd, d);
		say(why, sizeof(why), buf);
	}
	for (int g = 0; ids && g < ngfd; g++) {
		const char *id = ids;
		for (int i = 0; i < g && id; i++)
			id = (id = strchr(id, ',')) ? id + 1 : NULL;
		if (!id || gfd[g] < 0 || group_fd_is(gfd[g], id) != 0)
			continue;
		char d[160];
		mfu_fd_describe(gfd[g], d, sizeof(d));
		snprintf(buf, sizeof(buf), "MFU_GROUP_FD %d is %s", gfd[g], d);
		say(why, sizeof(why), buf);
	}
	if (!why[0])
		return 0;
	got = mfu_handoff_request(MFU_HANDOFF_RING, why, fds, MRING_MAX_GROUPS + 1, &ngroups);
	if (got < 1)
		return -1;
	/* the ring, then one leader per numeric item of MFU_GROUP_FD */
	k = 1;
	for (int g = 0; g < ngfd; g++)
		if (gfd[g] >= 0)
			gfd[g] = k <= ngroups ? fds[k++] : -1;
	for (; k < got; k++)
		close(fds[k]);
	if (ring_id && mfu_fd_is(fds[0], ring_id) != 1) {
		close(fds[0]);
		return -1;
	}
	*ring_fd = fds[0];
	return 0;
}

/* Recorded from the start: the inherited (or handed over) ring and
 * groups. Returns 0 when the markers write into it, else -1. */
static int launch_init(const char *ring_env)
{
	struct stat st;
	int ring_fd = next_fd(&ring_env);
	const char *groups = getenv(MFU_ENV_GROUP_FD);
	int gfd[MRING_MAX_GROUPS], ngfd = 0;
	void *mem;

	if (ring_fd < 0)
		return -1;
	while (groups && ngfd < MRING_MAX_GROUPS)
		gfd[ngfd++] = next_fd(&groups);
	if (check_fds(&ring_fd, gfd, ngfd) != 0)
		return -1;
	if (fstat(ring_fd, &st) < 0 || st.st_size <= 0)
		return -1;
	/* Only a ring made by this user or by root (mfu-record under sudo) may
	 * be written: refuse one owned by anybody else (a stray fd number, or a
	 * planted one). */
	if (st.st_uid != geteuid() && st.st_uid != 0)
		return -1;
	/* Not populated here: the producer maps its first slots writable
	 * below and the rest ahead of the claims (marker_ring.h, "Page faults
	 * out of the markers"). */
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, ring_fd, 0);
	if (mem == MAP_FAILED)
		return -1;
	if (mring_producer_init(&g_prod, mem, (size_t)st.st_size) != 0) {
		munmap(mem, (size_t)st.st_size);
		return -1;
	}
	mring_producer_prefault_start(&g_prod);
	const struct mring_header *h = mem;
	g_ngroups = (int)h->ngroups;
	for (int g = 0; g < g_ngroups; g++) {
		g_fd[g] = g < ngfd ? gfd[g] : -1;
		if (g_fd[g] == -2) {
			g_fd[g] = -1;
			g_emu = g;
		}
		if (h->group_nr[g] == 0)
			g_fd[g] = -1; /* nothing of this group could be opened */
		g_size[g] = (3u + h->group_nr[g]) * sizeof(uint64_t);
		g_off[g] = h->group_offset[g];
	}
	g_pid = (int32_t)getpid();
	g_lf = libflops_region_attach();
	__atomic_fetch_add(&((struct mring_header *)mem)->writers, 1, __ATOMIC_RELAXED);
	g_ring = mem;
	__atomic_store_n(&g_on, 1, __ATOMIC_RELEASE);
	return 0;
}

__attribute__((constructor)) static void mfu_init(void)
{
	const char *ring_env = getenv(MFU_ENV_RING_FD);

	g_pid = (int32_t)getpid();
	/* a launched program whose descriptors were lost, and could not be
	 * had again, still gets a page: mfu-record -p can join it */
	if (!ring_env || launch_init(ring_env) != 0)
		page_make();
	if (step_result_init(g_ring != NULL, g_emu >= 0) && !g_ring)
		g_onp = &g_one;
	/* also without a ring or page: the in-process mode's steps are the
	 * process's, by g_pid */
	pthread_atfork(NULL, NULL, after_fork_child);
	if (!g_ring && !g_page)
		return;
	g_exit_key_ok = pthread_key_create(&g_exit_key, thread_exit) == 0;
}

/* The process's library-call counts into @r, and with @snap a copy of its
 * per-function table. Returns 1 when the counting library is loaded in
 * this process (the counts are known), else 0. */
static int lib_counts(struct mring_record *r, int snap)
{
	struct libflops_proc *p = g_lf_proc;

	if (!p || g_lf_pid != g_pid) {
		p = libflops_proc_for(g_lf, g_pid);
		g_lf_proc = p;
		g_lf_pid = g_pid;
	}
	if (!p || !__atomic_load_n(&p->active, __ATOMIC_ACQUIRE))
		return 0;
	libflops_sum(p, r->lib);
	if (snap)
		r->lib_snap = libflops_snapshot(g_lf, p);
	return 1;
}

/* --emulate: the emulator's counts of this process so far into @dst, laid
 * out as a perf group reading of @nr values (mfu_emulate.h's order: the
 * counts per precision and width, x87 operations, guest instructions).
 * time_enabled and time_running are both the monotonic clock: never
 * multiplexed. Returns 0, or -1 outside the emulator (a program run
 * natively with the variable set by hand: the group reads as missing). */
static int read_emulated(uint64_t *dst, unsigned nr)
{
#ifdef HAVE_VALGRIND_H
	struct mfu_emu_counts c;
	struct timespec ts;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	if (VALGRIND_DO_CLIENT_REQUEST_EXPR(0, MFU_EMU_REQ_READ, &c, 0, 0, 0, 0) != 1)
		return -1;
	unsigned have = MFU_EMU_NPREC * MFU_EMU_NWIDTH + 2;
	if (nr > have)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	dst[0] = nr;
	dst[1] = dst[2] = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	memcpy(&dst[3], (const char *)&c + offsetof(struct mfu_emu_counts, inst), nr * sizeof(uint64_t));
	return 0;
#else
	(void)dst;
	(void)nr;
	return -1;
#endif
}

/* One read() of counter group @g into @dst. An inherited counter read
 * while one of the threads it counts is exiting can fail with ECHILD
 * (Linux 6.18 here: the exiting thread's child event is being folded into
 * the parent's): seen in one boundary of a few hundred thousand of two
 * threads marking unthrottled, as they ended. That is transient: read
 * again, a few times. Returns 0 when the whole group was read. */
static int read_group(int g, uint64_t *dst)
{
	for (int tries = 0; tries < 4; tries++) {
		ssize_t n = read(g_fd[g], dst, g_size[g]);
		if (n == (ssize_t)g_size[g])
			return 0;
		if (n >= 0 || errno != ECHILD)
			break;
	}
	return -1;
}

/* Switch the in-process mode's markers on or off (step_result.c). A
 * process mfu-record launched has them on already. */
void marker_set_inprocess(int on);
void marker_set_inprocess(int on)
{
	if (g_ring)
		return;
	__atomic_store_n(&g_onp, on ? &g_one : g_page ? &g_page->on : &g_on, __ATOMIC_RELEASE);
}

/* A step boundary for the step results (step_result.h) that made no
 * record: timed here, no library counts. */
static void mark_unrecorded(uint8_t kind, double a, double b)
{
	struct timespec ts;

	if (kind > MRING_STEP_MODEL || (!g_ring && !step_result_inprocess()))
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	step_result_mark(kind, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec, a, b, NULL, g_pid);
}

/* No slot for a record of @kind: the ring is full. Counted in the ring's
 * lost field, and told with this thread's next record. */
static void ring_full(uint8_t kind)
{
	if (kind == MRING_LOSS)
		return;
	if (t_lost < UINT32_MAX)
		t_lost++;
	t_lost_kinds |= kind <= MRING_STEP_MODEL ? MRING_F_LOST_STEP : MRING_F_LOST_PHASE;
	if (!t_exit_hook && g_exit_key_ok) {
		/* a non-NULL value makes the key's destructor run at exit */
		pthread_setspecific(g_exit_key, &t_exit_hook);
		t_exit_hook = 1;
	}
}

/* The first @ngroups counter groups read into @r. Returns the record's
 * flags they set. */
static uint8_t read_groups(struct mring_record *r, int ngroups)
{
	uint8_t flags = 0;

	for (int g = 0; g < ngroups; g++) {
		uint64_t *dst = &r->data[g_off[g]];
		if (g == g_emu) {
			if (read_emulated(dst, (unsigned)(g_size[g] / sizeof(uint64_t) - 3)) != 0) {
				dst[0] = dst[1] = dst[2] = 0;
				flags |= MRING_F_NO_COUNTERS;
			}
		} else if (g_fd[g] < 0 || read_group(g, dst) != 0) {
			dst[0] = dst[1] = dst[2] = 0;
			if (g_size[g] > 3 * sizeof(uint64_t))
				flags |= MRING_F_NO_COUNTERS;
		}
	}
	return flags;
}

/* A phase record's @name into @r (cut to MRING_NAME_MAX - 1 bytes).
 * Returns the record's flags it sets. */
static uint8_t copy_name(struct mring_record *r, uint8_t kind, const char *name)
{
	uint8_t flags = 0;

	r->name_len = 0;
	r->name[0] = '\0';
	if (kind != MRING_PHASE_BEGIN && kind != MRING_PHASE_END)
		return 0;
	if (!name)
		return MRING_F_NULL_NAME;
	size_t n = strnlen(name, MRING_NAME_MAX);
	if (n == MRING_NAME_MAX) {
		n = MRING_NAME_MAX - 1;
		flags |= MRING_F_NAME_TRUNCATED;
	}
	memcpy(r->name, name, n);
	r->name[n] = '\0';
	r->name_len = (uint8_t)n;
	return flags;
}

static void emit(uint8_t kind, const char *name, double a, double b)
{
	/* in the in-process mode the markers come here whether a recorder
	 * joined or not: only its `on` word says */
	const struct mring_producer *p = g_ring ? &g_prod
					 : g_page && __atomic_load_n(&g_page->on, __ATOMIC_ACQUIRE) ? attached_ring()
												: NULL;
	struct mring_record *r;
	struct timespec ts;
	uint64_t pos;
	uint8_t flags = 0;
	int unread = p == &g_aprod; /* attached: times only */

	if (!p) {
		mark_unrecorded(kind, a, b);
		return;
	}
	if (!t_tid)
		t_tid = (int32_t)syscall(SYS_gettid);
	r = kind == MRING_LOSS ? mring_producer_claim_uncounted(p, &pos) : mring_producer_claim(p, &pos);
	if (!r) {
		if (unread)
			check_owner();
		ring_full(kind);
		mark_unrecorded(kind, a, b);
		return;
	}
	/* who claimed it, first: a hole left by a writer killed before the
	 * publish names its thread (mring_consumer_skip_hole()) */
	r->pid = g_pid;
	r->tid = t_tid;
	/* a loss notice bounds no interval: no counters (a thread leaving may
	 * not be able to read them any more) */
	int ngroups = kind == MRING_LOSS || unread ? 0 : g_ngroups;
	if (unread && kind != MRING_LOSS)
		flags |= MRING_F_UNREAD;
	/* A begin takes its time before reading the counters, an end after:
	 * the interval then holds both counter snapshots, so the CPU time
	 * counted in it cannot exceed its wall time x threads. (Taken after
	 * the reads at a begin too, a read delayed in the kernel, or a vCPU
	 * stalled by its host in the copy to the slot, moved the begin time
	 * past its snapshot: a 2 us step measured 7 us of CPU time.) */
	int time_first = kind == MRING_STEP_BEGIN || kind == MRING_PHASE_BEGIN;
	if (time_first)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	flags |= read_groups(r, ngroups);
	r->ngroups = (uint8_t)ngroups;
	r->lib_snap = 0;
	if (g_lf && kind != MRING_LOSS && lib_counts(r, kind == MRING_STEP_BEGIN || kind == MRING_STEP_END))
		flags |= MRING_F_LIB;
	if (!time_first)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	r->time_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	r->kind = kind;
	r->a = a;
	r->b = b;
	flags |= copy_name(r, kind, name);
	r->lost = 0;
	if (t_lost) {
		flags |= MRING_F_AFTER_LOSS | t_lost_kinds;
		r->lost = t_lost;
		t_lost = 0;
		t_lost_kinds = 0;
	}
	r->flags = flags;
	/* the step results see the record's own time and counts: the
	 * recorder's figures, to the last bit */
	if (kind <= MRING_STEP_MODEL && (g_ring || step_result_inprocess()))
		step_result_mark(kind, r->time_ns, a, b, (flags & MRING_F_LIB) ? r->lib : NULL, g_pid);
	mring_producer_publish(p, r, pos);
	if (p == &g_prod)
		mring_producer_prefault(&g_prod, pos);
}

EXPORT void mfu_step_begin(void)
{
	STAP_PROBE(mfu, step_begin);
	if (__builtin_expect(__atomic_load_n(g_onp, __ATOMIC_RELAXED), 1) == 0)
		return;
	emit(MRING_STEP_BEGIN, NULL, 0, 0);
}

EXPORT void mfu_step_end(void)
{
	STAP_PROBE(mfu, step_end);
	if (__builtin_expect(__atomic_load_n(g_onp, __ATOMIC_RELAXED), 1) == 0)
		return;
	emit(MRING_STEP_END, NULL, 0, 0);
}

EXPORT void mfu_step_model(double flops, double bytes)
{
	STAP_PROBE2(mfu, step_model, (long long)(isfinite(flops) ? flops : -1),
		    (long long)(isfinite(bytes) ? bytes : -1));
	if (__builtin_expect(__atomic_load_n(g_onp, __ATOMIC_RELAXED), 1) == 0)
		return;
	emit(MRING_STEP_MODEL, NULL, flops, bytes);
}

EXPORT void mfu_phase_begin(const char *name)
{
	STAP_PROBE1(mfu, phase_begin, name);
	if (__builtin_expect(__atomic_load_n(g_onp, __ATOMIC_RELAXED), 1) == 0)
		return;
	emit(MRING_PHASE_BEGIN, name, 0, 0);
}

EXPORT void mfu_phase_end(const char *name)
{
	STAP_PROBE1(mfu, phase_end, name);
	if (__builtin_expect(__atomic_load_n(g_onp, __ATOMIC_RELAXED), 1) == 0)
		return;
	emit(MRING_PHASE_END, name, 0, 0);
}

EXPORT void mfu_phase_model(double flops, double bytes)
{
	STAP_PROBE2(mfu, phase_model, (long long)(isfinite(flops) ? flops : -1),
		    (long long)(isfinite(bytes) ? bytes : -1));
	if (__builtin_expect(__atomic_load_n(g_onp, __ATOMIC_RELAXED), 1) == 0)
		return;
	emit(MRING_PHASE_MODEL, NULL, flops, bytes);
}

EXPORT int mfu_recording(void)
{
	const uint32_t *on = __atomic_load_n(&g_onp, __ATOMIC_ACQUIRE);

	/* the in-process mode's switch is no recorder: a joined one's is the page's */
	if (on == &g_one)
		on = g_page ? &g_page->on : &g_on;
	return __atomic_load_n(on, __ATOMIC_ACQUIRE) != 0;
}
