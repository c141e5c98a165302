#include "asuser.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int asuser_init(struct asuser *u, uid_t uid, gid_t gid, const char *name)
{
	int n = ASUSER_MAX_GROUPS;

	memset(u, 0, sizeof(*u));
	u->uid = uid;
	u->gid = gid;
	u->groups[0] = gid;
	u->ngroups = 1;
	if (name && *name) {
		gid_t all[1024];
		int total = (int)ARRAY_SIZE(all);
		/* -1 when there are more than fit: the first ones are kept */
		getgrouplist(name, gid, all, &total);
		if (total > 0) {
			if (total > (int)ARRAY_SIZE(all))
				total = (int)ARRAY_SIZE(all);
			n = total < n ? total : n;
			memcpy(u->groups, all, (size_t)n * sizeof(gid_t));
			u->ngroups = n;
		}
	}
	u->active = geteuid() == 0 && uid != 0;
	return 0;
}

int asuser_from_sudo(struct asuser *u)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	struct passwd *pw;
	int uid, gid;

	memset(u, 0, sizeof(*u));
	if (geteuid() != 0 || !su || !sg)
		return 0;
	if (safe_atoi(su, &uid) || safe_atoi(sg, &gid) || uid < 0 || gid < 0)
		return -EINVAL;
	if (uid == 0)
		return 0;
	pw = getpwuid((uid_t)uid);
	return asuser_init(u, (uid_t)uid, (gid_t)gid, pw ? pw->pw_name : NULL);
}

static const struct asuser *owner;

void asuser_set_owner(const struct asuser *u)
{
	owner = u;
}

const struct asuser *asuser_owner(void)
{
	return owner;
}

uid_t asuser_uid(const struct asuser *u)
{
	return u && u->active ? u->uid : geteuid();
}

/* The raw system calls: per thread (glibc's setgroups() signals every
 * thread of the process to change all of them). setfsuid and setfsgid
 * return the previous value and take -1 as "no change", which is how the
 * current one is read. */
static long sys_setgroups(int n, const gid_t *g)
{
	return syscall(SYS_setgroups, (size_t)n, g);
}

static uid_t fsuid_set(uid_t id)
{
	return (uid_t)syscall(SYS_setfsuid, id);
}

static gid_t fsgid_set(gid_t id)
{
	return (gid_t)syscall(SYS_setfsgid, id);
}

static int restore(const struct asuser_saved *sv)
{
	fsuid_set(sv->fsuid);
	fsgid_set(sv->fsgid);
	if (sys_setgroups(sv->ngroups, sv->groups) != 0)
		return -errno;
	return fsuid_set((uid_t)-1) == sv->fsuid && fsgid_set((gid_t)-1) == sv->fsgid ? 0 : -EPERM;
}

int asuser_enter(const struct asuser *u, struct asuser_saved *sv)
{
	int err;

	memset(sv, 0, sizeof(*sv));
	if (!u || !u->active)
		return 0;
	sv->fsuid = fsuid_set((uid_t)-1);
	sv->fsgid = fsgid_set((gid_t)-1);
	sv->ngroups = getgroups(ASUSER_MAX_GROUPS, sv->groups);
	if (sv->ngroups < 0)
		return -errno;
	sv->switched = 1;
	/* groups first: with the user's fsuid, root's groups would still
	 * open files of group root */
	if (sys_setgroups(u->ngroups, u->groups) != 0) {
		err = -errno;
		goto fail;
	}
	fsgid_set(u->gid);
	fsuid_set(u->uid);
	if (fsgid_set((gid_t)-1) != u->gid || fsuid_set((uid_t)-1) != u->uid) {
		err = -EPERM;
		goto fail;
	}
	return 0;
fail:
	asuser_leave(sv);
	return err;
}

void asuser_leave(struct asuser_saved *sv)
{
	if (!sv->switched)
		return;
	if (restore(sv) != 0) {
		fprintf(stderr, "mfu: cannot switch back from the user's file system identity: %s\n",
			strerror(errno));
		abort();
	}
	sv->switched = 0;
}

int asuser_become(const struct asuser *u)
{
	if (!u || !u->active)
		return 0;
	if (setgroups((size_t)u->ngroups, u->groups) != 0 || setresgid(u->gid, u->gid, u->gid) != 0 ||
	    setresuid(u->uid, u->uid, u->uid) != 0)
		return -errno;
	/* no way back */
	if (setuid(0) == 0)
		return -EPERM;
	return 0;
}

int asuser_open(const struct asuser *u, const char *path, int flags, mode_t mode)
{
	struct asuser_saved sv;
	int fd, err = asuser_enter(u, &sv);

	if (err)
		return err;
	fd = open(path, flags, mode);
	err = fd < 0 ? -errno : 0;
	asuser_leave(&sv);
	return fd < 0 ? err : fd;
}

int asuser_open_file(const struct asuser *u, const char *path, off_t max, struct stat *st)
{
	struct stat sb;
	int fd, err;

	fd = asuser_open(u, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &sb) != 0)
		err = -errno;
	else if (!S_ISREG(sb.st_mode))
		err = -EINVAL;
	else if (sb.st_uid != asuser_uid(u) && sb.st_uid != 0)
		err = -EPERM;
	else if (sb.st_size > max)
		err = -EFBIG;
	else
		err = 0;
	if (err) {
		close(fd);
		return err;
	}
	if (st)
		*st = sb;
	return fd;
}
