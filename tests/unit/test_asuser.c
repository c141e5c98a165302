/* Acting as the invoking user (asuser.h): a root-only file stays closed, a
 * symlink is not followed, what is made belongs to the user, the switch is
 * the calling thread's only and is undone. Needs root (skipped otherwise). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/fsuid.h>
#include <unistd.h>

#include "asuser.h"
#include "check.h"

static char dir[] = "/tmp/mfu-test-asuser-XXXXXX";
static struct asuser nobody;

static const char *path(const char *name)
{
	return check_path(dir, name);
}

static void write_file(const char *p, const char *text, mode_t mode)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror(p);
		close(fd);
	}
	chmod(p, mode);
}

static void test_reads_as_the_user(void)
{
	struct stat st;
	int fd;

	write_file(path("secret"), "error 1 root only\n", 0600);
	CHECK_EQ_INT(symlink(path("secret"), path("link")), 0);
	/* not readable as the user, through a link or not */
	CHECK_EQ_INT(asuser_open(&nobody, path("secret"), O_RDONLY, 0), -EACCES);
	CHECK_EQ_INT(asuser_open_file(&nobody, path("link"), 1 << 20, NULL), -ELOOP);
	/* inactive: as we are */
	fd = asuser_open(NULL, path("secret"), O_RDONLY, 0);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);

	/* the user's own file: read; another user's or too big: refused */
	write_file(path("mine"), "load 1\n", 0644);
	CHECK_EQ_INT(chown(path("mine"), nobody.uid, nobody.gid), 0);
	fd = asuser_open_file(&nobody, path("mine"), 1 << 20, &st);
	CHECK(fd >= 0);
	CHECK_EQ_INT(st.st_size, 7);
	if (fd >= 0)
		close(fd);
	CHECK_EQ_INT(asuser_open_file(&nobody, path("mine"), 6, NULL), -EFBIG);
	CHECK_EQ_INT(chown(path("mine"), nobody.uid + 1, nobody.gid), 0);
	CHECK_EQ_INT(asuser_open_file(&nobody, path("mine"), 1 << 20, NULL), -EPERM);
	/* a FIFO neither blocks nor counts as a file */
	CHECK_EQ_INT(mkfifo(path("fifo"), 0666), 0);
	CHECK_EQ_INT(asuser_open_file(&nobody, path("fifo"), 1 << 20, NULL), -EINVAL);
}

static void test_makes_the_users_files(void)
{
	struct asuser_saved sv;
	struct stat st;
	int fd;

	CHECK_EQ_INT(mkdir(path("home"), 0755), 0);
	CHECK_EQ_INT(chown(path("home"), nobody.uid, nobody.gid), 0);
	CHECK_EQ_INT(asuser_enter(&nobody, &sv), 0);
	CHECK_EQ_INT(mkdir(path("home/.cache"), 0700), 0);
	fd = open(path("home/.cache/f"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	/* root's own directory is not the user's to write */
	CHECK(mkdir(path("rootdir"), 0700) != 0);
	asuser_leave(&sv);
	CHECK_EQ_INT(stat(path("home/.cache"), &st), 0);
	CHECK_EQ_INT(st.st_uid, nobody.uid);
	CHECK_EQ_INT(stat(path("home/.cache/f"), &st), 0);
	CHECK_EQ_INT(st.st_uid, nobody.uid);
	CHECK_EQ_INT(st.st_gid, nobody.gid);
	/* and back: root again */
	CHECK_EQ_INT(setfsuid((uid_t)-1), 0);
	CHECK_EQ_INT(mkdir(path("rootdir"), 0700), 0);
}

static int other_result = -1;
static int go_fd[2], done_fd[2];

static void *other_thread(void *arg)
{
	char c;
	(void)arg;
	if (read(go_fd[0], &c, 1) != 1)
		return NULL;
	int fd = open(path("secret"), O_RDONLY);
	other_result = fd >= 0 ? 0 : -errno;
	if (fd >= 0)
		close(fd);
	if (write(done_fd[1], "x", 1) != 1)
		perror("write");
	return NULL;
}

/* While one thread acts as the user, the others keep root's rights. */
static void test_only_this_thread(void)
{
	struct asuser_saved sv;
	pthread_t t;
	char c;

	CHECK_EQ_INT(pipe(go_fd), 0);
	CHECK_EQ_INT(pipe(done_fd), 0);
	CHECK_EQ_INT(pthread_create(&t, NULL, other_thread, NULL), 0);
	CHECK_EQ_INT(asuser_enter(&nobody, &sv), 0);
	CHECK_EQ_INT(write(go_fd[1], "x", 1), 1);
	CHECK_EQ_INT(read(done_fd[0], &c, 1), 1);
	CHECK(open(path("secret"), O_RDONLY) < 0);
	asuser_leave(&sv);
	pthread_join(t, NULL);
	CHECK_EQ_INT(other_result, 0);
}

static void test_groups_restored(void)
{
	gid_t before[ASUSER_MAX_GROUPS], after[ASUSER_MAX_GROUPS];
	struct asuser_saved sv;
	int n0 = getgroups(ASUSER_MAX_GROUPS, before), n1;

	CHECK_EQ_INT(asuser_enter(&nobody, &sv), 0);
	CHECK_EQ_INT(getgroups(0, NULL), nobody.ngroups);
	asuser_leave(&sv);
	n1 = getgroups(ASUSER_MAX_GROUPS, after);
	CHECK_EQ_INT(n1, n0);
	CHECK(n0 == n1 && memcmp(before, after, (size_t)n0 * sizeof(gid_t)) == 0);
}

static void test_from_sudo(void)
{
	struct asuser u;
	char id[16];

	unsetenv("SUDO_UID");
	CHECK_EQ_INT(asuser_from_sudo(&u), 0);
	CHECK_EQ_INT(u.active, 0);
	snprintf(id, sizeof(id), "%d", (int)nobody.uid);
	setenv("SUDO_UID", id, 1);
	setenv("SUDO_GID", "x1", 1);
	CHECK_EQ_INT(asuser_from_sudo(&u), -EINVAL);
	CHECK_EQ_INT(u.active, 0);
	snprintf(id, sizeof(id), "%d", (int)nobody.gid);
	setenv("SUDO_GID", id, 1);
	CHECK_EQ_INT(asuser_from_sudo(&u), 0);
	CHECK_EQ_INT(u.active, 1);
	CHECK_EQ_INT(u.uid, nobody.uid);
	CHECK_EQ_INT(asuser_uid(&u), nobody.uid);
	setenv("SUDO_UID", "0", 1);
	CHECK_EQ_INT(asuser_from_sudo(&u), 0);
	CHECK_EQ_INT(u.active, 0);
	CHECK_EQ_INT(asuser_uid(&u), 0);
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
}

int main(void)
{
	struct passwd *pw = getpwnam("nobody");
	char cmd[300];

	if (geteuid() != 0 || !pw) {
		printf("skipped: needs root and a user nobody\n");
		return 77;
	}
	if (!mkdtemp(dir) || chmod(dir, 0755) != 0) {
		perror("mkdtemp");
		return 1;
	}
	asuser_init(&nobody, pw->pw_uid, pw->pw_gid, pw->pw_name);
	CHECK_EQ_INT(nobody.active, 1);
	test_reads_as_the_user();
	test_makes_the_users_files();
	test_only_this_thread();
	test_groups_restored();
	test_from_sudo();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		perror(cmd);
	return check_status();
}
