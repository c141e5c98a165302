#include "intervals.h"
#include "lib_counts.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct source {
	int leader_fd[MRING_MAX_GROUPS];
};

struct intervals {
	sqlite3 *db;
	const struct counters *cs;
	uint64_t period_ns;
	uint64_t last_ns;
	struct source *src;
	size_t nsrc, cap;
	sqlite3_stmt *ins;
	uint64_t count, failed;
	struct lib_counts *lc;  /* library calls read with the groups, NULL: none */
	sqlite3_stmt *lib_ins;
};

int intervals_new(struct intervals **out, sqlite3 *db, const struct counters *cs, uint64_t period_ns)
{
	struct intervals *iv = calloc(1, sizeof(*iv));

	*out = NULL;
	if (!iv)
		return -ENOMEM;
	iv->db = db;
	iv->cs = cs;
	iv->period_ns = period_ns;
	if (sqlite3_prepare_v3(db,
		"INSERT INTO interval_reading (time_ns, counter, raw, time_enabled, time_running) VALUES (?,?,?,?,?)",
		-1, SQLITE_PREPARE_PERSISTENT, &iv->ins, NULL) != SQLITE_OK) {
		free(iv);
		return -EIO;
	}
	*out = iv;
	return 0;
}

void intervals_free(struct intervals *iv)
{
	if (!iv)
		return;
	sqlite3_finalize(iv->ins);
	sqlite3_finalize(iv->lib_ins);
	free(iv->src);
	free(iv);
}

int intervals_add_source(struct intervals *iv, const int *leader_fd)
{
	if (array_grow(&iv->src, &iv->cap, iv->nsrc + 1, sizeof(*iv->src)))
		return -ENOMEM;
	struct source *s = &iv->src[iv->nsrc++];
	for (int g = 0; g < MRING_MAX_GROUPS; g++)
		s->leader_fd[g] = g < iv->cs->ngroups ? leader_fd[g] : -1;
	return 0;
}

int intervals_set_lib(struct intervals *iv, struct lib_counts *lc)
{
	if (sqlite3_prepare_v3(iv->db,
		"INSERT OR REPLACE INTO lib_reading (time_ns, lib_flops, lib_flops_fp64, lib_flops_fp32, "
		"lib_flops_bf16, lib_flops_fp16, lib_ops_int8, lib_calls, lib_calls_unknown, lib_calls_begun) "
		"VALUES (?,?,?,?,?,?,?,?,?,?)",
		-1, SQLITE_PREPARE_PERSISTENT, &iv->lib_ins, NULL) != SQLITE_OK)
		return -EIO;
	iv->lc = lc;
	return 0;
}

uint64_t intervals_count(const struct intervals *iv)
{
	return iv ? iv->count : 0;
}

uint64_t intervals_failed_reads(const struct intervals *iv)
{
	return iv ? iv->failed : 0;
}

/* A count as an SQLite integer: the counting library saturates at
 * UINT64_MAX, which no run reaches; INT64_MAX stands for it. */
static sqlite3_int64 i64(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (sqlite3_int64)v;
}

/* The library calls' totals @sum (lib_counts_sum()) at @time_ns, with
 * @running calls begun and not returned (lib_counts_running()). */
static int store_lib(struct intervals *iv, uint64_t time_ns, const uint64_t *sum, uint64_t running)
{
	uint64_t flops = 0;
	int rc;

	for (int p = 0; p < LIBFLOPS_NPREC; p++)
		flops = flops + sum[LIBFLOPS_W_FLOPS + p] < flops ? UINT64_MAX : flops + sum[LIBFLOPS_W_FLOPS + p];
	sqlite3_bind_int64(iv->lib_ins, 1, (sqlite3_int64)time_ns);
	sqlite3_bind_int64(iv->lib_ins, 2, i64(flops));
	for (int p = 0; p < LIBFLOPS_NPREC; p++)
		sqlite3_bind_int64(iv->lib_ins, 3 + p, i64(sum[LIBFLOPS_W_FLOPS + p]));
	sqlite3_bind_int64(iv->lib_ins, 3 + LIBFLOPS_NPREC, i64(sum[LIBFLOPS_W_CALLS]));
	sqlite3_bind_int64(iv->lib_ins, 4 + LIBFLOPS_NPREC, i64(sum[LIBFLOPS_W_UNKNOWN]));
	sqlite3_bind_int64(iv->lib_ins, 5 + LIBFLOPS_NPREC,
			   i64(sum[LIBFLOPS_W_CALLS] + running < running ? UINT64_MAX : sum[LIBFLOPS_W_CALLS] + running));
	rc = sqlite3_step(iv->lib_ins);
	sqlite3_reset(iv->lib_ins);
	if (rc != SQLITE_DONE)
		return sqlite3_errcode(iv->db) == SQLITE_FULL ? -ENOSPC : -EIO;
	return 0;
}

