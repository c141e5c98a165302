/* mfu-report --diff's statistics: the t quantile, Welford's running
 * moments and Welch's interval, against published values. */
#include "check.h"
#include "report/diff.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Two-sided 95% (p = 0.975) and 99% (p = 0.995) quantiles of Student's t:
 * 17 digits, computed with mpmath (40 digits) from the regularized
 * incomplete beta function, an independent implementation. */
static void test_t_quantile_table(void)
{
	static const struct {
		int line;
		double p, df, want;
	} rows[] = {
		{ __LINE__, 0.975, 1, 12.706204736174693 },
		{ __LINE__, 0.975, 2, 4.3026527297494618 },
		{ __LINE__, 0.975, 3, 3.1824463052837084 },
		{ __LINE__, 0.975, 4, 2.7764451051977935 },
		{ __LINE__, 0.975, 5, 2.5705818356363148 },
		{ __LINE__, 0.975, 10, 2.2281388519862742 },
		{ __LINE__, 0.975, 29, 2.0452296421327039 },
		{ __LINE__, 0.975, 30, 2.0422724563012379 },
		{ __LINE__, 0.975, 58, 2.0017174841452357 },
		{ __LINE__, 0.975, 100, 1.9839715185235519 },
		{ __LINE__, 0.975, 1000, 1.9623390808264081 },
		{ __LINE__, 0.975, 1e6, 1.9599663568141067 },
		{ __LINE__, 0.975, INFINITY, 1.9599639845400539 },
		{ __LINE__, 0.995, 1, 63.656741162871524 },
		{ __LINE__, 0.995, 10, 3.1692726726169507 },
		{ __LINE__, 0.95, 7, 1.8945786050900068 },
		/* Welch's df is not a whole number: qt(0.975, 2.5), qt(0.975, 17.3) */
		{ __LINE__, 0.975, 2.5, 3.5746548420036818 },
		{ __LINE__, 0.975, 17.3, 2.1070320037534677 },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double got = diff_t_quantile(rows[i].p, rows[i].df);

		CHECK_ROW(fabs(got - rows[i].want) <= 1e-9 * rows[i].want, rows[i].line);
		if (!(fabs(got - rows[i].want) <= 1e-9 * rows[i].want))
			fprintf(stderr, "  t(%g, %g): got %.15g want %.15g\n", rows[i].p, rows[i].df, got,
				rows[i].want);
	}
	CHECK(isnan(diff_t_quantile(0.4, 10)));
	CHECK(isnan(diff_t_quantile(1, 10)));
	CHECK(isnan(diff_t_quantile(0.975, 0)));
}

static void test_stats(void)
{
	struct diff_stats s = { 0 };
	const double x[] = { 2, 4, 4, 4, 5, 5, 7, 9 };

	CHECK(isnan(diff_stats_sd(&s)));
	for (size_t i = 0; i < sizeof(x) / sizeof(x[0]); i++)
		diff_stats_add(&s, x[i]);
	CHECK_EQ_INT(s.n, 8);
	CHECK_NEAR(s.mean, 5.0, 1e-15);
	/* sum of squared deviations 32: sample variance 32 / 7 */
	CHECK_NEAR(diff_stats_sd(&s), sqrt(32.0 / 7), 1e-14);

	/* merged in two parts, or with k zeros: as if added one by one */
	struct diff_stats one = { 0 }, part = { 0 }, zeros = { .n = 3 };
	for (size_t i = 0; i < 8; i++)
		diff_stats_add(i < 3 ? &one : &part, x[i]);
	diff_stats_merge(&one, &part);
	CHECK_EQ_INT(one.n, 8);
	CHECK_NEAR(one.mean, s.mean, 1e-14);
	CHECK_NEAR(one.m2, s.m2, 1e-12);
	diff_stats_merge(&one, &zeros);
	for (int i = 0; i < 3; i++)
		diff_stats_add(&s, 0);
	CHECK_EQ_INT(one.n, 11);
	CHECK_NEAR(one.mean, s.mean, 1e-14);
	CHECK_NEAR(one.m2, s.m2, 1e-12);
	struct diff_stats empty = { 0 };
	diff_stats_merge(&empty, &zeros);
	CHECK(empty.n == 3 && empty.mean == 0 && empty.m2 == 0);

	/* a large offset keeps its precision (a naive sum of squares would not) */
	struct diff_stats big = { 0 };
	for (int i = 0; i < 1000; i++)
		diff_stats_add(&big, 1e9 + (i % 2));
	CHECK_NEAR(big.mean, 1e9 + 0.5, 1e-6);
	/* 1000 values 0/1 around the mean: squared deviations 0.25 each */
	CHECK_NEAR(diff_stats_sd(&big), sqrt(250.0 / 999), 1e-6);
}

