/*
 * The machine profile: the peaks mfu-calibrate measured on this machine,
 * kept in a small SQLite file with the identity of the machine and CPU set
 * they were measured on, so that mfu-record can use them (source
 * "measured") only where they apply.
 */
#ifndef MFU_PROFILE_H
#define MFU_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "machine.h"

/* More than one calibration writes (kernels x dtypes x scopes + bandwidth). */
#define PROFILE_MAX_PEAKS 64

/* The file's PRAGMA application_id ('mfup') and the format version. */
#define PROFILE_APPLICATION_ID 0x6d667570
#define PROFILE_VERSION 2

struct profile_peak {
	char kind[16];           /* "flops" | "bandwidth" | "clock" (a measured core
				  * clock in Hz, scope "core") */
	char dtype[8];           /* "fp64", "fp32", "bf16", "fp16"; "" for bandwidth */
	char scope[8];           /* "core" (one pinned thread) | "all" (the allowed CPUs) */
	char kernel[32];         /* "avx512_fma", "sse_mul_add", "triad_nt", ... */
	double value;            /* FLOP/s or bytes/s */
	int best;                /* 1 on the row a recorder should use for this kind,
				  * dtype and scope: the fastest FLOP kernel, the triad */
	char detail[512];        /* how it was measured */
	int64_t measured_unix_s; /* when (CLOCK_REALTIME seconds) */
};

/* The default profile path: $XDG_CACHE_HOME/mfu/profile-HOST.sqlite when
 * XDG_CACHE_HOME is set to an absolute path, else
 * ~/.cache/mfu/profile-HOST.sqlite ($HOME, else the password database);
 * HOST is this host's name (one file per host, for home directories that
 * a cluster's nodes share). Returns 0, -ENOENT (no home
 * directory) or -ENAMETOOLONG. */
int profile_default_path(char *buf, size_t len);

/* The default profile path of user @uid when a process running as root
 * acts for them (mfu-record or mfu-calibrate under sudo), from an
 * environment that may be either's (sudo -E keeps the user's HOME):
 * $XDG_CACHE_HOME/mfu/ or $HOME/.cache/mfu/ when that directory is one
 * @uid owns, else .cache/mfu/ in @uid's home directory from the password
 * database. For @uid 0, root's own: its home directory from the password
 * database, whatever HOME says. The file name is profile_default_path()'s.
 * Returns 0, -ENOENT (no home directory) or -ENAMETOOLONG. */
int profile_user_path(uid_t uid, char *buf, size_t len);

/* Replace the profile at @path (NULL = the default) with @m's identity and
 * the @n measurements of @peaks. Missing directories are created with mode
 * 0700; the file is written under a temporary name in the same directory
 * and renamed over @path, so a reader sees the old or the new profile,
 * never half of one. Returns 0 or -errno / -EIO with a message in @why. */
int profile_save(const char *path, const struct machine *m, const struct profile_peak *peaks,
		 int n, char *why, size_t len);

/* Load the measurements of the profile at @path (NULL = the default) into
 * @out (room for @max rows; *n receives how many were stored). Only a
 * profile measured on this CPU (vendor, family, model, stepping, brand
 * string, ISA features) on this host counts; rows of scope "all" only
 * when they were measured on @m's CPU set (allowed CPUs and ncpu), rows of
 * scope "core" (and the clock) on any. Returns:
 *   0 with *n > 0       the measurements apply;
 *   0 with *n == 0      none apply: @why says why ("no profile at PATH: run
 *                       mfu-calibrate", "profile is for a different CPU
 *                       (...)", "profile was measured on CPUs ...");
 *   -ENOSPC             more rows matched than @max (the first @max are stored);
 *   -EPROTO, -ENOTSUP, -errno  the file is not a readable mfu profile
 *                       (corrupt, foreign, newer format); @why says which. */
int profile_load(const char *path, const struct machine *m, struct profile_peak *out, int max,
		 int *n, char *why, size_t len);

#endif
