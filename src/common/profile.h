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

/* Rows a profile holds: a calibration writes up to 64 (kernels x dtypes x
 * scopes + bandwidth + the clock), and the profile keeps the all-CPU
 * figures of a few CPU sets (taskset -c 0-3 mfu-calibrate adds its own). */
#define PROFILE_MAX_PEAKS 192

/* The file's PRAGMA application_id ('mfup') and the format version:
 * 3 records, per figure, the CPU set and threads it was measured with, the
 * share of the time its threads ran, the load average, and whether it was
 * disturbed; format 2 files are read (their disturbance from the detail
 * text) and rewritten as 3 by the next calibration. */
#define PROFILE_APPLICATION_ID 0x6d667570
#define PROFILE_VERSION 3

/* A figure whose threads ran less than this share of the wall time shared
 * its CPUs with another task: it is too low (team.h's TEAM_SHARE_OK). */
#define PROFILE_SHARE_OK 0.95

struct profile_peak {
	char kind[16];           /* "flops" | "bandwidth" | "clock" (a measured core
				  * clock in Hz, scope "core") */
	char dtype[8];           /* "fp64", "fp32", "bf16", "fp16"; "" for bandwidth */
	char scope[8];           /* "core" (one pinned thread) | "all" (the allowed CPUs) */
	char kernel[32];         /* "avx512_fma", "sse_mul_add", "triad_nt", ... */
	double value;            /* FLOP/s or bytes/s */
	int best;                /* 1 on the row a recorder should use for this kind,
				  * dtype, scope (and CPU set): the fastest undisturbed
				  * FLOP kernel, the triad; profile_save() sets it */
	char detail[512];        /* how it was measured */
	int64_t measured_unix_s; /* when (CLOCK_REALTIME seconds) */
	/* Format 3. Left 0 / "" by a caller, profile_save() fills them from
	 * the machine: its CPU set, 1 thread for "core", its CPUs for "all". */
	char cpus[256];          /* the CPU set of the calibration (e.g. "0-3") */
	double ncpu;             /* its CPUs, capped by the cgroup quota */
	int threads;             /* threads that ran the kernel at once */
	double cpu_share;        /* the lowest over the threads of CPU time / wall
				  * time in the figure's repetition; 0: unknown */
	double loadavg;          /* 1-minute load average when it was measured;
				  * < 0: unknown */
	int disturbed;           /* another task shared its CPUs (cpu_share below
				  * PROFILE_SHARE_OK): too low, never a ceiling */
	int64_t calibration;     /* the calibration it came from (profile_status);
				  * 0: unknown (format 2) */
	int applies;             /* set by profile_read(): measured on the CPU set
				  * asked about ("all"), or one core's ("core",
				  * "clock") */
};

/* What the latest calibration saved in a profile did. */
struct profile_calibration {
	int64_t id;              /* 0: none recorded (format 2) */
	int64_t unix_s;          /* when it was saved */
	char cpus[256];          /* its CPU set */
	double ncpu;
	double loadavg;          /* the highest 1-minute load average seen; < 0 unknown */
	int measurements;        /* FLOP and bandwidth figures it measured */
	int disturbed;           /* of which disturbed */
	int kept;                /* disturbed ones not saved: an earlier undisturbed
				  * figure of the same kernel was kept instead */
	double lowest_share;     /* the lowest cpu_share of its figures; 0 unknown */
	int64_t kept_since;      /* the oldest of the earlier figures kept; 0: none */
};

struct profile_status {
	int format;              /* the file's format (2 or 3); 0: no file */
	struct profile_calibration last;
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

/* Save the @n measurements of @peaks, taken on @m's CPU set, to the
 * profile at @path (NULL = the default), merged with what it holds for
 * this host and CPU (profile_merge()): an earlier profile of another host,
 * CPU or ISA is replaced. Missing directories are created with mode 0700;
 * the file is written under a temporary name in the same directory and
 * renamed over @path, so a reader sees the old or the new profile, never
 * half of one. @saved (may be NULL) receives what this calibration did
 * (its disturbed figures, and how many of them an earlier figure
 * replaced, and since when those are). Returns 0 or -errno / -EIO with
 * a message in @why. */
int profile_save(const char *path, const struct machine *m, const struct profile_peak *peaks,
		 int n, struct profile_calibration *saved, char *why, size_t len);

/* The merge profile_save() does, on rows whose cpus/ncpu/threads are set:
 * each fresh figure replaces the earlier one of the same kind, dtype,
 * scope, kernel (copy and copy_nt, triad and triad_nt are one) and, for
 * scope "all", CPU set, unless the fresh one is disturbed and the earlier
 * one is not: a measurement that knows it was disturbed never replaces one
 * that was not (*@kept counts those). Earlier figures the fresh ones do
 * not name (another CPU set's) stay, the oldest CPU sets' dropped when
 * @max is reached. Marks the best rows (profile_mark_best()). Returns 0
 * or -EINVAL. */
int profile_merge(const struct profile_peak *old, int nold, const struct profile_peak *fresh, int nfresh,
		  struct profile_peak *out, int max, int *nout, int *kept);

/* Set @best on the row of each kind, dtype, scope and (for "all") CPU set
 * that a recorder uses: for FLOPs the fastest undisturbed kernel (the
 * fastest disturbed one when all are), for bandwidth the triad (triad or
 * triad_nt), the clock always. */
void profile_mark_best(struct profile_peak *rows, int n);

/* Load the measurements of the profile at @path (NULL = the default) into
 * @out (room for @max rows; *n receives how many were stored). Only a
 * profile measured on this CPU (vendor, family, model, stepping, brand
 * string, ISA features) on this host counts; rows of scope "all" only
 * when they were measured on @m's CPU set (allowed CPUs and ncpu), rows of
 * scope "core" (and the clock) on any. Disturbed rows are returned with
 * their flag: the caller decides (a recorder never takes one as a
 * ceiling). Returns:
 *   0 with *n > 0       the measurements apply;
 *   0 with *n == 0      none apply: @why says why ("no profile at PATH: run
 *                       mfu-calibrate", "profile is for a different CPU
 *                       (...)", "profile was measured on CPUs ...");
 *   -ENOSPC             more rows matched than @max (the first @max are stored);
 *   -EPROTO, -ENOTSUP, -errno  the file is not a readable mfu profile
 *                       (corrupt, foreign, newer format); @why says which.
 * With *n > 0, @why may still say why the all-CPU rows do not apply. */
int profile_load(const char *path, const struct machine *m, struct profile_peak *out, int max,
		 int *n, char *why, size_t len);

/* profile_load() that also fills @st (may be NULL) with the file's format
 * and its latest calibration. */
int profile_read(const char *path, const struct machine *m, struct profile_peak *out, int max,
		 int *n, struct profile_status *st, char *why, size_t len);

/* profile_read() that also keeps, in @sup (room for @maxsup; *@nsup rows),
 * the rows of scope "all" measured on a CPU set that holds all of @m's and
 * more (the whole machine's, for a target bound to some of its CPUs), with
 * applies 0: not the target's own figures, which stay in @out as
 * profile_read() puts them. @sup NULL: none kept. */
int profile_read_sets(const char *path, const struct machine *m, struct profile_peak *out, int max,
		      int *n, struct profile_status *st, struct profile_peak *sup, int maxsup, int *nsup,
		      char *why, size_t len);

#endif
