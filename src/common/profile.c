/* The machine profile: paths, and merging a calibration into a profile
 * (profile_impl.h). */
#include "profile_impl.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(PROFILE_APPLICATION_ID == 1835431280, "the schema text spells the id in decimal");

void profile_set_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

/* This host's name, as a file name: letters, digits, '.', '_' and '-'
 * kept, anything else '_' (a name is never empty or a path). */
void profile_host_name(char *buf, size_t len, int for_file)
{
	char host[256] = "";

	if (gethostname(host, sizeof(host) - 1) != 0 || !host[0])
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	if (for_file)
		for (char *c = host; *c; c++)
			if (!isalnum((unsigned char)*c) && *c != '.' && *c != '_' && *c != '-')
				*c = '_';
	if (for_file && host[0] == '.')
		host[0] = '_';
	snprintf(buf, len, "%s", host);
}

int profile_default_path(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char host[256];

	/* One file per host: a home directory shared by a cluster's nodes
	 * (NFS) keeps each node's measurements. */
	profile_host_name(host, sizeof(host), 1);
	/* The XDG base directory spec: a relative XDG_CACHE_HOME is invalid
	 * and must be ignored. */
	if (xdg && xdg[0] == '/')
		return strbuf(buf, len, "%s/mfu/profile-%s.sqlite", xdg, host) ? -ENAMETOOLONG : 0;
	if (!home || home[0] != '/') {
		struct passwd *pw = getpwuid(getuid());
		home = pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
	}
	if (!home)
		return -ENOENT;
	return strbuf(buf, len, "%s/.cache/mfu/profile-%s.sqlite", home, host) ? -ENAMETOOLONG : 0;
}

/* @dir is an absolute path to a directory @uid owns. */
static int owned_dir(const char *dir, uid_t uid)
{
	struct stat st;

	return dir && dir[0] == '/' && stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid;
}

int profile_user_path(uid_t uid, char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	struct passwd *pw;
	char host[256];

	profile_host_name(host, sizeof(host), 1);
	if (uid != 0 && owned_dir(xdg, uid))
		return strbuf(buf, len, "%s/mfu/profile-%s.sqlite", xdg, host) ? -ENAMETOOLONG : 0;
	if (uid != 0 && owned_dir(home, uid))
		return strbuf(buf, len, "%s/.cache/mfu/profile-%s.sqlite", home, host) ? -ENAMETOOLONG : 0;
	pw = getpwuid(uid);
	if (!pw || !pw->pw_dir || pw->pw_dir[0] != '/')
		return -ENOENT;
	return strbuf(buf, len, "%s/.cache/mfu/profile-%s.sqlite", pw->pw_dir, host) ? -ENAMETOOLONG : 0;
}

int profile_resolve(const char *path, char *buf, size_t len, char *why, size_t whylen)
{
	int err;

	if (path) {
		if (!*path) {
			profile_set_why(why, whylen, "empty profile path");
			return -EINVAL;
		}
		if (strbuf(buf, len, "%s", path)) {
			profile_set_why(why, whylen, "profile path too long");
			return -ENAMETOOLONG;
		}
		return 0;
	}
	err = profile_default_path(buf, len);
	if (err)
		profile_set_why(why, whylen, "no default profile path: %s",
			err == -ENOENT ? "neither XDG_CACHE_HOME nor a home directory is known"
				       : "path too long");
	return err;
}

/* ------------------------------------------------------------------ */
/* Merging a calibration into a profile                                */
/* ------------------------------------------------------------------ */

/* The kernel as a key: a bandwidth kernel reports whichever store won
 * (triad or triad_nt), which is one measurement either way. */
static size_t kernel_key_len(const struct profile_peak *p)
{
	size_t n = strlen(p->kernel);

	if (strcmp(p->kind, "bandwidth") == 0 && n > 3 && strcmp(p->kernel + n - 3, "_nt") == 0)
		n -= 3;
	return n;
}

static int same_set(const struct profile_peak *a, const struct profile_peak *b)
{
	return strcmp(a->cpus, b->cpus) == 0 && fabs(a->ncpu - b->ncpu) <= 1e-6;
}