static void test_welch(void)
{
	struct diff_stats a = { 0 }, b = { 0 };
	struct diff_interval ci;
	/* a: 10 11 12 13 14 (mean 12, var 2.5); b: 14 16 18 20 22 24 (mean 19,
	 * var 14): se^2 = 0.5 + 14/6, df = se^4 / (0.5^2/4 + (14/6)^2/5) */
	for (int i = 0; i < 5; i++)
		diff_stats_add(&a, 10 + i);
	for (int i = 0; i < 6; i++)
		diff_stats_add(&b, 14 + 2 * i);
	CHECK_EQ_INT(diff_welch(&a, &b, 0.95, &ci), 0);
	double se2 = 0.5 + 14.0 / 6, df = se2 * se2 / (0.25 / 4 + (14.0 / 6) * (14.0 / 6) / 5);
	CHECK_NEAR(ci.d, 7.0, 1e-12);
	CHECK_NEAR(ci.df, df, 1e-12);
	/* df = 6.6406...: qt(0.975, df) from the quantile, checked above */
	double t = diff_t_quantile(0.975, df);
	CHECK_NEAR(ci.lo, 7 - t * sqrt(se2), 1e-12);
	CHECK_NEAR(ci.hi, 7 + t * sqrt(se2), 1e-12);
	CHECK(t > 2.365 && t < 2.447); /* between qt(.975, 7) and qt(.975, 6) */

	/* the same series twice: difference 0, an interval around it */
	CHECK_EQ_INT(diff_welch(&a, &a, 0.95, &ci), 0);
	CHECK(ci.d == 0 && ci.lo < 0 && ci.hi > 0);

	/* no variance: the difference is exact */
	struct diff_stats c = { 0 }, e = { 0 };
	for (int i = 0; i < 3; i++) {
		diff_stats_add(&c, 5);
		diff_stats_add(&e, 6);
	}
	CHECK_EQ_INT(diff_welch(&c, &e, 0.95, &ci), 0);
	CHECK(ci.lo == 1 && ci.hi == 1 && isinf(ci.df));

	/* values of 1e150 (declared FLOPs a target made up): variances of
	 * 1e296 whose squares overflow; df stays finite, as for the same
	 * series scaled down */
	struct diff_stats hb = { 0 }, hn = { 0 }, sb = { 0 }, sn = { 0 };
	struct diff_interval sci;
	for (int i = 0; i < 8; i++) {
		diff_stats_add(&hb, 1e150 * (1 + i * 1e-3));
		diff_stats_add(&hn, 3e150 * (1 + i * 2e-3));
		diff_stats_add(&sb, 1 + i * 1e-3);
		diff_stats_add(&sn, 3 * (1 + i * 2e-3));
	}
	CHECK_EQ_INT(diff_welch(&hb, &hn, 0.95, &ci), 0);
	CHECK_EQ_INT(diff_welch(&sb, &sn, 0.95, &sci), 0);
	CHECK(isfinite(ci.df) && isfinite(ci.lo) && isfinite(ci.hi));
	CHECK_NEAR(ci.df, sci.df, 1e-9 * sci.df);
	CHECK_NEAR(ci.lo / 1e150, sci.lo, 1e-9);
	CHECK(ci.lo > 0);

	/* one value: unknown */
	struct diff_stats one = { 0 };
	diff_stats_add(&one, 3);
	CHECK_EQ_INT(diff_welch(&one, &a, 0.95, &ci), -EDOM);
	CHECK(isnan(ci.lo) && isnan(ci.hi));
}

