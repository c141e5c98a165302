/* mfu-report --diff: reading the two runs (analyses/diff.sql), the
 * comparison of each quantity and the table of it (diff.h). */
#include "diff_impl.h"
#include "analysis.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEVEL 0.95

int diff_new(struct diff **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void diff_free(struct diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nq; i++) {
		free(d->q[i].kind);
		free(d->q[i].name);
		free(d->q[i].pt[0]);
		free(d->q[i].pt[1]);
		free(d->q[i].v[0]);
		free(d->q[i].v[1]);
	}
	for (size_t i = 0; i < d->ngate; i++) {
		free(d->gate[i].kind);
		free(d->gate[i].name);
		free(d->gate[i].label);
	}
	for (int side = 0; side < 2; side++) {
		free(d->steps[side]);
		free(d->wall[side]);
		for (int i = 0; i < 6; i++)
			free(d->who[side][i]);
	}
	free(d->gate);
	free(d->q);
	free(d->summary);
	free(d->warning);
	sqlite3_close(d->mem);
	free(d);
}

static int kind_rank(const char *kind)
{
	return strcmp(kind, "step") == 0			  ? KIND_STEP
	       : strcmp(kind, "phase") == 0			  ? KIND_PHASE
	       : strcmp(kind, "breakdown") == 0		  ? KIND_BREAKDOWN
	       : strcmp(kind, "switches") == 0 || strncmp(kind, "preempted_", 10) == 0 ? KIND_HIDDEN
									  : KIND_OTHER;
}

/* The quantity (@kind, @name) if there is one. */
struct quantity *diff_quantity_find(struct diff *d, const char *kind, const char *name, size_t nlen)
{
	for (size_t k = 0; k < d->nq; k++) {
		size_t i = (d->last + k) % d->nq;
		struct quantity *q = &d->q[i];

		if (strcmp(q->kind, kind) == 0 && strlen(q->name) == nlen && memcmp(q->name, name, nlen) == 0) {
			d->last = i;
			return q;
		}
	}
	return NULL;
}

/* The quantity (@kind, @name), added when new; NULL when out of memory. */
static struct quantity *quantity(struct diff *d, const char *kind, const char *name, size_t nlen)
{
	struct quantity *q = diff_quantity_find(d, kind, name, nlen);

	if (q)
		return q;
	if (array_grow(&d->q, &d->cap, d->nq + 1, sizeof(*d->q)))
		return NULL;
	q = &d->q[d->nq];
	memset(q, 0, sizeof(*q));
	q->kind = strdup(kind);
	q->name = malloc(nlen + 1);
	if (!q->kind || !q->name) {
		free(q->kind);
		free(q->name);
		return NULL;
	}
	memcpy(q->name, name, nlen);
	q->name[nlen] = '\0';
	q->rank = kind_rank(kind);
	d->last = d->nq++;
	return q;
}

/* The run's facts the warning compares, as text: command, host, CPU,
 * peaks (the run view: an emulated run has none). */
