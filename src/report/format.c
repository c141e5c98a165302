#include "format.h"
#include "format_impl.h"
#include "outbuf.h"
#include "summary_text.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A utilization above this (10,000%) is printed as "impossible" in table
 * and markdown: no peak is 100 times too low, so the declared work is
 * absurd (a target's mfu_step_model(1e300, 1e300)), and its digits would
 * only fill the column. csv and json keep the number. */
#define UTIL_ABSURD 100.0

/* How table and markdown show a column: its header (with the unit) and how
 * to print its numbers. csv and json print the column name and the value as
 * it is (fractions, milliseconds, plain FLOPs). */
enum style {
	STYLE_AUTO,  /* counts: integers (and integral reals) as such, other
		      * reals with 6 significant digits */
	STYLE_MS,    /* milliseconds, 3 decimals (microseconds) */
	STYLE_PCT,   /* a fraction shown as a percentage with 2 decimals */
	STYLE_UTIL,  /* a utilization: as STYLE_PCT, and a "!" above 100%, which
		      * cannot be true (a peak too low, declared work too high);
		      * "impossible" above UTIL_ABSURD */
	STYLE_ENG,   /* FLOPs, bytes: engineering notation, 1.23 G */
	STYLE_RATIO, /* 2 decimals */
	STYLE_TEXT,
};

/*
 * A column's header and style come from its name: a unit suffix ("_ms",
 * "_flops", "_lo"...) sets the style and the unit in the header, and words
 * such as "cpu" or "hw" are capitalised ("cpu_ms" -> "CPU ms"). So a new
 * analysis column needs no edit here unless its name says too little;
 * the exceptions below are those names.
 */
static const struct {
	const char *suffix;
	const char *unit;
	enum style style;
} suffix_rules[] = {
	{ "_flops_per_s", " FLOP/s", STYLE_ENG },
	{ "_bytes_per_s", " bytes/s", STYLE_ENG },
	{ "_ms", " ms", STYLE_MS },
	{ "_lo", " lo %", STYLE_PCT },
	{ "_hi", " hi %", STYLE_PCT },
	{ "_source", " source", STYLE_TEXT },
	{ "_flops", " FLOP", STYLE_ENG },
	{ "_bytes", " bytes", STYLE_ENG },
	{ "_ops", " ops", STYLE_ENG },
	{ "_util", " util %", STYLE_PCT },
};

static const struct {
	const char *word, *label;
} word_labels[] = {
	{ "cpu", "CPU" }, { "hw", "HW" }, { "mfu", "MFU" }, { "hfu", "HFU" }, { "mbu", "MBU" },
	{ "dram", "DRAM" }, { "bw", "BW" }, { "ai", "AI" }, { "amx", "AMX" }, { "ipc", "IPC" },
};

struct column_style {
	const char *name;
	const char *label; /* NULL: from the rules */
	enum style style;
};

static const struct column_style column_styles[] = {
	/* utilizations: a "!" above 100% */
	{ "mfu", "MFU %", STYLE_UTIL },
	{ "hfu", "HFU %", STYLE_UTIL },
	{ "mbu", "MBU %", STYLE_UTIL },
	{ "e2e_mfu", "e2e MFU %", STYLE_UTIL },
	{ "mfu_common", "MFU common steps %", STYLE_UTIL },
	{ "hfu_common", "HFU common steps %", STYLE_UTIL },
	{ "job_mfu", "job MFU %", STYLE_UTIL },
	{ "dram_bw_util", "DRAM BW %", STYLE_UTIL },
	{ "run_mfu", "run MFU %", STYLE_UTIL },
	{ "busy_mfu", "busy MFU %", STYLE_UTIL },
	{ "compute_efficiency", "compute eff %", STYLE_UTIL },
	/* fractions without a suffix */
	{ "share", "share %", STYLE_PCT },
	{ "change", "change %", STYLE_PCT }, /* --diff: new / base - 1 */
	{ "hw_fraction", "counted %", STYLE_PCT },
	{ "lib_in_steps", "lib in steps %", STYLE_PCT },
	{ "idle", "idle %", STYLE_PCT },
	{ "kernel", "kernel %", STYLE_PCT },
	{ "sync", "sync %", STYLE_PCT },
	{ "dispatch", "dispatch %", STYLE_PCT },
	{ "unclassified", "unclassified %", STYLE_PCT },
	{ "compute", "compute %", STYLE_PCT },
	/* ratios */
	{ "ipc", "IPC", STYLE_RATIO },
	{ "cpus", "CPUs busy", STYLE_RATIO },
	{ "ai_model", "AI model FLOP/B", STYLE_RATIO },
	{ "ai_hw", "AI HW FLOP/B", STYLE_RATIO },
	{ "ratio_to_spec", "vs spec", STYLE_RATIO },
	{ "spread", "max/median", STYLE_RATIO },
	{ "mean_spread", "mean max/median", STYLE_RATIO },
	{ "max_spread", "max max/median", STYLE_RATIO },
	{ "straggler_threshold", "straggler threshold %", STYLE_PCT },
	{ "job_peak_flops", "job peak FLOP/s", STYLE_ENG },
	/* rates and amounts the name does not say */
	{ "peak_flops", "peak FLOP/s", STYLE_ENG },
	{ "peak_source", "peak FLOP/s source", STYLE_TEXT },
	{ "peak_bw", "peak bytes/s", STYLE_ENG },
	{ "peak_bw_source", "peak bytes/s source", STYLE_TEXT },
	{ "hw_flops_fp64", "HW FLOP fp64", STYLE_ENG },
	{ "hw_flops_fp32", "HW FLOP fp32", STYLE_ENG },
	{ "hw_flops_fp16", "HW FLOP fp16", STYLE_ENG },
	{ "run_lib_flops_fp64", "run lib FLOP fp64", STYLE_ENG },
	{ "run_lib_flops_fp32", "run lib FLOP fp32", STYLE_ENG },
	{ "run_lib_flops_bf16", "run lib FLOP bf16", STYLE_ENG },
	{ "run_lib_flops_fp16", "run lib FLOP fp16", STYLE_ENG },
	{ "run_lib_ops_int8", "run lib ops int8", STYLE_ENG },
	{ "busy_flops_per_s", "busy FLOP/CPU-s", STYLE_ENG },
	{ "value", "value", STYLE_ENG },
	{ "per_s", "per s", STYLE_ENG },
	/* other headers */
	{ "cpu_migrations", "migrations", STYLE_AUTO },
	{ "cpu_err_ms", "CPU +- ms", STYLE_MS },
	{ "oncpu_ms", "on-CPU ms", STYLE_MS },
	{ "ncpu", "CPUs", STYLE_AUTO },
	{ "ncores", "cores", STYLE_AUTO },
	{ "dso", "library", STYLE_TEXT },
	/* text, left-aligned even when every row is null */
	{ "phase", NULL, STYLE_TEXT },
	{ "counts", NULL, STYLE_TEXT },
	{ "dtype", NULL, STYLE_TEXT },
	{ "state", NULL, STYLE_TEXT },
	{ "kind", NULL, STYLE_TEXT },
	{ "text", NULL, STYLE_TEXT }, /* notes: the header is the column's name */
	{ "where", NULL, STYLE_TEXT },
	{ "class", NULL, STYLE_TEXT },
	{ "symbol", NULL, STYLE_TEXT },
	{ "event", NULL, STYLE_TEXT },
	{ "source", NULL, STYLE_TEXT },
	{ "scope", NULL, STYLE_TEXT },
	{ "detail", NULL, STYLE_TEXT },
	{ "name", NULL, STYLE_TEXT },
	{ "unit", NULL, STYLE_TEXT },
	{ "verdict", NULL, STYLE_TEXT },
	{ "stragglers", NULL, STYLE_TEXT },
	{ "host", NULL, STYLE_TEXT },
	{ "path", NULL, STYLE_TEXT },
};

/* The header of column @name by the rules, into @buf; returns its style. */
static enum style style_by_rules(const char *name, char *buf, size_t len)
{
	size_t n = strlen(name), k = 0;
	const char *unit = "";
	enum style style = STYLE_AUTO;

	for (size_t r = 0; r < sizeof(suffix_rules) / sizeof(suffix_rules[0]); r++) {
		size_t sl = strlen(suffix_rules[r].suffix);
		if (n > sl && strcmp(name + n - sl, suffix_rules[r].suffix) == 0) {
			n -= sl;
			unit = suffix_rules[r].unit;
			style = suffix_rules[r].style;
			break;
		}
	}
	buf[0] = '\0';
	for (size_t i = 0; i < n;) {
		size_t w = i;
		const char *word = NULL;

		while (w < n && name[w] != '_')
			w++;
		for (size_t j = 0; j < sizeof(word_labels) / sizeof(word_labels[0]); j++)
			if (strlen(word_labels[j].word) == w - i && strncmp(name + i, word_labels[j].word, w - i) == 0)
				word = word_labels[j].label;
		k += (size_t)snprintf(buf + k, k < len ? len - k : 0, "%s%.*s", i ? " " : "",
				      word ? (int)strlen(word) : (int)(w - i), word ? word : name + i);
		i = w < n ? w + 1 : w;
	}
	snprintf(buf + (k < len ? k : len - 1), k < len ? len - k : 1, "%s", unit);
	return style;
}

/* Column @name's header (with its unit) and style: the naming rules, then
 * the exceptions. The header is written into @buf or, for an exception
 * with a header of its own, *@label points to it. */
static enum style column_style(const char *name, char *buf, size_t len, const char **label)
{
	enum style style = style_by_rules(name, buf, len);

	*label = buf;
	for (size_t s = 0; s < sizeof(column_styles) / sizeof(column_styles[0]); s++) {
		if (strcmp(name, column_styles[s].name) == 0) {
			if (column_styles[s].label)
				*label = column_styles[s].label;
			return column_styles[s].style;
		}
	}
	return style;
}

const char *format_column_style(const char *name, char *label, size_t len)
{
	static const char *const words[] = {
		[STYLE_AUTO] = "auto", [STYLE_MS] = "ms", [STYLE_PCT] = "pct", [STYLE_UTIL] = "util",
		[STYLE_ENG] = "eng", [STYLE_RATIO] = "ratio", [STYLE_TEXT] = "text",
	};
	const char *l;
	enum style style = column_style(name, label, len, &l);

	if (l != label)
		snprintf(label, len, "%s", l);
	return words[style];
}

struct column {
	const char *name;
	const char *label;
	char label_buf[64]; /* the label by the naming rules */
	enum style style;
	size_t width;    /* display width in characters, table and markdown */
	int left;        /* left-aligned: a text column */
};

struct format {
	enum format_kind kind;
	size_t nsections;
	size_t nwritten;   /* sections written so far */
	char *cell;        /* scratch: one cell's text */
	size_t cell_len, cell_cap;
	struct column *cols;
	size_t ncols;
	char *columns;     /* format_set_columns: the next section's list */
	size_t *shown;     /* table/markdown: the columns shown, by index */
	size_t nshown;
	int frozen;        /* the grid's header is out: alignments are fixed */
	int raw;           /* csv: text as stored (format_set_raw) */
	char *held;        /* the text of the rows that size the grid */
	size_t held_len, held_cap;
	struct held_cell {
		size_t len;   /* bytes in held */
		size_t width; /* display width */
	} *cells;          /* of the held rows, row by row */
	size_t ncells, cells_cap;
	char *verdict;     /* printed under the next section's title (people's formats) */
	struct outbuf ob;  /* the output */
};

/* ---- growing scratch buffers ---- */

/* ---- the writer ---- */

int format_parse(const char *name, enum format_kind *out)
{
	static const struct {
		const char *name;
		enum format_kind kind;
	} kinds[] = {
		{ "table", FORMAT_TABLE },
		{ "csv", FORMAT_CSV },
		{ "json", FORMAT_JSON },
		{ "markdown", FORMAT_MARKDOWN },
		{ "md", FORMAT_MARKDOWN },
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strcmp(name, kinds[i].name) == 0) {
			*out = kinds[i].kind;
			return 0;
		}
	}
	return -EINVAL;
}

