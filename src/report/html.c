/* mfu-report --html: the analyses as JSON inside one HTML file, with the
 * stylesheet and the script that draws them (src/report/html/, compiled
 * in by tools/embed.py). */
#include "html.h"
#include "html_number.h"

#include "analysis.h"
#include "embedded.h"
#include "format.h"
#include "format_impl.h"
#include "outbuf.h"
#include "time_split.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct html {
	sqlite3 *db;
	char *err;
	size_t errlen;
	char *s;      /* scratch: one JSON string */
	size_t slen, scap;
	struct outbuf ob; /* the output */
};

/* ---- output ---- */

/* @s as HTML text or attribute value. */
static void out_escaped(struct html *h, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': outbuf_str(&h->ob, "&amp;"); break;
		case '<': outbuf_str(&h->ob, "&lt;"); break;
		case '>': outbuf_str(&h->ob, "&gt;"); break;
		case '"': outbuf_str(&h->ob, "&quot;"); break;
		case '\'': outbuf_str(&h->ob, "&#39;"); break;
		default: outbuf_write(&h->ob, s, 1);
		}
	}
}

/* @s as a JSON string that can sit inside a script element: every '<' is
 * written \u003c, so no text from the database (a phase name, a note)
 * can close the element or open a comment in it. */
static void out_json_string(struct html *h, const char *s, size_t n)
{
	size_t from = 0;

	h->slen = 0;
	if (json_append_string(&h->s, &h->slen, &h->scap, s, n)) {
		outbuf_fail(&h->ob, -ENOMEM);
		return;
	}
	for (size_t i = 0; i < h->slen; i++) {
		if (h->s[i] != '<')
			continue;
		outbuf_write(&h->ob, h->s + from, i - from);
		outbuf_str(&h->ob, "\\u003c");
		from = i + 1;
	}
	outbuf_write(&h->ob, h->s + from, h->slen - from);
}

static void out_json_cstr(struct html *h, const char *s)
{
	if (s)
		out_json_string(h, s, strlen(s));
	else
		outbuf_str(&h->ob, "null");
}

static void out_double(struct html *h, double v)
{
	char num[64];

	if (!isfinite(v)) {
		outbuf_str(&h->ob, "null"); /* JSON has no infinities: unknown, as in --format json */
		return;
	}
	outbuf_write(&h->ob, num, format_double(num, v));
}

static void out_int(struct html *h, long long v)
{
	char num[24];

	outbuf_write(&h->ob, num, fmt_i64(num, v));
}

/* Column @i of the current row of @st as a JSON value, in full precision. */
static void out_value(struct html *h, sqlite3_stmt *st, int i)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_NULL: outbuf_str(&h->ob, "null"); break;
	case SQLITE_INTEGER: out_int(h, sqlite3_column_int64(st, i)); break;
	case SQLITE_FLOAT: out_double(h, sqlite3_column_double(st, i)); break;
	default:
		out_json_string(h, (const char *)sqlite3_column_text(st, i), (size_t)sqlite3_column_bytes(st, i));
	}
}

/* The columns of @st as [[name, header, style], ...]: the headers and
 * styles of the table format (format_column_style()). */
static void out_columns(struct html *h, sqlite3_stmt *st)
{
	outbuf_str(&h->ob, "\"columns\":[");
	for (int i = 0; i < sqlite3_column_count(st); i++) {
		const char *name = sqlite3_column_name(st, i);
		char label[64];
		const char *style = format_column_style(name ? name : "?", label, sizeof(label));

		outbuf_str(&h->ob, i ? ",[" : "[");
		out_json_cstr(h, name ? name : "?");
		outbuf_str(&h->ob, ",");
		out_json_cstr(h, label);
		outbuf_str(&h->ob, ",");
		out_json_cstr(h, style);
		outbuf_str(&h->ob, "]");
	}
	outbuf_str(&h->ob, "]");
}

static int sql_error(struct html *h, const char *what)
{
	int code = sqlite3_errcode(h->db);

	strbuf(h->err, h->errlen, "%s: %s%s", what,
	       code == SQLITE_CORRUPT || code == SQLITE_NOTADB ? "the database is corrupt (truncated or damaged): " : "",
	       sqlite3_errmsg(h->db));
	return -EIO;
}

/* analysis_prepare_summary() of @name: with @summary 1, its "-- @summary:"
 * variant (the waterfall's all-steps row alone). */
