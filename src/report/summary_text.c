/* The summary for people (summary_text.h). */
#include "summary_text.h"

#include "analysis.h"
#include "format.h"
#include "format_impl.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The label column of the table form: two spaces, the label, padding. */
#define LABEL_INDENT 2
#define VALUE_COL 16
/* A peak's source gets this many lines at most. */
#define SOURCE_LINES 2

/* The summary row's columns the text reads, by name. */
enum col {
	C_STEPS, C_WALL_MS, C_MFU, C_PEAK_FLOPS, C_PEAK_SOURCE, C_PEAK_BW, C_DTYPE, C_FLOPS_SOURCE,
	C_LIB_FLOPS, C_LIB_RATIO, C_LIB_COUNTING, C_RUN_LIB_FLOPS, C_RUN_LIB_CALLS, C_RUN_MFU, C_BUSY_MFU,
	C_LIB_IN_STEPS, C_MEAN_MS, C_P50_MS, C_P95_MS, C_HFU, C_MBU, C_CPU_UTIL, C_MODEL_FLOPS,
	C_MODEL_BYTES, C_HW_FLOPS, C_DRAM_BYTES, C_DRAM_BW_UTIL, C_PEAK_BW_SOURCE, C_NCPU, C_RUN_MS,
	C_INCOMPLETE, C_E2E_MFU, C_MODEL_FLOPS_PER_S, C_HW_FLOPS_PER_S, C_MODEL_BYTES_PER_S, C_SKIPPED,
	C_NCORES, C_LOST, C_ANOMALIES, C_EXIT_STATUS, C_EXIT_SIGNAL, C_STATE, C_HW_FP64, C_HW_FP32,
	C_HW_FP16, C_EMULATED, C_MFU_STEPS, C_HFU_STEPS, C_COMMON_STEPS, C_MFU_COMMON, C_HFU_COMMON,
	C_RUN_MODE, C_COUNT
};

static const char *const col_names[C_COUNT] = {
	"steps", "wall_ms", "mfu", "peak_flops", "peak_source", "peak_bw", "dtype", "flops_source",
	"lib_flops", "lib_ratio", "lib_counting", "run_lib_flops", "run_lib_calls", "run_mfu", "busy_mfu",
	"lib_in_steps", "mean_step_ms", "p50_step_ms", "p95_step_ms", "hfu", "mbu", "cpu_util", "model_flops",
	"model_bytes", "hw_flops", "dram_bytes", "dram_bw_util", "peak_bw_source", "ncpu", "run_ms",
	"incomplete_steps", "e2e_mfu", "model_flops_per_s", "hw_flops_per_s", "model_bytes_per_s",
	"skipped_steps", "ncores", "lost_records", "anomalies", "exit_status", "exit_signal", "state",
	"hw_flops_fp64", "hw_flops_fp32", "hw_flops_fp16", "emulated", "mfu_steps", "hfu_steps",
	"common_steps", "mfu_common", "hfu_common", "run_mode",
};

struct row {
	sqlite3_stmt *st;
	int idx[C_COUNT];
};

struct text {
	char *buf; /* the whole summary, written at once */
	size_t len, cap;
	int md;
	int oom;
	const char *group; /* the title to write before the next line */
};

static int column_map(sqlite3_stmt *st, int *idx)
{
	int n = sqlite3_column_count(st), found = 0;

	for (int c = 0; c < C_COUNT; c++) {
		idx[c] = -1;
		for (int i = 0; i < n; i++) {
			const char *name = sqlite3_column_name(st, i);
			if (name && strcmp(name, col_names[c]) == 0) {
				idx[c] = i;
				found++;
				break;
			}
		}
	}
	return found;
}

int summary_text_handles(sqlite3_stmt *stmt)
{
	int idx[C_COUNT];

	/* a job's summary has job_mfu and no peak_bw_source */
	return column_map(stmt, idx) == C_COUNT;
}