static int store(struct intervals *iv, uint64_t time_ns, const struct counter_reading *r, const uint64_t *lib,
		 uint64_t running)
{
	const struct counters *cs = iv->cs;

	if (iv->lc) {
		int rc = store_lib(iv, time_ns, lib, running);
		if (rc)
			return rc;
	}

	for (int i = 0; i < cs->n; i++) {
		const struct counter *c = &cs->c[i];
		/* the emulator's counts are read inside the target only */
		if (!c->opened || c->word < 0 || c->emulated)
			continue;
		unsigned o = cs->group_offset[c->group];
		if (r->data[o] != cs->group_nr[c->group])
			continue; /* no source could read this group */
		sqlite3_bind_int64(iv->ins, 1, (sqlite3_int64)time_ns);
		sqlite3_bind_int(iv->ins, 2, i);
		sqlite3_bind_int64(iv->ins, 3, (sqlite3_int64)r->data[c->word]);
		sqlite3_bind_int64(iv->ins, 4, (sqlite3_int64)r->data[o + 1]);
		sqlite3_bind_int64(iv->ins, 5, (sqlite3_int64)r->data[o + 2]);
		int rc = sqlite3_step(iv->ins);
		sqlite3_reset(iv->ins);
		if (rc != SQLITE_DONE)
			return sqlite3_errcode(iv->db) == SQLITE_FULL ? -ENOSPC : -EIO;
	}
	iv->count++;
	return 0;
}

int intervals_store_zero(struct intervals *iv, uint64_t time_ns)
{
	uint64_t lib[LIBFLOPS_WORDS] = { 0 };
	struct counter_reading r;

	memset(&r, 0, sizeof(r));
	r.ngroups = (uint16_t)iv->cs->ngroups;
	for (int g = 0; g < iv->cs->ngroups; g++)
		r.data[iv->cs->group_offset[g]] = iv->cs->group_nr[g];
	iv->last_ns = time_ns;
	return store(iv, time_ns, &r, lib, 0);
}

static void read_all(struct intervals *iv, struct counter_reading *out);

int intervals_sample(struct intervals *iv, int force)
{
	const struct counters *cs = iv->cs;
	struct counter_reading r;
	uint64_t lib[LIBFLOPS_WORDS] = { 0 }, running = 0;
	uint64_t t0 = now_ns(), t1;
	/* the reads take microseconds; longer means the recorder was
	 * preempted among them, and the time would not say when they were
	 * taken: read again (a few times at most) */
	uint64_t slack = 20000 + 5000 * (uint64_t)(iv->nsrc * (size_t)cs->ngroups) + (iv->lc ? 20000 : 0);

	if ((!iv->nsrc && !iv->lc) || (!force && t0 - iv->last_ns < iv->period_ns))
		return 0;
	iv->last_ns = t0;
	for (int attempt = 0;; attempt++) {
		read_all(iv, &r);
		/* the library calls with the groups, at the same time: a
		 * read again only adds what came since (they only grow) */
		if (iv->lc) {
			lib_counts_read(iv->lc);
			lib_counts_sum(iv->lc, lib);
			running = lib_counts_running(iv->lc);
		}
		t1 = now_ns();
		if (t1 - t0 <= slack || attempt == 3)
			break;
		t0 = now_ns();
	}
	/* the midpoint stands for all of them */
	return store(iv, t0 + (t1 - t0) / 2, &r, lib, running);
}

static void read_all(struct intervals *iv, struct counter_reading *out)
{
	const struct counters *cs = iv->cs;
	struct counter_reading r;

	memset(&r, 0, sizeof(r));
	r.ngroups = (uint16_t)cs->ngroups;
	for (size_t s = 0; s < iv->nsrc; s++) {
		for (int g = 0; g < cs->ngroups; g++) {
			int fd = iv->src[s].leader_fd[g];
			if (fd >= 0 && cs->group_nr[g] && counters_read_group(cs, g, fd, &r))
				iv->failed++;
		}
	}
	*out = r;
}

