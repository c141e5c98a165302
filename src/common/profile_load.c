/* Reading a machine profile back for this machine (profile_impl.h). */
#include "profile_impl.h"
#include "util.h"
#include "cpumap.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
			profile_set_why(why, len, "no profile at %s: run mfu-calibrate", file);
			return -ENOENT;
		}
		profile_set_why(why, len, "cannot read the profile %s: %s", file, strerror(-err));
		return err;
	}
	if (!S_ISREG(sb.st_mode)) {
		profile_set_why(why, len, "the profile %s is not a regular file", file);
		return -EPROTO;
	}
	/* SQLite opens lazily and would blame the first query. */
	if (access(file, R_OK) < 0) {
		err = -errno;
		profile_set_why(why, len, "cannot read the profile %s: %s", file, strerror(-err));
		return err;
	}
	if (sqlite3_open_v2(file, db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		profile_set_why(why, len, "cannot open the profile %s: %s", file,
			*db ? sqlite3_errmsg(*db) : "out of memory");
		err = -EPROTO;
		goto fail;
	}
	/* A file of another program (a run database, anything SQLite) has
	 * another application_id; a damaged one fails right here. */
	if (sqlite3_prepare_v2(*db, "PRAGMA application_id", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		profile_set_why(why, len, "%s is not an mfu profile (%s): run mfu-calibrate to replace it", file,
			sqlite3_errmsg(*db));
		err = -EPROTO;
		goto fail;
	}
	app_id = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if (app_id != PROFILE_APPLICATION_ID) {
		profile_set_why(why, len, "%s is not an mfu profile: run mfu-calibrate to replace it", file);
		err = -EPROTO;
		goto fail;
	}
	if (sqlite3_prepare_v2(*db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		profile_set_why(why, len, "%s: %s", file, sqlite3_errmsg(*db));
		err = -EPROTO;
		goto fail;
	}
	*version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if (*version > PROFILE_VERSION) {
		profile_set_why(why, len, "%s has profile format %d, newer than this mfu (%d): upgrade mfu or "
			"run this mfu-calibrate", file, *version, PROFILE_VERSION);
		err = -ENOTSUP;
		goto fail;
	}
	if (*version < 2) {
		/* format 1 had no host: its figures may be another node's */
		profile_set_why(why, len, "%s has the older profile format %d (no host): run mfu-calibrate", file,
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

/* Is the profile of this host and CPU (vendor, family, model, stepping,
 * brand string, ISA features)? 1: yes; 0: no (@why says why); -EPROTO: no
 * readable machine row. */
static int identity_matches(sqlite3 *db, const char *file, const struct machine *m, struct profile_stored_machine *sm,
			    char *why, size_t len)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(db,
			       "SELECT vendor, family, model, stepping, cpu_name, isa, allowed_cpus, ncpu, host, "
			       "CAST(strftime('%s', date) AS INTEGER) FROM machine WHERE id = 1",
			       -1, &st, NULL) != SQLITE_OK) {
		profile_set_why(why, len, "%s is a damaged mfu profile (%s): run mfu-calibrate", file, sqlite3_errmsg(db));
		return -EPROTO;
	}
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		profile_set_why(why, len, "%s is a damaged mfu profile (%s): run mfu-calibrate", file,
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
	profile_host_name(now_host, sizeof(now_host), 0);
	machine_isa_string(m->isa, now_isa, sizeof(now_isa));
	if (strcmp(host, now_host)) {
		profile_set_why(why, len, "profile is for host %s (this is %s): run mfu-calibrate on this host", host,
			now_host);
	} else if (strcmp(vendor, m->vendor) || family != m->family || model != m->model ||
		   stepping != m->stepping || strcmp(name, m->name)) {
		profile_set_why(why, len,
			"profile is for a different CPU (%s, %s family %d model %d stepping %d; this is "
			"%s, %s family %d model %d stepping %d): run mfu-calibrate on this machine",
			name, vendor, family, model, stepping, m->name, m->vendor, m->family, m->model,
			m->stepping);
	} else if (strcmp(isa, now_isa)) {
		/* Same CPU model, other usable ISA: a VM that hides AVX-512 or
		 * AMX, or another kernel; the measured rates do not carry over. */
		profile_set_why(why, len,
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
static int read_rows(sqlite3 *db, int version, const struct profile_stored_machine *sm, struct profile_peak **out,
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
		profile_set_why(why, len, "%s", sqlite3_errmsg(db));
		return -EPROTO;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct profile_peak *p;
		if (array_grow(&rows, &cap, (size_t)k + 1, sizeof(*rows))) {
			err = -ENOMEM;
			profile_set_why(why, len, "out of memory");
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
		profile_set_why(why, len, "%s", sqlite3_errmsg(db));
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
int profile_read_file(const char *file, const struct machine *m, struct profile_peak **rows, int *nrows,
			struct profile_calibration *cals, int maxcal, int *ncal, struct profile_status *stat_out,
			struct profile_stored_machine *sm, char *why, size_t len)
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
			profile_set_why(why, len, "%s is a damaged mfu profile (%s): run mfu-calibrate", file, msg);
		else if (err)
			profile_set_why(why, len, "%s: %s", file, msg);
	}
	if (!err && version >= 3 && read_calibrations(db, cals, maxcal, ncal) != 0) {
		free(*rows);
		*rows = NULL;
		*nrows = 0;
		profile_set_why(why, len, "%s is a damaged mfu profile (%s): run mfu-calibrate", file, sqlite3_errmsg(db));
		err = -EPROTO;
	}
out:
	sqlite3_close(db);
	return err;
}

/* Was the all-CPU row @p measured on a CPU set that holds @m's and more? */
static int on_superset(const struct profile_peak *p, const struct machine *m)
{
	struct cpumap big, small;
	int yes = 0;

	if (strcmp(p->scope, "all") || cpumap_parse(&big, p->cpus))
		return 0;
	if (cpumap_parse(&small, m->allowed_cpus) == 0) {
		yes = small.n > 0 && big.n > small.n;
		for (int i = 0, j = 0; yes && i < small.n; i++) {
			while (j < big.n && big.cpu[j] < small.cpu[i])
				j++;
			yes = j < big.n && big.cpu[j] == small.cpu[i];
		}
		cpumap_fini(&small);
	}
	cpumap_fini(&big);
	return yes;
}

int profile_read(const char *path, const struct machine *m, struct profile_peak *out, int max,
		 int *n, struct profile_status *st, char *why, size_t len)
{
	return profile_read_sets(path, m, out, max, n, st, NULL, 0, NULL, why, len);
}

int profile_read_sets(const char *path, const struct machine *m, struct profile_peak *out, int max,
		      int *n, struct profile_status *st, struct profile_peak *sup, int maxsup, int *nsup,
		      char *why, size_t len)
{
	char file[PROFILE_PATH_MAX], other[300] = "";
	struct profile_calibration cals[PROFILE_MAX_CALIBRATIONS];
	struct profile_peak *rows = NULL;
	struct profile_stored_machine sm;
	int err, nrows = 0, ncal = 0, nall = 0, nother = 0;

	if (n)
		*n = 0;
	if (nsup)
		*nsup = 0;
	if (st)
		memset(st, 0, sizeof(*st));
	profile_set_why(why, len, "%s", "");
	if (!m || !n || (max > 0 && !out) || max < 0 || (sup && (!nsup || maxsup < 0))) {
		profile_set_why(why, len, "invalid arguments");
		return -EINVAL;
	}
	err = profile_resolve(path, file, sizeof(file), why, len);
	if (err)
		return err;
	err = profile_read_file(file, m, &rows, &nrows, cals, PROFILE_MAX_CALIBRATIONS, &ncal, st, &sm, why, len);
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
		if (!p->applies && sup && *nsup < maxsup && on_superset(p, m))
			sup[(*nsup)++] = *p;
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
			profile_set_why(why, len, "%s: the profile has more than %d measurements", file, max);
			err = -ENOSPC;
			break;
		}
		out[(*n)++] = *p;
	}
	if (!err && *n == 0)
		profile_set_why(why, len, "the profile %s has no measurements%s: run mfu-calibrate", file,
			nother ? " for one core" : "");
	else if (!err && nall == 0 && nother)
		profile_set_why(why, len,
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