static void read_who(struct diff *d, int side, sqlite3 *db)
{
	sqlite3_stmt *st = NULL;

	d->emulated[side] = 0;
	if (sqlite3_prepare_v2(db, "SELECT command, host, cpu_name, peak_flops, peak_bw, emulated IS NOT NULL, cwd "
			       "FROM run WHERE id = 1", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		const char *cwd = (const char *)sqlite3_column_text(st, 6);

		d->who[side][5] = cwd ? strdup(cwd) : NULL;
		for (int i = 0; i < 5; i++) {
			const char *t = (const char *)sqlite3_column_text(st, i);

			if (i >= 3 && sqlite3_column_type(st, i) != SQLITE_NULL) {
				char num[64];

				/* 3 digits: a calibration's own jitter is not "other peaks" */
				snprintf(num, sizeof(num), "%.3g", sqlite3_column_double(st, i));
				d->who[side][i] = strdup(num);
			} else {
				d->who[side][i] = t ? strdup(t) : NULL;
			}
		}
		d->emulated[side] = sqlite3_column_int(st, 5);
	}
	sqlite3_finalize(st);
	st = NULL;
	for (int i = 0; i < 4; i++)
		d->whole[side][i] = NAN;
	/* the stored view of the whole run: NULL rates for an emulated run */
	if (sqlite3_prepare_v2(db, "SELECT wall_ns / 1e6, cpu_ns / 1e6, lib_flops, mfu FROM run_flops", -1, &st,
			       NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		for (int i = 0; i < 4; i++)
			if (sqlite3_column_type(st, i) != SQLITE_NULL)
				d->whole[side][i] = sqlite3_column_double(st, i);
	sqlite3_finalize(st);
}

static int point_cmp(const void *pa, const void *pb)
{
	const struct point *a = pa, *b = pb;

	return a->step < b->step ? -1 : a->step > b->step;
}

static int step_cmp(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return a < b ? -1 : a > b;
}

/* The index of @step in run @side's complete steps (indexed), or -1. */
static long step_index(const struct diff *d, int side, int64_t step)
{
	const int64_t *p;

	if (!d->nsteps[side])
		return -1;
	if (!d->steps[side])
		return step >= d->step0[side] && (uint64_t)step - (uint64_t)d->step0[side] < d->nsteps[side]
		       ? (long)(step - d->step0[side]) : -1;
	p = bsearch(&step, d->steps[side], d->nsteps[side], sizeof(step), step_cmp);
	return p ? (long)(p - d->steps[side]) : -1;
}

/* The step rows are read (diff.sql gives them first): sort the steps
 * with their times (in step order already from a recording's table),
 * give the times to the step time's quantity, one double per step, and
 * keep only the first step when they follow each other (as they do but
 * for a hostile database). 0 or -ENOMEM. */
static int index_steps(struct diff *d, int side)
{
	struct quantity *wall = diff_quantity_find(d, "step", "wall_ms", 7);
	size_t n = d->nsteps[side], sorted = 1;

	d->indexed[side] = 1;
	for (size_t i = 1; i < n && sorted; i++)
		sorted = d->steps[side][i - 1] <= d->steps[side][i];
	if (!sorted) {
		struct point *p = malloc(n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			p[i] = (struct point){ d->steps[side][i], d->wall[side][i] };
		qsort(p, n, sizeof(*p), point_cmp);
		for (size_t i = 0; i < n; i++) {
			d->steps[side][i] = p[i].step;
			d->wall[side][i] = p[i].v;
		}
		free(p);
	}
	if (wall) {
		wall->v[side] = d->wall[side];
		d->wall[side] = NULL;
	}
	if (n && d->steps[side][n - 1] - d->steps[side][0] == (int64_t)(n - 1)) {
		size_t i = 1;

		while (i < n && d->steps[side][i] == d->steps[side][i - 1] + 1)
			i++;
		if (i == n) {
			d->step0[side] = d->steps[side][0];
			free(d->steps[side]);
			d->steps[side] = NULL;
		}
	}
	return 0;
}

/* The @i-th complete step of run @side (indexed). */
static int64_t step_at(const struct diff *d, int side, size_t i)
{
	return d->steps[side] ? d->steps[side][i] : d->step0[side] + (int64_t)i;
}

/* @q's points of @side as one value per step (those of no complete step
 * dropped: diff.sql gives none). 0 or -ENOMEM. */
static int densify(struct diff *d, struct quantity *q, int side)
{
	size_t n = d->nsteps[side];
	double *v = malloc(n * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = NAN;
	for (size_t i = 0; i < q->npt[side]; i++) {
		long k = step_index(d, side, q->pt[side][i].step);

		if (k >= 0)
			v[k] = q->pt[side][i].v;
	}
	free(q->pt[side]);
	q->pt[side] = NULL;
	q->npt[side] = q->cappt[side] = 0;
	q->v[side] = v;
	return 0;
}

/* Keep @v, @q's value in @step of run @side. 0 or -ENOMEM. */
static int value_add(struct diff *d, struct quantity *q, int side, int64_t step, double v)
{
	if (q->v[side]) {
		long k = step_index(d, side, step);

		if (k >= 0)
			q->v[side][k] = v;
		return 0;
	}
	if (array_grow(&q->pt[side], &q->cappt[side], q->npt[side] + 1, sizeof(*q->pt[side])))
		return -ENOMEM;
	q->pt[side][q->npt[side]++] = (struct point){ step, v };
	/* from half the steps on, a double per step is the smaller */
	if (d->indexed[side] && d->nsteps[side] && 2 * q->npt[side] > d->nsteps[side])
		return densify(d, q, side);
	return 0;
}

/* One row of diff.sql (kind, name, ord, step, value) of run @side. 0,
 * -ENOMEM, or -EIO with why in @err. */
static int read_row(struct diff *d, int side, sqlite3_stmt *st, char *err, size_t errlen)
{
	const char *kind = (const char *)sqlite3_column_text(st, 0);
	const char *name = (const char *)sqlite3_column_text(st, 1);
	int64_t step = sqlite3_column_int64(st, 3);
	int null = sqlite3_column_type(st, 4) == SQLITE_NULL;
	double v = null ? NAN : sqlite3_column_double(st, 4);
	struct quantity *q;

	if (!kind || !name)
		return 0;
	q = quantity(d, kind, name, (size_t)sqlite3_column_bytes(st, 1));
	if (!q)
		return -ENOMEM;
	if (!q->seen[side] || sqlite3_column_int64(st, 2) < q->ord[side])
		q->ord[side] = sqlite3_column_int64(st, 2);
	q->seen[side] = 1;
	if (is_wall(q)) {
		if (d->indexed[side]) {
			strbuf(err, errlen, "analyses/diff.sql: a step time after the other rows");
			return -EIO;
		}
		if (array_grow(&d->steps[side], &d->capsteps[side], d->nsteps[side] + 1, sizeof(int64_t)) ||
		    array_grow(&d->wall[side], &d->capwall[side], d->nsteps[side] + 1, sizeof(double)))
			return -ENOMEM;
		d->wall[side][d->nsteps[side]] = v;
		d->steps[side][d->nsteps[side]++] = step;
	} else if (!d->indexed[side] && index_steps(d, side)) {
		return -ENOMEM;
	}
	if (null)
		return 0;
	diff_stats_add(&q->s[side], v);
	return is_wall(q) ? 0 : value_add(d, q, side, step, v);
}

int diff_read(struct diff *d, int side, sqlite3 *db, char *err, size_t errlen)
{
	char *sql = analysis_expand("diff.sql");
	sqlite3_stmt *st = NULL;
	int rc;

	read_who(d, side, db);
	if (!sql) {
		strbuf(err, errlen, "analyses/diff.sql is missing from this build or out of memory");
		return -ENOMEM;
	}
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(db));
		free(sql);
		return -EIO;
	}
	free(sql);
	/* one pass: each value kept once, as a double */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int r = read_row(d, side, st, err, errlen);

		if (r) {
			sqlite3_finalize(st);
			return r;
		}
	}
	if (rc != SQLITE_DONE) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return -EIO;
	}
	sqlite3_finalize(st);
	return d->indexed[side] ? 0 : index_steps(d, side);
}

/* @q's value in the @i-th complete step of run @side, @step (its points
 * sorted), else @dflt. */
static double at(const struct diff *d, const struct quantity *q, int side, long i, int64_t step, double dflt)
{
	const struct point key = { step, 0 }, *p;

	if (!q)
		return dflt;
	if (q->v[side]) {
		if (i < 0)
			i = step_index(d, side, step);
		return i >= 0 && !isnan(q->v[side][i]) ? q->v[side][i] : dflt;
	}
	if (!q->npt[side])
		return dflt;
	p = bsearch(&key, q->pt[side], q->npt[side], sizeof(key), point_cmp);
	return p ? p->v : dflt;
}

/* The series of @q in @side, in step order, reduced to its moments and
 * batch means: a phase's with 0 in the steps it did not run in (diff.sql
 * lists only those where it ran); the step time and a phase's time net of
 * their preemption, and MFU over that net time, when both runs recorded
 * context switches (d->net). 0 or -ENOMEM. */
static int batch(struct diff *d, struct quantity *q, int side)
{
	/* a phase's series has every step; another's, its values */
	int every = q->rank == KIND_PHASE, dense = every || q->v[side];
	size_t m = dense ? d->nsteps[side] : q->npt[side], n = 0;
	const struct quantity *pre = NULL, *wall = NULL;
	double *x = malloc((m ? m : 1) * sizeof(*x)), pre_sum = 0;

	if (!x)
		return -ENOMEM;
	if (d->net && (is_wall(q) || is_mfu(q)))
		pre = diff_quantity_find(d, "preempted_step", "wall_ms", 7);
	else if (d->net && q->rank == KIND_PHASE)
		pre = diff_quantity_find(d, "preempted_phase", q->name, strlen(q->name));
	if (d->net && is_mfu(q))
		wall = diff_quantity_find(d, "step", "wall_ms", 7);
	memset(&q->s[side], 0, sizeof(q->s[side]));
	for (size_t j = 0; j < m; j++) {
		int64_t step = dense ? step_at(d, side, j) : q->pt[side][j].step;
		long i = dense ? (long)j : -1;
		double v = dense ? at(d, q, side, i, step, every ? 0 : NAN) : q->pt[side][j].v, p;

		if (isnan(v))
			continue; /* no value in this step */
		p = at(d, pre, side, i, step, 0);

		if (is_mfu(q)) {
			double w = at(d, wall, side, i, step, NAN);

			/* the same FLOPs over the time net of preemption */
			if (p > 0 && w > p)
				v *= w / (w - p);
		} else if (pre) {
			v -= p;
		}
		pre_sum += p;
		x[n++] = v;
		diff_stats_add(&q->s[side], v);
	}
	/* 0 for a time never preempted; NAN where nothing was taken out */
	q->pre[side] = d->net && (is_wall(q) || is_mfu(q) || q->rank == KIND_PHASE) && n ? pre_sum / (double)n : NAN;
	diff_batch_means(x, n, &q->b[side]);
	free(x);
	return 0;
}

/* Mean, interval and verdict of @q; @wall_base is the base run's mean
 * step time (ms; NAN unknown). */
static int compare(struct diff *d, struct quantity *q, double wall_base)
{
	struct diff_interval ci;
	double base, excl;

	for (int side = 0; side < 2; side++)
		if (batch(d, q, side))
			return -ENOMEM;
	base = q->s[0].mean;
	q->change = q->lo = q->hi = q->delta = q->dlo = q->dhi = q->share = NAN;
	q->significant = 0;
	/* the least change named: DIFF_MIN_EFFECT of the step time for a time,
	 * of the base value for MFU and counts */
	q->min_effect = is_time(q) ? DIFF_MIN_EFFECT * wall_base : DIFF_MIN_EFFECT * fabs(base);
	if (q->s[0].n > 0 && q->s[1].n > 0) {
		q->delta = q->s[1].mean - base;
		if (base > 0)
			q->change = q->s[1].mean / base - 1;
	}
	if (q->rank == KIND_PHASE && !q->seen[0]) {
		q->verdict = "only in new";
	} else if (q->rank == KIND_PHASE && !q->seen[1]) {
		q->verdict = "only in base";
	} else if (q->s[0].n == 0 || q->s[1].n == 0) {
		q->verdict = "unknown (no values in one run)";
		return 0;
	}
	if (q->b[0].k < 2 || q->b[1].k < 2) {
		if (!q->verdict)
			q->verdict = "unknown (fewer than 2 steps)";
		return 0;
	}
	if (diff_ratio(&q->b[0], &q->b[1], LEVEL, &ci) == 0) {
		/* on the log scale: a time's interval stays above -100% */
		q->lo = ci.lo;
		q->hi = ci.hi;
		q->dlo = base * ci.lo;
		q->dhi = base * ci.hi;
	} else {
		/* a mean of 0 (a phase in one run only, a part never sampled):
		 * the difference itself; no value is below 0 */
		diff_difference(&q->b[0], &q->b[1], LEVEL, &ci);
		q->dlo = ci.lo;
		q->dhi = ci.hi;
		if (base > 0) {
			q->lo = fmax(ci.lo / base, -1);
			q->hi = fmax(ci.hi / base, -1);
		}
	}
	if (q->verdict)
		return 0;
	if (!isfinite(q->dlo) || !isfinite(q->dhi) || !isfinite(q->delta)) {
		q->verdict = "unknown (values too large to compare)";
		return 0;
	}
	excl = q->dlo > 0 ? 1 : q->dhi < 0 ? -1 : 0;
	/* conservative: the interval excludes 0 and the change is one worth
	 * naming (a change within one run's noise that clears 0 is not) */
	if (excl == 0 || q->delta == 0) {
		q->verdict = "no significant change";
		return 0;
	}
	if (!(fabs(q->delta) >= q->min_effect)) {
		/* the interval clears 0, but the change is too small to name:
		 * said as such, not as "no change" beside an interval that
		 * excludes 0 */
		q->verdict = DIFF_SMALL;
		return 0;
	}
	if (is_contention(q))
		q->verdict = excl > 0 ? "more contention" : "less contention";
	else if (is_time(q) || is_count(q))
		q->verdict = excl > 0 ? (is_time(q) ? "slower" : "higher") : (is_time(q) ? "faster" : "lower");
	else
		q->verdict = excl > 0 ? "higher" : "lower";
	/* worse: more time, less MFU; counts are neither */
	q->significant = is_count(q) ? 0 : is_time(q) ? (int)excl : -(int)excl;
	return 0;
}

/* Step rows first, then the phases in the base run's order (those only in
 * the new run after them, in its order), then the breakdown's parts. */
static int quantity_cmp(const void *pa, const void *pb)
{
	const struct quantity *a = pa, *b = pb;
	int64_t oa = a->seen[0] ? a->ord[0] : a->ord[1], ob = b->seen[0] ? b->ord[0] : b->ord[1];

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->rank == KIND_OTHER && strcmp(a->kind, b->kind))
		return strcmp(a->kind, b->kind);
	if (a->seen[0] != b->seen[0])
		return a->seen[0] ? -1 : 1;
	return oa < ob ? -1 : oa > ob;
}