int format_is_human(enum format_kind kind)
{
	return kind == FORMAT_TABLE || kind == FORMAT_MARKDOWN;
}

int format_new(enum format_kind kind, FILE *out, size_t nsections, struct format **fmt)
{
	struct format *f = calloc(1, sizeof(*f));

	*fmt = NULL;
	if (!f)
		return -ENOMEM;
	f->kind = kind;
	outbuf_init(&f->ob, out);
	f->nsections = nsections;
	*fmt = f;
	return 0;
}

void format_free(struct format *f)
{
	if (!f)
		return;
	free(f->cols);
	free(f->columns);
	free(f->shown);
	free(f->cell);
	free(f->held);
	free(f->cells);
	free(f->verdict);
	free(f);
}

static int step_error(sqlite3_stmt *stmt, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s", sqlite3_errmsg(sqlite3_db_handle(stmt)));
	return -EIO;
}

/* A row in which every value is NULL says nothing: an aggregate over no
 * rows (the waterfall's all-steps row of a run without steps) is not a
 * row of unknowns to show. Every format leaves it out. */
static int row_is_empty(const struct format *f, sqlite3_stmt *stmt)
{
	for (size_t i = 0; i < f->ncols; i++)
		if (sqlite3_column_type(stmt, (int)i) != SQLITE_NULL)
			return 0;
	return f->ncols > 0;
}

