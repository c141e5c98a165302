/* Writing a machine profile (profile_impl.h). */
#include "profile_impl.h"
#include "embedded.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

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
			profile_set_why(why, len, "cannot create directory %s: %s", dir, strerror(-err));
			return err;
		}
		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
			profile_set_why(why, len, "%s is not a directory", dir);
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
		profile_set_why(why, len, "%s", msg ? msg : sqlite3_errmsg(db));
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

static void utc_date(int64_t unix_s, char *buf, size_t len)
{
	time_t t = (time_t)unix_s;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
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

/* The machine row: this CPU, this host, this kernel (@release), now. */
static int write_machine(sqlite3 *db, const struct machine *m, const char *release)
{
	sqlite3_stmt *st = NULL;
	char isa[256], date[32], host[256];
	time_t now = time(NULL);
	int err = -EIO, i = 1;

	machine_isa_string(m->isa, isa, sizeof(isa));
	utc_date((int64_t)now, date, sizeof(date));
	profile_host_name(host, sizeof(host), 0);
	if (sqlite3_prepare_v2(db,
			       "INSERT INTO machine (id, vendor, family, model, stepping, cpu_name, uarch, "
			       "isa, allowed_cpus, ncpu, nominal_hz, kernel, date, mfu_version, host) "
			       "VALUES (1,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
		goto out;
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
	bind_text(st, i++, release);
	sqlite3_bind_text(st, i++, date, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, i++, MFU_VERSION, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, i++, host, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_DONE)
		err = 0;
out:
	sqlite3_finalize(st);
	return err;
}

static int write_calibrations(sqlite3 *db, const struct profile_calibration *cals, int ncal,
			      const char *release)
{
	sqlite3_stmt *st = NULL;
	int err = -EIO, i;

	if (sqlite3_prepare_v2(db,
			       "INSERT INTO calibration (id, unix_s, date, cpus, ncpu, loadavg, measurements, "
			       "disturbed, kept, lowest_share, kept_since, mfu_version, kernel) "
			       "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
		goto out;
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
		bind_text(st, i++, release);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto out;
	}
	err = 0;
out:
	sqlite3_finalize(st);
	return err;
}

/* -EIO for SQLite's error (the caller says it), -EINVAL with @why for a
 * row the caller left incomplete. */
static int write_measurements(sqlite3 *db, const struct profile_peak *peaks, int n, char *why,
			      size_t len)
{
	sqlite3_stmt *st = NULL;
	int err = -EIO, i;

	if (sqlite3_prepare_v2(db,
			       "INSERT INTO measurement (kind, dtype, scope, kernel, value, best, detail, "
			       "measured_unix_s, cpus, ncpu, threads, cpu_share, loadavg, disturbed, calibration) "
			       "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
		goto out;
	for (int k = 0; k < n; k++) {
		const struct profile_peak *p = &peaks[k];
		if (!p->kind[0] || !p->scope[0] || !p->kernel[0] || !(p->value > 0) || !isfinite(p->value)) {
			profile_set_why(why, len, "measurement %d (%s %s %s) is incomplete", k, p->kind, p->scope,
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
			goto out;
	}
	err = 0;
out:
	sqlite3_finalize(st);
	return err;
}

static int write_rows(sqlite3 *db, const struct machine *m, const struct profile_peak *peaks,
		      int n, const struct profile_calibration *cals, int ncal, char *why, size_t len)
{
	struct utsname u;
	int err;

	if (uname(&u) < 0)
		u.release[0] = '\0';
	err = write_machine(db, m, u.release);
	if (!err)
		err = write_calibrations(db, cals, ncal, u.release);
	if (!err)
		err = write_measurements(db, peaks, n, why, len);
	if (err == -EIO)
		profile_set_why(why, len, "%s", sqlite3_errmsg(db));
	return err;
}

/* ------------------------------------------------------------------ */
/* Save and load                                                       */
/* ------------------------------------------------------------------ */
/* Save                                                                */
/* ------------------------------------------------------------------ */

/* This calibration (@cur, the id after the last of @cals) and its rows in
 * @fresh: the caller's @peaks with what they left out filled. */
static void this_calibration(const struct machine *m, const struct profile_peak *peaks, int n,
			     const struct profile_calibration *cals, int ncal,
			     struct profile_peak *fresh, struct profile_calibration *cur)
{
	memset(cur, 0, sizeof(*cur));
	cur->unix_s = (int64_t)time(NULL);
	cur->loadavg = -1;
	for (int k = 0; k < ncal; k++)
		cur->id = cals[k].id > cur->id ? cals[k].id : cur->id;
	cur->id++;
	copy_str(cur->cpus, sizeof(cur->cpus), m->allowed_cpus);
	cur->ncpu = m->ncpu;
	for (int k = 0; k < n; k++) {
		struct profile_peak *p = &fresh[k];
		*p = peaks[k];
		fill_row(p, m);
		p->calibration = cur->id;
		if (strcmp(p->kind, "clock") == 0)
			continue;
		cur->measurements++;
		cur->disturbed += p->disturbed;
		if (p->cpu_share > 0 && (cur->lowest_share == 0 || p->cpu_share < cur->lowest_share))
			cur->lowest_share = p->cpu_share;
		if (p->loadavg > cur->loadavg)
			cur->loadavg = p->loadavg;
	}
}

/* Since when the earlier figures that stood in for disturbed ones are
 * (0: none stood in). */
static int64_t kept_since(const struct profile_peak *fresh, int n, const struct profile_peak *merged,
			  int nmerged, int64_t cur_id)
{
	int64_t since = 0;

	for (int f = 0; f < n; f++)
		for (int k = 0; fresh[f].disturbed && k < nmerged; k++)
			if (merged[k].calibration != cur_id && profile_same_key(&fresh[f], &merged[k]) &&
			    (since == 0 || merged[k].measured_unix_s < since))
				since = merged[k].measured_unix_s;
	return since;
}

/* The calibrations whose figures are still there, and @cur: their number
 * in @cals. */
static int keep_calibrations(struct profile_calibration *cals, int ncal,
			     const struct profile_peak *merged, int nmerged,
			     const struct profile_calibration *cur)
{
	int w = 0;

	for (int k = 0; k < ncal; k++) {
		int used = 0;
		for (int r = 0; r < nmerged && !used; r++)
			used = merged[r].calibration == cals[k].id;
		if (used)
			cals[w++] = cals[k];
	}
	cals[w++] = *cur;
	return w;
}

/* A new profile at @tmp (an empty file): the schema and the rows, then
 * closed and synced. */
static int write_tmp(const char *tmp, const struct machine *m, const struct profile_peak *rows, int nrows,
		     const struct profile_calibration *cals, int ncal, char *why, size_t len)
{
	char msg[512] = "";
	sqlite3 *db = NULL;
	int fd, err;

	if (sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		profile_set_why(why, len, "cannot open %s: %s", tmp, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return -EIO;
	}
	/* No journal: the file is private until the rename, and a failure
	 * throws it away. */
	err = exec_sql(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;", msg, sizeof(msg));
	if (!err)
		err = exec_sql(db, mfu_profile_schema_files[0].text, msg, sizeof(msg));
	if (!err)
		err = write_rows(db, m, rows, nrows, cals, ncal, msg, sizeof(msg));
	if (!err)
		err = exec_sql(db, "COMMIT", msg, sizeof(msg));
	if (err) {
		profile_set_why(why, len, "cannot write %s: %s", tmp, msg);
		sqlite3_close(db);
		return err;
	}
	if (sqlite3_close(db) != SQLITE_OK) {
		profile_set_why(why, len, "cannot close %s", tmp);
		return -EIO;
	}
	/* Durable before it becomes visible under the real name. */
	fd = open(tmp, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		profile_set_why(why, len, "cannot sync %s: %s", tmp, strerror(-err));
		return err;
	}
	close(fd);
	return 0;
}

/* The profile at @file replaced by one with these rows: written beside it,
 * then renamed over it. */
static int write_file(const char *file, const struct machine *m, const struct profile_peak *rows,
		      int nrows, const struct profile_calibration *cals, int ncal, char *why, size_t len)
{
	char tmp[PROFILE_PATH_MAX + 16];
	int fd, err;

	err = make_parents(file, why, len);
	if (err)
		return err;
	if (strbuf(tmp, sizeof(tmp), "%s.XXXXXX", file)) {
		profile_set_why(why, len, "profile path too long");
		return -ENAMETOOLONG;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		profile_set_why(why, len, "cannot create a temporary file next to %s: %s", file, strerror(-err));
		return err;
	}
	close(fd);
	err = write_tmp(tmp, m, rows, nrows, cals, ncal, why, len);
	if (!err && rename(tmp, file) < 0) {
		err = -errno;
		profile_set_why(why, len, "cannot rename %s to %s: %s", tmp, file, strerror(-err));
	}
	if (err)
		unlink(tmp);
	return err;
}

int profile_save(const char *path, const struct machine *m, const struct profile_peak *peaks,
		 int n, struct profile_calibration *saved, char *why, size_t len)
{
	char file[PROFILE_PATH_MAX], msg[512] = "";
	struct profile_calibration *cals = NULL, cur;
	struct profile_peak *old = NULL, *fresh = NULL, *merged = NULL;
	struct profile_stored_machine sm;
	int err, nold = 0, ncal = 0, nmerged = 0, kept = 0;

	if (saved)
		memset(saved, 0, sizeof(*saved));
	if (!m || (n > 0 && !peaks) || n < 0 || n > PROFILE_MAX_PEAKS) {
		profile_set_why(why, len, "invalid arguments");
		return -EINVAL;
	}
	err = profile_resolve(path, file, sizeof(file), why, len);
	if (err)
		return err;
	cals = calloc(PROFILE_MAX_CALIBRATIONS + 1, sizeof(*cals));
	fresh = calloc((size_t)n + 1, sizeof(*fresh));
	merged = calloc(PROFILE_MAX_PEAKS, sizeof(*merged));
	if (!cals || !fresh || !merged) {
		profile_set_why(why, len, "out of memory");
		err = -ENOMEM;
		goto out;
	}
	/* What the profile holds for this machine: kept where this
	 * calibration has nothing better. A profile that cannot be read (or
	 * is another machine's) is replaced, as before format 3. */
	if (profile_read_file(file, m, &old, &nold, cals, PROFILE_MAX_CALIBRATIONS, &ncal, NULL, &sm, msg,
			      sizeof(msg)) != 0) {
		free(old);
		old = NULL;
		nold = ncal = 0;
	}
	this_calibration(m, peaks, n, cals, ncal, fresh, &cur);
	err = profile_merge(old, nold, fresh, n, merged, PROFILE_MAX_PEAKS, &nmerged, &kept);
	if (err) {
		profile_set_why(why, len, "cannot merge the measurements: %s", strerror(-err));
		goto out;
	}
	cur.kept = kept;
	if (kept)
		cur.kept_since = kept_since(fresh, n, merged, nmerged, cur.id);
	ncal = keep_calibrations(cals, ncal, merged, nmerged, &cur);
	err = write_file(file, m, merged, nmerged, cals, ncal, why, len);
	if (!err && saved)
		*saved = cur;
out:
	free(old);
	free(fresh);
	free(merged);
	free(cals);
	return err;
}