static int prepare_variant(struct html *h, const char *name, int summary, sqlite3_stmt **st)
{
	const struct analysis *a = analysis_find(name);
	char msg[512];
	int rc;

	if (!a) {
		strbuf(h->err, h->errlen, "%s: no such analysis in this build", name);
		return -ENOENT;
	}
	rc = analysis_prepare_summary(a, h->db, summary, st, msg, sizeof(msg));
	if (rc)
		strbuf(h->err, h->errlen, "%s: %s", name, msg);
	return rc == -ENOMEM ? -ENOMEM : rc ? -EIO : 0;
}

static int prepare(struct html *h, const char *name, sqlite3_stmt **st)
{
	return prepare_variant(h, name, 0, st);
}

static int all_null(sqlite3_stmt *st)
{
	for (int i = 0; i < sqlite3_column_count(st); i++)
		if (sqlite3_column_type(st, i) != SQLITE_NULL)
			return 0;
	return 1;
}

/* The rows of @st as "columns" and "rows" (arrays in column order), at
 * most @max_rows of them (0: all); a row of nothing but NULLs (an
 * aggregate over no rows) is left out, as in every format. */
static int out_rows(struct html *h, sqlite3_stmt *st, const char *what, size_t max_rows)
{
	size_t n = 0;
	int rc = SQLITE_DONE;

	outbuf_str(&h->ob, "{");
	out_columns(h, st);
	outbuf_str(&h->ob, ",\"rows\":[");
	while ((max_rows == 0 || n < max_rows) && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (all_null(st))
			continue;
		outbuf_str(&h->ob, n++ ? ",\n[" : "\n[");
		for (int i = 0; i < sqlite3_column_count(st); i++) {
			if (i)
				outbuf_str(&h->ob, ",");
			out_value(h, st, i);
		}
		outbuf_str(&h->ob, "]");
	}
	if (max_rows && n == max_rows)
		rc = SQLITE_DONE;
	if (rc != SQLITE_DONE)
		return sql_error(h, what);
	outbuf_str(&h->ob, "]}");
	return outbuf_error(&h->ob);
}

/* "name": the rows of analysis @name. */
static int out_section(struct html *h, const char *name, size_t max_rows)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(h, name, &st);

	if (!rc) {
		out_json_cstr(h, name);
		outbuf_str(&h->ob, ":");
		rc = out_rows(h, st, name, max_rows);
	}
	sqlite3_finalize(st);
	return rc;
}

/* Whether @st (the waterfall, read by out_rows()) is on its all-steps
 * row: a row was read and its step is NULL. */
static int waterfall_all_steps(sqlite3_stmt *st)
{
	if (!sqlite3_stmt_busy(st) || sqlite3_data_count(st) == 0)
		return 0;
	for (int i = 0; i < sqlite3_column_count(st); i++)
		if (strcmp(sqlite3_column_name(st, i), "step") == 0)
			return sqlite3_column_type(st, i) == SQLITE_NULL;
	return 0;
}

/* "name": the one-line verdict of analysis @name, or null; @row, if not
 * NULL, is on the row of @name the verdict reads (analysis_verdict_row). */
static int out_verdict(struct html *h, const char *name, sqlite3_stmt *row)
{
	const struct analysis *a = analysis_find(name);
	char *text = NULL, msg[512];
	int rc = a ? analysis_verdict_row(a, h->db, row, &text, msg, sizeof(msg)) : 0;

	if (rc) {
		strbuf(h->err, h->errlen, "%s verdict: %s", name, rc == -ENOMEM ? "out of memory" : msg);
		return rc == -ENOMEM ? -ENOMEM : -EIO;
	}
	out_json_cstr(h, name);
	outbuf_str(&h->ob, ":");
	out_json_cstr(h, text);
	free(text);
	return outbuf_error(&h->ob);
}

/* ---- the steps: every one, compactly ---- */

/* The columns of the steps section the time series draws and shows on
 * hover, in this order. */
static const char *const step_columns[] = {
	"step", "begin_ms", "wall_ms", "mfu", "hfu", "mbu", "cpu_util", "flops_source",
};

#define MAX_TEXTS 32

/* @v with @dec decimals at most, trailing zeros dropped. A value of 1e15
 * or more has no decimals to show (a double's 53 bits end there) and may
 * have 300 digits (an edited database's 1e300 ms): it goes as %.17g, which
 * JSON reads and fmt_fixed's 64 bytes need not hold. */
