/* Running one of mfu's programs (child.h): the exit status and its words,
 * a program that cannot be executed, standard output where asked, no
 * signal blocked in the child whatever the parent blocks, and, as root,
 * the child as the user even when the program is in a directory the user
 * cannot enter (mfu-record under sudo in a build tree under /root). */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "asuser.h"
#include "child.h"
#include "check.h"

static char dir[] = "/tmp/mfu-test-child-XXXXXX";

/* Run @argv with stdout into a file; its text into @out. @enter: call
 * child_run() from this thread acting as @as (asuser_enter()), as
 * mfu-record's recap does. */
static int run_capture(const char *const argv[], const struct asuser *as, int enter, int *status, char *out,
		       size_t len)
{
	struct asuser_saved sv;
	char why[256], path[64];
	int fd, rc;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/out", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -errno;
	if (enter && asuser_enter(as, &sv) != 0) {
		close(fd);
		return -EPERM;
	}
	rc = child_run(argv, as, fd, -1, "test_child", status, why, sizeof(why));
	if (enter)
		asuser_leave(&sv);
	n = pread(fd, out, len - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	return rc;
}

static void test_status_and_output(void)
{
	const char *exit3[] = { "/bin/sh", "-c", "echo hello; exit 3", NULL };
	const char *missing[] = { "/nonexistent/mfu-report", NULL };
	const char *killed[] = { "/bin/sh", "-c", "kill -9 $$", NULL };
	char out[4096], words[64];
	int status = 0;

	CHECK_EQ_INT(run_capture(exit3, NULL, 0, &status, out, sizeof(out)), 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	CHECK_STR(out, "hello\n");
	CHECK_STR(child_status_text(status, words, sizeof(words)), "exited with status 3");

	CHECK_EQ_INT(run_capture(missing, NULL, 0, &status, out, sizeof(out)), 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == CHILD_CANNOT_EXEC);
	CHECK_STR(child_status_text(status, words, sizeof(words)), "could not be executed");

	CHECK_EQ_INT(run_capture(killed, NULL, 0, &status, out, sizeof(out)), 0);
	CHECK_STR(child_status_text(status, words, sizeof(words)), "was killed by signal 9");
}

static void test_no_signal_blocked(void)
{
	const char *blk[] = { "/bin/sh", "-c", "grep ^SigBlk /proc/self/status", NULL };
	sigset_t set, old;
	char out[4096];
	int status = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	CHECK_EQ_INT(run_capture(blk, NULL, 0, &status, out, sizeof(out)), 0);
	sigprocmask(SIG_SETMASK, &old, NULL);
	CHECK_STR(out, "SigBlk:\t0000000000000000\n");
}

/* As root: the child is the user, for good, and runs a program in a 0700
 * directory it could not reach by name; also from a thread acting as the
 * user (asuser_enter()), as mfu-record's recap does. */
static void test_as_the_user(void)
{
	struct passwd *pw = getpwnam("nobody");
	struct asuser nobody;
	char prog[128], cmd[512], out[4096], want[64];
	const char *argv[] = { prog, "-u", NULL };
	int status = 0;

	if (geteuid() != 0 || !pw) {
		printf("as the user: skipped (needs root and a user nobody)\n");
		return;
	}
	asuser_init(&nobody, pw->pw_uid, pw->pw_gid, pw->pw_name);
	snprintf(prog, sizeof(prog), "%s/id", dir);
	snprintf(cmd, sizeof(cmd), "cp /usr/bin/id %s && chmod 0755 %s", prog, prog);
	CHECK_EQ_INT(system(cmd), 0);
	CHECK_EQ_INT(chmod(dir, 0700), 0);
	snprintf(want, sizeof(want), "%d\n", (int)pw->pw_uid);

	CHECK_EQ_INT(run_capture(argv, &nobody, 0, &status, out, sizeof(out)), 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_STR(out, want);

	status = -1;
	out[0] = '\0';
	CHECK_EQ_INT(run_capture(argv, &nobody, 1, &status, out, sizeof(out)), 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_STR(out, want);
}

int main(void)
{
	char cmd[128];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_status_and_output();
	test_no_signal_blocked();
	test_as_the_user();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		perror(cmd);
	return check_status();
}
