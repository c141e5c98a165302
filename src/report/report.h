/* What mfu-report writes once its options are checked: the report's
 * sections and notes (of a run, or of a job of several ranks), --html,
 * --trace and --diff. Each returns the exit status, the error said on
 * stderr. */
#ifndef MFU_REPORT_REPORT_H
#define MFU_REPORT_REPORT_H

#include "options.h"

/* Open the database and write the report: @r's sections and the notes, or
 * with --html the HTML file; several databases, a merged one or a job
 * section: the job's report. */
int report_sections(const struct report_options *r);

/* --trace FILE: the run as trace-event JSON. */
int report_trace(const struct report_options *r);

/* --diff BASE NEW: the comparison as one section in the chosen format;
 * EXIT_WORSE when --fail-on finds a figure worse than it allows. */
int report_diff(const struct report_options *r);

#endif