static int known(const struct row *r, enum col c)
{
	return r->idx[c] >= 0 && sqlite3_column_type(r->st, r->idx[c]) != SQLITE_NULL;
}

static double num(const struct row *r, enum col c)
{
	return known(r, c) ? sqlite3_column_double(r->st, r->idx[c]) : NAN;
}

static long long inum(const struct row *r, enum col c)
{
	return known(r, c) ? sqlite3_column_int64(r->st, r->idx[c]) : 0;
}

static const char *str(const struct row *r, enum col c)
{
	return known(r, c) ? (const char *)sqlite3_column_text(r->st, r->idx[c]) : NULL;
}

/* What run_ms spans: "exec to exit" for a launched program; attached
 * (-p), "attach to exit", or "attach to detach" when the recording left
 * it running (--duration). */
static const char *run_span(const struct row *r)
{
	const char *mode = str(r, C_RUN_MODE), *state = str(r, C_STATE);

	if (!mode || strcmp(mode, "attach") != 0)
		return "exec to exit";
	return state && strcmp(state, "detached") == 0 ? "attach to detach" : "attach to exit";
}

/* ---- numbers as the tables print them ---- */

/* "12.345 ms" */
static const char *ms(char *buf, double v)
{
	size_t n = fmt_fixed(buf, v, 3);

	memcpy(buf + n, " ms", 4);
	return buf;
}

/* a utilization: "6.80%", "150.00%!" above 100%, "impossible" far above */
static const char *util(char *buf, double v)
{
	size_t n;

	if (v > 100.0) {
		strcpy(buf, "impossible");
		return buf;
	}
	n = fmt_fixed(buf, v * 100, 2);
	buf[n++] = '%';
	if (v > 1)
		buf[n++] = '!';
	buf[n] = '\0';
	return buf;
}

/* "544 GFLOP/s", "512 FLOP/s": engineering notation and a unit */
static const char *eng(char *buf, double v, const char *unit)
{
	size_t n = format_eng(buf, FMT_NUM_MAX, v);

	if (*unit)
		snprintf(buf + n, 64 - n, "%s%s", buf[n - 1] >= 'A' ? "" : " ", unit);
	return buf;
}

/* ---- lines ---- */

static void put(struct text *t, const char *s, size_t n)
{
	if (!t->oom && buf_append(&t->buf, &t->len, &t->cap, s, n))
		t->oom = 1;
}

static void puts_(struct text *t, const char *s)
{
	put(t, s, strlen(s));
}

static void spaces(struct text *t, size_t n)
{
	while (n--)
		put(t, " ", 1);
}

/* Write @s escaped for the format, wrapped: the first line starts at
 * column @first (the caller wrote what comes before it), the others at
 * @indent; every line at most SUMMARY_TEXT_WIDTH columns. @max_lines > 0:
 * the text is cut to that many lines and ends with @cut_tail. */
static void wrapped(struct text *t, const char *s, size_t first, size_t indent, int max_lines, const char *cut_tail)
{
	char *e = NULL;
	size_t elen = 0, ecap = 0, col = first, i = 0;
	int line = 1;

	if (format_sanitize(&e, &elen, &ecap, (const unsigned char *)s, strlen(s), t->md) < 0) {
		t->oom = 1;
		return;
	}
	while (i < elen) {
		size_t room = SUMMARY_TEXT_WIDTH - col, rest = format_text_width(e + i, elen - i), take, next;
		int last = max_lines > 0 && line == max_lines;

		if (rest <= room) {
			put(t, e + i, elen - i);
			break;
		}
		if (last) {
			/* the line ends with the tail, cut at a space */
			size_t tail = strlen(cut_tail), fit = room > tail + 1 ? room - tail - 1 : 0;
			take = format_text_bytes(e + i, elen - i, fit);
			while (take > 0 && e[i + take] != ' ' && e[i + take - 1] != ' ')
				take--;
			while (take > 0 && e[i + take - 1] == ' ')
				take--;
			put(t, e + i, take);
			put(t, " ", 1);
			puts_(t, cut_tail);
			break;
		}
		take = format_wrap_line(e + i, elen - i, room, &next);
		put(t, e + i, take);
		put(t, "\n", 1);
		i += next;
		spaces(t, indent);
		col = indent;
		line++;
	}
	put(t, "\n", 1);
	free(e);
}