/* The index of column @name (@len bytes) in f->cols, or -1. */
static long column_index(const struct format *f, const char *name, size_t len)
{
	for (size_t i = 0; i < f->ncols; i++)
		if (strlen(f->cols[i].name) == len && strncmp(f->cols[i].name, name, len) == 0)
			return (long)i;
	return -1;
}

/* f->shown: the columns of f->columns (in its order) that the section has,
 * or every column when there is no list or the section has none of it. */
static int columns_choose(struct format *f)
{
	size_t *shown = calloc(f->ncols ? f->ncols : 1, sizeof(*shown)), n = 0;
	const char *p = f->columns;

	if (!shown)
		return -ENOMEM;
	while (p && *p) {
		size_t len = strcspn(p, ",");
		long i = column_index(f, p, len);
		int dup = 0;

		for (size_t k = 0; k < n && i >= 0; k++)
			dup |= shown[k] == (size_t)i;
		if (i >= 0 && !dup)
			shown[n++] = (size_t)i;
		p += len + (p[len] == ',');
	}
	if (n == 0)
		for (; n < f->ncols; n++)
			shown[n] = n;
	free(f->shown);
	f->shown = shown;
	f->nshown = n;
	return 0;
}

int format_set_columns(struct format *f, const char *list)
{
	free(f->columns);
	f->columns = NULL;
	if (list && !(f->columns = strdup(list)))
		return -ENOMEM;
	return 0;
}

