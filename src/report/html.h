/* mfu-report --html: the report as one self-contained HTML file.
 *
 * The file holds the analyses' rows as JSON (in a script element of type
 * application/json), the stylesheet and a small script that draws the
 * charts as inline SVG from them: MFU, HFU and MBU per step over time, the
 * step time per phase, the waterfall from peak to MFU, a roofline, the top
 * functions, the run's metadata, peaks and notes. Nothing in it refers to
 * anything outside the file, and its Content-Security-Policy forbids any
 * request, so it opens offline. docs/report.md describes every chart. */
#ifndef MFU_REPORT_HTML_H
#define MFU_REPORT_HTML_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>

struct html_info {
	const char *db_path; /* the database, as named on the command line */
	int skip_steps;      /* --skip-steps N (already applied to @db) */
	int quiet;           /* --quiet (already applied to @db) */
};

/* Write the HTML report of the run open on @db to @out. @db is inside the
 * read transaction the report runs in, with the --skip-steps and --quiet
 * views in place. Returns 0; -EIO with "SECTION: SQLite's message" in
 * @err; -ENOMEM; or -errno of a failed write (@err says so). */
int html_write(sqlite3 *db, FILE *out, const struct html_info *info, char *err, size_t errlen);

/* html_write() into the file @path ("-": standard output), created or
 * truncated. On failure @err holds the whole message (without the program
 * name), a partial regular file is removed, and the return is -errno. The
 * database itself is refused as @path. */
int html_report(sqlite3 *db, const char *path, const struct html_info *info, char *err, size_t errlen);

#endif