/* Open a group: its title is written with its first line, so that a group
 * with nothing known has none. */
static void group(struct text *t, const char *title)
{
	t->group = title;
}

static void group_title(struct text *t)
{
	if (!t->group)
		return;
	if (t->md) {
		puts_(t, "\n**");
		puts_(t, t->group);
		puts_(t, "**\n\n");
	} else {
		puts_(t, t->group);
		puts_(t, "\n");
	}
	t->group = NULL;
}

/* A label and its value, the value wrapped in its column. */
static void field_cut(struct text *t, const char *label, const char *value, int max_lines, const char *tail)
{
	group_title(t);
	if (t->md) {
		puts_(t, "- ");
		puts_(t, label);
		puts_(t, ": ");
		wrapped(t, value, 4 + strlen(label), 2, max_lines, tail);
		return;
	}
	spaces(t, LABEL_INDENT);
	puts_(t, label);
	spaces(t, VALUE_COL > LABEL_INDENT + strlen(label) ? VALUE_COL - LABEL_INDENT - strlen(label) : 1);
	wrapped(t, value, VALUE_COL, VALUE_COL, max_lines, tail);
}

static void field(struct text *t, const char *label, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void field(struct text *t, const char *label, const char *fmt, ...)
{
	char value[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	field_cut(t, label, value, 0, NULL);
}

/* A paragraph under a group: the verdict, a note. */
static void paragraph(struct text *t, const char *bullet, const char *s)
{
	size_t indent = t->md ? 0 : LABEL_INDENT;

	group_title(t);
	spaces(t, indent);
	puts_(t, bullet);
	wrapped(t, s, indent + strlen(bullet), indent + (bullet[0] ? 2 : 0), 0, NULL);
}

/* ---- what the row does not hold ---- */

struct deadline {
	unsigned calls, limit;
	int hit;
};

/* SQLite calls this every 1000 virtual-machine instructions of a
 * statement: a nonzero return interrupts it. */
static int past_budget(void *arg)
{
	struct deadline *d = arg;

	if (++d->calls < d->limit)
		return 0;
	d->hit = 1;
	return 1;
}

/* The breakdown's verdict within SUMMARY_VERDICT_KOPS, else a line that
 * says where it is. NULL (no breakdown in the build) or a malloc'd string
 * in *@text. */
static int verdict(sqlite3 *db, char **text, char *err, size_t errlen)
{
	const struct analysis *a = analysis_find("breakdown");
	struct deadline d = { 0, SUMMARY_VERDICT_KOPS, 0 };
	int rc;

	*text = NULL;
	if (!a)
		return 0;
	sqlite3_progress_handler(db, 1000, past_budget, &d);
	rc = analysis_verdict(a, db, text, err, errlen);
	sqlite3_progress_handler(db, 0, NULL, NULL);
	if (d.hit) {
		free(*text);
		*text = strdup("Not worked out for the summary (too many steps and samples to place each "
			       "sample in its step here): mfu-report breakdown says it.");
		return *text ? 0 : -ENOMEM;
	}
	return rc;
}

/* The CPU model and clock of the run. */
static void machine_line(struct text *t, sqlite3 *db, const struct row *r)
{
	sqlite3_stmt *st = NULL;
	char line[512] = "", n1[FMT_NUM_MAX], n2[FMT_NUM_MAX];
	size_t len = 0;

	if (known(r, C_NCPU)) {
		fmt_fixed(n1, num(r, C_NCPU), num(r, C_NCPU) == floor(num(r, C_NCPU)) ? 0 : 2);
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s", n1);
		if (known(r, C_NCORES)) {
			fmt_fixed(n2, num(r, C_NCORES), num(r, C_NCORES) == floor(num(r, C_NCORES)) ? 0 : 2);
			len += (size_t)snprintf(line + len, sizeof(line) - len, " (%s core%s)", n2,
						num(r, C_NCORES) == 1 ? "" : "s");
		}
	}
	if (sqlite3_prepare_v2(db, "SELECT cpu_name, uarch, clock_hz, nominal_hz FROM run WHERE id = 1", -1, &st,
			       NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		const char *uarch = (const char *)sqlite3_column_text(st, 1);
		int clock = sqlite3_column_type(st, 2) != SQLITE_NULL ? 2 : sqlite3_column_type(st, 3) != SQLITE_NULL ? 3 : -1;

		if (name && len < sizeof(line))
			len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s", len ? ", " : "", name);
		if (uarch && len < sizeof(line))
			len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s", len ? (name ? " " : ", ") : "",
						uarch);
		if (clock > 0 && sqlite3_column_double(st, clock) > 0 && len < sizeof(line))
			len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s %.2f GHz", len ? ", " : "",
						clock == 2 ? "clock" : "nominal clock", sqlite3_column_double(st, clock) / 1e9);
	}
	sqlite3_finalize(st);
	if (line[0])
		field_cut(t, "CPUs", line, 0, NULL);
}

/* The first clause of @s (@n bytes): up to ',', ';', '(' or " in /". */
static size_t clause(const char *s, size_t n)
{
	size_t k = 0;

	while (k < n && !strchr(",;(", s[k]) && strncmp(s + k, " in /", 5) != 0)
		k++;
	while (k > 0 && s[k - 1] == ' ')
		k--;
	return k;
}

/* The short reason of a note on counters that could not be opened: of
 * its text before the first ':' and after it, the first clause that says
 * what is not there ("no hardware PMU", "counter 'cycles' could not be
 * opened"), else the first clause; 0 when that is still long. */
static int short_reason(const char *text, char *buf, size_t len)
{
	const char *colon = strchr(text, ':');
	const char *part[2] = { text, colon ? colon + 1 : NULL };
	size_t plen[2] = { colon ? (size_t)(colon - text) : strlen(text), colon ? strlen(colon + 1) : 0 };
	const char *best = NULL;
	size_t n = 0;

	for (int i = 0; i < 2 && part[i]; i++) {
		const char *p = part[i];
		size_t k;

		while (*p == ' ' && plen[i] > 0)
			p++, plen[i]--;
		k = clause(p, plen[i]);
		if (!best) {
			best = p;
			n = k;
		}
		if (strncmp(p, "no ", 3) == 0 || memmem(p, k, "not ", 4) || memmem(p, k, "cannot", 6)) {
			best = p;
			n = k;
			break;
		}
	}
	if (!best || n == 0 || n > 48 || n + 1 > len)
		return 0;
	memcpy(buf, best, n);
	buf[n] = '\0';
	return 1;
}

/* ---- the summary ---- */

struct notes {
	char reasons[512]; /* of the unknown line */
	char **kept;       /* the notes shown under the summary */
	size_t nkept, cap;
};

static void notes_free(struct notes *n)
{
	for (size_t i = 0; i < n->nkept; i++)
		free(n->kept[i]);
	free(n->kept);
}

/* Read the notes (notes.sql, its summary variant: without the phases'):
 * the counters that could not be opened become the reasons of the unknown
 * line; the peaks' own notes are left out (the machine lines say their
 * sources), and so is the measured-above-spec note when the source says
 * it; the rest are kept, in order. */
static int notes_read(sqlite3 *db, const struct row *r, struct notes *n, char *err, size_t errlen)
{
	const struct analysis *a = analysis_find("notes");
	sqlite3_stmt *st = NULL;
	const char *src = str(r, C_PEAK_SOURCE);
	int rc;

	if (!a)
		return 0;
	rc = analysis_prepare_summary(a, db, 1, &st, err, errlen);
	if (rc)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(st, 0);
		const char *text = (const char *)sqlite3_column_text(st, 1);
		int missing = sqlite3_column_int(st, 2);
		char reason[64];

		if (!kind || !text)
			continue;
		if ((strcmp(kind, "missing_counters") == 0 || strcmp(kind, "missing_dram") == 0) &&
		    short_reason(text, reason, sizeof(reason))) {
			size_t used = strlen(n->reasons);
			if (!strstr(n->reasons, reason) && used + strlen(reason) + 3 < sizeof(n->reasons))
				snprintf(n->reasons + used, sizeof(n->reasons) - used, "%s%s", used ? "; " : "", reason);
			continue;
		}
		if ((strcmp(kind, "peak_flops") == 0 || strcmp(kind, "peak_bw") == 0) && !missing)
			continue;
		if (strcmp(kind, "spec_low") == 0 && src && strncmp(src, "measured (auto:", 15) == 0)
			continue;
		if (array_grow(&n->kept, &n->cap, n->nkept + 1, sizeof(*n->kept)) ||
		    !(n->kept[n->nkept] = strdup(text))) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		n->nkept++;
	}
	if (rc != SQLITE_DONE) {
		strbuf(err, errlen, "notes: %s", sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return -EIO;
	}
	sqlite3_finalize(st);
	return 0;
}

static void result_group(struct text *t, const struct row *r)
{
	char a[64], b[64], c[64], d[64], line[1024];
	long long steps = inum(r, C_STEPS);
	const char *dtype = str(r, C_DTYPE) ? str(r, C_DTYPE) : "?";
	size_t len;

	group(t, "result");
	if (steps > 0 && known(r, C_WALL_MS))
		len = (size_t)snprintf(line, sizeof(line), "%lld in %s; per step mean %s, p50 %s, p95 %s", steps,
				       ms(a, num(r, C_WALL_MS)), ms(b, num(r, C_MEAN_MS)), ms(c, num(r, C_P50_MS)),
				       ms(d, num(r, C_P95_MS)));
	else
		len = (size_t)snprintf(line, sizeof(line), "%lld complete", steps);
	if (inum(r, C_INCOMPLETE) > 0)
		len += (size_t)snprintf(line + len, sizeof(line) - len, "; %lld begun and never ended (not counted)",
					inum(r, C_INCOMPLETE));
	if (inum(r, C_SKIPPED) > 0)
		snprintf(line + len, sizeof(line) - len, "; the first %lld left out (--skip-steps)", inum(r, C_SKIPPED));
	field_cut(t, "steps", line, 0, NULL);
	if (known(r, C_MFU)) {
		/* the peak in parentheses: "6.25% of the fp32 peak, 544 GFLOP/s"
		 * read as if the run achieved 544 GFLOP/s */
		len = (size_t)snprintf(line, sizeof(line), "%s of the %s peak (%s)", util(a, num(r, C_MFU)), dtype,
				       eng(b, num(r, C_PEAK_FLOPS), strcmp(dtype, "int8") ? "FLOP/s" : "op/s"));
		if (str(r, C_FLOPS_SOURCE) && strcmp(str(r, C_FLOPS_SOURCE), "declared") != 0)
			len += (size_t)snprintf(line + len, sizeof(line) - len, ", of %s FLOPs",
						strcmp(str(r, C_FLOPS_SOURCE), "library") == 0 ? "library" : "declared and library");
		if (known(r, C_E2E_MFU) && steps > 1)
			snprintf(line + len, sizeof(line) - len, "; end to end %s, with the gaps between steps",
				 util(c, num(r, C_E2E_MFU)));
		field_cut(t, "MFU", line, 0, NULL);
	}
	if (known(r, C_HFU)) {
		len = (size_t)snprintf(line, sizeof(line), "%s of the %s peak%s", util(a, num(r, C_HFU)), dtype,
				       known(r, C_MFU) ? " (the same)" : "");
		if (inum(r, C_MFU_STEPS) != inum(r, C_HFU_STEPS) && known(r, C_MFU_COMMON) && known(r, C_HFU_COMMON))
			snprintf(line + len, sizeof(line) - len, "; over the %lld steps with both, MFU %s and HFU %s",
				 inum(r, C_COMMON_STEPS), util(b, num(r, C_MFU_COMMON)), util(c, num(r, C_HFU_COMMON)));
		field_cut(t, "HFU", line, 0, NULL);
	}
	if (known(r, C_MBU)) {
		snprintf(line, sizeof(line), "%s of the memory bandwidth peak (%s)", util(a, num(r, C_MBU)),
			 eng(b, num(r, C_PEAK_BW), "B/s"));
		field_cut(t, "MBU", line, 0, NULL);
	}
	if (known(r, C_DRAM_BW_UTIL)) {
		snprintf(line, sizeof(line), "%s of the memory bandwidth peak%s (measured DRAM traffic)",
			 util(a, num(r, C_DRAM_BW_UTIL)), known(r, C_MBU) ? " (the same)" : "");
		field_cut(t, "DRAM BW", line, 0, NULL);
	}
	/* the whole run's, when the steps do not say it all */
	if (known(r, C_RUN_MFU) && (steps == 0 || !known(r, C_LIB_IN_STEPS) || num(r, C_LIB_IN_STEPS) < 0.9)) {
		len = (size_t)snprintf(line, sizeof(line), "%s of the %s peak (its library FLOPs, %s)",
				       util(a, num(r, C_RUN_MFU)), dtype, run_span(r));
		if (known(r, C_BUSY_MFU))
			snprintf(line + len, sizeof(line) - len, "; %s of the CPU time it used", util(b, num(r, C_BUSY_MFU)));
		field_cut(t, "run MFU", line, 0, NULL);
	}
	if (known(r, C_CPU_UTIL)) {
		fmt_fixed(b, num(r, C_NCPU), num(r, C_NCPU) == floor(num(r, C_NCPU)) ? 0 : 2);
		field(t, "CPU util", "%s of %s CPU%s", util(a, num(r, C_CPU_UTIL)), b, num(r, C_NCPU) == 1 ? "" : "s");
	}
}

static void work_group(struct text *t, const struct row *r)
{
	char a[64], b[64], line[1024];
	size_t len;

	group(t, "work");
	if (known(r, C_MODEL_FLOPS)) {
		len = (size_t)snprintf(line, sizeof(line), "%s declared", eng(a, num(r, C_MODEL_FLOPS), ""));
		if (known(r, C_MODEL_FLOPS_PER_S) && (!str(r, C_FLOPS_SOURCE) || !strcmp(str(r, C_FLOPS_SOURCE), "declared")))
			snprintf(line + len, sizeof(line) - len, ", %s", eng(b, num(r, C_MODEL_FLOPS_PER_S), "FLOP/s"));
		field_cut(t, "model FLOP", line, 0, NULL);
	}
	if (known(r, C_LIB_FLOPS) || known(r, C_RUN_LIB_FLOPS)) {
		len = 0;
		if (known(r, C_LIB_FLOPS))
			len = (size_t)snprintf(line, sizeof(line), "%s in the steps", eng(a, num(r, C_LIB_FLOPS), ""));
		else if (inum(r, C_STEPS) > 0)
			len = (size_t)snprintf(line, sizeof(line), "unknown in the steps");
		if (known(r, C_RUN_LIB_FLOPS))
			len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s in the whole run (%lld call%s)",
						len ? ", " : "",
						eng(b, num(r, C_RUN_LIB_FLOPS), ""), inum(r, C_RUN_LIB_CALLS),
						inum(r, C_RUN_LIB_CALLS) == 1 ? "" : "s");
		if (known(r, C_LIB_RATIO))
			snprintf(line + len, sizeof(line) - len, "; declared / library %.2f", num(r, C_LIB_RATIO));
		field_cut(t, "library FLOP", line, 0, NULL);
	}
	if (known(r, C_HW_FLOPS)) {
		len = (size_t)snprintf(line, sizeof(line), "%s counted%s%s", eng(a, num(r, C_HW_FLOPS), ""),
				       str(r, C_EMULATED) ? " by " : "", str(r, C_EMULATED) ? str(r, C_EMULATED) : "");
		if (known(r, C_HW_FLOPS_PER_S))
			len += (size_t)snprintf(line + len, sizeof(line) - len, ", %s",
						eng(b, num(r, C_HW_FLOPS_PER_S), "FLOP/s"));
		static const struct { enum col c; const char *name; } prec[] = {
			{ C_HW_FP64, "fp64" }, { C_HW_FP32, "fp32" }, { C_HW_FP16, "fp16/bf16" },
		};
		for (size_t i = 0; i < ARRAY_SIZE(prec); i++)
			if (known(r, prec[i].c) && num(r, prec[i].c) > 0 && num(r, C_HW_FLOPS) > 0)
				len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%.0f%% %s",
							i == 0 || !strchr(line, '%') ? "; " : ", ",
							100 * num(r, prec[i].c) / num(r, C_HW_FLOPS), prec[i].name);
		field_cut(t, "HW FLOP", line, 0, NULL);
	}
	if (known(r, C_MODEL_BYTES)) {
		len = (size_t)snprintf(line, sizeof(line), "%s declared", eng(a, num(r, C_MODEL_BYTES), "B"));
		if (known(r, C_MODEL_BYTES_PER_S))
			snprintf(line + len, sizeof(line) - len, ", %s", eng(b, num(r, C_MODEL_BYTES_PER_S), "B/s"));
		field_cut(t, "model bytes", line, 0, NULL);
	}
	if (known(r, C_DRAM_BYTES))
		field(t, "DRAM bytes", "%s measured (memory controllers)", eng(a, num(r, C_DRAM_BYTES), "B"));
}