/* Describe the columns of @stmt in f->cols. */
static int columns_init(struct format *f, sqlite3_stmt *stmt)
{
	size_t n = (size_t)sqlite3_column_count(stmt);
	struct column *cols = calloc(n ? n : 1, sizeof(*cols));

	if (!cols)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *name = sqlite3_column_name(stmt, (int)i);

		cols[i].name = name ? name : "?";
		cols[i].style = column_style(cols[i].name, cols[i].label_buf, sizeof(cols[i].label_buf),
					     &cols[i].label);
		cols[i].left = cols[i].style == STYLE_TEXT;
		cols[i].width = strlen(cols[i].label);
	}
	free(f->cols);
	f->cols = cols;
	f->ncols = n;
	return columns_choose(f);
}

/* "%.6g" of @v into @buf (FMT_NUM_MAX bytes); returns the length written. */
static size_t fmt_g6(char *buf, double v)
{
	int n = isfinite(v) ? snprintf(buf, FMT_NUM_MAX, "%.6g", v)
			    : snprintf(buf, FMT_NUM_MAX, "%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");

	return n < 0 ? 0 : (size_t)n < FMT_NUM_MAX ? (size_t)n : FMT_NUM_MAX - 1;
}

/* A number in a column of @style, for table/markdown, into @num
 * (FMT_NUM_MAX bytes). Returns its length. */
static size_t cell_number(enum style style, double v, char *num)
{
	size_t n;

	switch (style) {
	case STYLE_MS: return fmt_fixed(num, v, 3);
	case STYLE_PCT: return fmt_fixed(num, v * 100, 2);
	case STYLE_UTIL:
		if (v > UTIL_ABSURD) {
			/* digits of 1e300 % would only say the input is
			 * absurd; the notes say why (notes.sql: impossible) */
			memcpy(num, "impossible", sizeof("impossible"));
			return strlen(num);
		}
		n = fmt_fixed(num, v * 100, 2);
		if (v > 1 && n + 1 < FMT_NUM_MAX)
			num[n++] = '!';
		return n;
	case STYLE_RATIO: return fmt_fixed(num, v, 2);
	case STYLE_ENG: return format_eng(num, FMT_NUM_MAX, v);
	case STYLE_AUTO: return v == floor(v) && fabs(v) < 9e15 ? fmt_fixed(num, v, 0) : fmt_g6(num, v);
	default: return fmt_g6(num, v);
	}
}

/* Format cell @i of the current row for table/markdown into f->cell.
 * Returns the display width or -ENOMEM. */
static long cell_human(struct format *f, sqlite3_stmt *stmt, int i, int markdown)
{
	struct column *c = &f->cols[i];
	char num[FMT_NUM_MAX];
	size_t n = 0;

	f->cell_len = 0;
	switch (sqlite3_column_type(stmt, i)) {
	case SQLITE_NULL:
		num[0] = '-';
		num[1] = '\0';
		n = 1;
		break;
	case SQLITE_TEXT:
	case SQLITE_BLOB: {
		const unsigned char *s = sqlite3_column_text(stmt, i);
		int len = sqlite3_column_bytes(stmt, i);

		if (!f->frozen)
			c->left = 1;
		return format_sanitize(&f->cell, &f->cell_len, &f->cell_cap, s ? s : (const unsigned char *)"",
				       (size_t)len, markdown);
	}
	case SQLITE_INTEGER:
		/* an integer in a column of figures is one figure among them */
		n = c->style == STYLE_AUTO || c->style == STYLE_TEXT ? fmt_i64(num, sqlite3_column_int64(stmt, i))
								      : cell_number(c->style, sqlite3_column_double(stmt, i), num);
		break;
	default:
		n = cell_number(c->style, sqlite3_column_double(stmt, i), num);
		break;
	}
	if (buf_append(&f->cell, &f->cell_len, &f->cell_cap, num, n))
		return -ENOMEM;
	return (long)n;
}

