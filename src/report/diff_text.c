/* mfu-report --diff: the lines for people, the summary above the table
 * and the warning that the runs differ. */
#include "diff_impl.h"
#include "format.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Append printf text to the malloc'd *@buf; 0 or -ENOMEM. */
int diff_say(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
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
 * digits, "+1e+302%", rather than 300 digits cut by diff_say()'s line. */
const char *diff_pct(char *buf, double v)
{
	snprintf(buf, 32, fabs(100 * v) < 1e6 ? "%+.1f%%" : "%+.3g%%", 100 * v);
	return buf;
}

/* A time in ms to 3 significant digits, "+0.301 ms", into @buf (32 bytes). */
const char *diff_msec(char *buf, double v)
{
	snprintf(buf, 32, "%+.3g ms", v);
	return buf;
}

const char *diff_row_label(const struct quantity *q, char *buf, size_t len)
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

	diff_row_label(q, label, sizeof(label));
	if (is_contention(q))
		return diff_say(buf, len, cap, " the machine: %s in NEW, the thread preempted %s per step (another task had "
			   "the CPU; taken out of the times above)", q->verdict, diff_msec(ms, q->delta));
	if (strncmp(q->verdict, "only in", 7) == 0)
		return diff_say(buf, len, cap, " %s %s (%s per step)", label, q->verdict, diff_msec(ms, q->delta));
	if (!isfinite(q->change) || !isfinite(q->lo))
		return diff_say(buf, len, cap, " %s %s", label, q->verdict);
	if (!is_time(q))
		return diff_say(buf, len, cap, " %s %s %s (CI %s to %s)", label, q->verdict, diff_pct(c, q->change),
			   diff_pct(lo, q->lo), diff_pct(hi, q->hi));
	if (!is_wall(q) && isfinite(q->share))
		snprintf(share, sizeof(share), ", %.0f%% of the step's change", 100 * q->share);
	return diff_say(buf, len, cap, " %s %s %s per step%s (%s, CI %s to %s)", label, q->verdict, diff_msec(ms, q->delta),
		   share, diff_pct(c, q->change), diff_pct(lo, q->lo), diff_pct(hi, q->hi));
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

/* What follows argv0 in a JSON argv: '["./app","-x"]' -> ',"-x"]' (NULL
 * for NULL). */
static const char *args_after_argv0(const char *json)
{
	const char *s = json ? strchr(json, '"') : NULL, *e;

	if (!s)
		return json;
	for (e = s + 1; *e && *e != '"'; e++)
		if (*e == '\\' && e[1])
			e++;
	return *e ? e + 1 : e;
}

/* The program a run's argv0 names, as a path from / when it has a slash
 * (a relative one joined to the run's @cwd, "." and ".." taken out), so
 * that ./app run from /src and /src/app are one program; a bare name
 * (found in PATH) as it is. Into @buf. */
static const char *program(const char *json, const char *cwd, char *buf, size_t len)
{
	char arg[PATH_MAX], path[2 * PATH_MAX];
	size_t n = 0;

	argv0(json, arg, sizeof(arg));
	if (!strchr(arg, '/') || (arg[0] != '/' && !cwd)) {
		snprintf(buf, len, "%s", arg);
		return buf;
	}
	snprintf(path, sizeof(path), "%s/%s", arg[0] == '/' ? "" : cwd, arg);
	/* lexically: each component onto buf */
	buf[0] = '\0';
	for (char *save = NULL, *c = strtok_r(path, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			while (n > 0 && buf[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
			buf[n] = '\0';
			continue;
		}
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "/%s", c);
		if (n >= len) {
			snprintf(buf, len, "%s", arg);
			return buf;
		}
	}
	return buf;
}

int diff_warn(struct diff *d)
{
	size_t len = 0, cap = 0;
	char a[PATH_MAX], b[PATH_MAX];
	int rc = 0, n = 0;

	/* other arguments are what an A/B usually is: a note, not a warning */
	d->args_differ = differs(args_after_argv0(d->who[0][0]), args_after_argv0(d->who[1][0]));
	if (differs(program(d->who[0][0], d->who[0][5], a, sizeof(a)),
		    program(d->who[1][0], d->who[1][5], b, sizeof(b))))
		rc = diff_say(&d->warning, &len, &cap, "different programs (BASE %.100s, NEW %.100s)", a, b), n++;
	if (!rc && (differs(d->who[0][1], d->who[1][1]) || differs(d->who[0][2], d->who[1][2])))
		rc = diff_say(&d->warning, &len, &cap, "%sdifferent machines (BASE %.60s, %.60s; NEW %.60s, %.60s)",
			 n++ ? "; " : "", d->who[0][1] ? d->who[0][1] : "?", d->who[0][2] ? d->who[0][2] : "?",
			 d->who[1][1] ? d->who[1][1] : "?", d->who[1][2] ? d->who[1][2] : "?");
	if (!rc && !d->emulated[0] && !d->emulated[1] &&
	    (differs(d->who[0][3], d->who[1][3]) || differs(d->who[0][4], d->who[1][4])))
		rc = diff_say(&d->warning, &len, &cap,
			 "%sdifferent peaks (FLOP/s %s vs %s, bytes/s %s vs %s: MFU does not compare)", n++ ? "; " : "",
			 d->who[0][3] ? d->who[0][3] : "unknown", d->who[1][3] ? d->who[1][3] : "unknown",
			 d->who[0][4] ? d->who[0][4] : "unknown", d->who[1][4] ? d->who[1][4] : "unknown");
	return rc;
}

/* A run without steps: the whole runs side by side (run_flops), one value
 * each, so no interval and no verdict. */
static int say_whole(struct diff *d, size_t *len, size_t *cap)
{
	static const char *const what[4] = { "wall time", "CPU time", "library FLOP", "run MFU" };
	char a[64], b[64];
	int rc = 0, n = 0;

	for (int i = 0; i < 4 && !rc; i++) {
		double x = d->whole[0][i], y = d->whole[1][i];

		if (isnan(x) || isnan(y))
			continue;
		if (i == 3) {
			snprintf(a, sizeof(a), "%.3g%%", 100 * x);
			snprintf(b, sizeof(b), "%.3g%%", 100 * y);
		} else if (i < 2) {
			snprintf(a, sizeof(a), "%.4g s", x / 1e3);
			snprintf(b, sizeof(b), "%.4g s", y / 1e3);
		} else {
			format_eng(a, sizeof(a) - 8, x);
			format_eng(b, sizeof(b) - 8, y);
			strcat(a, "FLOP");
			strcat(b, "FLOP");
		}
		rc = diff_say(&d->summary, len, cap, "%s%s %s -> %s", n++ ? "; " : " The whole runs, one value each "
			      "(no interval: a run without steps has no repeats to tell noise from change): ", what[i],
			      a, b);
		if (!rc && x != 0)
			rc = diff_say(&d->summary, len, cap, " (%+.1f%%)", 100 * (y / x - 1));
	}
	return rc || !n ? rc : diff_say(&d->summary, len, cap, ".");
}

/* The line above the table: what was compared and what changed. */
int diff_summarize(struct diff *d)
{
	size_t len = 0, cap = 0, nchanged = 0, nunknown = 0, nrows = 0, nlist = 0;
	const struct quantity **list = NULL;
	int rc = 0;

	if (d->warning)
		rc = diff_say(&d->summary, &len, &cap, "Warning: the runs differ: %s. ", d->warning);
	else if (d->args_differ)
		rc = diff_say(&d->summary, &len, &cap, "The commands' arguments differ (run.command). ");
	if (rc)
		return rc;
	if (d->nsteps[0] == 0 || d->nsteps[1] == 0) {
		rc = diff_say(&d->summary, &len, &cap, "No complete step in %s: nothing to compare step by step.",
			      d->nsteps[0] ? "NEW" : d->nsteps[1] ? "BASE" : "either run");
		return rc ? rc : say_whole(d, &len, &cap);
	}
	rc = diff_say(&d->summary, &len, &cap, "%llu base vs %llu new steps, 95%% intervals by batch means%s, changes "
		 "under %.0f%% of the step time not named:", (unsigned long long)d->nsteps[0],
		 (unsigned long long)d->nsteps[1], d->net ? ", times net of preemption" : "", 100 * DIFF_MIN_EFFECT);
	if (!rc && (d->emulated[0] || d->emulated[1]))
		rc = diff_say(&d->summary, &len, &cap, " %s emulated, so only counted FLOPs are compared (an "
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
		else if (strcmp(q->verdict, "no significant change") != 0 && strcmp(q->verdict, DIFF_SMALL) != 0)
			list[nlist++] = q;
	}
	if (nlist)
		qsort(list, nlist, sizeof(*list), contribution_cmp);
	for (size_t i = 0; !rc && i < nlist; i++) {
		if (is_contention(list[i]))
			continue;
		if (nchanged++)
			rc = diff_say(&d->summary, &len, &cap, ";");
		if (!rc)
			rc = say_change(&d->summary, &len, &cap, list[i]);
	}
	if (!rc && nchanged == 0)
		rc = diff_say(&d->summary, &len, &cap, " no significant change in any of the %zu rows",
			 nrows - nunknown - (nlist > 0));
	else if (!rc)
		rc = diff_say(&d->summary, &len, &cap, "; no significant change elsewhere");
	/* last, the contention row (ranked last): not the program's change */
	if (!rc && nlist && is_contention(list[nlist - 1]))
		rc = diff_say(&d->summary, &len, &cap, ";") || say_change(&d->summary, &len, &cap, list[nlist - 1]);
	free(list);
	if (!rc && nunknown)
		rc = diff_say(&d->summary, &len, &cap, " (%zu rows unknown: see their verdicts)", nunknown);
	if (!rc && (d->nsteps[0] < 10 || d->nsteps[1] < 10) && d->nsteps[0] >= 2 && d->nsteps[1] >= 2)
		rc = diff_say(&d->summary, &len, &cap, "; few steps: the intervals are wide");
	if (!rc && nchanged)
		rc = diff_say(&d->summary, &len, &cap, ". One run each: the intervals hold the variation within "
			 "each run, not between runs; record again before trusting a small change");
	if (!rc)
		rc = diff_say(&d->summary, &len, &cap, ".");
	return rc;
}
