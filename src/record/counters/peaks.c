/* The peaks a recording uses: spec, measured, user, and the choice. */
#include "peaks.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "util.h"

/* A measured peak this far above the spec means the spec is wrong for this
 * machine (its row or its frequency), not that the machine beat physics. */
#define SPEC_SUSPECT_RATIO 1.10

static const char *const mode_names[] = { "auto", "spec", "measured" };

int peaks_mode_parse(const char *s)
{
	for (size_t i = 0; s && i < ARRAY_SIZE(mode_names); i++)
		if (strcmp(s, mode_names[i]) == 0)
			return (int)i;
	return -EINVAL;
}

const char *peaks_mode_name(enum peaks_mode mode)
{
	return (unsigned)mode < ARRAY_SIZE(mode_names) ? mode_names[mode] : "?";
}

/* "378 GFLOP/s", "1.12 TB/s": three significant digits. */
static void fmt_rate(char *buf, size_t len, double v, const char *unit)
{
	static const char *const pre[] = { "", "k", "M", "G", "T", "P" };
	int i = 0;

	while (v >= 1000 && i < (int)ARRAY_SIZE(pre) - 1) {
		v /= 1000;
		i++;
	}
	snprintf(buf, len, "%.3g %s%s", v, pre[i], unit);
}

static const char *flop_unit(const char *dtype)
{
	int d = machine_dtype_parse(dtype);

	return d >= 0 && machine_dtype_is_integer((enum machine_dtype)d) ? "op/s" : "FLOP/s";
}

static struct peak_row *add_row(struct peaks *p, const char *kind, const char *dtype, const char *scope,
				double value, const char *source, const char *detail)
{
	struct peak_row *r;

	if (p->nrows >= PEAKS_MAX_ROWS)
		return NULL;
	r = &p->rows[p->nrows++];
	snprintf(r->kind, sizeof(r->kind), "%s", kind);
	snprintf(r->dtype, sizeof(r->dtype), "%s", dtype ? dtype : "");
	snprintf(r->scope, sizeof(r->scope), "%s", scope);
	r->value = value;
	snprintf(r->source, sizeof(r->source), "%s", source);
	/* a detail longer than the row holds is cut (what it says first
	 * matters most) */
	size_t n = strnlen(detail, sizeof(r->detail) - 1);
	memcpy(r->detail, detail, n);
	r->detail[n] = '\0';
	return r;
}

static const struct peak_row *find_row(const struct peaks *p, const char *kind, const char *dtype,
				       const char *scope, const char *source)
{
	for (int i = 0; i < p->nrows; i++) {
		const struct peak_row *r = &p->rows[i];
		if (strcmp(r->kind, kind) == 0 && strcmp(r->dtype, dtype ? dtype : "") == 0 &&
		    strcmp(r->scope, scope) == 0 && strcmp(r->source, source) == 0)
			return r;
	}
	return NULL;
}

static void warn(struct peaks *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct peaks *p, const char *fmt, ...)
{
	va_list ap;

	if (p->nwarn >= PEAKS_MAX_WARN)
		return;
	va_start(ap, fmt);
	vsnprintf(p->warn[p->nwarn++], sizeof(p->warn[0]), fmt, ap);
	va_end(ap);
}

/* The spec rows: every dtype the core has, for one core and for the
 * target's cores (SMT siblings share a core's FMA units: count once). */
static void spec_rows(struct peaks *p, const struct machine *m)
{
	char detail[640];
	double v;

	for (int d = 0; d < MACHINE_NDTYPES; d++) {
		const char *name = machine_dtype_name((enum machine_dtype)d);
		if (machine_peak_flops(m, (enum machine_dtype)d, 1, &v, detail, sizeof(detail)) == 0)
			add_row(p, "flops", name, "core", v, "spec", detail);
		if (m->ncores > 0 &&
		    machine_peak_flops(m, (enum machine_dtype)d, m->ncores, &v, detail, sizeof(detail)) == 0)
			add_row(p, "flops", name, "all", v, "spec", detail);
	}
	if (machine_peak_bw(m, &v, detail, sizeof(detail)) == 0)
		add_row(p, "bandwidth", NULL, "all", v, "spec", detail);
}