static void out_padded(struct format *f, const char *s, size_t len, size_t width, size_t target, int left, int last)
{
	if (!left)
		outbuf_fill(&f->ob, ' ', target > width ? target - width : 0);
	outbuf_write(&f->ob, s, len);
	if (left && !last)
		outbuf_fill(&f->ob, ' ', target > width ? target - width : 0);
}

static void section_title(struct format *f, const char *name)
{
	if (f->nwritten)
		outbuf_char(&f->ob, '\n');
	if (f->kind == FORMAT_MARKDOWN) {
		outbuf_str(&f->ob, "### ");
		outbuf_str(&f->ob, name);
		outbuf_str(&f->ob, "\n\n");
	} else {
		outbuf_str(&f->ob, name);
		outbuf_char(&f->ob, '\n');
	}
	if (f->verdict) {
		outbuf_str(&f->ob, f->kind == FORMAT_MARKDOWN ? "" : "  ");
		outbuf_str(&f->ob, f->verdict);
		outbuf_str(&f->ob, f->kind == FORMAT_MARKDOWN ? "\n\n" : "\n");
		free(f->verdict);
		f->verdict = NULL;
	}
}

void format_set_raw(struct format *f, int raw)
{
	f->raw = raw;
}

int format_set_verdict(struct format *f, const char *text)
{
	size_t len = 0, cap = 0;

	free(f->verdict);
	f->verdict = NULL;
	if (!text || !*text)
		return 0;
	/* the text holds names from the database: escaped as a cell is (no
	 * control bytes, bidirectional overrides or invalid UTF-8; no markup
	 * in markdown) */
	if (format_sanitize(&f->verdict, &len, &cap, (const unsigned char *)text, strlen(text),
			    f->kind == FORMAT_MARKDOWN) < 0) {
		free(f->verdict);
		f->verdict = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Keep the cell in f->cell (display width @w) among the held rows. */
static int hold_cell(struct format *f, long w)
{
	if (buf_append(&f->held, &f->held_len, &f->held_cap, f->cell, f->cell_len) ||
	    array_grow(&f->cells, &f->cells_cap, f->ncells + 1, sizeof(*f->cells)))
		return -ENOMEM;
	f->cells[f->ncells].len = f->cell_len;
	f->cells[f->ncells].width = (size_t)w;
	f->ncells++;
	return 0;
}

static void grid_header(struct format *f, int md)
{
	for (int line = 0; line < 2; line++) {
		if (md)
			outbuf_str(&f->ob, "| ");
		for (size_t j = 0; j < f->nshown; j++) {
			struct column *c = &f->cols[f->shown[j]];
			int last = j + 1 == f->nshown;

			if (j)
				outbuf_str(&f->ob, md ? " | " : "  ");
			if (line == 0) {
				out_padded(f, c->label, strlen(c->label), strlen(c->label), c->width, c->left,
					   last && !md);
			} else if (md) {
				/* GitHub wants at least three dashes; the colon aligns. */
				size_t dashes = c->width > 4 ? c->width - 1 : 3;
				if (c->left)
					outbuf_char(&f->ob, ':');
				for (size_t d = 0; d < dashes; d++)
					outbuf_char(&f->ob, '-');
				if (!c->left)
					outbuf_char(&f->ob, ':');
			} else {
				for (size_t d = 0; d < c->width; d++)
					outbuf_char(&f->ob, '-');
			}
		}
		outbuf_str(&f->ob, md ? " |\n" : "\n");
	}
}

/* One row per record. The columns are sized on the first GRID_SIZE_ROWS
 * rows of the section, or on as many as GRID_SIZE_BYTES of their text hold,
 * kept in memory; the rows after them are printed as they come, a column
 * widening (from that row on) for a value longer than any before. One pass
 * over the rows, as csv: the two passes this replaced ran each section's
 * SQL twice (a million-step steps table took 1.42 times its csv's CPU time,
 * now 1.06), and memory stays bounded whatever the number of rows
 * (docs/performance.md, "Table and markdown of a million steps"). */
static int section_grid(struct format *f, const char *name, sqlite3_stmt *stmt, char *err, size_t errlen)
{
	int md = f->kind == FORMAT_MARKDOWN, rc, more = 0;
	size_t rows = 0, k = 0, off = 0;
	long w;

	f->held_len = 0;
	f->ncells = 0;
	f->frozen = 0;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (row_is_empty(f, stmt))
			continue;
		for (size_t j = 0; j < f->nshown; j++) {
			size_t i = f->shown[j];

			w = cell_human(f, stmt, (int)i, md);
			if (w < 0 || hold_cell(f, w))
				return -ENOMEM;
			if ((size_t)w > f->cols[i].width)
				f->cols[i].width = (size_t)w;
		}
		if (++rows == GRID_SIZE_ROWS || f->held_len >= GRID_SIZE_BYTES) {
			more = 1;
			break;
		}
	}
	if (!more && rc != SQLITE_DONE)
		return step_error(stmt, err, errlen);

	section_title(f, name);
	grid_header(f, md);
	f->frozen = 1;
	for (size_t r = 0; r < rows; r++) {
		if (md)
			outbuf_str(&f->ob, "| ");
		for (size_t j = 0; j < f->nshown; j++, k++) {
			size_t i = f->shown[j];

			if (j)
				outbuf_str(&f->ob, md ? " | " : "  ");
			out_padded(f, f->held + off, f->cells[k].len, f->cells[k].width, f->cols[i].width,
				   f->cols[i].left, j + 1 == f->nshown && !md);
			off += f->cells[k].len;
		}
		outbuf_str(&f->ob, md ? " |\n" : "\n");
	}
	while (more && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (row_is_empty(f, stmt))
			continue;
		if (md)
			outbuf_str(&f->ob, "| ");
		for (size_t j = 0; j < f->nshown; j++) {
			size_t i = f->shown[j];

			w = cell_human(f, stmt, (int)i, md);
			if (w < 0)
				return -ENOMEM;
			if ((size_t)w > f->cols[i].width)
				f->cols[i].width = (size_t)w;
			if (j)
				outbuf_str(&f->ob, md ? " | " : "  ");
			out_padded(f, f->cell, f->cell_len, (size_t)w, f->cols[i].width, f->cols[i].left,
				   j + 1 == f->nshown && !md);
		}
		outbuf_str(&f->ob, md ? " |\n" : "\n");
	}
	if (more && rc != SQLITE_DONE)
		return step_error(stmt, err, errlen);
	if (rows == 0)
		outbuf_str(&f->ob, md ? "\n(no rows)\n" : "(no rows)\n");
	if (f->nshown < f->ncols) {
		/* the columns left out are one option away, said where the
		 * reader looks (docs/report.md, "Columns") */
		outbuf_printf(&f->ob, "%s(%zu more column%s: --columns all; csv and json carry every column)\n",
			      md ? "\n" : "", f->ncols - f->nshown, f->ncols - f->nshown == 1 ? "" : "s");
	}
	f->frozen = 0;
	return outbuf_error(&f->ob);
}

/* A one-row section as a field/value list. */
static int section_fields(struct format *f, const char *name, sqlite3_stmt *stmt, char *err, size_t errlen)
{
	int md = f->kind == FORMAT_MARKDOWN, rc;
	size_t label_w = md ? strlen("field") : 0, rows = 0;
	long w;

	for (size_t i = 0; i < f->ncols; i++)
		if (strlen(f->cols[i].label) > label_w)
			label_w = strlen(f->cols[i].label);
	section_title(f, name);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (rows++)
			outbuf_char(&f->ob, '\n');
		if (md) {
			outbuf_str(&f->ob, "| field");
			outbuf_fill(&f->ob, ' ', label_w - strlen("field"));
			outbuf_str(&f->ob, " | value |\n| :");
			for (size_t d = 1; d < label_w; d++)
				outbuf_char(&f->ob, '-');
			outbuf_str(&f->ob, " | :---- |\n");
		}
		for (size_t i = 0; i < f->ncols; i++) {
			const char *label = f->cols[i].label;

			w = cell_human(f, stmt, (int)i, md);
			if (w < 0)
				return -ENOMEM;
			outbuf_str(&f->ob, md ? "| " : "  ");
			outbuf_str(&f->ob, label);
			outbuf_fill(&f->ob, ' ', label_w - strlen(label));
			outbuf_str(&f->ob, md ? " | " : "  ");
			outbuf_write(&f->ob, f->cell, f->cell_len);
			outbuf_str(&f->ob, md ? " |\n" : "\n");
		}
	}
	if (rc != SQLITE_DONE)
		return step_error(stmt, err, errlen);
	if (rows == 0)
		outbuf_str(&f->ob, "(no rows)\n");
	return outbuf_error(&f->ob);
}