static void out_fixed_short(struct html *h, double v, int dec)
{
	char num[64];
	size_t n;

	if (!(fabs(v) < 1e15)) {
		outbuf_write(&h->ob, num, (size_t)snprintf(num, sizeof(num), "%.17g", v));
		return;
	}
	n = fmt_fixed(num, v, dec);

	if (memchr(num, '.', n)) {
		while (num[n - 1] == '0')
			n--;
		if (num[n - 1] == '.')
			n--;
	}
	outbuf_write(&h->ob, num, n);
}

/* Analysis @name as out_series() reads it: only its @ncols @columns, from
 * the section's own query (SELECT "c1", ... FROM (the query)): SQLite then
 * computes no other column (the steps section has 30: 0.5 s of a million
 * steps). A query with blocks mfu-report swaps is prepared whole. */
static int prepare_columns(struct html *h, const char *name, const char *const *columns, size_t ncols,
			   sqlite3_stmt **st)
{
	const struct analysis *a = analysis_find(name);
	const char *text = a ? analysis_sql(a) : NULL;
	size_t len = 0, cap = 0, n;
	char *sql = NULL;
	int ok;

	if (!text || strstr(text, "-- @"))
		return prepare(h, name, st);
	n = strlen(text);
	while (n && strchr(" \t\n;", text[n - 1]))
		n--;
	ok = !buf_append(&sql, &len, &cap, "SELECT ", 7);
	for (size_t c = 0; ok && c < ncols; c++) {
		ok = !buf_append(&sql, &len, &cap, c ? ", \"" : "\"", c ? 3 : 1) &&
		     !buf_append(&sql, &len, &cap, columns[c], strlen(columns[c])) && !buf_append(&sql, &len, &cap, "\"", 1);
	}
	ok = ok && !buf_append(&sql, &len, &cap, " FROM (\n", 8) && !buf_append(&sql, &len, &cap, text, n) &&
	     !buf_append(&sql, &len, &cap, "\n)", 2);
	if (!ok) {
		free(sql);
		strbuf(h->err, h->errlen, "out of memory");
		return -ENOMEM;
	}
	if (sqlite3_prepare_v2(h->db, sql, -1, st, NULL) != SQLITE_OK) {
		free(sql);
		sqlite3_finalize(*st);
		*st = NULL;
		return prepare(h, name, st); /* its own message */
	}
	free(sql);
	return 0;
}

/* One step value: times to the microsecond (the table format's 3
 * decimals), fractions to 6 significant digits, so a 100,000-step run
 * stays a few MB; text as an index into the column's list of values. */
static void out_step_value(struct html *h, sqlite3_stmt *st, int i, int kind, const char **texts, size_t *ntexts)
{
	char num[32];
	double v;

	if (sqlite3_column_type(st, i) == SQLITE_NULL) {
		outbuf_str(&h->ob, "null");
		return;
	}
	if (kind == 't') {
		const char *s = (const char *)sqlite3_column_text(st, i);
		size_t k;

		for (k = 0; k < *ntexts && strcmp(texts[k], s) != 0; k++)
			;
		if (k == *ntexts && k < MAX_TEXTS && (texts[k] = strdup(s)) != NULL)
			(*ntexts)++;
		if (k < *ntexts)
			out_int(h, (long long)k);
		else
			out_json_cstr(h, s);
		return;
	}
	if (sqlite3_column_type(st, i) == SQLITE_INTEGER) {
		out_int(h, sqlite3_column_int64(st, i));
		return;
	}
	v = sqlite3_column_double(st, i);
	if (!isfinite(v))
		outbuf_str(&h->ob, "null");
	else if (kind == 'm')
		out_fixed_short(h, v, 3);
	else
		outbuf_write(&h->ob, num, html_number_g6(num, v));
}

/* "@key": {"columns": ..., "rows": [[...], ...], "texts": {"@text_column":
 * [...]}}: the @ncols @columns of analysis @name, one row per row,
 * streamed (a million steps are never held in memory); a text column's
 * values go as indexes into its list. */
