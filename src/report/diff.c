#include "diff.h"
#include "analysis.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEVEL 0.95

/* ---- statistics ---- */

void diff_stats_add(struct diff_stats *s, double x)
{
	double delta = x - s->mean;

	s->n++;
	s->mean += delta / (double)s->n;
	s->m2 += delta * (x - s->mean);
}

void diff_stats_merge(struct diff_stats *s, const struct diff_stats *other)
{
	uint64_t n = s->n + other->n;
	double delta = other->mean - s->mean;

	if (!other->n)
		return;
	if (!s->n) {
		*s = *other;
		return;
	}
	s->m2 += other->m2 + delta * delta * (double)s->n * (double)other->n / (double)n;
	s->mean += delta * (double)other->n / (double)n;
	s->n = n;
}

double diff_stats_sd(const struct diff_stats *s)
{
	return s->n < 2 ? NAN : sqrt(s->m2 / (double)(s->n - 1));
}

/* The continued fraction of the incomplete beta function (modified Lentz),
 * which converges fast for x < (a + 1) / (a + b + 2). */
static double beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap, h;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 1000000; m++) {
		double m2 = 2.0 * m, aa, del;

		aa = m * (b - m) * x / ((qam + m2) * (a + m2));
		d = 1 + aa * d;
		c = 1 + aa / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1 + aa * d;
		c = 1 + aa / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-15)
			break;
	}
	return h;
}

/* The regularized incomplete beta function I_x(a, b). */
static double beta_inc(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_cf(a, b, x) / a;
	return 1 - front * beta_cf(b, a, 1 - x) / b;
}

/* P(T > t) for t >= 0, T Student's t with @df degrees of freedom; the
 * normal tail for df = INFINITY. */
static double t_tail(double t, double df)
{
	if (isinf(df))
		return 0.5 * erfc(t / sqrt(2.0));
	return 0.5 * beta_inc(df / 2, 0.5, df / (df + t * t));
}