/* RFC 4180: a field with a comma, quote, CR or LF is quoted and its quotes
 * doubled. Other control bytes are quoted too, so that no reader splits on
 * them (only --raw writes any: otherwise csv_text escaped them). @guard: a
 * "'" goes first, inside the quotes. */
static void csv_field(struct format *f, const unsigned char *s, size_t n, int guard)
{
	int quote = 0;

	for (size_t i = 0; i < n && !quote; i++)
		quote = s[i] == ',' || s[i] == '"' || s[i] < 0x20 || s[i] == 0x7f;
	if (quote)
		outbuf_char(&f->ob, '"');
	if (guard)
		outbuf_char(&f->ob, '\'');
	if (!quote) {
		outbuf_write(&f->ob, (const char *)s, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			outbuf_char(&f->ob, '"');
		outbuf_char(&f->ob, (char)s[i]);
	}
	outbuf_char(&f->ob, '"');
}

/* @s (@n bytes) is a plain decimal number, "-1.5", "+2", "3e-7": text a
 * spreadsheet reads as that number, not a formula. */
static int plain_number(const unsigned char *s, size_t n)
{
	size_t i = 0, digits = 0;

	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		digits++;
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			digits++;
	if (!digits)
		return 0;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		size_t e = 0;

		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			e++;
		if (!e)
			return 0;
	}
	return i == n;
}

