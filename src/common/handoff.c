/* The handoff's client side and descriptor checks (handoff.h). Compiled
 * into libmfu and the counting library: nothing here prints, allocates or
 * waits for more than half a second. */
#include "handoff.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

int mfu_fd_is(int fd, const char *id)
{
	unsigned long long dev, ino;
	struct stat st;
	int n = 0;

	if (!id || sscanf(id, "%llu:%llu%n", &dev, &ino, &n) != 2 || id[n] != '\0')
		return -1;
	if (fd < 0 || fstat(fd, &st) != 0)
		return 0;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void mfu_fd_describe(int fd, char *buf, size_t len)
{
	char path[64], target[160];
	struct stat st;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(buf, len, "closed");
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		/* only what a message can hold: printable bytes */
		for (ssize_t i = 0; i < n; i++)
			if ((unsigned char)target[i] < 0x20 || (unsigned char)target[i] > 0x7e)
				target[i] = '?';
		snprintf(buf, len, "another file (%s)", target);
		return;
	}
	snprintf(buf, len, "another file (%s)", S_ISREG(st.st_mode) ? "a regular file" : S_ISFIFO(st.st_mode) ? "a pipe" :
		 S_ISSOCK(st.st_mode) ? "a socket" : S_ISCHR(st.st_mode) ? "a device" : "not ours");
}

int mfu_handoff_request(uint32_t what, const char *why, int *fds, int maxfds, int *ngroups)
{
	const char *name = getenv(MFU_ENV_RECORD_SOCK);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { 0, 500000 };
	struct mfu_handoff_msg req, rep;
	char ctrl[CMSG_SPACE(sizeof(int) * (MRING_MAX_GROUPS + 2))];
	struct iovec iov = { .iov_base = &rep, .iov_len = sizeof(rep) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctrl, .msg_controllen = sizeof(ctrl) };
	size_t nlen;
	ssize_t n;
	int s, got = 0, rc;

	*ngroups = 0;
	if (!name || name[0] != '@' || (nlen = strlen(name + 1)) == 0 || nlen >= sizeof(sa.sun_path) - 1)
		return -ENOENT;
	memcpy(sa.sun_path + 1, name + 1, nlen); /* sun_path[0] = 0: abstract */
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	/* the recorder answers in microseconds; a stopped one must not hang
	 * the program's start for longer than this */
	if (setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0 ||
	    connect(s, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + nlen)) != 0) {
		rc = -errno;
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.magic = MFU_HANDOFF_MAGIC;
	req.version = MFU_HANDOFF_VERSION;
	req.what = what;
	req.pid = (int32_t)getpid();
	snprintf(req.text, sizeof(req.text), "%s", why ? why : "");
	if (send(s, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req)) {
		rc = -EIO;
		goto out;
	}
	memset(ctrl, 0, sizeof(ctrl));
	do
		n = recvmsg(s, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		rc = -errno;
		goto out;
	}
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (int i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (got < maxfds)
				fds[got++] = fd;
			else
				close(fd);
		}
	}
	rc = 0;
	if (n != (ssize_t)sizeof(rep) || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || rep.magic != MFU_HANDOFF_MAGIC ||
	    rep.version != MFU_HANDOFF_VERSION || rep.nfds != (uint32_t)got || rep.ngroups > rep.nfds)
		rc = -EPROTO;
	else if (rep.status < 0)
		rc = rep.status;
	if (rc) {
		for (int i = 0; i < got; i++)
			close(fds[i]);
		goto out;
	}
	*ngroups = (int)rep.ngroups;
	rc = got;
out:
	close(s);
	return rc;
}