double diff_t_quantile(double p, double df)
{
	double q = 1 - p, lo = 0, hi = 1;

	if (!(p > 0.5 && p < 1) || !(df > 0))
		return NAN;
	/* beyond 1e7 the t quantile is the normal one to 1e-7 relative (the
	 * first term of its expansion is (z^3 + z) / (4 df)) */
	if (df > 1e7)
		df = INFINITY;
	while (t_tail(hi, df) > q && hi < 1e300)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
		double mid = (lo + hi) / 2;

		if (t_tail(mid, df) > q)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

int diff_welch(const struct diff_stats *base, const struct diff_stats *new_, double level,
	       struct diff_interval *out)
{
	double vb, vn, se2, t;

	out->d = new_->mean - base->mean;
	out->lo = out->hi = out->df = NAN;
	if (base->n < 2 || new_->n < 2)
		return -EDOM;
	vb = base->m2 / (double)(base->n - 1) / (double)base->n;
	vn = new_->m2 / (double)(new_->n - 1) / (double)new_->n;
	se2 = vb + vn;
	if (se2 <= 0) {
		/* no variance in either run: the difference is exact */
		out->lo = out->hi = out->d;
		out->df = INFINITY;
		return 0;
	}
	/* Welch-Satterthwaite, the variances scaled by the larger: squared as
	 * they are, those of a declared 1e150 overflow to inf / inf, and the
	 * NaN interval read as "no significant change" */
	{
		double m = vb > vn ? vb : vn, b = vb / m, n = vn / m;

		out->df = (b + n) * (b + n) / (b * b / (double)(base->n - 1) + n * n / (double)(new_->n - 1));
	}
	t = diff_t_quantile(1 - (1 - level) / 2, out->df);
	out->lo = out->d - t * sqrt(se2);
	out->hi = out->d + t * sqrt(se2);
	return 0;
}

/* ---- batch means ---- */

size_t diff_batches(size_t n)
{
	/* 10 batches (Schmeiser's 10 to 30): each long enough to hold a
	 * drift of a tenth of the run, and t(9) = 2.26 is only 15% wider
	 * than the normal quantile; fewer than 20 steps give batches of 2 */
	if (n >= 20)
		return 10;
	if (n >= 4)
		return n / 2;
	return n;
}

int diff_batch_means(const double *x, size_t n, struct diff_batch *out)
{
	struct diff_stats all = { 0 }, bm = { 0 };
	size_t k = diff_batches(n);

	out->n = n;
	out->k = k;
	out->mean = out->se2 = NAN;
	for (size_t i = 0; i < n; i++)
		diff_stats_add(&all, x[i]);
	if (n)
		out->mean = all.mean;
	if (k < 2)
		return -EDOM;
	for (size_t j = 0; j < k; j++) {
		/* consecutive runs of n/k steps, the remainder spread: sizes
		 * differ by at most one */
		size_t lo = j * n / k, hi = (j + 1) * n / k;
		struct diff_stats b = { 0 };

		for (size_t i = lo; i < hi; i++)
			diff_stats_add(&b, x[i]);
		diff_stats_add(&bm, b.mean);
	}
	out->se2 = bm.m2 / (double)(k - 1) / (double)k;
	return 0;
}

/* Welch-Satterthwaite degrees of freedom of va + vb, va with @ka - 1 and
 * vb with @kb - 1 (scaled by the larger: no overflow of squares). */
static double welch_df(double va, size_t ka, double vb, size_t kb)
{
	double m = va > vb ? va : vb, a, b;

	if (!(m > 0))
		return INFINITY;
	a = va / m;
	b = vb / m;
	return (a + b) * (a + b) / (a * a / (double)(ka - 1) + b * b / (double)(kb - 1));
}

int diff_ratio(const struct diff_batch *base, const struct diff_batch *new_, double level, struct diff_interval *out)
{
	double lb, ln, se, r, t;

	out->d = out->lo = out->hi = out->df = NAN;
	if (!(base->mean > 0) || !(new_->mean > 0))
		return -ERANGE;
	out->d = new_->mean / base->mean - 1;
	if (base->k < 2 || new_->k < 2)
		return -EDOM;
	/* delta method: var(log m) = var(m) / m^2 */
	lb = base->se2 / (base->mean * base->mean);
	ln = new_->se2 / (new_->mean * new_->mean);
	se = sqrt(lb + ln);
	r = log(new_->mean) - log(base->mean);
	out->df = welch_df(lb, base->k, ln, new_->k);
	if (!(se > 0)) {
		out->lo = out->hi = out->d;
		return 0;
	}
	t = diff_t_quantile(1 - (1 - level) / 2, out->df);
	out->lo = expm1(r - t * se);
	out->hi = expm1(r + t * se);
	return 0;
}

int diff_difference(const struct diff_batch *base, const struct diff_batch *new_, double level,
		    struct diff_interval *out)
{
	double se, t;

	out->d = new_->mean - base->mean;
	out->lo = out->hi = out->df = NAN;
	if (base->k < 2 || new_->k < 2)
		return -EDOM;
	se = sqrt(base->se2 + new_->se2);
	out->df = welch_df(base->se2, base->k, new_->se2, new_->k);
	if (!(se > 0)) {
		out->lo = out->hi = out->d;
		return 0;
	}
	t = diff_t_quantile(1 - (1 - level) / 2, out->df);
	out->lo = out->d - t * se;
	out->hi = out->d + t * se;
	return 0;
}

/* ---- the comparison ---- */

/* KIND_HIDDEN: the preemption diff.sql gives to take out of the times,
 * not a row of its own */
enum { KIND_STEP, KIND_PHASE, KIND_BREAKDOWN, KIND_OTHER, KIND_HIDDEN };

/* One step's value of a quantity. */
struct point {
	int64_t step;
	double v;
};

/* One quantity (kind, name) and its two series. */
struct quantity {
	char *kind, *name;
	int rank;         /* KIND_* */
	int seen[2];      /* it has rows in the run's output */
	int64_t ord[2];   /* its order in each run (diff.sql's ord) */
	struct diff_stats s[2];
	struct point *pt[2]; /* its non-null values, by step once sorted */
	size_t npt[2], cappt[2];
	struct diff_batch b[2];
	const char *verdict;
	int significant;   /* -1 better (faster, higher MFU), 1 worse, 0 neither */
	double change, lo, hi; /* relative to the base mean; NAN: unknown */
	double delta, dlo, dhi; /* new - base in the row's unit, and its interval */
	double share;      /* delta over the step time's delta (ms rows) */
	double min_effect; /* the least |delta| named, in the row's unit */
	double pre[2];     /* mean preempted ms per step taken out (NAN: none) */
};

/* A --fail-on figure. */
struct gate {
	char *kind, *name; /* the quantity */
	char *label;       /* as the user wrote it */
	double limit;      /* a fraction (pct) or ms */
	int pct;
};

struct diff {
	struct quantity *q;
	size_t nq, cap;
	size_t last; /* the quantity of the previous row: a hint */
	uint64_t nsteps[2];
	int64_t *steps[2]; /* each run's complete steps, sorted */
	size_t capsteps[2];
	int compared; /* the quantities hold their verdicts, in order */
	int net;      /* both runs recorded context switches: times are
		       * compared net of preemption */
	int emulated[2]; /* the run is emulated (run.emulated): only counts compare */
	char *who[2][5]; /* command, host, cpu_name, peak_flops, peak_bw as text */
	char *warning;   /* the runs differ: program, machine, peaks */
	int args_differ; /* the same program with other arguments */
	sqlite3 *mem;  /* the private table diff_rows() selects from */
	char *summary;
	struct gate *gate;
	size_t ngate, capgate;
};

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
	}
	for (size_t i = 0; i < d->ngate; i++) {
		free(d->gate[i].kind);
		free(d->gate[i].name);
		free(d->gate[i].label);
	}
	for (int side = 0; side < 2; side++) {
		free(d->steps[side]);
		for (int i = 0; i < 5; i++)
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
static struct quantity *find_quantity(struct diff *d, const char *kind, const char *name, size_t nlen)
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
	struct quantity *q = find_quantity(d, kind, name, nlen);

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

/* A step's counted FLOPs (diff.sql's hw_flops rows): counts, not times. */
static int is_count(const struct quantity *q)
{
	return q->rank == KIND_STEP && strncmp(q->name, "hw_flops", 8) == 0;
}

static int is_mfu(const struct quantity *q)
{
	return q->rank == KIND_STEP && strcmp(q->name, "mfu") == 0;
}

static int is_wall(const struct quantity *q)
{
	return q->rank == KIND_STEP && strcmp(q->name, "wall_ms") == 0;
}

/* The breakdown's preempted part: the machine's doing, not the program's. */
static int is_contention(const struct quantity *q)
{
	return q->rank == KIND_BREAKDOWN && strcmp(q->name, "runnable_ms") == 0;
}

/* A time in ms, part of the step time: the step, a phase, a breakdown part. */
static int is_time(const struct quantity *q)
{
	return !is_count(q) && !is_mfu(q);
}

/* The run's facts the warning compares, as text: command, host, CPU,
 * peaks (the run view: an emulated run has none). */
static void read_who(struct diff *d, int side, sqlite3 *db)
{
	sqlite3_stmt *st = NULL;

	d->emulated[side] = 0;
	if (sqlite3_prepare_v2(db, "SELECT command, host, cpu_name, peak_flops, peak_bw, emulated IS NOT NULL "
			       "FROM run WHERE id = 1", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
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
}

static int point_add(struct quantity *q, int side, int64_t step, double v)
{
	if (array_grow(&q->pt[side], &q->cappt[side], q->npt[side] + 1, sizeof(*q->pt[side])))
		return -ENOMEM;
	q->pt[side][q->npt[side]++] = (struct point){ step, v };
	return 0;
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
	/* columns: kind, name, ord, step, value */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		int64_t step = sqlite3_column_int64(st, 3);
		struct quantity *q;

		if (!kind || !name)
			continue;
		q = quantity(d, kind, name, (size_t)sqlite3_column_bytes(st, 1));
		if (!q) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		if (!q->seen[side] || sqlite3_column_int64(st, 2) < q->ord[side])
			q->ord[side] = sqlite3_column_int64(st, 2);
		q->seen[side] = 1;
		if (is_wall(q)) {
			if (array_grow(&d->steps[side], &d->capsteps[side], d->nsteps[side] + 1, sizeof(int64_t))) {
				sqlite3_finalize(st);
				return -ENOMEM;
			}
			d->steps[side][d->nsteps[side]++] = step;
		}
		if (sqlite3_column_type(st, 4) != SQLITE_NULL) {
			double v = sqlite3_column_double(st, 4);

			diff_stats_add(&q->s[side], v);
			if (point_add(q, side, step, v)) {
				sqlite3_finalize(st);
				return -ENOMEM;
			}
		}
	}
	if (rc != SQLITE_DONE) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return -EIO;
	}
	sqlite3_finalize(st);
	return 0;
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

/* @q's value in @step of run @side (its points sorted), else @dflt. */
static double at(const struct quantity *q, int side, int64_t step, double dflt)
{
	const struct point key = { step, 0 }, *p;

	if (!q || !q->npt[side])
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
	size_t n = q->rank == KIND_PHASE ? d->nsteps[side] : q->npt[side];
	const struct quantity *pre = NULL, *wall = NULL;
	double *x = malloc((n ? n : 1) * sizeof(*x)), pre_sum = 0;

	if (!x)
		return -ENOMEM;
	if (d->net && (is_wall(q) || is_mfu(q)))
		pre = find_quantity(d, "preempted_step", "wall_ms", 7);
	else if (d->net && q->rank == KIND_PHASE)
		pre = find_quantity(d, "preempted_phase", q->name, strlen(q->name));
	if (d->net && is_mfu(q))
		wall = find_quantity(d, "step", "wall_ms", 7);
	memset(&q->s[side], 0, sizeof(q->s[side]));
	for (size_t i = 0; i < n; i++) {
		int64_t step = q->rank == KIND_PHASE ? d->steps[side][i] : q->pt[side][i].step;
		double v = q->rank == KIND_PHASE ? at(q, side, step, 0) : q->pt[side][i].v, p = at(pre, side, step, 0);

		if (is_mfu(q)) {
			double w = at(wall, side, step, NAN);

			/* the same FLOPs over the time net of preemption */
			if (p > 0 && w > p)
				v *= w / (w - p);
		} else if (pre) {
			v -= p;
		}
		pre_sum += p;
		x[i] = v;
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
	if (excl == 0 || !(fabs(q->delta) >= q->min_effect) || q->delta == 0) {
		q->verdict = "no significant change";
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

/* Append printf text to the malloc'd *@buf; 0 or -ENOMEM. */
static int say(char **buf, size_t *len, size_t *cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int say(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	return buf_append(buf, len, cap, line, strnlen(line, sizeof(line) - 1));
}

/* A change as a signed percentage, "+12.3%", into @buf (32 bytes); from a
 * million percent on (a declared 1e300 against a real run) 3 significant
 * digits, "+1e+302%", rather than 300 digits cut by say()'s line. */
static const char *pct(char *buf, double v)
{
	snprintf(buf, 32, fabs(100 * v) < 1e6 ? "%+.1f%%" : "%+.3g%%", 100 * v);
	return buf;
}

/* A time in ms to 3 significant digits, "+0.301 ms", into @buf (32 bytes). */
static const char *msec(char *buf, double v)
{
	snprintf(buf, 32, "%+.3g ms", v);
	return buf;
}

static const char *row_label(const struct quantity *q, char *buf, size_t len)
{
	if (is_count(q))
		snprintf(buf, len, "counted %sFLOPs", strcmp(q->name, "hw_flops_fp64") == 0   ? "fp64 "
						      : strcmp(q->name, "hw_flops_fp32") == 0 ? "fp32 "
											  : "");
	else if (q->rank == KIND_STEP)
		snprintf(buf, len, "%s", is_mfu(q) ? "MFU" : "step time");
	else if (q->rank == KIND_PHASE)
		snprintf(buf, len, "phase %s", q->name);
	else
		snprintf(buf, len, "%s %.*s", q->kind, (int)(strlen(q->name) > 3 ? strlen(q->name) - 3 : strlen(q->name)),
			 q->name);
	return buf;
}

/* Whether @q is a row of the comparison: with an emulated run, only the
 * counts are. */
static int shown(const struct diff *d, const struct quantity *q)
{
	return q->rank != KIND_HIDDEN && (q->s[0].n || q->s[1].n) && (is_count(q) || !(d->emulated[0] || d->emulated[1]));
}

/* The verdict line's order: the step time, then the phases by their
 * contribution to it (|delta|, largest first), then the breakdown's parts
 * the same way (a second split of the same time), then MFU and counts. */
static int rank_of(const struct quantity *q)
{
	return is_wall(q) ? 0 : q->rank == KIND_PHASE ? 1 : is_contention(q) ? 5 : q->rank == KIND_BREAKDOWN ? 2
	       : is_mfu(q) ? 3 : 4;
}

static int contribution_cmp(const void *pa, const void *pb)
{
	const struct quantity *a = *(const struct quantity *const *)pa, *b = *(const struct quantity *const *)pb;
	int ra = rank_of(a), rb = rank_of(b);
	double da = fabs(a->delta), db = fabs(b->delta);

	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (!isfinite(da))
		da = -1;
	if (!isfinite(db))
		db = -1;
	return da > db ? -1 : da < db;
}

/* One named change of the verdict line. */
static int say_change(char **buf, size_t *len, size_t *cap, const struct quantity *q)
{
	char label[160], c[32], lo[32], hi[32], ms[32], share[48] = "";

	row_label(q, label, sizeof(label));
	if (is_contention(q))
		return say(buf, len, cap, " the machine: %s in NEW, the thread preempted %s per step (another task had "
			   "the CPU; taken out of the times above)", q->verdict, msec(ms, q->delta));
	if (strncmp(q->verdict, "only in", 7) == 0)
		return say(buf, len, cap, " %s %s (%s per step)", label, q->verdict, msec(ms, q->delta));
	if (!isfinite(q->change) || !isfinite(q->lo))
		return say(buf, len, cap, " %s %s", label, q->verdict);
	if (!is_time(q))
		return say(buf, len, cap, " %s %s %s (CI %s to %s)", label, q->verdict, pct(c, q->change),
			   pct(lo, q->lo), pct(hi, q->hi));
	if (!is_wall(q) && isfinite(q->share))
		snprintf(share, sizeof(share), ", %.0f%% of the step's change", 100 * q->share);
	return say(buf, len, cap, " %s %s %s per step%s (%s, CI %s to %s)", label, q->verdict, msec(ms, q->delta),
		   share, pct(c, q->change), pct(lo, q->lo), pct(hi, q->hi));
}

/* The runs' differences that make a comparison doubtful: another
 * program, machine or peak. NULL-safe text compare. */
static int differs(const char *a, const char *b)
{
	return (a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0);
}

/* The first element of a JSON argv, '["./app","-x"]' -> './app' (its raw
 * JSON text, quotes off), into @buf. */
static const char *argv0(const char *json, char *buf, size_t len)
{
	const char *s = json ? strchr(json, '"') : NULL, *e;

	if (!s) {
		snprintf(buf, len, "%s", json ? json : "?");
		return buf;
	}
	for (e = s + 1; *e && *e != '"'; e++)
		if (*e == '\\' && e[1])
			e++;
	snprintf(buf, len, "%.*s", (int)(e - s - 1), s + 1);
	return buf;
}

static int warn(struct diff *d)
{
	size_t len = 0, cap = 0;
	char a[128], b[128];
	int rc = 0, n = 0;

	/* other arguments are what an A/B usually is: a note, not a warning */
	d->args_differ = differs(d->who[0][0], d->who[1][0]);
	if (differs(argv0(d->who[0][0], a, sizeof(a)), argv0(d->who[1][0], b, sizeof(b))))
		rc = say(&d->warning, &len, &cap, "different programs (BASE %.100s, NEW %.100s)", a, b), n++;
	if (!rc && (differs(d->who[0][1], d->who[1][1]) || differs(d->who[0][2], d->who[1][2])))
		rc = say(&d->warning, &len, &cap, "%sdifferent machines (BASE %.60s, %.60s; NEW %.60s, %.60s)",
			 n++ ? "; " : "", d->who[0][1] ? d->who[0][1] : "?", d->who[0][2] ? d->who[0][2] : "?",
			 d->who[1][1] ? d->who[1][1] : "?", d->who[1][2] ? d->who[1][2] : "?");
	if (!rc && !d->emulated[0] && !d->emulated[1] &&
	    (differs(d->who[0][3], d->who[1][3]) || differs(d->who[0][4], d->who[1][4])))
		rc = say(&d->warning, &len, &cap,
			 "%sdifferent peaks (FLOP/s %s vs %s, bytes/s %s vs %s: MFU does not compare)", n++ ? "; " : "",
			 d->who[0][3] ? d->who[0][3] : "unknown", d->who[1][3] ? d->who[1][3] : "unknown",
			 d->who[0][4] ? d->who[0][4] : "unknown", d->who[1][4] ? d->who[1][4] : "unknown");
	return rc;
}

/* The line above the table: what was compared and what changed. */
static int summarize(struct diff *d)
{
	size_t len = 0, cap = 0, nchanged = 0, nunknown = 0, nrows = 0, nlist = 0;
	const struct quantity **list = NULL;
	int rc = 0;

	if (d->warning)
		rc = say(&d->summary, &len, &cap, "Warning: the runs differ: %s. ", d->warning);
	else if (d->args_differ)
		rc = say(&d->summary, &len, &cap, "The commands' arguments differ (run.command). ");
	if (rc)
		return rc;
	if (d->nsteps[0] == 0 || d->nsteps[1] == 0)
		return say(&d->summary, &len, &cap, "No complete step in %s: nothing to compare.",
			   d->nsteps[0] ? "NEW" : d->nsteps[1] ? "BASE" : "either run");
	rc = say(&d->summary, &len, &cap, "%llu base vs %llu new steps, 95%% intervals by batch means%s, changes "
		 "under %.0f%% of the step time not named:", (unsigned long long)d->nsteps[0],
		 (unsigned long long)d->nsteps[1], d->net ? ", times net of preemption" : "", 100 * DIFF_MIN_EFFECT);
	if (!rc && (d->emulated[0] || d->emulated[1]))
		rc = say(&d->summary, &len, &cap, " %s emulated, so only counted FLOPs are compared (an "
			 "emulator's times are not the program's);", d->emulated[0] && d->emulated[1] ? "both runs are"
			 : d->emulated[0] ? "BASE is" : "NEW is");
	list = calloc(d->nq ? d->nq : 1, sizeof(*list));
	if (!list)
		return -ENOMEM;
	for (size_t i = 0; i < d->nq; i++) {
		const struct quantity *q = &d->q[i];

		if (!shown(d, q))
			continue;
		nrows++;
		if (strncmp(q->verdict, "unknown", 7) == 0)
			nunknown++;
		else if (strcmp(q->verdict, "no significant change") != 0)
			list[nlist++] = q;
	}
	if (nlist)
		qsort(list, nlist, sizeof(*list), contribution_cmp);
	for (size_t i = 0; !rc && i < nlist; i++) {
		if (is_contention(list[i]))
			continue;
		if (nchanged++)
			rc = say(&d->summary, &len, &cap, ";");
		if (!rc)
			rc = say_change(&d->summary, &len, &cap, list[i]);
	}
	if (!rc && nchanged == 0)
		rc = say(&d->summary, &len, &cap, " no significant change in any of the %zu rows",
			 nrows - nunknown - (nlist > 0));
	else if (!rc)
		rc = say(&d->summary, &len, &cap, "; no significant change elsewhere");
	/* last, the contention row (ranked last): not the program's change */
	if (!rc && nlist && is_contention(list[nlist - 1]))
		rc = say(&d->summary, &len, &cap, ";") || say_change(&d->summary, &len, &cap, list[nlist - 1]);
	free(list);
	if (!rc && nunknown)
		rc = say(&d->summary, &len, &cap, " (%zu rows unknown: see their verdicts)", nunknown);
	if (!rc && (d->nsteps[0] < 10 || d->nsteps[1] < 10) && d->nsteps[0] >= 2 && d->nsteps[1] >= 2)
		rc = say(&d->summary, &len, &cap, "; few steps: the intervals are wide");
	if (!rc && nchanged)
		rc = say(&d->summary, &len, &cap, ". One run each: the intervals hold the variation within "
			 "each run, not between runs; record again before trusting a small change");
	if (!rc)
		rc = say(&d->summary, &len, &cap, ".");
	return rc;
}

static const char table_sql[] =
	"CREATE TABLE diff (kind TEXT, name TEXT, unit TEXT, base_n INTEGER, new_n INTEGER,\n"
	"  base REAL, new REAL, base_sd REAL, new_sd REAL, change REAL, change_lo REAL, change_hi REAL,\n"
	"  delta REAL, delta_low REAL, delta_high REAL, share REAL, min_effect REAL, batches INTEGER,\n"
	"  preempted REAL, verdict TEXT)";

#define NCOLS 20

int diff_rows(struct diff *d, sqlite3_stmt **stmt, char *err, size_t errlen)
{
	sqlite3_stmt *ins = NULL;
	int rc = -EIO;

	*stmt = NULL;
	if (!d->compared) {
		struct quantity *wall = find_quantity(d, "step", "wall_ms", 7);
		double wall_base, wall_delta;

		struct quantity *sw = find_quantity(d, "switches", "recorded", 8);

		for (int side = 0; side < 2; side++) {
			/* (qsort's base may not be NULL, even for no element) */
			if (d->nsteps[side])
				qsort(d->steps[side], d->nsteps[side], sizeof(int64_t), step_cmp);
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
		if (warn(d))
			return -ENOMEM;
	}
	d->compared = 1;
	free(d->summary);
	d->summary = NULL;
	if (summarize(d))
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

/* ---- --fail-on ---- */

static const char *const parts[] = { "blocked", "runnable", "kernel", "sync", "dispatch", "unclassified", "compute" };

/* One FIGURE>N% or FIGURE>Nms of --fail-on, [s, e). */
static int gate_parse(struct diff *d, const char *s, const char *e, char *err, size_t errlen)
{
	const char *gt = memchr(s, '>', (size_t)(e - s)), *num, *unit;
	char fig[256], val[64];
	struct gate g = { 0 };
	double v;
	size_t flen, vlen;

	while (s < e && *s == ' ')
		s++;
	while (e > s && e[-1] == ' ')
		e--;
	if (!gt || gt == s || gt + 1 >= e) {
		strbuf(err, errlen, "'%.*s': expected FIGURE>N%% or FIGURE>Nms (step>2%%, mfu>5%%, phase:NAME>1ms, "
		       "breakdown:PART>3%%)", (int)(e - s), s);
		return -EINVAL;
	}
	flen = (size_t)(gt - s);
	while (flen && s[flen - 1] == ' ')
		flen--;
	if (flen >= sizeof(fig)) {
		strbuf(err, errlen, "'%.*s': the figure's name is too long", (int)(e - s), s);
		return -EINVAL;
	}
	memcpy(fig, s, flen);
	fig[flen] = '\0';
	num = gt + 1;
	while (num < e && *num == ' ')
		num++;
	unit = e;
	if (e - num >= 2 && memcmp(e - 2, "ms", 2) == 0)
		unit = e - 2, g.pct = 0;
	else if (e - num >= 1 && e[-1] == '%')
		unit = e - 1, g.pct = 1;
	else {
		strbuf(err, errlen, "'%.*s': the threshold needs a unit: %% (of the figure's base value) or ms "
		       "(per step)", (int)(e - s), s);
		return -EINVAL;
	}
	vlen = (size_t)(unit - num);
	if (vlen == 0 || vlen >= sizeof(val)) {
		strbuf(err, errlen, "'%.*s': expected a number before the unit", (int)(e - s), s);
		return -EINVAL;
	}
	memcpy(val, num, vlen);
	val[vlen] = '\0';
	if (safe_atod(val, &v) || v < 0) {
		strbuf(err, errlen, "'%.*s': '%s' is not a number of 0 or more", (int)(e - s), s, val);
		return -EINVAL;
	}
	g.limit = g.pct ? v / 100 : v;
	if (strcmp(fig, "step") == 0) {
		g.kind = strdup("step");
		g.name = strdup("wall_ms");
	} else if (strcmp(fig, "mfu") == 0) {
		if (!g.pct) {
			strbuf(err, errlen, "'%.*s': MFU is a fraction: give its threshold in %%", (int)(e - s), s);
			return -EINVAL;
		}
		g.kind = strdup("step");
		g.name = strdup("mfu");
	} else if (strncmp(fig, "phase:", 6) == 0 && fig[6]) {
		g.kind = strdup("phase");
		g.name = strdup(fig + 6);
	} else if (strncmp(fig, "breakdown:", 10) == 0) {
		size_t i, plen = strlen(fig + 10);
		char part[32];

		if (plen > 3 && strcmp(fig + 10 + plen - 3, "_ms") == 0)
			plen -= 3;
		for (i = 0; i < ARRAY_SIZE(parts); i++)
			if (strlen(parts[i]) == plen && strncmp(parts[i], fig + 10, plen) == 0)
				break;
		if (i == ARRAY_SIZE(parts)) {
			strbuf(err, errlen, "'%s': no such part of the breakdown (blocked, runnable, kernel, sync, "
			       "dispatch, unclassified, compute)", fig);
			return -EINVAL;
		}
		snprintf(part, sizeof(part), "%s_ms", parts[i]);
		g.kind = strdup("breakdown");
		g.name = strdup(part);
	} else {
		strbuf(err, errlen, "'%s': unknown figure (step, mfu, phase:NAME, breakdown:PART)", fig);
		return -EINVAL;
	}
	g.label = malloc((size_t)(e - s) + 1);
	if (!g.kind || !g.name || !g.label ||
	    array_grow(&d->gate, &d->capgate, d->ngate + 1, sizeof(*d->gate))) {
		free(g.kind);
		free(g.name);
		free(g.label);
		strbuf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memcpy(g.label, s, (size_t)(e - s));
	g.label[e - s] = '\0';
	d->gate[d->ngate++] = g;
	return 0;
}

int diff_fail_on(struct diff *d, const char *spec, char *err, size_t errlen)
{
	const char *s = spec;

	if (!*spec) {
		strbuf(err, errlen, "'': expected FIGURE>N%% or FIGURE>Nms, comma-separated (step>2%%)");
		return -EINVAL;
	}
	for (;;) {
		const char *e = strchr(s, ',');
		int rc;

		if (!e)
			e = s + strlen(s);
		rc = gate_parse(d, s, e, err, errlen);
		if (rc)
			return rc;
		if (!*e)
			return 0;
		s = e + 1;
	}
}

int diff_gate(struct diff *d, FILE *out)
{
	int tripped = 0, unknown = 0;

	for (size_t i = 0; i < d->ngate; i++) {
		const struct gate *g = &d->gate[i];
		struct quantity *q = find_quantity(d, g->kind, g->name, strlen(g->name));
		char c[32], lo[32], hi[32], ms[32], label[160];
		double worse;
		int bad;

		if (!q || !shown(d, q)) {
			fprintf(out, "mfu-report: --fail-on '%s': %s %s is in neither run\n", g->label,
				strcmp(g->kind, "step") == 0 ? "the" : g->kind,
				strcmp(g->kind, "step") == 0 ? (strcmp(g->name, "mfu") == 0 ? "MFU" : "step time") : g->name);
			unknown = 1;
			continue;
		}
		if (strcmp(q->verdict, "only in new") == 0) {
			/* from nothing to something: worse by any %, and by its own time */
			bad = q->delta >= q->min_effect && (g->pct || q->delta > g->limit);
		} else {
			worse = g->pct ? (is_mfu(q) ? -q->change : q->change) : q->delta;
			bad = q->significant == 1 && worse > g->limit;
		}
		if (strncmp(q->verdict, "unknown", 7) == 0)
			fprintf(out, "mfu-report: --fail-on '%s': cannot tell: %s\n", g->label, q->verdict);
		if (!bad)
			continue;
		tripped = 1;
		row_label(q, label, sizeof(label));
		if (is_mfu(q))
			fprintf(out, "mfu-report: --fail-on '%s': MFU %s %s (CI %s to %s)\n", g->label, q->verdict,
				pct(c, q->change), pct(lo, q->lo), pct(hi, q->hi));
		else if (isfinite(q->change) && isfinite(q->lo))
			fprintf(out, "mfu-report: --fail-on '%s': %s %s %s per step (%s, CI %s to %s)\n", g->label,
				label, q->verdict, msec(ms, q->delta), pct(c, q->change), pct(lo, q->lo), pct(hi, q->hi));
		else
			fprintf(out, "mfu-report: --fail-on '%s': %s %s %s per step\n", g->label, label, q->verdict,
				msec(ms, q->delta));
	}
	return tripped ? 1 : unknown ? -ENOENT : 0;
}