/* docs/report.md's worked example: 8 steps alike in pairs (10 10 12 12
 * ...), NEW 1.5 ms slower in each. Per step (Welch, as if independent) the
 * interval is +3.2% to +24.1%; by batch means (4 batches of 2) on the log
 * scale -4.3% to +34.9%: no significant change. Values by hand (Python,
 * Simpson's t quantile), docs/report.md. */
static void test_batch_means_example(void)
{
	const double b[] = { 10, 10, 12, 12, 10, 10, 12, 12 };
	double n[8];
	struct diff_batch bb, bn;
	struct diff_interval ci;

	for (int i = 0; i < 8; i++)
		n[i] = b[i] + 1.5;
	CHECK_EQ_INT(diff_batches(1), 1);
	CHECK_EQ_INT(diff_batches(3), 3);
	CHECK_EQ_INT(diff_batches(8), 4);
	CHECK_EQ_INT(diff_batches(19), 9);
	CHECK_EQ_INT(diff_batches(20), 10);
	CHECK_EQ_INT(diff_batches(1000000), 10);
	CHECK_EQ_INT(diff_batch_means(b, 8, &bb), 0);
	CHECK_EQ_INT(diff_batch_means(n, 8, &bn), 0);
	CHECK_EQ_INT(bb.k, 4);
	CHECK_NEAR(bb.mean, 11, 1e-12);
	CHECK_NEAR(bb.se2, 1.0 / 3, 1e-12);
	CHECK_NEAR(bn.mean, 12.5, 1e-12);
	CHECK_EQ_INT(diff_ratio(&bb, &bn, 0.95, &ci), 0);
	CHECK_NEAR(ci.d, 1.5 / 11, 1e-12);
	CHECK_NEAR(ci.df, 5.9045530268963216, 1e-9);
	CHECK_NEAR(ci.lo, -0.042965547500674155, 1e-8);
	CHECK_NEAR(ci.hi, 0.34929553547132797, 1e-8);

	/* the difference's interval (a mean of 0): d +- t * sqrt(1/3 + 1/3) */
	CHECK_EQ_INT(diff_difference(&bb, &bn, 0.95, &ci), 0);
	CHECK_NEAR(ci.d, 1.5, 1e-12);
	CHECK_NEAR(ci.df, 6, 1e-9);
	CHECK_NEAR(ci.hi - ci.d, diff_t_quantile(0.975, 6) * sqrt(2.0 / 3), 1e-9);

	/* a time's interval stays above -100%, however wide */
	const double wide[] = { 1, 1, 100, 100, 1, 1, 100, 100 }, small[] = { 1, 1, 1, 1, 1, 1, 1, 1.1 };
	CHECK_EQ_INT(diff_batch_means(wide, 8, &bb), 0);
	CHECK_EQ_INT(diff_batch_means(small, 8, &bn), 0);
	CHECK_EQ_INT(diff_ratio(&bb, &bn, 0.95, &ci), 0);
	CHECK(ci.lo > -1 && ci.lo < ci.d && ci.hi > ci.d);

	/* a mean of 0, one batch: no ratio, no interval */
	const double zeros[] = { 0, 0, 0, 0 };
	CHECK_EQ_INT(diff_batch_means(zeros, 4, &bn), 0);
	CHECK_EQ_INT(diff_ratio(&bb, &bn, 0.95, &ci), -ERANGE);
	CHECK_EQ_INT(diff_batch_means(b, 1, &bn), -EDOM);
	CHECK(isnan(bn.se2) && bn.mean == 10);
}

int main(void)
{
	test_t_quantile_table();
	test_stats();
	test_welch();
	test_batch_means_example();
	return check_status();
}