void intervals_interp(const struct counters *cs, const struct counter_reading *lo, uint64_t t_lo,
		      const struct counter_reading *hi, uint64_t t_hi, uint64_t t, struct counter_reading *out)
{
	memset(out, 0, sizeof(*out));
	out->ngroups = lo->ngroups;
	for (int g = 0; g < cs->ngroups; g++) {
		unsigned o = cs->group_offset[g], nr = cs->group_nr[g];
		if (lo->data[o] != nr || hi->data[o] != nr || nr == 0)
			continue;
		out->data[o] = nr;
		for (unsigned k = 1; k < 3 + nr; k++) {
			uint64_t a = lo->data[o + k], b = hi->data[o + k];
			/* counters never decrease; guard against a source that
			 * dropped out between the two readings */
			out->data[o + k] = b >= a && t_hi > t_lo
				? a + (uint64_t)(interp_linear(t_lo, 0, t_hi, (double)(b - a), t) + 0.5) : a;
		}
	}
}

/* ---- attribution ---- */

struct loader {
	sqlite3 *db;
	const struct counters *cs;
	sqlite3_stmt *before, *after, *at;
};

/* The stored reading at exactly @t. */
static int load_at(struct loader *L, uint64_t t, struct counter_reading *r)
{
	const struct counters *cs = L->cs;
	unsigned seen[MRING_MAX_GROUPS] = { 0 };
	int rc;

	memset(r, 0, sizeof(*r));
	r->ngroups = (uint16_t)cs->ngroups;
	sqlite3_bind_int64(L->at, 1, (sqlite3_int64)t);
	while ((rc = sqlite3_step(L->at)) == SQLITE_ROW) {
		int i = sqlite3_column_int(L->at, 0);
		if (i < 0 || i >= cs->n || !cs->c[i].opened || cs->c[i].word < 0)
			continue;
		const struct counter *c = &cs->c[i];
		unsigned o = cs->group_offset[c->group];
		r->data[c->word] = (uint64_t)sqlite3_column_int64(L->at, 1);
		r->data[o + 1] = (uint64_t)sqlite3_column_int64(L->at, 2);
		r->data[o + 2] = (uint64_t)sqlite3_column_int64(L->at, 3);
		seen[c->group]++;
	}
	sqlite3_reset(L->at);
	if (rc != SQLITE_DONE)
		return -EIO;
	for (int g = 0; g < cs->ngroups; g++)
		if (seen[g] == cs->group_nr[g] && seen[g])
			r->data[cs->group_offset[g]] = seen[g];
	return 0;
}

/* The readings around @t: 1 when both exist, 0 when @t is outside them. */
static int bracket(struct loader *L, uint64_t t, uint64_t *t_lo, uint64_t *t_hi)
{
	int ok = 0;

	sqlite3_bind_int64(L->before, 1, (sqlite3_int64)t);
	sqlite3_bind_int64(L->after, 1, (sqlite3_int64)t);
	if (sqlite3_step(L->before) == SQLITE_ROW && sqlite3_column_type(L->before, 0) != SQLITE_NULL &&
	    sqlite3_step(L->after) == SQLITE_ROW && sqlite3_column_type(L->after, 0) != SQLITE_NULL) {
		*t_lo = (uint64_t)sqlite3_column_int64(L->before, 0);
		*t_hi = (uint64_t)sqlite3_column_int64(L->after, 0);
		ok = 1;
	}
	sqlite3_reset(L->before);
	sqlite3_reset(L->after);
	return ok;
}

static double maxd(double a, double b)
{
	return a > b ? a : b;
}

/* Counts of [b, e] and their error bounds; 0, 1 when a boundary is outside
 * the readings, or -errno. */
static int interpolate_row(struct loader *L, uint64_t b, uint64_t e, struct counter_delta *d,
			   struct counter_delta *err)
{
	const struct counters *cs = L->cs;
	struct counter_reading lo_b, hi_b, lo_e, hi_e, est_b, est_e;
	struct counter_delta dmin, dmax;
	uint64_t tb0, tb1, te0, te1;
	int rc;

