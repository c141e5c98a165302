/* The recap mfu-record prints on stderr when a recording ends, as perf stat
 * does: mfu-report's summary section, from the finished database, with the
 * breakdown's verdict under its title and the notes under it.
 *
 * It is mfu-report's own code (the analyses through format.c), so the
 * recap and `mfu-report --db FILE` agree to the digit. */
#ifndef MFU_REPORT_RECAP_H
#define MFU_REPORT_RECAP_H

#include <stddef.h>
#include <stdio.h>

/* Write the recap of the run database @path to @out in the table format:
 * the summary section, the breakdown verdict as its headline, and the
 * notes, except those the recorder wrote itself (table note: it said each
 * on stderr as it happened). The breakdown verdict runs at most
 * @verdict_ms milliseconds (it scans every sample and step: 15 s on a
 * million steps); past that the headline says to run mfu-report breakdown.
 * Returns 0, or -errno with the reason in @err (nothing or part of the
 * recap written). */
int recap_print(const char *path, FILE *out, unsigned verdict_ms, char *err, size_t errlen);

#endif
