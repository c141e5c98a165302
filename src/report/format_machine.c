/* csv and json, the formats for programs: every column, numbers in full
 * precision (format_double), text escaped for the format. */
#include "format.h"
#include "format_impl.h"
#include "format_writer.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
	/* The number through the column's sqlite3_value: one column lookup
	 * where sqlite3_column_type() and a getter make two (30 million cells
	 * in a million steps; only unsafe across threads, and one reads). */
	sqlite3_value *val = sqlite3_column_value(stmt, i);
	char num[64];
	size_t n;
	double v;
	int json = f->kind == FORMAT_JSON;

	switch (sqlite3_value_type(val)) {
	case SQLITE_NULL:
		if (json)
			outbuf_str(&f->ob, "null");
		return 0;
	case SQLITE_INTEGER:
		n = fmt_i64(num, sqlite3_value_int64(val));
		outbuf_write(&f->ob, num, n);
		return 0;
	case SQLITE_FLOAT:
		v = sqlite3_value_double(val);
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

int format_section_csv(struct format *f, sqlite3_stmt *stmt, char *err, size_t errlen)
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
		if (format_row_is_empty(f, stmt))
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
		return format_step_error(stmt, err, errlen);
	return outbuf_error(&f->ob);
}

int format_section_json(struct format *f, const char *name, sqlite3_stmt *stmt, char *err, size_t errlen)
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
		if (format_row_is_empty(f, stmt))
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
		ret = format_step_error(stmt, err, errlen);
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
