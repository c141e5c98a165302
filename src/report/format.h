/* Output formats of mfu-report: table, csv, json, markdown.
 *
 * A format writes the rows of prepared analysis statements to a FILE, one
 * section after another: format_new, format_section for each section,
 * format_notes (table and markdown only), format_end, format_free. Every
 * string that comes from the database is escaped for the format. */
#ifndef MFU_REPORT_FORMAT_H
#define MFU_REPORT_FORMAT_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>

enum format_kind {
	FORMAT_TABLE,
	FORMAT_CSV,
	FORMAT_JSON,
	FORMAT_MARKDOWN,
};

/* "table|csv|json|markdown", for usage messages. */
#define FORMAT_NAMES "table|csv|json|markdown"

struct format;

/* The format called @name. Returns 0 or -EINVAL. */
int format_parse(const char *name, enum format_kind *out);

/* 1 for the formats meant for people (table, markdown), which carry the
 * notes under the tables; 0 for csv and json. */
int format_is_human(enum format_kind kind);

/* A writer of @nsections sections to @out. Returns 0 or -ENOMEM. */
int format_new(enum format_kind kind, FILE *out, size_t nsections, struct format **fmt);

/* Write section @name: every row of @stmt, stepped once to the end (table
 * and markdown size their columns on the first rows, held in memory, and
 * stream the rest: GRID_SIZE_ROWS in format_impl.h).
 * @single_row: the section has one row (summary), which table and markdown
 * show as a two-column field/value list. On an SQLite error returns -EIO
 * with sqlite3_errmsg in @err; on a write error -errno. */
int format_section(struct format *fmt, const char *name, sqlite3_stmt *stmt, int single_row,
		   char *err, size_t errlen);

/* Table and markdown: write the rows of @stmt (columns kind, text, missing,
 * alert; see analyses/notes.sql) as a list of notes under the tables, only
 * those with missing = 1 or alert = 1 if @missing_only. Nothing is written when no row
 * qualifies. Errors as format_section. */
int format_notes(struct format *fmt, sqlite3_stmt *stmt, int missing_only, char *err, size_t errlen);

/* Close the output (the JSON object of several sections) and flush it.
 * Returns 0 or -errno of the failed write. */
int format_end(struct format *fmt);

/* A one-line verdict to print under the next section's title in the table
 * and markdown formats (ignored in csv and json), escaped as a cell
 * (format_sanitize). Returns 0 or -ENOMEM. */
int format_set_verdict(struct format *fmt, const char *text);

/* Table and markdown: the columns the next sections show, a comma-separated
 * list of column names in the order shown (names a section lacks are
 * skipped; a section with none of them shows every column), or NULL for
 * every column. A line under a table says how many were left out. csv and
 * json always carry every column. Returns 0 or -ENOMEM. */
int format_set_columns(struct format *fmt, const char *list);

/* csv only: @raw = 1 writes text cells byte for byte as stored (RFC 4180
 * quoting only), for programs; by default (0) csv text is escaped as in
 * the table format and formula-leading text gets a "'"
 * (format_csv_guarded). Other formats ignore it. */
void format_set_raw(struct format *fmt, int raw);

/* 1 if csv text @s (@n bytes, already escaped) gets a "'" in front, so that
 * a spreadsheet shows it instead of running it: it begins with '=', '+',
 * '-', '@', TAB or CR and is not a plain decimal number ("-1.5", "+2e3"
 * stay numbers). */
int format_csv_guarded(const unsigned char *s, size_t n);

/* Free @fmt; NULL is fine. Does not close the FILE. */
void format_free(struct format *fmt);

/* Shortest-ish decimal text of a finite double that reads back (strtod) as
 * exactly @v: a plain decimal when at most 9 fraction digits do, else
 * printf's "%.17g". Writes at most 31 bytes plus NUL into @buf (32 bytes
 * always hold it); returns the length written. Non-finite values give
 * "inf", "-inf" or "nan". */
size_t format_double(char *buf, double v);

/* @v in engineering notation with three significant digits and an SI
 * prefix, e.g. 1234567 -> "1.23 M" (k, M, G, T, P, E); beyond E in
 * scientific notation ("1e+300"). Writes at most @len - 1 bytes plus NUL
 * (cut short only when @len < 32) and returns the length written. */
size_t format_eng(char *buf, size_t len, double v);

/* How the table format heads and prints column @name: its header with the
 * unit ("wall ms", "MFU %", "model FLOP/s") into @label (@len bytes), and
 * its style as a word: "ms" (milliseconds, 3 decimals), "pct" (a fraction
 * as a percentage, 2 decimals), "util" (the same, flagged above 100%),
 * "eng" (engineering notation), "ratio" (2 decimals), "text" or "auto".
 * The HTML report prints its numbers by it, so they read as the tables'. */
const char *format_column_style(const char *name, char *label, size_t len);

/* Make @s (@n bytes) safe to show in a table (@markdown: in a markdown table
 * cell): control characters and bytes that are not UTF-8 become visible
 * escapes (\n, \t, \x1b, \u0085), and for markdown '|', '\' and the
 * characters that would start formatting get a backslash. Appends to the
 * malloc'd *buf (*len used, *cap allocated). Returns the display width in
 * characters, or -ENOMEM. */
long format_sanitize(char **buf, size_t *len, size_t *cap, const unsigned char *s, size_t n, int markdown);

/* Text for people (the summary, notes, a section's verdict line) wraps at
 * this many columns in the table format. */
#define FORMAT_TEXT_WIDTH 99

/* Columns @s (@n bytes of UTF-8) takes: one per character. */
size_t format_text_width(const char *s, size_t n);

/* The bytes of @s (@n bytes of UTF-8) that fill at most @cols columns. */
size_t format_text_bytes(const char *s, size_t n, size_t cols);

/* One line of @s (@n bytes of UTF-8) wrapped at @room columns: returns the
 * bytes to write on it (its trailing spaces left off) and sets *@next to
 * the bytes it uses up (with the spaces after the cut). The cut is at the
 * last space that fits; a word longer than @room is cut inside. All of @s
 * when it fits. */
size_t format_wrap_line(const char *s, size_t n, size_t room, size_t *next);

/* Append @s (@n bytes) to *buf as a JSON string with quotes: escapes for
 * '"', '\', control characters, U+2028/9; bytes that are not UTF-8 become
 * U+FFFD, so the output is always valid JSON. Returns 0 or -ENOMEM. */


#endif
