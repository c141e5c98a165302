#include "profile.h"
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

static const char profile_schema[] =
	"PRAGMA application_id = 1835431280;\n" /* PROFILE_APPLICATION_ID, 'mfup' */
	"PRAGMA user_version = 2;\n"
	/* One row: the machine and CPU set the measurements belong to. */
	"CREATE TABLE machine (\n"
	"  id           INTEGER PRIMARY KEY CHECK (id = 1),\n"
	"  vendor       TEXT NOT NULL,\n"
	"  family       INTEGER NOT NULL,\n"
	"  model        INTEGER NOT NULL,\n"
	"  stepping     INTEGER NOT NULL,\n"
	"  cpu_name     TEXT NOT NULL,\n"
	"  uarch        TEXT NOT NULL,\n"
	"  isa          TEXT NOT NULL,\n"   /* machine_isa_string() */
	"  allowed_cpus TEXT NOT NULL,\n"   /* e.g. 0-3,8 */
	"  ncpu         REAL NOT NULL,\n"   /* min(affinity, cgroup quota) */
	"  nominal_hz   REAL,\n"
	"  kernel       TEXT,\n"            /* uname -r */
	"  date         TEXT NOT NULL,\n"   /* UTC, ISO 8601 */
	"  mfu_version  TEXT NOT NULL,\n"
	"  host         TEXT NOT NULL\n"   /* the host name: one profile per host */
	");\n"
	"CREATE TABLE measurement (\n"
	"  kind     TEXT NOT NULL,\n"       /* flops | bandwidth */
	"  dtype    TEXT,\n"                /* NULL for bandwidth */
	"  scope    TEXT NOT NULL,\n"       /* core | all */
	"  kernel   TEXT NOT NULL,\n"
	"  value    REAL NOT NULL,\n"       /* FLOP/s or bytes/s */
	"  best     INTEGER NOT NULL,\n"
	"  detail   TEXT,\n"
	"  measured_unix_s INTEGER NOT NULL\n"
	");\n";

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