static void bind_double(sqlite3_stmt *st, int i, double v, int known)
{
	if (known && isfinite(v))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}


static const char table_sql[] =
	"CREATE TABLE diff (kind TEXT, name TEXT, unit TEXT, base_n INTEGER, new_n INTEGER,\n"
	"  base REAL, new REAL, base_sd REAL, new_sd REAL, change REAL, change_lo REAL, change_hi REAL,\n"
	"  delta REAL, delta_low REAL, delta_high REAL, share REAL, min_effect REAL, batches INTEGER,\n"
	"  preempted REAL, verdict TEXT)";

#define NCOLS 20

/* table_sql's columns, in its order */
static const char *const column_names[NCOLS] = {
	"kind", "name", "unit", "base_n", "new_n", "base", "new", "base_sd", "new_sd", "change", "change_lo",
	"change_hi", "delta", "delta_low", "delta_high", "share", "min_effect", "batches", "preempted", "verdict",
};

const char *diff_columns(const char *list)
{
	if (!list)
		return DIFF_COLUMNS;
	return strcmp(list, "all") == 0 ? NULL : list;
}

int diff_check_columns(const char *list, char *err, size_t errlen)
{
	const char *p = list;

	if (!p || strcmp(p, "all") == 0)
		return 0;
	while (*p) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < NCOLS; i++)
			if (strlen(column_names[i]) == len && strncmp(column_names[i], p, len) == 0)
				break;
		if (i == NCOLS) {
			strbuf(err, errlen, "no column '%.*s' in diff (the names are the csv header: mfu-report "
			       "--diff BASE NEW --format csv | head -1)", (int)len, p);
			return -EINVAL;
		}
		p += len + (p[len] == ',');
	}
	return 0;
}