int format_csv_guarded(const unsigned char *s, size_t n)
{
	/* OWASP's list (CSV injection): = + - @, and TAB and CR, which csv
	 * text never starts with once escaped ("\t", "\r") */
	return n > 0 && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' || s[0] == '\t' ||
			 s[0] == '\r') && !plain_number(s, n);
}

/* A text cell of csv: escaped as the table escapes it (control bytes, C1
 * and bidirectional controls, bytes that are not UTF-8, and '\\'), so a
 * terminal shows it and cannot be driven by it; and a "'" before text a
 * spreadsheet would run as a formula. --raw: the bytes as stored. */
static int csv_text(struct format *f, const unsigned char *s, size_t n)
{
	if (f->raw) {
		csv_field(f, s, n, 0);
		return 0;
	}
	f->cell_len = 0;
	if (format_sanitize(&f->cell, &f->cell_len, &f->cell_cap, s, n, 0) < 0)
		return -ENOMEM;
	csv_field(f, (const unsigned char *)f->cell, f->cell_len,
		  format_csv_guarded((const unsigned char *)f->cell, f->cell_len));
	return 0;
}

/* The value of a cell as csv or json wants it: numbers in full precision. */
static int cell_machine(struct format *f, sqlite3_stmt *stmt, int i)
{
	char num[64];
	size_t n;
	double v;
	int json = f->kind == FORMAT_JSON;

	switch (sqlite3_column_type(stmt, i)) {
	case SQLITE_NULL:
		if (json)
			outbuf_str(&f->ob, "null");
		return 0;
	case SQLITE_INTEGER:
		n = fmt_i64(num, sqlite3_column_int64(stmt, i));
		outbuf_write(&f->ob, num, n);
		return 0;
	case SQLITE_FLOAT:
		v = sqlite3_column_double(stmt, i);
		if (json && !isfinite(v)) {
			outbuf_str(&f->ob, "null"); /* JSON has no infinity */
			return 0;
		}
		n = format_double(num, v);
		outbuf_write(&f->ob, num, n);
		return 0;
	default: {
		const unsigned char *s = sqlite3_column_text(stmt, i);
		size_t len = (size_t)sqlite3_column_bytes(stmt, i);

		if (!s)
			s = (const unsigned char *)"";
		if (!json)
			return csv_text(f, s, len);
		f->cell_len = 0;
		if (json_append_string(&f->cell, &f->cell_len, &f->cell_cap, (const char *)s, len))
			return -ENOMEM;
		outbuf_write(&f->ob, f->cell, f->cell_len);
		return 0;
	}
	}
}

static int section_csv(struct format *f, sqlite3_stmt *stmt, char *err, size_t errlen)
{
	int rc;

	if (f->nwritten)
		outbuf_char(&f->ob, '\n');
	for (size_t i = 0; i < f->ncols; i++) {
		if (i)
			outbuf_char(&f->ob, ',');
		if (csv_text(f, (const unsigned char *)f->cols[i].name, strlen(f->cols[i].name)))
			return -ENOMEM;
	}
	outbuf_char(&f->ob, '\n');
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (row_is_empty(f, stmt))
			continue;
		for (size_t i = 0; i < f->ncols; i++) {
			if (i)
				outbuf_char(&f->ob, ',');
			if (cell_machine(f, stmt, (int)i))
				return -ENOMEM;
		}
		outbuf_char(&f->ob, '\n');
	}
	if (rc != SQLITE_DONE)
		return step_error(stmt, err, errlen);
	return outbuf_error(&f->ob);
}

