#include "profile.h"
#include "embedded.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pwd.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef MFU_VERSION
#define MFU_VERSION "unknown"
#endif

#define PROFILE_PATH_MAX 4096

_Static_assert(PROFILE_APPLICATION_ID == 1835431280, "the schema text spells the id in decimal");



/* Calibrations a profile remembers at most (those whose figures it keeps). */
#define PROFILE_MAX_CALIBRATIONS 32

static void set_why(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void set_why(char *why, size_t len, const char *fmt, ...)
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
static void host_name(char *buf, size_t len, int for_file)
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
	host_name(host, sizeof(host), 1);
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

	host_name(host, sizeof(host), 1);
	if (uid != 0 && owned_dir(xdg, uid))
		return strbuf(buf, len, "%s/mfu/profile-%s.sqlite", xdg, host) ? -ENAMETOOLONG : 0;
	if (uid != 0 && owned_dir(home, uid))
		return strbuf(buf, len, "%s/.cache/mfu/profile-%s.sqlite", home, host) ? -ENAMETOOLONG : 0;
	pw = getpwuid(uid);
	if (!pw || !pw->pw_dir || pw->pw_dir[0] != '/')
		return -ENOENT;
	return strbuf(buf, len, "%s/.cache/mfu/profile-%s.sqlite", pw->pw_dir, host) ? -ENAMETOOLONG : 0;
}

static int resolve(const char *path, char *buf, size_t len, char *why, size_t whylen)
{
	int err;

	if (path) {
		if (!*path) {
			set_why(why, whylen, "empty profile path");
			return -EINVAL;
		}
		if (strbuf(buf, len, "%s", path)) {
			set_why(why, whylen, "profile path too long");
			return -ENAMETOOLONG;
		}
		return 0;
	}
	err = profile_default_path(buf, len);
	if (err)
		set_why(why, whylen, "no default profile path: %s",
			err == -ENOENT ? "neither XDG_CACHE_HOME nor a home directory is known"
				       : "path too long");
	return err;
}

/* mkdir -p of the directory part of @file, new directories mode 0700 (the
 * profile says which CPU this is; nobody else needs to write there). */
static int make_parents(const char *file, char *why, size_t len)
{
	char dir[PROFILE_PATH_MAX];
	char *slash;
	struct stat st;

	if (strbuf(dir, sizeof(dir), "%s", file))
		return -ENAMETOOLONG;
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0; /* the current directory or / */
	*slash = '\0';
	for (char *p = dir + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			int err = -errno;
			set_why(why, len, "cannot create directory %s: %s", dir, strerror(-err));
			return err;
		}
		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
			set_why(why, len, "%s is not a directory", dir);
			return -ENOTDIR;
		}
		*p = c;
		if (c == '\0')
			break;
	}
	return 0;
}

