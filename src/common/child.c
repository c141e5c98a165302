/* Running one of mfu's own programs and waiting for it (child.h). */
#include "child.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* In the child, after fork(): never returns. */
static void child_exec(const char *const argv[], const struct asuser *as, int out_fd, int err_fd,
		       const char *who)
{
	sigset_t none;
	int err, exe = -1;

	/* A path (mfu's own program, compiled in) is opened as this process
	 * is, not as the thread's asuser identity nor the user's: the user
	 * may not be able to reach it (a build tree under a 0700 directory),
	 * and executing the opened file needs no path lookup, only its mode. */
	if (strchr(argv[0], '/')) {
		setfsuid(geteuid());
		setfsgid(getegid());
		exe = open(argv[0], O_PATH | O_CLOEXEC);
	}
	if (out_fd >= 0 && out_fd != STDOUT_FILENO)
		dup2(out_fd, STDOUT_FILENO);
	if (err_fd >= 0 && err_fd != STDERR_FILENO)
		dup2(err_fd, STDERR_FILENO);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	err = asuser_become(as);
	if (err) {
		fprintf(stderr, "%s: cannot become uid %d to run %s: %s\n", who, (int)as->uid, argv[0],
			strerror(-err));
		_exit(CHILD_CANNOT_BECOME);
	}
	if (exe >= 0)
		syscall(SYS_execveat, exe, "", (char *const *)argv, environ, AT_EMPTY_PATH);
	execvp(argv[0], (char *const *)argv);
	fprintf(stderr, "%s: cannot run %s: %s\n", who, argv[0], strerror(errno));
	_exit(CHILD_CANNOT_EXEC);
}

int child_run(const char *const argv[], const struct asuser *as, int out_fd, int err_fd, const char *who,
	      int *status, char *why, size_t len)
{
	pid_t pid;
	int err;

	/* nothing buffered here is written twice, once by each process */
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		strbuf(why, len, "cannot start %s: %s", argv[0], strerror(-err));
		return err;
	}
	if (pid == 0)
		child_exec(argv, as, out_fd, err_fd, who);
	while (waitpid(pid, status, 0) < 0) {
		if (errno != EINTR) {
			err = -errno;
			strbuf(why, len, "waiting for %s: %s", argv[0], strerror(-err));
			return err;
		}
	}
	return 0;
}

const char *child_status_text(int status, char *buf, size_t len)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) == CHILD_CANNOT_EXEC)
		strbuf(buf, len, "could not be executed");
	else if (WIFEXITED(status))
		strbuf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		strbuf(buf, len, "was killed by signal %d", WTERMSIG(status));
	else
		strbuf(buf, len, "ended with wait status %#x", status);
	return buf;
}