static int section_json(struct format *f, const char *name, sqlite3_stmt *stmt, char *err, size_t errlen)
{
	char **keys = calloc(f->ncols ? f->ncols : 1, sizeof(*keys));
	size_t nrow = 0;
	int rc, ret = -ENOMEM;

	if (!keys)
		return -ENOMEM;
	/* The keys, escaped once: ',"name":' */
	for (size_t i = 0; i < f->ncols; i++) {
		size_t len = 0, cap = 0;

		if (buf_append(&keys[i], &len, &cap, i ? "," : "{", 1) ||
		    json_append_string(&keys[i], &len, &cap, f->cols[i].name,
				       strlen(f->cols[i].name)) ||
		    buf_append(&keys[i], &len, &cap, ":", 1))
			goto out;
	}
	if (f->nsections > 1) {
		outbuf_str(&f->ob, f->nwritten ? ",\n" : "{\n");
		f->cell_len = 0;
		if (json_append_string(&f->cell, &f->cell_len, &f->cell_cap, name,
				       strlen(name)))
			goto out;
		outbuf_write(&f->ob, f->cell, f->cell_len);
		outbuf_str(&f->ob, ": ");
	}
	outbuf_char(&f->ob, '[');
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (row_is_empty(f, stmt))
			continue;
		outbuf_str(&f->ob, nrow++ ? ",\n" : "\n");
		for (size_t i = 0; i < f->ncols; i++) {
			outbuf_str(&f->ob, keys[i]);
			if (cell_machine(f, stmt, (int)i))
				goto out;
		}
		outbuf_str(&f->ob, f->ncols ? "}" : "{}");
	}
	if (rc != SQLITE_DONE) {
		ret = step_error(stmt, err, errlen);
		goto out;
	}
	outbuf_str(&f->ob, nrow ? "\n]" : "]");
	if (f->nsections <= 1)
		outbuf_char(&f->ob, '\n');
	ret = outbuf_error(&f->ob);
out:
	for (size_t i = 0; i < f->ncols; i++)
		free(keys[i]);
	free(keys);
	return ret;
}

int format_section(struct format *f, const char *name, sqlite3_stmt *stmt, int single_row,
		   char *err, size_t errlen)
{
	int rc = columns_init(f, stmt);

	if (rc)
		return rc;
	if (format_is_human(f->kind) && single_row && strcmp(name, "summary") == 0 && summary_text_handles(stmt)) {
		/* people's summary: its own layout (summary_text.h) */
		rc = outbuf_flush(&f->ob);
		if (!rc)
			rc = summary_text_write(f->ob.out, f->kind == FORMAT_MARKDOWN, f->nwritten > 0, stmt, err,
						errlen);
		free(f->verdict);
		f->verdict = NULL;
		f->nwritten++;
		return rc;
	}
	switch (f->kind) {
	case FORMAT_CSV: rc = section_csv(f, stmt, err, errlen); break;
	case FORMAT_JSON: rc = section_json(f, name, stmt, err, errlen); break;
	default:
		rc = single_row ? section_fields(f, name, stmt, err, errlen)
				: section_grid(f, name, stmt, err, errlen);
	}
	f->nwritten++;
	if (!rc && outbuf_error(&f->ob))
		rc = outbuf_error(&f->ob);
	return rc;
}

int format_notes(struct format *f, sqlite3_stmt *stmt, int missing_only, char *err, size_t errlen)
{
	int md = f->kind == FORMAT_MARKDOWN, rc, text_col = -1, missing_col = -1, alert_col = -1;
	size_t n = 0;

	if (!format_is_human(f->kind))
		return 0;
	for (int i = 0; i < sqlite3_column_count(stmt); i++) {
		const char *name = sqlite3_column_name(stmt, i);

		if (name && strcmp(name, "text") == 0)
			text_col = i;
		else if (name && strcmp(name, "missing") == 0)
			missing_col = i;
		else if (name && strcmp(name, "alert") == 0)
			alert_col = i;
	}
	if (text_col < 0)
		return 0;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		/* a number that cannot be right is never left unexplained */
		if (missing_only && missing_col >= 0 && sqlite3_column_int(stmt, missing_col) == 0 &&
		    (alert_col < 0 || sqlite3_column_int(stmt, alert_col) == 0))
			continue;
		if (n++ == 0) {
			outbuf_str(&f->ob, md ? "\n### notes\n\n" : "\nnotes\n");
		}
		f->cell_len = 0;
		if (format_sanitize(&f->cell, &f->cell_len, &f->cell_cap, sqlite3_column_text(stmt, text_col),
				    (size_t)sqlite3_column_bytes(stmt, text_col), md) < 0)
			return -ENOMEM;
		outbuf_str(&f->ob, md ? "- " : "  - ");
		outbuf_write(&f->ob, f->cell, f->cell_len);
		outbuf_char(&f->ob, '\n');
	}
	if (rc != SQLITE_DONE)
		return step_error(stmt, err, errlen);
	return outbuf_error(&f->ob);
}

int format_end(struct format *f)
{
	if (f->kind == FORMAT_JSON && f->nsections > 1)
		outbuf_str(&f->ob, f->nwritten ? "\n}\n" : "{}\n");
	return outbuf_finish(&f->ob);
}