static int exec_sql(sqlite3 *db, const char *sql, char *why, size_t len)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		set_why(why, len, "%s", msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s && *s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

static void utc_date(int64_t unix_s, char *buf, size_t len)
{
	time_t t = (time_t)unix_s;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
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
static int same_key(const struct profile_peak *a, const struct profile_peak *b)
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
			if (!old[j].disturbed && same_key(f, &old[j]))
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
				named = same_key(&old[j], &fresh[i]);
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

/* A caller's row, with what it left out filled from @m: the calibration's
 * CPU set, one thread for "core", its CPUs for "all". */
static void fill_row(struct profile_peak *p, const struct machine *m)
{
	if (!p->cpus[0])
		copy_str(p->cpus, sizeof(p->cpus), m->allowed_cpus);
	if (!(p->ncpu > 0))
		p->ncpu = m->ncpu;
	if (p->threads <= 0) {
		int k = machine_cpulist_count(p->cpus);
		p->threads = strcmp(p->scope, "all") == 0 ? (k > 0 ? k : (m->ncpu_affinity > 0 ? m->ncpu_affinity : 1))
							  : 1;
	}
	if (p->cpu_share > 0 && p->cpu_share < PROFILE_SHARE_OK)
		p->disturbed = 1;
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */
/* ------------------------------------------------------------------ */

static void bind_pos(sqlite3_stmt *st, int i, double v, int zero_ok)
{
	if (v > 0 || (zero_ok && v == 0))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static int write_rows(sqlite3 *db, const struct machine *m, const struct profile_peak *peaks,
		      int n, const struct profile_calibration *cals, int ncal, char *why, size_t len)
{
	sqlite3_stmt *st = NULL;
	struct utsname u;
	char isa[256], date[32];
	time_t now = time(NULL);
	int err = -EIO, i = 1;

	machine_isa_string(m->isa, isa, sizeof(isa));
	utc_date((int64_t)now, date, sizeof(date));
	if (uname(&u) < 0)
		u.release[0] = '\0';

	if (sqlite3_prepare_v2(db,
			       "INSERT INTO machine (id, vendor, family, model, stepping, cpu_name, uarch, "
			       "isa, allowed_cpus, ncpu, nominal_hz, kernel, date, mfu_version, host) "
			       "VALUES (1,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
		goto sqlerr;
	sqlite3_bind_text(st, i++, m->vendor, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, i++, m->family);
	sqlite3_bind_int(st, i++, m->model);
	sqlite3_bind_int(st, i++, m->stepping);
	sqlite3_bind_text(st, i++, m->name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, i++, m->uarch, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, i++, isa, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, i++, m->allowed_cpus, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, i++, m->ncpu);
	bind_pos(st, i++, m->nominal_hz, 0);
	bind_text(st, i++, u.release);
	sqlite3_bind_text(st, i++, date, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, i++, MFU_VERSION, -1, SQLITE_STATIC);
	{
		char host[256];
		host_name(host, sizeof(host), 0);
		sqlite3_bind_text(st, i++, host, -1, SQLITE_TRANSIENT);
	}
	if (sqlite3_step(st) != SQLITE_DONE)
		goto sqlerr;
	sqlite3_finalize(st);
	st = NULL;

	if (sqlite3_prepare_v2(db,
			       "INSERT INTO calibration (id, unix_s, date, cpus, ncpu, loadavg, measurements, "
			       "disturbed, kept, lowest_share, kept_since, mfu_version, kernel) "
			       "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
		goto sqlerr;
	for (int k = 0; k < ncal; k++) {
		const struct profile_calibration *c = &cals[k];
		char when[32];

		utc_date(c->unix_s, when, sizeof(when));
		sqlite3_reset(st);
		i = 1;
		sqlite3_bind_int64(st, i++, c->id);
		sqlite3_bind_int64(st, i++, c->unix_s);
		sqlite3_bind_text(st, i++, when, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, i++, c->cpus, -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(st, i++, c->ncpu);
		bind_pos(st, i++, c->loadavg, 1);
		sqlite3_bind_int(st, i++, c->measurements);
		sqlite3_bind_int(st, i++, c->disturbed);
		sqlite3_bind_int(st, i++, c->kept);
		bind_pos(st, i++, c->lowest_share, 0);
		if (c->kept_since > 0)
			sqlite3_bind_int64(st, i++, c->kept_since);
		else
			sqlite3_bind_null(st, i++);
		sqlite3_bind_text(st, i++, MFU_VERSION, -1, SQLITE_STATIC);
		bind_text(st, i++, u.release);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto sqlerr;
	}
	sqlite3_finalize(st);
	st = NULL;

	if (sqlite3_prepare_v2(db,
			       "INSERT INTO measurement (kind, dtype, scope, kernel, value, best, detail, "
			       "measured_unix_s, cpus, ncpu, threads, cpu_share, loadavg, disturbed, calibration) "
			       "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
		goto sqlerr;
	for (int k = 0; k < n; k++) {
		const struct profile_peak *p = &peaks[k];
		if (!p->kind[0] || !p->scope[0] || !p->kernel[0] || !(p->value > 0) || !isfinite(p->value)) {
			set_why(why, len, "measurement %d (%s %s %s) is incomplete", k, p->kind, p->scope,
				p->kernel);
			err = -EINVAL;
			goto out;
		}
		sqlite3_reset(st);
		i = 1;
		sqlite3_bind_text(st, i++, p->kind, -1, SQLITE_TRANSIENT);
		bind_text(st, i++, p->dtype);
		sqlite3_bind_text(st, i++, p->scope, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, i++, p->kernel, -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(st, i++, p->value);
		sqlite3_bind_int(st, i++, p->best ? 1 : 0);
		bind_text(st, i++, p->detail);
		sqlite3_bind_int64(st, i++, p->measured_unix_s);
		sqlite3_bind_text(st, i++, p->cpus, -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(st, i++, p->ncpu);
		sqlite3_bind_int(st, i++, p->threads);
		bind_pos(st, i++, p->cpu_share, 0);
		bind_pos(st, i++, p->loadavg, 1);
		sqlite3_bind_int(st, i++, p->disturbed ? 1 : 0);
		if (p->calibration > 0)
			sqlite3_bind_int64(st, i++, p->calibration);
		else
			sqlite3_bind_null(st, i++);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto sqlerr;
	}
	err = 0;
	goto out;
sqlerr:
	set_why(why, len, "%s", sqlite3_errmsg(db));
	err = -EIO;
out:
	sqlite3_finalize(st);
	return err;
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */

static const char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? (const char *)s : "";
}

static double col_double_or(sqlite3_stmt *st, int i, double otherwise)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? otherwise : sqlite3_column_double(st, i);
}

/* Open @file read-only and check that it is an mfu profile of a format
 * this mfu reads (2 or 3). Returns 0 with *@db and *@version, 0 with *@db
 * NULL for a format too old to use (@why says so), or -EPROTO / -ENOTSUP
 * / -errno with @why. */
static int open_profile(const char *file, sqlite3 **db, int *version, char *why, size_t len)
{
	sqlite3_stmt *st = NULL;
	struct stat sb;
	int err, app_id;

	*db = NULL;
	*version = 0;
	if (stat(file, &sb) < 0) {
		err = -errno;
		if (err == -ENOENT) {
			set_why(why, len, "no profile at %s: run mfu-calibrate", file);
			return -ENOENT;
		}
		set_why(why, len, "cannot read the profile %s: %s", file, strerror(-err));
		return err;
	}
	if (!S_ISREG(sb.st_mode)) {
		set_why(why, len, "the profile %s is not a regular file", file);
		return -EPROTO;
	}
	/* SQLite opens lazily and would blame the first query. */
	if (access(file, R_OK) < 0) {
		err = -errno;
		set_why(why, len, "cannot read the profile %s: %s", file, strerror(-err));
		return err;
	}
	if (sqlite3_open_v2(file, db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		set_why(why, len, "cannot open the profile %s: %s", file,
			*db ? sqlite3_errmsg(*db) : "out of memory");
		err = -EPROTO;
		goto fail;
	}
	/* A file of another program (a run database, anything SQLite) has
	 * another application_id; a damaged one fails right here. */
	if (sqlite3_prepare_v2(*db, "PRAGMA application_id", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		set_why(why, len, "%s is not an mfu profile (%s): run mfu-calibrate to replace it", file,
			sqlite3_errmsg(*db));
		err = -EPROTO;
		goto fail;
	}
	app_id = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if (app_id != PROFILE_APPLICATION_ID) {
		set_why(why, len, "%s is not an mfu profile: run mfu-calibrate to replace it", file);
		err = -EPROTO;
		goto fail;
	}
	if (sqlite3_prepare_v2(*db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		set_why(why, len, "%s: %s", file, sqlite3_errmsg(*db));
		err = -EPROTO;
		goto fail;
	}
	*version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if (*version > PROFILE_VERSION) {
		set_why(why, len, "%s has profile format %d, newer than this mfu (%d): upgrade mfu or "
			"run this mfu-calibrate", file, *version, PROFILE_VERSION);
		err = -ENOTSUP;
		goto fail;
	}
	if (*version < 2) {
		/* format 1 had no host: its figures may be another node's */
		set_why(why, len, "%s has the older profile format %d (no host): run mfu-calibrate", file,
			*version);
		sqlite3_close(*db);
		*db = NULL;
		return 0;
	}
	return 0;
fail:
	sqlite3_finalize(st);
	sqlite3_close(*db);
	*db = NULL;
	return err;
}

/* The stored machine row: its identity against @m, and its CPU set (the
 * one format 2 measured every row on). */
struct stored_machine {
	char cpus[256];
	double ncpu;
	int64_t unix_s;          /* its date */
};

/* Is the profile of this host and CPU (vendor, family, model, stepping,
 * brand string, ISA features)? 1: yes; 0: no (@why says why); -EPROTO: no
 * readable machine row. */
static int identity_matches(sqlite3 *db, const char *file, const struct machine *m, struct stored_machine *sm,
			    char *why, size_t len)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(db,
			       "SELECT vendor, family, model, stepping, cpu_name, isa, allowed_cpus, ncpu, host, "
			       "CAST(strftime('%s', date) AS INTEGER) FROM machine WHERE id = 1",
			       -1, &st, NULL) != SQLITE_OK) {
		set_why(why, len, "%s is a damaged mfu profile (%s): run mfu-calibrate", file, sqlite3_errmsg(db));
		return -EPROTO;
	}
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		set_why(why, len, "%s is a damaged mfu profile (%s): run mfu-calibrate", file,
			rc == SQLITE_DONE ? "no machine row" : sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return -EPROTO;
	}
	const char *vendor = col_text(st, 0), *name = col_text(st, 4), *isa = col_text(st, 5);
	const char *host = col_text(st, 8);
	int family = sqlite3_column_int(st, 1), model = sqlite3_column_int(st, 2);
	int stepping = sqlite3_column_int(st, 3);
	char now_isa[256], now_host[256];

	copy_str(sm->cpus, sizeof(sm->cpus), col_text(st, 6));
	sm->ncpu = sqlite3_column_double(st, 7);
	sm->unix_s = sqlite3_column_int64(st, 9);
	host_name(now_host, sizeof(now_host), 0);
	machine_isa_string(m->isa, now_isa, sizeof(now_isa));
	if (strcmp(host, now_host)) {
		set_why(why, len, "profile is for host %s (this is %s): run mfu-calibrate on this host", host,
			now_host);
	} else if (strcmp(vendor, m->vendor) || family != m->family || model != m->model ||
		   stepping != m->stepping || strcmp(name, m->name)) {
		set_why(why, len,
			"profile is for a different CPU (%s, %s family %d model %d stepping %d; this is "
			"%s, %s family %d model %d stepping %d): run mfu-calibrate on this machine",
			name, vendor, family, model, stepping, m->name, m->vendor, m->family, m->model,
			m->stepping);
	} else if (strcmp(isa, now_isa)) {
		/* Same CPU model, other usable ISA: a VM that hides AVX-512 or
		 * AMX, or another kernel; the measured rates do not carry over. */
		set_why(why, len,
			"profile was measured with other ISA features (%s; now %s): run mfu-calibrate again",
			isa, now_isa);
	} else {
		ret = 1;
	}
	sqlite3_finalize(st);
	return ret;
}

/* Format 2 said a disturbed figure only in its detail, as mfu-calibrate
 * wrote it: "(disturbed: the threads ran 52% of the time)". */
static double share_from_detail(const char *detail)
{
	const char *d = strstr(detail, "disturbed: the threads ran ");
	double pct;

	if (!d || sscanf(d + strlen("disturbed: the threads ran "), "%lf%%", &pct) != 1 || !(pct >= 0))
		return 0;
	return pct / 100 > 0 ? pct / 100 : 1e-3;
}

/* Every measurement of the profile, format 2 or 3, into @out (heap,
 * *@n rows). */
static int read_rows(sqlite3 *db, int version, const struct stored_machine *sm, struct profile_peak **out,
		     int *n, char *why, size_t len)
{
	sqlite3_stmt *st = NULL;
	struct profile_peak *rows = NULL;
	size_t cap = 0;
	int rc, err = 0, k = 0;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db, version >= 3 ?
			       "SELECT kind, dtype, scope, kernel, value, best, detail, measured_unix_s, cpus, ncpu, "
			       "threads, cpu_share, loadavg, disturbed, calibration FROM measurement ORDER BY rowid" :
			       "SELECT kind, dtype, scope, kernel, value, best, detail, measured_unix_s "
			       "FROM measurement ORDER BY rowid", -1, &st, NULL) != SQLITE_OK) {
		set_why(why, len, "%s", sqlite3_errmsg(db));
		return -EPROTO;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct profile_peak *p;
		if (array_grow(&rows, &cap, (size_t)k + 1, sizeof(*rows))) {
			err = -ENOMEM;
			set_why(why, len, "out of memory");
			goto out;
		}
		p = &rows[k++];
		memset(p, 0, sizeof(*p));
		copy_str(p->kind, sizeof(p->kind), col_text(st, 0));
		copy_str(p->dtype, sizeof(p->dtype), col_text(st, 1));
		copy_str(p->scope, sizeof(p->scope), col_text(st, 2));
		copy_str(p->kernel, sizeof(p->kernel), col_text(st, 3));
		p->value = sqlite3_column_double(st, 4);
		p->best = sqlite3_column_int(st, 5);
		copy_str(p->detail, sizeof(p->detail), col_text(st, 6));
		p->measured_unix_s = sqlite3_column_int64(st, 7);
		if (version >= 3) {
			copy_str(p->cpus, sizeof(p->cpus), col_text(st, 8));
			p->ncpu = sqlite3_column_double(st, 9);
			p->threads = sqlite3_column_int(st, 10);
			p->cpu_share = col_double_or(st, 11, 0);
			p->loadavg = col_double_or(st, 12, -1);
			p->disturbed = sqlite3_column_int(st, 13) != 0;
			p->calibration = sqlite3_column_int64(st, 14);
		} else {
			/* format 2: one CPU set, the machine row's; disturbed
			 * when its detail says so */
			int cpus = machine_cpulist_count(sm->cpus);
			copy_str(p->cpus, sizeof(p->cpus), sm->cpus);
			p->ncpu = sm->ncpu;
			p->threads = strcmp(p->scope, "all") == 0 ? (cpus > 0 ? cpus : 1) : 1;
			p->cpu_share = share_from_detail(p->detail);
			p->disturbed = p->cpu_share > 0 && p->cpu_share < PROFILE_SHARE_OK;
			p->loadavg = -1;
		}
	}
	if (rc != SQLITE_DONE) {
		set_why(why, len, "%s", sqlite3_errmsg(db));
		err = -EPROTO;
		goto out;
	}
	if (version < 3)
		profile_mark_best(rows, k); /* format 2 marked the fastest, disturbed or not */
out:
	sqlite3_finalize(st);
	if (err) {
		free(rows);
		return err;
	}
	*out = rows;
	*n = k;
	return 0;
}

/* The calibrations of a format 3 profile, oldest first (at most @max). */
static int read_calibrations(sqlite3 *db, struct profile_calibration *cals, int max, int *n)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*n = 0;
	if (sqlite3_prepare_v2(db,
			       "SELECT id, unix_s, cpus, ncpu, loadavg, measurements, disturbed, kept, lowest_share, "
			       "kept_since FROM calibration ORDER BY id DESC LIMIT ?", -1, &st, NULL) != SQLITE_OK)
		return -EPROTO;
	sqlite3_bind_int(st, 1, max);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct profile_calibration *c = &cals[(*n)++];
		memset(c, 0, sizeof(*c));
		c->id = sqlite3_column_int64(st, 0);
		c->unix_s = sqlite3_column_int64(st, 1);
		copy_str(c->cpus, sizeof(c->cpus), col_text(st, 2));
		c->ncpu = sqlite3_column_double(st, 3);
		c->loadavg = col_double_or(st, 4, -1);
		c->measurements = sqlite3_column_int(st, 5);
		c->disturbed = sqlite3_column_int(st, 6);
		c->kept = sqlite3_column_int(st, 7);
		c->lowest_share = col_double_or(st, 8, 0);
		c->kept_since = sqlite3_column_int64(st, 9);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -EPROTO;
	/* oldest first */
	for (int i = 0, j = *n - 1; i < j; i++, j--) {
		struct profile_calibration t = cals[i];
		cals[i] = cals[j];
		cals[j] = t;
	}
	return 0;
}

/* What a profile at @file holds for @m (this host and CPU): its rows and
 * calibrations (heap / @cals), or nothing (*@nrows 0) when there is no
 * profile, one of another machine, or one that cannot be read (@why). */
static int read_profile(const char *file, const struct machine *m, struct profile_peak **rows, int *nrows,
			struct profile_calibration *cals, int maxcal, int *ncal, struct profile_status *stat_out,
			struct stored_machine *sm, char *why, size_t len)
{
	sqlite3 *db = NULL;
	int version, err, match;

	*rows = NULL;
	*nrows = 0;
	*ncal = 0;
	memset(sm, 0, sizeof(*sm));
	err = open_profile(file, &db, &version, why, len);
	if (err || !db)
		return err;
	if (stat_out)
		stat_out->format = version;
	match = identity_matches(db, file, m, sm, why, len);
	if (match <= 0) {
		err = match;
		goto out;
	}
	{
		char msg[512] = "";
		err = read_rows(db, version, sm, rows, nrows, msg, sizeof(msg));
		if (err == -EPROTO)
			set_why(why, len, "%s is a damaged mfu profile (%s): run mfu-calibrate", file, msg);
		else if (err)
			set_why(why, len, "%s: %s", file, msg);
	}
	if (!err && version >= 3 && read_calibrations(db, cals, maxcal, ncal) != 0) {
		free(*rows);
		*rows = NULL;
		*nrows = 0;
		set_why(why, len, "%s is a damaged mfu profile (%s): run mfu-calibrate", file, sqlite3_errmsg(db));
		err = -EPROTO;
	}
out:
	sqlite3_close(db);
	return err;
}

/* ------------------------------------------------------------------ */
/* Save and load                                                       */
/* ------------------------------------------------------------------ */

int profile_save(const char *path, const struct machine *m, const struct profile_peak *peaks,
		 int n, struct profile_calibration *saved, char *why, size_t len)
{
	char file[PROFILE_PATH_MAX], tmp[PROFILE_PATH_MAX + 16], msg[512] = "";
	struct profile_calibration *cals = NULL, cur;
	struct profile_peak *old = NULL, *fresh = NULL, *merged = NULL;
	struct stored_machine sm;
	sqlite3 *db = NULL;
	int fd, err, have_tmp = 0, nold = 0, ncal = 0, nmerged = 0, kept = 0;

	if (saved)
		memset(saved, 0, sizeof(*saved));
	if (!m || (n > 0 && !peaks) || n < 0 || n > PROFILE_MAX_PEAKS) {
		set_why(why, len, "invalid arguments");
		return -EINVAL;
	}
	err = resolve(path, file, sizeof(file), why, len);
	if (err)
		return err;
	cals = calloc(PROFILE_MAX_CALIBRATIONS + 1, sizeof(*cals));
	fresh = calloc((size_t)n + 1, sizeof(*fresh));
	merged = calloc(PROFILE_MAX_PEAKS, sizeof(*merged));
	if (!cals || !fresh || !merged) {
		set_why(why, len, "out of memory");
		err = -ENOMEM;
		goto out;
	}
	/* What the profile holds for this machine: kept where this
	 * calibration has nothing better. A profile that cannot be read (or
	 * is another machine's) is replaced, as before format 3. */
	if (read_profile(file, m, &old, &nold, cals, PROFILE_MAX_CALIBRATIONS, &ncal, NULL, &sm, msg,
			 sizeof(msg)) != 0) {
		free(old);
		old = NULL;
		nold = ncal = 0;
	}
	msg[0] = '\0';

	/* this calibration */
	memset(&cur, 0, sizeof(cur));
	cur.unix_s = (int64_t)time(NULL);
	cur.loadavg = -1;
	for (int k = 0; k < ncal; k++)
		cur.id = cals[k].id > cur.id ? cals[k].id : cur.id;
	cur.id++;
	copy_str(cur.cpus, sizeof(cur.cpus), m->allowed_cpus);
	cur.ncpu = m->ncpu;
	for (int k = 0; k < n; k++) {
		struct profile_peak *p = &fresh[k];
		*p = peaks[k];
		fill_row(p, m);
		p->calibration = cur.id;
		if (strcmp(p->kind, "clock") == 0)
			continue;
		cur.measurements++;
		cur.disturbed += p->disturbed;
		if (p->cpu_share > 0 && (cur.lowest_share == 0 || p->cpu_share < cur.lowest_share))
			cur.lowest_share = p->cpu_share;
		if (p->loadavg > cur.loadavg)
			cur.loadavg = p->loadavg;
	}
	err = profile_merge(old, nold, fresh, n, merged, PROFILE_MAX_PEAKS, &nmerged, &kept);
	if (err) {
		set_why(why, len, "cannot merge the measurements: %s", strerror(-err));
		goto out;
	}
	cur.kept = kept;
	/* since when the earlier figures that stood in for disturbed ones are */
	for (int f = 0; f < n && kept; f++)
		for (int k = 0; fresh[f].disturbed && k < nmerged; k++)
			if (merged[k].calibration != cur.id && same_key(&fresh[f], &merged[k]) &&
			    (cur.kept_since == 0 || merged[k].measured_unix_s < cur.kept_since))
				cur.kept_since = merged[k].measured_unix_s;
	/* the calibrations whose figures are still there, and this one */
	{
		int w = 0;
		for (int k = 0; k < ncal; k++) {
			int used = 0;
			for (int r = 0; r < nmerged && !used; r++)
				used = merged[r].calibration == cals[k].id;
			if (used)
				cals[w++] = cals[k];
		}
		cals[w++] = cur;
		ncal = w;
	}

	err = make_parents(file, why, len);
	if (err)
		goto out;
	if (strbuf(tmp, sizeof(tmp), "%s.XXXXXX", file)) {
		set_why(why, len, "profile path too long");
		err = -ENAMETOOLONG;
		goto out;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		set_why(why, len, "cannot create a temporary file next to %s: %s", file, strerror(-err));
		goto out;
	}
	close(fd);
	have_tmp = 1;

	if (sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		set_why(why, len, "cannot open %s: %s", tmp, db ? sqlite3_errmsg(db) : "out of memory");
		err = -EIO;
		goto out;
	}
	/* No journal: the file is private until the rename, and a failure
	 * throws it away. */
	err = exec_sql(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;", msg, sizeof(msg));
	if (!err)
		err = exec_sql(db, mfu_profile_schema_files[0].text, msg, sizeof(msg));
	if (!err)
		err = write_rows(db, m, merged, nmerged, cals, ncal, msg, sizeof(msg));
	if (!err)
		err = exec_sql(db, "COMMIT", msg, sizeof(msg));
	if (err) {
		set_why(why, len, "cannot write %s: %s", tmp, msg);
		goto out;
	}
	if (sqlite3_close(db) != SQLITE_OK) {
		db = NULL;
		set_why(why, len, "cannot close %s", tmp);
		err = -EIO;
		goto out;
	}
	db = NULL;
	/* Durable before it becomes visible under the real name. */
	fd = open(tmp, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		set_why(why, len, "cannot sync %s: %s", tmp, strerror(-err));
		goto out;
	}
	close(fd);
	if (rename(tmp, file) < 0) {
		err = -errno;
		set_why(why, len, "cannot rename %s to %s: %s", tmp, file, strerror(-err));
		goto out;
	}
	have_tmp = 0;
	err = 0;
	if (saved)
		*saved = cur;
out:
	sqlite3_close(db);
	if (have_tmp)
		unlink(tmp);
	free(old);
	free(fresh);
	free(merged);
	free(cals);
	return err;
}

int profile_read(const char *path, const struct machine *m, struct profile_peak *out, int max,
		 int *n, struct profile_status *st, char *why, size_t len)
{
	char file[PROFILE_PATH_MAX], other[300] = "";
	struct profile_calibration cals[PROFILE_MAX_CALIBRATIONS];
	struct profile_peak *rows = NULL;
	struct stored_machine sm;
	int err, nrows = 0, ncal = 0, nall = 0, nother = 0;

	if (n)
		*n = 0;
	if (st)
		memset(st, 0, sizeof(*st));
	set_why(why, len, "%s", "");
	if (!m || !n || (max > 0 && !out) || max < 0) {
		set_why(why, len, "invalid arguments");
		return -EINVAL;
	}
	err = resolve(path, file, sizeof(file), why, len);
	if (err)
		return err;
	err = read_profile(file, m, &rows, &nrows, cals, PROFILE_MAX_CALIBRATIONS, &ncal, st, &sm, why, len);
	if (err == -ENOENT)
		return 0; /* no profile: @why says so */
	if (err) {
		free(rows);
		return err;
	}
	if (!rows && nrows == 0 && why && why[0])
		return 0; /* another machine's, or format 1 */
	if (st && ncal > 0)
		st->last = cals[ncal - 1];
	else if (st) {
		/* format 2: the machine row's date and CPU set */
		st->last.unix_s = sm.unix_s;
		copy_str(st->last.cpus, sizeof(st->last.cpus), sm.cpus);
		st->last.ncpu = sm.ncpu;
		st->last.loadavg = -1;
		for (int k = 0; k < nrows; k++) {
			if (strcmp(rows[k].kind, "clock") == 0)
				continue;
			st->last.measurements++;
			st->last.disturbed += rows[k].disturbed;
			if (rows[k].cpu_share > 0 &&
			    (st->last.lowest_share == 0 || rows[k].cpu_share < st->last.lowest_share))
				st->last.lowest_share = rows[k].cpu_share;
		}
	}
	for (int k = 0; k < nrows; k++) {
		struct profile_peak *p = &rows[k];
		int all = strcmp(p->scope, "all") == 0;

		p->applies = !all || (strcmp(p->cpus, m->allowed_cpus) == 0 && fabs(p->ncpu - m->ncpu) <= 1e-6);
		if (!p->applies) {
			/* name the other sets the all-CPU figures are for */
			char one[300];
			snprintf(one, sizeof(one), "%s (%g CPUs)", p->cpus, p->ncpu);
			size_t used = strlen(other), add = strlen(one);
			if (!strstr(other, one) && used + add + 3 < sizeof(other)) {
				if (used) {
					memcpy(other + used, ", ", 2);
					used += 2;
				}
				memcpy(other + used, one, add + 1);
			}
			nother++;
			continue;
		}
		nall += all;
		if (*n >= max) {
			set_why(why, len, "%s: the profile has more than %d measurements", file, max);
			err = -ENOSPC;
			break;
		}
		out[(*n)++] = *p;
	}
	if (!err && *n == 0)
		set_why(why, len, "the profile %s has no measurements%s: run mfu-calibrate", file,
			nother ? " for one core" : "");
	else if (!err && nall == 0 && nother)
		set_why(why, len,
			"profile was measured on CPUs %s, these are %s (%g CPUs): its one-core figures apply, "
			"its all-CPU ones do not (taskset -c %s mfu-calibrate measures these)",
			other, m->allowed_cpus, m->ncpu, m->allowed_cpus);
	free(rows);
	return err;
}

int profile_load(const char *path, const struct machine *m, struct profile_peak *out, int max,
		 int *n, char *why, size_t len)
{
	return profile_read(path, m, out, max, n, NULL, why, len);
}