static int out_series(struct html *h, const char *name, const char *key, const char *const *columns, size_t ncols,
		      const char *text_column)
{
	int idx[16], kind[16];
	const char *texts[MAX_TEXTS];
	size_t ntexts = 0, n = 0;
	sqlite3_stmt *st = NULL;
	int rc;

	if (ncols > ARRAY_SIZE(idx))
		return -EINVAL;
	rc = prepare_columns(h, name, columns, ncols, &st);
	if (rc)
		return rc;
	for (size_t c = 0; c < ncols; c++) {
		size_t len = strlen(columns[c]);

		idx[c] = -1;
		for (int i = 0; i < sqlite3_column_count(st); i++)
			if (strcmp(sqlite3_column_name(st, i), columns[c]) == 0)
				idx[c] = i;
		if (idx[c] < 0) {
			strbuf(h->err, h->errlen, "%s: no column %s", name, columns[c]);
			rc = -EIO;
			goto out;
		}
		kind[c] = text_column && strcmp(columns[c], text_column) == 0 ? 't'
			  : len > 3 && strcmp(columns[c] + len - 3, "_ms") == 0 ? 'm' : 'f';
	}
	out_json_cstr(h, key);
	outbuf_str(&h->ob, ":{\"columns\":[");
	for (size_t c = 0; c < ncols; c++) {
		char label[64];
		const char *style = format_column_style(columns[c], label, sizeof(label));

		outbuf_str(&h->ob, c ? ",[" : "[");
		out_json_cstr(h, columns[c]);
		outbuf_str(&h->ob, ",");
		out_json_cstr(h, label);
		outbuf_str(&h->ob, ",");
		out_json_cstr(h, style);
		outbuf_str(&h->ob, "]");
	}
	outbuf_str(&h->ob, "],\"rows\":[");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		outbuf_str(&h->ob, n++ ? ",\n[" : "\n[");
		for (size_t c = 0; c < ncols; c++) {
			if (c)
				outbuf_str(&h->ob, ",");
			out_step_value(h, st, idx[c], kind[c], texts, &ntexts);
		}
		outbuf_str(&h->ob, "]");
		if (outbuf_error(&h->ob))
			break;
	}
	if (rc != SQLITE_DONE && !outbuf_error(&h->ob)) {
		rc = sql_error(h, name);
		goto out;
	}
	outbuf_str(&h->ob, "],\"texts\":{");
	if (text_column) {
		out_json_cstr(h, text_column);
		outbuf_str(&h->ob, ":[");
		for (size_t k = 0; k < ntexts; k++) {
			outbuf_str(&h->ob, k ? "," : "");
			out_json_cstr(h, texts[k]);
		}
		outbuf_str(&h->ob, "]");
	}
	outbuf_str(&h->ob, "}}");
	rc = outbuf_error(&h->ob);
out:
	for (size_t k = 0; k < ntexts; k++)
		free((void *)texts[k]);
	sqlite3_finalize(st);
	return rc;
}

/* "steps": every complete step, what the time series draws. */
static int out_steps(struct html *h)
{
	return out_series(h, "steps", "steps", step_columns, ARRAY_SIZE(step_columns), "flops_source");
}

/* The columns of the intervals section the MFU-over-time chart draws and
 * shows on hover, in this order. */
static const char *const interval_columns[] = {
	"t_ms", "interval_ms", "mfu", "lib_flops_per_s", "lib_flops", "lib_calls", "cpu_util",
};

/* "intervals": every interval reading (-I), for MFU over time. */
static int out_intervals(struct html *h)
{
	return out_series(h, "intervals", "intervals", interval_columns, ARRAY_SIZE(interval_columns), NULL);
}

/* ---- the steps' breakdown, summed ---- */

static const char *const breakdown_columns[] = {
	"wall_ms", "blocked_ms", "runnable_ms", "kernel_ms", "sync_ms", "dispatch_ms", "unclassified_ms",
	"compute_ms", "samples",
};

/* The breakdown section summed over the steps, in one pass: each column's
 * sum and how many steps have it, and the samples' integer sum. */
_Static_assert(ARRAY_SIZE(breakdown_columns) == TS_NCOLS, "the columns time_split sums");

/* The sums, from time_split's one scan of the steps; from the section's
 * rows when it leaves them to the SQL (an edited database's values). */
