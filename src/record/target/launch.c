#include "launch.h"
#include "handoff.h"
#include "libflops.h"
#include "paths.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int set_cloexec(int fd, int on)
{
	int flags = fcntl(fd, F_GETFD);
	if (flags < 0)
		return -errno;
	flags = on ? flags | FD_CLOEXEC : flags & ~FD_CLOEXEC;
	return fcntl(fd, F_SETFD, flags) < 0 ? -errno : 0;
}

static ssize_t write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = write(fd, (const char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* Send @cs and the fds of its opened counters in one message. */
static int send_counters(int sock, const struct counters *cs)
{
	int fds[COUNTERS_MAX], nfds = 0;
	char ctrl[CMSG_SPACE(sizeof(fds))];
	struct iovec iov = { .iov_base = (void *)cs, .iov_len = sizeof(*cs) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	for (int i = 0; i < cs->n; i++)
		if (cs->c[i].opened && !cs->c[i].emulated)
			fds[nfds++] = cs->c[i].fd;
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
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == (ssize_t)sizeof(*cs) ? 0 : -errno;
}

static int recv_counters(int sock, struct counters *cs)
{
	int fds[COUNTERS_MAX], nfds = 0, k = 0;
	char ctrl[CMSG_SPACE(sizeof(fds))];
	struct iovec iov = { .iov_base = cs, .iov_len = sizeof(*cs) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = ctrl, .msg_controllen = sizeof(ctrl) };
	ssize_t n;

	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n != (ssize_t)sizeof(*cs) || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		return -EPROTO;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			nfds = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			memcpy(fds, CMSG_DATA(cm), sizeof(int) * (size_t)nfds);
		}
	}
	for (int i = 0; i < cs->n; i++) {
		cs->c[i].fd = -1;
		if (cs->c[i].opened && !cs->c[i].emulated) {
			if (k >= nfds)
				return -EPROTO;
			cs->c[i].fd = fds[k++];
		}
	}
	return k == nfds ? 0 : -EPROTO;
}

/* Become the user in @c. Returns 0 or -errno. */
static int drop_privileges(const struct launch_creds *c)
{
	if (!c->drop)
		return 0;
	if ((c->user[0] ? initgroups(c->user, c->gid) : setgroups(0, NULL)) < 0 || setgid(c->gid) < 0 ||
	    setuid(c->uid) < 0)
		return -errno;
	/* no way back: a target that could regain root would defeat the point */
	if (setuid(0) == 0 && c->uid != 0)
		return -EPERM;
	if (c->home[0])
		setenv("HOME", c->home, 1);
	if (c->user[0]) {
		setenv("USER", c->user, 1);
		setenv("LOGNAME", c->user, 1);
	}
	return 0;
}

const char *launch_libflops_path(void)
{
	return paths_get(PATHS_LIBFLOPS);
}

/* Name the libmfu that comes with this recorder for mfu.py, which loads
 * libmfu by name and, when the dynamic loader cannot find it (an
 * uninstalled build, a prefix outside the loader's path), falls back to
 * this one: Python programs then need no LD_LIBRARY_PATH. */
static void name_own_libmfu(void)
{
	const char *lib = paths_get(PATHS_LIBMFU);

	if (access(lib, R_OK) == 0)
		setenv("MFU_RECORD_LIBMFU", lib, 1);
}

/* A program built with AddressSanitizer refuses to start when a preloaded
 * library comes before its runtime, unless told that the order is fine.
 * It is: the counting library defines none of the functions ASan
 * intercepts (malloc, memcpy...), so ASan's still come first. */
static int asan_after_preload(void)
{
	const char *old = getenv("ASAN_OPTIONS");
	char *opts;
	int rc;

	if (old && strstr(old, "verify_asan_link_order"))
		return 0; /* the user's choice stands */
	if (!old || !*old)
		return setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1) < 0 ? -errno : 0;
	size_t n = strlen(old) + sizeof(":verify_asan_link_order=0");
	opts = malloc(n);
	if (!opts)
		return -ENOMEM;
	snprintf(opts, n, "%s:verify_asan_link_order=0", old);
	rc = setenv("ASAN_OPTIONS", opts, 1) < 0 ? -errno : 0;
	free(opts);
	return rc;
}

/* Name in @var what @fd is ("DEV:INO"), so that the target can tell it
 * from another file a launcher put at that number (handoff.h). */
