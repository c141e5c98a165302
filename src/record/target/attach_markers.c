/* The markers of a process mfu-record -p joined (attach.h, attach_page.h). */
#include "attach.h"
#include "attach_page.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MEMFD_LINK "/memfd:" MFU_ATTACH_NAME " (deleted)"
#define RING_LINK "/memfd:mfu-marker-ring (deleted)"
/* A ring of more records than this is no libmfu's: making it would have the
 * recorder write (and pay for) that much of a hostile process's memory. */
#define MAX_SLOTS (1u << 18)
#define MAX_SIZE (MFU_ATTACH_PAGE + sizeof(struct mring_header) + (size_t)MAX_SLOTS * sizeof(struct mring_record))

struct attach_markers {
	pid_t pid;
	int fd;
	struct mfu_attach_page *page; /* the shared page: never trusted */
	size_t size;                  /* mapped, from fstat (sealed: it cannot shrink) */
	uint64_t nslots;              /* the ring's, as checked when found */
	uint32_t gen;                 /* ours */
	int on;
};

static void sleep_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Map the memfd at @path if it is a page libmfu of process @pid made and
 * this recorder reads. Returns 0 with @am filled, 1 when it is not one
 * (@why may say why: another version), or -errno. */
static int try_page(struct attach_markers *am, pid_t pid, const char *path, char *why, size_t whylen)
{
	struct mfu_attach_page copy;
	struct stat st;
	void *mem;
	int fd, seals;

	fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return errno == ENOENT ? 1 : -errno;
	/* a memfd with its size sealed: a process that shrank it under us
	 * would kill the recorder with SIGBUS at its next read */
	seals = fcntl(fd, F_GET_SEALS);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || seals < 0 || !(seals & F_SEAL_SHRINK) ||
	    (uint64_t)st.st_size < MFU_ATTACH_PAGE + mring_size(1) || (uint64_t)st.st_size > MAX_SIZE) {
		close(fd);
		return 1;
	}
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	memcpy(&copy, mem, sizeof(copy));
	if (copy.magic != MFU_ATTACH_MAGIC || copy.version != MFU_ATTACH_VERSION) {
		if (copy.magic == MFU_ATTACH_MAGIC)
			strbuf(why, whylen, "its libmfu (%.*s) has an attach page of version %u and this mfu-record "
			       "reads version %u: join it with the mfu-record of libmfu's release", (int)sizeof(copy.lib),
			       copy.lib, copy.version, MFU_ATTACH_VERSION);
		goto not_one;
	}
	if (copy.pid != pid || copy.page_size != MFU_ATTACH_PAGE || copy.size != (uint64_t)st.st_size ||
	    copy.nslots == 0 || (copy.nslots & (copy.nslots - 1)) || copy.nslots > MAX_SLOTS ||
	    MFU_ATTACH_PAGE + mring_size(copy.nslots) > (uint64_t)st.st_size)
		goto not_one; /* another process's page (passed over a socket), or one that retired */
	am->fd = fd;
	am->page = mem;
	am->size = (size_t)st.st_size;
	am->nslots = copy.nslots;
	return 0;
not_one:
	munmap(mem, (size_t)st.st_size);
	close(fd);
	return 1;
}

/* Find the page among @pid's descriptors, or, when the program closed its
 * descriptor, through its mapping (/proc/PID/map_files: root only). Notes
 * on the way what the descriptors say (@launched: the ring of the
 * mfu-record that started it). */
static int find_page(struct attach_markers *am, pid_t pid, int *launched, char *why, size_t whylen)
{
	char path[PATH_MAX], link[PATH_MAX], line[PATH_MAX + 128];
	struct dirent *e;
	DIR *d;
	FILE *f;
	int rc, denied = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		denied = errno == EACCES || errno == EPERM ? -errno : 0;
	while (d && (e = readdir(d))) {
		int fd;
		if (safe_atoi(e->d_name, &fd) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
		ssize_t n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, RING_LINK) == 0)
			*launched = 1;
		if (strcmp(link, MEMFD_LINK) != 0)
			continue;
		rc = try_page(am, pid, path, why, whylen);
		if (rc <= 0) {
			closedir(d);
			return rc;
		}
	}
	if (d)
		closedir(d);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return denied ? denied : -ENOENT;
	rc = -ENOENT;
	while (rc != 0 && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;
		int pos = 0;
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s%n", &lo, &hi, &off, &pos) != 3 || off != 0)
			continue;
		const char *name = line + pos;
		while (*name == ' ')
			name++;
		if (strncmp(name, MEMFD_LINK, strlen(MEMFD_LINK)) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", (int)pid, lo, hi);
		int k = try_page(am, pid, path, why, whylen);
		if (k == 0)
			rc = 0;
		else if (k < 0 && rc == -ENOENT)
			rc = k == -EPERM || k == -EACCES ? -EACCES : k;
	}
	fclose(f);
	return rc;
}

