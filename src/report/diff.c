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

/* ---- the comparison ---- */

enum { KIND_STEP, KIND_PHASE, KIND_BREAKDOWN, KIND_OTHER };

/* One quantity (kind, name) and its two series. */
struct quantity {
	char *kind, *name;
	int rank;         /* KIND_* */
	int seen[2];      /* it has rows in the run's output */
	int64_t ord[2];   /* its order in each run (diff.sql's ord) */
	struct diff_stats s[2];
	const char *verdict;
	struct diff_interval ci;
	double change, lo, hi; /* relative to the base mean; NAN: unknown */
};

struct diff {
	struct quantity *q;
	size_t nq, cap;
	size_t last; /* the quantity of the previous row: a hint */
	uint64_t nsteps[2];
	int compared; /* the quantities hold their verdicts, in order */
	int emulated[2]; /* the run is emulated (run.emulated): only counts compare */
	sqlite3 *mem;  /* the private table diff_rows() selects from */
	char *summary;
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
	}
	free(d->q);
	free(d->summary);
	sqlite3_close(d->mem);
	free(d);
}

static int kind_rank(const char *kind)
{
	return strcmp(kind, "step") == 0	    ? KIND_STEP
	       : strcmp(kind, "phase") == 0     ? KIND_PHASE
	       : strcmp(kind, "breakdown") == 0 ? KIND_BREAKDOWN
						: KIND_OTHER;
}

/* The quantity (@kind, @name), added when new; NULL when out of memory. */
static struct quantity *quantity(struct diff *d, const char *kind, const char *name, size_t nlen)
{
	for (size_t k = 0; k < d->nq; k++) {
		size_t i = (d->last + k) % d->nq;
		struct quantity *q = &d->q[i];

		if (strcmp(q->kind, kind) == 0 && strlen(q->name) == nlen && memcmp(q->name, name, nlen) == 0) {
			d->last = i;
			return q;
		}
	}
	if (array_grow(&d->q, &d->cap, d->nq + 1, sizeof(*d->q)))
		return NULL;
	struct quantity *q = &d->q[d->nq];

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

/* Whether the run in @db is emulated (run.emulated set): 1, 0, or -1 when
 * it cannot be read. */
static int run_emulated(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	int v = -1;

	if (sqlite3_prepare_v2(db, "SELECT emulated IS NOT NULL FROM run WHERE id = 1", -1, &st, NULL) == SQLITE_OK)
		v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	return v;
}

int diff_read(struct diff *d, int side, sqlite3 *db, char *err, size_t errlen)
{
	char *sql = analysis_expand("diff.sql");
	sqlite3_stmt *st = NULL;
	int rc;

	d->emulated[side] = run_emulated(db) == 1;

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
		if (q->rank == KIND_STEP && strcmp(name, "wall_ms") == 0)
			d->nsteps[side]++;
		if (sqlite3_column_type(st, 4) != SQLITE_NULL)
			diff_stats_add(&q->s[side], sqlite3_column_double(st, 4));
	}
	if (rc != SQLITE_DONE) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return -EIO;
	}
	sqlite3_finalize(st);
	return 0;
}

/* diff.sql lists a phase's time in the steps where it ran: in each other
 * complete step of the run it took 0 ms. */
static void add_zeros(struct diff *d, struct quantity *q)
{
	for (int side = 0; side < 2 && q->rank == KIND_PHASE; side++) {
		struct diff_stats zeros = { 0 };

		if (d->nsteps[side] > q->s[side].n)
			zeros.n = d->nsteps[side] - q->s[side].n;
		diff_stats_merge(&q->s[side], &zeros);
	}
}