static int breakdown_sum(struct html *h, struct time_split_sums *b)
{
	int idx[ARRAY_SIZE(breakdown_columns)];
	sqlite3_stmt *st = NULL;
	int rc = time_split_breakdown(h->db, b);

	if (rc == 0)
		return 0;
	if (rc == -ENOMEM) {
		strbuf(h->err, h->errlen, "out of memory");
		return rc;
	}
	rc = prepare(h, "breakdown", &st);
	memset(b, 0, sizeof(*b));
	if (rc)
		return rc;
	for (size_t c = 0; c < ARRAY_SIZE(breakdown_columns); c++) {
		idx[c] = -1;
		for (int i = 0; i < sqlite3_column_count(st); i++)
			if (strcmp(sqlite3_column_name(st, i), breakdown_columns[c]) == 0)
				idx[c] = i;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		b->steps++;
		for (size_t c = 0; c < ARRAY_SIZE(breakdown_columns); c++) {
			if (idx[c] < 0 || sqlite3_column_type(st, idx[c]) == SQLITE_NULL)
				continue;
			b->sum[c] += sqlite3_column_double(st, idx[c]);
			b->known[c]++;
			if (strcmp(breakdown_columns[c], "samples") == 0)
				b->samples += sqlite3_column_int64(st, idx[c]);
		}
	}
	rc = rc == SQLITE_DONE ? 0 : sql_error(h, "breakdown");
	sqlite3_finalize(st);
	return rc;
}

/* The sums of @b as the one row the breakdown's verdict sums (@row, on
 * that row; NULL when no step: the verdict reads the section then), so
 * that the verdict does not run the section again (1.4 s of a million
 * steps). Each column's sum, NULL where no step has it; samples as the
 * integer SQLite's sum() makes of them. */
static int breakdown_row(struct html *h, const struct time_split_sums *b, sqlite3_stmt **row)
{
	char sql[512];
	size_t len = 0;

	*row = NULL;
	if (!b->steps)
		return 0;
	for (size_t c = 0; c < ARRAY_SIZE(breakdown_columns); c++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s?%zu AS %s", c ? ", " : "SELECT ", c + 1,
					breakdown_columns[c]);
	if (sqlite3_prepare_v2(h->db, sql, -1, row, NULL) != SQLITE_OK)
		return sql_error(h, "breakdown");
	for (size_t c = 0; c < ARRAY_SIZE(breakdown_columns); c++) {
		int i = (int)c + 1;

		if (!b->known[c])
			sqlite3_bind_null(*row, i);
		else if (strcmp(breakdown_columns[c], "samples") == 0)
			sqlite3_bind_int64(*row, i, b->samples);
		else
			sqlite3_bind_double(*row, i, b->sum[c]);
	}
	if (sqlite3_step(*row) != SQLITE_ROW)
		return sql_error(h, "breakdown");
	return 0;
}

/* "breakdown_steps": the breakdown section summed over the steps:
 * {"steps": N, "sum": {column: total or null}, "known": {column: steps
 * with a value}}. A part unknown in some steps (no sample in them) is
 * summed over the others; the chart shows the rest of the wall time as
 * not split. */
static int out_breakdown_sums(struct html *h, const struct time_split_sums *b)
{
	outbuf_str(&h->ob, "\"breakdown_steps\":{\"steps\":");
	out_int(h, b->steps);
	for (int part = 0; part < 2; part++) {
		outbuf_str(&h->ob, part ? ",\"known\":{" : ",\"sum\":{");
		for (size_t c = 0; c < ARRAY_SIZE(breakdown_columns); c++) {
			outbuf_str(&h->ob, c ? "," : "");
			out_json_cstr(h, breakdown_columns[c]);
			outbuf_str(&h->ob, ":");
			if (part)
				out_int(h, b->known[c]);
			else if (b->known[c])
				out_double(h, b->sum[c]);
			else
				outbuf_str(&h->ob, "null");
		}
		outbuf_str(&h->ob, "}");
	}
	outbuf_str(&h->ob, "}");
	return outbuf_error(&h->ob);
}

/* The run's own description, for the metadata panel: what no section
 * has (the command, the host, the CPU, the clocks). */
static const char run_sql[] =
	"SELECT mfu_version, command, cwd, start_unix_ns, host, kernel, cpu_vendor, cpu_name, uarch, isa,"
	" nominal_hz, nominal_hz_source, clock_hz, allowed_cpus, ncpu, ncores, cpu_quota, cpus_source,"
	" peak_mode, dtype, mode, target_pid, (end_ns - start_ns) / 1e6 AS run_ms,"
	" interval_ns / 1e6 AS interval_ms, lib_counting, state, exit_status, exit_signal"
	" FROM main.run WHERE id = 1";

