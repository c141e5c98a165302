/*
 * The machine profile's private half:
 *   profile.c       paths, and merging a calibration into a profile
 *   profile_save.c  writing a profile (a new file renamed over the old)
 *   profile_load.c  reading one back for this machine
 */
#ifndef MFU_PROFILE_IMPL_H
#define MFU_PROFILE_IMPL_H

#include "profile.h"

#include <stdint.h>
#include <stdio.h>

#ifndef MFU_VERSION
#define MFU_VERSION "unknown"
#endif

#define PROFILE_PATH_MAX 4096

/* Calibrations a profile remembers at most (those whose figures it keeps). */
#define PROFILE_MAX_CALIBRATIONS 32

/* The stored machine row: its identity against @m, and its CPU set (the
 * one format 2 measured every row on). */
struct profile_stored_machine {
	char cpus[256];
	double ncpu;
	int64_t unix_s;          /* its date */
};

void profile_set_why(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* This host's name; as a file name with @for_file. */
void profile_host_name(char *buf, size_t len, int for_file);
/* @path, or the default profile path, into @buf. */
int profile_resolve(const char *path, char *buf, size_t len, char *why, size_t whylen);
/* Are two rows one measurement (kind, dtype, scope, kernel, CPU set)? */
int profile_same_key(const struct profile_peak *a, const struct profile_peak *b);
/* What a profile at @file holds for @m (profile_load.c). */
int profile_read_file(const char *file, const struct machine *m, struct profile_peak **rows, int *nrows,
		      struct profile_calibration *cals, int maxcal, int *ncal, struct profile_status *stat_out,
		      struct profile_stored_machine *sm, char *why, size_t len);

static inline void copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

#endif
