/* The report formats' writer: its life (format_new ... format_free), the
 * columns a section shows, table and markdown (the formats for people:
 * aligned grids, field lists, notes), and each section handed to its
 * format (csv and json: format_machine.c). */
#include "format.h"
#include "format_impl.h"
#include "format_writer.h"
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

int format_step_error(sqlite3_stmt *stmt, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s", sqlite3_errmsg(sqlite3_db_handle(stmt)));
	return -EIO;
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
		cols[i].style = format_column_header(cols[i].name, cols[i].label_buf, sizeof(cols[i].label_buf),
					     &cols[i].label);
		cols[i].left = cols[i].style == STYLE_TEXT || cols[i].style == STYLE_PATH;
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
		const unsigned char *slash = c->style == STYLE_PATH && s ? (const unsigned char *)strrchr((const char *)s, '/') : NULL;

		if (slash && slash[1]) {
			len -= (int)(slash + 1 - s);
			s = slash + 1;
		}
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

/* Table format: @s (@n bytes, made safe) from column @first, wrapped at
 * FORMAT_TEXT_WIDTH with the lines after the first at @indent, and a
 * newline. */
static void out_wrapped(struct format *f, const char *s, size_t n, size_t first, size_t indent)
{
	size_t col = first, i = 0, next, take;

	for (;;) {
		take = format_wrap_line(s + i, n - i, FORMAT_TEXT_WIDTH > col ? FORMAT_TEXT_WIDTH - col : 1, &next);
		outbuf_write(&f->ob, s + i, take);
		outbuf_char(&f->ob, '\n');
		i += next;
		if (i >= n || next == 0)
			break;
		outbuf_fill(&f->ob, ' ', indent);
		col = indent;
	}
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
	if (f->verdict && f->kind == FORMAT_MARKDOWN) {
		outbuf_str(&f->ob, f->verdict);
		outbuf_str(&f->ob, "\n\n");
	} else if (f->verdict) {
		outbuf_str(&f->ob, "  ");
		out_wrapped(f, f->verdict, strlen(f->verdict), 2, 2);
	}
	free(f->verdict);
	f->verdict = NULL;
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
		if (format_row_is_empty(f, stmt))
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
		return format_step_error(stmt, err, errlen);

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
		if (format_row_is_empty(f, stmt))
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
		return format_step_error(stmt, err, errlen);
	if (rows == 0)
		outbuf_str(&f->ob, md ? "\n(no rows)\n" : "(no rows)\n");
	if (f->nshown < f->ncols && rows > 0) {
		/* the columns left out are one option away, said where the
		 * reader looks (docs/report.md, "Columns"); of no rows, there
		 * is nothing more to see */
		outbuf_printf(&f->ob, "%s(%zu more column%s: --columns all; csv and json carry every column)\n",
			      md ? "\n" : "", f->ncols - f->nshown, f->ncols - f->nshown == 1 ? "" : "s");
	}
	f->frozen = 0;
	return outbuf_error(&f->ob);
}

/* One "LABEL  VALUE" line of a field list, the value in f->cell; a long
 * value (a peak's source, a job's mixed sources) wraps under itself. */
static void field_line(struct format *f, const char *label, int md, size_t label_w)
{
	outbuf_str(&f->ob, md ? "| " : "  ");
	outbuf_str(&f->ob, label);
	outbuf_fill(&f->ob, ' ', label_w - strlen(label));
	if (md) {
		outbuf_str(&f->ob, " | ");
		outbuf_write(&f->ob, f->cell, f->cell_len);
		outbuf_str(&f->ob, " |\n");
	} else {
		outbuf_str(&f->ob, "  ");
		out_wrapped(f, f->cell, f->cell_len, 4 + label_w, 4 + label_w);
	}
}

#define NOT_KNOWN "not known"

/* The labels of a row's unknown (NULL) fields, one line at its end:
 * "not known  wall ms, MFU %, ..." rather than a line of "-" each (a job
 * without a common step has a dozen). */
static int unknown_fields(struct format *f, sqlite3_stmt *stmt, int md, size_t label_w)
{
	static const char title[] = NOT_KNOWN;
	size_t n = 0;

	f->cell_len = 0;
	for (size_t i = 0; i < f->ncols; i++) {
		if (sqlite3_column_type(stmt, (int)i) != SQLITE_NULL)
			continue;
		const char *label = f->cols[i].label;
		if ((n++ && buf_append(&f->cell, &f->cell_len, &f->cell_cap, ", ", 2)) ||
		    buf_append(&f->cell, &f->cell_len, &f->cell_cap, label, strlen(label)))
			return -ENOMEM;
	}
	if (n)
		field_line(f, title, md, label_w);
	return 0;
}

/* A one-row section as a field/value list; its unknown fields listed
 * last, on one line (unknown_fields). */
static int section_fields(struct format *f, const char *name, sqlite3_stmt *stmt, char *err, size_t errlen)
{
	int md = f->kind == FORMAT_MARKDOWN, rc;
	size_t label_w = strlen(NOT_KNOWN), rows = 0; /* wider than "field" too */
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

			if (sqlite3_column_type(stmt, (int)i) == SQLITE_NULL)
				continue;
			w = cell_human(f, stmt, (int)i, md);
			if (w < 0)
				return -ENOMEM;
			field_line(f, label, md, label_w);
		}
		if (unknown_fields(f, stmt, md, label_w))
			return -ENOMEM;
	}
	if (rc != SQLITE_DONE)
		return format_step_error(stmt, err, errlen);
	if (rows == 0)
		outbuf_str(&f->ob, "(no rows)\n");
	return outbuf_error(&f->ob);
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
	case FORMAT_CSV: rc = format_section_csv(f, stmt, err, errlen); break;
	case FORMAT_JSON: rc = format_section_json(f, name, stmt, err, errlen); break;
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
		if (md) {
			outbuf_str(&f->ob, "- ");
			outbuf_write(&f->ob, f->cell, f->cell_len);
			outbuf_char(&f->ob, '\n');
		} else {
			outbuf_str(&f->ob, "  - ");
			out_wrapped(f, f->cell, f->cell_len, 4, 4);
		}
	}
	if (rc != SQLITE_DONE)
		return format_step_error(stmt, err, errlen);
	return outbuf_error(&f->ob);
}

int format_end(struct format *f)
{
	if (f->kind == FORMAT_JSON && f->nsections > 1)
		outbuf_str(&f->ob, f->nwritten ? "\n}\n" : "{}\n");
	return outbuf_finish(&f->ob);
}