/* Append to the profile note, "; " between parts. */
static void note_add(struct peaks *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_add(struct peaks *p, const char *fmt, ...)
{
	size_t n = strlen(p->profile_note);
	va_list ap;

	if (n && n + 2 < sizeof(p->profile_note)) {
		memcpy(p->profile_note + n, "; ", 3);
		n += 2;
	}
	if (n >= sizeof(p->profile_note) - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(p->profile_note + n, sizeof(p->profile_note) - n, fmt, ap);
	va_end(ap);
}

/* "2026-11-27 15:28 UTC" */
static void fmt_date(char *buf, size_t len, int64_t unix_s)
{
	time_t t = (time_t)unix_s;
	struct tm tm;

	if (unix_s <= 0 || !gmtime_r(&t, &tm)) {
		snprintf(buf, len, "at an unknown date");
		return;
	}
	strftime(buf, len, "%Y-%m-%d %H:%M UTC", &tm);
}

/* "its threads ran 52% of the time, load average 2.10, 2026-11-27 15:28 UTC" */
static void disturbance(char *buf, size_t len, const struct profile_peak *q)
{
	char when[40], load[40] = "";

	fmt_date(when, sizeof(when), q->measured_unix_s);
	if (q->loadavg >= 0)
		snprintf(load, sizeof(load), ", load average %.2f", q->loadavg);
	if (q->cpu_share > 0)
		snprintf(buf, len, "its threads ran %.0f%% of the time%s, %s", q->cpu_share * 100, load, when);
	else
		snprintf(buf, len, "other tasks shared its CPUs%s, %s", load, when);
}

/* The fastest figure of @kind, @dtype ("" for bandwidth), @scope among
 * @pp, disturbed (@disturbed 1) or not. Bandwidth: the best (triad) row,
 * FLOPs: the fastest kernel. @kernel: only that kernel's. */
static const struct profile_peak *pick(const struct profile_peak *pp, int npp, const char *kind, const char *dtype,
				       const char *scope, int disturbed, const char *kernel)
{
	const struct profile_peak *best = NULL;
	int bw = strcmp(kind, "bandwidth") == 0;

	for (int i = 0; i < npp; i++) {
		const struct profile_peak *q = &pp[i];
		if (strcmp(q->kind, kind) || strcmp(q->scope, scope) || (!bw && strcmp(q->dtype, dtype)) ||
		    !q->disturbed != !disturbed || (kernel && strcmp(q->kernel, kernel)) || !(q->value > 0))
			continue;
		if (bw && !q->best)
			continue;
		if (!best || q->value > best->value)
			best = q;
	}
	return best;
}

/* The FLOP/s rows of dtype @name (measured_rows()); for the run's own
 * dtype (@mine), notes of what was disturbed. Returns 1 if something was. */
static int measured_flops(struct peaks *p, const struct machine *m, const struct profile_peak *pp, int npp,
			  const char *name, int mine)
{
	char detail[1400], rate[32], rate2[32], why[200];
	const struct profile_peak *all = pick(pp, npp, "flops", name, "all", 0, NULL);
	const struct profile_peak *all_d = pick(pp, npp, "flops", name, "all", 1, NULL);
	const struct profile_peak *core = pick(pp, npp, "flops", name, "core", 0, NULL);
	const struct profile_peak *core_d = pick(pp, npp, "flops", name, "core", 1, NULL);
	const struct profile_peak *core_all = NULL, *reason = NULL;
	int disturbed = 0;

	if (core) {
		add_row(p, "flops", name, "core", core->value, "measured", core->detail);
		/* the all-CPU figure of the same kernel, disturbed or not */
		core_all = pick(pp, npp, "flops", name, "all", 0, core->kernel);
		reason = core_all ? NULL : pick(pp, npp, "flops", name, "all", 1, core->kernel);
	}
	if (core && m->ncores > 0 && !core_all &&
	    (!all || core->value * m->ncores > all->value)) {
		fmt_rate(rate, sizeof(rate), core->value, flop_unit(name));
		if (reason) {
			fmt_rate(rate2, sizeof(rate2), reason->value, flop_unit(name));
			disturbance(why, sizeof(why), reason);
			snprintf(detail, sizeof(detail), "one core's %s x %g %s (the profile's all-CPU figure, %s, "
				 "was measured while other tasks used the CPUs: %s): %s", rate, m->ncores,
				 m->ncores == 1 ? "core" : "cores", rate2, why,
				 core->detail);
		} else {
			snprintf(detail, sizeof(detail), "one core's %s x %g %s (the profile's all-CPU figure is "
				 "for another CPU set): %s", rate, m->ncores, m->ncores == 1 ? "core" : "cores", core->detail);
		}
		add_row(p, "flops", name, "all", core->value * m->ncores, "measured", detail);
	} else if (all) {
		add_row(p, "flops", name, "all", all->value, "measured", all->detail);
	}
	if (!mine)
		return 0;
	if (all_d && (!all || all_d->value > all->value)) {
		fmt_rate(rate, sizeof(rate), all_d->value, flop_unit(name));
		disturbance(why, sizeof(why), all_d);
		note_add(p, "its %s figure for all %g CPUs (%s, %s kernel) was measured while other tasks used the "
			 "CPUs (%s)", name, all_d->ncpu, rate, all_d->kernel, why);
		disturbed |= 1;
	}
	if (core_d && (!core || core_d->value > core->value)) {
		fmt_rate(rate, sizeof(rate), core_d->value, flop_unit(name));
		disturbance(why, sizeof(why), core_d);
		note_add(p, "its one-core %s figure (%s, %s kernel) was measured while another task shared the "
			 "CPU (%s)", name, rate, core_d->kernel, why);
		disturbed |= 1;
	}
	return disturbed;
}

/* The bandwidth rows (measured_rows()) and notes of what was disturbed.
 * Returns 2 if something was, else 0. */
static int measured_bandwidth(struct peaks *p, const struct machine *m, const struct profile_peak *pp, int npp)
{
	char detail[1400], rate[32], rate2[32], why[200];
	const struct profile_peak *all = pick(pp, npp, "bandwidth", "", "all", 0, NULL);
	const struct profile_peak *all_d = pick(pp, npp, "bandwidth", "", "all", 1, NULL);
	const struct profile_peak *one = pick(pp, npp, "bandwidth", "", "core", 0, NULL);
	const struct profile_peak *one_d = pick(pp, npp, "bandwidth", "", "core", 1, NULL);
	const struct peak_row *spec = find_row(p, "bandwidth", NULL, "all", "spec");
	int disturbed = 0;

	if (one)
		add_row(p, "bandwidth", NULL, "core", one->value, "measured", one->detail);
	if (all) {
		add_row(p, "bandwidth", NULL, "all", all->value, "measured", all->detail);
	} else if (one && m->ncpu > 0) {
		double v = one->value * m->ncpu;
		int capped = spec && v > spec->value;
		char extra[400] = "";

		if (capped)
			v = spec->value;
		fmt_rate(rate, sizeof(rate), one->value, "B/s");
		if (all_d) {
			disturbance(why, sizeof(why), all_d);
			fmt_rate(rate2, sizeof(rate2), all_d->value, "B/s");
			snprintf(extra, sizeof(extra), "; the profile's figure for these CPUs, %s, was measured while "
				 "other tasks used them: %s", rate2, why);
		}
		if (m->ncpu == 1 && !capped)
			snprintf(detail, sizeof(detail), "one thread's %s, measured alone on one CPU (the target's CPUs are "
				 "%s, 1 CPU)%s: %s", rate, m->allowed_cpus, extra, one->detail);
		else
			snprintf(detail, sizeof(detail), "one thread's %s x %g CPUs%s, an upper bound (bandwidth grows "
				 "less than linearly with threads; 'taskset -c %s mfu-calibrate' measures these CPUs)%s: %s",
				 rate, m->ncpu, capped ? ", capped at the spec" : "", m->allowed_cpus, extra, one->detail);
		add_row(p, "bandwidth", NULL, "all", v, "measured", detail);
	}
	if (all_d && (!all || all_d->value > all->value)) {
		fmt_rate(rate, sizeof(rate), all_d->value, "B/s");
		disturbance(why, sizeof(why), all_d);
		note_add(p, "its memory bandwidth figure for %s (%s) was measured while other tasks used the CPUs (%s)",
			 all_d->cpus, rate, why);
		disturbed |= 2;
	}
	if (one_d && (!one || one_d->value > one->value)) {
		fmt_rate(rate, sizeof(rate), one_d->value, "B/s");
		disturbance(why, sizeof(why), one_d);
		note_add(p, "its one-thread memory bandwidth figure (%s) was measured while another task shared the CPU "
			 "(%s)", rate, why);
		disturbed |= 2;
	}
	return disturbed;
}

/* The measured rows that apply, never a disturbed one: the profile's own,
 * and for FLOPs of the target's cores, where the profile has no
 * undisturbed all-CPU figure of the kernel that is fastest on one core
 * (another CPU set's profile, or a figure disturbed by other tasks), one
 * core's figure times the cores: each core has its own FMA units, so the
 * sum is what the cores can reach together (turbo drops with more busy
 * cores, which only makes it higher than the truth: a conservative
 * ceiling). Bandwidth of the CPU set without its own figure: one thread's
 * times its CPUs, an upper bound (bandwidth grows less than linearly with
 * threads), never above the spec. What was disturbed, for @dtype and the
 * bandwidth, goes into the profile note. */
static int measured_rows(struct peaks *p, const struct machine *m, const struct profile_peak *pp, int npp,
			 const char *dtype)
{
	int disturbed = 0;

	for (int i = 0; i < npp; i++) {
		const struct profile_peak *q = &pp[i];
		if (q->best && strcmp(q->kind, "clock") == 0 && q->value > 0)
			p->clock_hz = q->value;
	}
	for (int d = 0; d < MACHINE_NDTYPES; d++) {
		const char *name = machine_dtype_name((enum machine_dtype)d);
		disturbed |= measured_flops(p, m, pp, npp, name, strcmp(name, dtype) == 0);
	}
	return disturbed | measured_bandwidth(p, m, pp, npp);
}

/* The bandwidth measured on each CPU set that holds the target's CPUs
 * and more (@rq->machine), the fastest undisturbed triad of each set, as a
 * row of scope "machine" whose detail starts with the set ("CPUs 0-1 "):
 * what ranks bound to parts of it reach together (job_peak.h). */
static void machine_rows(struct peaks *p, const struct machine *m, const struct peaks_request *rq)
{
	char detail[1400];

	for (int i = 0; i < rq->nmachine; i++) {
		const struct profile_peak *q = &rq->machine[i], *best = q;
		int first = 1;
		if (strcmp(q->kind, "bandwidth") || !q->best || q->disturbed || !(q->value > 0) ||
		    q->ncpu < m->ncpu - 1e-6)
			continue;
		for (int j = 0; j < rq->nmachine; j++) {
			const struct profile_peak *o = &rq->machine[j];
			if (strcmp(o->kind, "bandwidth") || !o->best || o->disturbed || !(o->value > 0) ||
			    o->ncpu < m->ncpu - 1e-6 || strcmp(o->cpus, q->cpus))
				continue;
			first &= j >= i;
			best = o->value > best->value ? o : best;
		}
		if (!first)
			continue;
		snprintf(detail, sizeof(detail), "CPUs %s (%d threads together; the target's CPUs %s are among them): "
			 "%s", best->cpus, best->threads, m->allowed_cpus, best->detail);
		add_row(p, "bandwidth", NULL, "machine", best->value, "measured", detail);
	}
}

/* A measured row's detail without the "measured: " mfu-calibrate starts
 * it with: the source text says "measured" once. */
static const char *bare(const char *detail)
{
	return strncmp(detail, "measured: ", 10) == 0 ? detail + 10 : detail;
}

/* Choose between @spec and @meas (either may be NULL) for @what, by @mode,
 * and write the value and its source text. @slice (bandwidth only): why
 * the target's CPUs are a slice of their sockets, or NULL: then auto
 * takes what they were measured to reach, lower or higher than the
 * socket's spec, instead of the higher of the two. Returns 1 when --peak
 * measured found no measured peak and took the spec one (the caller says
 * so, once for both peaks), else 0. */
static int choose(struct peaks *p, enum peaks_mode mode, const char *what, const char *unit,
		  const struct peak_row *spec, const struct peak_row *meas, const char *profile_why,
		  const char *slice, const char *cpus, double *value, char *src, size_t srclen)
{
	char a[32], b[32];

	*value = 0;
	src[0] = '\0';
	if (spec && meas) {
		double ratio = meas->value / spec->value;
		fmt_rate(a, sizeof(a), meas->value, unit);
		fmt_rate(b, sizeof(b), spec->value, unit);
		if (ratio > SPEC_SUSPECT_RATIO && mode == PEAKS_SPEC)
			warn(p, "the measured %s peak (%s) is %.2fx the spec peak (%s): the spec is wrong for "
			     "this machine (its CPU row, or its frequency: a VM's TSC rate is not its core "
			     "clock, and cores turbo); --peak spec keeps it, so utilizations may exceed 100%%",
			     what, a, ratio, b);
		else if (ratio > SPEC_SUSPECT_RATIO) {
			size_t l = strlen(p->spec_note);
			snprintf(p->spec_note + l, sizeof(p->spec_note) - l, "%sthe measured %s peak (%s) is %.2fx "
				 "the spec peak (%s): the spec is wrong for this machine (its CPU row, or its "
				 "frequency: a VM's TSC rate is not its core clock, and cores turbo); the measured "
				 "peak is used", l ? "; " : "", what, a, ratio, b);
		}
		if (mode == PEAKS_AUTO && slice) {
			*value = meas->value;
			snprintf(src, srclen, "measured (auto: memory bandwidth is shared by a socket, and the target's "
				 "CPUs are a slice of theirs: %s; the ceiling is what these CPUs reach, not the socket's "
				 "spec of %s, %.2fx of it): %s", slice, b, ratio, bare(meas->detail));
		} else if (mode == PEAKS_SPEC || (mode == PEAKS_AUTO && spec->value >= meas->value)) {
			*value = spec->value;
			if (mode == PEAKS_AUTO)
				snprintf(src, srclen, "%s (auto: the measured peak, %s, is %.2fx of it)",
					 spec->detail, a, ratio);
			else
				snprintf(src, srclen, "%s", spec->detail);
		} else {
			*value = meas->value;
			if (mode == PEAKS_AUTO)
				snprintf(src, srclen, "measured (auto: %.2fx the spec peak of %s, which it replaces): %s",
					 ratio, b, bare(meas->detail));
			else
				snprintf(src, srclen, "measured: %s", bare(meas->detail));
		}
	} else if (spec) {
		*value = spec->value;
		if (mode == PEAKS_SPEC)
			snprintf(src, srclen, "%s", spec->detail);
		else if (mode == PEAKS_MEASURED)
			snprintf(src, srclen, "%s (--peak measured asked for a measured peak, and there is none: %s)",
				 spec->detail, profile_why && profile_why[0] ? profile_why : "the profile has none");
		else if (slice)
			snprintf(src, srclen, "%s (auto: the target's CPUs are a slice of the socket: %s, and no memory "
				 "bandwidth was measured on them (%s): the socket's spec overstates what they reach, so MBU "
				 "reads low; 'taskset -c %s mfu-calibrate' measures them)", spec->detail, slice,
				 profile_why && profile_why[0] ? profile_why : "the profile has none", cpus);
		else
			snprintf(src, srclen, "%s (%s: no measured peak: %s)", spec->detail, peaks_mode_name(mode),
				 profile_why && profile_why[0] ? profile_why : "the profile has none");
		return mode == PEAKS_MEASURED;
	} else if (meas && mode != PEAKS_SPEC) {
		*value = meas->value;
		snprintf(src, srclen, "measured (%s: no spec peak for this CPU): %s", peaks_mode_name(mode),
			 bare(meas->detail));
	}
	return 0;
}

/* The profile note: what the latest calibration did with disturbed
 * figures, and which of the profile's figures cannot be used (set by
 * measured_rows() before this, as parts of the note). */
static void profile_note(struct peaks *p, const struct profile_status *st)
{
	char disturbed[sizeof(p->profile_note)], when[40], since[40], load[40] = "";

	snprintf(disturbed, sizeof(disturbed), "%s", p->profile_note);
	p->profile_note[0] = '\0';
	if (st && st->last.kept > 0) {
		fmt_date(when, sizeof(when), st->last.unix_s);
		fmt_date(since, sizeof(since), st->last.kept_since);
		if (st->last.loadavg >= 0)
			snprintf(load, sizeof(load), ", load average %.2f", st->last.loadavg);
		note_add(p, "the machine profile's latest calibration (%s%s) was disturbed by other tasks in %d of its %d "
			 "measurements (its threads ran as little as %.0f%% of the time): %d of those figures were not saved, "
			 "the earlier undisturbed ones (measured since %s) stand in for them", when, load,
			 st->last.disturbed, st->last.measurements, st->last.lowest_share * 100, st->last.kept, since);
	}
	if (disturbed[0])
		note_add(p, "the machine profile has figures measured while other tasks ran, which are never used as "
			 "peaks: %s; re-measure on a quiet machine with 'mfu-calibrate' (its undisturbed figures replace "
			 "these)", disturbed);
}

/* Rows of scope "choice": for each dtype with a FLOP/s peak, the peak the
 * mode picks (the run's dtype's: p->flops, --peak-flops included), its
 * source spec, measured or user and its detail the choice's source text,
 * so that mfu-report --dtype picks another dtype's peak the way this
 * recording would have. The other dtypes' warnings and notes go to a
 * scratch copy: only the run's dtype is said on stderr. */
static int choice_rows(struct peaks *p, const struct peaks_request *rq, const char *profile_why,
		       const char *cpus)
{
	char dtypes[8][8], src[sizeof(p->flops_source)], what[80];
	struct peaks *scratch = malloc(sizeof(*scratch));
	int nd = 0;

	if (!scratch)
		return -ENOMEM;
	for (int i = 0; i < p->nrows; i++) {
		const struct peak_row *r = &p->rows[i];
		int seen = 0;
		for (int j = 0; j < nd; j++)
			seen |= strcmp(dtypes[j], r->dtype) == 0;
		if (!seen && nd < 8 && strcmp(r->kind, "flops") == 0 && strcmp(r->scope, "all") == 0)
			snprintf(dtypes[nd++], sizeof(dtypes[0]), "%s", r->dtype);
	}
	for (int j = 0; j < nd; j++) {
		const struct peak_row *spec = find_row(p, "flops", dtypes[j], "all", "spec");
		const struct peak_row *meas = find_row(p, "flops", dtypes[j], "all", "measured");
		double v;

		if (strcmp(dtypes[j], rq->dtype) == 0) {
			v = p->flops;
			snprintf(src, sizeof(src), "%s", p->flops_source);
		} else {
			scratch->nwarn = 0;
			scratch->spec_note[0] = '\0';
			snprintf(what, sizeof(what), "%s %s", dtypes[j], flop_unit(dtypes[j]));
			choose(scratch, rq->mode, what, flop_unit(dtypes[j]), spec, meas, profile_why, NULL, cpus, &v, src,
			       sizeof(src));
		}
		if (v > 0)
			add_row(p, "flops", dtypes[j], "choice", v,
				strncmp(src, "user", 4) == 0 ? "user" : spec && v == spec->value ? "spec" : "measured", src);
	}
	free(scratch);
	return 0;
}

int peaks_choose(struct peaks *p, const struct machine *m, const struct peaks_request *rq,
		 const struct profile_peak *pp, int npp, const char *profile_why)
{
	char what[32], slice[400];
	int no_flops, no_bw, slice_of, disturbed;

	if (!p || !m || !rq || !rq->dtype || (npp > 0 && !pp))
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	/* the spec text names the measured clock beside the nominal one */
	struct machine mc = *m;
	for (int i = 0; i < npp; i++)
		if (pp[i].best && strcmp(pp[i].kind, "clock") == 0 && pp[i].value > 0) {
			mc.clock_hz = pp[i].value;
			snprintf(mc.clock_hz_source, sizeof(mc.clock_hz_source), "mfu-calibrate");
		}
	spec_rows(p, &mc);
	disturbed = measured_rows(p, &mc, pp, npp, rq->dtype);
	machine_rows(p, m, rq);
	profile_note(p, rq->profile);
	/* a profile whose figures were disturbed has none to use: the note
	 * says which, the sources say so */
	const char *dis_why = "the profile's figures for it were measured while other tasks ran (the profile note "
			      "says which): run mfu-calibrate on a quiet machine";
	slice_of = machine_bw_slice(m, slice, sizeof(slice)) == 1;

	snprintf(what, sizeof(what), "%s %s", rq->dtype, flop_unit(rq->dtype));
	no_flops = choose(p, rq->mode, what, flop_unit(rq->dtype), find_row(p, "flops", rq->dtype, "all", "spec"),
			  find_row(p, "flops", rq->dtype, "all", "measured"), disturbed & 1 ? dis_why : profile_why,
			  NULL, m->allowed_cpus,
			  &p->flops, p->flops_source, sizeof(p->flops_source)) && !(rq->user_flops > 0);
	no_bw = choose(p, rq->mode, "memory bandwidth", "B/s", find_row(p, "bandwidth", NULL, "all", "spec"),
		       find_row(p, "bandwidth", NULL, "all", "measured"), disturbed & 2 ? dis_why : profile_why,
		       slice_of ? slice : NULL,
		       m->allowed_cpus, &p->bw, p->bw_source, sizeof(p->bw_source)) && !(rq->user_bw > 0);
	/* --peak measured and nothing measured applies: one plain line, not
	 * a note per peak that reads as if all were well */
	if (no_flops || no_bw)
		warn(p, "--peak measured, but %s (%s): %s the spec peak%s instead; run mfu-calibrate to "
		     "measure this machine, or pass --peak spec to use the spec on purpose",
		     no_flops && no_bw ? "this machine has no measured peaks"
		     : no_flops ? "this machine has no measured FLOP/s peak for the dtype"
				: "this machine has no measured memory bandwidth peak",
		     profile_why && profile_why[0] ? profile_why : "the profile has none",
		     no_flops && no_bw ? "MFU, HFU and MBU use" : no_flops ? "MFU and HFU use" : "MBU uses",
		     no_flops && no_bw ? "s" : "");

	if (rq->user_flops > 0) {
		p->flops = rq->user_flops;
		snprintf(p->flops_source, sizeof(p->flops_source), "user: --peak-flops %.6g", rq->user_flops);
		add_row(p, "flops", rq->dtype, "all", rq->user_flops, "user", "given with --peak-flops");
	}
	if (rq->user_bw > 0) {
		p->bw = rq->user_bw;
		snprintf(p->bw_source, sizeof(p->bw_source), "user: --peak-bw %.6g", rq->user_bw);
		add_row(p, "bandwidth", NULL, "all", rq->user_bw, "user", "given with --peak-bw");
	}
	return choice_rows(p, rq, disturbed & 1 ? dis_why : profile_why, m->allowed_cpus);
}

int peaks_profile_disturbed(const struct profile_peak *pp, int npp, const char *dtype, char *why, size_t len)
{
	int flops_ok = 0, flops_bad = 0, bw_ok = 0, bw_bad = 0;

	for (int i = 0; i < npp; i++) {
		const struct profile_peak *q = &pp[i];
		if (strcmp(q->kind, "flops") == 0 && strcmp(q->dtype, dtype) == 0) {
			flops_ok |= !q->disturbed;
			flops_bad |= q->disturbed;
		} else if (strcmp(q->kind, "bandwidth") == 0) {
			bw_ok |= !q->disturbed;
			bw_bad |= q->disturbed;
		}
	}
	flops_bad &= !flops_ok;
	bw_bad &= !bw_ok;
	if (!flops_bad && !bw_bad)
		return 0;
	snprintf(why, len, "the machine profile's %s%s%s were measured while other tasks ran", flops_bad ? dtype : "",
		 flops_bad ? (bw_bad ? " FLOP/s and memory bandwidth figures" : " FLOP/s figures") : "",
		 !flops_bad && bw_bad ? "memory bandwidth figures" : "");
	return 1;
}

int peaks_stat_busy(const char *a, const char *b, double *busy)
{
	unsigned long long x[2][10];
	const char *line[2] = { a, b };
	double total = 0, idle = 0;

	if (!a || !b || !busy)
		return -EINVAL;
	for (int k = 0; k < 2; k++) {
		memset(x[k], 0, sizeof(x[k]));
		/* cpu user nice system idle iowait irq softirq steal guest guest_nice */
		if (sscanf(line[k], "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &x[k][0], &x[k][1],
			   &x[k][2], &x[k][3], &x[k][4], &x[k][5], &x[k][6], &x[k][7], &x[k][8], &x[k][9]) < 4)
			return -EINVAL;
	}
	/* guest time is already in user: the first eight fields are all */
	for (int i = 0; i < 8; i++) {
		if (x[1][i] < x[0][i])
			return -EINVAL;
		total += (double)(x[1][i] - x[0][i]);
	}
	idle = (double)(x[1][3] - x[0][3]) + (double)(x[1][4] - x[0][4]);
	if (!(total > 0))
		return -EINVAL;
	*busy = (total - idle) / total;
	return 0;
}

/* The first line of /proc/stat: all CPUs' times. */
static int stat_line(char *buf, int len)
{
	FILE *f = fopen("/proc/stat", "re");
	int err = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		err = -EIO;
	fclose(f);
	return err;
}

int peaks_machine_busy(double seconds, double *busy)
{
	char a[512], b[512];
	struct timespec ts = { .tv_sec = (time_t)seconds, .tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9) };
	int err;

	err = stat_line(a, sizeof(a));
	if (err)
		return err;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	err = stat_line(b, sizeof(b));
	if (err)
		return err;
	return peaks_stat_busy(a, b, busy);
}

void peaks_calibrate_program(char *buf, size_t len)
{
	char self[PATH_MAX], cand[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			/* installed: the same bin directory */
			snprintf(cand, sizeof(cand), "%s/mfu-calibrate", self);
			if (access(cand, X_OK) == 0) {
				snprintf(buf, len, "%s", cand);
				return;
			}
#ifdef MFU_BUILD_CALIBRATE
			/* run from the build tree: src/record next to src/calibrate */
			if (strcmp(self, MFU_BUILD_RECORD_DIR) == 0 && access(MFU_BUILD_CALIBRATE, X_OK) == 0) {
				snprintf(buf, len, "%s", MFU_BUILD_CALIBRATE);
				return;
			}
#endif
		}
	}
	snprintf(buf, len, "mfu-calibrate");
}

int peaks_calibrate(const char *program, const char *profile, const struct asuser *as, int quiet, char *why,
		    size_t len)
{
	const char *argv[6];
	int argc = 0, status, err, devnull;
	char how[64];

	argv[argc++] = program;
	argv[argc++] = "--quick";
	if (profile) {
		argv[argc++] = "--profile";
		argv[argc++] = profile;
	}
	argv[argc] = NULL;
	/* the table goes nowhere; warnings (a busy machine) reach the user,
	 * but for -q (a failure is said by the recorder) */
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	err = child_run(argv, as, devnull, quiet ? devnull : -1, "mfu-record", &status, why, len);
	if (devnull >= 0)
		close(devnull);
	if (err)
		return err;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	snprintf(why, len, "%s --quick %s", program, child_status_text(status, how, sizeof(how)));
	return -ECHILD;
}
