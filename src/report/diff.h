/* mfu-report --diff BASE NEW: did a change make the steps faster?
 *
 * analyses/diff.sql gives each run's per-step values (step time, MFU, each
 * phase's time per step, the breakdown's parts); this module reduces each
 * quantity of each run to its mean and variance in one pass (Welford), and
 * compares the two: the change of the mean (new / base - 1), its 95%
 * confidence interval (Welch's t interval on the difference of the means,
 * divided by the base mean) and a verdict (faster, slower, higher, lower,
 * no significant change). docs/report.md, "--diff", gives the method. */
#ifndef MFU_REPORT_DIFF_H
#define MFU_REPORT_DIFF_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* Count, mean and sum of squared deviations of a series, updated one value
 * at a time (Welford): exact enough for a million steps, no storage. */
struct diff_stats {
	uint64_t n;
	double mean, m2;
};

/* Add @x to @s. */
void diff_stats_add(struct diff_stats *s, double x);

/* Make @s the statistics of its values and @other's together (the
 * pairwise update of Chan et al.): a series of k zeros is {k, 0, 0}. */
void diff_stats_merge(struct diff_stats *s, const struct diff_stats *other);

/* The sample standard deviation (n - 1 in the denominator); NAN when n < 2. */
double diff_stats_sd(const struct diff_stats *s);

/* Welch's interval on mean(new) - mean(base). */
struct diff_interval {
	double d;      /* new mean - base mean */
	double lo, hi; /* its two-sided confidence interval */
	double df;     /* Welch-Satterthwaite degrees of freedom (INFINITY when
			* both variances are 0: the interval is the point d) */
};

/* The @level (e.g. 0.95) interval of @new's mean minus @base's. Returns 0,
 * or -EDOM when either series has fewer than 2 values (no variance: the
 * interval is unknown). */
int diff_welch(const struct diff_stats *base, const struct diff_stats *new_, double level,
	       struct diff_interval *out);

/* The @p quantile (0.5 < p < 1) of Student's t distribution with @df
 * degrees of freedom (any real df > 0; INFINITY gives the normal quantile):
 * the t with P(T <= t) = p, found by bisection on the regularized
 * incomplete beta function (continued fraction), to about 1e-12. */
double diff_t_quantile(double p, double df);

struct diff;

/* An empty comparison. Returns 0 or -ENOMEM. */
int diff_new(struct diff **out);

/* Read the per-step values of one run (@side 0: BASE, 1: NEW) from @db
 * with analyses/diff.sql, as @db shows its tables (the --skip-steps views
 * included). Returns 0, -ENOMEM, or -EIO with SQLite's message in @err. */
int diff_read(struct diff *d, int side, sqlite3 *db, char *err, size_t errlen);

/* The comparison as a prepared SELECT over a private in-memory table, one
 * row per quantity (columns kind, name, unit, base_n, new_n, base, new,
 * base_sd, new_sd, change, change_lo, change_hi, verdict), for the report
 * formats; valid until diff_free(). A quantity neither run has a value of
 * is left out. Returns 0, -ENOMEM, or -EIO with SQLite's message in @err. */
int diff_rows(struct diff *d, sqlite3_stmt **stmt, char *err, size_t errlen);

/* One line for people: the steps compared and every significant change,
 * or that there is none (after diff_rows(); NULL before). */
const char *diff_summary(const struct diff *d);

/* Free @d and its table; NULL is fine. */
void diff_free(struct diff *d);

#endif
