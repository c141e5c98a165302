/*
 * Launch: fork the target, open its counters in the child before exec, hand
 * copies of the counter fds to the recorder over a socket (SCM_RIGHTS), then
 * exec on the recorder's "go". The counters therefore exist before the
 * target's first instruction and count from exec on (enable_on_exec).
 */
#ifndef MFU_LAUNCH_H
#define MFU_LAUNCH_H

#include <signal.h>
#include <sys/types.h>

#include "record/counters/counters.h"

/* Who the target runs as: when @drop is set, the child switches to @uid and
 * @gid (with @user's supplementary groups and HOME) after opening its
 * counters and before exec, e.g. the invoking user of sudo. */
struct launch_creds {
	int drop;
	uid_t uid;
	gid_t gid;
	char user[64];
	char home[256];
};

/* Bytes of variables the go can carry (one packet on the handshake socket). */
#define LAUNCH_ENV_MAX 8192

struct launch {
	pid_t pid;
	int sock;      /* recorder's end of the handshake socket */
	int exec_pipe; /* read end: EOF on successful exec, else the child's errno */
	/* Variables for the target's environment decided after the fork (the
	 * peaks), sent with the go: "NAME=VALUE\0..." (launch_setenv()). */
	char env[LAUNCH_ENV_MAX];
	size_t envlen;
};

/* Fork the target (@argv, searched in PATH). In the child: restore
 * @child_mask, open @cs's counters, send the
 * results and fds, wait for go, exec. In the parent: receive the counters'
 * state and fds into @cs. With @lib_fd >= 0 (the region of library-call
 * counts, libflops.h) the child preloads the counting library
 * (launch_libflops_path()). Next to each fd's number the environment
 * names what it is, and @handoff (when not NULL or "") the socket on
 * which a process that lost them asks for them again (handoff.h).
 * Returns 0 or -errno (message in @err). */
int launch_prepare(struct launch *l, char *const argv[], int ring_fd, int lib_fd, struct counters *cs,
		   const sigset_t *child_mask, const struct launch_creds *creds, const char *handoff, char *err,
		   size_t errlen);

/* Have the child set @name (MFU_RECORD_*) to @value before exec: sent with
 * the go. Returns 0, -EINVAL for another name, or -E2BIG when the
 * variables do not fit (nothing of this one is sent then). */
int launch_setenv(struct launch *l, const char *name, const char *value);

/* Tell the child to exec and wait for the outcome. Returns 0 when the exec
 * succeeded, else the child's -errno (the child has then exited with 127 and
 * been reaped). */
int launch_go(struct launch *l);

/* The counting library this recorder preloads: its build's when it runs
 * from its build directory, else the installed one. */
const char *launch_libflops_path(void);

/* Kill and reap a prepared child that will not be started. */
void launch_abort(struct launch *l);

#endif
