/* The peaks a recording uses: spec, measured, user, and the choice. */
#include "peaks.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
	snprintf(r->detail, sizeof(r->detail), "%s", detail);
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

/* The measured rows that apply: the profile's own, and for FLOPs of the
 * target's cores where the profile has only one core's figure (it was
 * measured on another CPU set), that figure times the cores: each core has
 * its own FMA units, so the sum is what the cores can reach together
 * (turbo drops with more busy cores, which only makes it higher than the
 * truth: a conservative ceiling). */
static void measured_rows(struct peaks *p, const struct machine *m, const struct profile_peak *pp, int npp)
{
	char detail[640], rate[32];

	for (int i = 0; i < npp; i++) {
		const struct profile_peak *q = &pp[i];
		if (!q->best)
			continue;
		if (strcmp(q->kind, "clock") == 0) {
			if (q->value > 0)
				p->clock_hz = q->value;
			continue;
		}
		if (strcmp(q->kind, "flops") && strcmp(q->kind, "bandwidth"))
			continue; /* a kind this recorder does not know */
		add_row(p, q->kind, strcmp(q->kind, "flops") == 0 ? q->dtype : NULL, q->scope, q->value,
			"measured", q->detail);
	}
	for (int i = 0; i < npp; i++) {
		const struct profile_peak *q = &pp[i];
		if (!q->best || strcmp(q->kind, "flops") || strcmp(q->scope, "core") || !(m->ncores > 0) ||
		    find_row(p, "flops", q->dtype, "all", "measured"))
			continue;
		fmt_rate(rate, sizeof(rate), q->value, flop_unit(q->dtype));
		snprintf(detail, sizeof(detail), "one core's %s x %g cores (the profile's all-CPU figure is for "
			 "another CPU set): %s", rate, m->ncores, q->detail);
		add_row(p, "flops", q->dtype, "all", q->value * m->ncores, "measured", detail);
	}
}

/* Choose between @spec and @meas (either may be NULL) for @what, by @mode;
 * writes the value and its source text. */
/* A measured row's detail without the "measured: " mfu-calibrate starts
 * it with: the source text says "measured" once. */
static const char *bare(const char *detail)
{
	return strncmp(detail, "measured: ", 10) == 0 ? detail + 10 : detail;
}

/* Returns 1 when --peak measured found no measured peak and took the spec
 * one (the caller says so, once for both peaks), else 0. */
static int choose(struct peaks *p, enum peaks_mode mode, const char *what, const char *unit,
		  const struct peak_row *spec, const struct peak_row *meas, const char *profile_why,
		  double *value, char *src, size_t srclen)
{
	char a[32], b[32];

	*value = 0;
	src[0] = '\0';
	if (spec && meas) {
		double ratio = meas->value / spec->value;
		fmt_rate(a, sizeof(a), meas->value, unit);
		fmt_rate(b, sizeof(b), spec->value, unit);
		if (ratio > SPEC_SUSPECT_RATIO)
			warn(p, "the measured %s peak (%s) is %.2fx the spec peak (%s): the spec is wrong for "
			     "this machine (its CPU row, or its frequency: a VM's TSC rate is not its core "
			     "clock, and cores turbo)%s", what, a, ratio, b,
			     mode == PEAKS_SPEC ? "; --peak spec keeps it, so utilizations may exceed 100%" :
			     "; the measured peak is used");
		if (mode == PEAKS_SPEC || (mode == PEAKS_AUTO && spec->value >= meas->value)) {
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
		else
			snprintf(src, srclen, "%s (%s: no measured peak: %s)", spec->detail, peaks_mode_name(mode),
				 profile_why && profile_why[0] ? profile_why : "the profile has none");
		return mode == PEAKS_MEASURED;
	} else if (meas && mode != PEAKS_SPEC) {
		*value = meas->value;
		snprintf(src, srclen, "measured (%s: no spec peak for this CPU): %s", peaks_mode_name(mode),
			 bare(meas->detail));
	}
	(void)what;
	return 0;
}

int peaks_choose(struct peaks *p, const struct machine *m, const struct peaks_request *rq,
		 const struct profile_peak *pp, int npp, const char *profile_why)
{
	char what[32];
	int no_flops, no_bw;

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
	measured_rows(p, &mc, pp, npp);

	snprintf(what, sizeof(what), "%s %s", rq->dtype, flop_unit(rq->dtype));
	no_flops = choose(p, rq->mode, what, flop_unit(rq->dtype), find_row(p, "flops", rq->dtype, "all", "spec"),
			  find_row(p, "flops", rq->dtype, "all", "measured"), profile_why, &p->flops,
			  p->flops_source, sizeof(p->flops_source)) && !(rq->user_flops > 0);
	no_bw = choose(p, rq->mode, "memory bandwidth", "B/s", find_row(p, "bandwidth", NULL, "all", "spec"),
		       find_row(p, "bandwidth", NULL, "all", "measured"), profile_why, &p->bw, p->bw_source,
		       sizeof(p->bw_source)) && !(rq->user_bw > 0);
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
	return 0;
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

int peaks_calibrate(const char *program, const char *profile, const struct asuser *as, char *why,
		    size_t len)
{
	const char *argv[6];
	int argc = 0, status, err, devnull;
	pid_t pid;

	argv[argc++] = program;
	argv[argc++] = "--quick";
	if (profile) {
		argv[argc++] = "--profile";
		argv[argc++] = profile;
	}
	argv[argc] = NULL;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		snprintf(why, len, "cannot start %s: %s", program, strerror(-err));
		return err;
	}
	if (pid == 0) {
		sigset_t none;
		/* the table goes nowhere; warnings (a busy machine) reach the user */
		devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (devnull >= 0)
			dup2(devnull, STDOUT_FILENO);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		err = asuser_become(as);
		if (err) {
			fprintf(stderr, "mfu-record: cannot become uid %d to calibrate: %s\n", (int)as->uid,
				strerror(-err));
			_exit(126);
		}
		execvp(program, (char *const *)argv);
		fprintf(stderr, "mfu-record: cannot run %s: %s\n", program, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			err = -errno;
			snprintf(why, len, "waiting for %s: %s", program, strerror(-err));
			return err;
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		snprintf(why, len, "%s --quick exited with status %d", program, WEXITSTATUS(status));
	else
		snprintf(why, len, "%s --quick was killed by signal %d", program,
			 WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return -ECHILD;
}
