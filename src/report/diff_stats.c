/* mfu-report --diff: the statistics (diff.h): moments, Student's t,
 * Welch's interval, batch means and the log-scale interval of a ratio. */
#include "diff.h"

#include <errno.h>
#include <math.h>

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
