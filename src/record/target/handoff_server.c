/* The recorder's side of the handoff (handoff_server.h). */
#include "handoff_server.h"
#include "handoff.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_KEPT 16   /* clients remembered in detail; the rest counted */
#define MAX_DEPTH 128 /* ancestry walked up to the launched process */
#define MAX_PIDS 65536 /* processes told apart; beyond, each request counts */

struct client {
	pid_t pid, ppid;
	char comm[20], pcomm[20];
	char found[MFU_HANDOFF_TEXT];  /* what it said was wrong (sanitized) */
	char refused[200];             /* why it was refused, "" if served */
};

struct handoff_server {
	int sock;
	int stop[2];
	char name[80];            /* "@..." */
	pthread_t thread;
	int running;
	pid_t root;
	uid_t uid;
	int any_uid;
	int ring_fd, lf_fd;
	int group_fds[MRING_MAX_GROUPS];
	int ngroups;
	pthread_mutex_t lock;     /* the client records */
	struct client kept[MAX_KEPT];
	unsigned nkept_served, nkept_refused;
	unsigned served, refused;  /* processes */
	pid_t *pids;              /* those counted (refused ones negated) */
	size_t npids, cap_pids;
};

int handoff_server_open(struct handoff_server **out)
{
	struct handoff_server *h = calloc(1, sizeof(*h));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	unsigned char rnd[8];
	size_t n;
	int rc;

	*out = NULL;
	if (!h)
		return -ENOMEM;
	h->sock = h->stop[0] = h->stop[1] = -1;
	pthread_mutex_init(&h->lock, NULL);
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		rc = -errno;
		goto fail;
	}
	snprintf(h->name, sizeof(h->name), "@mfu-record-%d-%02x%02x%02x%02x%02x%02x%02x%02x", (int)getpid(), rnd[0],
		 rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	n = strlen(h->name + 1);
	memcpy(sa.sun_path + 1, h->name + 1, n);
	h->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (h->sock < 0 || bind(h->sock, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) != 0 ||
	    listen(h->sock, 64) != 0 || pipe2(h->stop, O_CLOEXEC) != 0) {
		rc = -errno;
		goto fail;
	}
	*out = h;
	return 0;
fail:
	handoff_server_free(h);
	return rc;
}

const char *handoff_server_name(const struct handoff_server *h)
{
	return h->name;
}

/* @pid's parent and command name, from /proc/PID/stat. */
static int parent_of(pid_t pid, pid_t *ppid, char *comm, size_t len)
{
	char path[64], buf[1024], *open, *close;
	int pp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_text_file(path, buf, sizeof(buf)) < 0)
		return -1;
	open = strchr(buf, '(');
	close = strrchr(buf, ')');
	if (!open || !close || close < open || sscanf(close + 1, " %*c %d", &pp) != 1)
		return -1;
	*ppid = pp;
	if (comm) {
		size_t n = (size_t)(close - open - 1);
		if (n >= len)
			n = len - 1;
		memcpy(comm, open + 1, n);
		comm[n] = '\0';
		for (char *p = comm; *p; p++)
			if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
				*p = '?';
	}
	return 0;
}

static int descends_from(pid_t pid, pid_t root)
{
	for (int i = 0; i < MAX_DEPTH && pid > 1; i++) {
		pid_t pp;
		if (pid == root)
			return 1;
		if (parent_of(pid, &pp, NULL, 0) != 0)
			return 0;
		pid = pp;
	}
	return pid == root;
}