static int out_run(struct html *h)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(h->db, run_sql, -1, &st, NULL) != SQLITE_OK)
		return sql_error(h, "run");
	outbuf_str(&h->ob, "\"run\":");
	rc = out_rows(h, st, "run", 1);
	sqlite3_finalize(st);
	return rc;
}

/* ---- the page ---- */

static const char *asset(const char *name)
{
	const struct mfu_embedded *e = embedded_find(mfu_html_files, name);

	return e ? e->text : NULL;
}

/* The sections of the page, in its order; the script fills each. */
static const char page_sections[] =
	"<nav class=\"toc\" aria-label=\"contents\"></nav>\n"
	"<section id=\"overview\"></section>\n"
	"<section id=\"notes\"></section>\n"
	"<section id=\"series\"></section>\n"
	"<section id=\"timeline\"></section>\n"
	"<section id=\"phases\"></section>\n"
	"<section id=\"waterfall\"></section>\n"
	"<section id=\"roofline\"></section>\n"
	"<section id=\"functions\"></section>\n"
	"<section id=\"run\"></section>\n";

static int out_data(struct html *h, const struct html_info *info)
{
	static const char *const sections[] = {
		"summary", "notes", "phases", "phase_breakdown", "peaks", "dispatch",
	};
	static const char *const verdicts[] = { "breakdown", "waterfall", "dispatch" };
	sqlite3_stmt *waterfall = NULL, *breakdown = NULL;
	struct time_split_sums sums;
	int rc;

	outbuf_str(&h->ob, "{\"format\":1,\"mfu_report\":");
	out_json_cstr(h, MFU_VERSION);
	outbuf_str(&h->ob, ",\"db\":");
	out_json_cstr(h, info->db_path);
	outbuf_str(&h->ob, ",\"skip_steps\":");
	out_int(h, info->skip_steps);
	outbuf_str(&h->ob, ",\"quiet\":");
	out_int(h, info->quiet != 0);
	outbuf_str(&h->ob, ",\n");
	if ((rc = out_run(h)))
		return rc;
	outbuf_str(&h->ob, ",\n\"sections\":{");
	for (size_t i = 0; i < ARRAY_SIZE(sections); i++) {
		outbuf_str(&h->ob, i ? ",\n" : "\n");
		if ((rc = out_section(h, sections[i], 0)))
			return rc;
	}
	/* the waterfall's first row is all the steps together; one row per
	 * step after it is more than a chart of the run needs, so the page
	 * runs the variant that makes that row alone (without the sort of
	 * every step's row behind it: 2 s of a million steps). Its verdict
	 * reads that row too: from the statement, still on it, not from the
	 * section run again. */
	outbuf_str(&h->ob, ",\n");
	if ((rc = prepare_variant(h, "waterfall", 1, &waterfall)))
		goto out;
	out_json_cstr(h, "waterfall");
	outbuf_str(&h->ob, ":");
	if ((rc = out_rows(h, waterfall, "waterfall", 1)))
		goto out;
	outbuf_str(&h->ob, "},\n\"verdicts\":{");
	/* the breakdown's verdict reads its sums, made once for the page */
	if ((rc = breakdown_sum(h, &sums)) || (rc = breakdown_row(h, &sums, &breakdown)))
		goto out;
	for (size_t i = 0; i < ARRAY_SIZE(verdicts); i++) {
		sqlite3_stmt *own = strcmp(verdicts[i], "breakdown") == 0 ? breakdown : NULL;

		if (strcmp(verdicts[i], "waterfall") == 0 && waterfall_all_steps(waterfall))
			own = waterfall;
		outbuf_str(&h->ob, i ? "," : "");
		if ((rc = out_verdict(h, verdicts[i], own)))
			goto out;
	}
	sqlite3_finalize(waterfall);
	sqlite3_finalize(breakdown);
	waterfall = breakdown = NULL;
	outbuf_str(&h->ob, "},\n");
	if ((rc = out_breakdown_sums(h, &sums)))
		return rc;
	outbuf_str(&h->ob, ",\n");
	if ((rc = out_steps(h)))
		return rc;
	outbuf_str(&h->ob, ",\n");
	if ((rc = out_intervals(h)))
		return rc;
	outbuf_str(&h->ob, "}");
	return outbuf_error(&h->ob);
out:
	sqlite3_finalize(waterfall);
	sqlite3_finalize(breakdown);
	return rc;
}

