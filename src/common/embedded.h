/* Text files (SQL, the HTML report's CSS and script) compiled into the
 * programs by tools/embed.py. */
#ifndef MFU_EMBEDDED_H
#define MFU_EMBEDDED_H

#include <stddef.h>

struct mfu_embedded {
	const char *name; /* base name, e.g. "001.sql" */
	const char *text;
};

/* schema/NNN.sql, sorted by name; terminated by a {NULL, NULL} entry. */
extern const struct mfu_embedded mfu_schema_files[];
/* schema/profile.sql: the machine profile's tables (profile.c); one entry,
 * then {NULL, NULL}. */
extern const struct mfu_embedded mfu_profile_schema_files[];
/* schema/job.sql and schema/job_index.sql: a merged job database's own
 * tables and indexes (merge.c); terminated by a {NULL, NULL} entry. */
extern const struct mfu_embedded mfu_job_schema_files[];
/* analyses/NAME.sql, sorted by name; terminated by a {NULL, NULL} entry. */
extern const struct mfu_embedded mfu_analysis_files[];
/* src/report/html/: the stylesheet and script of mfu-report --html
 * (report.css, report.js); terminated by a {NULL, NULL} entry. */
extern const struct mfu_embedded mfu_html_files[];
/* schema/derive/NAME.sql: what mfu-record derives when a recording ends,
 * sorted by name; terminated by a {NULL, NULL} entry. */
extern const struct mfu_embedded mfu_derive_files[];

/* The entry called @name in @files, or NULL. */
const struct mfu_embedded *embedded_find(const struct mfu_embedded *files, const char *name);

#endif