static void sanitize(char *s, size_t len)
{
	s[len - 1] = '\0';
	for (char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
}

/* A process asks once for the ring and once more for the counting region
 * (libmfu and the counting library each): one process, counted once, its
 * findings put together. */
static int seen(struct handoff_server *h, pid_t pid, int refused)
{
	for (size_t i = 0; i < h->npids; i++)
		if (h->pids[i] == (refused ? -pid : pid))
			return 1;
	if (h->npids < MAX_PIDS && array_grow(&h->pids, &h->cap_pids, h->npids + 1, sizeof(*h->pids)) == 0)
		h->pids[h->npids++] = refused ? -pid : pid;
	return 0;
}

static void remember(struct handoff_server *h, const struct client *c)
{
	int refused = c->refused[0] != 0;

	pthread_mutex_lock(&h->lock);
	for (unsigned i = 0; i < h->nkept_served + h->nkept_refused; i++) {
		struct client *k = &h->kept[i];
		if (k->pid != c->pid || !k->refused[0] != !refused)
			continue;
		if (!strstr(k->found, c->found)) {
			size_t n = strlen(k->found);
			strbuf(k->found + n, sizeof(k->found) - n, "; %s", c->found);
		}
		pthread_mutex_unlock(&h->lock);
		return;
	}
	if (!seen(h, c->pid, refused)) {
		if (refused)
			h->refused++;
		else
			h->served++;
	}
	/* the first few of each kind in detail */
	unsigned *kept = refused ? &h->nkept_refused : &h->nkept_served;
	if (*kept < MAX_KEPT / 2 && h->nkept_served + h->nkept_refused < MAX_KEPT) {
		h->kept[h->nkept_served + h->nkept_refused] = *c;
		(*kept)++;
	}
	pthread_mutex_unlock(&h->lock);
}

/* One connection: who is it, what does it want, and the reply. */
static void serve(struct handoff_server *h, int fd)
{
	struct timeval tv = { 0, 200000 };
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	struct mfu_handoff_msg req, rep;
	struct client c;
	int fds[MRING_MAX_GROUPS + 2], nfds = 0, ngroups = 0;
	char ctrl[CMSG_SPACE(sizeof(fds))];
	struct iovec iov = { .iov_base = &rep, .iov_len = sizeof(rep) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	memset(&c, 0, sizeof(c));
	memset(&rep, 0, sizeof(rep));
	/* a peer that connects and says nothing holds this thread no longer */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) != 0)
		return;
	n = recv(fd, &req, sizeof(req), MSG_TRUNC);
	if (n != (ssize_t)sizeof(req) || req.magic != MFU_HANDOFF_MAGIC || req.version != MFU_HANDOFF_VERSION)
		return; /* not ours to answer, nothing to remember */
	c.pid = cr.pid;
	sanitize(req.text, sizeof(req.text));
	strbuf(c.found, sizeof(c.found), "%s", req.text);
	if (parent_of(cr.pid, &c.ppid, c.comm, sizeof(c.comm)) != 0)
		strbuf(c.comm, sizeof(c.comm), "?");
	if (c.ppid <= 0 || parent_of(c.ppid, &(pid_t){ 0 }, c.pcomm, sizeof(c.pcomm)) != 0)
		strbuf(c.pcomm, sizeof(c.pcomm), "?");
	if (req.pid != cr.pid)
		strbuf(c.refused, sizeof(c.refused), "it said it was process %d", (int)req.pid);
	else if (!descends_from(cr.pid, h->root))
		strbuf(c.refused, sizeof(c.refused), "it is not one of the command's processes (not a descendant of "
		       "process %d)", (int)h->root);
	else if (!h->any_uid && cr.uid != h->uid)
		strbuf(c.refused, sizeof(c.refused), "it runs as uid %u, the command as uid %u", (unsigned)cr.uid,
		       (unsigned)h->uid);
	rep.magic = MFU_HANDOFF_MAGIC;
	rep.version = MFU_HANDOFF_VERSION;
	if (c.refused[0]) {
		rep.status = -EPERM;
		strbuf(rep.text, sizeof(rep.text), "%s", c.refused);
	} else {
		if ((req.what & MFU_HANDOFF_RING) && h->ring_fd >= 0) {
			fds[nfds++] = h->ring_fd;
			for (int g = 0; g < h->ngroups; g++)
				fds[nfds++] = h->group_fds[g];
			ngroups = h->ngroups;
			rep.what |= MFU_HANDOFF_RING;
		}
		if ((req.what & MFU_HANDOFF_LIBFLOPS) && h->lf_fd >= 0) {
			fds[nfds++] = h->lf_fd;
			rep.what |= MFU_HANDOFF_LIBFLOPS;
		}
		rep.status = rep.what == req.what ? 0 : -ENOENT;
		if (rep.status)
			nfds = ngroups = 0;
	}
	rep.nfds = (uint32_t)nfds;
	rep.ngroups = (uint32_t)ngroups;
	if (nfds) {
		memset(ctrl, 0, sizeof(ctrl));
		msg.msg_control = ctrl;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
	}
	if (sendmsg(fd, &msg, MSG_NOSIGNAL) != (ssize_t)sizeof(rep) && !c.refused[0])
		strbuf(c.refused, sizeof(c.refused), "the reply could not be sent (%s)", strerror(errno));
	if (rep.status == -ENOENT && !c.refused[0])
		strbuf(c.refused, sizeof(c.refused), "it asked for what this recording does not have");
	remember(h, &c);
}