static int set_identity(const char *var, int fd)
{
	struct stat st;
	char buf[48];

	if (fstat(fd, &st) != 0)
		return -errno;
	snprintf(buf, sizeof(buf), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	return setenv(var, buf, 1) < 0 ? -errno : 0;
}

/* Library-call counting: the counting library goes last in LD_PRELOAD
 * (what the user preloads keeps its place: a sanitizer runtime must come
 * first), and the region's fd stays open across exec. Returns 0 or
 * -errno. */
static int preload_libflops(int lib_fd)
{
	char buf[32], *pre;
	const char *path = launch_libflops_path(), *old = getenv("LD_PRELOAD");
	int rc;

	if (lib_fd < 0)
		return 0;
	rc = set_cloexec(lib_fd, 0);
	if (rc)
		return rc;
	snprintf(buf, sizeof(buf), "%d", lib_fd);
	if (old && *old) {
		size_t n = strlen(old) + strlen(path) + 2;
		pre = malloc(n);
		if (!pre)
			return -ENOMEM;
		snprintf(pre, n, "%s %s", old, path);
	} else {
		pre = strdup(path);
		if (!pre)
			return -ENOMEM;
	}
	rc = setenv("LD_PRELOAD", pre, 1) < 0 || setenv(LIBFLOPS_ENV_FD, buf, 1) < 0 ? -errno : 0;
	if (!rc)
		rc = set_identity(LIBFLOPS_ENV_ID, lib_fd);
	free(pre);
	return rc ? rc : asan_after_preload();
}

static void child(char *const argv[], int ring_fd, int lib_fd, struct counters *cs, const sigset_t *mask,
		  const struct launch_creds *creds, const char *handoff, int sock, int exec_fd)
{
	char buf[64], groups[16 * MRING_MAX_GROUPS], ids[24 * MRING_MAX_GROUPS];
	static char go[1 + LAUNCH_ENV_MAX + 1];
	int err = 0;
	ssize_t n;

	/* The recorder only blocks signals (it reads them from a signalfd) and
	 * changes no disposition, so restoring the mask gives the target what
	 * mfu-record itself was given (an ignored SIGHUP under nohup stays so). */
	sigprocmask(SIG_SETMASK, mask, NULL);

	counters_open_self(cs);
	if (send_counters(sock, cs) < 0)
		_exit(127);
	/* the go, with the variables decided since the fork (launch_setenv()) */
	n = read(sock, go, sizeof(go) - 1);
	if (n < 1)
		_exit(127); /* the recorder gave up */
	close(sock);
	go[n] = '\0';
	for (char *v = go + 1; v < go + n; v += strlen(v) + 1) {
		char *eq = strchr(v, '=');
		if (eq && strncmp(v, "MFU_RECORD_", 11) == 0) {
			*eq = '\0';
			setenv(v, eq + 1, 1);
			*eq = '=';
		}
	}

	snprintf(buf, sizeof(buf), "%d", ring_fd);
	groups[0] = ids[0] = '\0';
	/* one item per group, "-" for a group of which nothing opened, "E"
	 * for the one the FP-op emulator counts (--emulate); and what each
	 * leader is, its perf event id ("-": none) */
	for (int g = 0; g < cs->ngroups; g++) {
		int li = cs->leader[g];
		size_t len = strlen(groups), ilen = strlen(ids);
		unsigned long long id = 0;
		if (li < 0 || cs->c[li].emulated) {
			snprintf(groups + len, sizeof(groups) - len, "%s%s", g ? "," : "", li < 0 ? "-" : "E");
			snprintf(ids + ilen, sizeof(ids) - ilen, "%s-", g ? "," : "");
			continue;
		}
		snprintf(groups + len, sizeof(groups) - len, "%s%d", g ? "," : "", cs->c[li].fd);
		if (ioctl(cs->c[li].fd, PERF_EVENT_IOC_ID, &id) == 0)
			snprintf(ids + ilen, sizeof(ids) - ilen, "%s%llu", g ? "," : "", id);
		else
			snprintf(ids + ilen, sizeof(ids) - ilen, "%s-", g ? "," : "");
		set_cloexec(cs->c[li].fd, 0);
	}
	name_own_libmfu();
	err = -drop_privileges(creds);
	if (!err)
		err = -preload_libflops(lib_fd);
	/* the identities and the socket: a launcher between mfu-record and
	 * the program may close these fds, or reuse their numbers */
	if (!err && handoff && *handoff && setenv(MFU_ENV_RECORD_SOCK, handoff, 1) < 0)
		err = errno;
	if (!err)
		err = -set_identity(MFU_ENV_RING_ID, ring_fd);
	if (!err && cs->ngroups && setenv(MFU_ENV_GROUP_ID, ids, 1) < 0)
		err = errno;
	if (!err && set_cloexec(ring_fd, 0) == 0 && setenv(MFU_ENV_RING_FD, buf, 1) == 0 &&
	    (cs->ngroups == 0 || setenv(MFU_ENV_GROUP_FD, groups, 1) == 0)) {
		execvp(argv[0], argv);
		err = errno;
	} else if (!err) {
		err = errno;
	}
	write_full(exec_fd, &err, sizeof(err));
	_exit(127);
}

int launch_prepare(struct launch *l, char *const argv[], int ring_fd, int lib_fd, struct counters *cs,
		   const sigset_t *child_mask, const struct launch_creds *creds, const char *handoff, char *err,
		   size_t errlen)
{
	int sp[2] = { -1, -1 }, ep[2] = { -1, -1 };
	int rc;

	l->pid = -1;
	l->sock = l->exec_pipe = -1;
	l->envlen = 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0 || pipe2(ep, O_CLOEXEC) < 0) {
		rc = -errno;
		strbuf(err, errlen, "cannot create the handshake channel: %s", strerror(-rc));
		goto fail;
	}
	l->pid = fork();
	if (l->pid < 0) {
		rc = -errno;
		strbuf(err, errlen, "cannot fork: %s", strerror(-rc));
		goto fail;
	}
	if (l->pid == 0) {
		close(sp[0]);
		close(ep[0]);
		child(argv, ring_fd, lib_fd, cs, child_mask, creds, handoff, sp[1], ep[1]);
	}
	close(sp[1]);
	close(ep[1]);
	sp[1] = ep[1] = -1;
	l->sock = sp[0];
	l->exec_pipe = ep[0];
	rc = recv_counters(l->sock, cs);
	if (rc) {
		strbuf(err, errlen, "the target process did not report its counters: %s", strerror(-rc));
		launch_abort(l);
		return rc;
	}
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (sp[i] >= 0)
			close(sp[i]);
		if (ep[i] >= 0)
			close(ep[i]);
	}
	return rc;
}

