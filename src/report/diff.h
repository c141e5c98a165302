/* mfu-report --diff BASE NEW: did a change make the steps faster?
 *
 * analyses/diff.sql gives each run's per-step values (step time, MFU, each
 * phase's time per step, the breakdown's parts); this module reduces each
 * quantity of each run, in step order, to its mean and the variance of
 * that mean by batch means (consecutive steps are alike: a drift, a busy
 * neighbour), and compares the two: the change of the mean (new / base -
 * 1) with its 95% confidence interval on the log scale (so a time's stays
 * above -100%), the change in ms per step and its share of the step
 * time's change, and a verdict (faster, slower, higher, lower, no
 * significant change) that names only changes above a minimum effect.
 * docs/report.md, "--diff", gives the method and a worked example. */
#ifndef MFU_REPORT_DIFF_H
#define MFU_REPORT_DIFF_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>
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

/* A change under this fraction of the base run's mean step time (of the
 * base value, for MFU and counts) is never named, however narrow its
 * interval: one run of each cannot show the variation between runs, which
 * on a shared machine is of this order (docs/report.md). */
#define DIFF_MIN_EFFECT 0.02

/* The verdict of a row whose interval clears 0 but whose change is under
 * the minimum effect: not named in the summary, not a --fail-on failure. */
#define DIFF_SMALL "too small to name"

/* A series reduced by batch means: @k batches of consecutive values. */
struct diff_batch {
	size_t n, k;  /* values, batches (k < 2: no variance known) */
	double mean;  /* the mean of all n values; NAN when n = 0 */
	double se2;   /* the squared standard error of that mean: the sample
		       * variance of the k batch means / k; NAN when k < 2 */
};

/* The number of batches for @n values: 10 from 20 values on, n / 2
 * (batches of 2) from 4, else n (each value its own batch). */
size_t diff_batches(size_t n);

/* Batch means of @x[0..@n) in their order into @out. Returns 0, or -EDOM
 * when there are fewer than 2 batches (out->se2 NAN). */
int diff_batch_means(const double *x, size_t n, struct diff_batch *out);

/* The @level interval of the ratio of the means minus 1, new / base - 1,
 * computed on the log scale: log(mN / mB) +- t * sqrt(se2B / mB^2 + se2N /
 * mN^2) (delta method), t with Welch-Satterthwaite degrees of freedom
 * from k - 1 of each. out->d is the change, lo and hi its bounds (above
 * -1). Returns 0, -ERANGE when a mean is not above 0, -EDOM when a run
 * has fewer than 2 batches. */
int diff_ratio(const struct diff_batch *base, const struct diff_batch *new_, double level, struct diff_interval *out);

/* The @level interval of mN - mB from the batch means (Welch). Returns 0
 * or -EDOM when a run has fewer than 2 batches. */
int diff_difference(const struct diff_batch *base, const struct diff_batch *new_, double level,
		    struct diff_interval *out);

struct diff;

/* An empty comparison. Returns 0 or -ENOMEM. */
int diff_new(struct diff **out);

/* Read the per-step values of one run (@side 0: BASE, 1: NEW) from @db
 * with analyses/diff.sql, as @db shows its tables (the --skip-steps views
 * included). Returns 0, -ENOMEM, or -EIO with SQLite's message in @err. */
int diff_read(struct diff *d, int side, sqlite3 *db, char *err, size_t errlen);

/* The comparison as a prepared SELECT over a private in-memory table, one
 * row per quantity (columns kind, name, unit, base_n, new_n, base, new,
 * base_sd, new_sd, change, change_lo, change_hi, delta, delta_low,
 * delta_high, share, min_effect, batches, preempted, verdict), for the report
 * formats; valid until diff_free(). A quantity neither run has a value of
 * is left out. Returns 0, -ENOMEM, or -EIO with SQLite's message in @err. */
int diff_rows(struct diff *d, sqlite3_stmt **stmt, char *err, size_t errlen);

/* The columns of diff_rows()'s table the table and markdown formats show
 * by default (format_set_columns): those read first, so that it fits 120
 * columns; --columns all shows the others (csv and json carry them all). */
#define DIFF_COLUMNS "kind,name,base,new,change,change_lo,change_hi,verdict"

/* The columns to show for --columns @list (format_set_columns): the
 * default when @list is NULL, NULL (every column) for "all", else @list. */
const char *diff_columns(const char *list);

/* Every name of @list (comma-separated; "all" or NULL: nothing to check)
 * is a column of diff_rows()'s table. Returns 0, or -EINVAL with the first
 * unknown name in @err. */
int diff_check_columns(const char *list, char *err, size_t errlen);

/* One line for people: the steps compared and every significant change,
 * or that there is none (after diff_rows(); NULL before). */
const char *diff_summary(const struct diff *d);

/* What makes the two runs doubtful to compare (another program, other
 * arguments, machine or peaks), one line; NULL when nothing (after
 * diff_rows()). */
const char *diff_warning(const struct diff *d);

/* Add the gates of --fail-on @spec: comma-separated FIGURE>N% or
 * FIGURE>Nms, FIGURE one of step, mfu, phase:NAME, breakdown:PART. Returns
 * 0, or -EINVAL with why in @err (-ENOMEM). */
int diff_fail_on(struct diff *d, const char *spec, char *err, size_t errlen);

/* After diff_rows(): check the gates, one line on @out for each figure
 * that got significantly worse by more than its threshold. Returns 1 when
 * one did, -ENOENT when none did but a gate names a figure neither run
 * has, else 0. */
int diff_gate(struct diff *d, FILE *out);

/* Free @d and its table; NULL is fine. */
void diff_free(struct diff *d);

#endif