static int write_rows(sqlite3 *db, const struct machine *m, const struct profile_peak *peaks,
		      int n, char *why, size_t len)
{
	sqlite3_stmt *st = NULL;
	struct utsname u;
	char isa[256], date[32];
	struct tm tm;
	time_t now = time(NULL);
	int err = -EIO, i = 1;

	machine_isa_string(m->isa, isa, sizeof(isa));
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
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
	if (m->nominal_hz > 0)
		sqlite3_bind_double(st, i++, m->nominal_hz);
	else
		sqlite3_bind_null(st, i++);
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
			       "INSERT INTO measurement (kind, dtype, scope, kernel, value, best, detail, "
			       "measured_unix_s) VALUES (?,?,?,?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
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

int profile_save(const char *path, const struct machine *m, const struct profile_peak *peaks,
		 int n, char *why, size_t len)
{
	char file[PROFILE_PATH_MAX], tmp[PROFILE_PATH_MAX + 16], msg[512] = "";
	sqlite3 *db = NULL;
	int fd, err, have_tmp = 0;

	if (!m || (n > 0 && !peaks) || n < 0) {
		set_why(why, len, "invalid arguments");
		return -EINVAL;
	}
	err = resolve(path, file, sizeof(file), why, len);
	if (err)
		return err;
	err = make_parents(file, why, len);
	if (err)
		return err;
	if (strbuf(tmp, sizeof(tmp), "%s.XXXXXX", file)) {
		set_why(why, len, "profile path too long");
		return -ENAMETOOLONG;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		set_why(why, len, "cannot create a temporary file next to %s: %s", file, strerror(-err));
		return err;
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
		err = exec_sql(db, profile_schema, msg, sizeof(msg));
	if (!err)
		err = write_rows(db, m, peaks, n, msg, sizeof(msg));
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
out:
	sqlite3_close(db);
	if (have_tmp)
		unlink(tmp);
	return err;
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? (const char *)s : "";
}

static void copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

/* Does the stored identity (a row of SELECT vendor, family, model, stepping,
 * cpu_name, isa, allowed_cpus, ncpu, host FROM machine) match @m? 0: no
 * (@why says why); 1: yes; 2: this CPU on this host, but measured on
 * another CPU set: its one-core figures and clock apply, not its all-CPU
 * ones. */
static int identity_matches(sqlite3_stmt *st, const struct machine *m, char *why, size_t len)
{
	const char *vendor = col_text(st, 0), *name = col_text(st, 4), *isa = col_text(st, 5);
	const char *cpus = col_text(st, 6), *host = col_text(st, 8);
	int family = sqlite3_column_int(st, 1), model = sqlite3_column_int(st, 2);
	int stepping = sqlite3_column_int(st, 3);
	double ncpu = sqlite3_column_double(st, 7);
	char now_isa[256], now_host[256];

	host_name(now_host, sizeof(now_host), 0);
	if (strcmp(host, now_host)) {
		set_why(why, len, "profile is for host %s (this is %s): run mfu-calibrate on this host", host,
			now_host);
		return 0;
	}
	if (strcmp(vendor, m->vendor) || family != m->family || model != m->model ||
	    stepping != m->stepping || strcmp(name, m->name)) {
		set_why(why, len,
			"profile is for a different CPU (%s, %s family %d model %d stepping %d; this is "
			"%s, %s family %d model %d stepping %d): run mfu-calibrate on this machine",
			name, vendor, family, model, stepping, m->name, m->vendor, m->family, m->model,
			m->stepping);
		return 0;
	}
	machine_isa_string(m->isa, now_isa, sizeof(now_isa));
	if (strcmp(isa, now_isa)) {
		/* Same CPU model, other usable ISA: a VM that hides AVX-512 or
		 * AMX, or another kernel; the measured rates do not carry over. */
		set_why(why, len,
			"profile was measured with other ISA features (%s; now %s): run mfu-calibrate again",
			isa, now_isa);
		return 0;
	}
	if (strcmp(cpus, m->allowed_cpus) || fabs(ncpu - m->ncpu) > 1e-6) {
		set_why(why, len,
			"profile was measured on CPUs %s (%g CPUs), these are %s (%g CPUs): its one-core "
			"figures apply, its all-CPU ones do not",
			cpus, ncpu, m->allowed_cpus, m->ncpu);
		return 2;
	}
	return 1;
}

/* @core_only: leave out the rows of scope "all" (another CPU set's). */
static int read_peaks(sqlite3 *db, int core_only, struct profile_peak *out, int max, int *n, char *why,
		      size_t len)
{
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	if (sqlite3_prepare_v2(db,
			       "SELECT kind, dtype, scope, kernel, value, best, detail, measured_unix_s "
			       "FROM measurement ORDER BY rowid", -1, &st, NULL) != SQLITE_OK) {
		set_why(why, len, "%s", sqlite3_errmsg(db));
		return -EPROTO;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct profile_peak *p;
		if (core_only && strcmp(col_text(st, 2), "all") == 0)
			continue;
		if (*n >= max) {
			set_why(why, len, "the profile has more than %d measurements", max);
			err = -ENOSPC;
			goto out;
		}
		p = &out[(*n)++];
		memset(p, 0, sizeof(*p));
		copy_str(p->kind, sizeof(p->kind), col_text(st, 0));
		copy_str(p->dtype, sizeof(p->dtype), col_text(st, 1));
		copy_str(p->scope, sizeof(p->scope), col_text(st, 2));
		copy_str(p->kernel, sizeof(p->kernel), col_text(st, 3));
		p->value = sqlite3_column_double(st, 4);
		p->best = sqlite3_column_int(st, 5);
		copy_str(p->detail, sizeof(p->detail), col_text(st, 6));
		p->measured_unix_s = sqlite3_column_int64(st, 7);
	}
	if (rc != SQLITE_DONE) {
		set_why(why, len, "%s", sqlite3_errmsg(db));
		err = -EPROTO;
	}
out:
	sqlite3_finalize(st);
	return err;
}

int profile_load(const char *path, const struct machine *m, struct profile_peak *out, int max,
		 int *n, char *why, size_t len)
{
	char file[PROFILE_PATH_MAX], msg[512] = "";
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	struct stat sb;
	int err, rc, app_id, version;

	if (n)
		*n = 0;
	set_why(why, len, "%s", "");
	if (!m || !n || (max > 0 && !out) || max < 0) {
		set_why(why, len, "invalid arguments");
		return -EINVAL;
	}
	err = resolve(path, file, sizeof(file), why, len);
	if (err)
		return err;
	if (stat(file, &sb) < 0) {
		err = -errno;
		if (err == -ENOENT) {
			set_why(why, len, "no profile at %s: run mfu-calibrate", file);
			return 0;
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
	if (sqlite3_open_v2(file, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		set_why(why, len, "cannot open the profile %s: %s", file,
			db ? sqlite3_errmsg(db) : "out of memory");
		err = -EPROTO;
		goto out;
	}

	/* A file of another program (a run database, anything SQLite) has
	 * another application_id; a damaged one fails right here. */
	if (sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		set_why(why, len, "%s is not an mfu profile (%s): run mfu-calibrate to replace it", file,
			sqlite3_errmsg(db));
		err = -EPROTO;
		goto out;
	}
	app_id = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if (app_id != PROFILE_APPLICATION_ID) {
		set_why(why, len, "%s is not an mfu profile: run mfu-calibrate to replace it", file);
		err = -EPROTO;
		goto out;
	}
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		set_why(why, len, "%s: %s", file, sqlite3_errmsg(db));
		err = -EPROTO;
		goto out;
	}
	version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if (version > PROFILE_VERSION) {
		set_why(why, len, "%s has profile format %d, newer than this mfu (%d): upgrade mfu or "
			"run this mfu-calibrate", file, version, PROFILE_VERSION);
		err = -ENOTSUP;
		goto out;
	}
	if (version < PROFILE_VERSION) {
		/* format 1 had no host: its figures may be another node's */
		set_why(why, len, "%s has the older profile format %d (no host): run mfu-calibrate", file,
			version);
		err = 0;
		goto out;
	}

	if (sqlite3_prepare_v2(db,
			       "SELECT vendor, family, model, stepping, cpu_name, isa, allowed_cpus, ncpu, host "
			       "FROM machine WHERE id = 1", -1, &st, NULL) != SQLITE_OK) {
		set_why(why, len, "%s is a damaged mfu profile (%s): run mfu-calibrate", file,
			sqlite3_errmsg(db));
		err = -EPROTO;
		goto out;
	}
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		set_why(why, len, "%s is a damaged mfu profile (%s): run mfu-calibrate", file,
			rc == SQLITE_DONE ? "no machine row" : sqlite3_errmsg(db));
		err = -EPROTO;
		goto out;
	}
	int match = identity_matches(st, m, why, len);
	if (!match) {
		err = 0;
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;

	err = read_peaks(db, match == 2, out, max, n, msg, sizeof(msg));
	if (err == -EPROTO) {
		*n = 0;
		set_why(why, len, "%s is a damaged mfu profile (%s): run mfu-calibrate", file, msg);
	} else if (err) {
		set_why(why, len, "%s: %s", file, msg);
	} else if (*n == 0) {
		set_why(why, len, "the profile %s has no measurements%s: run mfu-calibrate", file,
			match == 2 ? " for one core" : "");
	}
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return err;
}