/* html_write(); *@write_failed tells a failed write from the rest. */
static int write_page(sqlite3 *db, FILE *out, const struct html_info *info, char *err, size_t errlen,
		      int *write_failed)
{
	const char *css = asset("report.css"), *js = asset("report.js");
	struct html *h;
	int rc;

	*write_failed = 0;
	if (!css || !js || strstr(css, "</") || strstr(js, "</")) {
		/* "</" would end the element early: a bug in the build */
		strbuf(err, errlen, "the HTML report's stylesheet or script is missing from this build or unusable");
		return -ENOENT;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		strbuf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	h->db = db;
	outbuf_init(&h->ob, out);
	h->err = err;
	h->errlen = errlen;
	outbuf_str(&h->ob, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		/* no request of any kind: the file is the whole report */
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		"script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		"<meta name=\"generator\" content=\"mfu-report " MFU_VERSION "\">\n<title>mfu report: ");
	out_escaped(h, info->db_path);
	outbuf_str(&h->ob, "</title>\n<style>\n");
	outbuf_str(&h->ob, css);
	outbuf_str(&h->ob, "</style>\n</head>\n<body>\n<header class=\"page\"><h1>mfu report</h1>"
		"<p class=\"subtitle\">");
	out_escaped(h, info->db_path);
	outbuf_str(&h->ob, "</p></header>\n<noscript><p class=\"noscript\">This report draws its charts and tables with "
		"JavaScript, which is off here. Its data are in the script element mfu-data (JSON); "
		"mfu-report --format json prints the same sections.</p></noscript>\n<main id=\"report\">\n");
	outbuf_str(&h->ob, page_sections);
	outbuf_str(&h->ob, "</main>\n<footer class=\"page\"></footer>\n"
		"<script type=\"application/json\" id=\"mfu-data\">\n");
	rc = out_data(h, info);
	if (!rc) {
		outbuf_str(&h->ob, "\n</script>\n<script>\n");
		outbuf_str(&h->ob, js);
		outbuf_str(&h->ob, "</script>\n</body>\n</html>\n");
		rc = outbuf_flush(&h->ob);
	}
	if (rc && rc == outbuf_error(&h->ob)) {
		*write_failed = rc != -ENOMEM;
		strbuf(err, errlen, "%s", rc == -ENOMEM ? "out of memory" : strerror(-rc));
	}
	free(h->s);
	free(h);
	return rc;
}

int html_write(sqlite3 *db, FILE *out, const struct html_info *info, char *err, size_t errlen)
{
	int write_failed, rc = write_page(db, out, info, err, errlen, &write_failed);

	if (write_failed)
		strbuf(err, errlen, "cannot write: %s", strerror(-rc));
	return rc;
}

int html_report(sqlite3 *db, const char *path, const struct html_info *info, char *err, size_t errlen)
{
	const char *name = strcmp(path, "-") == 0 ? "the HTML report to standard output" : path;
	int to_stdout = strcmp(path, "-") == 0, write_failed, rc;
	struct stat out_st, db_st;
	char msg[1024] = "";
	FILE *f;

	if (!to_stdout && stat(path, &out_st) == 0 && stat(info->db_path, &db_st) == 0 &&
	    out_st.st_dev == db_st.st_dev && out_st.st_ino == db_st.st_ino) {
		strbuf(err, errlen, "--html %s: that is the database; name another file", path);
		return -EEXIST;
	}
	f = to_stdout ? stdout : fopen(path, "w");
	if (!f) {
		rc = -errno;
		strbuf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
		return rc;
	}
	rc = write_page(db, f, info, msg, sizeof(msg), &write_failed);
	if (to_stdout) {
		if (!rc && fflush(stdout)) {
			rc = errno ? -errno : -EIO;
			write_failed = 1;
		}
	} else {
		int regular = fstat(fileno(f), &out_st) == 0 && S_ISREG(out_st.st_mode);

		if (fclose(f) && !rc) {
			rc = errno ? -errno : -EIO;
			write_failed = 1;
		}
		if (rc && regular)
			unlink(path); /* half a report is no report */
	}
	if (write_failed)
		strbuf(err, errlen, "cannot write %s: %s", name, strerror(-rc));
	else if (rc == -EIO)
		strbuf(err, errlen, "%s: %s", info->db_path, msg); /* the database's error */
	else if (rc)
		strbuf(err, errlen, "%s", msg);
	return rc;
}