/* A libmfu whose file holds the page's memfd name knows how to make one. */
static int lib_knows_attach(const char *path)
{
	char buf[65536 + 16];
	size_t keep = 0, n;
	int found = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (!found && (n = fread(buf + keep, 1, sizeof(buf) - 16 - keep, f)) > 0) {
		n += keep;
		found = memmem(buf, n, MFU_ATTACH_NAME, sizeof(MFU_ATTACH_NAME)) != NULL;
		keep = n < 16 ? n : 16;
		memmove(buf, buf + n - keep, keep);
	}
	fclose(f);
	return found;
}

/* Whether @pid was started with @name in its environment. */
static int has_env(pid_t pid, const char *name)
{
	char path[64], buf[65536];
	size_t n, len = strlen(name);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
		if (strncmp(buf + i, name, len) == 0 && buf[i + len] == '=')
			return 1;
	return 0;
}

/* @pid's RLIMIT_FSIZE in bytes (ULLONG_MAX: none, or unknown). */
static unsigned long long file_size_limit(pid_t pid)
{
	char path[64], line[256];
	unsigned long long v = ULLONG_MAX;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "Max file size", 13) == 0 && sscanf(line + 13, "%llu", &v) != 1)
			v = ULLONG_MAX; /* "unlimited" */
	if (f)
		fclose(f);
	return v;
}