/* run.state for people: what the recording covers */
static const char *state_words(const struct row *r)
{
	const char *state = str(r, C_STATE);

	if (strcmp(state, "complete") == 0)
		return "recording complete";
	if (strcmp(state, "recording") == 0)
		return "recording unfinished (mfu-record still running, or killed)";
	if (strcmp(state, "detached") == 0)
		return "recording detached before the process ended";
	if (strcmp(state, "interrupted") == 0)
		return known(r, C_EXIT_SIGNAL) && inum(r, C_EXIT_SIGNAL) > 0
			       ? "after a signal mfu-record passed on"
			       : known(r, C_EXIT_STATUS) ? "recorded to the end after a signal mfu-record passed on"
							 : "after a signal mfu-record passed on (end unknown)";
	return state;
}

static void health_group(struct text *t, const struct row *r)
{
	char a[64], line[512];
	size_t len;

	group(t, "run health");
	len = (size_t)snprintf(line, sizeof(line), "%s", known(r, C_RUN_MS) ? ms(a, num(r, C_RUN_MS)) : "unfinished");
	if (known(r, C_RUN_MS))
		len += (size_t)snprintf(line + len, sizeof(line) - len, " %s", run_span(r));
	if (known(r, C_EXIT_SIGNAL) && inum(r, C_EXIT_SIGNAL) > 0)
		len += (size_t)snprintf(line + len, sizeof(line) - len, ", killed by signal %lld", inum(r, C_EXIT_SIGNAL));
	else if (known(r, C_EXIT_STATUS))
		len += (size_t)snprintf(line + len, sizeof(line) - len, ", exit status %lld", inum(r, C_EXIT_STATUS));
	if (str(r, C_STATE))
		snprintf(line + len, sizeof(line) - len, ", %s", state_words(r));
	field_cut(t, "run", line, 0, NULL);
	field(t, "records", "%lld lost, %lld %s", inum(r, C_LOST), inum(r, C_ANOMALIES),
	      inum(r, C_ANOMALIES) == 1 ? "anomaly" : "anomalies");
}