int launch_setenv(struct launch *l, const char *name, const char *value)
{
	size_t nl = strlen(name), vl = strlen(value);

	if (strncmp(name, "MFU_RECORD_", 11) != 0 || strchr(name, '='))
		return -EINVAL;
	if (l->envlen + nl + 1 + vl + 1 > sizeof(l->env))
		return -E2BIG;
	memcpy(l->env + l->envlen, name, nl);
	l->env[l->envlen + nl] = '=';
	memcpy(l->env + l->envlen + nl + 1, value, vl + 1);
	l->envlen += nl + 1 + vl + 1;
	return 0;
}

int launch_go(struct launch *l)
{
	static char go[1 + LAUNCH_ENV_MAX];
	int child_err = 0;
	ssize_t n;

	/* one packet (SOCK_SEQPACKET): the child reads it whole */
	go[0] = 'g';
	memcpy(go + 1, l->env, l->envlen);
	if (write_full(l->sock, go, 1 + l->envlen) < 0) {
		launch_abort(l);
		return -EPIPE;
	}
	close(l->sock);
	l->sock = -1;
	do
		n = read(l->exec_pipe, &child_err, sizeof(child_err));
	while (n < 0 && errno == EINTR);
	close(l->exec_pipe);
	l->exec_pipe = -1;
	if (n == (ssize_t)sizeof(child_err)) {
		int status;
		while (waitpid(l->pid, &status, 0) < 0 && errno == EINTR)
			;
		l->pid = -1;
		return -(child_err ? child_err : ENOEXEC);
	}
	return 0;
}

void launch_abort(struct launch *l)
{
	if (l->sock >= 0)
		close(l->sock);
	if (l->exec_pipe >= 0)
		close(l->exec_pipe);
	l->sock = l->exec_pipe = -1;
	if (l->pid > 0) {
		int status;
		kill(l->pid, SIGKILL);
		while (waitpid(l->pid, &status, 0) < 0 && errno == EINTR)
			;
		l->pid = -1;
	}
}