int diff_rows(struct diff *d, sqlite3_stmt **stmt, char *err, size_t errlen)
{
	sqlite3_stmt *ins = NULL;
	int rc = -EIO;

	*stmt = NULL;
	if (!d->compared) {
		struct quantity *wall = diff_quantity_find(d, "step", "wall_ms", 7);
		double wall_base, wall_delta;

		struct quantity *sw = diff_quantity_find(d, "switches", "recorded", 8);

		for (int side = 0; side < 2; side++) {
			/* (qsort's base may not be NULL, even for no element) */
			for (size_t i = 0; i < d->nq; i++)
				if (d->q[i].npt[side])
					qsort(d->q[i].pt[side], d->q[i].npt[side], sizeof(struct point), point_cmp);
		}
		d->net = sw && sw->seen[0] && sw->seen[1];
		/* the minimum effect is of the step time as the user sees it */
		wall_base = wall && wall->s[0].n ? wall->s[0].mean : NAN;
		for (size_t i = 0; i < d->nq; i++)
			if (d->q[i].rank != KIND_HIDDEN && compare(d, &d->q[i], wall_base)) {
				strbuf(err, errlen, "out of memory");
				return -ENOMEM;
			}
		wall_delta = wall ? wall->delta : NAN;
		/* a share of a change that is not one is noise: only when the
		 * step time changed */
		for (size_t i = 0; i < d->nq && wall && wall->significant; i++)
			if (is_time(&d->q[i]) && !is_contention(&d->q[i]) && wall_delta != 0 && isfinite(wall_delta))
				d->q[i].share = d->q[i].delta / wall_delta;
		if (d->nq)
			qsort(d->q, d->nq, sizeof(*d->q), quantity_cmp);
		free(d->warning);
		d->warning = NULL;
		if (diff_warn(d))
			return -ENOMEM;
	}
	d->compared = 1;
	free(d->summary);
	d->summary = NULL;
	if (diff_summarize(d))
		return -ENOMEM;
	sqlite3_close(d->mem);
	d->mem = NULL;
	if (sqlite3_open_v2(":memory:", &d->mem, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
	    sqlite3_exec(d->mem, table_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(d->mem, "INSERT INTO diff VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			       -1, &ins, NULL) != SQLITE_OK)
		goto fail;
	for (size_t i = 0; i < d->nq; i++) {
		const struct quantity *q = &d->q[i];
		size_t k = q->b[0].k < q->b[1].k ? q->b[0].k : q->b[1].k;

		if (!shown(d, q))
			continue; /* nothing known of it in either run */
		sqlite3_bind_text(ins, 1, q->kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 2, q->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 3, is_count(q) ? "FLOPs" : is_mfu(q) ? "fraction" : "ms", -1, SQLITE_STATIC);
		sqlite3_bind_int64(ins, 4, (sqlite3_int64)q->s[0].n);
		sqlite3_bind_int64(ins, 5, (sqlite3_int64)q->s[1].n);
		bind_double(ins, 6, q->s[0].mean, q->s[0].n > 0);
		bind_double(ins, 7, q->s[1].mean, q->s[1].n > 0);
		bind_double(ins, 8, diff_stats_sd(&q->s[0]), 1);
		bind_double(ins, 9, diff_stats_sd(&q->s[1]), 1);
		bind_double(ins, 10, q->change, 1);
		bind_double(ins, 11, q->lo, 1);
		bind_double(ins, 12, q->hi, 1);
		bind_double(ins, 13, q->delta, 1);
		bind_double(ins, 14, q->dlo, 1);
		bind_double(ins, 15, q->dhi, 1);
		bind_double(ins, 16, q->share, 1);
		bind_double(ins, 17, q->min_effect, 1);
		if (k >= 2)
			sqlite3_bind_int64(ins, 18, (sqlite3_int64)k);
		else
			sqlite3_bind_null(ins, 18);
		bind_double(ins, 19, q->pre[1] - q->pre[0], 1);
		sqlite3_bind_text(ins, NCOLS, q->verdict, -1, SQLITE_STATIC);
		if (sqlite3_step(ins) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(ins);
	}
	if (sqlite3_prepare_v2(d->mem, "SELECT * FROM diff ORDER BY rowid", -1, stmt, NULL) != SQLITE_OK)
		goto fail;
	rc = 0;
	goto out;
fail:
	strbuf(err, errlen, "%s", d->mem ? sqlite3_errmsg(d->mem) : "cannot open an in-memory database");
out:
	sqlite3_finalize(ins);
	return rc;
}

const char *diff_summary(const struct diff *d)
{
	return d->summary;
}

const char *diff_warning(const struct diff *d)
{
	return d->warning;
}
