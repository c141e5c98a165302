/* mfu-report --diff --fail-on: the gates and their check. */
#include "diff_impl.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		struct quantity *q = diff_quantity_find(d, g->kind, g->name, strlen(g->name));
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
		diff_row_label(q, label, sizeof(label));
		if (is_mfu(q))
			fprintf(out, "mfu-report: --fail-on '%s': MFU %s %s (CI %s to %s)\n", g->label, q->verdict,
				diff_pct(c, q->change), diff_pct(lo, q->lo), diff_pct(hi, q->hi));
		else if (isfinite(q->change) && isfinite(q->lo))
			fprintf(out, "mfu-report: --fail-on '%s': %s %s %s per step (%s, CI %s to %s)\n", g->label,
				label, q->verdict, diff_msec(ms, q->delta), diff_pct(c, q->change), diff_pct(lo, q->lo), diff_pct(hi, q->hi));
		else
			fprintf(out, "mfu-report: --fail-on '%s': %s %s %s per step\n", g->label, label, q->verdict,
				diff_msec(ms, q->delta));
	}
	return tripped ? 1 : unknown ? -ENOENT : 0;
}