static void *run(void *arg)
{
	struct handoff_server *h = arg;

	for (;;) {
		struct pollfd p[2] = { { .fd = h->sock, .events = POLLIN }, { .fd = h->stop[0], .events = POLLIN } };
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		int fd = accept4(h->sock, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		serve(h, fd);
		close(fd);
	}
	return NULL;
}

int handoff_server_start(struct handoff_server *h, pid_t root, uid_t uid, int any_uid, int ring_fd,
			 const int *group_fds, int ngroups, int lf_fd)
{
	int rc;

	if (ngroups > MRING_MAX_GROUPS)
		return -E2BIG;
	h->root = root;
	h->uid = uid;
	h->any_uid = any_uid;
	h->ring_fd = ring_fd;
	h->lf_fd = lf_fd;
	h->ngroups = ngroups;
	memcpy(h->group_fds, group_fds, sizeof(int) * (size_t)ngroups);
	rc = -pthread_create(&h->thread, NULL, run, h);
	if (!rc)
		h->running = 1;
	return rc;
}

void handoff_server_stop(struct handoff_server *h)
{
	if (!h || !h->running)
		return;
	(void)!write(h->stop[1], "x", 1);
	pthread_join(h->thread, NULL);
	h->running = 0;
}

void handoff_server_report(struct handoff_server *h, unsigned *served, unsigned *refused, char *served_note,
			   size_t slen, char *refused_note, size_t rlen)
{
	const struct client *first_served = NULL, *first_refused = NULL;

	served_note[0] = refused_note[0] = '\0';
	*served = *refused = 0;
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	*served = h->served;
	*refused = h->refused;
	for (unsigned i = 0; i < h->nkept_served + h->nkept_refused; i++) {
		const struct client *c = &h->kept[i];
		if (c->refused[0] && !first_refused)
			first_refused = c;
		if (!c->refused[0] && !first_served)
			first_served = c;
	}
	/* "process 23477 (wl_steps, child of mpirun 23470)": the launcher is
	 * usually the parent of the process that lost the fds */
	if (first_served)
		strbuf(served_note, slen, "%u process%s of the command found mfu-record's descriptors closed or "
		       "reused by a launcher between them (%sprocess %d, %s, child of %s %d: %s) and got them again "
		       "over mfu-record's socket, so %s steps are recorded as usual", h->served,
		       h->served == 1 ? "" : "es", h->served == 1 ? "" : "first ", (int)first_served->pid,
		       first_served->comm, first_served->pcomm, (int)first_served->ppid, first_served->found,
		       h->served == 1 ? "its" : "their");
	if (first_refused)
		strbuf(refused_note, rlen, "%u process%s found mfu-record's descriptors closed or reused by a "
		       "launcher (%sprocess %d, %s, child of %s %d: %s) and %s refused them again because %s, so %s "
		       "markers are not recorded; run mfu-record inside the launcher instead: mpirun -n N "
		       "mfu-record -o run.%%r.sqlite -- app (docs/ranks.md)", h->refused, h->refused == 1 ? "" : "es",
		       h->refused == 1 ? "" : "first ", (int)first_refused->pid, first_refused->comm,
		       first_refused->pcomm, (int)first_refused->ppid, first_refused->found,
		       h->refused == 1 ? "was" : "were", first_refused->refused, h->refused == 1 ? "its" : "their");
	pthread_mutex_unlock(&h->lock);
}

void handoff_server_free(struct handoff_server *h)
{
	if (!h)
		return;
	handoff_server_stop(h);
	if (h->sock >= 0)
		close(h->sock);
	for (int i = 0; i < 2; i++)
		if (h->stop[i] >= 0)
			close(h->stop[i]);
	pthread_mutex_destroy(&h->lock);
	free(h->pids);
	free(h);
}