/* One figure of the same thing: kind, dtype, scope, kernel and, for the
 * "all" scope, CPU set. One core's figure is one core's on any set. */
int profile_same_key(const struct profile_peak *a, const struct profile_peak *b)
{
	size_t na = kernel_key_len(a), nb = kernel_key_len(b);

	return strcmp(a->kind, b->kind) == 0 && strcmp(a->dtype, b->dtype) == 0 &&
	       strcmp(a->scope, b->scope) == 0 && na == nb && strncmp(a->kernel, b->kernel, na) == 0 &&
	       (strcmp(a->scope, "all") != 0 || same_set(a, b));
}

/* Competing for best: same kind, dtype, scope (and set for "all"). */
static int same_group(const struct profile_peak *a, const struct profile_peak *b)
{
	return strcmp(a->kind, b->kind) == 0 && strcmp(a->dtype, b->dtype) == 0 &&
	       strcmp(a->scope, b->scope) == 0 && (strcmp(a->scope, "all") != 0 || same_set(a, b));
}

void profile_mark_best(struct profile_peak *rows, int n)
{
	for (int i = 0; i < n; i++) {
		struct profile_peak *p = &rows[i];
		int best = 1;

		if (strcmp(p->kind, "clock") == 0) {
			p->best = 1;
			continue;
		}
		if (strcmp(p->kind, "bandwidth") == 0) {
			/* the triad, as STREAM reports it */
			p->best = strncmp(p->kernel, "triad", 5) == 0;
			continue;
		}
		/* the fastest undisturbed kernel; the fastest disturbed one only
		 * when there is no other (it stays flagged) */
		for (int j = 0; j < n && best; j++) {
			const struct profile_peak *q = &rows[j];
			if (j == i || !same_group(p, q))
				continue;
			if (q->disturbed != p->disturbed) {
				best = !p->disturbed;
				continue;
			}
			if (q->value > p->value || (q->value == p->value && j < i))
				best = 0;
		}
		p->best = best;
	}
}

int profile_merge(const struct profile_peak *old, int nold, const struct profile_peak *fresh, int nfresh,
		  struct profile_peak *out, int max, int *nout, int *kept)
{
	int n = 0, nkept = 0;

	if (!out || !nout || nold < 0 || nfresh < 0 || (nold && !old) || (nfresh && !fresh))
		return -EINVAL;
	*nout = 0;
	if (kept)
		*kept = 0;
	/* the fresh figures, each unless it is disturbed and an earlier one
	 * of the same thing was not */
	for (int i = 0; i < nfresh && n < max; i++) {
		const struct profile_peak *f = &fresh[i], *keep = NULL;

		for (int j = 0; f->disturbed && j < nold && !keep; j++)
			if (!old[j].disturbed && profile_same_key(f, &old[j]))
				keep = &old[j];
		out[n++] = keep ? *keep : *f;
		nkept += keep != NULL;
	}
	/* earlier figures of other things: another CPU set's, a kernel not
	 * measured this time; newest CPU sets first when room runs out */
	int *taken = calloc(nold ? (size_t)nold : 1, sizeof(*taken));
	if (!taken)
		return -ENOMEM;
	for (;;) {
		int pick = -1;
		for (int j = 0; j < nold; j++) {
			int named = 0;
			if (taken[j])
				continue;
			for (int i = 0; i < nfresh && !named; i++)
				named = profile_same_key(&old[j], &fresh[i]);
			if (named) {
				taken[j] = 1;
				continue;
			}
			if (pick < 0 || old[j].measured_unix_s > old[pick].measured_unix_s)
				pick = j;
		}
		if (pick < 0)
			break;
		taken[pick] = 1;
		if (n < max)
			out[n++] = old[pick];
	}
	free(taken);
	for (int i = 0; i < n; i++)
		out[i].best = 0;
	profile_mark_best(out, n);
	*nout = n;
	if (kept)
		*kept = nkept;
	return 0;
}