	if (!bracket(L, b, &tb0, &tb1) || !bracket(L, e, &te0, &te1))
		return 1;
	if ((rc = load_at(L, tb0, &lo_b)) || (rc = load_at(L, tb1, &hi_b)) || (rc = load_at(L, te0, &lo_e)) ||
	    (rc = load_at(L, te1, &hi_e)))
		return rc;
	intervals_interp(cs, &lo_b, tb0, &hi_b, tb1, b, &est_b);
	intervals_interp(cs, &lo_e, te0, &hi_e, te1, e, &est_e);
	counters_delta(cs, &est_b, &est_e, d);
	counters_delta(cs, &lo_b, &hi_e, &dmax);
	/* the least it can be: from the reading after the begin to the one
	 * before the end, or nothing when no reading lies between them */
	if (tb1 <= te0)
		counters_delta(cs, &hi_b, &lo_e, &dmin);
	else
		memset(&dmin, 0, sizeof(dmin));
	memset(err, 0, sizeof(*err));
	for (int c = 0; c < COL_NCOLS; c++)
		err->v[c] = maxd(dmax.v[c] - d->v[c], d->v[c] - dmin.v[c]);
	for (int k = 0; k < cs->n; k++) {
		err->scaled[k] = maxd(dmax.scaled[k] - d->scaled[k], d->scaled[k] - dmin.scaled[k]);
		err->known[k] = d->known[k];
	}
	memcpy(err->has, d->has, sizeof(err->has));
	return 0;
}

static int attribute_table(struct loader *L, struct writer *w, int is_phase)
{
	sqlite3_stmt *rows = NULL;
	int64_t last = -1;
	int rc = 0, n;

	if (sqlite3_prepare_v2(L->db, is_phase
		? "SELECT id, begin_ns, end_ns FROM phase WHERE counts = 'interpolated' AND complete = 1 "
		  "AND id > ? ORDER BY id LIMIT 512"
		: "SELECT step, begin_ns, end_ns FROM step WHERE counts = 'interpolated' AND complete = 1 "
		  "AND step > ? ORDER BY step LIMIT 512", -1, &rows, NULL) != SQLITE_OK)
		return -EIO;
	do {
		struct { int64_t id; uint64_t b, e; } batch[512];
		n = 0;
		sqlite3_bind_int64(rows, 1, last);
		while (n < 512 && (rc = sqlite3_step(rows)) == SQLITE_ROW) {
			batch[n].id = sqlite3_column_int64(rows, 0);
			batch[n].b = (uint64_t)sqlite3_column_int64(rows, 1);
			batch[n].e = (uint64_t)sqlite3_column_int64(rows, 2);
			n++;
		}
		sqlite3_reset(rows);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			rc = -EIO;
			break;
		}
		rc = 0;
		for (int i = 0; i < n && !rc; i++) {
			struct interval_row row = { .id = batch[i].id, .complete = 1, .interpolated = 1 };
			struct counter_delta err;
			last = batch[i].id;
			rc = interpolate_row(L, batch[i].b, batch[i].e, &row.d, &err);
			if (rc == 1) {
				rc = 0;
				continue;
			}
			if (!rc)
				rc = is_phase ? writer_phase_counts(w, &row, &err) : writer_step_counts(w, &row, &err);
		}
	} while (!rc && n == 512);
	sqlite3_finalize(rows);
	return rc;
}

int intervals_attribute(sqlite3 *db, const struct counters *cs, struct writer *w, char *why, size_t whylen)
{
	struct loader L = { .db = db, .cs = cs };
	int rc = -EIO;

	if (sqlite3_prepare_v2(db, "SELECT max(time_ns) FROM interval_reading WHERE time_ns <= ?", -1, &L.before,
			       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT min(time_ns) FROM interval_reading WHERE time_ns >= ?", -1, &L.after,
			       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT counter, raw, time_enabled, time_running FROM interval_reading "
			       "WHERE time_ns = ?", -1, &L.at, NULL) != SQLITE_OK)
		goto out;
	rc = attribute_table(&L, w, 0);
	if (!rc)
		rc = attribute_table(&L, w, 1);
out:
	if (rc)
		strbuf(why, whylen, "cannot interpolate the counts of probe steps: %s",
		       rc == -EIO ? sqlite3_errmsg(db) : writer_error(w));
	sqlite3_finalize(L.before);
	sqlite3_finalize(L.after);
	sqlite3_finalize(L.at);
	return rc;
}
