/*
 * Acting for the user a recording belongs to. mfu-record runs as root
 * (often through sudo) while the program it records runs as the invoking
 * user, who controls paths root then touches: the output file and its
 * directory, the Python hook's and the emulator's directories, files under
 * their HOME and TMPDIR (the machine profile, compute patterns),
 * /tmp/perf-PID.map. Root touches those with the user's filesystem
 * identity: a symlink or a swapped directory then reaches no more than the
 * user could reach without mfu-record, and what is created belongs to the
 * user, as it would without sudo.
 *
 * asuser_enter() switches the calling thread only (fsuid, fsgid and the
 * supplementary groups, through raw system calls, which Linux keeps per
 * thread; glibc's setgroups() would switch every thread): perf_event,
 * tracefs and /proc keep root's rights in the same process, and so do the
 * recorder's other threads.
 */
#ifndef MFU_ASUSER_H
#define MFU_ASUSER_H

#include <sys/stat.h>
#include <sys/types.h>

/* Supplementary groups kept (a user in more is given the first ones: a
 * narrower identity, never a wider one). */
#define ASUSER_MAX_GROUPS 64

struct asuser {
	int active; /* 0: act as this process is (no switch) */
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t groups[ASUSER_MAX_GROUPS];
};

/* What asuser_enter() replaced, for asuser_leave(). */
struct asuser_saved {
	int switched;
	uid_t fsuid;
	gid_t fsgid;
	int ngroups;
	gid_t groups[ASUSER_MAX_GROUPS];
};

/* @u for user @uid, group @gid, with the supplementary groups of @name
 * in the group database (NULL or unknown: @gid alone). Active only when
 * this process is root and @uid is not: otherwise there is nothing to
 * switch. Returns 0. */
int asuser_init(struct asuser *u, uid_t uid, gid_t gid, const char *name);

/* The user who ran sudo (SUDO_UID, SUDO_GID) when this process is root
 * under sudo; @u inactive otherwise (not root, no SUDO_UID, SUDO_UID 0).
 * Returns 0, or -EINVAL when SUDO_UID/SUDO_GID are set but are not ids
 * (@u inactive). */
int asuser_from_sudo(struct asuser *u);

/* The uid files made for @u belong to: @u's, or this process's euid when
 * @u is NULL or inactive. */
uid_t asuser_uid(const struct asuser *u);

/* From here until asuser_leave(@sv), the calling thread opens, creates and
 * removes files as @u (nothing happens for NULL or an inactive @u). Only
 * file system calls belong in between. Returns 0 or -errno (then nothing
 * changed, and @sv may still be passed to asuser_leave()). */
int asuser_enter(const struct asuser *u, struct asuser_saved *sv);

/* Back to the identity asuser_enter() saved. Aborts if Linux refuses (a
 * thread left with the user's identity would fail in odd ways, or worse). */
void asuser_leave(struct asuser_saved *sv);

/* Become @u for good (all ids, groups; no way back): for a child process
 * before exec. NULL or inactive: nothing. Returns 0 or -errno. */
int asuser_become(const struct asuser *u);

/* The user whose paths this process touches (mfu-record under sudo: the
 * target's user), for modules deep below the command line (the
 * checkpointer's connection, symbol files, JIT maps, pattern files); NULL
 * until set, and then too: act as we are. @u must outlive its use. */
void asuser_set_owner(const struct asuser *u);
const struct asuser *asuser_owner(void);

/* open(@path, @flags, @mode) as @u. Returns the fd or -errno. */
int asuser_open(const struct asuser *u, const char *path, int flags, mode_t mode);

/* Open, for reading, a file @u's processes wrote for root to read (a status
 * file, a JIT's symbol map): as @u, not through a symlink at @path, never
 * blocking on a FIFO; it must be a regular file of at most @max bytes
 * owned by asuser_uid(@u) or root. *@st (may be NULL) gets its fstat.
 * Returns the fd, or -errno: -ELOOP (a symlink), -EINVAL (not a regular
 * file), -EPERM (another owner), -EFBIG (larger than @max), or open's. */
int asuser_open_file(const struct asuser *u, const char *path, off_t max, struct stat *st);

#endif
