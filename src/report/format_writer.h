/* The writer of the report formats, shared by its files: format.c (the
 * writer's life, table and markdown), format_column.c (a column's header
 * and style, by its name) and format_machine.c (csv and json). */
#ifndef MFU_REPORT_FORMAT_WRITER_H
#define MFU_REPORT_FORMAT_WRITER_H

#include "format.h"
#include "outbuf.h"

#include <sqlite3.h>
#include <stddef.h>

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
	STYLE_PATH,  /* a file's path: its name after the last '/' (csv and
		      * json keep the path) */
};

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

/* Column @name's header (with its unit) and style: the naming rules, then
 * the exceptions. The header is written into @buf (@len bytes) or, for an
 * exception with a header of its own, *@label points to it. */
enum style format_column_header(const char *name, char *buf, size_t len, const char **label);

/* SQLite's message of @stmt's failed step into @err; returns -EIO. */
int format_step_error(sqlite3_stmt *stmt, char *err, size_t errlen);

/* A row in which every value is NULL says nothing: an aggregate over no
 * rows (the waterfall's all-steps row of a run without steps) is not a
 * row of unknowns to show. Every format leaves it out. */
static inline int format_row_is_empty(const struct format *f, sqlite3_stmt *stmt)
{
	for (size_t i = 0; i < f->ncols; i++)
		if (sqlite3_column_type(stmt, (int)i) != SQLITE_NULL)
			return 0;
	return f->ncols > 0;
}

/* Write section @name (json) of @stmt's rows as csv or json: every column,
 * numbers in full precision. Errors as format_section. */
int format_section_csv(struct format *f, sqlite3_stmt *stmt, char *err, size_t errlen);
int format_section_json(struct format *f, const char *name, sqlite3_stmt *stmt, char *err, size_t errlen);

#endif