/* Why @pid has no page we can use, into @why (unless already said). */
static void why_none(pid_t pid, int rc, int launched, char *why, size_t whylen)
{
	char path[64], line[PATH_MAX + 128], lib[PATH_MAX] = "";
	FILE *f;

	if (why[0])
		return;
	if (launched) {
		strbuf(why, whylen, "process %d is recorded already, by the mfu-record that started it: its markers "
		       "go there", (int)pid);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	while (f && !lib[0] && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		if (!p || !strstr(p, "/libmfu.so"))
			continue;
		p[strcspn(p, "\n")] = '\0';
		strbuf(lib, sizeof(lib), "%s", p);
	}
	if (f)
		fclose(f);
	if (!lib[0]) {
		strbuf(why, whylen, "process %d does not use libmfu (none is loaded in it), so it has no step or "
		       "phase markers to switch on; steps can come from one of its functions or a library's (--step FUNC "
		       "or LIB:FUNC, e.g. libopenblas.so.0:cblas_dgemm, as root; a Python function, --step "
		       "py:MODULE.FUNC, only when mfu-record starts the program)",
		       (int)pid);
		return;
	}
	if (rc == -EACCES || rc == -EPERM) {
		strbuf(why, whylen, "the libmfu of process %d (%s) has an attach page this user cannot open (%s): "
		       "the program closed its descriptor, which only root can get around", (int)pid, lib,
		       strerror(-rc));
		return;
	}
	if (lib_knows_attach(lib) == 0) {
		strbuf(why, whylen, "the libmfu of process %d (%s) is older than this mfu-record and cannot be "
		       "switched on from outside (it makes no attach page): build the program against this "
		       "release's libmfu, or start it under mfu-record", (int)pid, lib);
		return;
	}
	if (has_env(pid, MFU_ENV_NO_ATTACH)) {
		strbuf(why, whylen, "process %d was started with " MFU_ENV_NO_ATTACH " set, so its libmfu (%s) made no "
		       "attach page and its markers cannot be switched on from outside", (int)pid, lib);
		return;
	}
	unsigned long long limit = file_size_limit(pid);
	if (limit < MFU_ATTACH_PAGE + mring_size(MFU_ATTACH_RECORDS)) {
		strbuf(why, whylen, "process %d runs with a file size limit of %llu bytes (ulimit -f), below the %zu "
		       "bytes of an attach page and its ring, so its libmfu (%s) made none", (int)pid, limit,
		       (size_t)(MFU_ATTACH_PAGE + mring_size(MFU_ATTACH_RECORDS)), lib);
		return;
	}
	if (geteuid() == 0)
		strbuf(why, whylen, "the libmfu of process %d (%s) made no attach page (it could not make a memfd), "
		       "or it was unloaded", (int)pid, lib);
	else
		strbuf(why, whylen, "the libmfu of process %d (%s) made no attach page, or the program closed its "
		       "descriptor, and only root can find the page then (/proc/%d/map_files)", (int)pid, lib,
		       (int)pid);
}

/* Take the page for this recorder: owner 0 (or a recorder that is gone)
 * -> our pid. */
static int claim(struct attach_markers *am, char *why, size_t whylen)
{
	int32_t me = (int32_t)getpid();

	for (int tries = 0; tries < 4; tries++) {
		int32_t owner = __atomic_load_n(&am->page->owner, __ATOMIC_ACQUIRE);
		if (owner > 0 && owner != me && !(kill(owner, 0) != 0 && errno == ESRCH)) {
			strbuf(why, whylen, "the markers of process %d go to another mfu-record already (pid %d), "
			       "and to one at a time", (int)am->pid, (int)owner);
			return -EBUSY;
		}
		if (__atomic_compare_exchange_n(&am->page->owner, &owner, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return 0;
	}
	strbuf(why, whylen, "the attach page of process %d keeps changing owner", (int)am->pid);
	return -EBUSY;
}

int attach_markers_open(struct attach_markers **out, pid_t pid, struct mring_consumer *c, char *why, size_t whylen)
{
	struct attach_markers *am = calloc(1, sizeof(*am));
	void *ring;
	int launched = 0, rc;

	*out = NULL;
	why[0] = '\0';
	if (!am)
		return -ENOMEM;
	am->pid = pid;
	am->fd = -1;
	rc = find_page(am, pid, &launched, why, whylen);
	if (rc) {
		why_none(pid, rc, launched, why, whylen);
		free(am);
		return rc < 0 ? rc : -ENOENT;
	}
	rc = claim(am, why, whylen);
	if (rc) {
		munmap(am->page, am->size);
		close(am->fd);
		free(am);
		return rc;
	}
	/* a recorder killed while attached left the markers on: off, and let
	 * the writers in flight finish, before the ring is made again */
	if (__atomic_exchange_n(&am->page->on, 0, __ATOMIC_ACQ_REL))
		sleep_ms(10);
	ring = (char *)am->page + MFU_ATTACH_PAGE;
	memset(ring, 0, sizeof(struct mring_header));
	mring_clear(ring, am->nslots); /* another recorder's records may be there */
	if (mring_init(ring, am->nslots, 0, NULL) != 0 ||
	    mring_consumer_init(c, ring, am->size - MFU_ATTACH_PAGE, am->nslots) != 0) {
		strbuf(why, whylen, "the marker ring in process %d's attach page could not be made", (int)pid);
		attach_markers_close(am);
		return -EPROTO;
	}
	am->gen = __atomic_load_n(&am->page->gen, __ATOMIC_ACQUIRE) + 1;
	if (!am->gen)
		am->gen = 1;
	__atomic_store_n(&am->page->gen, am->gen, __ATOMIC_RELEASE);
	*out = am;
	return 0;
}

void attach_markers_on(struct attach_markers *am)
{
	if (!am)
		return;
	__atomic_store_n(&am->page->on, 1, __ATOMIC_RELEASE);
	am->on = 1;
}

void attach_markers_off(struct attach_markers *am)
{
	if (!am || !am->on)
		return;
	__atomic_store_n(&am->page->on, 0, __ATOMIC_RELEASE);
	am->on = 0;
	/* a marker that saw on a moment ago is writing its record: about a
	 * microsecond, unless its thread was preempted right there */
	sleep_ms(10);
}

int attach_markers_state(const struct attach_markers *am)
{
	if (!am)
		return 0;
	if (__atomic_load_n(&am->page->accepted_gen, __ATOMIC_ACQUIRE) == am->gen)
		return 1;
	if (__atomic_load_n(&am->page->refused_gen, __ATOMIC_ACQUIRE) == am->gen)
		return -1;
	return 0;
}

const char *attach_markers_lib(const struct attach_markers *am, char *buf, size_t len)
{
	char lib[sizeof(am->page->lib) + 1];

	memcpy(lib, am->page->lib, sizeof(am->page->lib));
	lib[sizeof(lib) - 1] = '\0';
	for (char *p = lib; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
	strbuf(buf, len, "%s", lib);
	return buf;
}

void attach_markers_close(struct attach_markers *am)
{
	int32_t me = (int32_t)getpid();

	if (!am)
		return;
	attach_markers_off(am);
	__atomic_compare_exchange_n(&am->page->owner, &me, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	/* the ring's pages are the process's memory (its memfd): give them
	 * back; a marker that still writes gets a fresh page, and no harm */
	(void)fallocate(am->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, MFU_ATTACH_PAGE,
			(off_t)(am->size - MFU_ATTACH_PAGE));
	munmap(am->page, am->size);
	close(am->fd);
	free(am);
}