/* The figures unknown in this run, by their labels: "HFU, HW FLOP, DRAM". */
static void unknown_list(const struct row *r, char *buf, size_t len)
{
	static const struct {
		enum col c;
		const char *label;
	} figures[] = {
		{ C_MFU, "MFU" }, { C_HFU, "HFU" }, { C_MBU, "MBU" }, { C_MODEL_FLOPS, "model FLOP" },
		{ C_LIB_FLOPS, "library FLOP" }, { C_HW_FLOPS, "HW FLOP" }, { C_MODEL_BYTES, "model bytes" },
		{ C_DRAM_BYTES, "DRAM" }, { C_CPU_UTIL, "CPU util" },
	};
	size_t used = 0;

	buf[0] = '\0';
	if (inum(r, C_STEPS) == 0)
		return; /* nothing per step to know: the notes say why */
	for (size_t i = 0; i < ARRAY_SIZE(figures); i++)
		if (!known(r, figures[i].c) && used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", figures[i].label);
}

int summary_text_write(FILE *out, int markdown, int title_gap, sqlite3_stmt *stmt, char *err, size_t errlen)
{
	struct text t = { .md = markdown };
	struct row r = { .st = stmt };
	struct notes n = { .reasons = "" };
	sqlite3 *db = sqlite3_db_handle(stmt);
	char *why = NULL, unknown[256], line[1024];
	int rc, steprc;

	column_map(stmt, r.idx);
	steprc = sqlite3_step(stmt);
	if (steprc != SQLITE_ROW && steprc != SQLITE_DONE) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(db));
		return -EIO;
	}
	puts_(&t, title_gap ? "\n" : "");
	puts_(&t, markdown ? "### summary\n" : "summary\n");
	if (steprc == SQLITE_DONE) {
		puts_(&t, "(no rows)\n");
		goto write;
	}
	rc = verdict(db, &why, err, errlen);
	if (!rc)
		rc = notes_read(db, &r, &n, err, errlen);
	if (rc)
		goto out;

	result_group(&t, &r);
	if (why) {
		group(&t, "where time went");
		paragraph(&t, "", why);
	}
	work_group(&t, &r);
	group(&t, "machine");
	machine_line(&t, db, &r);
	if (known(&r, C_PEAK_FLOPS) && str(&r, C_PEAK_SOURCE))
		field_cut(&t, "FLOP/s peak", str(&r, C_PEAK_SOURCE), SOURCE_LINES, "... (mfu-report peaks)");
	if (known(&r, C_PEAK_BW) && str(&r, C_PEAK_BW_SOURCE))
		field_cut(&t, "B/s peak", str(&r, C_PEAK_BW_SOURCE), SOURCE_LINES, "... (mfu-report peaks)");
	health_group(&t, &r);

	t.group = NULL;
	unknown_list(&r, unknown, sizeof(unknown));
	if (unknown[0]) {
		snprintf(line, sizeof(line), "unknown here: %s (%s%smfu-report notes)", unknown, n.reasons,
			 n.reasons[0] ? "; see " : "");
		if (markdown)
			puts_(&t, "\n");
		wrapped(&t, line, 0, 2, 0, NULL);
	} else if (n.reasons[0]) {
		snprintf(line, sizeof(line), "not counted here: %s (mfu-report notes)", n.reasons);
		if (markdown)
			puts_(&t, "\n");
		wrapped(&t, line, 0, 2, 0, NULL);
	}
	if (n.nkept) {
		group(&t, "notes");
		for (size_t i = 0; i < n.nkept; i++)
			paragraph(&t, "- ", n.kept[i]);
	}
write:
	if (t.oom) {
		rc = -ENOMEM;
		goto out;
	}
	rc = fwrite(t.buf, 1, t.len, out) == t.len ? 0 : (errno ? -errno : -EIO);
out:
	if (rc == -ENOMEM)
		strbuf(err, errlen, "out of memory");
	notes_free(&n);
	free(why);
	free(t.buf);
	return rc;
}