/* Mean, interval and verdict of @q. */
static void compare(struct diff *d, struct quantity *q)
{
	int is_time = !is_count(q) && (strcmp(q->name, "mfu") != 0 || q->rank != KIND_STEP);
	double base;

	add_zeros(d, q);
	base = q->s[0].mean;
	q->change = q->lo = q->hi = NAN;
	if (q->s[0].n > 0 && q->s[1].n > 0 && base > 0)
		q->change = q->s[1].mean / base - 1;
	if (q->rank == KIND_PHASE && !q->seen[0]) {
		q->verdict = "only in new";
	} else if (q->rank == KIND_PHASE && !q->seen[1]) {
		q->verdict = "only in base";
	} else if (q->s[0].n == 0 || q->s[1].n == 0) {
		q->verdict = "unknown (no values in one run)";
		return;
	}
	if (diff_welch(&q->s[0], &q->s[1], LEVEL, &q->ci)) {
		if (!q->verdict)
			q->verdict = "unknown (fewer than 2 steps)";
		return;
	}
	if (base > 0) {
		q->lo = q->ci.lo / base;
		q->hi = q->ci.hi / base;
	}
	if (q->verdict)
		return;
	if (!isfinite(q->ci.lo) || !isfinite(q->ci.hi))
		q->verdict = "unknown (values too large to compare)";
	else if (q->ci.lo > 0)
		q->verdict = is_time ? "slower" : "higher";
	else if (q->ci.hi < 0)
		q->verdict = is_time ? "faster" : "lower";
	else
		q->verdict = "no significant change";
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

static const char *row_label(const struct quantity *q, char *buf, size_t len)
{
	if (is_count(q))
		snprintf(buf, len, "counted %sFLOPs", strcmp(q->name, "hw_flops_fp64") == 0   ? "fp64 "
						      : strcmp(q->name, "hw_flops_fp32") == 0 ? "fp32 "
											  : "");
	else if (q->rank == KIND_STEP)
		snprintf(buf, len, "%s", strcmp(q->name, "mfu") == 0 ? "MFU" : "step time");
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
	return is_count(q) || !(d->emulated[0] || d->emulated[1]);
}

/* The line above the table: what was compared and what changed. */
static int summarize(struct diff *d)
{
	size_t len = 0, cap = 0, nchanged = 0, nunknown = 0, nrows = 0;
	char label[160];
	int rc;

	if (d->nsteps[0] == 0 || d->nsteps[1] == 0)
		return say(&d->summary, &len, &cap, "No complete step in %s: nothing to compare.",
			   d->nsteps[0] ? "NEW" : d->nsteps[1] ? "BASE" : "either run");
	rc = say(&d->summary, &len, &cap, "%llu base vs %llu new steps at 95%% confidence:",
		 (unsigned long long)d->nsteps[0], (unsigned long long)d->nsteps[1]);
	if (!rc && (d->emulated[0] || d->emulated[1]))
		rc = say(&d->summary, &len, &cap, " %s emulated, so only counted FLOPs are compared (an "
			 "emulator's times are not the program's);", d->emulated[0] && d->emulated[1] ? "both runs are"
			 : d->emulated[0] ? "BASE is" : "NEW is");
	for (size_t i = 0; !rc && i < d->nq; i++) {
		const struct quantity *q = &d->q[i];

		if (q->s[0].n == 0 && q->s[1].n == 0)
			continue;
		if (!shown(d, q))
			continue;
		nrows++;
		if (strncmp(q->verdict, "unknown", 7) == 0) {
			nunknown++;
			continue;
		}
		if (strcmp(q->verdict, "no significant change") == 0)
			continue;
		row_label(q, label, sizeof(label));
		/* sanitized when printed (format_set_verdict) */
		if (strncmp(q->verdict, "only in", 7) == 0)
			rc = say(&d->summary, &len, &cap, "%s %s %s", nchanged ? ";" : "", label, q->verdict);
		else if (isfinite(q->change) && isfinite(q->lo)) {
			char c[32], lo[32], hi[32];

			rc = say(&d->summary, &len, &cap, "%s %s %s %s (CI %s to %s)", nchanged ? ";" : "", label,
				 q->verdict, pct(c, q->change), pct(lo, q->lo), pct(hi, q->hi));
		}
		else
			rc = say(&d->summary, &len, &cap, "%s %s %s", nchanged ? ";" : "", label, q->verdict);
		nchanged++;
	}
	if (!rc && nchanged == 0)
		rc = say(&d->summary, &len, &cap, " no significant change in any of the %zu rows", nrows - nunknown);
	else if (!rc)
		rc = say(&d->summary, &len, &cap, "; no significant change elsewhere");
	if (!rc && nunknown)
		rc = say(&d->summary, &len, &cap, " (%zu rows unknown: see their verdicts)", nunknown);
	if (!rc && (d->nsteps[0] < 10 || d->nsteps[1] < 10) && d->nsteps[0] >= 2 && d->nsteps[1] >= 2)
		rc = say(&d->summary, &len, &cap, "; few steps: the intervals are wide");
	if (!rc)
		rc = say(&d->summary, &len, &cap, ".");
	return rc;
}

static const char table_sql[] =
	"CREATE TABLE diff (kind TEXT, name TEXT, unit TEXT, base_n INTEGER, new_n INTEGER,\n"
	"  base REAL, new REAL, base_sd REAL, new_sd REAL, change REAL, change_lo REAL, change_hi REAL,\n"
	"  verdict TEXT)";

int diff_rows(struct diff *d, sqlite3_stmt **stmt, char *err, size_t errlen)
{
	sqlite3_stmt *ins = NULL;
	int rc = -EIO;

	*stmt = NULL;
	for (size_t i = 0; !d->compared && i < d->nq; i++)
		compare(d, &d->q[i]);
	if (!d->compared && d->nq)
		qsort(d->q, d->nq, sizeof(*d->q), quantity_cmp);
	d->compared = 1;
	free(d->summary);
	d->summary = NULL;
	if (summarize(d))
		return -ENOMEM;
	sqlite3_close(d->mem);
	d->mem = NULL;
	if (sqlite3_open_v2(":memory:", &d->mem, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
	    sqlite3_exec(d->mem, table_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(d->mem, "INSERT INTO diff VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &ins,
			       NULL) != SQLITE_OK)
		goto fail;
	for (size_t i = 0; i < d->nq; i++) {
		const struct quantity *q = &d->q[i];

		if ((q->s[0].n == 0 && q->s[1].n == 0) || !shown(d, q))
			continue; /* nothing known of it in either run */
		sqlite3_bind_text(ins, 1, q->kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 2, q->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 3, is_count(q) ? "FLOPs"
					  : q->rank == KIND_STEP && strcmp(q->name, "mfu") == 0 ? "fraction" : "ms", -1,
				  SQLITE_STATIC);
		sqlite3_bind_int64(ins, 4, (sqlite3_int64)q->s[0].n);
		sqlite3_bind_int64(ins, 5, (sqlite3_int64)q->s[1].n);
		bind_double(ins, 6, q->s[0].mean, q->s[0].n > 0);
		bind_double(ins, 7, q->s[1].mean, q->s[1].n > 0);
		bind_double(ins, 8, diff_stats_sd(&q->s[0]), 1);
		bind_double(ins, 9, diff_stats_sd(&q->s[1]), 1);
		bind_double(ins, 10, q->change, 1);
		bind_double(ins, 11, q->lo, 1);
		bind_double(ins, 12, q->hi, 1);
		sqlite3_bind_text(ins, 13, q->verdict, -1, SQLITE_STATIC);
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
